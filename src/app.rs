//! Process wiring: servers, Kubernetes connection and shutdown. The only place `anyhow` meets the
//! layers below; read top to bottom to see what runs.

use crate::certs::{CertManager, CertManagerConfig};
use crate::config::{Config, ManagedCertConfig};
use crate::controller::leader::Leadership;
use crate::controller::metrics::{CacheObjects, ControllerMetrics};
use crate::metrics::RestClientMetrics;
use crate::metrics::{self, WebhookMetrics};
use crate::probes::{self, Readiness};
use crate::reconcilers::{self, AwsWebhooks};
use crate::thread_stack::WORKER_STACK_BYTES;
use crate::webhook::aga_validator::GlobalAcceleratorValidator;
use crate::webhook::icp_validator::IcpValidator;
use crate::webhook::indexes::{IngressClassIndex, TgbIndex};
use crate::webhook::ingress_validator::IngressValidator;
use crate::webhook::late::Late;
use crate::webhook::pod_index::PodGateIndex;
use crate::webhook::pod_readiness::PodReadinessGateInjector;
use crate::webhook::quic_server_id::QuicServerIdInjector;
use crate::webhook::target_control::TargetControlInjector;
use crate::webhook::target_control_index::TargetControlIndex;
use crate::webhook::{self, pod_index_feed, server, service_mutator::ServiceMutator, Routes};
use anyhow::Context;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The process's runtime: watches, reconcilers, the metrics and probe servers (the admission
/// webhooks have threads of their own, [`server::serve_tls_on_threads`]).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(WORKER_STACK_BYTES)
        .build()
}

/// Readiness check names.
pub const READY_WEBHOOK: &str = "webhook";
pub const READY_KUBE: &str = "kube-api";
pub const READY_CACHES: &str = "caches";

/// Watch-fed state the webhooks answer from.
#[derive(Clone, Default)]
struct Indexes {
    pod_gates: PodGateIndex,
    ingress_classes: IngressClassIndex,
    bindings: TgbIndex,
    /// Fed (and waited for) only with the `ALBTargetControlAgent` gate on.
    target_control: TargetControlIndex,
}

/// Upstream's gate of the ALB target control agent injector and its two pod webhooks.
const TARGET_CONTROL_GATE: &str = "ALBTargetControlAgent";

/// The admission route table: one line per webhook. The TargetGroupBinding webhooks need AWS;
/// they are filled in through the returned slots once the AWS clients resolve.
fn routes(cfg: &Config, idx: &Indexes) -> (Routes, AwsWebhooks) {
    let service = ServiceMutator {
        load_balancer_class: cfg.load_balancer_class.clone(),
    };
    let pod = PodReadinessGateInjector {
        enabled: cfg.enable_pod_readiness_gate_inject,
        index: idx.pod_gates.clone(),
        sync_wait: Duration::from_secs(2),
    };
    let ingress = IngressValidator::new(
        cfg.ingress_class.clone(),
        cfg.disable_ingress_class_annotation,
        cfg.disable_ingress_group_name_annotation,
        idx.ingress_classes.clone(),
    );
    let quic = QuicServerIdInjector::new(cfg.quic_environment_variable_name.clone());
    let (tgb_mutator, tgb_mutator_slot) = Late::new(true, "the AWS client");
    let (tgb_validator, tgb_validator_slot) = Late::new(false, "the AWS client");
    let mut routes: Routes = vec![
        (webhook::service_mutator::PATH, Arc::new(service)),
        (webhook::pod_readiness::PATH, Arc::new(pod)),
        (webhook::quic_server_id::PATH, Arc::new(quic)),
        (webhook::ingress_validator::PATH, Arc::new(ingress)),
        (webhook::icp_validator::PATH, Arc::new(IcpValidator)),
        (webhook::tgb_mutator::PATH, Arc::new(tgb_mutator)),
        (webhook::tgb_validator::PATH, Arc::new(tgb_validator)),
    ];
    if cfg.gate(TARGET_CONTROL_GATE) {
        // One mutator on both paths, as upstream registers it.
        let injector: Arc<dyn webhook::Handler> =
            Arc::new(TargetControlInjector::new(idx.target_control.clone()));
        routes.push((webhook::target_control::NAMESPACE_PATH, injector.clone()));
        routes.push((webhook::target_control::OBJECT_PATH, injector));
    }
    // As upstream: only with the gate, and not in partitions without Global Accelerator (a
    // region not known yet counts as one that has it).
    let region = cfg.aws_region.as_deref().unwrap_or_default();
    if crate::model::aga::controller_enabled(cfg.gate("GlobalAcceleratorController"), region) {
        let validator: Arc<dyn webhook::Handler> = Arc::new(GlobalAcceleratorValidator);
        routes.push((webhook::aga_validator::PATH, validator));
    }
    let slots = AwsWebhooks {
        tgb_mutator: tgb_mutator_slot,
        tgb_validator: tgb_validator_slot,
    };
    (routes, slots)
}

