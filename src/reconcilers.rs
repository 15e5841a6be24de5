//! The reconciling half of the process: resolve the AWS clients (retrying, never exiting — the
//! webhooks keep serving meanwhile), install the webhooks that need AWS, then run the
//! reconcilers on the elected leader only.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use tokio_util::sync::CancellationToken;

use crate::aws::{self, AwsMetrics, Cloud};
use crate::config::Config;
use crate::controller::aga::{self, AgaControllerConfig};
use crate::controller::gateway::{self, GatewayControllerConfig};
use crate::controller::gateway_class::{self, GatewayClassConfig};
use crate::controller::ingress::{self, IngressConfig};
use crate::controller::leader::{self, LeaderConfig, Leadership};
use crate::controller::metrics::ControllerMetrics;
use crate::controller::service::{self, ServiceConfig};
use crate::controller::tgb::{self, TgbConfig};
use crate::deploy::{inventory, CertDiscovery, Certificates, Inventory};
use crate::model::gateway::listeners::LbKind;
use crate::watch::Watches;
use crate::webhook::indexes::TgbIndex;
use crate::webhook::late::LateSlot;
use crate::webhook::tg_cache::{self, TgCache};
use crate::webhook::{tgb_mutator::TgbMutator, tgb_validator::TgbValidator};

/// Resolves region, VPC and clients, retrying with capped backoff until it works or `shutdown`.
/// Every AWS write of the clients passes `fence` (the leader's, under leader election).
///
/// The webhooks keep serving meanwhile and `/readyz` does not wait for this; a failure shows as
/// `awslbc_aws_setup_ready 0`, the `cannot set up the AWS clients` log line and, through
/// `events`, an `AWSSetupFailed` Warning event on the controller's own Pod.
pub async fn resolve_aws(
    cfg: &Config,
    metrics: Option<AwsMetrics>,
    fence: &aws::Fence,
    mut events: AwsSetupEvents,
    shutdown: &CancellationToken,
) -> Option<Cloud> {
    if let Some(m) = &metrics {
        m.set_setup_ready(false);
    }
    let mut delay = Duration::from_millis(500);
    loop {
        let attempt = Cloud::build(cfg, metrics.clone(), fence);
        tokio::select! {
            _ = shutdown.cancelled() => return None,
            result = attempt => match result {
                Ok(cloud) => {
                    tracing::info!(region = %cloud.resolved.region, vpc = %cloud.resolved.vpc_id, "AWS clients ready");
                    if let Some(m) = &metrics {
                        m.set_setup_ready(true);
                    }
                    let note = format!(
                        "AWS clients ready (region {}, VPC {})",
                        cloud.resolved.region, cloud.resolved.vpc_id
                    );
                    events.succeeded(note).await;
                    return Some(cloud);
                }
                Err(error) => {
                    tracing::error!(%error, retry_in = ?delay, "cannot set up the AWS clients");
                    if let Some(m) = &metrics {
                        m.set_setup_ready(false);
                    }
                    events.failed(&error.to_string()).await;
                }
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return None,
            _ = tokio::time::sleep(delay) => {}
        }
        delay = (delay * 2).min(Duration::from_secs(30));
    }
}

/// Reason of the Warning event on the controller's own Pod while AWS set-up fails.
pub const AWS_SETUP_FAILED: &str = "AWSSetupFailed";
/// Reason of the Normal event on the controller's own Pod once AWS set-up works after failing.
pub const AWS_SETUP_SUCCEEDED: &str = "AWSSetupSucceeded";

/// The same failure is reported again after this long (the log line repeats on every retry).
const SETUP_EVENT_REPEAT: Duration = Duration::from_secs(300);
/// A different failure is reported at most this often (errors may carry request ids).
const SETUP_EVENT_MIN_GAP: Duration = Duration::from_secs(60);

/// Events about AWS set-up on the controller's own Pod, named by `POD_NAME` and
/// `POD_NAMESPACE` (the chart sets both from the downward API); without them, or without a
/// Kubernetes client, nothing is published. A failure is published once per distinct message
/// (at most once a minute) and again every five minutes while it lasts; a success after a
/// failure is published once.
pub struct AwsSetupEvents {
    client: Option<kube::Client>,
    /// Resolved at the first event: the publisher and the Pod, `None` when there is no Pod.
    target: Option<Option<(crate::controller::Events, ObjectReference)>>,
    last_warning: Option<(String, tokio::time::Instant)>,
    failed: bool,
}

impl AwsSetupEvents {
    /// Publishes through `client` (`None`: logs and the metric only).
    pub fn new(client: Option<kube::Client>) -> Self {
        AwsSetupEvents {
            client,
            target: None,
            last_warning: None,
            failed: false,
        }
    }

    async fn target(&mut self) -> Option<&(crate::controller::Events, ObjectReference)> {
        if self.target.is_none() {
            let resolved = match &self.client {
                Some(client) => own_pod(client).await.map(|pod| {
                    let events = crate::controller::Events::new(
                        client.clone(),
                        "aws-load-balancer-controller",
                    );
                    (events, pod)
                }),
                None => None,
            };
            self.target = Some(resolved);
        }
        self.target.as_ref().and_then(Option::as_ref)
    }

    /// AWS set-up failed with `error`.
    pub async fn failed(&mut self, error: &str) {
        self.failed = true;
        let due = match &self.last_warning {
            None => true,
            Some((last, at)) => {
                let since = at.elapsed();
                since >= SETUP_EVENT_REPEAT || (last != error && since >= SETUP_EVENT_MIN_GAP)
            }
        };
        if !due {
            return;
        }
        let note = format!(
            "cannot set up the AWS clients (reconciles wait; admission webhooks keep serving): {error}"
        );
        if let Some((events, pod)) = self.target().await {
            events.warning(pod, AWS_SETUP_FAILED, note).await;
        }
        self.last_warning = Some((error.to_string(), tokio::time::Instant::now()));
    }

    /// AWS set-up succeeded; `note` says where.
    pub async fn succeeded(&mut self, note: String) {
        if !std::mem::take(&mut self.failed) {
            return;
        }
        if let Some((events, pod)) = self.target().await {
            events.normal(pod, AWS_SETUP_SUCCEEDED, note).await;
        }
    }
}

/// A reference to the Pod this process runs in, from `POD_NAME` and `POD_NAMESPACE`; its uid
/// is read from the API (so `kubectl describe pod` lists the events), left out if that fails.
async fn own_pod(client: &kube::Client) -> Option<ObjectReference> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let (Some(name), Some(namespace)) = (env("POD_NAME"), env("POD_NAMESPACE")) else {
        tracing::debug!("POD_NAME or POD_NAMESPACE unset: no events on the controller's Pod");
        return None;
    };
    let pods: kube::Api<Pod> = kube::Api::namespaced(client.clone(), &namespace);
    let uid = match pods.get(&name).await {
        Ok(pod) => pod.metadata.uid,
        Err(error) => {
            tracing::debug!(%error, pod = %name, "cannot read the controller's own Pod");
            None
        }
    };
    Some(ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        name: Some(name),
        namespace: Some(namespace),
        uid,
        ..Default::default()
    })
}

