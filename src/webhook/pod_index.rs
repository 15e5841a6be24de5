//! In-memory indexes the pod mutator answers from: ip TargetGroupBindings and Service selectors
//! per namespace, fed by watches. A pod waiting on admission never waits on an API call.
//!
//! Only the fields the mutator reads are kept (binding name, target type, Service name; Service
//! selector), so thousands of objects cost kilobytes, not whole cached objects.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::crd::names::GATE_PREFIX;

/// What the mutator needs of a TargetGroupBinding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingEntry {
    /// `spec.targetType`, if set.
    pub target_type: Option<String>,
    /// `spec.serviceRef.name`.
    pub service: String,
}

/// `spec.selector` of a Service (empty selects nothing, as upstream), as the feeds hand it in.
pub type Selector = Box<[(String, String)]>;

/// A selector as kept: each key and value followed by a NUL (neither can hold one: the API
/// server validates selectors as labels), in one allocation. Every Service's is kept (a
/// binding may name any Service later); a list of string pairs cost three allocations and a
/// 48-byte slot per pair, ~70 bytes more per Service.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Packed(Box<str>);

impl Packed {
    fn of(selector: &[(String, String)]) -> Packed {
        let mut s = String::new();
        for (k, v) in selector {
            s.push_str(k);
            s.push('\0');
            s.push_str(v);
            s.push('\0');
        }
        Packed(s.into_boxed_str())
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn pairs(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        let mut parts = self.0.split_terminator('\0');
        std::iter::from_fn(move || Some((parts.next()?, parts.next()?)))
    }
}

/// namespace → service name → selector.
type ServiceMap = HashMap<String, HashMap<Box<str>, Packed>>;

#[derive(Debug, Default)]
struct Sources {
    /// namespace → binding name → entry; BTreeMap keeps upstream's name order for gate order.
    bindings: HashMap<String, BTreeMap<String, BindingEntry>>,
    services: ServiceMap,
}

fn insert_service(map: &mut ServiceMap, namespace: &str, name: &str, selector: Packed) {
    let name: Box<str> = name.into();
    if let Some(ns) = map.get_mut(namespace) {
        ns.insert(name, selector);
    } else {
        map.entry(namespace.to_string())
            .or_default()
            .insert(name, selector);
    }
}

/// Start and end of a text in [`Compiled::text`].
type Span = (u32, u32);

/// What [`PodGateIndex::gates_for`] reads of one namespace, rebuilt whenever a binding or
/// Service in it changes: only the candidates (`ip` bindings whose Service exists with a
/// non-empty selector), their gate condition types and selector pairs in three contiguous
/// allocations. Why: admissions arrive a millisecond or more apart, and a request finds the
/// index cold; walking per-binding strings, a Service map and boxed selectors cost a cache miss
/// per pointer, several microseconds per pod.
#[derive(Debug)]
struct Compiled {
    /// Gate condition types and selector keys and values, back to back.
    text: Box<str>,
    /// Per candidate binding, in name order: its gate and the range of its pairs in `pairs`.
    gates: Box<[(Span, u32, u32)]>,
    /// Selector pairs (key, value).
    pairs: Box<[(Span, Span)]>,
}

impl Compiled {
    /// The namespace's candidates, or `None` when it has none.
    fn of(
        bindings: Option<&BTreeMap<String, BindingEntry>>,
        services: Option<&HashMap<Box<str>, Packed>>,
    ) -> Option<Compiled> {
        let (bindings, services) = (bindings?, services?);
        let (mut text, mut gates, mut pairs) = (String::new(), Vec::new(), Vec::new());
        fn push(text: &mut String, s: &str) -> Span {
            let start = text.len() as u32;
            text.push_str(s);
            (start, text.len() as u32)
        }
        for (name, b) in bindings {
            if b.target_type.as_deref() != Some("ip") {
                continue;
            }
            let Some(selector) = services.get(b.service.as_str()).filter(|s| !s.is_empty()) else {
                continue;
            };
            let start = text.len() as u32;
            text.push_str(GATE_PREFIX);
            text.push_str(name);
            let gate = (start, text.len() as u32);
            let first = pairs.len() as u32;
            for (k, v) in selector.pairs() {
                let k = push(&mut text, k);
                let v = push(&mut text, v);
                pairs.push((k, v));
            }
            gates.push((gate, first, pairs.len() as u32));
        }
        (!gates.is_empty()).then(|| Compiled {
            text: text.into_boxed_str(),
            gates: gates.into_boxed_slice(),
            pairs: pairs.into_boxed_slice(),
        })
    }