/// Every admission path the process serves with this configuration, read off [`routes`] so the
/// chart tests compare the webhook configurations with what is really served.
pub fn served_paths(cfg: &Config) -> Vec<&'static str> {
    routes(cfg, &Indexes::default())
        .0
        .into_iter()
        .map(|(path, _)| path)
        .collect()
}

/// Marks the caches ready once every webhook index in use has its first list.
async fn caches_ready(idx: Indexes, target_control: bool, readiness: Readiness) {
    let synced = |idx: &Indexes| {
        idx.pod_gates.synced()
            && idx.ingress_classes.synced()
            && idx.bindings.synced()
            && (!target_control || idx.target_control.synced())
    };
    while !synced(&idx) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    readiness.set(READY_CACHES, true);
    tracing::info!("caches synced");
}

/// Listens on `addr` with a backlog of 4096 (the kernel caps it at `somaxconn`), as Go's
/// listener does: tokio's default of 1024 overflowed under a connection flood, and a client
/// whose SYN is dropped waits a second for its retry.
async fn bind(what: &str, addr: SocketAddr) -> anyhow::Result<TcpListener> {
    let listen = || -> std::io::Result<TcpListener> {
        let socket = match addr {
            SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        socket.listen(4096)
    };
    listen().with_context(|| format!("cannot listen for {what} on {addr}"))
}

/// Runs the controller until SIGTERM/SIGINT; returns after draining.
pub async fn run(cfg: Config) -> anyhow::Result<()> {
    crate::build_info::log();
    // Flags this build does not act on, set anyway (see `config::inert`): said once, at start.
    for w in &cfg.inert_warnings {
        tracing::warn!(flag = w.flag, value = %w.value, "{}", w.message);
    }
    let shutdown = CancellationToken::new();
    spawn_signal_handler(shutdown.clone());
    let reg = Registered::new(&cfg);
    let readiness = Readiness::default();
    readiness.add(READY_WEBHOOK);
    readiness.add(READY_KUBE);
    readiness.add(READY_CACHES);
    let indexes = Indexes::default();
    pod_index_feed::register(
        &reg.watches,
        &indexes.pod_gates,
        &indexes.ingress_classes,
        &indexes.bindings,
    );
    if cfg.gate(TARGET_CONTROL_GATE) {
        webhook::target_control_index::register(&reg.watches, &indexes.target_control);
    }
    let controllers = reconcilers::Controllers::register(&reg.watches, &cfg);
    let mut leadership = Leadership::new(cfg.enable_leader_election);
    leadership.metrics = reg.controllers.clone();

    let mut tasks = tokio::task::JoinSet::new();
    {
        // Upstream publishes its top talkers on every replica, leading or not.
        let (token, metrics) = (shutdown.clone(), reg.controllers.clone());
        let every = crate::controller::metrics::top_talkers_interval();
        tasks.spawn(async move {
            tokio::select! {
                _ = token.cancelled() => {}
                _ = metrics.run_top_talkers(every) => {}
            }
        });
    }
    let managed_resolver = Arc::new(webhook::tls::ReloadingCert::in_memory(
        webhook::tls::provider(),
    ));
    // A --dry-run shadow has no webhook configuration pointing at it: it serves a throwaway
    // certificate and never creates or rotates the Secret the owning controller uses.
    let throwaway = cfg.dry_run && cfg.webhook.managed_cert.is_some();
    if throwaway {
        throwaway_cert(&managed_resolver, &cfg)?;
    }
    let Ok(early_client) = managed_certificate(
        &cfg,
        &reg.rest,
        &readiness,
        &managed_resolver,
        &shutdown,
        &mut tasks,
    )
    .await
    else {
        return Ok(());
    };
    let in_memory = (early_client.is_some() || throwaway).then_some(managed_resolver);
    let tls = webhook_tls(&cfg, in_memory)?;
    let (routes, aws_webhooks) = routes(&cfg, &indexes);
    let router = webhook::router(routes, reg.webhook, webhook::Limits::from(&cfg.webhook));
    serve_webhooks(&cfg, tls, router, &shutdown, &mut tasks).await?;
    readiness.set(READY_WEBHOOK, true);
    serve_metrics_and_probes(
        &cfg,
        &reg.registry,
        &readiness,
        &leadership,
        &shutdown,
        &mut tasks,
    )
    .await?;

    let cluster = Kube {
        cfg: cfg.clone(),
        early_client,
        rest: reg.rest,
        readiness,
        indexes,
        watches: reg.watches,
        controllers,
        aws_metrics: reg.aws,
        aws_webhooks,
        leadership,
    };
    let kube_task = tokio::spawn(cluster.run(shutdown.clone()));

    shutdown.cancelled().await;
    tracing::info!("shutting down: draining in-flight requests");
    while tasks.join_next().await.is_some() {}
    let abort = kube_task.abort_handle();
    if tokio::time::timeout(cfg.shutdown_grace_period, kube_task)
        .await
        .is_err()
    {
        tracing::warn!("reconcilers did not stop within the grace period");
        abort.abort();
    }
    tracing::info!("shut down cleanly");
    Ok(())
}

/// The metrics registry and what reports to it, and the process's watches (whose cache sizes
/// it reports): one watch per kind for the whole process, the webhook indexes and every
/// controller's caches registering there before anything is watched, on every replica.
struct Registered {
    registry: Arc<prometheus_client::registry::Registry>,
    webhook: WebhookMetrics,
    aws: crate::aws::AwsMetrics,
    controllers: ControllerMetrics,
    rest: RestClientMetrics,
    watches: Arc<crate::watch::Watches>,
}

impl Registered {
    fn new(cfg: &Config) -> Registered {
        let mut registry = metrics::new_registry();
        let webhook = WebhookMetrics::register(&mut registry);
        let aws = crate::aws::AwsMetrics::register(&mut registry);
        if cfg.dry_run {
            crate::aws::shadow::register(&mut registry);
        }
        let controllers = ControllerMetrics::register(&mut registry);
        let rest = RestClientMetrics::register(&mut registry);
        let watches = Arc::new(crate::watch::Watches::with_required_secrets_label(
            cfg.required_secrets_label.clone(),
        ));
        CacheObjects::register(&mut registry, &watches);
        Registered {
            registry: Arc::new(registry),
            webhook,
            aws,
            controllers,
            rest,
            watches,
        }
    }
}

/// Shutdown came before the start was done.
struct Stopped;

/// With a managed certificate the Secret and caBundle come first: nothing may serve a
/// certificate the API servers do not trust yet. Returns the client it connected with (`None`
/// without a managed certificate, or in a `--dry-run` shadow), after starting the rotation.
async fn managed_certificate(
    cfg: &Config,
    rest: &RestClientMetrics,
    readiness: &Readiness,
    resolver: &Arc<webhook::tls::ReloadingCert>,
    shutdown: &CancellationToken,
    tasks: &mut tokio::task::JoinSet<()>,
) -> Result<Option<kube::Client>, Stopped> {
    let Some(m) = cfg.webhook.managed_cert.as_ref().filter(|_| !cfg.dry_run) else {
        return Ok(None);
    };
    let client = tokio::select! {
        _ = shutdown.cancelled() => return Err(Stopped),
        client = connect_kube(cfg, rest) => client,
    };
    readiness.set(READY_KUBE, true);
    let mut manager = CertManager::new(client.clone(), cert_manager_config(m), resolver.clone());
    let mut delay = Duration::from_millis(500);
    while let Err(error) = manager.ensure().await {
        tracing::error!(error = %format!("{error:#}"), retry_in = ?delay, "cannot set up the webhook certificate");
        tokio::select! {
            _ = shutdown.cancelled() => return Err(Stopped),
            _ = tokio::time::sleep(delay) => {}
        }
        delay = (delay * 2).min(Duration::from_secs(30));
    }
    let token = shutdown.clone();
    tasks.spawn(async move {
        tokio::select! { _ = token.cancelled() => {}, _ = manager.run() => {} }
    });
    Ok(Some(client))
}

/// The webhook server's TLS: the in-memory certificate (managed, or a shadow's throwaway), else
/// the files. Fails fast on an unreadable certificate (or `--kube-ca-pem-filepath`): a pod that
/// cannot serve TLS must not look healthy.
fn webhook_tls(
    cfg: &Config,
    in_memory: Option<Arc<webhook::tls::ReloadingCert>>,
) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    let clients = webhook::tls::client_verifier(cfg.webhook.client_ca_file.as_deref())
        .context("webhook client CA (--kube-ca-pem-filepath)")?;
    let min_version = cfg.webhook.tls_min_version;
    let resolver = match in_memory {
        Some(resolver) => resolver,
        None => Arc::new(
            webhook::tls::ReloadingCert::from_files(
                cfg.webhook.cert_file.clone(),
                cfg.webhook.key_file.clone(),
                webhook::tls::provider(),
            )
            .context("webhook serving certificate")?,
        ),
    };
    Ok(webhook::tls::server_config_for(
        resolver,
        min_version,
        clients,
    )?)
}

