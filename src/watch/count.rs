//! An index that only counts a kind's objects (`awslbc_controller_cache_object_total`), keeping
//! their keys and never the objects.

use std::collections::HashSet;
use std::sync::Mutex;

use kube::Resource;

use super::store::key;
use super::Index;

/// The keys of a kind's objects; [`Count::get`] is `None` until the first list is in.
#[derive(Debug, Default)]
pub struct Count {
    state: Mutex<CountState>,
}

#[derive(Debug, Default)]
struct CountState {
    keys: HashSet<(String, String)>,
    /// The relist in progress, swapped in whole when it completes.
    staged: HashSet<(String, String)>,
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
        self.lock().keys.insert(key(obj.as_ref()));
    }

    fn delete(&self, obj: &std::sync::Arc<K>) {
        self.lock().keys.remove(&key(obj.as_ref()));
    }

    fn reset(&self, objs: &[std::sync::Arc<K>]) {
        let mut state = self.lock();
        state.keys = objs.iter().map(|o| key(o.as_ref())).collect();
        state.synced = true;
    }

    fn streams_relist(&self) -> bool {
        true
    }

    fn relist_begin(&self) {
        self.lock().staged.clear();
    }

    fn relist_apply(&self, obj: &std::sync::Arc<K>) {
        self.lock().staged.insert(key(obj.as_ref()));
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
}
