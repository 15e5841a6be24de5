//! The Gateway controllers: one per enabled load balancer kind (gate `ALBGatewayAPI`: Gateways of
//! `gateway.k8s.aws/alb` classes with their HTTPRoutes and GRPCRoutes become ALBs; gate
//! `NLBGatewayAPI`: `gateway.k8s.aws/nlb` classes with TCPRoutes, UDPRoutes and TLSRoutes
//! become NLBs), through the Gateway model and the shared deployer, with upstream's finalizers
//! `gateway.k8s.aws/alb|nlb`, Gateway status, events and TargetGroupBinding objects. Leader only,
//! like the other controllers; the stores are fed from process start ([`Warm`]).
//!
//! Gateways reach a controller's queue through its [`feed::Feed`]; at most `concurrency` are
//! reconciled at once, a failed one backs off exponentially up to `max_backoff`, and every
//! handled Gateway is resynced each `sync_period`.

mod addons;
mod cleanup;
pub(crate) mod config;
mod deploy;
pub mod detect;
mod feed;
pub(crate) mod inputs;
pub(crate) mod kind;
mod listener_set_status;
pub(crate) mod plan;
mod reconcile;
mod refs;
pub(crate) mod secrets;
pub mod status;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::deployer::{deployer, DeployerParts};
use super::metrics::{ControllerMetrics, Reconciles};
use super::service::EnvReader;
use super::skeleton::{all_synced, Controller};
use crate::aws::{AwsError, AwsMetrics, Ec2, ElbV2};
use crate::deploy::{CertDiscovery, Deployer};
use crate::model::gateway::listeners::LbKind;
use crate::model::{ModelConfig, ModelError};
use crate::watch::{Synced, Watches};
use crate::webhook::tg_cache::TgCache;

pub use deploy::PROGRAMMED_REQUEUE;
pub use feed::{controller_name, Feed, Stores};
pub use refs::{route_refs, RouteRefs};

/// Settings of one Gateway controller.
#[derive(Debug, Clone)]
pub struct GatewayControllerConfig {
    /// Which load balancer (and so which classes and route kinds) this controller handles.
    pub lb: LbKind,
    /// What the model reads (cluster name, gates, tags, defaults).
    pub model: ModelConfig,
    /// Gateways reconciled at once (`--alb|nlb-gateway-max-concurrent-reconciles`, default 3).
    pub concurrency: usize,
    /// First retry delay of a failed Gateway (doubles per failure).
    pub base_backoff: Duration,
    /// Cap of the per-Gateway retry delay.
    pub max_backoff: Duration,
    /// Resync of a settled Gateway (`--sync-period`).
    pub sync_period: Duration,
    /// `--watch-namespace` (empty: all): where the stack's TargetGroupBindings are looked for.
    pub namespaces: Vec<String>,
    /// Where `aws_target_group_info` is reported.
    pub metrics: Option<AwsMetrics>,
    /// Where the reconciles, stages and queue are reported.
    pub controller_metrics: ControllerMetrics,
    /// Gateway → Service references the TargetGroupConfiguration finalizer reads (the GatewayClass
    /// controller's), recorded after each build and forgotten when the Gateway is gone.
    pub service_references:
        Option<std::sync::Arc<crate::controller::gateway_class::ServiceReferences>>,
    /// ACM certificate discovery for secure listeners without configured certificates (shared
    /// with the Ingress controller: one cache); `None` refuses such listeners.
    pub cert_discovery: Option<Arc<CertDiscovery>>,
    /// WAFv2 / Shield clients (`--enable-wafv2`, `--enable-shield`) for the configurations'
    /// `wafV2` and `shieldConfiguration`.
    pub addons: crate::aws::AddonClients,
    /// Resource Groups Tagging API client, which the deployer uses under gate `EnableRGTAPI`.
    pub tagging: Option<Arc<dyn crate::aws::ResourceTagging>>,
    /// The VPC's CIDRs: what an internal NLB without security groups lets reach its targets.
    pub vpc_cidrs: Vec<String>,
    /// `--lb-stabilization-monitor-interval`: the requeue while the load balancer provisions
    /// before its capacity reservation (`minimumLoadBalancerCapacity`).
    pub lb_stabilization_interval: Duration,
    /// The ELBv2/EC2 inventory every deployer of the process shares (`None`: the controller
    /// lists for itself, with a TTL of at most half its resync period).
    pub inventory: Option<Arc<crate::deploy::Inventory>>,
}

