//! The plain-HTTP servers (metrics, probes) with the webhook server's protections, sized for
//! their tiny requests: a cap on open connections, a header timeout that also closes idle
//! keep-alive connections, and a small read buffer, so a flood of idle sockets or of huge
//! unfinished heads can neither hold them open nor grow the process (and an OOM kill would take
//! the webhooks and the leader with it).

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// Limits of one plain server.
#[derive(Clone, Copy, Debug)]
pub struct PlainLimits {
    /// Open connections at most; at the cap new ones wait in the listen backlog until one ends
    /// (at most a header timeout away), costing no memory here.
    pub max_connections: usize,
    /// Time to send a request's head, counted from when the connection waits for one: an idle
    /// keep-alive connection is closed after it too.
    pub header_timeout: Duration,
    /// Read buffer per connection (hyper's floor is 8 KiB); a longer head is refused.
    pub max_buf: usize,
}

impl Default for PlainLimits {
    fn default() -> Self {
        PlainLimits {
            max_connections: 256,
            header_timeout: Duration::from_secs(5),
            max_buf: 16 * 1024,
        }
    }
}

/// Serves `router` on `listener` until `shutdown` fires (connections then finish their request).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
    limits: PlainLimits,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    loop {
        let slot = tokio::select! {
            _ = shutdown.cancelled() => break,
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
        };
        let (tcp, peer) = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of files or similar: back off instead of spinning on the error.
                    tracing::debug!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let (router, stop) = (router.clone(), shutdown.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                router.clone().oneshot(request.map(axum::body::Body::new))
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .max_buf_size(limits.max_buf.max(8192))
                .keep_alive(true)
                .serve_connection(TokioIo::new(tcp), service);
            let mut conn = std::pin::pin!(conn);
            let result = tokio::select! {
                result = conn.as_mut() => result,
                _ = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(error) = result {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn start(limits: PlainLimits) -> (std::net::SocketAddr, CancellationToken) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let router = Router::new().route("/healthz", axum::routing::get(|| async { "ok" }));
        let token = CancellationToken::new();
        tokio::spawn(serve(listener, router, token.clone(), limits));
        (addr, token)
    }

    /// Reads until the peer closes (or `limit` passes); returns what came and whether it closed.
    async fn read_to_close(s: &mut tokio::net::TcpStream, limit: Duration) -> (String, bool) {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&out).into(), true),
                Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
                Err(_) => return (String::from_utf8_lossy(&out).into(), false),
            }
        }
    }

    async fn get(addr: std::net::SocketAddr) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        read_to_close(&mut s, Duration::from_secs(5)).await.0
    }

    #[tokio::test]
    async fn idle_and_unfinished_connections_are_closed_after_the_header_timeout() {
        let limits = PlainLimits {
            header_timeout: Duration::from_millis(300),
            ..Default::default()
        };
        let (addr, token) = start(limits).await;
        let mut idle = tokio::net::TcpStream::connect(addr).await.unwrap();
        let mut partial = tokio::net::TcpStream::connect(addr).await.unwrap();
        partial
            .write_all(b"GET /healthz HTTP/1.1\r\nx-a: ")
            .await
            .unwrap();
        for s in [&mut idle, &mut partial] {
            let (_, closed) = read_to_close(s, Duration::from_secs(3)).await;
            assert!(closed, "closed after the header timeout");
        }
        assert!(get(addr).await.ends_with("ok"));
        token.cancel();
    }

    #[tokio::test]
    async fn a_head_longer_than_the_buffer_is_refused() {
        let (addr, token) = start(PlainLimits::default()).await;
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let long = format!(
            "GET /healthz HTTP/1.1\r\nx-big: {}\r\n\r\n",
            "a".repeat(64 * 1024)
        );
        // The server may close while this is still being written.
        let _ = s.write_all(long.as_bytes()).await;
        let (answer, closed) = read_to_close(&mut s, Duration::from_secs(3)).await;
        assert!(closed, "closed");
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 431"),
            "{answer}"
        );
        token.cancel();
    }

    #[tokio::test]
    async fn at_the_cap_a_new_connection_waits_for_a_slot_and_is_then_served() {
        let limits = PlainLimits {
            max_connections: 2,
            header_timeout: Duration::from_millis(500),
            ..Default::default()
        };
        let (addr, token) = start(limits).await;
        let _a = tokio::net::TcpStream::connect(addr).await.unwrap();
        let _b = tokio::net::TcpStream::connect(addr).await.unwrap();
        // Both slots are held by idle sockets; the probe is served once they time out.
        let started = std::time::Instant::now();
        assert!(get(addr).await.ends_with("ok"));
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "the third connection waited for a slot"
        );
        token.cancel();
    }
}
