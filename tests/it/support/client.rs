//! A deliberately small HTTPS/1.1 client over tokio-rustls, so tests control every byte and the
//! TLS versions offered (a high-level client would hide exactly what we want to test).

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// A parsed HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
}

/// Client TLS config trusting the given CA PEMs, offering the given versions, never resuming.
pub fn tls_config(
    ca_pems: &[&str],
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for pem in ca_pems {
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            roots.add(cert.unwrap()).unwrap();
        }
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    // Full handshakes every time: a resumed session would not show which certificate is served.
    cfg.resumption = rustls::client::Resumption::disabled();
    Arc::new(cfg)
}

/// Connects and completes the TLS handshake.
pub async fn connect(
    addr: SocketAddr,
    cfg: Arc<rustls::ClientConfig>,
) -> std::io::Result<TlsStream<TcpStream>> {
    connect_from(None, addr, cfg).await
}

/// [`connect`] from a chosen loopback address (`127.0.0.2`, ...), so a test can play several
/// peers on one machine.
pub async fn connect_from(
    from: Option<std::net::IpAddr>,
    addr: SocketAddr,
    cfg: Arc<rustls::ClientConfig>,
) -> std::io::Result<TlsStream<TcpStream>> {
    let tcp = match from {
        None => TcpStream::connect(addr).await?,
        Some(ip) => {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.bind(SocketAddr::new(ip, 0))?;
            socket.connect(addr).await?
        }
    };
    // As Go's net/http (the API server's client) does: no Nagle delay between head and body.
    tcp.set_nodelay(true)?;
    let name = ServerName::try_from("localhost").unwrap();
    TlsConnector::from(cfg).connect(name, tcp).await
}

/// Reads one HTTP/1.1 response (Content-Length or close-delimited body).
pub async fn read_response<S: tokio::io::AsyncRead + Unpin>(
    stream: &mut S,
) -> std::io::Result<Response> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            let status: u16 = head
                .split_whitespace()
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let len = head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())
                    .flatten()
            });
            let content_type = head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-type")
                    .then(|| v.trim().to_string())
            });
            let body_start = end + 4;
            match len {
                Some(len) => {
                    while buf.len() < body_start + len {
                        let n = stream.read(&mut chunk).await?;
                        if n == 0 {
                            return Err(std::io::Error::new(
                                std::io::ErrorKind::UnexpectedEof,
                                "short body",
                            ));
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                    return Ok(Response {
                        status,
                        content_type,
                        body: buf[body_start..body_start + len].to_vec(),
                    });
                }
                None => {
                    loop {
                        let n = stream.read(&mut chunk).await?;
                        if n == 0 {
                            break;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                    return Ok(Response {
                        status,
                        content_type,
                        body: buf[body_start..].to_vec(),
                    });
                }
            }
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed before a response",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Writes a POST request's head (and, optionally, its body).
pub async fn write_post<S: tokio::io::AsyncWrite + Unpin>(
    stream: &mut S,
    path: &str,
    body: &[u8],
    content_length: usize,
) -> std::io::Result<()> {
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {content_length}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.flush().await
}

/// One POST on a fresh connection.
pub async fn post(
    addr: SocketAddr,
    cfg: Arc<rustls::ClientConfig>,
    path: &str,
    body: &[u8],
) -> std::io::Result<Response> {
    let mut stream = connect(addr, cfg).await?;
    write_post(&mut stream, path, body, body.len()).await?;
    read_response(&mut stream).await
}

/// One plain-HTTP GET (metrics and probes).
pub async fn get_plain(addr: SocketAddr, path: &str) -> std::io::Result<Response> {
    get_plain_accept(addr, path, None).await
}

/// [`get_plain`] with an `Accept` header (a scrape's content negotiation).
pub async fn get_plain_accept(
    addr: SocketAddr,
    path: &str,
    accept: Option<&str>,
) -> std::io::Result<Response> {
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    let mut tcp = TcpStream::connect(addr).await?;
    tcp.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{accept}Connection: close\r\n\r\n")
            .as_bytes(),
    )
    .await?;
    read_response(&mut tcp).await
}