/// The admission webhooks on their own threads.
async fn serve_webhooks(
    cfg: &Config,
    tls: Arc<rustls::ServerConfig>,
    router: webhook::Admission,
    shutdown: &CancellationToken,
    tasks: &mut tokio::task::JoinSet<()>,
) -> anyhow::Result<()> {
    let conn_limits = server::ConnLimits {
        header_timeout: cfg.webhook.request_timeout,
        drain_timeout: cfg.shutdown_grace_period,
        max_connections: cfg.webhook.max_connections,
        ..Default::default()
    };
    let listener = bind("the webhook server", cfg.webhook.bind).await?;
    tracing::info!(addr = %listener.local_addr()?, "webhook server listening");
    tasks.spawn(
        server::serve_tls_on_threads(
            listener,
            tls,
            router,
            conn_limits,
            shutdown.clone(),
            webhook::threads::ServerThreads::default_count(),
        )
        .context("cannot start the webhook server threads")?,
    );
    Ok(())
}

/// The metrics (`--metrics-bind-addr`) and health probe (`--health-probe-bind-addr`) servers.
async fn serve_metrics_and_probes(
    cfg: &Config,
    registry: &Arc<prometheus_client::registry::Registry>,
    readiness: &Readiness,
    leadership: &Leadership,
    shutdown: &CancellationToken,
    tasks: &mut tokio::task::JoinSet<()>,
) -> anyhow::Result<()> {
    if let Some(addr) = cfg.metrics_bind {
        let listener = bind("metrics", addr).await?;
        tracing::info!(addr = %listener.local_addr()?, "metrics server listening");
        let (router, token) = (metrics::metrics_router(registry.clone()), shutdown.clone());
        tasks.spawn(async move {
            if let Err(error) =
                crate::plain_server::serve(listener, router, token, Default::default()).await
            {
                tracing::error!(%error, "metrics server failed");
            }
        });
    }
    if let Some(addr) = cfg.health_probe_bind {
        let listener = bind("health probes", addr).await?;
        tracing::info!(addr = %listener.local_addr()?, "health probe server listening");
        let router = probes::probes_router(readiness.clone(), leadership.health.clone());
        let token = shutdown.clone();
        tasks.spawn(async move {
            if let Err(error) =
                crate::plain_server::serve(listener, router, token, Default::default()).await
            {
                tracing::error!(%error, "health probe server failed");
            }
        });
    }
    Ok(())
}

