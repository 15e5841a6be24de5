//! The Service controller: every Service of type LoadBalancer this controller handles (upstream's
//! `IsServiceSupported`: `spec.loadBalancerClass` = `--load-balancer-class`, or the
//! `aws-load-balancer-type` annotations) becomes one NLB stack through the Service model and the
//! shared deployer, with upstream's finalizer `service.k8s.aws/resources`, status hostname,
//! events and TargetGroupBinding objects (targets then flow through the TargetGroupBinding
//! reconciler, as upstream). Runs on the leader only, behind gate `EnableServiceController`.
//!
//! Services reach the queue through [`ServiceFeed`] (a [`crate::watch::Index`]); at most
//! `concurrency` Services are reconciled at once, each by one worker at a time; a failed
//! Service backs off exponentially up to `max_backoff` without holding up the others, and
//! every handled Service is resynced each `sync_period` so drift made behind our back heals.

mod env;
mod feed;
mod reconcile;
mod status;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::deployer::{deployer, DeployerParts};
use super::metrics::{ControllerMetrics, Reconciles};
use super::skeleton::Controller;
use crate::aws::{AwsError, AwsMetrics, Ec2, ElbV2};
use crate::deploy::Deployer;
use crate::model::{ModelConfig, ModelError};
use crate::watch::{Synced, Watches};

pub use env::EnvReader;
pub use feed::{meaningful_update, ServiceFeed};
pub use status::{desired as desired_status, is_current as status_is_current};

/// Settings of the Service controller.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// What the model reads (cluster name, `--load-balancer-class`, gates, tags, defaults).
    pub model: ModelConfig,
    /// Services reconciled at once (`--service-max-concurrent-reconciles`, default 3).
    pub concurrency: usize,
    /// First retry delay of a failed Service (doubles per failure).
    pub base_backoff: Duration,
    /// Cap of the per-Service retry delay (the same cap as Ingress groups).
    pub max_backoff: Duration,
    /// Resync of a settled Service (`--sync-period`, default 10h).
    pub sync_period: Duration,
    /// Reporting controller of the events (upstream's recorder component `service`).
    pub controller_name: String,
    /// `--watch-namespace`: Services of these namespaces only (empty: all).
    pub namespaces: Vec<String>,
    /// The VPC's CIDR blocks (sources of node rules of an internal NLB without SGs).
    pub vpc_cidrs: Vec<String>,
    /// Where `aws_target_group_info` is reported.
    pub metrics: Option<AwsMetrics>,
    /// Where the reconciles, stages and queue are reported (controller `service`).
    pub controller_metrics: ControllerMetrics,
    /// `--lb-stabilization-monitor-interval`: the requeue while the NLB provisions before its
    /// capacity reservation.
    pub lb_stabilization_interval: Duration,
    /// Resource Groups Tagging API client, which the deployer uses under gate `EnableRGTAPI`.
    pub tagging: Option<Arc<dyn crate::aws::ResourceTagging>>,
    /// The ELBv2/EC2 inventory every deployer of the process shares (`None`: the controller
    /// lists for itself, with a TTL of at most half its resync period).
    pub inventory: Option<Arc<crate::deploy::Inventory>>,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        Self {
            model: ModelConfig::default(),
            concurrency: 3,
            base_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_secs(60),
            sync_period: Duration::from_secs(10 * 3600),
            controller_name: "service".into(),
            namespaces: Vec::new(),
            vpc_cidrs: Vec::new(),
            metrics: None,
            controller_metrics: ControllerMetrics::default(),
            lb_stabilization_interval: crate::deploy::DEFAULT_LB_STABILIZATION_INTERVAL,
            tagging: None,
            inventory: None,
        }
    }
}

/// The settings from the validated flags.
impl From<&crate::config::Config> for ServiceConfig {
    fn from(cfg: &crate::config::Config) -> Self {
        Self {
            model: ModelConfig::from(cfg),
            namespaces: cfg.watch_namespaces.clone(),
            concurrency: (cfg.service_max_concurrent_reconciles as usize).max(1),
            max_backoff: cfg.ingress_max_backoff,
            sync_period: cfg.sync_period,
            lb_stabilization_interval: cfg.lb_stabilization_monitor_interval,
            ..Self::default()
        }
    }
}

impl ServiceConfig {
    /// Feature gate `EnableServiceController` (default on).
    pub fn enabled(&self) -> bool {
        self.model.gate("EnableServiceController")
    }
}

