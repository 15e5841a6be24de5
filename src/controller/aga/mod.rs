//! The GlobalAccelerator controller (upstream's `controllers/aga/globalaccelerator_controller.go`):
//! every `aga.k8s.aws/v1beta1` GlobalAccelerator becomes one AWS Global Accelerator with its
//! listeners and endpoint groups, through the pure model (`model::aga`: endpoints loaded from the
//! controller's caches, then `build_aga_stack`) and the accelerator deployer (`deploy::aga`),
//! with upstream's finalizer `aga.k8s.aws/resources`, status (ARN, DNS names, addresses, AWS's
//! status and the `Ready` / `AcceleratorDisabling` conditions) and events.
//!
//! Runs on the leader only, when gate `GlobalAcceleratorController` is on (off by default), the
//! region's partition has Global Accelerator and the API server serves the CRD ([`detect`]);
//! `--globalaccelerator-max-concurrent-reconciles` workers (default 1), a failed object backing
//! off from 5 s up to `--globalaccelerator-max-exponential-backoff-delay` (default 1000 s) as
//! upstream's rate limiter, without holding up the others.
//!
//! GlobalAccelerators reach the queue through [`feed::Feed`]: their own events, and the events of
//! the Services, Ingresses and Gateways they reference (the model's `ReferenceTracker`, filled by
//! each pass) and of ReferenceGrants allowing them across namespaces.

pub mod detect;
pub mod feed;
mod reconcile;
pub mod source;
pub mod status;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::metrics::{ControllerMetrics, Reconciles};
use super::skeleton::{all_synced, Controller};
use crate::aws::{AwsError, ElbV2, GlobalAccelerator};
use crate::model::aga::{controller_enabled, AgaConfig, EndpointLoadError};
use crate::model::{ModelConfig, ModelError};
use crate::watch::{Synced, Watches};

pub use detect::Served;
pub use feed::Feed;

/// Upstream's controller, queue and event recorder name.
pub const CONTROLLER_NAME: &str = "globalAccelerator";
/// Upstream's feature gate of the controller (and of its webhook).
pub const GATE: &str = "GlobalAcceleratorController";
/// Upstream's rate limiter starts a failed object's retries at 5 s.
pub const BASE_BACKOFF: Duration = Duration::from_secs(5);

/// Settings of the GlobalAccelerator controller.
#[derive(Debug, Clone)]
pub struct AgaControllerConfig {
    /// What the model reads (cluster name, default and external-managed tags, gates).
    pub model: ModelConfig,
    /// The region the controller runs in (endpoint groups' default region, generated names,
    /// the partition check); the resolved one once AWS is set up.
    pub region: String,
    /// GlobalAccelerators reconciled at once (`--globalaccelerator-max-concurrent-reconciles`,
    /// default 1).
    pub concurrency: usize,
    /// First retry delay of a failed object (doubles per failure; upstream's 5 s).
    pub base_backoff: Duration,
    /// Cap of the retry delay (`--globalaccelerator-max-exponential-backoff-delay`, default
    /// 1000 s).
    pub max_backoff: Duration,
    /// Resync of a settled object (`--sync-period`, default 10h).
    pub sync_period: Duration,
    /// The next look at an accelerator AWS still provisions, or at endpoints that did not load
    /// (upstream's one minute).
    pub provisioning_requeue: Duration,
    /// The longest wait between two steps of a deletion (the deployer's 10 s).
    pub deletion_requeue: Duration,
    /// `--watch-namespace` (empty: all).
    pub namespaces: Vec<String>,
    /// Where the reconciles, stages and queue are reported (controller `globalAccelerator`).
    pub controller_metrics: ControllerMetrics,
}

