//! An index that only counts a kind's objects (`awslbc_controller_cache_object_total`), keeping
//! a 64-bit hash of each key and never the objects: 30,000 Services cost ~0.5 MiB, not the
//! ~3 MiB their namespace and name strings did. Two keys would have to collide in 64 bits to be
//! counted once (for 300,000 objects, a chance of about 2 in a billion).

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use kube::{Resource, ResourceExt};

use super::Index;

/// The hash of an object's `(namespace, name)` (the key every store uses). `DefaultHasher::new`
/// has fixed keys, so one key always hashes the same.
fn hashed<K: Resource>(obj: &K) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    obj.meta()
        .namespace
        .as_deref()
        .unwrap_or_default()
        .hash(&mut h);
    obj.name_any().hash(&mut h);
    h.finish()
}

/// The keys of a kind's objects; [`Count::get`] is `None` until the first list is in.
#[derive(Debug, Default)]
pub struct Count {
    state: Mutex<CountState>,
}

#[derive(Debug, Default)]
struct CountState {
    keys: HashSet<u64>,
    /// The relist in progress, swapped in whole when it completes.
    staged: HashSet<u64>,
    synced: bool,
}

impl Count {
    fn lock(&self) -> std::sync::MutexGuard<'_, CountState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many objects exist, once the first list is in.
    pub fn get(&self) -> Option<usize> {
        let state = self.lock();
        state.synced.then_some(state.keys.len())
    }
}

impl<K: Resource + Send + Sync> Index<K> for Count {
    fn apply(&self, obj: &std::sync::Arc<K>) {
        self.lock().keys.insert(hashed(obj.as_ref()));
    }

    fn delete(&self, obj: &std::sync::Arc<K>) {
        self.lock().keys.remove(&hashed(obj.as_ref()));
    }

    fn reset(&self, objs: &[std::sync::Arc<K>]) {
        let mut state = self.lock();
        state.keys = objs.iter().map(|o| hashed(o.as_ref())).collect();
        state.synced = true;
    }

    fn streams_relist(&self) -> bool {
        true
    }

    fn relist_begin(&self) {
        self.lock().staged.clear();
    }

    fn relist_apply(&self, obj: &std::sync::Arc<K>) {
        self.lock().staged.insert(hashed(obj.as_ref()));
    }

    fn relist_end(&self) {
        let mut state = self.lock();
        state.keys = std::mem::take(&mut state.staged);
        state.synced = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Service;
    use std::sync::Arc;

    fn svc(ns: &str, name: &str) -> Arc<Service> {
        let mut s = Service::default();
        s.metadata.namespace = Some(ns.into());
        s.metadata.name = Some(name.into());
        Arc::new(s)
    }

    #[test]
    fn counts_objects_once_listed_through_relists_and_events() {
        let c = Count::default();
        let index: &dyn Index<Service> = &c;
        index.apply(&svc("a", "x"));
        assert_eq!(c.get(), None, "nothing to say before the first list");
        index.relist_begin();
        index.relist_apply(&svc("a", "x"));
        index.relist_apply(&svc("b", "x"));
        assert_eq!(c.get(), None, "a half list is never shown");
        index.relist_end();
        assert_eq!(c.get(), Some(2));
        index.apply(&svc("b", "x"));
        index.apply(&svc("c", "y"));
        assert_eq!(c.get(), Some(3), "an update is no new object");
        index.delete(&svc("a", "x"));
        assert_eq!(c.get(), Some(2));
        // A relist that finds one object replaces everything.
        index.relist_begin();
        index.relist_apply(&svc("z", "z"));
        index.relist_end();
        assert_eq!(c.get(), Some(1));
    }

    #[test]
    fn keys_are_told_apart_by_namespace_and_name() {
        let c = Count::default();
        let index: &dyn Index<Service> = &c;
        index.reset(&[svc("ab", "c"), svc("a", "bc"), svc("a", "b")]);
        assert_eq!(
            c.get(),
            Some(3),
            "the split between namespace and name counts"
        );
        index.delete(&svc("a", "bc"));
        assert_eq!(c.get(), Some(2));
        index.delete(&svc("a", "bc"));
        assert_eq!(c.get(), Some(2), "deleting a key twice removes it once");
    }
}
