//! Admission over real TLS: the envelope on a no-op route, then `/mutate-v1-pod` with a large
//! index; latency at 1,000 req/s, then peak rate with keep-alive.

use aws_load_balancer_controller::certs::tls;
use aws_load_balancer_controller::config::TlsMinVersion;
use aws_load_balancer_controller::metrics::{new_registry, WebhookMetrics};
use aws_load_balancer_controller::webhook::pod_index::{BindingEntry, PodGateIndex};
use aws_load_balancer_controller::webhook::pod_readiness::{self, PodReadinessGateInjector};
use aws_load_balancer_controller::webhook::{
    self, server, AdmissionRequest, Decision, Handler, Limits,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Noop;

#[async_trait::async_trait]
impl Handler for Noop {
    fn mutating(&self) -> bool {
        false
    }
    async fn admit(&self, _: &AdmissionRequest) -> Decision {
        Decision::Allow
    }
}

const PATH: &str = "/validate-noop";

/// A pod AdmissionReview for `path`, as raw HTTP/1.1 bytes.
fn request_bytes(path: &str, namespace: &str, app: &str) -> Vec<u8> {
    let body = serde_json::to_vec(&serde_json::json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "bench", "operation": "CREATE", "namespace": namespace,
            "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": app}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    }))
    .unwrap();
    let mut req = format!("POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    req.extend_from_slice(&body);
    req
}

async fn start(
    routes: Vec<(&'static str, Arc<dyn Handler>)>,
) -> (SocketAddr, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = webhook_certs::ServingSpec::new("bench", "default");
    spec.extra_sans = vec!["localhost".into()];
    let bundle = webhook_certs::generate(&spec, 30).unwrap();
    std::fs::write(dir.path().join("tls.crt"), &bundle.cert_pem).unwrap();
    std::fs::write(dir.path().join("tls.key"), &bundle.key_pem).unwrap();
    let (cfg, _) = tls::server_config(
        dir.path().join("tls.crt"),
        dir.path().join("tls.key"),
        TlsMinVersion::Tls13,
    )
    .unwrap();
    let metrics = WebhookMetrics::register(&mut new_registry());
    let limits = Limits {
        max_body_bytes: 3 << 20,
        body_timeout: Duration::from_secs(10),
        ..Limits::default()
    };
    let router = webhook::router(routes, metrics, limits);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server::serve_tls(
        listener,
        cfg,
        router,
        Default::default(),
        Default::default(),
    ));
    (addr, bundle.ca.cert_pem, dir)
}

type Conn = tokio_rustls::client::TlsStream<TcpStream>;

async fn connect(addr: SocketAddr, ca: &str) -> Conn {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca.as_bytes()).unwrap())
        .unwrap();
    let cfg = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    tokio_rustls::TlsConnector::from(Arc::new(cfg))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap()
}