/// The Kubernetes half of the process: connect, settle the Gateway gates, run the watches,
/// then (once AWS resolves) the AWS-backed webhooks and the reconcilers.
struct Kube {
    cfg: Config,
    early_client: Option<kube::Client>,
    rest: RestClientMetrics,
    readiness: Readiness,
    indexes: Indexes,
    watches: Arc<crate::watch::Watches>,
    controllers: Arc<reconcilers::Controllers>,
    aws_metrics: crate::aws::AwsMetrics,
    aws_webhooks: AwsWebhooks,
    leadership: Leadership,
}

impl Kube {
    async fn run(self, token: CancellationToken) {
        let Kube {
            cfg,
            early_client,
            rest,
            readiness,
            indexes,
            watches,
            controllers,
            aws_metrics,
            aws_webhooks,
            leadership,
        } = self;
        let client = match early_client {
            Some(client) => client,
            None => tokio::select! {
                _ = token.cancelled() => return,
                client = connect_kube(&cfg, &rest) => client,
            },
        };
        readiness.set(READY_KUBE, true);
        // Gateway gates whose CRDs are missing turn off (upstream's detection), and the
        // Gateway controllers that stay on register before anything is watched.
        let mut cfg = cfg;
        if !crate::controller::gateway::detect::apply(&client, &mut cfg.gateway, &token).await {
            return;
        }
        controllers.register_gateway(&watches, &cfg);
        // Gate `GlobalAcceleratorController`: its kinds register, as upstream sets the
        // controller up, only when the API server serves the CRD.
        let aga = crate::controller::aga::AgaControllerConfig::from(&cfg);
        if aga.enabled() {
            let served = crate::controller::aga::detect::detect(&client, &token).await;
            if token.is_cancelled() {
                return;
            }
            controllers.register_aga(&watches, served);
        }
        let bindings = indexes.bindings.clone();
        let watches = {
            let (client, cfg, token) = (client.clone(), cfg.clone(), token.clone());
            async move {
                let run = watches.run(client, cfg.watch_namespaces.clone());
                let target_control = cfg.gate(TARGET_CONTROL_GATE);
                let ready = caches_ready(indexes, target_control, readiness);
                tokio::select! {
                    _ = token.cancelled() => {}
                    _ = futures::future::join(run, ready) => {}
                }
            }
        };
        // Reconcilers handle `token` themselves: the leader releases its Lease on the way out.
        let reconcile = async move {
            let fence = &leadership.fence;
            // The client is connected before AWS set-up starts: its failures can be events.
            let events = reconcilers::AwsSetupEvents::new(Some(client.clone()));
            let Some(cloud) =
                reconcilers::resolve_aws(&cfg, Some(aws_metrics), fence, events, &token).await
            else {
                return;
            };
            aws_webhooks.install(&cloud, &bindings);
            reconcilers::run(controllers, client, cloud, cfg, leadership, token).await;
        };
        futures::join!(watches, reconcile);
    }
}

