//! Admission at the floor (issue #24): `/mutate-v1-pod` as the binary serves it
//! (`webhook::router` under `server::serve_tls_on_threads`, TLS 1.3, keep-alive, info-level
//! logging, 1,000 TargetGroupBindings and 5,000 Services fed through the watch driver on the
//! binary's runtime) against a static TLS endpoint on the same stack and the same kind of threads
//! answering the same bytes, driven by the same one-thread client:
//! alternating rounds at a fixed rate, then closed-loop saturation, then the fixed rate again
//! while the binding and Service watches deliver 100 updates per second.
//!
//! `cargo bench --profile perf --bench bench -- admission`; `ADMISSION_ROUNDS` (3) and
//! `ADMISSION_SECS` (5) change the rounds per side and their length; `ADMISSION_PROFILE=webhook`
//! (or `static`) runs only that side's saturation, for `perf record` (`webhook:paced`: at the fixed
//! rate); `ADMISSION_THREADS` sets
//! both servers' thread count (default: one per CPU, as the binary); `ADMISSION_RATE` the fixed
//! rate (1,000 req/s); `ADMISSION_STATIC_SPIN_NS` makes the floor spend that long on the CPU per
//! request, to see what extra server CPU does to latency on this machine.

use crate::admission_client::{self as client, Client};
use aws_load_balancer_controller::certs::tls;
use aws_load_balancer_controller::config::{LogFormat, LogLevel, TlsMinVersion};
use aws_load_balancer_controller::metrics::{new_registry, WebhookMetrics};
use aws_load_balancer_controller::watch::{self, Watches};
use aws_load_balancer_controller::webhook::indexes::{IngressClassIndex, TgbIndex};
use aws_load_balancer_controller::webhook::pod_index::PodGateIndex;
use aws_load_balancer_controller::webhook::pod_readiness::{self, PodReadinessGateInjector};
use aws_load_balancer_controller::webhook::threads::ServerThreads;
use aws_load_balancer_controller::webhook::{self, pod_index_feed, server, Limits};
use aws_load_balancer_controller::{app, telemetry};
use futures::channel::mpsc::{unbounded, UnboundedSender};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Service;
use kube::api::DynamicObject;
use kube::runtime::watcher::Event;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const NAMESPACES: usize = 100;
const BINDINGS_PER_NS: usize = 10;
const SERVICES_PER_NS: usize = 50;
const CONNS: usize = 4;
const CHURN_PER_SEC: u64 = 100;

fn binding(ns: usize, b: usize, version: u64) -> DynamicObject {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
        "metadata": {"name": format!("tgb-{b}"), "namespace": format!("ns-{ns}"),
            "uid": format!("uid-{ns}-{b}"), "resourceVersion": version.to_string()},
        "spec": {"targetType": "ip", "serviceRef": {"name": format!("svc-{}", b * 5), "port": 80},
            "targetGroupARN": format!("arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/t-{ns}-{b}/0123456789abcdef")}
    }))
    .expect("a binding")
}

fn service(ns: usize, s: usize, version: u64) -> Service {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": format!("svc-{s}"), "namespace": format!("ns-{ns}"),
            "resourceVersion": version.to_string()},
        "spec": {"selector": {"app": format!("app-{s}")}, "ports": [{"port": 80}]}
    }))
    .expect("a Service")
}

/// A ≈400-byte Pod CREATE review for `ns-42` whose labels select `svc-15`, the Service of
/// `tgb-3`: the answer carries one readiness gate.
fn pod_request() -> Vec<u8> {
    let body = pod_review();
    let mut req = format!(
        "POST {} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        pod_readiness::PATH,
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(&body);
    req
}

/// The body of [`pod_request`].
pub fn pod_review() -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "0d9a7c4e-5f1b-4c1e-9a51-2b7f3c8d6e10",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "namespace": "ns-42", "operation": "CREATE",
            "object": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"generateName": "web-7d4b9c-", "namespace": "ns-42",
                    "labels": {"app": "app-15", "pod-template-hash": "7d4b9c"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}
    }))
    .expect("a review")
}

/// The watch side: the pod index registered as the binary registers it, fed through
/// [`watch::drive`] from channels standing in for the API server.
struct Feed {
    bindings: UnboundedSender<Event<DynamicObject>>,
    services: UnboundedSender<Event<Service>>,
}

