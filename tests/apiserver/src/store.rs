//! Object storage: one global resourceVersion counter, objects as `serde_json::Value` keyed by
//! (group, plural) and (namespace, name), a bounded event history for watches resuming from a
//! resourceVersion, and a broadcast channel that fans events out to watchers without ever
//! blocking a writer (a watcher that falls behind is dropped, as the real apiserver does).
//!
//! Reads and writes name the resource they serve and get and give its objects as it serves
//! them; the store keeps them in their stored form ([`ResourceDef::to_stored`]), which watch
//! events carry.

use crate::error::{ApiError, ApiResult};
use crate::resources::{ResourceDef, StorageKey};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::broadcast;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, shared by every watcher that sees it.
#[derive(Debug)]
pub struct WatchEvent {
    pub kind: EventType,
    pub key: StorageKey,
    pub rv: u64,
    pub object: Arc<Value>,
    /// The state before a MODIFIED event, so selector watches can turn it into ADDED/DELETED.
    pub prev: Option<Arc<Value>>,
}

/// What the broadcast channel carries: an event, or "every open watch is now too old".
#[derive(Debug, Clone)]
pub enum Broadcast {
    Event(Arc<WatchEvent>),
    Expire(u64),
}

type Objects = BTreeMap<(String, String), Arc<Value>>;

struct Inner {
    rv: u64,
    objects: HashMap<StorageKey, Objects>,
    history: VecDeque<Arc<WatchEvent>>,
    /// Watches and continues from a resourceVersion below this one get 410 Gone.
    compacted: u64,
}

pub struct Store {
    inner: Mutex<Inner>,
    tx: broadcast::Sender<Broadcast>,
    history_cap: usize,
}

/// Where a watch starts: `Now` sends the current objects as ADDED first (resourceVersion unset
/// or "0"), `From(rv)` replays the history after `rv`.
#[derive(Debug, Clone, Copy)]
pub enum WatchStart {
    Now,
    From(u64),
}

pub struct WatchSetup {
    pub initial: Vec<Arc<WatchEvent>>,
    pub rv: u64,
    pub rx: broadcast::Receiver<Broadcast>,
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub fn object_rv(obj: &Value) -> Option<u64> {
    meta_str(obj, "resourceVersion").parse().ok()
}

fn set_rv(obj: &mut Value, rv: u64) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("resourceVersion".into(), Value::String(rv.to_string()));
    }
}

