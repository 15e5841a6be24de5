//! One kind's watch: the indexes registered for it, its sync status, and the driver loop that
//! turns watcher events into `reset` (once per completed list), `apply` and `delete`.

use std::sync::Arc;

use futures::{Stream, StreamExt};
use kube::runtime::watcher::{self, Event};

use super::{Consumers, Index, IndexList};

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
}

impl<K> Kind<K> {
    /// `name`: the plural resource, for logs.
    pub fn new(name: &'static str) -> Self {
        Self {
            consumers: Consumers::new(name),
            synced: tokio::sync::watch::Sender::new(false),
            trim: |_| {},
        }
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

pub async fn drive<K, S>(kind: &Kind<K>, stream: S)
where
    S: Stream<Item = Result<Event<K>, watcher::Error>>,
{
    let list = kind.take();
    // Indexes that stream a relist see each object as it arrives; the list is kept whole only
    // for the others (a kind read only through projections never holds its full objects).
    let keep_list = list.needs_whole_list();
    futures::pin_mut!(stream);
    let mut buffer: Vec<Arc<K>> = Vec::new();
    while let Some(event) = stream.next().await {
        match event {
            Ok(Event::Init) => {
                buffer.clear();
                list.relist_begin();
            }
            Ok(Event::InitApply(obj)) => {
                let obj = kind.arrived(obj);
                list.relist_apply(&obj);
                if keep_list {
                    buffer.push(obj);
                }
            }
            Ok(Event::InitDone) => {
                list.finish_relist(&std::mem::take(&mut buffer));
                kind.synced.send_replace(true);
                tracing::debug!(watch = kind.name(), "listed");
            }
            Ok(Event::Apply(obj)) => list.apply(&kind.arrived(obj)),
            Ok(Event::Delete(obj)) => list.delete(&kind.arrived(obj)),
            Err(error) => {
                tracing::warn!(%error, watch = kind.name(), "watch failed; retrying with backoff")
            }
        }
    }
}
