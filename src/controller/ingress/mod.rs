//! The Ingress controller: one shared reconciler that turns each Ingress group into AWS
//! resources (through the model and the deployer) and keeps them true.
//!
//! Watch-driven: the process's watches of Ingresses, Services, IngressClasses,
//! IngressClassParams, Namespaces and the Secrets OIDC actions name keep the stores on every
//! replica ([`Warm`]); while leading,
//! a change queues only the groups it concerns (an Ingress: its group and every group whose
//! finalizer it holds; a Service: the groups of Ingresses that
//! mention it; a Secret: the groups of Ingresses that read it; a Namespace: the groups of its
//! Ingresses, only when its labels flip an
//! IngressClassParams namespaceSelector; classes and parameters: every group). Updates that do not
//! touch what the model reads (status, finalizers) queue nothing. Groups are reconciled at
//! most `concurrency` at a time, each group by one worker at a time; failures back off
//! exponentially per group up to `max_backoff` without holding up other groups, and every
//! group is resynced each `sync_period` so drift made behind our back is repaired.

mod bindings;
mod last_good;
mod objects;
mod reconcile;
mod refs;
pub(crate) mod secrets;
mod service_view;
mod status;
mod warm;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::deployer::{deployer, DeployerParts};
use super::metrics::{ControllerMetrics, Reconciles};
use super::skeleton::{all_synced, Controller, QueueKey};
use crate::aws::{AwsMetrics, Ec2, ElbV2};
use crate::deploy::{CertDiscovery, Certificates, Deployer};
use crate::model::{GroupId, ModelConfig, ModelError};
use crate::watch::Watches;
use objects::Stores;

pub use bindings::{
    needs_update as binding_needs_update, stack_labels, sync_labeled as sync_bindings,
    BindingChanges,
};
pub(crate) use reconcile::plan_annotation::{wanted as planned_annotation, GATE as PLAN_GATE};
pub use status::{desired as desired_status, is_current as status_is_current, with_frontend_nlb};
pub use warm::Warm;

/// Settings of the Ingress controller.
#[derive(Debug, Clone)]
pub struct IngressConfig {
    /// Everything the model builder reads (cluster name, class, defaults, gates, tags).
    pub model: ModelConfig,
    /// Groups reconciled at once (`--ingress-max-concurrent-reconciles`, default 3).
    pub concurrency: usize,
    /// First retry delay of a failed group (doubles per failure).
    pub base_backoff: Duration,
    /// Cap of the per-group retry delay (`--ingress-max-exponential-backoff-delay`).
    pub max_backoff: Duration,
    /// Resync of a settled group (`--sync-period`, default 10h).
    pub sync_period: Duration,
    /// Reporting controller of the events.
    pub controller_name: String,
    /// `--watch-namespace`: Ingresses and Services of these namespaces only (empty: all).
    pub namespaces: Vec<String>,
    /// Where `aws_target_group_info` is reported (the TargetGroupBindings this controller makes).
    pub metrics: Option<AwsMetrics>,
    /// Where the reconciles, stages and queue are reported (controller `ingress`).
    pub controller_metrics: ControllerMetrics,
    /// How deletes of in-use security groups / target groups are retried (interval, timeout);
    /// `None` keeps the deployer's defaults (2 s for 2 min).
    pub delete_retry: Option<(Duration, Duration)>,
    /// WAFv2 / WAF Classic / Shield clients of the deployer (those enabled by the flags).
    pub addons: crate::aws::AddonClients,
    /// Resource Groups Tagging API client, which the deployer uses under gate `EnableRGTAPI`.
    pub tagging: Option<Arc<dyn crate::aws::ResourceTagging>>,
    /// ACM certificate discovery for HTTPS listeners without `certificate-arn` (`None`: such a
    /// group fails to build, no ACM client being there to ask).
    pub cert_discovery: Option<Arc<CertDiscovery>>,
    /// Gate `EnableCertificateManagement`: the ACM and Route 53 clients that create the
    /// certificates Ingresses ask for (`None`: such a group fails its deploy before any write).
    pub certificates: Option<Arc<Certificates>>,
    /// `--lb-stabilization-monitor-interval`: the requeue while the load balancer provisions
    /// before its capacity reservation.
    pub lb_stabilization_interval: Duration,
    /// The ELBv2/EC2 inventory every deployer of the process shares (`None`: the controller
    /// lists for itself, with a TTL of at most half its resync period).
    pub inventory: Option<Arc<crate::deploy::Inventory>>,
}

