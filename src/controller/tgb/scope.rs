//! Which pods the controller keeps: only pods a binding may read. A reconcile of an ip binding
//! reads the pods the endpoints of its Service name, and the pods gated on it; nothing reads
//! any other pod (an instance binding reads nodes). So a pod is kept when it carries a
//! target-health readiness gate, when a binding's last reconcile referenced it, when an
//! endpoint of a Service an ip binding of its namespace names (a "bound" Service) names it, or
//! when a bound Service's selector selects it (so a new pod is kept from its first event,
//! before the endpoints name it). In a cluster of 300,000 pods of which 100,000 are behind
//! bindings, the other 200,000 cost nothing.
//!
//! The pods watch starts once the bindings, Services and endpoints have listed, so its first
//! list is judged with the whole scope. When the scope grows later (a new ip binding, a bound
//! Service created or its selector changed, endpoints naming a pod not kept), the pods it now
//! takes in are refilled: listed again through the pods watch ([`crate::watch::Refills`]), by
//! the Service's selector, by name, or the whole namespace when many are missing at once. A
//! reconcile of a binding of that Service waits for the refill before it reads pods, so it
//! never acts without them (which would deregister their targets). A scope that shrinks keeps
//! the pods it took in until their next change.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use super::cache::{ObjKey, Projected};
use super::info::{PodInfo, ServiceInfo, SliceInfo};
use crate::watch::Refills;

/// An EndpointSlice (or Endpoints object) as the slice cache keeps it: its Service and slices.
type Slices = (String, Vec<SliceInfo>);

/// Up to this many pods missing at once are refilled one by one (by name); more, with the
/// whole namespace (one paged list instead of hundreds).
const REFILL_BY_NAME: usize = 8;

/// How long a reconcile waits for the pods of its Service to be refilled before it goes on
/// (a failed refill is retried for ~8 s; this only guards against a pods watch that stopped).
const COVERED_WAIT: Duration = Duration::from_secs(120);

/// A pod's key as the endpoint references count it: a 64-bit hash of namespace and name (two
/// pods colliding would only keep one that is not needed).
fn pod_hash(ns: &str, name: &str) -> u64 {
    let mut h = DefaultHasher::new();
    ns.hash(&mut h);
    name.hash(&mut h);
    h.finish()
}

/// The pods the endpoints of `slices` name.
fn named_pods(slices: &[SliceInfo]) -> BTreeSet<&str> {
    slices
        .iter()
        .flat_map(|s| s.endpoints.iter())
        .filter_map(|e| e.pod.as_deref())
        .collect()
}

/// Selectors by the value of their first pair.
type SelectorsByValue = HashMap<Box<str>, Vec<Box<str>>>;

/// What the ip bindings of one namespace select.
#[derive(Debug, Default)]
struct NsScope {
    /// The bound Services' non-empty selectors (`k=v,k2=v2`, once per Service), by the key and
    /// value of their first pair: a pod is looked up by each of its labels.
    by_first: HashMap<Box<str>, SelectorsByValue>,
    /// Each bound Service.
    services: HashMap<String, Bound>,
}

/// A Service ip bindings name.
#[derive(Debug)]
struct Bound {
    /// How many ip bindings name it.
    bindings: u32,
    /// Its selector (empty: none), `None` while it does not exist.
    selector: Option<Box<str>>,
}

/// The first `(key, value)` of a selector, if it has one.
fn first_pair(selector: &str) -> Option<(&str, &str)> {
    selector.split(',').next()?.split_once('=')
}

/// Whether `labels` satisfy every pair of a non-empty `selector`.
fn selects(selector: &str, labels: &BTreeMap<String, String>) -> bool {
    selector.split(',').all(|pair| {
        pair.split_once('=')
            .is_some_and(|(k, v)| labels.get(k).map(String::as_str) == Some(v))
    })
}

impl NsScope {
    fn add_selector(&mut self, selector: &str) {
        if let Some((k, v)) = first_pair(selector) {
            self.by_first
                .entry(k.into())
                .or_default()
                .entry(v.into())
                .or_default()
                .push(selector.into());
        }
    }

    fn remove_selector(&mut self, selector: &str) {
        let Some((k, v)) = first_pair(selector) else {
            return;
        };
        let Some(values) = self.by_first.get_mut(k) else {
            return;
        };
        if let Some(list) = values.get_mut(v) {
            if let Some(i) = list.iter().position(|s| &**s == selector) {
                list.swap_remove(i);
            }
            if list.is_empty() {
                values.remove(v);
            }
        }
        if values.is_empty() {
            self.by_first.remove(k);
        }
    }