impl GatewayControllerConfig {
    /// Defaults for a controller of `lb`.
    pub fn new(lb: LbKind) -> Self {
        Self {
            lb,
            model: ModelConfig::default(),
            concurrency: 3,
            base_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_secs(60),
            sync_period: Duration::from_secs(10 * 3600),
            namespaces: Vec::new(),
            metrics: None,
            controller_metrics: ControllerMetrics::default(),
            service_references: None,
            cert_discovery: None,
            vpc_cidrs: Vec::new(),
            addons: Default::default(),
            tagging: None,
            lb_stabilization_interval: crate::deploy::DEFAULT_LB_STABILIZATION_INTERVAL,
            inventory: None,
        }
    }

    /// The settings of the controller of `lb` from the validated flags.
    pub fn from_flags(cfg: &crate::config::Config, lb: LbKind) -> Self {
        let concurrency = match lb {
            LbKind::Alb => cfg.gateway.alb_max_concurrent_reconciles,
            LbKind::Nlb => cfg.gateway.nlb_max_concurrent_reconciles,
        };
        Self {
            model: ModelConfig::from(cfg),
            concurrency: (concurrency as usize).max(1),
            max_backoff: cfg.ingress_max_backoff,
            sync_period: cfg.sync_period,
            namespaces: cfg.watch_namespaces.clone(),
            lb_stabilization_interval: cfg.lb_stabilization_monitor_interval,
            ..Self::new(lb)
        }
    }

    /// Upstream's controller name (`gateway.k8s.aws/alb|nlb`): queue, metrics and events.
    pub fn name(&self) -> &'static str {
        controller_name(self.lb)
    }
}