/// Sends one request on a keep-alive connection and reads the whole response.
async fn roundtrip(conn: &mut Conn, req: &[u8], buf: &mut Vec<u8>) {
    conn.write_all(req).await.unwrap();
    buf.clear();
    let mut chunk = [0u8; 4096];
    loop {
        let n = conn.read(&mut chunk).await.unwrap();
        assert!(n > 0, "server closed the connection");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = std::str::from_utf8(&buf[..end]).unwrap();
            assert!(head.starts_with("HTTP/1.1 200"), "{head}");
            let len: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap();
            while buf.len() < end + 4 + len {
                let n = conn.read(&mut chunk).await.unwrap();
                buf.extend_from_slice(&chunk[..n]);
            }
            return;
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn fixed_rate(
    addr: SocketAddr,
    ca: &str,
    req: &[u8],
    rate: u32,
    secs: u64,
    conns: u32,
) -> Vec<Duration> {
    let per_conn = Duration::from_secs_f64(conns as f64 / rate as f64);
    let mut tasks = Vec::new();
    for _ in 0..conns {
        let (ca, req) = (ca.to_string(), req.to_vec());
        tasks.push(tokio::spawn(async move {
            let mut conn = connect(addr, &ca).await;
            let mut buf = Vec::new();
            let mut lat = Vec::new();
            let mut tick = tokio::time::interval(per_conn);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
            let end = Instant::now() + Duration::from_secs(secs);
            while Instant::now() < end {
                // Latency from the moment the request is written (tokio's 1 ms timer granularity
                // would otherwise be counted as server latency); each connection is far from
                // saturated at this rate, so no queueing hides behind this.
                tick.tick().await;
                let sent = Instant::now();
                roundtrip(&mut conn, &req, &mut buf).await;
                lat.push(sent.elapsed());
            }
            lat
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort();
    all
}

async fn max_rate(addr: SocketAddr, ca: &str, req: &[u8], secs: u64, conns: u32) -> f64 {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..conns {
        let (ca, req) = (ca.to_string(), req.to_vec());
        tasks.push(tokio::spawn(async move {
            let mut conn = connect(addr, &ca).await;
            let mut buf = Vec::new();
            let mut n = 0u64;
            let end = Instant::now() + Duration::from_secs(secs);
            while Instant::now() < end {
                roundtrip(&mut conn, &req, &mut buf).await;
                n += 1;
            }
            n
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    total as f64 / start.elapsed().as_secs_f64()
}

async fn report(name: &str, addr: SocketAddr, ca: &str, req: &[u8]) {
    fixed_rate(addr, ca, req, 200, 1, 4).await; // warm-up
    let lat = fixed_rate(addr, ca, req, 1000, 10, 8).await;
    println!(
        "webhook/{name}: {} requests at 1000 req/s over 8 keep-alive TLS 1.3 connections: p50 {:?} p99 {:?} max {:?}",
        lat.len(),
        percentile(&lat, 0.50),
        percentile(&lat, 0.99),
        lat.last().unwrap()
    );
    for conns in [4, 16, 64] {
        let rate = max_rate(addr, ca, req, 5, conns).await;
        println!("webhook/{name}: peak {rate:.0} req/s with {conns} keep-alive connections (client and server share the 2 cores)");
    }
}

/// 1,000 ip bindings and 5,000 Services over 100 namespaces; the pod matches one Service.
fn big_index() -> PodGateIndex {
    let idx = PodGateIndex::default();
    let mut bindings = Vec::new();
    let mut services = Vec::new();
    for ns in 0..100 {
        let ns_name = format!("ns-{ns}");
        for s in 0..50 {
            let selector = [("app".to_string(), format!("app-{s}"))].into();
            services.push((ns_name.clone(), format!("svc-{s}"), selector));
        }
        for b in 0..10 {
            let entry = BindingEntry {
                target_type: Some("ip".into()),
                service: format!("svc-{}", b * 5),
            };
            bindings.push((ns_name.clone(), format!("tgb-{b}"), entry));
        }
    }
    idx.reset_bindings(bindings);
    idx.reset_services(services);
    idx
}

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (addr, ca, _dir) = start(vec![(PATH, Arc::new(Noop) as Arc<dyn Handler>)]).await;
        report(
            "noop-envelope",
            addr,
            &ca,
            &request_bytes(PATH, "default", "web"),
        )
        .await;

        let index = big_index();
        let (b, s) = index.sizes();
        let pod = PodReadinessGateInjector {
            enabled: true,
            index,
            sync_wait: Duration::ZERO,
        };
        let (addr, ca, _dir2) = start(vec![(
            pod_readiness::PATH,
            Arc::new(pod) as Arc<dyn Handler>,
        )])
        .await;
        println!("webhook/mutate-v1-pod: index holds {b} TargetGroupBindings and {s} Services");
        report(
            "mutate-v1-pod",
            addr,
            &ca,
            &request_bytes(pod_readiness::PATH, "ns-42", "app-15"),
        )
        .await;
    });
}