/// Errors of one Service reconcile.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("{0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Aws(#[from] AwsError),
    #[error("{0}")]
    Model(#[from] ModelError),
    #[error("{0}")]
    Deploy(#[from] crate::deploy::Error),
    /// The stack was deployed empty but AWS still shows its load balancer: the finalizer stays.
    #[error("the load balancer of {0} is still there after deleting its stack")]
    Leftover(String),
}

/// State shared by all reconciles.
pub(crate) struct Ctx {
    client: kube::Client,
    deployer: Deployer,
    env: EnvReader,
    feed: Arc<ServiceFeed>,
    cfg: ServiceConfig,
    events: super::Events,
    rec: Reconciles,
}

/// What the controller keeps between terms of leadership: the Service store and filter, fed
/// from process start by the process's Service watch (so a new leader acts at once).
pub struct Warm {
    feed: Arc<ServiceFeed>,
    synced: Synced,
}

impl Warm {
    /// Registers the controller's Service index with `watches` (before they start).
    pub fn register(watches: &Watches, model: &ModelConfig) -> Warm {
        let feed = Arc::new(ServiceFeed::new(model.clone()));
        watches.services.register(feed.clone());
        Warm {
            feed,
            synced: watches.services.synced(),
        }
    }
}

/// Runs the controller on watches of its own until `shutdown` is cancelled (tests, benches;
/// the binary shares the process's watches through [`Warm`] and [`lead`]).
pub async fn run(
    client: kube::Client,
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    vpc_id: String,
    cfg: ServiceConfig,
    shutdown: CancellationToken,
) {
    let watches = Arc::new(Watches::default());
    let warm = Warm::register(&watches, &cfg.model);
    let namespaces = cfg.namespaces.clone();
    tokio::select! {
        _ = watches.run(client.clone(), namespaces) => tracing::error!("service controller watch ended"),
        _ = lead(&warm, client, elbv2, ec2, vpc_id, cfg, shutdown) => {}
    }
}

/// One term of leadership: once Services have listed (at once on a warm standby), queues every
/// Service the controller handles and reconciles until `shutdown` is cancelled. Everything it
/// starts lives inside this future: dropping it stops all work at once.
pub async fn lead(
    warm: &Warm,
    client: kube::Client,
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    vpc_id: String,
    mut cfg: ServiceConfig,
    shutdown: CancellationToken,
) {
    if cfg.model.vpc_id.is_none() {
        cfg.model.vpc_id = Some(vpc_id.clone());
    }
    // Upstream's controller, queue and top-talkers name.
    let controller = Controller::new(&cfg.controller_metrics, "service")
        .talkers("service")
        .workers(cfg.concurrency)
        .backoff(cfg.base_backoff, cfg.max_backoff)
        .resync(cfg.sync_period)
        .shadowed("service");
    let parts = DeployerParts {
        tagging: cfg.tagging.clone(),
        addons: Default::default(),
        lb_stabilization_interval: cfg.lb_stabilization_interval,
        cert_discovery: None,
        inventory: cfg.inventory.clone(),
        sync_period: cfg.sync_period,
    };
    let deployer = deployer(elbv2, ec2.clone(), &vpc_id, &cfg.model, parts);
    let reachability = cfg.model.gate("SubnetDiscoveryByReachability");
    let env = EnvReader::new(ec2, vpc_id, cfg.vpc_cidrs.clone(), reachability);
    let ctx = Arc::new(Ctx {
        events: super::Events::new(client.clone(), &cfg.controller_name),
        rec: controller.metrics(),
        client,
        deployer,
        env,
        feed: warm.feed.clone(),
        cfg,
    });
    let pass = |ctx: Arc<Ctx>, key: String| async move { reconcile::reconcile(&ctx, &key).await };
    controller
        .run(warm.feed.as_ref(), warm.synced.wait(), &shutdown, ctx, pass)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    fn from_flags(args: &[&str]) -> ServiceConfig {
        let mut argv = vec!["aws-load-balancer-controller", "--cluster-name=demo"];
        argv.extend_from_slice(args);
        let cli = Cli::try_parse_from(argv).unwrap();
        ServiceConfig::from(&crate::config::Config::from_args(&cli.controller).unwrap())
    }

    #[test]
    fn flags_and_gate_follow_upstream() {
        let d = from_flags(&[]);
        assert_eq!(
            d.concurrency, 3,
            "--service-max-concurrent-reconciles default"
        );
        assert!(d.enabled(), "EnableServiceController defaults on");
        assert_eq!(d.model.load_balancer_class, "service.k8s.aws/nlb");
        let c = from_flags(&[
            "--service-max-concurrent-reconciles=7",
            "--feature-gates=EnableServiceController=false",
            "--load-balancer-class=example.com/nlb",
        ]);
        assert_eq!(c.concurrency, 7);
        assert!(!c.enabled());
        assert_eq!(c.model.load_balancer_class, "example.com/nlb");
    }
}
