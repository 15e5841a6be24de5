//! Leader election on a `coordination.k8s.io/v1` Lease: one replica reconciles, every replica
//! keeps serving webhooks. Same record and timings as controller-runtime (lease 15 s, renew
//! deadline 10 s, retry 2 s), so a replica of upstream and one of ours exclude each other while
//! a cluster switches over (same `--leader-election-id`).

use std::future::Future;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use tokio_util::sync::CancellationToken;

/// Where and how long the lease is held.
#[derive(Debug, Clone)]
pub struct LeaderConfig {
    pub namespace: String,
    pub name: String,
    /// This replica's holder identity (unique per process start).
    pub identity: String,
    pub lease_duration: Duration,
    pub renew_deadline: Duration,
    pub retry_period: Duration,
}

impl LeaderConfig {
    /// controller-runtime's timings; identity `<pod name or hostname>_<random>` as client-go does.
    pub fn new(namespace: &str, name: &str) -> Self {
        let host = std::env::var("POD_NAME")
            .or_else(|_| std::env::var("HOSTNAME"))
            .unwrap_or_else(|_| "aws-load-balancer-controller".into());
        let suffix: u64 = rand::random();
        Self {
            namespace: namespace.to_string(),
            name: name.to_string(),
            identity: format!("{host}_{suffix:016x}"),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// What the last look at the lease showed, timed locally (client-go's rule: another holder's
/// lease is expired when its record has not changed for a lease duration *by our clock*, so
/// clock skew between nodes cannot hand leadership to two replicas).
struct Observed {
    record: (Option<String>, Option<String>),
    at: Instant,
    duration: Duration,
}

struct Elector {
    api: Api<Lease>,
    cfg: LeaderConfig,
    observed: Option<Observed>,
}

fn now() -> MicroTime {
    MicroTime(k8s_openapi::jiff::Timestamp::now())
}

fn conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

impl Elector {
    /// One acquire-or-renew round: `Ok(true)` when we hold the lease afterwards.
    async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let pp = PostParams::default();
        let seconds = self.cfg.lease_duration.as_secs().max(1) as i32;
        let Some(mut lease) = self.api.get_opt(&self.cfg.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.cfg.name.clone()),
                    namespace: Some(self.cfg.namespace.clone()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.cfg.identity.clone()),
                    lease_duration_seconds: Some(seconds),
                    acquire_time: Some(now()),
                    renew_time: Some(now()),
                    lease_transitions: Some(0),
                    ..Default::default()
                }),
            };
            return match self.api.create(&pp, &lease).await {
                Ok(_) => Ok(true),
                Err(e) if conflict(&e) => Ok(false),
                Err(e) => Err(e),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let ours = holder.as_deref() == Some(self.cfg.identity.as_str());
        if !ours && holder.is_some() && !self.expired(&spec) {
            return Ok(false);
        }
        let mut next = spec.clone();
        next.holder_identity = Some(self.cfg.identity.clone());
        next.lease_duration_seconds = Some(seconds);
        next.renew_time = Some(now());
        if !ours {
            next.acquire_time = Some(now());
            next.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        lease.spec = Some(next);
        // The resourceVersion in `lease` makes this a compare-and-swap: of two replicas taking
        // over an expired lease at once, one gets a 409 and stays a follower.
        match self.api.replace(&self.cfg.name, &pp, &lease).await {
            Ok(_) => Ok(true),
            Err(e) if conflict(&e) && !ours => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn expired(&mut self, spec: &LeaseSpec) -> bool {
        let record = (
            spec.holder_identity.clone(),
            spec.renew_time.as_ref().map(|t| t.0.to_string()),
        );
        let duration = Duration::from_secs(spec.lease_duration_seconds.unwrap_or(15).max(1) as u64);
        match &self.observed {
            Some(o) if o.record == record => o.at.elapsed() > o.duration,
            _ => {
                self.observed = Some(Observed {
                    record,
                    at: Instant::now(),
                    duration,
                });
                false
            }
        }
    }

    /// Gives the lease up on a clean shutdown so a standby takes over at once, not after 15 s.
    async fn release(&self) {
        let Ok(Some(mut lease)) = self.api.get_opt(&self.cfg.name).await else {
            return;
        };
        let Some(spec) = lease.spec.as_mut() else {
            return;
        };
        if spec.holder_identity.as_deref() != Some(self.cfg.identity.as_str()) {
            return;
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(now());
        match self
            .api
            .replace(&self.cfg.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => tracing::info!(lease = %self.cfg.name, "released the leader lease"),
            Err(error) => tracing::warn!(%error, "cannot release the leader lease"),
        }
    }
}

/// Runs `work` whenever this replica leads, until `shutdown`. `work` receives a token that is
/// cancelled when leadership is lost (renewals failing for the renew deadline, or another
/// holder); it is awaited before campaigning again, so two reconcilers never overlap here.
pub async fn run_elected<F, Fut>(
    client: kube::Client,
    cfg: LeaderConfig,
    shutdown: CancellationToken,
    mut work: F,
) where
    F: FnMut(CancellationToken) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut el = Elector {
        api: Api::namespaced(client, &cfg.namespace),
        cfg,
        observed: None,
    };
    loop {
        tracing::info!(lease = %el.cfg.name, identity = %el.cfg.identity, "campaigning for leadership");
        loop {
            match el.try_acquire_or_renew().await {
                Ok(true) => break,
                Ok(false) => {}
                Err(error) => tracing::warn!(%error, "cannot read or write the leader lease"),
            }
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(el.cfg.retry_period) => {}
            }
        }
        tracing::info!(lease = %el.cfg.name, identity = %el.cfg.identity, "became leader");
        let token = shutdown.child_token();
        let mut task = tokio::spawn(work(token.clone()));
        let mut renewed = Instant::now();
        let mut finished = false;
        let lost = loop {
            tokio::select! {
                _ = shutdown.cancelled() => break false,
                _ = &mut task => {
                    tracing::warn!("reconcilers stopped while leading");
                    finished = true;
                    break false;
                }
                _ = tokio::time::sleep(el.cfg.retry_period) => {}
            }
            match el.try_acquire_or_renew().await {
                Ok(true) => renewed = Instant::now(),
                Ok(false) => break true,
                Err(error) => {
                    tracing::warn!(%error, "cannot renew the leader lease");
                    if renewed.elapsed() > el.cfg.renew_deadline {
                        break true;
                    }
                }
            }
        };
        token.cancel();
        if !finished {
            let _ = task.await;
        }
        if !lost {
            el.release().await;
            return;
        }
        tracing::warn!(lease = %el.cfg.name, "lost leadership; reconcilers stopped");
        el.observed = None;
    }
}
