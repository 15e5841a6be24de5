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
use std::net::IpAddr;
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

/// How long a connection must have been idle (since accept, or since its last request), or its
/// request body stalled, before it may be closed to make room: a client just connecting, between
/// two quick requests or sending a body, is never cut.
pub const MIN_IDLE: Duration = Duration::from_secs(1);

/// Read buffer per connection. An API server's admission head is well under 8 KiB; hyper's
/// default (~400 KiB) let each connection still sending its head hold that much, uncounted
/// (4,096 such connections: ~1.6 GiB). A longer head is refused with 431; bodies are read
/// through it in pieces, whatever their size.
pub const MAX_BUF: usize = 64 * 1024;

/// `--webhook-max-connections` default (defined with the flags).
pub use albc_model::args::DEFAULT_MAX_CONNECTIONS;

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

/// What a connection is doing, shared by its registry entry and its requests (see
/// [`super::Caller`]). Times are milliseconds since the server's base instant.
#[derive(Debug)]
pub struct Activity {
    base: Instant,
    /// Requests being served on the connection right now.
    busy: AtomicUsize,
    /// When the connection last became idle.
    idle_since: AtomicU64,
    /// When the body being read last made progress; [`NOT_READING`] once it is read.
    body_at: AtomicU64,
}

const NOT_READING: u64 = u64::MAX;

impl Activity {
    fn new(base: Instant) -> Self {
        Activity {
            base,
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(millis(base)),
            body_at: AtomicU64::new(NOT_READING),
        }
    }

    /// A request starts: its body is awaited from now.
    fn started(&self) {
        self.busy.fetch_add(1, Ordering::SeqCst);
        self.body_at.store(millis(self.base), Ordering::SeqCst);
    }

    /// A request was answered.
    fn ended(&self) {
        self.body_at.store(NOT_READING, Ordering::SeqCst);
        if self.busy.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.idle_since.store(millis(self.base), Ordering::SeqCst);
        }
    }

    /// A piece of the request body arrived.
    pub(crate) fn body_progress(&self) {
        self.body_at.store(millis(self.base), Ordering::SeqCst);
    }

    /// The request body is read; handling it may take its time (an AWS call) without the
    /// connection counting as stalled.
    pub(crate) fn body_read(&self) {
        self.body_at.store(NOT_READING, Ordering::SeqCst);
    }

    /// How the connection may be closed for a newcomer at `now`, if at all.
    fn evictable(&self, now: u64) -> Option<Evictable> {
        let grace = MIN_IDLE.as_millis() as u64;
        if self.busy.load(Ordering::SeqCst) == 0 {
            let since = self.idle_since.load(Ordering::SeqCst);
            return (now.saturating_sub(since) >= grace).then_some(Evictable::Idle(since));
        }
        let at = self.body_at.load(Ordering::SeqCst);
        (at != NOT_READING && now.saturating_sub(at) >= grace).then_some(Evictable::Stalled(at))
    }
}

fn millis(base: Instant) -> u64 {
    base.elapsed().as_millis() as u64
}

/// Why a connection may be closed, with the time it has been so since; ordered by preference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Evictable {
    /// Its request body stopped arriving: cut. First, as no client in good standing stalls
    /// mid-body, while an API server's pooled keep-alive connections are the idle ones.
    Stalled(u64),
    /// Between requests, or still in its handshake or head, from a peer over its share of the
    /// cap: closed gracefully.
    IdleOverShare(u64),
    /// Between requests, or still in its handshake or head: closed gracefully.
    Idle(u64),
}

/// The open connections, for choosing one to close when the cap is reached.
#[derive(Default)]
struct Registry {
    next: AtomicU64,
    conns: Mutex<BTreeMap<u64, Entry>>,
}

/// A connection's place under the cap; the accept loop takes it from an evicted connection for
/// the newcomer at once, instead of waiting for the evicted one to finish closing.
type SlotCell = Arc<Mutex<Option<tokio::sync::OwnedSemaphorePermit>>>;

