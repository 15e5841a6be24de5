//! One kind's watch: the indexes registered for it, its sync status, and the driver loop that
//! turns watcher events into `reset` (once per completed list), `apply` and `delete`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{Stream, StreamExt};
use kube::runtime::watcher::{self, Event};

use super::refill::{Refill, Refills};
use super::{Consumers, Index, IndexList};

/// Lists one page of what a refill asks for: from the start (`None`) or a continue token;
/// returns the page's objects and the token of the next page (`None`: the last page).
pub type Lister<K> = Box<
    dyn Fn(&Refill, Option<String>) -> BoxFuture<'static, Result<Page<K>, kube::Error>>
        + Send
        + Sync,
>;

/// A page of a refill's list and the continue token of the next one.
pub type Page<K> = (Vec<K>, Option<String>);

/// Whether a kind has completed its first list. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Synced(tokio::sync::watch::Receiver<bool>);

impl Synced {
    pub fn is_synced(&self) -> bool {
        *self.0.borrow()
    }

    /// Returns once the kind has listed (never, if its watch is not running).
    pub async fn wait(&self) {
        let mut rx = self.0.clone();
        let _ = rx.wait_for(|s| *s).await;
    }
}

/// The single watch of one kind: indexes register before it starts; it runs at most once.
pub struct Kind<K> {
    consumers: Consumers<K>,
    synced: tokio::sync::watch::Sender<bool>,
    /// Applied to every object before any index sees it ([`super::trim`]).
    trim: fn(&mut K),
    /// Kinds whose first list this one's watch waits for (see [`Kind::start_after`]).
    after: Mutex<Vec<Synced>>,
    refills: Arc<Refills>,
}

impl<K> Kind<K> {
    /// `name`: the plural resource, for logs.
    pub fn new(name: &'static str) -> Self {
        Self {
            consumers: Consumers::new(name),
            synced: tokio::sync::watch::Sender::new(false),
            trim: |_| {},
            after: Mutex::new(Vec::new()),
            refills: Arc::default(),
        }
    }

    /// This kind's watch starts only once `other` has listed: an index that keeps only some
    /// objects and decides which by another kind (pods by the bindings and Services) needs
    /// that kind first; and a large list started later leaves the CPU and the API server to
    /// the lists before it. `other` must be watched (a kind nobody reads never lists).
    pub fn start_after(&self, other: Synced) {
        self.after
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(other);
    }

    /// The kinds this one's watch waits for.
    pub(super) fn prerequisites(&self) -> Vec<Synced> {
        self.after.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Where an index asks for objects it did not keep and now wants ([`Refills`]).
    pub fn refills(&self) -> Arc<Refills> {
        self.refills.clone()
    }

    /// Drops what no index reads from each object as it arrives (so none keeps it).
    pub fn with_trim(mut self, trim: fn(&mut K)) -> Self {
        self.trim = trim;
        self
    }

    fn arrived(&self, mut obj: K) -> Arc<K> {
        (self.trim)(&mut obj);
        Arc::new(obj)
    }

    pub fn name(&self) -> &'static str {
        self.consumers.name()
    }

    /// Adds a consumer. Every consumer registers before the watches start: one registering
    /// later would miss the initial list, so that is a bug and panics.
    pub fn register(&self, index: Arc<dyn Index<K>>) {
        self.consumers.register(index)
    }

    /// Whether anything registered (a kind nobody reads is not watched).
    pub fn wanted(&self) -> bool {
        self.consumers.wanted()
    }

    pub fn synced(&self) -> Synced {
        Synced(self.synced.subscribe())
    }

    fn take(&self) -> IndexList<K> {
        self.consumers.take()
    }
}

/// Runs `stream` (a watcher with backoff) into the kind's indexes until the stream ends. No
/// index ever sees half a list: it is buffered, or staged by the indexes that stream it.
/// An event of untyped objects as one of `K`, each object decoded by `decode` (which logs what
/// does not decode). An object that does not decode is left out rather than failing the whole
/// list, but a delete is never dropped: it is handled by key, `keyed` making a `K` of the
/// metadata alone (indexes delete by namespace/name), so an object that stopped decoding leaves
/// the stores once it is gone.
pub fn decoded_event<K>(
    event: Event<kube::api::DynamicObject>,
    decode: impl Fn(kube::api::DynamicObject) -> Option<K>,
    keyed: impl Fn(kube::api::ObjectMeta) -> K,
) -> Option<Event<K>> {
    Some(match event {
        Event::Init => Event::Init,
        Event::InitDone => Event::InitDone,
        Event::InitApply(o) => Event::InitApply(decode(o)?),
        Event::Apply(o) => Event::Apply(decode(o)?),
        Event::Delete(o) => {
            let meta = o.metadata.clone();
            Event::Delete(decode(o).unwrap_or_else(|| keyed(meta)))
        }
    })
}

/// A `K` carrying only `meta` (for [`decoded_event`] when `K` has a default).
pub fn key_only<K: kube::Resource + Default>(meta: kube::api::ObjectMeta) -> K {
    let mut key = K::default();
    *key.meta_mut() = meta;
    key
}

