//! The GatewayClass controller and the finalizer controllers of the three `gateway.k8s.aws`
//! configuration kinds (upstream's `gateway_class_controller.go` and
//! `*_configuration_controller.go`): GatewayClasses of the enabled Gateway controllers
//! (`ALBGatewayAPI` → `gateway.k8s.aws/alb`, `NLBGatewayAPI` → `gateway.k8s.aws/nlb`) are
//! accepted and record the configuration version their Gateways wait for
//! ([`class`]); LoadBalancerConfigurations, TargetGroupConfigurations and
//! ListenerRuleConfigurations carry finalizers that hold them while in use ([`configs`]).
//! Runs on the leader only, whenever either Gateway gate is on, with
//! `--gateway-class-max-concurrent-reconciles` workers over one queue; a failed object backs
//! off exponentially without holding up the others.

mod class;
mod configs;
mod feed;
mod in_use;
mod references;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::metrics::ControllerMetrics;
use super::skeleton::{all_synced, Controller};
use crate::model::gateway::{ALB_CONTROLLER_NAME, NLB_CONTROLLER_NAME};
use crate::watch::{Synced, Watches};

pub use class::{accepted_conditions, config_not_found, gateway_may_build, still_referenced};
pub use configs::{
    default_tgc_still_in_use, hold_config, lbc_still_in_use, lrc_still_in_use, tgc_still_in_use,
    HoldError,
};
pub use feed::{Feed, Key};
pub use in_use::{lbc_in_use, rule_config_refs};
pub use references::{services_of, ServiceReferences};

/// Upstream's controller (and event recorder) names.
pub const CLASS_CONTROLLER: &str = "aws-lbc-gateway-class-controller";
pub const LB_CONFIG_CONTROLLER: &str = "aws-lbc-loadbalancerconfiguration-controller";
pub const TG_CONFIG_CONTROLLER: &str = "aws-lbc-targetgroupconfiguration-controller";
pub const RULE_CONFIG_CONTROLLER: &str = "aws-lbc-listenerruleconfiguration-controller";

/// Settings of the GatewayClass and configuration controllers.
#[derive(Debug, Clone)]
pub struct GatewayClassConfig {
    /// Gate `ALBGatewayAPI` (after CRD detection).
    pub alb: bool,
    /// Gate `NLBGatewayAPI` (after CRD detection).
    pub nlb: bool,
    /// `--gateway-class-max-concurrent-reconciles` (default 3).
    pub concurrency: usize,
    /// First retry delay of a failed object (doubles per failure).
    pub base_backoff: Duration,
    /// Cap of the per-object retry delay.
    pub max_backoff: Duration,
    /// Where the reconciles and queue are reported.
    pub controller_metrics: ControllerMetrics,
}

impl Default for GatewayClassConfig {
    fn default() -> Self {
        Self {
            alb: true,
            nlb: true,
            concurrency: 3,
            base_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_secs(60),
            controller_metrics: ControllerMetrics::default(),
        }
    }
}

impl From<&crate::config::Config> for GatewayClassConfig {
    fn from(cfg: &crate::config::Config) -> Self {
        Self {
            alb: cfg.gateway.alb.enabled,
            nlb: cfg.gateway.nlb.enabled,
            concurrency: (cfg.gateway.gateway_class_max_concurrent_reconciles as usize).max(1),
            max_backoff: cfg.ingress_max_backoff,
            ..Self::default()
        }
    }
}

impl GatewayClassConfig {
    /// Either Gateway gate on (upstream starts these controllers then).
    pub fn enabled(&self) -> bool {
        self.alb || self.nlb
    }

    /// The controller names whose classes are reconciled.
    pub fn controllers(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.alb {
            out.push(ALB_CONTROLLER_NAME);
        }
        if self.nlb {
            out.push(NLB_CONTROLLER_NAME);
        }
        out
    }
}