    fn selects(&self, labels: &BTreeMap<String, String>) -> bool {
        labels.iter().any(|(k, v)| {
            self.by_first
                .get(k.as_str())
                .and_then(|values| values.get(v.as_str()))
                .is_some_and(|sels| sels.iter().any(|s| selects(s, labels)))
        })
    }
}

#[derive(Debug, Default)]
struct Inner {
    /// namespace → ip binding name → the name of its Service.
    bindings: HashMap<String, HashMap<String, String>>,
    /// namespace → what its ip bindings select (namespaces without any are absent).
    compiled: HashMap<String, NsScope>,
    /// Endpoint slices of bound Services → their Service and the pods they name (hashed).
    named: HashMap<ObjKey, (String, Box<[u64]>)>,
    /// Pod (hashed) → how many slices of bound Services name it.
    refs: HashMap<u64, u32>,
    /// `(namespace, Service)` → the last refill its pods wait for.
    pending: HashMap<(String, String), u64>,
}

impl Inner {
    fn bound(&self, ns: &str, svc: &str) -> Option<&Bound> {
        self.compiled.get(ns)?.services.get(svc)
    }

    /// Forgets what slice `key` named.
    fn unname(&mut self, key: &ObjKey) {
        let Some((_, pods)) = self.named.remove(key) else {
            return;
        };
        for h in pods.iter() {
            if let Some(n) = self.refs.get_mut(h) {
                *n -= 1;
                if *n == 0 {
                    self.refs.remove(h);
                }
            }
        }
    }

    /// Slice `key` of bound Service `svc` names `pods`.
    fn name(&mut self, key: &ObjKey, svc: &str, pods: &BTreeSet<&str>) {
        let hashes: Box<[u64]> = pods.iter().map(|p| pod_hash(&key.0, p)).collect();
        for h in hashes.iter() {
            *self.refs.entry(*h).or_default() += 1;
        }
        self.named.insert(key.clone(), (svc.to_string(), hashes));
    }

    /// The reconciles of Service `ns/svc` wait for refill `ticket` (and any earlier one).
    fn wait_for(&mut self, ns: &str, svc: &str, ticket: u64) {
        let t = self
            .pending
            .entry((ns.to_string(), svc.to_string()))
            .or_default();
        *t = (*t).max(ticket);
    }
}

/// The pod scope (see the module docs). Fed by the binding, Service and endpoints caches; read
/// by the pod cache for every pod event, and by reconciles before they read pods.
#[derive(Debug, Default)]
pub struct PodScope {
    inner: RwLock<Inner>,
    refills: OnceLock<Arc<Refills>>,
}

/// The caches the scope reads (the Service selectors, the endpoints, which pods are kept).
pub struct Sources<'c> {
    pub services: &'c Projected<ServiceInfo>,
    pub slices: &'c Projected<Slices>,
    pub pods: &'c Projected<PodInfo>,
}

impl Sources<'_> {
    /// Service `ns/svc`'s selector, `None` when the Service does not exist.
    fn selector(&self, ns: &str, svc: &str) -> Option<Box<str>> {
        self.services
            .read()
            .get(&(ns.to_string(), svc.to_string()))
            .map(|i| i.selector.clone())
    }

    /// The endpoint slices of Service `ns/svc`.
    fn slices_of(&self, ns: &str, svc: &str) -> Vec<(ObjKey, Vec<SliceInfo>)> {
        self.slices
            .read()
            .iter()
            .filter(|((n, _), (s, _))| n == ns && s == svc)
            .map(|(k, (_, infos))| (k.clone(), infos.clone()))
            .collect()
    }
}

