//! Which Services each Gateway's stack uses (upstream's `referencecounter`): the Gateway
//! reconciler records them after each build, and a TargetGroupConfiguration's finalizer stays
//! while its Service is still used — or while some accepted Gateway has not been recorded yet
//! (after a restart, before every Gateway reconciled once), so a cold cache never releases it.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use crate::model::Stack;

#[derive(Default, Debug)]
struct Inner {
    /// Gateway `ns/name` → Service `ns/name`s.
    relations: HashMap<String, BTreeSet<String>>,
    /// Service `ns/name` → number of Gateways using it.
    counts: HashMap<String, usize>,
}

/// Gateway → Service references, shared by the Gateway reconcilers and the
/// TargetGroupConfiguration finalizer. Cheap to share through an `Arc`.
#[derive(Default, Debug)]
pub struct ServiceReferences {
    inner: Mutex<Inner>,
}

impl ServiceReferences {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Gateway `gateway` (`ns/name`) now uses exactly `services` (`ns/name`).
    pub fn update(&self, gateway: &str, services: BTreeSet<String>) {
        let mut inner = self.lock();
        if let Some(old) = inner.relations.remove(gateway) {
            release(&mut inner.counts, &old);
        }
        for s in &services {
            *inner.counts.entry(s.clone()).or_insert(0) += 1;
        }
        inner.relations.insert(gateway.to_string(), services);
    }

    /// Gateway `gateway` is gone: it uses nothing any more.
    pub fn forget(&self, gateway: &str) {
        let mut inner = self.lock();
        if let Some(old) = inner.relations.remove(gateway) {
            release(&mut inner.counts, &old);
        }
    }

    /// Whether no Gateway uses Service `service` and every Gateway of `expected` (the accepted
    /// ones) has been recorded at least once.
    pub fn eligible_for_removal(&self, service: &str, expected: &[String]) -> bool {
        let inner = self.lock();
        !inner.counts.contains_key(service)
            && expected.iter().all(|g| inner.relations.contains_key(g))
    }
}

fn release(counts: &mut HashMap<String, usize>, services: &BTreeSet<String>) {
    for s in services {
        if let Some(n) = counts.get_mut(s) {
            *n -= 1;
            if *n == 0 {
                counts.remove(s);
            }
        }
    }
}

/// The Services (`ns/name`) a Gateway stack's target groups bind.
pub fn services_of(stack: &Stack) -> BTreeSet<String> {
    stack
        .target_group_bindings
        .iter()
        .map(|b| format!("{}/{}", b.namespace, b.spec.service_name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_service_is_held_while_any_gateway_uses_it_or_an_accepted_gateway_is_unrecorded() {
        let r = ServiceReferences::default();
        let accepted = vec!["ns/a".to_string(), "ns/b".to_string()];
        assert!(
            !r.eligible_for_removal("ns/svc", &accepted),
            "a cold cache holds everything"
        );
        r.update("ns/a", set(&["ns/svc", "ns/other"]));
        r.update("ns/b", set(&["ns/svc"]));
        assert!(!r.eligible_for_removal("ns/svc", &accepted));
        r.update("ns/a", set(&["ns/other"]));
        assert!(
            !r.eligible_for_removal("ns/svc", &accepted),
            "b still uses it"
        );
        r.forget("ns/b");
        assert!(
            !r.eligible_for_removal("ns/svc", &accepted),
            "b is accepted but unrecorded"
        );
        assert!(r.eligible_for_removal("ns/svc", &accepted[..1]));
        assert!(!r.eligible_for_removal("ns/other", &accepted[..1]));
    }
}
