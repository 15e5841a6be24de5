//! The TLS accept loop: per-connection handshake and header timeouts, a cap on open connections,
//! graceful drain on shutdown; in the binary on threads of its own ([`serve_tls_on_threads`]).
//!
//! Written on hyper directly (rather than `axum::serve`) because we need the TLS acceptor in the
//! loop and a drain that lets in-flight admission calls finish when SIGTERM arrives.

use super::Admission;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rustls::ServerConfig;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::threads::ServerThreads;

/// Connection-level limits.
#[derive(Clone, Copy, Debug)]
pub struct ConnLimits {
    pub handshake_timeout: Duration,
    pub header_timeout: Duration,
    /// How long in-flight requests may take to finish after shutdown starts.
    pub drain_timeout: Duration,
    /// Open connections at most (`--webhook-max-connections`): at the cap the idlest connection
    /// is closed for a new one, so a flood of sockets cannot exhaust memory or files.
    pub max_connections: usize,
}

/// How long a connection must have been idle (since accept, or since its last request) before
/// it may be closed to make room: a client just connecting, or between two quick requests, is
/// never cut.
pub const MIN_IDLE: Duration = Duration::from_secs(1);

/// Read buffer per connection. An API server's admission head is well under 8 KiB; hyper's
/// default (~400 KiB) let each connection still sending its head hold that much, uncounted
/// (4,096 such connections: ~1.6 GiB). A longer head is refused with 431; bodies are read
/// through it in pieces, whatever their size.
pub const MAX_BUF: usize = 64 * 1024;

/// `--webhook-max-connections` default (defined with the flags).
pub use crate::args::DEFAULT_MAX_CONNECTIONS;

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

/// The open connections, for choosing one to close when the cap is reached.
#[derive(Default)]
struct Registry {
    next: AtomicU64,
    conns: Mutex<BTreeMap<u64, Entry>>,
}

struct Entry {
    /// Requests being served on the connection right now.
    busy: Arc<AtomicUsize>,
    /// Milliseconds (since `base`) at which the connection last became idle.
    idle_since: Arc<AtomicU64>,
    stop: CancellationToken,
    /// Cancelled on eviction and on shutdown (a child of the server's token), so a served
    /// connection waits on one token: see [`serve`].
    closing: CancellationToken,
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Entry>> {
        self.conns.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Asks the connection idle for longest to close; `false` when none has been idle for
    /// [`MIN_IDLE`] (`now` is milliseconds since the server's base instant).
    fn evict_idlest(&self, now: u64) -> bool {
        let conns = self.lock();
        let grace = MIN_IDLE.as_millis() as u64;
        let idlest = conns
            .iter()
            .filter(|(_, e)| e.busy.load(Ordering::SeqCst) == 0 && !e.stop.is_cancelled())
            .map(|(id, e)| (id, e, e.idle_since.load(Ordering::SeqCst)))
            .filter(|(_, _, since)| now.saturating_sub(*since) >= grace)
            .min_by_key(|(_, _, since)| *since)
            .map(|(id, e, _)| (id, e));
        match idlest {
            Some((id, e)) => {
                tracing::debug!(
                    connection = id,
                    open = conns.len(),
                    "webhook connection limit reached; closing the idlest connection"
                );
                e.stop.cancel();
                e.closing.cancel();
                true
            }
            None => false,
        }
    }
}

/// Removes a connection from the registry when its task ends, however it ends.
struct Registered<'a>(&'a Registry, u64);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.0.lock().remove(&self.1);
    }
}

/// An accepted socket, still on the accepting runtime or handed over bare to another.
enum Placed {
    Here(tokio::net::TcpStream),
    Moved(std::net::TcpStream),
}

/// Counts a request as in flight on its connection while alive.
struct Busy {
    busy: Arc<AtomicUsize>,
    idle_since: Arc<AtomicU64>,
    base: Instant,
}

impl Drop for Busy {
    fn drop(&mut self) {
        if self.busy.fetch_sub(1, Ordering::SeqCst) == 1 {
            let now = self.base.elapsed().as_millis() as u64;
            self.idle_since.store(now, Ordering::SeqCst);
        }
    }
}

/// [`serve_tls`] as the binary runs it: on `threads` [`ServerThreads`] of its own (the binary: one
/// per CPU), the accept loop on the first, each connection on one of them in turn (see
/// [`super::threads`]).
///
/// Returns once the threads run; the future resolves when the server has drained after
/// `shutdown` and its threads are gone.
pub fn serve_tls_on_threads(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    router: Admission,
    limits: ConnLimits,
    shutdown: CancellationToken,
    threads: usize,
) -> std::io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    let threads = Arc::new(ServerThreads::start("webhook", threads)?);
    // A tokio socket belongs to the runtime that registered it: hand the bare socket over.
    let listener = listener.into_std()?;
    let (done, finished) = tokio::sync::oneshot::channel::<()>();
    let on = threads.clone();
    threads.spawn(async move {
        match TcpListener::from_std(listener) {
            Ok(listener) => serve(listener, tls, router, limits, shutdown, Some(&on)).await,
            Err(error) => tracing::error!(%error, "webhook server cannot take its socket"),
        }
        let _ = done.send(());
    });
    Ok(async move {
        if finished.await.is_err() {
            tracing::error!("the webhook server's accept loop stopped abnormally");
        }
        threads.stop().await;
    })
}