impl Default for AgaControllerConfig {
    fn default() -> Self {
        Self {
            model: ModelConfig::default(),
            region: String::new(),
            concurrency: 1,
            base_backoff: BASE_BACKOFF,
            max_backoff: Duration::from_secs(1000),
            sync_period: Duration::from_secs(10 * 3600),
            provisioning_requeue: crate::deploy::aga::STATUS_REQUEUE_AFTER,
            deletion_requeue: crate::deploy::aga::DELETION_REQUEUE_AFTER,
            namespaces: Vec::new(),
            controller_metrics: ControllerMetrics::default(),
        }
    }
}

/// The settings from the validated flags (the region is `--aws-region` until AWS resolves it).
impl From<&crate::config::Config> for AgaControllerConfig {
    fn from(cfg: &crate::config::Config) -> Self {
        Self {
            model: ModelConfig::from(cfg),
            region: cfg.aws_region.clone().unwrap_or_default(),
            concurrency: (cfg.globalaccelerator_max_concurrent_reconciles as usize).max(1),
            max_backoff: cfg.globalaccelerator_max_backoff,
            sync_period: cfg.sync_period,
            namespaces: cfg.watch_namespaces.clone(),
            ..Self::default()
        }
    }
}

impl AgaControllerConfig {
    /// Upstream's `IsGlobalAcceleratorControllerEnabled`: the gate is on and the region's
    /// partition has Global Accelerator (a region not known yet counts as one that has it).
    pub fn enabled(&self) -> bool {
        controller_enabled(self.model.gate(GATE), &self.region)
    }

    /// What the stack builder reads.
    pub fn builder(&self) -> AgaConfig {
        AgaConfig::new(&self.model, &self.region)
    }
}