/// The TargetGroupBinding webhooks' slots, filled once AWS is ready.
pub struct AwsWebhooks {
    pub tgb_mutator: LateSlot,
    pub tgb_validator: LateSlot,
}

impl AwsWebhooks {
    /// Builds the webhooks on one shared target-group cache, so a burst of binding writes
    /// becomes one DescribeTargetGroups per target group and TTL, not one per request.
    pub fn install(&self, cloud: &Cloud, bindings: &TgbIndex) {
        let cache = Arc::new(
            TgCache::new(cloud.elbv2.clone(), tg_cache::DEFAULT_TTL)
                .with_roles(cloud.roles.clone())
                // Installed from the controller's runtime: the AWS calls stay on it.
                .on_runtime(tokio::runtime::Handle::current()),
        );
        self.tgb_mutator
            .set(Arc::new(TgbMutator::new(cache.clone())));
        self.tgb_validator.set(Arc::new(TgbValidator::new(
            cache,
            bindings.clone(),
            cloud.resolved.vpc_id.clone(),
        )));
    }
}

/// The controllers' warm halves: registered with the process's watches at start, on every
/// replica, so a standby's caches are current when it takes the Lease.
pub struct Controllers {
    ingress: ingress::Warm,
    tgb: tgb::Warm,
    service: service::Warm,
    /// Set once CRD detection has settled the Gateway gates (before the watches start).
    gateway: std::sync::OnceLock<gateway::Warm>,
    /// GatewayClasses and the `gateway.k8s.aws` configurations' finalizers (either Gateway gate
    /// after CRD detection), set with the Gateway controllers.
    pub gateway_class: std::sync::OnceLock<gateway_class::Warm>,
    /// GlobalAccelerators (gate `GlobalAcceleratorController` and the CRD served), set before
    /// the watches start.
    aga: std::sync::OnceLock<aga::Warm>,
}

