//! Watch-fed caches of projected Pods, Nodes, Services and EndpointSlices, and the index of
//! which bindings looked at which pod. Each cache is a [`watch::Index`](crate::watch::Index)
//! of its kind and calls back with (old, new) projections so the controller can enqueue exactly
//! the bindings a change concerns.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};
use std::time::Duration;

use kube::{Resource, ResourceExt};

use crate::watch::Index;

use super::info::{NodeInfo, PodInfo, ServiceInfo, SliceInfo};
use super::scope::{PodScope, Sources};

/// `(namespace, name)`; namespace is empty for cluster-scoped objects.
pub type ObjKey = (String, String);

/// One projected cache.
#[derive(Debug)]
pub struct Projected<V> {
    map: RwLock<HashMap<ObjKey, V>>,
    synced: AtomicBool,
}

impl<V> Default for Projected<V> {
    fn default() -> Self {
        Self {
            map: RwLock::new(HashMap::new()),
            synced: AtomicBool::new(false),
        }
    }
}

impl<V: Clone + PartialEq> Projected<V> {
    pub fn read(&self) -> RwLockReadGuard<'_, HashMap<ObjKey, V>> {
        self.map.read().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, ns: &str, name: &str) -> Option<V> {
        self.read()
            .get(&(ns.to_string(), name.to_string()))
            .cloned()
    }

    pub fn is_synced(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }

    /// Inserts (`Some`) or removes (`None`) and returns the old value when something changed.
    fn set(&self, key: ObjKey, v: Option<V>) -> Option<(Option<V>, Option<V>)> {
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        let old = match &v {
            Some(v) => map.insert(key, v.clone()),
            None => map.remove(&key),
        };
        (old != v).then_some((old, v))
    }

    /// Replaces everything (a relist) and returns the changes.
    fn replace(&self, new: HashMap<ObjKey, V>) -> Vec<(ObjKey, Option<V>, Option<V>)> {
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        let old = std::mem::replace(&mut *map, new);
        let mut changes = Vec::new();
        for (k, v) in map.iter() {
            if old.get(k) != Some(v) {
                changes.push((k.clone(), old.get(k).cloned(), Some(v.clone())));
            }
        }
        for (k, v) in old {
            if !map.contains_key(&k) {
                changes.push((k, Some(v), None));
            }
        }
        changes
    }
}

/// All caches the reconciler reads.
#[derive(Debug, Default)]
pub struct Caches {
    pub pods: Projected<PodInfo>,
    pub nodes: Projected<NodeInfo>,
    pub services: Projected<ServiceInfo>,
    /// Keyed by EndpointSlice (or Endpoints object); the value carries the Service name.
    pub slices: Projected<(String, Vec<SliceInfo>)>,
    pub index: PodIndex,
    /// Which pods are kept (see `scope`).
    pub scope: PodScope,
    /// `namespace/name` of the bindings present in the cluster that do not decode (a value
    /// these types do not know, e.g. from a newer CRD), with the decode error: they count as
    /// present, never as gone, and their reconciles say so in a Warning event.
    pub undecodable: std::sync::Mutex<std::collections::BTreeMap<String, String>>,
    /// The decode error each of those bindings was last warned about: one Warning per error,
    /// not one per reconcile (a binding reconciles on every endpoint change).
    pub undecodable_warned: std::sync::Mutex<std::collections::BTreeMap<String, String>>,
}

impl Caches {
    /// The decode error of binding `key` when it has not been warned about yet (then
    /// remembered as warned); a binding that decodes again is forgotten, so a later failure is
    /// said again.
    pub fn undecodable_news(&self, key: &str) -> Option<String> {
        let error = self
            .undecodable
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned();
        let mut warned = self
            .undecodable_warned
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match error {
            None => {
                warned.remove(key);
                None
            }
            Some(e) if warned.get(key) == Some(&e) => None,
            Some(e) => {
                warned.insert(key.to_string(), e.clone());
                Some(e)
            }
        }
    }

    /// The caches the pod scope reads.
    pub fn scope_sources(&self) -> Sources<'_> {
        Sources {
            services: &self.services,
            slices: &self.slices,
            pods: &self.pods,
        }
    }

    pub fn all_synced(&self) -> bool {
        self.pods.is_synced()
            && self.nodes.is_synced()
            && self.services.is_synced()
            && self.slices.is_synced()
    }

    pub async fn wait_synced(&self) {
        while !self.all_synced() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Projected slices of one Service.
    pub fn slices_of(&self, ns: &str, svc: &str) -> Vec<SliceInfo> {
        self.slices
            .read()
            .iter()
            .filter(|((n, _), (s, _))| n == ns && s == svc)
            .flat_map(|(_, (_, infos))| infos.iter().cloned())
            .collect()
    }
}

