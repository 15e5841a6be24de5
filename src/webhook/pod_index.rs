//! In-memory indexes the pod mutator answers from: ip TargetGroupBindings and Service selectors
//! per namespace, fed by watches. A pod waiting on admission never waits on an API call.
//!
//! Only the fields the mutator reads are kept (binding name, target type, Service name; Service
//! selector), so thousands of objects cost kilobytes, not whole cached objects.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// What the mutator needs of a TargetGroupBinding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingEntry {
    /// `spec.targetType`, if set.
    pub target_type: Option<String>,
    /// `spec.serviceRef.name`.
    pub service: String,
}

/// `spec.selector` of a Service (empty selects nothing, as upstream).
/// Kept as an exact-size list: a map node would hold room for eleven pairs per Service.
pub type Selector = Box<[(String, String)]>;

#[derive(Debug, Default)]
struct Inner {
    /// namespace → binding name → entry; BTreeMap keeps upstream's name order for gate order.
    bindings: HashMap<String, BTreeMap<String, BindingEntry>>,
    /// namespace → service name → selector.
    services: HashMap<String, HashMap<String, Selector>>,
}

/// Shared, watch-fed index. Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct PodGateIndex {
    inner: Arc<RwLock<Inner>>,
    bindings_synced: Arc<AtomicBool>,
    services_synced: Arc<AtomicBool>,
}

impl PodGateIndex {
    pub fn upsert_binding(&self, namespace: &str, name: &str, entry: BindingEntry) {
        let name = name.to_string();
        let mut inner = self.inner.write().expect("index lock");
        match inner.bindings.get_mut(namespace) {
            Some(ns) => ns.insert(name, entry),
            None => inner
                .bindings
                .entry(namespace.to_string())
                .or_default()
                .insert(name, entry),
        };
    }

    pub fn remove_binding(&self, namespace: &str, name: &str) {
        let mut inner = self.inner.write().expect("index lock");
        if let Some(ns) = inner.bindings.get_mut(namespace) {
            ns.remove(name);
            if ns.is_empty() {
                inner.bindings.remove(namespace);
            }
        }
    }

    pub fn upsert_service(&self, namespace: &str, name: &str, selector: Selector) {
        let name = name.to_string();
        let mut inner = self.inner.write().expect("index lock");
        match inner.services.get_mut(namespace) {
            Some(ns) => ns.insert(name, selector),
            None => inner
                .services
                .entry(namespace.to_string())
                .or_default()
                .insert(name, selector),
        };
    }

    pub fn remove_service(&self, namespace: &str, name: &str) {
        let mut inner = self.inner.write().expect("index lock");
        if let Some(ns) = inner.services.get_mut(namespace) {
            ns.remove(name);
            if ns.is_empty() {
                inner.services.remove(namespace);
            }
        }
    }

    /// Replaces every binding (a watch relist), keeping readers consistent.
    pub fn reset_bindings(&self, all: Vec<(String, String, BindingEntry)>) {
        let mut map: HashMap<String, BTreeMap<String, BindingEntry>> = HashMap::new();
        for (ns, name, entry) in all {
            map.entry(ns).or_default().insert(name, entry);
        }
        self.inner.write().expect("index lock").bindings = map;
        self.bindings_synced.store(true, Ordering::Release);
    }

    /// Replaces every Service (a watch relist).
    pub fn reset_services(&self, all: Vec<(String, String, Selector)>) {
        let mut map: HashMap<String, HashMap<String, Selector>> = HashMap::new();
        for (ns, name, sel) in all {
            map.entry(ns).or_default().insert(name, sel);
        }
        self.inner.write().expect("index lock").services = map;
        self.services_synced.store(true, Ordering::Release);
    }

    /// Both watches have delivered their initial list.
    pub fn synced(&self) -> bool {
        self.bindings_synced.load(Ordering::Acquire) && self.services_synced.load(Ordering::Acquire)
    }

    /// Gate condition types for a pod with `labels` in `namespace`, in binding-name order:
    /// every `ip` binding whose Service exists and whose non-empty selector the labels satisfy.
    /// `label` looks a label up by key on the pod as sent (no copy of its labels is made).
    pub fn gates_for<'l>(
        &self,
        namespace: &str,
        label: impl Fn(&str) -> Option<&'l str>,
    ) -> Vec<String> {
        let inner = self.inner.read().expect("index lock");
        let Some(bindings) = inner.bindings.get(namespace) else {
            return Vec::new();
        };
        let services = inner.services.get(namespace);
        bindings
            .iter()
            .filter(|(_, b)| b.target_type.as_deref() == Some("ip"))
            .filter(|(_, b)| {
                services
                    .and_then(|s| s.get(&b.service))
                    .is_some_and(|selector| {
                        !selector.is_empty()
                            && selector.iter().all(|(k, v)| label(k) == Some(v.as_str()))
                    })
            })
            .map(|(name, _)| format!("{}{name}", super::pod_readiness::GATE_PREFIX))
            .collect()
    }

    /// Number of indexed bindings and services (for metrics and benchmarks).
    pub fn sizes(&self) -> (usize, usize) {
        let inner = self.inner.read().expect("index lock");
        (
            inner.bindings.values().map(BTreeMap::len).sum(),
            inner.services.values().map(HashMap::len).sum(),
        )
    }
}