/// Runs `stream` into the kind's indexes until it ends, making no refills.
pub async fn drive<K, S>(kind: &Kind<K>, stream: S)
where
    K: 'static,
    S: Stream<Item = Result<Event<K>, watcher::Error>>,
{
    drive_with(kind, stream, None).await
}

/// A failed refill is tried again this many times, after 0.5, 1, 2 and 4 s (the watch waits
/// meanwhile), then given up with a warning: its waiters go on rather than hang.
const REFILL_TRIES: u32 = 5;

/// The driver's state between events.
struct Driven<'k, K> {
    kind: &'k Kind<K>,
    list: IndexList<K>,
    keep_list: bool,
    buffer: Vec<Arc<K>>,
    /// Between `Init` and `InitDone`.
    listing: bool,
}

impl<K> Driven<'_, K> {
    /// One object a refill listed: to every index now and, during a relist, to what it
    /// stages too (the relist completing must not drop it).
    fn refilled(&mut self, obj: K) {
        let obj = self.kind.arrived(obj);
        self.list.apply(&obj);
        if self.listing {
            self.list.relist_apply(&obj);
            if self.keep_list {
                self.buffer.push(obj);
            }
        }
    }

    /// Lists what `r` asks for, page by page (a refill of a whole namespace never holds more
    /// than a page of full objects), each page handed to the indexes as it comes.
    async fn refill(&mut self, lister: &Lister<K>, r: Refill) {
        let (mut token, mut objects, mut attempt) = (None, 0usize, 1);
        let mut delay = Duration::from_millis(500);
        loop {
            match lister(&r, token.clone()).await {
                Ok((objs, next)) => {
                    objects += objs.len();
                    objs.into_iter().for_each(|o| self.refilled(o));
                    (attempt, delay) = (1, Duration::from_millis(500));
                    match next {
                        Some(next) => token = Some(next),
                        None => break,
                    }
                }
                Err(error) if attempt < REFILL_TRIES => {
                    tracing::warn!(%error, watch = self.kind.name(), namespace = %r.namespace, labels = %r.labels, fields = %r.fields, retry_in = ?delay, "refill failed");
                    tokio::time::sleep(delay).await;
                    (attempt, delay) = (attempt + 1, delay * 2);
                }
                Err(error) => {
                    tracing::warn!(%error, watch = self.kind.name(), namespace = %r.namespace, labels = %r.labels, fields = %r.fields, "refill failed; given up (the objects it would have brought arrive with their next change or the next relist)");
                    break;
                }
            }
        }
        tracing::debug!(watch = self.kind.name(), namespace = %r.namespace, labels = %r.labels, fields = %r.fields, objects, "refilled");
        self.kind.refills.finish(r.ticket);
    }

    fn event(&mut self, event: Result<Event<K>, watcher::Error>) {
        let kind = self.kind;
        match event {
            Ok(Event::Init) => {
                self.buffer.clear();
                self.listing = true;
                self.list.relist_begin();
            }
            Ok(Event::InitApply(obj)) => {
                let obj = kind.arrived(obj);
                self.list.relist_apply(&obj);
                if self.keep_list {
                    self.buffer.push(obj);
                }
            }
            Ok(Event::InitDone) => {
                self.list.finish_relist(&std::mem::take(&mut self.buffer));
                self.listing = false;
                kind.synced.send_replace(true);
                tracing::debug!(watch = kind.name(), "listed");
            }
            Ok(Event::Apply(obj)) => self.list.apply(&kind.arrived(obj)),
            Ok(Event::Delete(obj)) => self.list.delete(&kind.arrived(obj)),
            Err(error) => {
                tracing::warn!(%error, watch = kind.name(), "watch failed; retrying with backoff")
            }
        }
    }
}

/// [`drive`], making the refills indexes ask for with `lister` (none: no refills are made).
pub async fn drive_with<K, S>(kind: &Kind<K>, stream: S, lister: Option<Lister<K>>)
where
    K: 'static,
    S: Stream<Item = Result<Event<K>, watcher::Error>>,
{
    let list = kind.take();
    // Indexes that stream a relist see each object as it arrives; the list is kept whole only
    // for the others (a kind read only through projections never holds its full objects).
    let keep_list = list.needs_whole_list();
    let mut d = Driven {
        kind,
        list,
        keep_list,
        buffer: Vec::new(),
        listing: false,
    };
    futures::pin_mut!(stream);
    let Some(lister) = lister else {
        while let Some(event) = stream.next().await {
            d.event(event);
        }
        return;
    };
    kind.refills.start();
    loop {
        // Refills first, between two events (the watch is not read meanwhile).
        if let Some(r) = kind.refills.pop() {
            d.refill(&lister, r).await;
            continue;
        }
        tokio::select! {
            biased;
            r = kind.refills.next() => d.refill(&lister, r).await,
            event = stream.next() => match event {
                Some(event) => d.event(event),
                None => return,
            },
        }
    }
}