/// Loads a self-signed serving certificate for the webhook server of a shadow (kept in memory).
fn throwaway_cert(resolver: &webhook::tls::ReloadingCert, cfg: &Config) -> anyhow::Result<()> {
    let Some(m) = &cfg.webhook.managed_cert else {
        return Ok(());
    };
    let spec = webhook_certs::ServingSpec::new(&m.service_name, &m.namespace);
    let bundle = webhook_certs::generate(&spec, 1)?;
    resolver.set_pem(&bundle.cert_pem, &bundle.key_pem)?;
    Ok(())
}

fn cert_manager_config(m: &ManagedCertConfig) -> CertManagerConfig {
    CertManagerConfig {
        namespace: m.namespace.clone(),
        secret_name: m.secret_name.clone(),
        service_name: m.service_name.clone(),
        webhook_config_name: m.webhook_config_name.clone(),
        dns_domain: m.dns_domain.clone(),
        serving_days: m.validity_days,
        renew_before: m.renew_before,
        check_interval: m.check_interval,
        bundle_propagation: m.ca_propagation_delay,
    }
}

fn spawn_signal_handler(token: CancellationToken) {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let mut term = signal(SignalKind::terminate()).expect("install SIGTERM handler");
            tokio::select! {
                _ = term.recv() => tracing::info!("received SIGTERM"),
                _ = tokio::signal::ctrl_c() => tracing::info!("received SIGINT"),
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        token.cancel();
    });
}