async fn indexes() -> (PodGateIndex, Feed) {
    let watches = Arc::new(Watches::default());
    let pod_gates = PodGateIndex::default();
    pod_index_feed::register(
        &watches,
        &pod_gates,
        &IngressClassIndex::default(),
        &TgbIndex::default(),
    );
    let (bindings, brx) = unbounded();
    let (services, srx) = unbounded();
    let w = watches.clone();
    tokio::spawn(async move { watch::drive(&w.bindings, brx.map(Ok)).await });
    tokio::spawn(async move { watch::drive(&watches.services, srx.map(Ok)).await });
    let _ = bindings.unbounded_send(Event::Init);
    let _ = services.unbounded_send(Event::Init);
    for ns in 0..NAMESPACES {
        for b in 0..BINDINGS_PER_NS {
            let _ = bindings.unbounded_send(Event::InitApply(binding(ns, b, 1)));
        }
        for s in 0..SERVICES_PER_NS {
            let _ = services.unbounded_send(Event::InitApply(service(ns, s, 1)));
        }
    }
    let _ = bindings.unbounded_send(Event::InitDone);
    let _ = services.unbounded_send(Event::InitDone);
    while !pod_gates.synced() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (pod_gates, Feed { bindings, services })
}

/// While `on`, one update every 1/`CHURN_PER_SEC` s, bindings and Services in turn, walking every
/// namespace (the pod's included); the content stays, so every answer stays the same.
async fn churn(feed: Feed, on: Arc<AtomicBool>, applied: Arc<AtomicU64>) {
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / CHURN_PER_SEC));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut n: u64 = 0;
    loop {
        tick.tick().await;
        if !on.load(Ordering::Relaxed) {
            continue;
        }
        n += 1;
        let i = (n / 2) as usize;
        let ns = i % NAMESPACES;
        if n.is_multiple_of(2) {
            let b = binding(ns, (i / NAMESPACES) % BINDINGS_PER_NS, n + 1);
            let _ = feed.bindings.unbounded_send(Event::Apply(b));
        } else {
            let s = service(ns, (i / NAMESPACES) % SERVICES_PER_NS, n + 1);
            let _ = feed.services.unbounded_send(Event::Apply(s));
        }
        applied.fetch_add(1, Ordering::Relaxed);
    }
}

struct Servers {
    webhook: SocketAddr,
    floor: SocketAddr,
    ca: String,
    /// Stops the webhook when the bench is done; the floor stops with its threads.
    _stop: tokio_util::sync::DropGuard,
    _floor: Arc<ServerThreads>,
    _dir: tempfile::TempDir,
}

