//! The Service controller's view of the Service watch, as a [`watch::Index`]: a store of the
//! Services the controller handles or must still clean up (what a reconcile reads; every other
//! Service, most often a ClusterIP one, is not kept: ~2 KiB each) and upstream's event filter
//! deciding which events queue a reconcile. Create ⇒ queued when the Service qualifies or still holds our finalizer;
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
    /// Only the Services [`ServiceFeed::wanted`] says yes to: a reconcile of any other returns
    /// at once (it neither qualifies nor holds our finalizer), so not keeping it changes nothing.
    services: Mutex<HashMap<String, Arc<Service>>>,
    /// The wanted Services of a relist in progress, in list order, swapped in when it completes.
    relisting: Mutex<Vec<Arc<Service>>>,
    queue: QueueSlot<String>,
}

impl ServiceFeed {
    pub fn new(cfg: ModelConfig) -> Self {
        Self {
            cfg,
            services: Mutex::new(HashMap::new()),
            relisting: Mutex::new(Vec::new()),
            queue: QueueSlot::default(),
        }
    }

    /// The Service `ns/name` as last seen, if the controller handles it or must still clean it
    /// up (no other Service is kept: see [`ServiceFeed::wanted`]).
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

impl ServiceFeed {
    /// `wanted` (in list order) is now every Service kept; each is offered against the version
    /// it replaces.
    fn replace_all(&self, wanted: Vec<Arc<Service>>) {
        let fresh: HashMap<String, Arc<Service>> =
            wanted.iter().map(|s| (service_key(s), s.clone())).collect();
        let old = std::mem::replace(&mut *self.lock(), fresh);
        for s in &wanted {
            self.offer(old.get(&service_key(s)), s);
        }
    }
}

/// A Service that stops being wanted is dropped (its events would queue nothing, and a queued
/// key finds nothing to do, as it would on the Service itself); one that becomes wanted is
/// offered with no old version, which counts as a change, as the update that made it wanted
/// did before.
impl Index<Service> for ServiceFeed {
    fn apply(&self, obj: &Arc<Service>) {
        if !self.wanted(obj) {
            self.lock().remove(&service_key(obj));
            return;
        }
        let old = self.lock().insert(service_key(obj), obj.clone());
        self.offer(old.as_ref(), obj);
    }

    fn delete(&self, obj: &Arc<Service>) {
        self.lock().remove(&service_key(obj));
    }

    fn reset(&self, objs: &[Arc<Service>]) {
        self.replace_all(objs.iter().filter(|s| self.wanted(s)).cloned().collect());
    }

    // The relist is taken one Service at a time, so a first list of 30,000 Services is never
    // held whole for this index.
    fn streams_relist(&self) -> bool {
        true
    }

    fn relist_begin(&self) {
        self.relisting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    fn relist_apply(&self, obj: &Arc<Service>) {
        if self.wanted(obj) {
            self.relisting
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(obj.clone());
        }
    }

    fn relist_end(&self) {
        let wanted = std::mem::take(&mut *self.relisting.lock().unwrap_or_else(|p| p.into_inner()));
        self.replace_all(wanted);
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
    fn only_services_we_handle_or_must_clean_up_are_kept() {
        let (f, q) = feed();
        let cluster_ip = svc(
            "1",
            json!({"metadata": {"name": "db"}, "spec": {"type": "ClusterIP", "loadBalancerClass": null}}),
        );
        f.apply(&cluster_ip);
        assert!(f.get("ns/db").is_none(), "a ClusterIP Service is not kept");
        assert!(q.is_empty());
        // It becomes a load balancer: kept and queued, as the update did when it was kept.
        f.apply(&svc("2", json!({"metadata": {"name": "db"}})));
        assert!(f.get("ns/db").is_some());
        assert_eq!(q.len(), 1);
    }

    #[tokio::test]
    async fn a_streamed_relist_keeps_and_queues_what_a_whole_one_does() {
        let (whole, wq) = feed();
        let (streamed, sq) = feed();
        let objs = [
            svc("1", json!({})),
            svc(
                "1",
                json!({"metadata": {"name": "db"}, "spec": {"type": "ClusterIP", "loadBalancerClass": null}}),
            ),
            svc(
                "1",
                json!({"metadata": {"name": "old", "finalizers": ["service.k8s.aws/resources"]},
                             "spec": {"type": "ClusterIP", "loadBalancerClass": null}}),
            ),
        ];
        whole.reset(&objs);
        streamed.relist_begin();
        for o in &objs {
            streamed.relist_apply(o);
        }
        assert_eq!(sq.len(), 0, "nothing is queued before the relist completes");
        assert!(streamed.get("ns/web").is_none(), "nor shown");
        streamed.relist_end();
        for key in ["ns/web", "ns/db", "ns/old"] {
            assert_eq!(
                whole.get(key).is_some(),
                streamed.get(key).is_some(),
                "{key}"
            );
        }
        assert!(streamed.get("ns/db").is_none());
        assert_eq!(wq.len(), 2);
        assert_eq!(sq.len(), 2);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..2 {
            a.push(wq.next().await);
            b.push(sq.next().await);
        }
        assert_eq!(a, b, "the same keys in the same order");
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
