//! Leader election on a `coordination.k8s.io/v1` Lease: one replica reconciles, every replica
//! keeps serving webhooks. Same record and timings as controller-runtime (lease 15 s, renew
//! deadline 10 s, retry 2 s), so a replica of upstream and one of ours exclude each other while
//! a cluster switches over (same `--leader-election-id`).
//!
//! Split brain is ruled out by time, not by hoping requests return: every Lease request is
//! bounded by the renew deadline, a leader that has not renewed within it stops its reconcilers,
//! and the AWS write [`Fence`] shuts at that deadline on its own, before a standby can possibly
//! take the Lease (a lease duration after the last renewal began). `/healthz` fails when a
//! leader stays stuck past the lease, as controller-runtime's leader-election check does.

use super::metrics::ControllerMetrics;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::aws::Fence;

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
    /// How long past the lease a stuck leader may go before `/healthz` fails (client-go's
    /// `maxTolerableExpiredLease`; 20 s as in kube-controller-manager).
    pub healthz_tolerance: Duration,
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
            healthz_tolerance: Duration::from_secs(20),
        }
    }
}

/// The Lease the flags name, in the namespace of `--leader-election-namespace`, else the pod's own.
impl From<&crate::config::Config> for LeaderConfig {
    fn from(cfg: &crate::config::Config) -> Self {
        Self::new(&lease_namespace(cfg), &cfg.leader_election_id)
    }
}

/// The namespace of the leader Lease: the flag, else the pod's own namespace.
fn lease_namespace(cfg: &crate::config::Config) -> String {
    const SA_NAMESPACE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
    cfg.leader_election_namespace
        .clone()
        .or_else(|| {
            std::env::var("POD_NAMESPACE")
                .ok()
                .filter(|s| !s.is_empty())
        })
        .or_else(|| {
            std::fs::read_to_string(SA_NAMESPACE)
                .ok()
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "kube-system".to_string())
}

/// What `/healthz` reports about leader election: failing while this replica acts as leader
/// (reconcilers started and not yet stopped) without a renewal for longer than the lease plus
/// the tolerance. The default (no election) is always healthy.
#[derive(Clone, Debug, Default)]
pub struct LeaderHealth(Arc<Mutex<Option<Leading>>>);

#[derive(Clone, Debug)]
struct Leading {
    lease: String,
    renewed: Instant,
    limit: Duration,
}

impl LeaderHealth {
    fn set(&self, leading: Option<Leading>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = leading;
    }

    fn renewed(&self, cfg: &LeaderConfig, at: Instant) {
        self.set(Some(Leading {
            lease: cfg.name.clone(),
            renewed: at,
            limit: cfg.lease_duration + cfg.healthz_tolerance,
        }));
    }

    /// `Err` with client-go's wording when leading but stuck.
    pub fn check(&self) -> Result<(), String> {
        match &*self.0.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(l) if l.renewed.elapsed() > l.limit => Err(format!(
                "failed election to renew leadership on lease {}",
                l.lease
            )),
            _ => Ok(()),
        }
    }
}

/// The guards around leadership that the rest of the process shares: the AWS write fence and
/// the health check.
#[derive(Clone, Debug, Default)]
pub struct Leadership {
    pub fence: Fence,
    pub health: LeaderHealth,
    /// Where `leader_election_master_status` goes (and the controllers' metrics, which run
    /// under this leadership).
    pub metrics: ControllerMetrics,
}

