//! The TargetGroupBinding controller: keeps each binding's target group registered with the
//! pods (ip) or nodes (instance) behind its Service port, and the pods' target-health
//! readiness gates in step with AWS.
//!
//! Watch-driven: the process's watches of Services, EndpointSlices, Pods and Nodes feed small
//! projected caches on every replica ([`Warm`]; of pods, only those a binding may read: see
//! `scope`), and while leading each change enqueues only the bindings it concerns. Error
//! retries back off exponentially up to `max_backoff`; target health is polled only while a
//! gated pod is not True, 0.5 s after a registration and then as long again as the targets
//! have waited, up to `requeue` (upstream's flag, which upstream polls at throughout; see
//! [`polls`]); a settled binding relies on the watches and the `resync` period.

mod cache;
pub mod endpoints;
pub mod eni;
pub mod gates;
pub mod info;
pub mod networking;
mod polls;
pub mod quic;
mod reconcile;
mod scope;
pub mod selector;
pub mod sg_rules;
mod sync;
pub mod targets;
mod warm;

pub use reconcile::UNDECODABLE;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ipnet::IpNet;
use kube::runtime::reflector::Store;
use kube::ResourceExt;
use tokio_util::sync::CancellationToken;

use super::metrics::{ControllerMetrics, Reconciles};
use super::skeleton::Controller;
use crate::aws::{elbv2_for, AssumeRole, AwsError, Ec2, ElbV2};
use crate::crd::TargetGroupBinding;
use crate::watch::Watches;
use cache::Caches;
use networking::NetError;
use sg_rules::{NetConfig, Networking};

pub use info::{NodeInfo, PodInfo};
pub use warm::Warm;

/// Finalizer that keeps a binding until its targets are deregistered.
pub use crate::crd::names::TGB_FINALIZER as FINALIZER;

/// Settings of the controller.
#[derive(Debug, Clone)]
pub struct TgbConfig {
    /// Bindings reconciled at once (`--targetgroupbinding-max-concurrent-reconciles`).
    pub concurrency: u16,
    /// Cap of the per-binding error backoff (starts at 5 ms, doubles).
    pub max_backoff: Duration,
    /// Longest target-health poll interval while some gated pod is not True
    /// (`--targetgroupbinding-requeue-duration`, upstream's 15 s); polls start 0.5 s after a
    /// registration and double up to it. Settled bindings never poll.
    pub requeue: Duration,
    /// Full resync of a settled binding (`--sync-period`); watches carry every change between.
    pub resync: Duration,
    /// CIDRs of the cluster VPC; pod IPs outside them register with `AvailabilityZone: all`.
    /// Empty: never set a zone.
    pub vpc_cidrs: Vec<IpNet>,
    /// Feature gate `EndpointsFailOpen` (default on): when no target is ready, register those
    /// whose node's Ready condition is Unknown (instance mode: such nodes; ip mode: not-ready
    /// endpoints of ContainersReady pods on such nodes) rather than none.
    pub fail_open: bool,
    /// Reporting controller of the events.
    pub controller_name: String,
    /// `--max-targets-per-target-group` (0 = unlimited).
    pub max_targets: usize,
    /// `--enable-endpoint-slices`: read EndpointSlices (default) or core/v1 Endpoints.
    pub endpoint_slices: bool,
    /// `--cluster-name`: endpoint security groups are told apart by `kubernetes.io/cluster/<it>`.
    pub cluster_name: String,
    /// VPC of the cluster: scope of pod-IP ENI lookups and of cluster-tagged group discovery.
    pub vpc_id: String,
    /// `--service-target-eni-security-group-tags`.
    pub service_target_eni_sg_tags: BTreeMap<String, String>,
    /// `--disable-restricted-sg-rules`: one rule per port instead of one range per source.
    pub disable_restricted_sg_rules: bool,
    /// Assumed-role ELBv2 clients for bindings with `iamRoleArnToAssume` (cross-account).
    pub roles: Option<Arc<dyn AssumeRole>>,
    /// `--watch-namespace`: bindings, Services, endpoints and pods of these namespaces only
    /// (empty: all).
    pub namespaces: Vec<String>,
    /// Where the reconciles, stages, queue and readiness-gate latency are reported.
    pub controller_metrics: ControllerMetrics,
    /// `--quic-environment-variable-name`: the pod variable holding its QUIC server id.
    pub quic_env: String,
}