/// Serves `router` (the admission routes, see [`Admission`]) over TLS on `listener` until `shutdown` fires, then drains.
///
/// At `max_connections` the connection idle for longest (between requests, or not yet through
/// its handshake or headers, for at least [`MIN_IDLE`]) is closed to make room for a new client,
/// as nginx reuses idle connections; only when none is idle do new clients wait. So a
/// flood of idle sockets can neither exhaust memory nor lock out the API server.
pub async fn serve_tls(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    router: Admission,
    limits: ConnLimits,
    shutdown: CancellationToken,
) {
    serve(listener, tls, router, limits, shutdown, None).await
}

/// [`serve_tls`] with each connection on the runtime it is spawned from (`threads: None`) or on
/// one of `threads`.
async fn serve(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    router: Admission,
    limits: ConnLimits,
    shutdown: CancellationToken,
    threads: Option<&ServerThreads>,
) {
    let acceptor = TlsAcceptor::from(tls);
    let max = limits.max_connections.clamp(1, u32::MAX as usize >> 1);
    let slots = Arc::new(Semaphore::new(max));
    let registry = Arc::new(Registry::default());
    let base = Instant::now();
    let mut warned_full: Option<Instant> = None;
    loop {
        let free = slots.clone().try_acquire_owned().ok();
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
        // At the cap, a client has arrived: make room by closing the idlest connection, or wait
        // for one to finish when all are busy (holding just this one socket meanwhile).
        let slot = match free {
            Some(slot) => slot,
            None => {
                let waited = loop {
                    let evicted = registry.evict_idlest(base.elapsed().as_millis() as u64);
                    if !evicted
                        && warned_full.is_none_or(|at| at.elapsed() > Duration::from_secs(60))
                    {
                        tracing::warn!(
                            max,
                            "webhook connection limit reached with no idle connection; new connections wait (--webhook-max-connections)"
                        );
                        warned_full = Some(Instant::now());
                    }
                    // Without an eviction, look again shortly: a connection may turn idle.
                    tokio::select! {
                        _ = shutdown.cancelled() => break None,
                        slot = slots.clone().acquire_owned() => {
                            break Some(slot.expect("the semaphore is never closed"))
                        }
                        _ = tokio::time::sleep(Duration::from_millis(250)), if !evicted => {}
                    }
                };
                match waited {
                    Some(slot) => slot,
                    None => break,
                }
            }
        };
        let _ = tcp.set_nodelay(true);
        let tcp = match threads {
            None => Placed::Here(tcp),
            // Moved over bare, registered again by the runtime that serves it.
            Some(_) => match tcp.into_std() {
                Ok(tcp) => Placed::Moved(tcp),
                Err(error) => {
                    tracing::debug!(%peer, %error, "cannot hand over a webhook connection");
                    continue;
                }
            },
        };
        let acceptor = acceptor.clone();
        let router = Arc::new(router.clone());
        // On eviction or shutdown a connection closes right after its current request (at once
        // when idle); only an eviction cuts a handshake short, so the drain still serves
        // connections that were handshaking when shutdown began.
        let stop = CancellationToken::new();
        // Eviction or shutdown; the connection task polls it on every wake-up, one token is
        // one lock there instead of two (#24).
        let closing = shutdown.child_token();
        let busy = Arc::new(AtomicUsize::new(0));
        let idle_since = Arc::new(AtomicU64::new(base.elapsed().as_millis() as u64));
        let id = registry.next.fetch_add(1, Ordering::SeqCst);
        registry.lock().insert(
            id,
            Entry {
                busy: busy.clone(),
                idle_since: idle_since.clone(),
                stop: stop.clone(),
                closing: closing.clone(),
            },
        );
        let registry = registry.clone();
        let connection = async move {
            let _slot = slot;
            let _registered = Registered(&registry, id);
            let tcp = match tcp {
                Placed::Here(tcp) => tcp,
                Placed::Moved(tcp) => match tokio::net::TcpStream::from_std(tcp) {
                    Ok(tcp) => tcp,
                    Err(error) => {
                        return tracing::debug!(%peer, %error, "cannot take over a webhook connection")
                    }
                },
            };
            let handshake = tokio::time::timeout(limits.handshake_timeout, acceptor.accept(tcp));
            let stream = tokio::select! {
                _ = stop.cancelled() => return,
                done = handshake => match done {
                    Ok(Ok(stream)) => stream,
                    Ok(Err(error)) => return tracing::debug!(%peer, %error, "TLS handshake failed"),
                    Err(_) => return tracing::debug!(%peer, "TLS handshake timed out"),
                },
            };
            let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                busy.fetch_add(1, Ordering::SeqCst);
                let guard = Busy {
                    busy: busy.clone(),
                    idle_since: idle_since.clone(),
                    base,
                };
                let router = router.clone();
                async move {
                    let _guard = guard;
                    Ok::<_, std::convert::Infallible>(router.handle(request).await)
                }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .max_buf_size(MAX_BUF)
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            // Biased: the connection first, as it is what wakes the task, and no random draw per poll.
            let result = tokio::select! {
                biased;
                result = conn.as_mut() => result,
                _ = closing.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(error) = result {
                tracing::debug!(%peer, %error, "webhook connection ended with an error");
            }
        };
        match threads {
            None => drop(tokio::spawn(connection)),
            Some(threads) => threads.spawn(connection),
        }
    }
    drop(listener);
    // Every connection task holds a slot until it ends: all slots back means drained.
    if tokio::time::timeout(limits.drain_timeout, slots.acquire_many(max as u32))
        .await
        .is_err()
    {
        tracing::warn!("webhook server drain timed out; closing remaining connections");
    }
}
