//! Watches of single named objects of one namespaced kind (the Secrets OIDC actions read), the
//! way upstream's secrets manager watches them: one LIST/WATCH per object, in its namespace,
//! narrowed by `fieldSelector=metadata.name=<name>`, so a namespaced Role with `resourceNames`
//! is enough and nothing needs cluster-wide access. The set of names is not fixed at start:
//! consumers say which objects each of theirs names ([`Wanted::update`]); the union is watched,
//! and watches start and stop with it. Several controllers share one set (each kind is watched
//! once, its events fanned out to every consumer).
//!
//! Indexes register before the process's watches start, as for [`super::Kind`]. A named watch
//! reports its object with `apply` (created, changed, or found by a relist) and `delete`
//! (deleted, absent on a relist, or no longer wanted); `reset` is never called, since one
//! watch's list says nothing of the others' objects.
//!
//! With a required label (`--required-secrets-label`), as upstream, each watch also carries it as
//! a label selector: an object without it is never reported (it reads as absent), and one that
//! loses it is reported deleted. Readers that fall back to a GET ask [`Named::required_label`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use kube::core::NamespaceResourceScope;
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

use super::{Consumers, Index, IndexList};
use crate::config::RequiredLabel;

/// `(namespace, name)` of a watched object.
pub type Ref = (String, String);

/// The objects consumers want watched: per consumer object (its kind and key, e.g.
/// `Ingress/ns/name`, `Gateway/ns/name`), the objects it names; the union is watched. Cheap
/// to clone; every clone is the same set.
#[derive(Clone)]
pub struct Wanted {
    tx: Arc<tokio::sync::watch::Sender<BTreeSet<Ref>>>,
    per_object: Arc<Mutex<BTreeMap<String, BTreeSet<Ref>>>>,
}

impl Wanted {
    fn new() -> Self {
        Self {
            tx: Arc::new(tokio::sync::watch::Sender::new(BTreeSet::new())),
            per_object: Arc::default(),
        }
    }

    /// `key` now names `refs` (empty: nothing, e.g. deleted); watches follow the union (a
    /// no-op when it did not change).
    pub fn update(&self, key: String, refs: BTreeSet<Ref>) {
        let mut per = self.per_object.lock().unwrap_or_else(|p| p.into_inner());
        let changed = if refs.is_empty() {
            per.remove(&key).is_some()
        } else {
            per.insert(key, refs.clone()) != Some(refs)
        };
        if changed {
            let union: BTreeSet<Ref> = per.values().flatten().cloned().collect();
            self.tx.send_if_modified(|cur| {
                let modified = *cur != union;
                *cur = union;
                modified
            });
        }
    }

    pub fn get(&self) -> BTreeSet<Ref> {
        self.tx.borrow().clone()
    }
}

/// The named watches of one kind.
pub struct Named<K> {
    consumers: Consumers<K>,
    wanted: Wanted,
    required_label: Option<RequiredLabel>,
}

impl<K> Named<K> {
    pub fn new(name: &'static str) -> Self {
        Self {
            consumers: Consumers::new(name),
            wanted: Wanted::new(),
            required_label: None,
        }
    }

    /// Watches only objects carrying `label` (`None`: every object).
    pub fn with_required_label(mut self, label: Option<RequiredLabel>) -> Self {
        self.required_label = label;
        self
    }

    /// The label a watched object must carry; a reader that GETs an object the watch has not
    /// reported must treat one without it as absent.
    pub fn required_label(&self) -> Option<&RequiredLabel> {
        self.required_label.as_ref()
    }

    /// Adds a consumer; before the watches start (a later one would miss objects: a bug).
    pub fn register(&self, index: Arc<dyn Index<K>>) {
        self.consumers.register(index)
    }

    /// Whether anything registered (nobody reading: nothing is watched).
    pub fn wanted(&self) -> bool {
        self.consumers.wanted()
    }