/// Our webhook as `app::run` builds it (its router on server threads of its own), and the floor
/// with the same certificate files, on server threads alike.
async fn servers(index: PodGateIndex, floor_body: bytes::Bytes) -> Servers {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = webhook_certs::ServingSpec::new("bench", "default");
    spec.extra_sans = vec!["localhost".into()];
    let bundle = webhook_certs::generate(&spec, 30).unwrap();
    let (crt, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    std::fs::write(&crt, &bundle.cert_pem).unwrap();
    std::fs::write(&key, &bundle.key_pem).unwrap();
    let tls = || tls::server_config(crt.clone(), key.clone(), TlsMinVersion::Tls13).unwrap();
    let pod = PodReadinessGateInjector {
        enabled: true,
        index,
        sync_wait: Duration::from_secs(2),
    };
    let routes: webhook::Routes = vec![(pod_readiness::PATH, Arc::new(pod))];
    let metrics = WebhookMetrics::register(&mut new_registry());
    let router = webhook::router(routes, metrics, Limits::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let webhook = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let served = server::serve_tls_on_threads(
        listener,
        tls().0,
        router,
        server::ConnLimits::default(),
        stop.clone(),
        server_threads(),
    )
    .expect("the webhook server threads");
    tokio::spawn(served);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let floor = listener.local_addr().unwrap();
    let floor_threads =
        client::serve_static_on_threads(listener, tls().0, floor_body, server_threads());
    Servers {
        webhook,
        floor,
        ca: bundle.ca.cert_pem,
        _stop: stop.drop_guard(),
        _floor: floor_threads,
        _dir: dir,
    }
}

/// p50/p99/p99.9 of each round of one side, in µs.
#[derive(Default)]
struct Side {
    rounds: Vec<[f64; 3]>,
    rates: Vec<f64>,
}

impl Side {
    fn median(&self, k: usize) -> f64 {
        let mut v: Vec<f64> = self.rounds.iter().map(|r| r[k]).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    fn median_rate(&self) -> f64 {
        let mut v = self.rates.clone();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }
}

/// The fixed rate of the latency rounds: 1,000 req/s (the issue's) unless `ADMISSION_RATE` says;
/// a higher rate keeps the servers' caches warm between requests, which separates the cost of
/// cold code paths from the cost of the work itself.
fn rate() -> u32 {
    env("ADMISSION_RATE", 1000.0) as u32
}

/// Threads per server: the binary's count (one per CPU) unless `ADMISSION_THREADS` says.
fn server_threads() -> usize {
    env("ADMISSION_THREADS", ServerThreads::default_count() as f64) as usize
}

fn env(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One side of the comparison.
struct Target {
    name: &'static str,
    addr: SocketAddr,
}

/// What every round of every side sends and must get back.
struct Exchange {
    cfg: Arc<rustls::ClientConfig>,
    request: Vec<u8>,
    answer: bytes::Bytes,
}

impl Exchange {
    /// Fresh keep-alive connections for one round, handshaken and each answered once before any
    /// timing (a connection idle for the header timeout is closed by the server, as it should).
    async fn connect(&self, target: &Target) -> Vec<Client> {
        let mut clients = Vec::new();
        for _ in 0..CONNS {
            let mut c = Client::connect(target.addr, self.cfg.clone()).await;
            assert_eq!(
                c.roundtrip(&self.request).await,
                &self.answer[..],
                "{}",
                target.name
            );
            clients.push(c);
        }
        clients
    }
}

/// Fixed-rate rounds, the two sides alternating (and which goes first, so drift cancels).
async fn latency_rounds(
    label: &str,
    sides: &[Target; 2],
    ex: &Exchange,
    rounds: usize,
    secs: f64,
) -> [Side; 2] {
    let mut out = [Side::default(), Side::default()];
    for r in 0..rounds {
        for k in [r % 2, 1 - r % 2] {
            let name = sides[k].name;
            let mut clients = ex.connect(&sides[k]).await;
            let lat = client::paced(&mut clients, &ex.request, rate(), secs).await;
            let q = [0.50, 0.99, 0.999].map(|p| client::percentile_us(&lat, p));
            println!(
                "admission/{label}: round {} {name:<7} {} requests: p50 {:.0} µs  p99 {:.0} µs  p99.9 {:.0} µs",
                r + 1,
                lat.len(),
                q[0],
                q[1],
                q[2]
            );
            out[k].rounds.push(q);
        }
    }
    out
}

fn summary(label: &str, sides: &[Side; 2]) {
    let [w, f] = sides;
    let names = ["p50", "p99", "p99.9"];
    for (k, name) in names.iter().enumerate() {
        let (a, b) = (w.median(k), f.median(k));
        println!(
            "admission/{label}: {name:<5} webhook {a:>6.0} µs  static {b:>6.0} µs  ratio {:.2}",
            a / b
        );
    }
}

pub fn run() {
    telemetry::init(LogLevel::Info, LogFormat::Text);
    let rounds = env("ADMISSION_ROUNDS", 3.0) as usize;
    let secs = env("ADMISSION_SECS", 5.0);
    let server_rt = app::runtime().expect("the binary's runtime");
    let request = pod_request();
    let (index, feed) = server_rt.block_on(indexes());
    let (b, s) = index.sizes();
    // The floor answers the webhook's own bytes: fetch them from a first server pair.
    let client_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let probe = server_rt.block_on(servers(index.clone(), bytes::Bytes::new()));
    let answer = client_rt.block_on(async {
        let mut c = Client::connect(probe.webhook, client::client_config(&probe.ca)).await;
        bytes::Bytes::copy_from_slice(c.roundtrip(&request).await)
    });
    drop(probe);
    assert!(
        String::from_utf8_lossy(&answer).contains("\"patch\""),
        "the answer carries the readiness-gate patch"
    );
    let srv = server_rt.block_on(servers(index, answer.clone()));
    println!(
        "admission: {b} TargetGroupBindings and {s} Services indexed; request {} bytes (body {}), answer body {} bytes; {CONNS} keep-alive TLS 1.3 connections per side from one client thread, {} server threads per side; {rounds} rounds of {secs} s per side",
        request.len(),
        request.len() - request.windows(4).position(|w| w == b"\r\n\r\n").unwrap() - 4,
        answer.len(),
        server_threads()
    );
    let on = Arc::new(AtomicBool::new(false));
    let applied = Arc::new(AtomicU64::new(0));
    server_rt.spawn(churn(feed, on.clone(), applied.clone()));
    // The binary's runtime (watch drivers, churn) is left to its workers; the servers have their
    // own threads; this thread becomes the client's.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let driver = std::thread::Builder::new()
        .name("server-rt".into())
        .spawn(move || {
            server_rt.block_on(async {
                let _ = stopped.await;
            });
            server_rt.shutdown_timeout(Duration::from_secs(1));
        })
        .unwrap();

    client_rt.block_on(async {
        let ex = Exchange {
            cfg: client::client_config(&srv.ca),
            request,
            answer,
        };
        let sides = [
            Target { name: "webhook", addr: srv.webhook },
            Target { name: "static", addr: srv.floor },
        ];
        // Warm-up: a second of each at the rate.
        for side in &sides {
            client::paced(&mut ex.connect(side).await, &ex.request, rate(), 1.0).await;
        }

        // `ADMISSION_PROFILE=webhook|static`: only that side at saturation, for `perf record`;
        // with `:paced` at the fixed rate instead, where the cold-path costs show.
        if let Ok(profile) = std::env::var("ADMISSION_PROFILE") {
            let (only, paced) = match profile.split_once(':') {
                Some((side, "paced")) => (side.to_string(), true),
                _ => (profile.clone(), false),
            };
            let side = sides.iter().find(|t| t.name == only).expect("webhook or static");
            let mut clients = ex.connect(side).await;
            let total = secs * rounds as f64;
            if paced {
                let lat = client::paced(&mut clients, &ex.request, rate(), total).await;
                let deciles: Vec<String> = (1..10)
                    .map(|d| format!("{:.0}", client::percentile_us(&lat, d as f64 / 10.0)))
                    .collect();
                println!(
                    "admission/profile: {only} at {} req/s, deciles {} µs",
                    rate(),
                    deciles.join(" ")
                );
            } else {
                let (rate, _) = client::saturate(&mut clients, &ex.request, total).await;
                println!("admission/profile: {only} {rate:.0} req/s");
            }
            return;
        }
        let fixed_label = format!("{}rps", rate());
        let fixed = latency_rounds(&fixed_label, &sides, &ex, rounds, secs).await;

        let mut sat = [Side::default(), Side::default()];
        for r in 0..rounds {
            for k in [r % 2, 1 - r % 2] {
                let name = sides[k].name;
                let mut clients = ex.connect(&sides[k]).await;
                let (rate, busy) = client::saturate(&mut clients, &ex.request, secs.min(3.0)).await;
                println!(
                    "admission/saturation: round {} {name:<7} {rate:.0} req/s (client thread on CPU {:.0}% of the run)",
                    r + 1,
                    busy * 100.0
                );
                sat[k].rates.push(rate);
            }
        }

        on.store(true, Ordering::Relaxed);
        let before = applied.load(Ordering::Relaxed);
        let started = std::time::Instant::now();
        let churned = latency_rounds("churn", &sides, &ex, rounds, secs).await;
        on.store(false, Ordering::Relaxed);
        let per_sec = (applied.load(Ordering::Relaxed) - before) as f64 / started.elapsed().as_secs_f64();

        println!("admission: medians of {rounds} rounds at {} req/s (goals at 1000: p50 and p99 ratio ≤ 1.1)", rate());
        summary(&fixed_label, &fixed);
        let (w, f) = (sat[0].median_rate(), sat[1].median_rate());
        println!(
            "admission/saturation: webhook {w:.0} req/s  static {f:.0} req/s  ratio {:.2} (goal ≥ 0.8)",
            w / f
        );
        println!("admission/churn: {per_sec:.0} index updates/s through the watch driver (goal: p99 ratio ≤ 1.2)");
        summary("churn", &churned);
        println!(
            "admission/churn: webhook p99 under churn / static p99 without: {:.2}",
            churned[0].median(1) / fixed[1].median(1)
        );
    });
    drop(srv);
    let _ = stop.send(());
    driver.join().expect("the server runtime thread");
}
