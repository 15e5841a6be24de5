//! The TLS accept loop: per-connection handshake and header timeouts, a cap on open connections,
//! graceful drain on shutdown.
//!
//! Written on hyper directly (rather than `axum::serve`) because we need the TLS acceptor in the
//! loop and a drain that lets in-flight admission calls finish when SIGTERM arrives.

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rustls::ServerConfig;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

/// Connection-level limits.
#[derive(Clone, Copy, Debug)]
pub struct ConnLimits {
    pub handshake_timeout: Duration,
    pub header_timeout: Duration,
    /// How long in-flight requests may take to finish after shutdown starts.
    pub drain_timeout: Duration,
    /// Open connections at most (`--webhook-max-connections`); further clients wait in the
    /// listen backlog until one closes, so a flood of sockets cannot exhaust memory or files.
    pub max_connections: usize,
}

/// `--webhook-max-connections` default: room for every API server's keep-alive pool many times
/// over, while 4096 idle TLS connections stay within a few tens of MiB.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits {
            handshake_timeout: Duration::from_secs(10),
            header_timeout: Duration::from_secs(10),
            drain_timeout: Duration::from_secs(10),
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// Serves `router` over TLS on `listener` until `shutdown` fires, then drains.
pub async fn serve_tls(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    router: Router,
    limits: ConnLimits,
    shutdown: CancellationToken,
) {
    let acceptor = TlsAcceptor::from(tls);
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut warned_full: Option<std::time::Instant> = None;
    loop {
        // A free slot first, then accept: at the cap the kernel's backlog holds new clients.
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                if warned_full.is_none_or(|at| at.elapsed() > Duration::from_secs(60)) {
                    tracing::warn!(
                        max = limits.max_connections,
                        "webhook connection limit reached; new connections wait (--webhook-max-connections)"
                    );
                    warned_full = Some(std::time::Instant::now());
                }
                tokio::select! {
                    _ = shutdown.cancelled() => break,
                    slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
                }
            }
        };
        let (tcp, peer) = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    // EMFILE and friends: back off briefly instead of spinning.
                    tracing::warn!(%error, "webhook accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let router = router.clone();
        // Taken before the handshake so that the drain also waits for connections still
        // handshaking; a shutdown seen by then closes them right after their current request.
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let _slot = slot;
            let stream =
                match tokio::time::timeout(limits.handshake_timeout, acceptor.accept(tcp)).await {
                    Ok(Ok(stream)) => stream,
                    Ok(Err(error)) => return tracing::debug!(%peer, %error, "TLS handshake failed"),
                    Err(_) => return tracing::debug!(%peer, "TLS handshake timed out"),
                };
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), TowerToHyperService::new(router));
            if let Err(error) = watcher.watch(conn).await {
                tracing::debug!(%peer, %error, "webhook connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.drain_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("webhook server drain timed out; closing remaining connections");
    }
}

/// Serves a plain-HTTP router (metrics, probes) until `shutdown` fires.
pub async fn serve_plain(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}
