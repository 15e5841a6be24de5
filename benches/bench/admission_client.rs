//! The load client and the floor of the admission benchmark: a lean keep-alive TLS 1.3 client
//! (one thread, fixed-rate or closed-loop, latency from write to the last response byte) and a
//! static endpoint on the same TLS stack (rustls 1.3, hyper HTTP/1.1, the same certificate) and
//! the same kind of server threads answering a fixed 200 JSON body.

use aws_load_balancer_controller::certs::tls;
use aws_load_balancer_controller::webhook::threads::ServerThreads;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

type Conn = tokio_rustls::client::TlsStream<TcpStream>;

/// hyper's HTTP/1.1 with keep-alive and the header timeout our server sets (nginx has one too),
/// answering `body` to every request.
async fn serve_static_connection(stream: tokio_rustls::server::TlsStream<TcpStream>, body: Bytes) {
    // `ADMISSION_STATIC_SPIN_NS`: the floor spends that long on the CPU before answering, to
    // see what a given amount of extra work per request does to its latency on this machine.
    let spin = std::env::var("ADMISSION_STATIC_SPIN_NS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_nanos);
    let service = hyper::service::service_fn(move |_: hyper::Request<Incoming>| {
        if let Some(spin) = spin {
            let start = std::time::Instant::now();
            while start.elapsed() < spin {
                std::hint::spin_loop();
            }
        }
        let response = hyper::Response::builder()
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(body.clone()))
            .expect("a static response");
        async move { Ok::<_, std::convert::Infallible>(response) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(10))
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// The floor as the webhook is served: on `threads` [`ServerThreads`], accept loop on the first,
/// each connection on one of them in turn; they stop when the returned value is dropped.
pub fn serve_static_on_threads(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    body: Bytes,
    threads: usize,
) -> Arc<ServerThreads> {
    let threads = Arc::new(ServerThreads::start("static", threads).expect("server threads"));
    let listener = listener.into_std().expect("a listening socket");
    let on = Arc::downgrade(&threads);
    threads.spawn(async move {
        let listener = TcpListener::from_std(listener).expect("the socket");
        let acceptor = tokio_rustls::TlsAcceptor::from(tls);
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            let _ = tcp.set_nodelay(true);
            let (Some(on), Ok(tcp)) = (on.upgrade(), tcp.into_std()) else {
                return;
            };
            let (acceptor, body) = (acceptor.clone(), body.clone());
            on.spawn(async move {
                let tcp = TcpStream::from_std(tcp).expect("the connection");
                if let Ok(stream) = acceptor.accept(tcp).await {
                    serve_static_connection(stream, body).await;
                }
            });
        }
    });
    threads
}

/// A client config trusting the bench CA only; TLS 1.3.
pub fn client_config(ca_pem: &str) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).expect("CA PEM"))
        .expect("CA certificate");
    let cfg = rustls::ClientConfig::builder_with_provider(tls::provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(cfg)
}

/// One keep-alive connection with its read buffer.
pub struct Client {
    conn: Conn,
    buf: Vec<u8>,
}

impl Client {
    pub async fn connect(addr: SocketAddr, cfg: Arc<rustls::ClientConfig>) -> Client {
        let tcp = TcpStream::connect(addr).await.expect("connect");
        tcp.set_nodelay(true).expect("nodelay");
        let conn = tokio_rustls::TlsConnector::from(cfg)
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .expect("TLS handshake");
        Client {
            conn,
            buf: Vec::with_capacity(8192),
        }
    }

    /// Sends `request` and reads the whole 200 response; returns its body.
    pub async fn roundtrip(&mut self, request: &[u8]) -> &[u8] {
        self.conn.write_all(request).await.expect("write");
        self.buf.clear();
        let (head, len) = loop {
            let n = self.conn.read_buf(&mut self.buf).await.expect("read");
            assert!(n > 0, "server closed the connection");
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break (end + 4, content_length(&self.buf[..end]));
            }
        };
        assert!(self.buf.starts_with(b"HTTP/1.1 200"), "not a 200 answer");
        while self.buf.len() < head + len {
            let n = self.conn.read_buf(&mut self.buf).await.expect("read");
            assert!(n > 0, "server closed the connection");
        }
        &self.buf[head..head + len]
    }
}

fn content_length(head: &[u8]) -> usize {
    head.split(|&b| b == b'\n')
        .find_map(|line| {
            let name = b"content-length:";
            (line.len() > name.len() && line[..name.len()].eq_ignore_ascii_case(name)).then(|| {
                std::str::from_utf8(&line[name.len()..])
                    .ok()
                    .and_then(|v| v.trim().parse().ok())
                    .expect("a numeric Content-Length")
            })
        })
        .expect("a Content-Length")
}

/// `conns` connections together sending `rate` requests per second, evenly spaced (connection
/// `i` starts `i / rate` after the first), for `secs`; latencies in nanoseconds, sorted.
pub async fn paced(clients: &mut [Client], request: &[u8], rate: u32, secs: f64) -> Vec<u64> {
    let step = Duration::from_secs_f64(1.0 / rate as f64);
    let period = step * clients.len() as u32;
    let start = Instant::now() + Duration::from_millis(5);
    let end = start + Duration::from_secs_f64(secs);
    let runs = clients
        .iter_mut()
        .enumerate()
        .map(|(i, client)| async move {
            let mut tick = tokio::time::interval_at(start + step * i as u32, period);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            let mut lat = Vec::with_capacity((secs * rate as f64) as usize);
            loop {
                let at = tick.tick().await;
                if at >= end {
                    break lat;
                }
                // From the write, as hey measures: the timer's wake-up lag is the client's, not the
                // server's.
                let sent = std::time::Instant::now();
                client.roundtrip(request).await;
                lat.push(sent.elapsed().as_nanos() as u64);
            }
        });
    let mut all: Vec<u64> = futures::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect();
    all.sort_unstable();
    all
}

/// Closed loop: every connection sends its next request as soon as the answer is in, for `secs`.
/// Returns requests per second and the share of the run this client thread was on a CPU.
pub async fn saturate(clients: &mut [Client], request: &[u8], secs: f64) -> (f64, f64) {
    let cpu0 = thread_cpu_ns();
    let start = std::time::Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let runs = clients.iter_mut().map(|client| async move {
        let mut n = 0u64;
        while std::time::Instant::now() < end {
            client.roundtrip(request).await;
            n += 1;
        }
        n
    });
    let total: u64 = futures::future::join_all(runs).await.into_iter().sum();
    let wall = start.elapsed();
    let busy = (thread_cpu_ns() - cpu0) as f64 / wall.as_nanos() as f64;
    (total as f64 / wall.as_secs_f64(), busy)
}

/// CPU time of the calling thread (`/proc/thread-self/schedstat`, first field).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Nearest-rank percentile of sorted nanoseconds, in microseconds.
pub fn percentile_us(sorted: &[u64], p: f64) -> f64 {
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1000.0
}