struct Entry {
    peer: IpAddr,
    activity: Arc<Activity>,
    slot: SlotCell,
    stop: CancellationToken,
    /// Cancelled on eviction and on shutdown (a child of the server's token), so a served
    /// connection waits on one token: see [`Connection::run`].
    closing: CancellationToken,
    /// Cancelled when the connection is cut without waiting for its request.
    cut: CancellationToken,
}

/// One peer address may keep this share of the cap when another peer needs room: beyond it,
/// its busiest connection is cut for a newcomer from a peer that holds fewer.
const PEER_SHARE_DIVISOR: usize = 4;

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Entry>> {
        self.conns.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes room for a newcomer from `peer` at the cap (`max`): closes, in this order, the
    /// connection whose request body stalled for longest, the one idle for longest (of a peer
    /// over its share first), or, when
    /// one peer holds more than its share of the cap and more than the newcomer's peer, that
    /// peer's connection with the oldest request. A newcomer whose own peer holds more than its
    /// share, when nothing can be closed, is refused (`now`: milliseconds since the server's
    /// base instant).
    fn evict_for(&self, peer: IpAddr, max: usize, now: u64) -> Room {
        let conns = self.lock();
        let live = || conns.iter().filter(|(_, e)| !e.stop.is_cancelled());
        let share = max / PEER_SHARE_DIVISOR;
        let mut per_peer: std::collections::HashMap<IpAddr, usize> = Default::default();
        for (_, e) in live() {
            *per_peer.entry(e.peer).or_default() += 1;
        }
        let over_share = |peer: &IpAddr| per_peer.get(peer).is_some_and(|n| *n > share);
        let victim = live()
            .filter_map(|(id, e)| {
                let why = match e.activity.evictable(now)? {
                    Evictable::Idle(since) if over_share(&e.peer) => {
                        Evictable::IdleOverShare(since)
                    }
                    why => why,
                };
                Some((why, *id))
            })
            .min()
            .map(|(why, id)| (id, matches!(why, Evictable::Stalled(_)), "stalled or idle"));
        let victim = match victim {
            Some(victim) => victim,
            None => {
                let mine = per_peer.get(&peer).copied().unwrap_or(0);
                if mine > share {
                    return Room::Refuse;
                }
                let Some((&heavy, &count)) = per_peer.iter().max_by_key(|(_, n)| **n) else {
                    return Room::Wait;
                };
                if heavy == peer || count <= share || count <= mine + 1 {
                    return Room::Wait;
                }
                let oldest = live()
                    .filter(|(_, e)| e.peer == heavy)
                    .min_by_key(|(_, e)| e.activity.body_at.load(Ordering::SeqCst));
                match oldest {
                    Some((id, _)) => (*id, true, "over its peer's share"),
                    None => return Room::Wait,
                }
            }
        };
        let (id, cut, why) = victim;
        let e = &conns[&id];
        tracing::debug!(
            connection = id,
            peer = %e.peer,
            open = conns.len(),
            why,
            "webhook connection limit reached; closing a connection"
        );
        e.stop.cancel();
        e.closing.cancel();
        if cut {
            e.cut.cancel();
        }
        let slot = e.slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        Room::Made(slot)
    }
}

/// Connections a peer address may end badly per second (a failed TLS handshake, a head that
/// does not parse or is too long, a body cut for stalling) before its new connections are
/// closed unserved, before their handshake; a peer whose connections end cleanly is never held
/// back, however fast it connects.
///
/// Each connection costs a TLS handshake; a peer reconnecting thousands of times a second to
/// send what is refused anyway took the CPU that admissions needed.
pub const BAD_PER_SECOND: f64 = 10.0;
/// Bad endings a peer may have at once, beyond the rate.
pub const BAD_BURST: f64 = 50.0;

/// A token bucket per peer address, drained by connections that end badly; shared by the
/// accept loop, which consults it, and the connections, which report how they ended.
///
/// A peer with a record pays for each new connection when it is accepted, and gets the token
/// back when the connection proves good (a request answered, or a clean close): charging only
/// when a connection ends let a peer that opens a thousand at once through on the tokens of
/// one second, as none of them had ended yet.
#[derive(Default)]
struct Conduct {
    buckets: Mutex<std::collections::HashMap<IpAddr, (f64, Instant)>>,
}