impl Default for IngressConfig {
    fn default() -> Self {
        Self {
            model: ModelConfig::default(),
            concurrency: 3,
            base_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_secs(60),
            sync_period: Duration::from_secs(10 * 3600),
            controller_name: "ingress".into(),
            namespaces: Vec::new(),
            metrics: None,
            controller_metrics: ControllerMetrics::default(),
            delete_retry: None,
            addons: Default::default(),
            tagging: None,
            cert_discovery: None,
            certificates: None,
            lb_stabilization_interval: crate::deploy::DEFAULT_LB_STABILIZATION_INTERVAL,
            inventory: None,
        }
    }
}

/// The settings from the validated flags.
impl From<&crate::config::Config> for IngressConfig {
    fn from(cfg: &crate::config::Config) -> Self {
        Self {
            model: ModelConfig::from(cfg),
            namespaces: cfg.watch_namespaces.clone(),
            concurrency: (cfg.ingress_max_concurrent_reconciles as usize).max(1),
            max_backoff: cfg.ingress_max_backoff,
            sync_period: cfg.sync_period,
            lb_stabilization_interval: cfg.lb_stabilization_monitor_interval,
            ..Self::default()
        }
    }
}

/// Errors of one group reconcile.
#[derive(Debug, thiserror::Error)]
pub enum IngressError {
    #[error("{0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Model(#[from] ModelError),
    #[error("{0}")]
    Deploy(#[from] crate::deploy::Error),
}

/// State shared by all reconciles.
pub(crate) struct Ctx {
    client: kube::Client,
    deployer: Deployer,
    stores: Stores,
    cfg: IngressConfig,
    events: super::Events,
    last_good: last_good::LastGood,
    /// Upstream's stage durations and reconcile errors of this controller.
    rec: Reconciles,
}

/// Runs the controller on its own watches until `shutdown` is cancelled (tests, benches and a
/// process without leader election; the elected process shares its watches through [`Warm`]
/// and [`lead`]). Everything it starts lives inside this future: dropping or aborting it stops
/// all work at once (as a crash would).
pub async fn run(
    client: kube::Client,
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    vpc_id: String,
    cfg: IngressConfig,
    shutdown: CancellationToken,
) {
    let watches = Arc::new(Watches::default());
    let warm = Warm::register(&watches, &cfg.model.ingress_class);
    let namespaces = cfg.namespaces.clone();
    tokio::select! {
        _ = watches.run(client.clone(), namespaces) => {}
        _ = lead(&warm, client, elbv2, ec2, vpc_id, cfg, shutdown) => {}
    }
}

/// One term of leadership: once every kind has listed (at once on a warm standby), queues every
/// group and reconciles until `shutdown` is cancelled.
pub async fn lead(
    warm: &Warm,
    client: kube::Client,
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    vpc_id: String,
    mut cfg: IngressConfig,
    shutdown: CancellationToken,
) {
    if cfg.model.vpc_id.is_none() {
        cfg.model.vpc_id = Some(vpc_id.clone());
    }
    // Upstream's controller, queue and top-talkers name.
    let controller = Controller::new(&cfg.controller_metrics, "ingress")
        .talkers("ingress")
        .workers(cfg.concurrency)
        .backoff(cfg.base_backoff, cfg.max_backoff)
        .resync(cfg.sync_period)
        .shadowed("ingress");
    let parts = DeployerParts {
        tagging: cfg.tagging.clone(),
        addons: cfg.addons.clone(),
        lb_stabilization_interval: cfg.lb_stabilization_interval,
        cert_discovery: cfg.cert_discovery.clone(),
        inventory: cfg.inventory.clone(),
        sync_period: cfg.sync_period,
    };
    let mut deployer = deployer(elbv2, ec2, &vpc_id, &cfg.model, parts);
    if let Some((interval, timeout)) = cfg.delete_retry {
        deployer = deployer.with_delete_retry(interval, timeout);
    }
    if let Some(certs) = cfg.certificates.clone() {
        deployer = deployer.with_certificate_management(certs);
    }
    let ctx = Arc::new(Ctx {
        events: super::Events::new(client.clone(), &cfg.controller_name),
        rec: controller.metrics(),
        client,
        deployer,
        stores: warm.stores.clone(),
        cfg,
        last_good: Default::default(),
    });
    let pass = |ctx: Arc<Ctx>, id: GroupId| async move { reconcile::reconcile(&ctx, &id).await };
    controller
        .run(
            warm.trig.as_ref(),
            all_synced(&warm.synced),
            &shutdown,
            ctx,
            pass,
        )
        .await
}

impl QueueKey for GroupId {
    fn id(&self) -> String {
        self.as_string()
    }
}