/// Which bindings referenced which pods at their last reconcile, so a pod change (deletion
/// started, containers ready) reaches the bindings whose Service selects it.
#[derive(Debug, Default)]
pub struct PodIndex {
    inner: Mutex<PodIndexInner>,
}

#[derive(Debug, Default)]
struct PodIndexInner {
    by_pod: HashMap<ObjKey, BTreeSet<String>>,
    by_binding: HashMap<ObjKey, Vec<String>>,
}

impl PodIndex {
    pub fn set(&self, ns: &str, binding: &str, pods: Vec<String>) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let bkey = (ns.to_string(), binding.to_string());
        for p in g.by_binding.remove(&bkey).unwrap_or_default() {
            let pkey = (ns.to_string(), p);
            if let Some(set) = g.by_pod.get_mut(&pkey) {
                set.remove(binding);
                if set.is_empty() {
                    g.by_pod.remove(&pkey);
                }
            }
        }
        for p in &pods {
            g.by_pod
                .entry((ns.to_string(), p.clone()))
                .or_default()
                .insert(binding.to_string());
        }
        if !pods.is_empty() {
            g.by_binding.insert(bkey, pods);
        }
    }

    /// Whether some binding's last reconcile referenced the pod.
    pub fn references(&self, ns: &str, pod: &str) -> bool {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.by_pod.contains_key(&(ns.to_string(), pod.to_string()))
    }

    pub fn bindings_of(&self, ns: &str, pod: &str) -> Vec<String> {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.by_pod
            .get(&(ns.to_string(), pod.to_string()))
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// Feeds one projected cache from its kind's watch; `on_change(key, old, new)` is called after
/// each change is visible (also for the changes a relist brings).
pub struct Feed<K, V> {
    caches: Arc<Caches>,
    pick: fn(&Caches) -> &Projected<V>,
    project: Project<K, V>,
    on_change: OnChange<V>,
    /// The projections of a relist in progress, swapped in whole when it completes.
    relisting: Mutex<HashMap<ObjKey, V>>,
}

/// What a cache change triggers.
pub type OnChange<V> = Box<dyn Fn(&ObjKey, Option<&V>, Option<&V>) + Send + Sync>;

/// The projection of an object (`None`: not kept); a closure, since the pod projection depends
/// on a flag (`--quic-environment-variable-name`).
pub type Project<K, V> = Box<dyn Fn(&K) -> Option<V> + Send + Sync>;

fn key_of<K: Resource>(o: &K) -> ObjKey {
    (o.namespace().unwrap_or_default(), o.name_any())
}

impl<K, V> Feed<K, V>
where
    K: Resource,
    V: Clone + PartialEq,
{
    pub fn new(
        caches: Arc<Caches>,
        pick: fn(&Caches) -> &Projected<V>,
        project: impl Fn(&K) -> Option<V> + Send + Sync + 'static,
        on_change: OnChange<V>,
    ) -> Self {
        Self {
            caches,
            pick,
            project: Box::new(project),
            on_change,
            relisting: Mutex::new(HashMap::new()),
        }
    }

    /// `fresh` is now everything that exists; calls back for each difference.
    fn replace_all(&self, fresh: HashMap<ObjKey, V>) {
        let cache = (self.pick)(&self.caches);
        let changes = cache.replace(fresh);
        cache.synced.store(true, Ordering::Release);
        for (k, old, new) in changes {
            (self.on_change)(&k, old.as_ref(), new.as_ref());
        }
    }

    fn set(&self, o: &K, v: Option<V>) {
        let k = key_of(o);
        if let Some((old, new)) = (self.pick)(&self.caches).set(k.clone(), v) {
            (self.on_change)(&k, old.as_ref(), new.as_ref());
        }
    }
}

impl<K, V> Index<K> for Feed<K, V>
where
    K: Resource + Send + Sync,
    V: Clone + PartialEq + Send + Sync,
{
    fn apply(&self, obj: &Arc<K>) {
        self.set(obj, (self.project)(obj.as_ref()));
    }

    fn delete(&self, obj: &Arc<K>) {
        self.set(obj, None);
    }

    fn reset(&self, objs: &[Arc<K>]) {
        let fresh = objs
            .iter()
            .filter_map(|o| (self.project)(o.as_ref()).map(|v| (key_of(o.as_ref()), v)))
            .collect();
        self.replace_all(fresh);
    }

    // Only the projection of each listed object is kept: the full objects of a large first
    // list (13,000 Pods) are dropped as they arrive.
    fn streams_relist(&self) -> bool {
        true
    }

    fn relist_begin(&self) {
        self.relisting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    fn relist_apply(&self, obj: &Arc<K>) {
        if let Some(v) = (self.project)(obj.as_ref()) {
            self.relisting
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key_of(obj.as_ref()), v);
        }
    }

    fn relist_end(&self) {
        let fresh = std::mem::take(&mut *self.relisting.lock().unwrap_or_else(|p| p.into_inner()));
        self.replace_all(fresh);
    }
}

/// The pod projection, `None` (not kept) for a pod no binding may read: one without a
/// target-health readiness gate, referenced by no binding's last reconcile, and neither named
/// by the endpoints of nor selected by a Service an ip binding of its namespace names (see
/// `scope`). `quic_env` is `--quic-environment-variable-name`.
pub fn project_pod(
    quic_env: String,
    caches: Arc<Caches>,
) -> impl Fn(&k8s_openapi::api::core::v1::Pod) -> Option<PodInfo> + Send + Sync + 'static {
    move |p: &k8s_openapi::api::core::v1::Pod| {
        let ns = p.namespace().unwrap_or_default();
        let name = p.name_any();
        let kept = has_health_gate(p)
            || caches.scope.wants(&ns, &name, p.metadata.labels.as_ref())
            || caches.index.references(&ns, &name);
        kept.then(|| PodInfo::from_pod(p, &quic_env))
    }
}