impl Controllers {
    /// Registers every controller's indexes with `watches` (before they start).
    pub fn register(watches: &Watches, cfg: &Config) -> Arc<Controllers> {
        Arc::new(Controllers {
            ingress: ingress::Warm::register(watches, &cfg.ingress_class),
            tgb: tgb::Warm::register(
                watches,
                cfg.enable_endpoint_slices,
                &cfg.quic_environment_variable_name,
            ),
            service: service::Warm::register(watches, &crate::model::ModelConfig::from(cfg)),
            gateway: std::sync::OnceLock::new(),
            gateway_class: std::sync::OnceLock::new(),
            aga: std::sync::OnceLock::new(),
        })
    }

    /// Registers the GlobalAccelerator controller for the kinds discovery found `served`
    /// (`None`: gate off, or no CRD; before the watches start; a second call changes nothing).
    pub fn register_aga(&self, watches: &Watches, served: Option<aga::Served>) {
        if let Some(warm) = served.and_then(|s| aga::Warm::register(watches, s)) {
            let _ = self.aga.set(warm);
        }
    }

    /// Registers the Gateway controllers whose gates stayed on after CRD detection (before the
    /// watches start; a second call changes nothing).
    pub fn register_gateway(&self, watches: &Watches, cfg: &Config) {
        let gates = &cfg.gateway;
        let sets = gates.listener_set.enabled;
        if let Some(warm) =
            gateway::Warm::register(watches, gates.alb.enabled, gates.nlb.enabled, sets)
        {
            let _ = self.gateway.set(warm);
        }
        let classes = GatewayClassConfig::from(cfg);
        if classes.enabled() && self.gateway_class.get().is_none() {
            let _ = self
                .gateway_class
                .set(gateway_class::Warm::register(watches, &classes));
        }
    }
}

