//! The HTTPS client that posts AdmissionReviews to webhooks: TLS verified against the
//! webhook's `caBundle` only, with the server name the real apiserver would use.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

fn tls_config(ca_pem: &[u8]) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pemfile::certs(&mut &ca_pem[..]) {
        let cert = cert.map_err(|e| format!("caBundle: {e}"))?;
        roots.add(cert).map_err(|e| format!("caBundle: {e}"))?;
    }
    // The provider is given explicitly so nothing depends on a process-wide default.
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(cfg)
}

/// POSTs `body` to `https://<server_name><path>` at `addr` and returns the decoded JSON reply.
pub async fn post_json(
    addr: SocketAddr,
    server_name: &str,
    ca_pem: &[u8],
    path_and_query: &str,
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Value, String> {
    let call = async {
        let cfg = tls_config(ca_pem)?;
        let name = ServerName::try_from(server_name.to_string())
            .map_err(|e| format!("invalid server name: {e}"))?;
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("dial tcp {addr}: {e}"))?;
        let tls = tokio_rustls::TlsConnector::from(Arc::new(cfg))
            .connect(name, tcp)
            .await
            .map_err(|e| format!("tls: {e}"))?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            // The connection ends with the request; its error, if any, shows up on the request.
            let _ = conn.await;
        });
        let req = http::Request::post(path_and_query)
            .header(http::header::HOST, server_name)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
        let status = resp.status();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        if !status.is_success() {
            return Err(format!(
                "the server responded with status code {}",
                status.as_u16()
            ));
        }
        serde_json::from_slice::<Value>(&bytes).map_err(|e| format!("decoding the response: {e}"))
    };
    match tokio::time::timeout(timeout, call).await {
        Ok(r) => r,
        Err(_) => Err("context deadline exceeded".into()),
    }
}