/// What [`Conduct::admit`] decided for a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Admit {
    /// The peer has no record: served, and charged only if the connection ends badly.
    Free,
    /// The peer has a record: served on a token it gets back if the connection proves good.
    Charged,
    /// The peer's tokens are spent: closed before the handshake.
    Refused,
}

impl Conduct {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<IpAddr, (f64, Instant)>> {
        self.buckets.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The refilled bucket of `peer` at `now`.
    fn tokens(
        buckets: &mut std::collections::HashMap<IpAddr, (f64, Instant)>,
        peer: IpAddr,
        now: Instant,
    ) -> &mut f64 {
        let (tokens, at) = buckets.entry(peer).or_insert((BAD_BURST, now));
        let refill = now.saturating_duration_since(*at).as_secs_f64() * BAD_PER_SECOND;
        *tokens = (*tokens + refill).min(BAD_BURST);
        *at = now;
        tokens
    }

    /// Whether a new connection from `peer` may be served at `now`, and on what terms.
    fn admit(&self, peer: IpAddr, now: Instant) -> Admit {
        let mut buckets = self.lock();
        if !buckets.contains_key(&peer) {
            return Admit::Free;
        }
        let tokens = Self::tokens(&mut buckets, peer, now);
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Admit::Charged
        } else {
            Admit::Refused
        }
    }

    /// A connection charged on admission proved good: its token comes back.
    fn refund(&self, peer: IpAddr, now: Instant) {
        let mut buckets = self.lock();
        if buckets.contains_key(&peer) {
            let tokens = Self::tokens(&mut buckets, peer, now);
            *tokens = (*tokens + 1.0).min(BAD_BURST);
        }
    }

    /// A connection of `peer` that was not charged on admission ended badly at `now`.
    fn misbehaved(&self, peer: IpAddr, now: Instant) {
        let mut buckets = self.lock();
        if buckets.len() >= 4096 && !buckets.contains_key(&peer) {
            // Forget peers whose bucket has refilled: they are no different from new ones.
            buckets.retain(|_, (tokens, at)| {
                *tokens + now.saturating_duration_since(*at).as_secs_f64() * BAD_PER_SECOND
                    < BAD_BURST
            });
        }
        let tokens = Self::tokens(&mut buckets, peer, now);
        *tokens = (*tokens - 1.0).max(0.0);
    }
}

/// A connection's account with [`Conduct`]: settled once, as good (a request answered, or a
/// clean end) or bad; a charge still held when the connection ends is refunded.
struct Account {
    conduct: Arc<Conduct>,
    peer: IpAddr,
    /// A token taken on admission and not yet settled.
    held: std::sync::atomic::AtomicBool,
}

impl Account {
    fn new(conduct: Arc<Conduct>, peer: IpAddr, admit: Admit) -> Self {
        Account {
            conduct,
            peer,
            held: std::sync::atomic::AtomicBool::new(admit == Admit::Charged),
        }
    }

    /// The connection proved good: a token taken on admission comes back.
    fn good(&self) {
        if self.held.swap(false, Ordering::SeqCst) {
            self.conduct.refund(self.peer, Instant::now());
        }
    }

    /// The connection ended badly: a token taken on admission stays spent, else one is taken.
    fn bad(&self) {
        if !self.held.swap(false, Ordering::SeqCst) {
            self.conduct.misbehaved(self.peer, Instant::now());
        }
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        self.good();
    }
}

/// TLS handshakes one peer address may have in progress at once; its further connections wait
/// their turn (within the handshake timeout). A handshake is the costly part of a connection,
/// and the threads run them in arrival order: without a turn per peer, a peer that opened
/// thousands of connections at once put an API server's new connection behind all of them.
pub const HANDSHAKES_PER_PEER: usize = 8;

/// The handshake turns of each peer address (see [`HANDSHAKES_PER_PEER`]).
#[derive(Default)]
struct Handshakes {
    peers: Mutex<std::collections::HashMap<IpAddr, Arc<Semaphore>>>,
}