/// Errors of one Gateway reconcile.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error("{0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Aws(#[from] AwsError),
    #[error("{0}")]
    Model(#[from] ModelError),
    #[error("{0}")]
    Deploy(#[from] crate::deploy::Error),
    /// The class or the LoadBalancerConfigurations do not allow a build (upstream's text).
    #[error("{0}")]
    Config(String),
    /// The stack was deployed empty but AWS still shows its load balancer: the finalizer stays.
    #[error("the load balancer of {0} is still there after deleting its stack")]
    Leftover(String),
}

/// State shared by all reconciles of one controller.
pub(crate) struct Ctx {
    client: kube::Client,
    deployer: Deployer,
    env: EnvReader,
    feed: Arc<Feed>,
    /// The OIDC Secrets the ALB controller's Gateways read (none for NLBs).
    secrets: Option<Arc<secrets::Monitor>>,
    cfg: GatewayControllerConfig,
    events: super::Events,
    rec: Reconciles,
    /// ARNs of target groups named by `TargetGroupName` backends, by name.
    target_groups: TgCache,
}

/// How long a target group's ARN looked up by name is trusted (upstream's mapper cache).
pub const TARGET_GROUP_NAME_TTL: Duration = Duration::from_secs(20 * 60);

/// What the Gateway controllers keep between terms of leadership: the stores and each enabled
/// controller's feed, fed from process start by the process's watches.
pub struct Warm {
    alb: Option<Arc<Feed>>,
    nlb: Option<Arc<Feed>>,
    /// The ALB controller's OIDC Secrets, on the process's Secret watch (shared with Ingresses).
    alb_secrets: Option<Arc<secrets::Monitor>>,
    synced: Vec<Synced>,
}

impl Warm {
    /// Registers the stores and triggers of the enabled controllers with `watches` (before they
    /// start); `None` when both are off (then no Gateway kind is watched). ListenerSets are
    /// watched only with `listener_sets` (the `GatewayListenerSet` gate).
    pub fn register(watches: &Watches, alb: bool, nlb: bool, listener_sets: bool) -> Option<Warm> {
        if !alb && !nlb {
            return None;
        }
        let stores = Stores {
            listener_sets_on: listener_sets,
            ..Stores::default()
        };
        let g = &watches.gateway;
        let mut synced = Vec::new();
        macro_rules! store {
            ($kind:expr, $store:expr) => {{
                $kind.register(Arc::new($store.clone()));
                synced.push($kind.synced());
            }};
        }
        store!(g.classes, stores.classes);
        store!(g.gateways, stores.gateways);
        store!(g.reference_grants, stores.reference_grants);
        store!(g.lb_configs, stores.lb_configs);
        store!(g.tg_configs, stores.tg_configs);
        store!(watches.services, stores.services);
        store!(watches.namespaces, stores.namespaces);
        if listener_sets {
            store!(g.listener_sets, stores.listener_sets);
        }
        if alb {
            store!(g.http_routes, stores.http_routes);
            store!(g.grpc_routes, stores.grpc_routes);
            store!(g.rule_configs, stores.rule_configs);
        }
        if nlb {
            store!(g.tcp_routes, stores.tcp_routes);
            store!(g.udp_routes, stores.udp_routes);
            store!(g.tls_routes, stores.tls_routes);
        }
        let feed_of = |lb: LbKind| {
            let feed = Arc::new(Feed::new(lb, stores.clone()));
            triggers(watches, &feed);
            feed
        };
        let alb = alb.then(|| feed_of(LbKind::Alb));
        // Not waited for at the start of a term: a Secret not reported yet is read with a GET.
        let alb_secrets = alb.as_ref().map(|feed| {
            let m = secrets::Monitor::new(feed.clone(), &watches.secrets);
            watches.secrets.register(m.clone());
            m
        });
        Some(Warm {
            alb,
            nlb: nlb.then(|| feed_of(LbKind::Nlb)),
            alb_secrets,
            synced,
        })
    }

    /// The feed of the controller of `lb`, if that controller is enabled.
    pub fn feed(&self, lb: LbKind) -> Option<&Arc<Feed>> {
        match lb {
            LbKind::Alb => self.alb.as_ref(),
            LbKind::Nlb => self.nlb.as_ref(),
        }
    }
}

/// Registers `feed`'s triggers (after the stores, so a trigger reads the fresh state).
fn triggers(watches: &Watches, feed: &Arc<Feed>) {
    use feed::*;
    let g = &watches.gateway;
    let f = || feed.clone();
    // A Gateway's own status counts (upstream requeues on every update): the pass after a
    // Pending status sees the load balancer active.
    g.gateways.register(Trigger::new(f(), on_gateway, true));
    g.classes.register(Trigger::new(f(), on_class, true));
    g.lb_configs
        .register(Trigger::new(f(), on_lb_config, false));
    g.tg_configs
        .register(Trigger::new(f(), on_tg_config, false));
    g.reference_grants
        .register(Trigger::new(f(), on_reference_grant, false));
    watches
        .services
        .register(Trigger::new(f(), on_service, false));
    watches
        .namespaces
        .register(Trigger::new(f(), on_namespace, false));
    if feed.stores.listener_sets_on {
        // Status-only writes (ours) queue nothing.
        g.listener_sets
            .register(Trigger::new(f(), on_listener_set, false));
    }
    match feed.lb {
        LbKind::Alb => {
            g.http_routes.register(Trigger::new(f(), on_route, false));
            g.grpc_routes.register(Trigger::new(f(), on_route, false));
            g.rule_configs
                .register(Trigger::new(f(), on_rule_config, false));
        }
        LbKind::Nlb => {
            g.tcp_routes.register(Trigger::new(f(), on_route, false));
            g.udp_routes.register(Trigger::new(f(), on_route, false));
            g.tls_routes.register(Trigger::new(f(), on_route, false));
        }
    }
}

/// Runs the controller of `cfg.lb` on watches of its own until `shutdown` (tests; the binary
/// shares the process's watches through [`Warm`] and [`lead`]).
pub async fn run(
    client: kube::Client,
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    vpc_id: String,
    cfg: GatewayControllerConfig,
    shutdown: CancellationToken,
) {
    let watches = Arc::new(Watches::default());
    let (alb, nlb) = (cfg.lb == LbKind::Alb, cfg.lb == LbKind::Nlb);
    let sets = cfg.model.gate("GatewayListenerSet");
    let Some(warm) = Warm::register(&watches, alb, nlb, sets) else {
        return;
    };
    let namespaces = cfg.namespaces.clone();
    tokio::select! {
        _ = watches.run(client.clone(), namespaces) => tracing::error!("gateway controller watch ended"),
        _ = lead(&warm, client, elbv2, ec2, vpc_id, cfg, shutdown) => {}
    }
}

/// One term of leadership of the controller of `cfg.lb`: once the stores have listed, queues
/// every Gateway of its classes and reconciles until `shutdown`. Everything it starts lives
/// inside this future.
pub async fn lead(
    warm: &Warm,
    client: kube::Client,
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    vpc_id: String,
    mut cfg: GatewayControllerConfig,
    shutdown: CancellationToken,
) {
    let Some(feed) = warm.feed(cfg.lb).cloned() else {
        return;
    };
    if cfg.model.vpc_id.is_none() {
        cfg.model.vpc_id = Some(vpc_id.clone());
    }
    // Upstream counts each Gateway controller's reconciles under its own name.
    let talker = match cfg.lb {
        LbKind::Alb => "albgateway",
        LbKind::Nlb => "nlbgateway",
    };
    let controller = Controller::new(&cfg.controller_metrics, cfg.name())
        .talkers(talker)
        .titled("gateway controller")
        .workers(cfg.concurrency)
        .backoff(cfg.base_backoff, cfg.max_backoff)
        .resync(cfg.sync_period)
        .shadowed("gateway");
    let parts = DeployerParts {
        tagging: cfg.tagging.clone(),
        addons: cfg.addons.clone(),
        lb_stabilization_interval: cfg.lb_stabilization_interval,
        cert_discovery: cfg.cert_discovery.clone(),
        inventory: cfg.inventory.clone(),
        sync_period: cfg.sync_period,
    };
    // Upstream's Gateway deployers always reset listener settings a configuration dropped,
    // whatever `EnhancedDefaultBehavior` says.
    let deployer = deployer(elbv2.clone(), ec2.clone(), &vpc_id, &cfg.model, parts)
        .with_enhanced_default_behavior(true);
    let reachability = cfg.model.gate("SubnetDiscoveryByReachability");
    let env = EnvReader::new(ec2, vpc_id, cfg.vpc_cidrs.clone(), reachability);
    let ctx = Arc::new(Ctx {
        target_groups: TgCache::new(elbv2, TARGET_GROUP_NAME_TTL),
        events: super::Events::new(client.clone(), cfg.name()),
        rec: controller.metrics(),
        client,
        deployer,
        env,
        feed: feed.clone(),
        secrets: match cfg.lb {
            LbKind::Alb => warm.alb_secrets.clone(),
            LbKind::Nlb => None,
        },
        cfg,
    });
    let pass = |ctx: Arc<Ctx>, key: String| async move { reconcile::reconcile(&ctx, &key).await };
    controller
        .run(
            feed.as_ref(),
            all_synced(&warm.synced),
            &shutdown,
            ctx,
            pass,
        )
        .await
}

#[cfg(test)]
mod tests;
