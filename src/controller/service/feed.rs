//! The Service controller's view of the Service watch, as a [`watch::Index`]: a store of every
//! watched Service (what a reconcile reads) and upstream's event filter deciding which events
//! queue a reconcile. Create ⇒ queued when the Service qualifies or still holds our finalizer;
//! update ⇒ the same, but only when annotations, spec or "being deleted" changed (status,
//! label and finalizer edits queue nothing) or when the object is unchanged (a re-list, as
//! upstream's informer resync); delete ⇒ only forgotten (the finalizer turns a deletion into an
//! update).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::Service;

use crate::controller::skeleton::{Priority, QueueSlot, Source};
use crate::model::service::{is_pending_finalization, is_service_supported, service_key};
use crate::model::ModelConfig;
use crate::watch::Index;

/// Store and enqueue logic of the Service controller. The store is kept on every replica from
/// process start; Services are queued only while a term of leadership has attached its queue.
pub struct ServiceFeed {
    cfg: ModelConfig,
    services: Mutex<HashMap<String, Arc<Service>>>,
    queue: QueueSlot<String>,
}

impl ServiceFeed {
    pub fn new(cfg: ModelConfig) -> Self {
        Self {
            cfg,
            services: Mutex::new(HashMap::new()),
            queue: QueueSlot::default(),
        }
    }

    /// The Service `ns/name` as last seen.
    pub fn get(&self, key: &str) -> Option<Arc<Service>> {
        self.lock().get(key).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Service>>> {
        self.services.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Upstream's filter: a Service the controller handles or must still clean up.
    fn wanted(&self, svc: &Service) -> bool {
        is_service_supported(svc, &self.cfg) || is_pending_finalization(svc)
    }

    fn offer(&self, old: Option<&Arc<Service>>, new: &Arc<Service>) {
        let counts = old.is_none_or(|o| meaningful_update(o, new));
        if counts && self.wanted(new) {
            if let Some(queue) = self.queue.get() {
                // A re-list of an unchanged object is a resync, not a user's change.
                let resync = old
                    .is_some_and(|o| o.metadata.resource_version == new.metadata.resource_version);
                let priority = if resync {
                    Priority::Low
                } else {
                    Priority::Normal
                };
                queue.add_with(service_key(new), priority);
            }
        }
    }
}

/// Whether an update is one upstream's Service event handler passes on: the same
/// resourceVersion (a resync), or a change of annotations, spec or deletion state.
pub fn meaningful_update(old: &Service, new: &Service) -> bool {
    if old.metadata.resource_version == new.metadata.resource_version {
        return true;
    }
    old.metadata.annotations != new.metadata.annotations
        || old.spec != new.spec
        || old.metadata.deletion_timestamp.is_some() != new.metadata.deletion_timestamp.is_some()
}

impl Source<String> for ServiceFeed {
    fn slot(&self) -> &QueueSlot<String> {
        &self.queue
    }

    /// Every Service the controller handles or must still clean up.
    fn resync_all(&self) {
        if self.queue.get().is_none() {
            return;
        }
        let wanted: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, s)| self.wanted(s))
            .map(|(k, _)| k.clone())
            .collect();
        self.queue.add_all(wanted, Priority::Low);
    }
}

impl Index<Service> for ServiceFeed {
    fn apply(&self, obj: &Arc<Service>) {
        let old = self.lock().insert(service_key(obj), obj.clone());
        self.offer(old.as_ref(), obj);
    }

    fn delete(&self, obj: &Arc<Service>) {
        self.lock().remove(&service_key(obj));
    }

    fn reset(&self, objs: &[Arc<Service>]) {
        let fresh: HashMap<String, Arc<Service>> =
            objs.iter().map(|s| (service_key(s), s.clone())).collect();
        let old = std::mem::replace(&mut *self.lock(), fresh);
        for s in objs {
            self.offer(old.get(&service_key(s)), s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::skeleton::Queue;
    use serde_json::json;

    fn svc(rv: &str, extra: serde_json::Value) -> Arc<Service> {
        let mut v = json!({
            "metadata": {"name": "web", "namespace": "ns", "resourceVersion": rv},
            "spec": {"type": "LoadBalancer", "loadBalancerClass": "service.k8s.aws/nlb",
                     "ports": [{"port": 80, "protocol": "TCP"}]}
        });
        merge(&mut v, extra);
        Arc::new(serde_json::from_value(v).unwrap())
    }

    fn merge(a: &mut serde_json::Value, b: serde_json::Value) {
        match (a, b) {
            (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
                for (k, v) in b {
                    merge(a.entry(k).or_insert(serde_json::Value::Null), v);
                }
            }
            (a, b) => *a = b,
        }
    }

    fn feed() -> (ServiceFeed, Arc<Queue<String>>) {
        let q = Arc::new(Queue::default());
        let feed = ServiceFeed::new(ModelConfig::default());
        feed.attach(Some(q.clone()));
        (feed, q)
    }

    #[test]
    fn creates_of_services_we_handle_are_queued_others_not() {
        let (f, q) = feed();
        f.apply(&svc("1", json!({"spec": {"loadBalancerClass": "other"}})));
        assert!(q.is_empty(), "another class is not ours");
        f.apply(&svc("2", json!({})));
        assert_eq!(q.len(), 1);
        assert!(f.get("ns/web").is_some());
    }

    #[tokio::test]
    async fn status_labels_and_finalizers_alone_queue_nothing() {
        let (f, q) = feed();
        f.reset(&[svc("1", json!({}))]);
        assert_eq!(q.len(), 1, "the first list queues what we handle");
        let key = q.next().await;
        q.done(&key);
        f.apply(&svc(
            "2",
            json!({"status": {"loadBalancer": {"ingress": [{"hostname": "x"}]}},
                   "metadata": {"labels": {"a": "b"}, "finalizers": ["service.k8s.aws/resources"]}}),
        ));
        assert!(
            q.is_empty(),
            "status, labels and finalizers are not ours to react to"
        );
        f.apply(&svc("3", json!({"metadata": {"annotations": {"k": "v"}}})));
        assert_eq!(q.len(), 1, "an annotation change is");
        assert!(meaningful_update(
            &svc("2", json!({})),
            &svc("3", json!({"spec": {"ports": [{"port": 81}]}}))
        ));
        assert!(meaningful_update(
            &svc("2", json!({})),
            &svc("2", json!({}))
        ));
        assert!(meaningful_update(
            &svc("2", json!({})),
            &svc(
                "3",
                json!({"metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z"}})
            )
        ));
    }

    #[test]
    fn a_service_that_stopped_qualifying_is_queued_while_it_holds_the_finalizer() {
        let (f, q) = feed();
        let gone = svc(
            "5",
            json!({"spec": {"type": "ClusterIP", "loadBalancerClass": null},
                   "metadata": {"finalizers": ["service.k8s.aws/resources"]}}),
        );
        f.apply(&gone);
        assert_eq!(q.len(), 1);
        f.delete(&gone);
        assert!(f.get("ns/web").is_none());
    }
}