impl Store {
    pub fn new(history_cap: usize) -> Self {
        let (tx, _) = broadcast::channel(65_536);
        Store {
            inner: Mutex::new(Inner {
                rv: 1,
                objects: HashMap::new(),
                history: VecDeque::new(),
                compacted: 0,
            }),
            tx,
            history_cap: history_cap.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave half-written state (every write is one
        // insert or remove), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn current_rv(&self) -> u64 {
        self.lock().rv
    }

    pub fn compacted_rv(&self) -> u64 {
        self.lock().compacted
    }

    pub fn get(&self, def: &ResourceDef, ns: &str, name: &str) -> Option<Arc<Value>> {
        let inner = self.lock();
        let stored = inner
            .objects
            .get(&def.storage_key())?
            .get(&(ns.to_string(), name.to_string()))?;
        Some(def.served(stored))
    }

    /// One page of a list: the objects `keep` accepts after the key `after` (from the start
    /// when `None`), sorted by namespace and name, at most `limit`; with how many more `keep`
    /// accepts after the page, and the resourceVersion of that state. Each page walks only the
    /// objects after its start (never copying the whole list), so a client paging through
    /// 300,000 pods 500 at a time does linear work in all, not quadratic.
    pub fn list_page(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        after: Option<(String, String)>,
        keep: impl Fn(&Value) -> bool,
        limit: usize,
    ) -> (Vec<Arc<Value>>, usize, u64) {
        use std::ops::Bound;
        let inner = self.lock();
        let Some(objs) = inner.objects.get(&def.storage_key()) else {
            return (Vec::new(), 0, inner.rv);
        };
        let lower = match after {
            Some(key) => Bound::Excluded(key),
            None => match ns {
                Some(ns) => Bound::Included((ns.to_string(), String::new())),
                None => Bound::Unbounded,
            },
        };
        let mut rest = objs
            .range((lower, Bound::Unbounded))
            .take_while(|((n, _), _)| ns.is_none_or(|ns| n == ns))
            // Selectors see the object as served (core Events are served as events.k8s.io).
            .map(|(_, v)| def.served(v))
            .filter(|v| keep(v));
        let page = rest.by_ref().take(limit).collect();
        let remaining = rest.count();
        (page, remaining, inner.rv)
    }

    /// Every object of a resource (in one namespace when `ns` is given), sorted by
    /// namespace and name, with the resourceVersion of that state.
    pub fn list(&self, def: &ResourceDef, ns: Option<&str>) -> (Vec<Arc<Value>>, u64) {
        let inner = self.lock();
        let items = match inner.objects.get(&def.storage_key()) {
            None => Vec::new(),
            Some(objs) => match ns {
                Some(ns) => objs
                    .range((ns.to_string(), String::new())..)
                    .take_while(|((n, _), _)| n == ns)
                    .map(|(_, v)| def.served(v))
                    .collect(),
                None => objs.values().map(|v| def.served(v)).collect(),
            },
        };
        (items, inner.rv)
    }

    fn emit(
        &self,
        inner: &mut Inner,
        kind: EventType,
        key: StorageKey,
        object: Arc<Value>,
        prev: Option<Arc<Value>>,
    ) {
        let ev = Arc::new(WatchEvent {
            kind,
            key,
            rv: inner.rv,
            object,
            prev,
        });
        inner.history.push_back(ev.clone());
        while inner.history.len() > self.history_cap {
            if let Some(old) = inner.history.pop_front() {
                inner.compacted = inner.compacted.max(old.rv);
            }
        }
        // No receivers is fine: nobody is watching.
        let _ = self.tx.send(Broadcast::Event(ev));
    }

    pub fn create(&self, def: &ResourceDef, obj: Value) -> ApiResult<Arc<Value>> {
        let mut obj = def.to_stored(obj);
        let ns = meta_str(&obj, "namespace").to_string();
        let name = meta_str(&obj, "name").to_string();
        let mut inner = self.lock();
        let key = def.storage_key();
        if inner
            .objects
            .get(&key)
            .is_some_and(|o| o.contains_key(&(ns.clone(), name.clone())))
        {
            return Err(ApiError::AlreadyExists {
                resource: def.qualified(),
                name,
            });
        }
        inner.rv += 1;
        set_rv(&mut obj, inner.rv);
        let obj = Arc::new(obj);
        inner
            .objects
            .entry(key.clone())
            .or_default()
            .insert((ns, name), obj.clone());
        self.emit(&mut inner, EventType::Added, key, obj.clone(), None);
        Ok(def.served(&obj))
    }

    /// Replaces an object if it is still at `expected_rv` (compare-and-swap).
    pub fn update(&self, def: &ResourceDef, expected_rv: u64, obj: Value) -> ApiResult<Arc<Value>> {
        let mut obj = def.to_stored(obj);
        let ns = meta_str(&obj, "namespace").to_string();
        let name = meta_str(&obj, "name").to_string();
        let mut inner = self.lock();
        let key = def.storage_key();
        let cur = inner
            .objects
            .get(&key)
            .and_then(|o| o.get(&(ns.clone(), name.clone())));
        match cur {
            None => return Err(ApiError::not_found(&def.qualified(), &name)),
            Some(c) if object_rv(c) != Some(expected_rv) => {
                return Err(ApiError::conflict_modified(&def.qualified(), &name))
            }
            Some(_) => {}
        }
        inner.rv += 1;
        set_rv(&mut obj, inner.rv);
        let obj = Arc::new(obj);
        let prev = inner
            .objects
            .entry(key.clone())
            .or_default()
            .insert((ns, name), obj.clone());
        self.emit(&mut inner, EventType::Modified, key, obj.clone(), prev);
        Ok(def.served(&obj))
    }

    /// Removes an object if it is still at `expected_rv`; the DELETED event carries the last
    /// state with a fresh resourceVersion.
    pub fn remove(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        expected_rv: u64,
    ) -> ApiResult<Arc<Value>> {
        let mut inner = self.lock();
        let key = def.storage_key();
        let k = (ns.to_string(), name.to_string());
        let Some(objs) = inner.objects.get_mut(&key) else {
            return Err(ApiError::not_found(&def.qualified(), name));
        };
        match objs.get(&k) {
            None => return Err(ApiError::not_found(&def.qualified(), name)),
            Some(c) if object_rv(c) != Some(expected_rv) => {
                return Err(ApiError::conflict_modified(&def.qualified(), name))
            }
            Some(_) => {}
        }
        let old = objs.remove(&k).unwrap_or_default();
        inner.rv += 1;
        let mut last = (*old).clone();
        set_rv(&mut last, inner.rv);
        let last = Arc::new(last);
        self.emit(&mut inner, EventType::Deleted, key, last.clone(), None);
        Ok(def.served(&last))
    }

    /// Drops every object of a resource (its CRD is gone), emitting DELETED for each.
    pub fn drop_resource(&self, key: &StorageKey) {
        let mut inner = self.lock();
        let Some(objs) = inner.objects.remove(key) else {
            return;
        };
        for (_, obj) in objs {
            inner.rv += 1;
            let mut last = (*obj).clone();
            set_rv(&mut last, inner.rv);
            self.emit(
                &mut inner,
                EventType::Deleted,
                key.clone(),
                Arc::new(last),
                None,
            );
        }
    }

    /// Registers a watcher atomically with the state it starts from, so no event is lost or
    /// duplicated between the initial part and the live part.
    pub fn watch(&self, key: &StorageKey, start: WatchStart) -> Result<WatchSetup, u64> {
        let inner = self.lock();
        let rx = self.tx.subscribe();
        let initial = match start {
            WatchStart::Now => inner
                .objects
                .get(key)
                .map(|objs| {
                    objs.values()
                        .map(|o| {
                            Arc::new(WatchEvent {
                                kind: EventType::Added,
                                key: key.clone(),
                                rv: object_rv(o).unwrap_or(0),
                                object: o.clone(),
                                prev: None,
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
            WatchStart::From(rv) => {
                if rv < inner.compacted {
                    return Err(inner.compacted);
                }
                let first = inner.history.partition_point(|e| e.rv <= rv);
                inner
                    .history
                    .iter()
                    .skip(first)
                    .filter(|e| e.key == *key)
                    .cloned()
                    .collect()
            }
        };
        Ok(WatchSetup {
            initial,
            rv: inner.rv,
            rx,
        })
    }

    /// Forgets all history: every resourceVersion older than the current one becomes too old,
    /// and every open watch ends with a 410 Gone ERROR event.
    pub fn force_compaction(&self) {
        let mut inner = self.lock();
        inner.compacted = inner.rv;
        inner.history.clear();
        let _ = self.tx.send(Broadcast::Expire(inner.rv));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::builtins;
    use serde_json::json;

    fn cm(name: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "default"}, "data": {}})
    }

    #[test]
    fn rv_history_and_compaction() {
        let store = Store::new(3);
        let def = builtins()
            .into_iter()
            .find(|d| d.plural == "configmaps")
            .unwrap();
        let a = store.create(&def, cm("a")).unwrap();
        let rv_a = object_rv(&a).unwrap();
        assert!(store.create(&def, cm("a")).is_err());
        let b = store.update(&def, rv_a, cm("a")).unwrap();
        assert!(object_rv(&b).unwrap() > rv_a);
        assert!(matches!(
            store.update(&def, rv_a, cm("a")),
            Err(ApiError::Conflict { .. })
        ));
        let w = store
            .watch(&def.storage_key(), WatchStart::From(rv_a))
            .unwrap();
        assert_eq!(w.initial.len(), 1);
        for n in ["b", "c", "d"] {
            store.create(&def, cm(n)).unwrap();
        }
        // The history keeps 3 events, so the first update fell out of it.
        assert!(store
            .watch(&def.storage_key(), WatchStart::From(rv_a))
            .is_err());
        store.force_compaction();
        let now = store.current_rv();
        assert!(store
            .watch(&def.storage_key(), WatchStart::From(now - 1))
            .is_err());
        assert!(store
            .watch(&def.storage_key(), WatchStart::From(now))
            .is_ok());
        assert_eq!(store.list(&def, Some("default")).0.len(), 4);
        assert_eq!(store.list(&def, Some("other")).0.len(), 0);
    }
}