/// Errors of one reconcile.
#[derive(Debug, thiserror::Error)]
pub enum AgaError {
    #[error("{0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Aws(#[from] AwsError),
    #[error("{0}")]
    Model(#[from] ModelError),
    #[error("{0}")]
    Deploy(#[from] crate::deploy::Error),
    /// An endpoint failed to load fatally (upstream's text).
    #[error("failed to load endpoints: {0}")]
    EndpointLoad(EndpointLoadError),
    /// Deleting the stack's accelerator failed (upstream's text).
    #[error("failed to delete accelerator {accelerator}: {source}")]
    Cleanup {
        accelerator: String,
        source: crate::deploy::Error,
    },
    /// The status patch failed (upstream's text).
    #[error("failed to update GlobalAccelerator status: {key}: {source}")]
    Status { key: String, source: kube::Error },
}

/// State shared by all reconciles.
pub(crate) struct Ctx {
    client: kube::Client,
    ga: Arc<dyn GlobalAccelerator>,
    elbv2: Arc<dyn ElbV2>,
    feed: Arc<Feed>,
    cfg: AgaControllerConfig,
    builder: AgaConfig,
    events: super::Events,
    rec: Reconciles,
}

/// What the controller keeps between terms of leadership: stores and triggers fed from process
/// start by the process's watches.
pub struct Warm {
    feed: Arc<Feed>,
    synced: Vec<Synced>,
}

impl Warm {
    /// Registers the stores and triggers with `watches` (before they start), for the kinds
    /// `served`; `None` (nothing registered) without the GlobalAccelerator CRD.
    pub fn register(watches: &Watches, served: Served) -> Option<Warm> {
        if !served.accelerators {
            return None;
        }
        let (feed, synced) = Feed::register(watches, served);
        Some(Warm { feed, synced })
    }

    /// The controller's stores and reference tracker.
    pub fn feed(&self) -> &Arc<Feed> {
        &self.feed
    }
}

/// Runs the controller on watches of its own until `shutdown` (tests; the binary shares the
/// process's watches through [`Warm`] and [`lead`]). Returns at once when it would not run.
pub async fn run(
    client: kube::Client,
    ga: Arc<dyn GlobalAccelerator>,
    elbv2: Arc<dyn ElbV2>,
    cfg: AgaControllerConfig,
    shutdown: CancellationToken,
) {
    if !cfg.enabled() {
        return;
    }
    let Some(served) = detect::detect(&client, &shutdown).await else {
        return;
    };
    let watches = Arc::new(Watches::default());
    let Some(warm) = Warm::register(&watches, served) else {
        return;
    };
    let namespaces = cfg.namespaces.clone();
    tokio::select! {
        _ = watches.run(client.clone(), namespaces) => tracing::error!("globalaccelerator controller watch ended"),
        _ = lead(&warm, client, ga, elbv2, cfg, shutdown) => {}
    }
}

/// One term of leadership: once the kinds have listed (at once on a warm standby), queues every
/// GlobalAccelerator and reconciles until `shutdown`. Everything it starts lives inside this
/// future. Does nothing when the gate is off or the region's partition has no Global
/// Accelerator.
pub async fn lead(
    warm: &Warm,
    client: kube::Client,
    ga: Arc<dyn GlobalAccelerator>,
    elbv2: Arc<dyn ElbV2>,
    cfg: AgaControllerConfig,
    shutdown: CancellationToken,
) {
    if !cfg.enabled() {
        tracing::info!(region = %cfg.region, "Global Accelerator is not available in this region's partition: the GlobalAccelerator controller does not run");
        return;
    }
    let controller = Controller::new(&cfg.controller_metrics, CONTROLLER_NAME)
        .talkers("globalaccelerator")
        .titled("globalaccelerator controller")
        .workers(cfg.concurrency)
        .backoff(cfg.base_backoff, cfg.max_backoff)
        .resync(cfg.sync_period)
        .shadowed("globalaccelerator");
    let ctx = Arc::new(Ctx {
        events: super::Events::new(client.clone(), CONTROLLER_NAME),
        rec: controller.metrics(),
        builder: cfg.builder(),
        client,
        ga,
        elbv2,
        feed: warm.feed.clone(),
        cfg,
    });
    let pass = |ctx: Arc<Ctx>, key: String| async move { reconcile::reconcile(&ctx, &key).await };
    controller
        .run(
            warm.feed.as_ref(),
            all_synced(&warm.synced),
            &shutdown,
            ctx,
            pass,
        )
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    fn from_flags(args: &[&str]) -> AgaControllerConfig {
        let mut argv = vec!["aws-load-balancer-controller", "--cluster-name=demo"];
        argv.extend_from_slice(args);
        let cli = Cli::try_parse_from(argv).unwrap();
        AgaControllerConfig::from(&crate::config::Config::from_args(&cli.controller).unwrap())
    }

    #[test]
    fn flags_gate_and_partition_follow_upstream() {
        let d = from_flags(&[]);
        assert_eq!(
            d.concurrency, 1,
            "--globalaccelerator-max-concurrent-reconciles default"
        );
        assert_eq!(d.max_backoff, Duration::from_secs(1000));
        assert_eq!(d.base_backoff, Duration::from_secs(5));
        assert!(!d.enabled(), "GlobalAcceleratorController defaults off");
        let c = from_flags(&[
            "--feature-gates=GlobalAcceleratorController=true",
            "--globalaccelerator-max-concurrent-reconciles=4",
            "--globalaccelerator-max-exponential-backoff-delay=2m",
            "--aws-region=us-east-1",
        ]);
        assert!(c.enabled());
        assert_eq!(c.concurrency, 4);
        assert_eq!(c.max_backoff, Duration::from_secs(120));
        assert_eq!(c.builder().region, "us-east-1");
        assert_eq!(c.builder().cluster_name, "demo");
        let china = AgaControllerConfig {
            region: "cn-north-1".into(),
            ..c.clone()
        };
        assert!(
            !china.enabled(),
            "no Global Accelerator in the China partition"
        );
        // Upstream treats 0 as controller-runtime's default of one worker.
        let zero = from_flags(&["--globalaccelerator-max-concurrent-reconciles=0"]);
        assert_eq!(zero.concurrency, 1);
    }
}