/// Errors of one reconcile.
#[derive(Debug, thiserror::Error)]
pub enum GatewayClassError {
    #[error("{0}")]
    Kube(#[from] kube::Error),
    /// A deleting object is still used: upstream's message.
    #[error("{0}")]
    InUse(String),
    /// The class's configuration cannot be resolved (its default TargetGroupConfiguration).
    #[error("{0}")]
    Config(String),
}

/// Event publishers, one per upstream controller name.
struct ControllerEvents {
    class: super::Events,
    lb_config: super::Events,
    tg_config: super::Events,
    rule_config: super::Events,
}

/// State shared by all reconciles.
pub(crate) struct Ctx {
    client: kube::Client,
    feed: Arc<Feed>,
    events: ControllerEvents,
}

/// What the controllers keep between terms of leadership: stores and triggers fed from process
/// start by the process's watches.
pub struct Warm {
    cfg: GatewayClassConfig,
    feed: Arc<Feed>,
    synced: Vec<Synced>,
}

impl Warm {
    /// Registers the stores and triggers with `watches` (before they start); nothing when both
    /// Gateway gates are off (the kinds are then not watched at all).
    pub fn register(watches: &Watches, cfg: &GatewayClassConfig) -> Warm {
        let (feed, synced) = if cfg.enabled() {
            Feed::register(watches, cfg.controllers())
        } else {
            (Arc::new(Feed::unregistered()), Vec::new())
        };
        Warm {
            cfg: cfg.clone(),
            feed,
            synced,
        }
    }

    /// The Service references the Gateway reconcilers record after each build (see
    /// [`ServiceReferences::update`]) and the TargetGroupConfiguration finalizer reads.
    pub fn service_references(&self) -> Arc<ServiceReferences> {
        self.feed.references.clone()
    }
}

/// Runs the controllers on watches of their own until `shutdown` (tests; the binary shares the
/// process's watches through [`Warm`] and [`lead`]).
pub async fn run(
    client: kube::Client,
    cfg: GatewayClassConfig,
    namespaces: Vec<String>,
    shutdown: CancellationToken,
) {
    let watches = Arc::new(Watches::default());
    let warm = Warm::register(&watches, &cfg);
    tokio::select! {
        _ = watches.run(client.clone(), namespaces) => tracing::error!("gateway class controller watch ended"),
        _ = lead(&warm, client, cfg, shutdown) => {}
    }
}

/// One term of leadership: once the kinds have listed, queues every class of ours and every
/// configuration object and reconciles until `shutdown`. Dropping the future stops all work.
pub async fn lead(
    warm: &Warm,
    client: kube::Client,
    cfg: GatewayClassConfig,
    shutdown: CancellationToken,
) {
    if !warm.cfg.enabled() {
        return;
    }
    let controller = Controller::new(&cfg.controller_metrics, CLASS_CONTROLLER)
        .logged_as("gatewayclass")
        .titled("gateway class controller")
        .workers(cfg.concurrency)
        .backoff(cfg.base_backoff, cfg.max_backoff);
    let events = |name: &str| super::Events::new(client.clone(), name);
    let ctx = Arc::new(Ctx {
        events: ControllerEvents {
            class: events(CLASS_CONTROLLER),
            lb_config: events(LB_CONFIG_CONTROLLER),
            tg_config: events(TG_CONFIG_CONTROLLER),
            rule_config: events(RULE_CONFIG_CONTROLLER),
        },
        client,
        feed: warm.feed.clone(),
    });
    let pass = |ctx: Arc<Ctx>, key: Key| async move { reconcile(&ctx, &key).await };
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

/// Reconciles one object; `Ok(Some(d))` asks to look again after `d`.
async fn reconcile(ctx: &Ctx, key: &Key) -> Result<Option<Duration>, GatewayClassError> {
    match key {
        Key::Class(name) => class::reconcile(ctx, name).await.map(|_| None),
        Key::LoadBalancerConfig(ns, name) => configs::load_balancer_config(ctx, ns, name)
            .await
            .map(|_| None),
        Key::TargetGroupConfig(ns, name) => configs::target_group_config(ctx, ns, name)
            .await
            .map(|_| None),
        Key::RuleConfig(ns, name) => configs::rule_config(ctx, ns, name).await,
    }
}

#[cfg(test)]
mod tests;
