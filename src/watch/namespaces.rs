//! The namespaces the controller watches (`--watch-namespace`, upstream's single namespace, or
//! a comma-separated list): one watch per namespace, merged into one stream that keeps the
//! watcher's contract for stores — one `Init`, every object as `InitApply`, one `InitDone` once
//! every namespace has listed, then `Apply`/`Delete`. A later relist of one namespace (after its
//! watch expired) becomes `Apply` for what it lists and `Delete` for what it no longer has, so
//! it never wipes the other namespaces from a store.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Debug;

use futures::stream::{self, BoxStream, StreamExt};
use kube::core::NamespaceResourceScope;
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;

type Item<K> = Result<Event<K>, watcher::Error>;

/// Watch events of `K` in `namespaces` (empty: every namespace), with backoff on errors.
pub fn watch<K>(
    client: kube::Client,
    namespaces: &[String],
    cfg: watcher::Config,
) -> BoxStream<'static, Item<K>>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug + Send + 'static,
    K::DynamicType: Default,
{
    watch_with(namespaces, cfg, |ns| match ns {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    })
}

/// [`watch`] for any kind: `api_for(Some(ns))` is the Api of one namespace, `api_for(None)` of all.
pub fn watch_with<K>(
    namespaces: &[String],
    cfg: watcher::Config,
    api_for: impl Fn(Option<&str>) -> Api<K>,
) -> BoxStream<'static, Item<K>>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    match namespaces {
        [] => watcher::watcher(api_for(None), cfg)
            .default_backoff()
            .boxed(),
        [ns] => watcher::watcher(api_for(Some(ns)), cfg)
            .default_backoff()
            .boxed(),
        many => {
            let streams = many.iter().map(|ns| {
                let tag = ns.clone();
                watcher::watcher(api_for(Some(ns)), cfg.clone())
                    .default_backoff()
                    .map(move |ev| (tag.clone(), ev))
                    .boxed()
            });
            merge(stream::select_all(streams), many)
        }
    }
}

/// Merges per-namespace watch streams (tagged with their namespace) as described above.
fn merge<K, S>(inner: S, namespaces: &[String]) -> BoxStream<'static, Item<K>>
where
    K: Resource + Clone + Send + 'static,
    S: futures::Stream<Item = (String, Item<K>)> + Send + Unpin + 'static,
{
    let state = Merge {
        unlisted: namespaces.iter().cloned().collect(),
        started: false,
        known: HashMap::new(),
        relisting: HashMap::new(),
        deferred: HashMap::new(),
        out: VecDeque::new(),
    };
    stream::unfold((inner, state), |(mut inner, mut st)| async move {
        loop {
            if let Some(ev) = st.out.pop_front() {
                return Some((ev, (inner, st)));
            }
            let (ns, ev) = inner.next().await?;
            st.handle(ns, ev);
        }
    })
    .boxed()
}

struct Merge<K> {
    /// Namespaces whose first list is not complete yet (the merged `InitDone` waits for them).
    unlisted: HashSet<String>,
    started: bool,
    /// Objects by namespace and name, as last reported.
    known: HashMap<String, HashMap<String, K>>,
    /// Names listed so far by a namespace's ongoing relist.
    relisting: HashMap<String, HashSet<String>>,
    /// Changes of namespaces already listed, held until the merged `InitDone` (a store only
    /// applies them once its initial list is in): the latest per object, so a namespace that
    /// is slow to list cannot make this grow beyond one entry per object.
    deferred: HashMap<(String, String), Item<K>>,
    out: VecDeque<Item<K>>,
}

impl<K: Resource + Clone> Merge<K> {
    fn initial(&self) -> bool {
        !self.unlisted.is_empty()
    }

    /// Emits `ev` now, or after the merged `InitDone` while some namespace still lists.
    fn emit_change(&mut self, ev: Item<K>) {
        if self.initial() {
            let key = match &ev {
                Ok(Event::Apply(o) | Event::Delete(o) | Event::InitApply(o)) => {
                    (o.namespace().unwrap_or_default(), o.name_any())
                }
                // Only object events are deferred; anything else goes out in order.
                _ => return self.out.push_back(ev),
            };
            self.deferred.insert(key, ev);
        } else {
            self.out.push_back(ev);
        }
    }

    fn handle(&mut self, ns: String, ev: Item<K>) {
        match ev {
            Err(e) => self.out.push_back(Err(e)),
            Ok(Event::Init) => {
                if !self.started {
                    self.started = true;
                    self.out.push_back(Ok(Event::Init));
                }
                self.relisting.insert(ns, HashSet::new());
            }
            Ok(Event::InitApply(o)) => {
                if let Some(seen) = self.relisting.get_mut(&ns) {
                    seen.insert(o.name_any());
                }
                self.known
                    .entry(ns.clone())
                    .or_default()
                    .insert(o.name_any(), o.clone());
                if self.unlisted.contains(&ns) {
                    self.out.push_back(Ok(Event::InitApply(o)));
                } else {
                    self.emit_change(Ok(Event::Apply(o)));
                }
            }
            Ok(Event::InitDone) => {
                let seen = self.relisting.remove(&ns).unwrap_or_default();
                let known = self.known.entry(ns.clone()).or_default();
                let gone: Vec<K> = known
                    .iter()
                    .filter(|(name, _)| !seen.contains(*name))
                    .map(|(_, o)| o.clone())
                    .collect();
                known.retain(|name, _| seen.contains(name));
                if self.unlisted.remove(&ns) {
                    // First list of this namespace: nothing of it was reported before.
                    if !self.initial() {
                        self.out.push_back(Ok(Event::InitDone));
                        self.out.extend(self.deferred.drain().map(|(_, ev)| ev));
                    }
                } else {
                    for o in gone {
                        self.emit_change(Ok(Event::Delete(o)));
                    }
                }
            }
            Ok(Event::Apply(o)) => {
                self.known
                    .entry(ns)
                    .or_default()
                    .insert(o.name_any(), o.clone());
                self.emit_change(Ok(Event::Apply(o)));
            }
            Ok(Event::Delete(o)) => {
                if let Some(known) = self.known.get_mut(&ns) {
                    known.remove(&o.name_any());
                }
                self.emit_change(Ok(Event::Delete(o)));
            }
        }
    }
}

/// `--watch-namespace`: parsed with the other flags, in the model crate.
pub use crate::config::parse_namespaces;

#[cfg(test)]
#[path = "namespaces_tests.rs"]
mod tests;