/// The settings the flags give; what AWS resolves (VPC, CIDRs, role clients) is added by the
/// caller once known.
impl From<&crate::config::Config> for TgbConfig {
    fn from(cfg: &crate::config::Config) -> Self {
        Self {
            concurrency: cfg
                .targetgroupbinding_max_concurrent_reconciles
                .clamp(1, u16::MAX as u32) as u16,
            max_backoff: cfg.targetgroupbinding_max_backoff,
            requeue: cfg.targetgroupbinding_requeue,
            resync: cfg.sync_period,
            max_targets: cfg.max_targets_per_target_group as usize,
            endpoint_slices: cfg.enable_endpoint_slices,
            cluster_name: cfg.cluster_name.clone(),
            service_target_eni_sg_tags: cfg.service_target_eni_sg_tags.clone(),
            disable_restricted_sg_rules: cfg.disable_restricted_sg_rules,
            namespaces: cfg.watch_namespaces.clone(),
            fail_open: cfg.gate("EndpointsFailOpen"),
            quic_env: cfg.quic_environment_variable_name.clone(),
            ..Self::default()
        }
    }
}

impl Default for TgbConfig {
    fn default() -> Self {
        Self {
            concurrency: 3,
            max_backoff: Duration::from_secs(30),
            requeue: Duration::from_secs(15),
            resync: Duration::from_secs(10 * 3600),
            vpc_cidrs: Vec::new(),
            fail_open: true,
            controller_name: "targetGroupBinding".into(),
            max_targets: 0,
            endpoint_slices: true,
            cluster_name: String::new(),
            vpc_id: String::new(),
            service_target_eni_sg_tags: BTreeMap::new(),
            disable_restricted_sg_rules: false,
            roles: None,
            namespaces: Vec::new(),
            controller_metrics: ControllerMetrics::default(),
            quic_env: quic::DEFAULT_ENV_NAME.into(),
        }
    }
}

impl TgbConfig {
    /// The flags' settings plus what AWS resolved: the VPC, its CIDRs and the role clients.
    pub fn resolved(cfg: &crate::config::Config, cloud: &crate::aws::Cloud) -> Self {
        TgbConfig {
            vpc_cidrs: cloud.vpc_cidrs.clone(),
            vpc_id: cloud.resolved.vpc_id.clone(),
            roles: Some(cloud.roles.clone()),
            ..TgbConfig::from(cfg)
        }
    }
}

/// Errors of one reconcile.
#[derive(Debug, thiserror::Error)]
pub enum TgbError {
    #[error("{0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Aws(#[from] AwsError),
    /// The binding or its Service cannot work as specified.
    #[error("{0}")]
    Invalid(String),
}

impl From<NetError> for TgbError {
    fn from(e: NetError) -> Self {
        match e {
            NetError::Aws(e) => TgbError::Aws(e),
            NetError::Rule(m) => TgbError::Invalid(m),
        }
    }
}

/// State shared by all reconciles.
pub struct Ctx {
    client: kube::Client,
    elbv2: Arc<dyn ElbV2>,
    cfg: TgbConfig,
    caches: Arc<Caches>,
    /// Security-group rules of `spec.networking`, shared by all bindings.
    net: Networking,
    /// The bindings as the controller sees them.
    bindings: Store<TargetGroupBinding>,
    events: super::Events,
    /// Target-health polls of bindings with waiting gates: 0.5 s after a registration, then
    /// doubling the wait up to `requeue` (a fixed `requeue` made every gated rollout wave wait
    /// up to 15 s after its targets were healthy).
    polls: polls::Polls,
    /// Multi-cluster records by `ns/name`, so the ConfigMap is read once.
    tracked: Mutex<HashMap<String, BTreeSet<String>>>,
    /// The last QUIC missing-server-id Warning of each binding (`ns/name`), so it is sent when
    /// the pods it names change, not on every pass.
    quic_warned: Mutex<HashMap<String, String>>,
    /// The server ids of the QUIC targets this process registered.
    quic_ids: quic::RegisteredIds,
    /// Upstream's stage durations, reconcile errors and gate latency of this controller.
    rec: Reconciles,
}

impl Ctx {
    /// The ELBv2 client of the binding's account: ours, or its `iamRoleArnToAssume` (upstream
    /// registers cross-account targets with the assumed role; networking stays in our account).
    async fn elbv2_of(&self, tgb: &TargetGroupBinding) -> Result<Arc<dyn ElbV2>, AwsError> {
        let spec = &tgb.spec;
        elbv2_for(
            &self.elbv2,
            self.cfg.roles.as_ref(),
            &spec.iam_role_arn_to_assume,
            &spec.assume_role_external_id,
        )
        .await
    }

    fn tracked_get(&self, ns: &str, name: &str) -> Option<BTreeSet<String>> {
        let g = self.tracked.lock().unwrap_or_else(|p| p.into_inner());
        g.get(&format!("{ns}/{name}")).cloned()
    }