    fn at(&self, (start, end): Span) -> &str {
        &self.text[start as usize..end as usize]
    }
}

/// Shared, watch-fed index. Cheap to clone.
///
/// Writers (the watch feeds) update the sources under a mutex of their own and swap the
/// namespace's [`Compiled`] in; readers (admissions) only ever take the read lock of the
/// compiled map, for a lookup.
#[derive(Clone, Debug, Default)]
pub struct PodGateIndex {
    sources: Arc<Mutex<Sources>>,
    compiled: Arc<RwLock<HashMap<Box<str>, Compiled>>>,
    /// The Services of a relist in progress (taken one at a time), swapped in when it completes.
    relisting_services: Arc<Mutex<ServiceMap>>,
    bindings_synced: Arc<AtomicBool>,
    services_synced: Arc<AtomicBool>,
}

impl PodGateIndex {
    /// Runs `change` on the sources, then recompiles `namespace`.
    fn change(&self, namespace: &str, change: impl FnOnce(&mut Sources)) {
        let mut sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        change(&mut sources);
        let compiled = Compiled::of(
            sources.bindings.get(namespace),
            sources.services.get(namespace),
        );
        let mut map = self.compiled.write().expect("index lock");
        match compiled {
            Some(c) => drop(map.insert(namespace.into(), c)),
            None => drop(map.remove(namespace)),
        }
    }

    /// Recompiles every namespace (after a relist).
    fn recompile_all(sources: &Sources) -> HashMap<Box<str>, Compiled> {
        sources
            .bindings
            .iter()
            .filter_map(|(ns, b)| {
                let c = Compiled::of(Some(b), sources.services.get(ns))?;
                Some((ns.as_str().into(), c))
            })
            .collect()
    }

    pub fn upsert_binding(&self, namespace: &str, name: &str, entry: BindingEntry) {
        self.change(namespace, |s| {
            let name = name.to_string();
            match s.bindings.get_mut(namespace) {
                Some(ns) => ns.insert(name, entry),
                None => s
                    .bindings
                    .entry(namespace.to_string())
                    .or_default()
                    .insert(name, entry),
            };
        });
    }

    pub fn remove_binding(&self, namespace: &str, name: &str) {
        self.change(namespace, |s| {
            if let Some(ns) = s.bindings.get_mut(namespace) {
                ns.remove(name);
                if ns.is_empty() {
                    s.bindings.remove(namespace);
                }
            }
        });
    }

    pub fn upsert_service(&self, namespace: &str, name: &str, selector: Selector) {
        let selector = Packed::of(&selector);
        self.change(namespace, |s| {
            insert_service(&mut s.services, namespace, name, selector)
        });
    }

    pub fn remove_service(&self, namespace: &str, name: &str) {
        self.change(namespace, |s| {
            if let Some(ns) = s.services.get_mut(namespace) {
                ns.remove(name);
                if ns.is_empty() {
                    s.services.remove(namespace);
                }
            }
        });
    }

    /// Replaces every binding (a watch relist), keeping readers consistent.
    pub fn reset_bindings(&self, all: Vec<(String, String, BindingEntry)>) {
        let mut map: HashMap<String, BTreeMap<String, BindingEntry>> = HashMap::new();
        for (ns, name, entry) in all {
            map.entry(ns).or_default().insert(name, entry);
        }
        let mut sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        sources.bindings = map;
        let compiled = Self::recompile_all(&sources);
        *self.compiled.write().expect("index lock") = compiled;
        self.bindings_synced.store(true, Ordering::Release);
    }

    /// Replaces every Service (a watch relist).
    pub fn reset_services(&self, all: Vec<(String, String, Selector)>) {
        let mut map = ServiceMap::new();
        for (ns, name, sel) in all {
            insert_service(&mut map, &ns, &name, Packed::of(&sel));
        }
        self.replace_services(map);
    }

    /// A relist of Services starts (again, if one was cut short): nothing staged.
    pub fn services_relist_begin(&self) {
        self.relisting_services
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// One Service of the relist in progress (not visible until it completes).
    pub fn services_relist_apply(&self, namespace: &str, name: &str, selector: Selector) {
        let mut staged = self
            .relisting_services
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        insert_service(&mut staged, namespace, name, Packed::of(&selector));
    }

    /// The relist completed: what was staged is every Service.
    pub fn services_relist_end(&self) {
        let map = std::mem::take(
            &mut *self
                .relisting_services
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        self.replace_services(map);
    }

    fn replace_services(&self, map: ServiceMap) {
        let mut sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        sources.services = map;
        let compiled = Self::recompile_all(&sources);
        *self.compiled.write().expect("index lock") = compiled;
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
        let map = self.compiled.read().expect("index lock");
        let Some(c) = map.get(namespace) else {
            return Vec::new();
        };
        c.gates
            .iter()
            .filter(|(_, first, end)| {
                c.pairs[*first as usize..*end as usize]
                    .iter()
                    .all(|(k, v)| label(c.at(*k)) == Some(c.at(*v)))
            })
            .map(|(gate, _, _)| c.at(*gate).to_string())
            .collect()
    }

    /// Number of indexed bindings and services (for metrics and benchmarks).
    pub fn sizes(&self) -> (usize, usize) {
        let sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        (
            sources.bindings.values().map(BTreeMap::len).sum(),
            sources.services.values().map(HashMap::len).sum(),
        )
    }
}

#[cfg(test)]
#[path = "pod_index_tests.rs"]
mod tests;