impl Leadership {
    /// With leader election the fence starts shut; without, writes are never fenced.
    pub fn new(elected: bool) -> Self {
        Leadership {
            fence: if elected {
                Fence::leader_only()
            } else {
                Fence::default()
            },
            health: LeaderHealth::default(),
            metrics: ControllerMetrics::default(),
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

    /// One acquire-or-renew round that gives up at `deadline`; `None` when it failed or timed
    /// out (logged), else whether we hold the lease.
    async fn try_until(&mut self, deadline: Instant) -> Option<bool> {
        match tokio::time::timeout_at(deadline.into(), self.try_acquire_or_renew()).await {
            Ok(Ok(held)) => Some(held),
            Ok(Err(error)) => {
                tracing::warn!(%error, "cannot read or write the leader lease");
                None
            }
            Err(_) => {
                tracing::warn!(lease = %self.cfg.name, "leader lease request timed out");
                None
            }
        }
    }

    /// Gives the lease up on a clean shutdown so a standby takes over at once, not after 15 s.
    async fn release(&self) {
        let deadline = self.cfg.renew_deadline;
        if tokio::time::timeout(deadline, self.release_now())
            .await
            .is_err()
        {
            tracing::warn!(lease = %self.cfg.name, "releasing the leader lease timed out");
        }
    }

    async fn release_now(&self) {
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

/// Why a term of leadership ended.
enum End {
    Shutdown,
    /// The reconcilers returned on their own.
    Finished,
    Lost,
}

/// Runs `work` whenever this replica leads, until `shutdown`. `work` receives a token that is
/// cancelled when leadership is lost (no renewal within the renew deadline, or another holder);
/// it is awaited before campaigning again, so two reconcilers never overlap here, and the fence
/// in `guards` keeps AWS writes inside the renewed window even if a reconciler is slow to stop.
pub async fn run_elected<F, Fut>(
    client: kube::Client,
    cfg: LeaderConfig,
    guards: Leadership,
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
    // The Lease records whole seconds; others go by the record, so never assume more.
    let lease_duration =
        Duration::from_secs(el.cfg.lease_duration.as_secs().max(1)).min(el.cfg.lease_duration);
    let renew_deadline = el.cfg.renew_deadline;
    // A renewal that began at `start` lets us write until `start + renew deadline`; nobody else
    // can hold the lease before `start + lease duration`.
    let health_cfg = el.cfg.clone();
    let granted = |start: Instant| {
        guards
            .fence
            .open_until(start + renew_deadline, start + lease_duration);
        guards.health.renewed(&health_cfg, start);
    };
    let lease = el.cfg.name.clone();
    guards.metrics.leader_status(&lease, false);
    loop {
        tracing::info!(lease = %el.cfg.name, identity = %el.cfg.identity, "campaigning for leadership");
        let mut renewed = loop {
            let start = Instant::now();
            let attempt = tokio::select! {
                _ = shutdown.cancelled() => return,
                held = el.try_until(start + renew_deadline) => held,
            };
            if attempt == Some(true) {
                break start;
            }
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(el.cfg.retry_period) => {}
            }
        };
        granted(renewed);
        guards.metrics.leader_status(&lease, true);
        tracing::info!(lease = %el.cfg.name, identity = %el.cfg.identity, "became leader");
        let token = shutdown.child_token();
        let mut task = tokio::spawn(work(token.clone()));
        let end = loop {
            tokio::select! {
                _ = shutdown.cancelled() => break End::Shutdown,
                _ = &mut task => break End::Finished,
                _ = tokio::time::sleep(el.cfg.retry_period) => {}
            }
            let deadline = renewed + renew_deadline;
            let start = Instant::now();
            if start >= deadline {
                break End::Lost;
            }
            let attempt = tokio::select! {
                _ = shutdown.cancelled() => break End::Shutdown,
                held = el.try_until(deadline) => held,
            };
            match attempt {
                Some(true) => {
                    renewed = start;
                    granted(start);
                }
                Some(false) => break End::Lost,
                None if Instant::now() >= deadline => break End::Lost,
                None => {}
            }
        };
        if matches!(end, End::Lost) {
            guards.fence.shut();
            tracing::warn!(lease = %el.cfg.name, "lost leadership; stopping reconcilers");
        }
        token.cancel();
        if !matches!(end, End::Finished) {
            let _ = task.await;
        } else {
            tracing::warn!("reconcilers stopped while leading");
        }
        guards.fence.shut();
        guards.health.set(None);
        guards.metrics.leader_status(&lease, false);
        if !matches!(end, End::Lost) {
            el.release().await;
            return;
        }
        tracing::warn!(lease = %el.cfg.name, "reconcilers stopped after losing leadership");
        el.observed = None;
    }
}