async fn kube_config(cfg: &Config) -> Result<kube::Config, String> {
    match &cfg.kubeconfig {
        Some(path) => {
            let kc = kube::config::Kubeconfig::read_from(path)
                .map_err(|e| format!("cannot read kubeconfig {}: {e}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kc, &Default::default())
                .await
                .map_err(|e| format!("invalid kubeconfig {}: {e}", path.display()))
        }
        None => kube::Config::infer().await.map_err(|e| {
            format!(
                "no in-cluster service account and no usable kubeconfig (set --kubeconfig): {e}"
            )
        }),
    }
}

/// Connects to the API server, retrying with capped exponential backoff and saying clearly what
/// fails (which URL, which error) instead of hanging silently or crash-looping.
pub async fn connect_kube(cfg: &Config, rest: &RestClientMetrics) -> kube::Client {
    let mut delay = Duration::from_millis(500);
    let max = Duration::from_secs(30);
    loop {
        match kube_config(cfg).await {
            Err(error) => {
                tracing::error!(%error, retry_in = ?delay, "cannot configure the Kubernetes API client")
            }
            Ok(kc) => {
                let url = kc.cluster_url.to_string();
                let host = kc
                    .cluster_url
                    .authority()
                    .map(|a| a.to_string())
                    .unwrap_or_default();
                // A --dry-run controller's writes never leave the process.
                let built = if cfg.dry_run {
                    // Its own `…-dry-run` Lease is the one object it writes.
                    let lease = cfg.enable_leader_election.then(|| {
                        let l = crate::controller::leader::LeaderConfig::from(cfg);
                        crate::aws::shadow::cluster::OwnLease {
                            namespace: l.namespace,
                            name: l.name,
                        }
                    });
                    crate::aws::shadow::cluster::client(kc, cfg.dry_run_events, lease)
                } else {
                    kube::client::ClientBuilder::try_from(kc)
                        .map(|b| b.with_layer(&rest.layer(&host)).build())
                };
                match built {
                    Err(error) => {
                        tracing::error!(%url, %error, retry_in = ?delay, "cannot build the Kubernetes API client")
                    }
                    Ok(client) => match client.apiserver_version().await {
                        Ok(v) => {
                            tracing::info!(%url, version = %v.git_version, "connected to the Kubernetes API");
                            return client;
                        }
                        Err(error) => {
                            tracing::error!(%url, %error, retry_in = ?delay, "Kubernetes API unreachable")
                        }
                    },
                }
            }
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(max);
    }
}

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;
