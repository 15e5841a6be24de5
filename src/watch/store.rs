//! A whole-object store fed through [`Index`], for consumers that read full objects (the
//! Ingress controller's model input).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use kube::{Resource, ResourceExt};

use super::Index;

/// `(namespace, name)`; the namespace is empty for cluster-scoped kinds.
type Key = (String, String);

/// Objects by [`Key`]. Cheap to clone.
pub struct Store<K> {
    map: Arc<RwLock<HashMap<Key, Arc<K>>>>,
    synced: Arc<AtomicBool>,
}

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Self {
            map: self.map.clone(),
            synced: self.synced.clone(),
        }
    }
}

impl<K> Default for Store<K> {
    fn default() -> Self {
        Self {
            map: Default::default(),
            synced: Default::default(),
        }
    }
}

pub(super) fn key<K: Resource>(obj: &K) -> (String, String) {
    (obj.namespace().unwrap_or_default(), obj.name_any())
}

impl<K> Store<K> {
    /// Every object, in no particular order.
    pub fn state(&self) -> Vec<Arc<K>> {
        let map = self.map.read().unwrap_or_else(|p| p.into_inner());
        map.values().cloned().collect()
    }

    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        let map = self.map.read().unwrap_or_else(|p| p.into_inner());
        map.get(&(namespace.to_string(), name.to_string())).cloned()
    }

    /// Whether the first list is in.
    pub fn is_synced(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }
}

impl<K: Resource + Send + Sync> Index<K> for Store<K> {
    fn apply(&self, obj: &Arc<K>) {
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        map.insert(key(obj.as_ref()), obj.clone());
    }

    fn delete(&self, obj: &Arc<K>) {
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        map.remove(&key(obj.as_ref()));
    }

    fn reset(&self, objs: &[Arc<K>]) {
        let fresh = objs.iter().map(|o| (key(o.as_ref()), o.clone())).collect();
        *self.map.write().unwrap_or_else(|p| p.into_inner()) = fresh;
        self.synced.store(true, Ordering::Release);
    }
}