    /// Where consumers say which objects to watch.
    pub fn wants(&self) -> Wanted {
        self.wanted.clone()
    }
}

/// An object that stands for `(ns, name)` when there is none (absent, or no longer watched).
fn stub<K: Resource + Default>((ns, name): &Ref) -> Arc<K> {
    let mut k = K::default();
    k.meta_mut().namespace = Some(ns.clone());
    k.meta_mut().name = Some(name.clone());
    Arc::new(k)
}

/// One object's watch, until its task is aborted. With `label`, the watch is narrowed by it and
/// an object without it (should the server not narrow) reads as absent.
async fn watch_one<K>(
    api: Api<K>,
    r: Ref,
    list: Arc<IndexList<K>>,
    kind: &'static str,
    label: Option<RequiredLabel>,
) where
    K: Resource + Default + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let mut cfg = watcher::Config::default().fields(&format!("metadata.name={}", r.1));
    if let Some(l) = &label {
        cfg = cfg.labels(&l.selector());
    }
    let admitted = |obj: &K| {
        label
            .as_ref()
            .is_none_or(|l| l.admits(obj.meta().labels.as_ref()))
    };
    let events = watcher::watcher(api, cfg).default_backoff();
    futures::pin_mut!(events);
    let mut listed: Vec<K> = Vec::new();
    while let Some(event) = events.next().await {
        match event {
            Ok(Event::Init) => listed.clear(),
            Ok(Event::InitApply(obj)) => listed.push(obj),
            Ok(Event::InitDone) => match listed.pop().filter(|o| admitted(o)) {
                Some(obj) => list.apply(&Arc::new(obj)),
                None => list.delete(&stub(&r)),
            },
            Ok(Event::Apply(obj)) if admitted(&obj) => list.apply(&Arc::new(obj)),
            Ok(Event::Apply(obj)) | Ok(Event::Delete(obj)) => list.delete(&Arc::new(obj)),
            Err(error) => {
                tracing::warn!(%error, watch = kind, namespace = %r.0, name = %r.1, "watch failed; retrying with backoff")
            }
        }
    }
}

impl<K> Named<K>
where
    K: Resource<Scope = NamespaceResourceScope>
        + Default
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
    K::DynamicType: Default,
{
    /// Keeps one watch per wanted object until the future is dropped (which stops them all).
    /// `namespaces`: `--watch-namespace` (empty: all); objects elsewhere are not watched.
    pub async fn run(&self, client: kube::Client, namespaces: Vec<String>) {
        let list = Arc::new(self.consumers.take());
        let mut rx = self.wanted.tx.subscribe();
        let mut tasks = tokio::task::JoinSet::new();
        let mut running: HashMap<Ref, tokio::task::AbortHandle> = HashMap::new();
        loop {
            let want: BTreeSet<Ref> = rx
                .borrow_and_update()
                .iter()
                .filter(|(ns, _)| namespaces.is_empty() || namespaces.contains(ns))
                .cloned()
                .collect();
            running.retain(|r, handle| {
                let keep = want.contains(r);
                if !keep {
                    handle.abort();
                    // Forgotten by every index: no stale data, and memory follows the set.
                    list.delete(&stub(r));
                    tracing::debug!(watch = self.consumers.name(), namespace = %r.0, name = %r.1, "stopped watching");
                }
                keep
            });
            for r in want {
                if running.contains_key(&r) {
                    continue;
                }
                tracing::debug!(watch = self.consumers.name(), namespace = %r.0, name = %r.1, "watching");
                let api = Api::<K>::namespaced(client.clone(), &r.0);
                let handle = tasks.spawn(watch_one(
                    api,
                    r.clone(),
                    list.clone(),
                    self.consumers.name(),
                    self.required_label.clone(),
                ));
                running.insert(r, handle);
            }
            // Finished tasks (aborted ones) are reaped here; a watch itself never ends.
            while tasks.try_join_next().is_some() {}
            if rx.changed().await.is_err() {
                return;
            }
        }
    }
}