/// Everything the leader runs; returns when `token` is cancelled.
async fn run_leading(
    warm: &Controllers,
    client: kube::Client,
    cloud: Cloud,
    cfg: Arc<Config>,
    metrics: ControllerMetrics,
    token: CancellationToken,
) {
    // One inventory of the VPC's load balancers, target groups and cluster security groups for
    // the Ingress, Service and Gateway deployers of this term: a resync pass lists the account
    // once, not once per stack. A dry run reads it anew at every deploy (TTL zero): a write it
    // only pretends to make must not hide the same pending write from the next pass.
    let ttl = if cfg.dry_run {
        Duration::ZERO
    } else {
        inventory::ttl_for(cfg.sync_period)
    };
    let shared = Arc::new(
        Inventory::new(
            cloud.elbv2.clone(),
            cloud.ec2.clone(),
            cloud.resolved.vpc_id.clone(),
        )
        .with_ttl(ttl),
    );
    let ingress = ingress::lead(
        &warm.ingress,
        client.clone(),
        cloud.elbv2.clone(),
        cloud.ec2.clone(),
        cloud.resolved.vpc_id.clone(),
        IngressConfig {
            metrics: cloud.metrics.clone(),
            controller_metrics: metrics.clone(),
            addons: cloud.addons.clone(),
            tagging: cloud.tagging.clone(),
            cert_discovery: Some(CertDiscovery::for_ingresses(&cfg, cloud.acm.clone())),
            // Gate `EnableCertificateManagement` (off by default, as upstream).
            certificates: cfg
                .gate("EnableCertificateManagement")
                .then(|| Arc::new(Certificates::new(cloud.acm.clone(), cloud.route53.clone()))),
            inventory: Some(shared.clone()),
            ..IngressConfig::from(&*cfg)
        },
        token.clone(),
    );
    let svc_cfg = ServiceConfig {
        vpc_cidrs: cloud.vpc_cidrs.iter().map(ToString::to_string).collect(),
        metrics: cloud.metrics.clone(),
        controller_metrics: metrics.clone(),
        tagging: cloud.tagging.clone(),
        inventory: Some(shared.clone()),
        ..ServiceConfig::from(&*cfg)
    };
    // Feature gate `EnableServiceController` (default on), as upstream's main.go.
    let services = async {
        if svc_cfg.enabled() {
            service::lead(
                &warm.service,
                client.clone(),
                cloud.elbv2.clone(),
                cloud.ec2.clone(),
                cloud.resolved.vpc_id.clone(),
                svc_cfg,
                token.clone(),
            )
            .await
        }
    };
    // Does nothing unless gate ALBGatewayAPI or NLBGatewayAPI stayed on.
    let classes = async {
        if let Some(w) = warm.gateway_class.get() {
            gateway_class::lead(
                w,
                client.clone(),
                GatewayClassConfig {
                    controller_metrics: metrics.clone(),
                    ..GatewayClassConfig::from(&*cfg)
                },
                token.clone(),
            )
            .await
        }
    };
    // Gates `ALBGatewayAPI` / `NLBGatewayAPI` (after CRD detection): one controller per kind,
    // both on one ACM discovery (and cache).
    let gw_discovery = CertDiscovery::for_gateways(&cfg, cloud.acm.clone());
    let gateways = futures::future::join_all(
        [LbKind::Alb, LbKind::Nlb]
            .into_iter()
            .filter_map(|lb| {
                let w = warm.gateway.get()?;
                w.feed(lb)?;
                Some((w, lb))
            })
            .map(|(w, lb)| {
                let gw_cfg = GatewayControllerConfig {
                    metrics: cloud.metrics.clone(),
                    controller_metrics: metrics.clone(),
                    service_references: warm.gateway_class.get().map(|c| c.service_references()),
                    cert_discovery: Some(gw_discovery.clone()),
                    addons: cloud.addons.clone(),
                    tagging: cloud.tagging.clone(),
                    vpc_cidrs: cloud.vpc_cidrs.iter().map(ToString::to_string).collect(),
                    inventory: Some(shared.clone()),
                    ..GatewayControllerConfig::from_flags(&cfg, lb)
                };
                gateway::lead(
                    w,
                    client.clone(),
                    cloud.elbv2.clone(),
                    cloud.ec2.clone(),
                    cloud.resolved.vpc_id.clone(),
                    gw_cfg,
                    token.clone(),
                )
            }),
    );
    // Gate `GlobalAcceleratorController` (off by default), a partition with Global Accelerator
    // (the resolved region) and the CRD served.
    let accelerators = async {
        if let Some(w) = warm.aga.get() {
            aga::lead(
                w,
                client.clone(),
                cloud.global_accelerator.clone(),
                cloud.elbv2.clone(),
                AgaControllerConfig {
                    region: cloud.resolved.region.clone(),
                    controller_metrics: metrics.clone(),
                    ..AgaControllerConfig::from(&*cfg)
                },
                token.clone(),
            )
            .await
        }
    };
    let tgb = tgb::lead(
        &warm.tgb,
        client.clone(),
        cloud.elbv2.clone(),
        cloud.ec2.clone(),
        TgbConfig {
            controller_metrics: metrics.clone(),
            ..TgbConfig::resolved(&cfg, &cloud)
        },
        token.clone(),
    );
    futures::join!(ingress, services, classes, gateways, accelerators, tgb);
}

/// Runs the reconcilers until `shutdown`: directly, or only while elected when
/// `--enable-leader-election` is set (`guards` then holds the fence `cloud`'s clients check).
pub async fn run(
    warm: Arc<Controllers>,
    client: kube::Client,
    cloud: Cloud,
    cfg: Config,
    guards: Leadership,
    shutdown: CancellationToken,
) {
    let cfg = Arc::new(cfg);
    let mut cloud = cloud;
    if cfg.dry_run {
        cloud = cloud.shadowed();
        tracing::info!("dry run: no AWS or Kubernetes write will be sent");
    }
    if !cfg.enable_leader_election {
        run_leading(&warm, client, cloud, cfg, guards.metrics, shutdown).await;
        return;
    }
    let lease = LeaderConfig::from(&*cfg);
    let metrics = guards.metrics.clone();
    // The controllers write to Kubernetes under the same fence as to AWS; the Lease is renewed
    // through the plain client.
    let writer = crate::controller::kube_fence::fenced(&client, guards.fence.clone());
    leader::run_elected(client, lease, guards, shutdown, move |token| {
        let (warm, client, cloud) = (warm.clone(), writer.clone(), cloud.clone());
        let (cfg, metrics) = (cfg.clone(), metrics.clone());
        async move { run_leading(&warm, client, cloud, cfg, metrics, token).await }
    })
    .await;
}