    fn tracked_put(&self, ns: &str, name: &str, set: BTreeSet<String>) {
        let mut g = self.tracked.lock().unwrap_or_else(|p| p.into_inner());
        g.insert(format!("{ns}/{name}"), set);
    }

    /// `ns/name` of every binding with `spec.networking` (once the first list is in).
    /// Bindings whose rules count: those with `spec.networking`, plus one entry per binding
    /// that does not decode. Its rules are unknown (its last decoded version, if any, still
    /// contributes under its own key), and that entry is never computed, so the aggregate stays
    /// authorize-only: no rule is revoked while a binding does not decode.
    async fn with_networking(&self) -> BTreeSet<String> {
        let _ = self.bindings.wait_until_ready().await;
        let mut keys: BTreeSet<String> = self
            .bindings
            .state()
            .iter()
            .filter(|b| b.spec.networking.is_some())
            .map(|b| format!("{}/{}", b.namespace().unwrap_or_default(), b.name_any()))
            .collect();
        keys.extend(
            self.caches
                .undecodable
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .keys()
                .map(|k| format!("{k} (does not decode)")),
        );
        keys
    }

    fn forget_tracked(&self, tgb: &TargetGroupBinding) {
        let key = format!("{}/{}", tgb.namespace().unwrap_or_default(), tgb.name_any());
        let mut g = self.tracked.lock().unwrap_or_else(|p| p.into_inner());
        g.remove(&key);
        drop(g);
        self.quic_news(&key, None);
        self.quic_ids.forget(&key);
    }

    /// Whether the missing-server-id Warning `note` (`None`: no pod is missing one) of binding
    /// `key` is news, i.e. differs from the last one sent; remembers it.
    fn quic_news(&self, key: &str, note: Option<&str>) -> bool {
        let mut g = self.quic_warned.lock().unwrap_or_else(|p| p.into_inner());
        match note {
            None => {
                g.remove(key);
                false
            }
            Some(n) if g.get(key).map(String::as_str) == Some(n) => false,
            Some(n) => {
                g.insert(key.to_string(), n.to_string());
                true
            }
        }
    }
}

/// Runs the controller on its own watches until `shutdown` is cancelled (tests, `diff`, and a
/// process without leader election use this; the elected process shares its watches through
/// [`Warm`] and [`lead`]).
pub async fn run(
    client: kube::Client,
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    cfg: TgbConfig,
    shutdown: CancellationToken,
) {
    let watches = Arc::new(Watches::default());
    let warm = Warm::register(&watches, cfg.endpoint_slices, &cfg.quic_env);
    let namespaces = cfg.namespaces.clone();
    tokio::select! {
        _ = watches.run(client.clone(), namespaces) => {}
        _ = lead(&warm, client, elbv2, ec2, cfg, shutdown) => {}
    }
}

/// One term of leadership: reconciles from the warm caches until `shutdown` is cancelled.
/// Starts with a full resync of every binding once the caches have listed (at once on a
/// standby that kept them warm).
pub async fn lead(
    warm: &Warm,
    client: kube::Client,
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    cfg: TgbConfig,
    shutdown: CancellationToken,
) {
    // Upstream's controller, queue and top-talkers name.
    let controller = Controller::new(&cfg.controller_metrics, "targetGroupBinding")
        .talkers("targetgroupbinding")
        .titled("targetgroupbinding controller")
        .workers(cfg.concurrency as usize)
        .backoff(Duration::from_millis(5), cfg.max_backoff)
        .resync(cfg.resync)
        .shadowed("targetgroupbinding");
    let net = Networking::new(
        ec2,
        NetConfig {
            cluster_name: cfg.cluster_name.clone(),
            vpc_id: cfg.vpc_id.clone(),
            required_tags: cfg.service_target_eni_sg_tags.clone(),
            restricted: !cfg.disable_restricted_sg_rules,
        },
    );
    let ctx = Arc::new(Ctx {
        events: super::Events::new(client.clone(), &cfg.controller_name),
        client,
        elbv2,
        net,
        bindings: warm.trig.store.clone(),
        polls: polls::Polls::new(polls::FIRST_POLL, cfg.requeue),
        cfg,
        caches: warm.caches.clone(),
        tracked: Mutex::new(HashMap::new()),
        quic_warned: Mutex::new(HashMap::new()),
        quic_ids: quic::RegisteredIds::default(),
        rec: controller.metrics(),
    });
    controller
        .run(
            &warm.trig,
            warm.wait_synced(),
            &shutdown,
            ctx,
            reconcile::reconcile,
        )
        .await
}