/// Whether the pod has a readiness gate of a target-health type (such a pod is kept whatever
/// selects it: the gates of a deleted binding are released from the cache).
fn has_health_gate(p: &k8s_openapi::api::core::v1::Pod) -> bool {
    p.spec
        .iter()
        .flat_map(|s| s.readiness_gates.iter().flatten())
        .any(|g| {
            super::info::GATE_PREFIXES
                .iter()
                .any(|pre| g.condition_type.starts_with(pre))
        })
}

pub fn project_node(n: &k8s_openapi::api::core::v1::Node) -> Option<NodeInfo> {
    Some(NodeInfo::from_node(n))
}

pub fn project_service(s: &k8s_openapi::api::core::v1::Service) -> Option<ServiceInfo> {
    Some(ServiceInfo::from_service(s))
}

pub fn project_slice(
    s: &k8s_openapi::api::discovery::v1::EndpointSlice,
) -> Option<(String, Vec<SliceInfo>)> {
    SliceInfo::from_slice(s).map(|(svc, info)| (svc, vec![info]))
}

/// An Endpoints object is named after its Service.
pub fn project_endpoints(
    e: &k8s_openapi::api::core::v1::Endpoints,
) -> Option<(String, Vec<SliceInfo>)> {
    Some((e.name_any(), SliceInfo::from_endpoints(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decode_error_is_news_once_until_it_changes_or_the_binding_decodes_again() {
        let c = Caches::default();
        let set = |e: Option<&str>| {
            let mut u = c.undecodable.lock().unwrap();
            match e {
                Some(e) => u.insert("ns/web".into(), e.into()),
                None => u.remove("ns/web"),
            };
        };
        assert_eq!(c.undecodable_news("ns/web"), None);
        set(Some("unknown variant `a`"));
        assert_eq!(
            c.undecodable_news("ns/web").as_deref(),
            Some("unknown variant `a`")
        );
        assert_eq!(c.undecodable_news("ns/web"), None, "said once");
        set(Some("unknown variant `b`"));
        assert_eq!(
            c.undecodable_news("ns/web").as_deref(),
            Some("unknown variant `b`")
        );
        set(None);
        assert_eq!(c.undecodable_news("ns/web"), None);
        set(Some("unknown variant `b`"));
        assert_eq!(
            c.undecodable_news("ns/web").as_deref(),
            Some("unknown variant `b`"),
            "said again after decoding in between"
        );
    }
}
