//! Admission envelope on a no-op route over real TLS: latency at a fixed rate, then peak rate.

use aws_load_balancer_controller::config::TlsMinVersion;
use aws_load_balancer_controller::metrics::{new_registry, WebhookMetrics};
use aws_load_balancer_controller::webhook::{
    self, server, tls, AdmissionRequest, Decision, Handler, Limits,
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

fn request_bytes() -> Vec<u8> {
    let body = serde_json::to_vec(&serde_json::json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "bench", "operation": "CREATE", "namespace": "default",
            "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    }))
    .unwrap();
    let mut req = format!("POST {PATH} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    req.extend_from_slice(&body);
    req
}

async fn start() -> (SocketAddr, String, tempfile::TempDir) {
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
    };
    let router = webhook::router(
        vec![(PATH, Arc::new(Noop) as Arc<dyn Handler>)],
        metrics,
        limits,
    );
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

async fn fixed_rate(addr: SocketAddr, ca: &str, rate: u32, secs: u64, conns: u32) -> Vec<Duration> {
    let per_conn = Duration::from_secs_f64(conns as f64 / rate as f64);
    let mut tasks = Vec::new();
    for _ in 0..conns {
        let ca = ca.to_string();
        tasks.push(tokio::spawn(async move {
            let mut conn = connect(addr, &ca).await;
            let req = request_bytes();
            let mut buf = Vec::new();
            let mut lat = Vec::new();
            let mut tick = tokio::time::interval(per_conn);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
            let end = Instant::now() + Duration::from_secs(secs);
            while Instant::now() < end {
                // Latency counts from the scheduled send time, so queueing delay is not hidden.
                let scheduled = tick.tick().await;
                roundtrip(&mut conn, &req, &mut buf).await;
                lat.push(scheduled.elapsed());
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

async fn max_rate(addr: SocketAddr, ca: &str, secs: u64, conns: u32) -> f64 {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..conns {
        let ca = ca.to_string();
        tasks.push(tokio::spawn(async move {
            let mut conn = connect(addr, &ca).await;
            let req = request_bytes();
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

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (addr, ca, _dir) = start().await;
        fixed_rate(addr, &ca, 200, 1, 4).await; // warm-up
        let lat = fixed_rate(addr, &ca, 1000, 10, 8).await;
        println!(
            "webhook/noop-envelope: {} requests at 1000 req/s over 8 keep-alive TLS 1.3 connections: p50 {:?} p99 {:?} max {:?}",
            lat.len(),
            percentile(&lat, 0.50),
            percentile(&lat, 0.99),
            lat.last().unwrap()
        );
        for conns in [4, 16, 64] {
            let rate = max_rate(addr, &ca, 5, conns).await;
            println!("webhook/noop-envelope: peak {rate:.0} req/s with {conns} keep-alive connections (client and server share the 2 cores)");
        }
    });
}