/// A peer's turn to handshake; its entry goes when the last turn of the peer ends.
struct Turn<'a> {
    handshakes: &'a Handshakes,
    peer: IpAddr,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl Handshakes {
    async fn turn(&self, peer: IpAddr) -> Turn<'_> {
        let gate = {
            let mut peers = self.peers.lock().unwrap_or_else(|p| p.into_inner());
            peers
                .entry(peer)
                .or_insert_with(|| Arc::new(Semaphore::new(HANDSHAKES_PER_PEER)))
                .clone()
        };
        let mut turn = Turn {
            handshakes: self,
            peer,
            permit: None,
        };
        turn.permit = gate.acquire_owned().await.ok();
        turn
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        drop(self.permit.take());
        let mut peers = self
            .handshakes
            .peers
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // Only the map holds it: no turn is held or awaited.
        if peers
            .get(&self.peer)
            .is_some_and(|gate| Arc::strong_count(gate) == 1)
        {
            peers.remove(&self.peer);
        }
    }
}

/// What the accept loop does with a newcomer at the cap.
#[derive(Debug)]
enum Room {
    /// A connection was closed; its slot, handed over (`None`: it frees shortly).
    Made(Option<tokio::sync::OwnedSemaphorePermit>),
    /// Nothing may be closed yet: look again shortly.
    Wait,
    /// The newcomer's peer already holds more than its share: close the newcomer.
    Refuse,
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
struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.ended();
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
/// At `max_connections` room is made for a new client (see [`Registry::evict_for`]): a
/// connection whose request body stopped arriving for [`MIN_IDLE`] is cut; else the one idle
/// for longest (between requests, or not yet through its handshake or head, for at least
/// [`MIN_IDLE`]) is closed, as nginx reuses idle connections; else a peer holding more than a
/// quarter of the cap gives up one to a peer holding fewer. Only then do new clients wait, or are refused when
/// their own peer is the one over its share. So neither a flood of idle sockets nor one of
/// slow requests can exhaust memory or lock out the API server.
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
    let conduct = Arc::new(Conduct::default());
    let handshakes = Arc::new(Handshakes::default());
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
        // Closed before its TLS handshake, the costly part of a connection.
        let admit = conduct.admit(peer.ip(), Instant::now());
        if admit == Admit::Refused {
            tracing::debug!(%peer, "webhook connection refused: its peer's connections end badly more than {BAD_PER_SECOND}/s");
            continue;
        }
        let account = Arc::new(Account::new(conduct.clone(), peer.ip(), admit));
        // At the cap, a client has arrived: make room by closing the idlest connection, or wait
        // for one to finish when all are busy (holding just this one socket meanwhile).
        // Slots may have freed while accept waited.
        let slot = match free.or_else(|| slots.clone().try_acquire_owned().ok()) {
            Some(slot) => slot,
            None => {
                let ip = peer.ip();
                let room = make_room(
                    &registry,
                    &slots,
                    ip,
                    max,
                    base,
                    &mut warned_full,
                    &shutdown,
                );
                match room.await {
                    Ok(Some(slot)) => slot,
                    Ok(None) => break,
                    // Closed at once: waiting would keep every other peer's newcomer out of
                    // the accept loop behind it.
                    Err(()) => {
                        tracing::debug!(%peer, "webhook connection refused: its peer holds more than its share at the limit");
                        continue;
                    }
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
        // On eviction or shutdown a connection closes right after its current request (at once
        // when idle); only an eviction cuts a handshake short, so the drain still serves
        // connections that were handshaking when shutdown began.
        let stop = CancellationToken::new();
        // Eviction or shutdown; the connection task polls it on every wake-up, one token is
        // one lock there instead of two (#24).
        let closing = shutdown.child_token();
        let cut = CancellationToken::new();
        let activity = Arc::new(Activity::new(base));
        let id = registry.next.fetch_add(1, Ordering::SeqCst);
        let slot: SlotCell = Arc::new(Mutex::new(Some(slot)));
        registry.lock().insert(
            id,
            Entry {
                peer: peer.ip(),
                activity: activity.clone(),
                slot: slot.clone(),
                stop: stop.clone(),
                closing: closing.clone(),
                cut: cut.clone(),
            },
        );
        let connection = Connection {
            tcp,
            peer,
            id,
            slot,
            registry: registry.clone(),
            handshakes: handshakes.clone(),
            acceptor: acceptor.clone(),
            router: Arc::new(router.clone()),
            activity,
            account,
            limits,
            stop,
            closing,
            cut,
        }
        .run();
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

/// Waits at the cap for room for a newcomer from `peer` (see [`Registry::evict_for`]): the slot
/// of a connection closed for it, or the first to free; `Ok(None)` when `shutdown` fires
/// meanwhile, `Err` when the newcomer is refused (its peer holds more than its share).
async fn make_room(
    registry: &Registry,
    slots: &Arc<Semaphore>,
    peer: IpAddr,
    max: usize,
    base: Instant,
    warned_full: &mut Option<Instant>,
    shutdown: &CancellationToken,
) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, ()> {
    loop {
        let room = registry.evict_for(peer, max, millis(base));
        let wait = matches!(room, Room::Wait);
        match room {
            Room::Refuse => return Err(()),
            Room::Made(Some(slot)) => return Ok(Some(slot)),
            Room::Made(None) => {}
            Room::Wait => {
                if warned_full.is_none_or(|at| at.elapsed() > Duration::from_secs(60)) {
                    tracing::warn!(
                        max,
                        "webhook connection limit reached with no idle or stalled connection; new connections wait (--webhook-max-connections)"
                    );
                    *warned_full = Some(Instant::now());
                }
            }
        }
        // Without an eviction, look again shortly: a connection may turn idle.
        tokio::select! {
            _ = shutdown.cancelled() => return Ok(None),
            slot = slots.clone().acquire_owned() => {
                return Ok(Some(slot.expect("the semaphore is never closed")))
            }
            _ = tokio::time::sleep(Duration::from_millis(250)), if wait => {}
        }
    }
}

/// An accepted connection, registered under the cap: what its task needs to serve it.
struct Connection {
    tcp: Placed,
    peer: std::net::SocketAddr,
    /// Its key in the registry, whose entry goes when the task ends.
    id: u64,
    slot: SlotCell,
    registry: Arc<Registry>,
    handshakes: Arc<Handshakes>,
    acceptor: TlsAcceptor,
    router: Arc<Admission>,
    activity: Arc<Activity>,
    account: Arc<Account>,
    limits: ConnLimits,
    /// See [`Entry`]: eviction; eviction or shutdown; cut without waiting for the request.
    stop: CancellationToken,
    closing: CancellationToken,
    cut: CancellationToken,
}

impl Connection {
    /// The connection's task: its TLS handshake (in its peer's turn, within the handshake
    /// timeout), then HTTP/1.1 requests until the client leaves, or eviction or shutdown closes
    /// it.
    async fn run(self) {
        let Connection {
            tcp,
            peer,
            id,
            slot,
            registry,
            handshakes,
            acceptor,
            router,
            activity,
            account,
            limits,
            stop,
            closing,
            cut,
        } = self;
        let misbehaved = {
            let account = account.clone();
            move || account.bad()
        };
        // Released when the task ends, unless handed to a newcomer on eviction.
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
        // The wait for the peer's turn counts in the handshake timeout, but a connection
        // that times out waiting has done nothing wrong.
        let deadline = tokio::time::Instant::now() + limits.handshake_timeout;
        let turn = tokio::select! {
            _ = stop.cancelled() => return,
            turn = tokio::time::timeout_at(deadline, handshakes.turn(peer.ip())) => match turn {
                Ok(turn) => turn,
                Err(_) => return tracing::debug!(%peer, "TLS handshake not started in time"),
            },
        };
        let handshake = tokio::time::timeout_at(deadline, acceptor.accept(tcp));
        let stream = tokio::select! {
            _ = stop.cancelled() => return,
            done = handshake => match done {
                Ok(Ok(stream)) => stream,
                Ok(Err(error)) => {
                    misbehaved();
                    return tracing::debug!(%peer, %error, "TLS handshake failed");
                }
                Err(_) => {
                    misbehaved();
                    return tracing::debug!(%peer, "TLS handshake timed out");
                }
            },
        };
        drop(turn);
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            activity.started();
            let guard = Busy(activity.clone());
            let caller = super::Caller {
                peer: Some(peer.ip()),
                activity: Some(activity.clone()),
            };
            let router = router.clone();
            let account = account.clone();
            async move {
                let _guard = guard;
                let response = router.handle_from(request, &caller).await;
                account.good();
                Ok::<_, std::convert::Infallible>(response)
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
                // A stalled or over-share connection is cut, not left to finish its request.
                tokio::select! {
                    biased;
                    result = conn.as_mut() => result,
                    _ = cut.cancelled() => {
                        misbehaved();
                        return tracing::debug!(%peer, "webhook connection cut");
                    }
                }
            }
        };
        if let Err(error) = result {
            // A head that does not parse or is too long; not a client that went away or
            // a kept-alive connection that timed out between requests.
            if error.is_parse() || error.is_parse_too_large() {
                misbehaved();
            }
            tracing::debug!(%peer, %error, "webhook connection ended with an error");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_peer_whose_connections_end_badly_is_held_back() {
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let conduct = Arc::new(Conduct::default());
        let t0 = Instant::now();
        assert!(
            (0..10_000).all(|_| conduct.admit(a, t0) == Admit::Free),
            "clean peers pass, uncharged"
        );
        let mut bad = 0;
        loop {
            let admit = conduct.admit(a, t0);
            if admit == Admit::Refused {
                break;
            }
            Account::new(conduct.clone(), a, admit).bad();
            bad += 1;
        }
        assert_eq!(bad, BAD_BURST as usize);
        assert_eq!(
            conduct.admit(b, t0),
            Admit::Free,
            "another peer is not held back"
        );
        // Half a second later, half a second's worth of bad endings more.
        let later = t0 + Duration::from_millis(500);
        let mut more = 0;
        while conduct.admit(a, later) != Admit::Refused {
            more += 1;
        }
        assert_eq!(more, (BAD_PER_SECOND / 2.0) as usize);
    }

    #[test]
    fn a_burst_of_connections_from_a_peer_with_a_record_is_held_to_its_tokens() {
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let conduct = Arc::new(Conduct::default());
        let t0 = Instant::now();
        Account::new(conduct.clone(), a, conduct.admit(a, t0)).bad();
        // A thousand connections arrive before any of them has ended: only the tokens the
        // peer has left are served.
        let accounts: Vec<Account> = (0..1000)
            .map(|_| conduct.admit(a, t0))
            .filter(|admit| *admit != Admit::Refused)
            .map(|admit| Account::new(conduct.clone(), a, admit))
            .collect();
        assert_eq!(accounts.len(), BAD_BURST as usize - 1);
        assert!(accounts.iter().all(|acc| acc.held.load(Ordering::SeqCst)));
        // Connections that prove good give their tokens back (answered, or simply closed).
        let mut accounts = accounts.into_iter();
        accounts.next().unwrap().good();
        drop(accounts.next());
        // Ones that end badly do not, and are not charged twice.
        for acc in accounts {
            acc.bad();
        }
        let mut served = 0;
        while conduct.admit(a, t0) != Admit::Refused {
            served += 1;
        }
        assert_eq!(served, 2);
    }

    #[tokio::test]
    async fn a_peer_waits_for_its_own_handshake_turns_only() {
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let handshakes = Handshakes::default();
        let mut held = Vec::new();
        for _ in 0..HANDSHAKES_PER_PEER {
            held.push(handshakes.turn(a).await);
        }
        let short = Duration::from_millis(50);
        assert!(
            tokio::time::timeout(short, handshakes.turn(a))
                .await
                .is_err(),
            "a peer's next handshake waits while all its turns are taken"
        );
        assert!(
            tokio::time::timeout(short, handshakes.turn(b))
                .await
                .is_ok(),
            "another peer's handshake does not wait behind it"
        );
        held.pop();
        assert!(tokio::time::timeout(short, handshakes.turn(a))
            .await
            .is_ok());
        drop(held);
        assert!(
            handshakes.peers.lock().unwrap().is_empty(),
            "a peer with no handshake in progress leaves nothing behind"
        );
    }
}