impl PodScope {
    /// Where refills are asked for (the pods watch's); without one the scope only filters.
    pub fn set_refills(&self, refills: Arc<Refills>) {
        let _ = self.refills.set(refills);
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether pod `namespace/name` with `labels` is named by the endpoints of a bound Service
    /// or selected by its selector.
    pub fn wants(
        &self,
        namespace: &str,
        name: &str,
        labels: Option<&BTreeMap<String, String>>,
    ) -> bool {
        let inner = self.inner.read().unwrap_or_else(|p| p.into_inner());
        let Some(scope) = inner.compiled.get(namespace) else {
            return false;
        };
        inner.refs.contains_key(&pod_hash(namespace, name))
            || labels.is_some_and(|l| scope.selects(l))
    }

    /// Binding `namespace/name` is an ip binding of Service `service`, or (`None`) not an ip
    /// binding or gone.
    pub fn set_binding(&self, namespace: &str, name: &str, service: Option<&str>, c: &Sources) {
        let mut inner = self.write();
        let before = inner
            .bindings
            .get(namespace)
            .and_then(|b| b.get(name))
            .cloned();
        if before.as_deref() == service {
            return;
        }
        match service {
            Some(svc) => {
                inner
                    .bindings
                    .entry(namespace.to_string())
                    .or_default()
                    .insert(name.to_string(), svc.to_string());
            }
            None => {
                let emptied = inner.bindings.get_mut(namespace).is_some_and(|b| {
                    b.remove(name);
                    b.is_empty()
                });
                if emptied {
                    inner.bindings.remove(namespace);
                }
            }
        }
        if let Some(old) = before {
            self.unbind(&mut inner, namespace, &old);
        }
        if let Some(svc) = service {
            self.bind(&mut inner, namespace, svc, c);
        }
    }

    /// Every ip binding, `(namespace, name, Service)` (a relist of the bindings).
    pub fn reset_bindings(&self, all: Vec<(String, String, String)>, c: &Sources) {
        let mut fresh: HashMap<String, HashMap<String, String>> = HashMap::new();
        for (ns, name, svc) in all {
            fresh.entry(ns).or_default().insert(name, svc);
        }
        let mut inner = self.write();
        let old = std::mem::replace(&mut inner.bindings, fresh);
        for (ns, bindings) in &old {
            for (name, svc) in bindings {
                let kept = inner.bindings.get(ns).and_then(|b| b.get(name)) == Some(svc);
                if !kept {
                    self.unbind(&mut inner, ns, svc);
                }
            }
        }
        let added: Vec<(String, String)> = inner
            .bindings
            .iter()
            .flat_map(|(ns, bindings)| {
                let before = old.get(ns);
                bindings
                    .iter()
                    .filter(move |(name, svc)| before.and_then(|b| b.get(*name)) != Some(*svc))
                    .map(move |(_, svc)| (ns.clone(), svc.clone()))
            })
            .collect();
        for (ns, svc) in added {
            self.bind(&mut inner, &ns, &svc, c);
        }
    }

    /// One more ip binding names Service `ns/svc`. The first one brings its endpoints into
    /// the scope and asks for the pods it now takes in.
    fn bind(&self, inner: &mut Inner, ns: &str, svc: &str, c: &Sources) {
        let scope = inner.compiled.entry(ns.to_string()).or_default();
        if let Some(b) = scope.services.get_mut(svc) {
            b.bindings += 1;
            return;
        }
        let selector = c.selector(ns, svc);
        if let Some(sel) = selector.as_deref() {
            scope.add_selector(sel);
        }
        scope.services.insert(
            svc.to_string(),
            Bound {
                bindings: 1,
                selector: selector.clone(),
            },
        );
        let slices = c.slices_of(ns, svc);
        for (key, infos) in &slices {
            inner.name(key, svc, &named_pods(infos));
        }
        self.grew(inner, ns, svc, selector.as_deref(), &slices, c);
    }

    /// One ip binding fewer names Service `ns/svc`. With the last one, its selector and
    /// endpoints leave the scope (the pods they kept stay until their next change).
    fn unbind(&self, inner: &mut Inner, ns: &str, svc: &str) {
        let Some(scope) = inner.compiled.get_mut(ns) else {
            return;
        };
        let Some(b) = scope.services.get_mut(svc) else {
            return;
        };
        b.bindings -= 1;
        if b.bindings > 0 {
            return;
        }
        if let Some(sel) = scope.services.remove(svc).and_then(|b| b.selector) {
            scope.remove_selector(&sel);
        }
        if scope.services.is_empty() {
            inner.compiled.remove(ns);
        }
        let slices: Vec<ObjKey> = inner
            .named
            .iter()
            .filter(|((n, _), (s, _))| n == ns && s == svc)
            .map(|(k, _)| k.clone())
            .collect();
        slices.iter().for_each(|k| inner.unname(k));
    }

    /// Service `namespace/name` changed (or came or went) in the Service cache.
    pub fn service_changed(&self, namespace: &str, name: &str, c: &Sources) {
        let mut inner = self.write();
        let Some(scope) = inner.compiled.get_mut(namespace) else {
            return;
        };
        let Some(b) = scope.services.get_mut(name) else {
            return;
        };
        let selector = c.selector(namespace, name);
        if b.selector == selector {
            return;
        }
        let old = std::mem::replace(&mut b.selector, selector.clone());
        if let Some(old) = old.as_deref() {
            scope.remove_selector(old);
        }
        if let Some(new) = selector.as_deref() {
            scope.add_selector(new);
        }
        let slices = c.slices_of(namespace, name);
        self.grew(&mut inner, namespace, name, selector.as_deref(), &slices, c);
    }

    /// Endpoint slice `key` changed (`new`: what it is now; `None`: gone), in the slice cache.
    /// The pods it names that are not kept are refilled when its Service selects by no selector.
    /// A Service that selects keeps its pods from their first event, before any endpoint names
    /// them; a few it names and does not select (their labels changed, or endpoints written by
    /// hand) are refilled by name once the pods have listed (before, the cache is still empty).
    pub fn slice_changed(&self, key: &ObjKey, new: Option<&Slices>, c: &Sources) {
        let mut inner = self.write();
        inner.unname(key);
        let Some((svc, slices)) = new else {
            return;
        };
        let Some(bound) = inner.bound(&key.0, svc) else {
            return;
        };
        let selector = bound.selector.clone();
        let pods = named_pods(slices);
        inner.name(key, svc, &pods);
        match selector.as_deref() {
            None => {}
            Some("") => self.refill_missing(&mut inner, &key.0, svc, &pods, c, true),
            Some(_) if c.pods.is_synced() => {
                self.refill_missing(&mut inner, &key.0, svc, &pods, c, false)
            }
            Some(_) => {}
        }
    }

    /// Bound Service `ns/svc` came into the scope or changed its selector to `selector`: asks
    /// for the pods it now takes in (those its selector selects, and those its endpoints
    /// `slices` name that are not kept; none while it does not exist).
    fn grew(
        &self,
        inner: &mut Inner,
        ns: &str,
        svc: &str,
        selector: Option<&str>,
        slices: &[(ObjKey, Vec<SliceInfo>)],
        c: &Sources,
    ) {
        let pods: BTreeSet<&str> = slices
            .iter()
            .flat_map(|(_, infos)| named_pods(infos))
            .collect();
        match selector {
            None => {}
            Some("") => self.refill_missing(inner, ns, svc, &pods, c, true),
            Some(selector) => {
                let Some(refills) = self.refills.get() else {
                    return;
                };
                inner.pending.retain(|_, t| !refills.is_done(*t));
                if let Some(ticket) = refills.request(ns, selector, "") {
                    inner.wait_for(ns, svc, ticket);
                }
                // And the few its endpoints name that its selector may not select.
                self.refill_missing(inner, ns, svc, &pods, c, false);
            }
        }
    }

    /// Asks for the pods of `pods` the pod cache does not hold (their events came while no
    /// bound Service named them), for Service `ns/svc`'s reconciles to wait on: by name when
    /// they are few; when many, the whole namespace if `many_too`, else none (a selecting
    /// Service's selector refill brings those).
    fn refill_missing(
        &self,
        inner: &mut Inner,
        ns: &str,
        svc: &str,
        pods: &BTreeSet<&str>,
        c: &Sources,
        many_too: bool,
    ) {
        let Some(refills) = self.refills.get() else {
            return;
        };
        inner.pending.retain(|_, t| !refills.is_done(*t));
        let missing: Vec<&str> = {
            let kept = c.pods.read();
            pods.iter()
                .copied()
                .filter(|p| !kept.contains_key(&(ns.to_string(), p.to_string())))
                .collect()
        };
        let ticket = if missing.len() > REFILL_BY_NAME {
            if !many_too {
                return;
            }
            refills.request(ns, "", "")
        } else {
            missing
                .iter()
                .filter_map(|p| refills.request(ns, "", &format!("metadata.name={p}")))
                .max()
        };
        if let Some(ticket) = ticket {
            inner.wait_for(ns, svc, ticket);
        }
    }

    /// Returns once the pods of Service `namespace/service` have been brought in (at once
    /// unless a refill of them is under way).
    pub async fn covered(&self, namespace: &str, service: &str) {
        let ticket = {
            let inner = self.inner.read().unwrap_or_else(|p| p.into_inner());
            inner
                .pending
                .get(&(namespace.to_string(), service.to_string()))
                .copied()
        };
        let (Some(ticket), Some(refills)) = (ticket, self.refills.get()) else {
            return;
        };
        if tokio::time::timeout(COVERED_WAIT, refills.wait(ticket))
            .await
            .is_err()
        {
            tracing::warn!(
                namespace,
                service,
                "the pods of this Service were not refilled in time; reconciling with the pods at hand"
            );
        }
    }
}

#[cfg(test)]
#[path = "scope_tests.rs"]
mod tests;
