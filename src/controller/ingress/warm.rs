//! What the Ingress controller keeps between terms of leadership: whole-object stores of the
//! kinds the model reads and the triggers that turn their changes into queued groups, fed from
//! process start by the process's watches; groups are queued only while a term has attached its
//! queue.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::{Namespace, Secret, Service};
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{Resource, ResourceExt};

use super::objects::{self, Fingerprints, Stores};
use super::refs::references_service;
use super::secrets::Tracker;
use super::service_view::ServiceView;
use crate::controller::skeleton::{Priority, Queue, QueueSlot, Source};
use crate::crd::IngressClassParams;
use crate::model::group::key_of;
use crate::model::{oidc, GroupId};
use crate::watch::{Index, OnEvent, Synced, Watches};

/// Turns watch events into queued groups. Fingerprints are kept on every replica; groups are
/// queued only while a term of leadership has attached its queue (after its full resync).
pub(super) struct Triggers {
    stores: Stores,
    queue: QueueSlot<GroupId>,
    class: String,
    ingresses: Fingerprints,
    services: Fingerprints,
    others: Fingerprints,
    secrets: Fingerprints,
    namespaces: objects::NamespaceLabels,
    /// Which Secrets the Ingresses and Services name: the Secret watches follow it.
    secret_refs: Tracker,
}

impl Source<GroupId> for Triggers {
    fn slot(&self) -> &QueueSlot<GroupId> {
        &self.queue
    }

    fn resync_all(&self) {
        self.all(Priority::Low);
    }
}

impl Triggers {
    fn queue(&self) -> Option<Arc<Queue<GroupId>>> {
        self.queue.get()
    }

    fn live(&self) -> bool {
        self.queue().is_some()
    }

    /// The Secret `meta`'s `auth-idp-oidc` names, as this object's entry of the watched set.
    fn track_secret(&self, kind: &str, meta: &ObjectMeta, deleted: bool) {
        let refs = if deleted {
            BTreeSet::new()
        } else {
            oidc::secret_refs([meta])
        };
        self.secret_refs
            .update(format!("{kind}/{}", key_of(meta)), refs);
    }

    fn ingress(&self, ing: &Ingress, deleted: bool) {
        self.track_secret("Ingress", &ing.metadata, deleted);
        let key = key_of(&ing.metadata);
        let changed = if deleted {
            self.ingresses.forget(&key);
            true
        } else {
            self.ingresses
                .changed(key, &objects::ingress_fingerprint(ing))
        };
        if let Some(queue) = self.queue().filter(|_| changed) {
            let objs = self.stores.class_objects();
            for g in objects::groups_of(ing, &objs, &self.class) {
                queue.add(g);
            }
        }
    }

    /// A Service event, read out of the object as it arrived (see [`ServiceEvent`]).
    fn service_seen(&self, ev: &ServiceEvent, deleted: bool) {
        let refs = if deleted {
            BTreeSet::new()
        } else {
            ev.secret_refs.clone()
        };
        self.secret_refs.update(format!("Service/{}", ev.key), refs);
        let changed = if deleted {
            self.services.forget(&ev.key);
            true
        } else {
            self.services.changed_to(ev.key.clone(), ev.fingerprint)
        };
        let Some(queue) = self.queue().filter(|_| changed) else {
            return;
        };
        let (ns, name) = (ev.namespace.as_str(), ev.name.as_str());
        let objs = self.stores.class_objects();
        for ing in self.stores.ingresses.state() {
            if ing.metadata.namespace.as_deref().unwrap_or("default") == ns
                && references_service(&ing, name)
            {
                for g in objects::groups_of(&ing, &objs, &self.class) {
                    queue.add(g);
                }
            }
        }
    }

    /// A Secret counts when what the model reads of it changes (or it comes or goes): the
    /// groups of the Ingresses that read it are queued (upstream's secret event handler).
    fn secret(&self, secret: &Secret, deleted: bool) {
        let key = key_of(&secret.metadata);
        let changed = if deleted {
            self.secrets.forget(&key);
            true
        } else {
            let part = oidc::needed_part(secret);
            self.secrets
                .changed(key, &serde_json::json!([part.data, part.string_data]))
        };
        let Some(queue) = self.queue().filter(|_| changed) else {
            return;
        };
        let ns = secret.metadata.namespace.as_deref().unwrap_or("default");
        let name = secret.metadata.name.as_deref().unwrap_or_default();
        let in_ns = |m: &ObjectMeta| m.namespace.as_deref().unwrap_or("default") == ns;
        let services: Vec<String> = self
            .stores
            .services
            .in_namespace(ns)
            .into_iter()
            .filter(|(_, v)| oidc::secret_name(v.annotations().as_ref()).as_deref() == Some(name))
            .map(|(svc, _)| svc)
            .collect();
        let objs = self.stores.class_objects();
        for ing in self.stores.ingresses.state() {
            if in_ns(&ing.metadata) && super::secrets::ingress_reads(&ing, name, &services) {
                for g in objects::groups_of(&ing, &objs, &self.class) {
                    queue.add(g);
                }
            }
        }
    }

    /// A namespace counts only when its labels change whether some IngressClassParams
    /// namespaceSelector matches it; then the groups of its Ingresses are queued.
    fn namespace(&self, ns: &Namespace, deleted: bool) {
        let name = ns.name_any();
        let (before, after) = self.namespaces.update(&name, ns, deleted);
        let Some(queue) = self.queue().filter(|_| before != after) else {
            return;
        };
        let params = self.stores.params.state();
        if !objects::selectors_flip(params.iter().map(|p| &**p), &before, &after) {
            return;
        }
        let objs = self.stores.class_objects();
        for ing in self.stores.ingresses.state() {
            if ing.metadata.namespace.as_deref() == Some(name.as_str()) {
                for g in objects::groups_of(&ing, &objs, &self.class) {
                    queue.add(g);
                }
            }
        }
    }

    /// Classes and parameters: rare changes that can move any Ingress.
    fn any<K: Resource>(&self, kind: &str, obj: &K, part: serde_json::Value, deleted: bool) {
        let key = format!("{kind}/{}", obj.meta().name.clone().unwrap_or_default());
        let changed = if deleted {
            self.others.forget(&key);
            true
        } else {
            self.others.changed(key, &part)
        };
        if changed && self.live() {
            self.all(Priority::Normal);
        }
    }

    /// Queues every group at `priority` (low for a term's initial resync, so users' changes
    /// made meanwhile go first).
    pub(super) fn all(&self, priority: Priority) {
        if self.live() {
            self.queue
                .add_all(self.stores.all_groups(&self.class), priority);
        }
    }
}

/// What a Service event tells the triggers and the store, read out of the object as it
/// arrives, so neither keeps the object: its key, its view, the fingerprint of what the model
/// reads and the Secrets its `auth-idp-oidc` names.
struct ServiceEvent {
    /// `ns/name` (an absent namespace read as `default`, as the model does).
    key: String,
    namespace: String,
    name: String,
    /// The store's key (namespace as the object has it).
    store_key: (String, String),
    view: Arc<ServiceView>,
    fingerprint: u64,
    secret_refs: BTreeSet<crate::watch::Ref>,
}

impl ServiceEvent {
    fn of(svc: &Service) -> ServiceEvent {
        ServiceEvent {
            key: key_of(&svc.metadata),
            namespace: svc
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into()),
            name: svc.name_any(),
            store_key: (svc.namespace().unwrap_or_default(), svc.name_any()),
            view: Arc::new(ServiceView::of(svc)),
            fingerprint: Fingerprints::hash(&objects::service_fingerprint(svc)),
            secret_refs: oidc::secret_refs([&svc.metadata]),
        }
    }
}

/// The Service store and trigger as one index, so a relist is taken one Service at a time (a
/// first list of 30,000 Services is never held whole): the events are staged, then the store
/// is swapped and the trigger runs for each listed Service, in list order, as the store and
/// its trigger did when they were handed the whole list (a Service gone from the list is
/// dropped from the store; the trigger, as before, hears nothing of it).
struct ServiceWatch {
    trig: Arc<Triggers>,
    relisting: Mutex<Vec<ServiceEvent>>,
}

impl ServiceWatch {
    fn staged(&self) -> std::sync::MutexGuard<'_, Vec<ServiceEvent>> {
        self.relisting.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn replace_all(&self, listed: Vec<ServiceEvent>) {
        let views = &self.trig.stores.services;
        views.replace(
            listed
                .iter()
                .map(|e| (e.store_key.clone(), e.view.clone()))
                .collect(),
        );
        for ev in &listed {
            self.trig.service_seen(ev, false);
        }
    }
}

impl Index<Service> for ServiceWatch {
    fn apply(&self, obj: &Arc<Service>) {
        let ev = ServiceEvent::of(obj);
        self.trig
            .stores
            .services
            .set(ev.store_key.clone(), ev.view.clone());
        self.trig.service_seen(&ev, false);
    }

    fn delete(&self, obj: &Arc<Service>) {
        let ev = ServiceEvent::of(obj);
        self.trig.stores.services.remove(&ev.store_key);
        self.trig.service_seen(&ev, true);
    }

    fn reset(&self, objs: &[Arc<Service>]) {
        self.replace_all(objs.iter().map(|o| ServiceEvent::of(o)).collect());
    }

    fn streams_relist(&self) -> bool {
        true
    }

    fn relist_begin(&self) {
        self.staged().clear();
    }

    fn relist_apply(&self, obj: &Arc<Service>) {
        self.staged().push(ServiceEvent::of(obj));
    }

    fn relist_end(&self) {
        let listed = std::mem::take(&mut *self.staged());
        self.replace_all(listed);
    }
}

/// What the controller keeps between terms of leadership: whole-object stores (the model's
/// input; of Services, only what the model reads) and the triggers' fingerprints, fed from
/// process start by the process's watches.
pub struct Warm {
    pub(super) stores: Stores,
    pub(super) trig: Arc<Triggers>,
    pub(super) synced: Vec<Synced>,
}

impl Warm {
    /// Registers the controller's stores and triggers with `watches` (before they start), for
    /// Ingresses of the class `ingress_class`. Each kind's store is registered before its
    /// trigger, so a trigger reads the store with the event applied.
    pub fn register(watches: &Watches, ingress_class: &str) -> Warm {
        // The Secret store follows the Secret watch's `--required-secrets-label`, also for the
        // Secrets it reads by GET.
        let stores = Stores {
            secrets: super::secrets::SecretStore::requiring(
                watches.secrets.required_label().cloned(),
            ),
            ..Stores::default()
        };
        let trig = Arc::new(Triggers {
            stores: stores.clone(),
            queue: QueueSlot::default(),
            class: ingress_class.to_string(),
            ingresses: Fingerprints::default(),
            services: Fingerprints::default(),
            others: Fingerprints::default(),
            secrets: Fingerprints::default(),
            namespaces: Default::default(),
            secret_refs: Tracker::new(watches.secrets.wants()),
        });
        let t = trig.clone();
        watches
            .ingresses
            .register(Arc::new(stores.ingresses.clone()));
        watches.ingresses.register(Arc::new(OnEvent {
            f: move |o: &Ingress, d| t.ingress(o, d),
        }));
        watches.services.register(Arc::new(ServiceWatch {
            trig: trig.clone(),
            relisting: Mutex::new(Vec::new()),
        }));
        let t = trig.clone();
        watches
            .ingress_classes
            .register(Arc::new(stores.classes.clone()));
        watches.ingress_classes.register(Arc::new(OnEvent {
            f: move |o: &IngressClass, d| {
                t.any(
                    "IngressClass",
                    o,
                    serde_json::json!([o.metadata.annotations, o.spec]),
                    d,
                )
            },
        }));
        let t = trig.clone();
        watches
            .ingress_class_params
            .register(Arc::new(stores.params.clone()));
        watches.ingress_class_params.register(Arc::new(OnEvent {
            f: move |o: &IngressClassParams, d| {
                t.any("IngressClassParams", o, serde_json::json!(o.spec), d)
            },
        }));
        let t = trig.clone();
        watches
            .namespaces
            .register(Arc::new(stores.namespaces.clone()));
        watches.namespaces.register(Arc::new(OnEvent {
            f: move |o: &Namespace, d| t.namespace(o, d),
        }));
        // Secrets: only the named ones, each watched by name; not waited for at the start of a
        // term (a Secret not listed yet is read with a GET).
        let t = trig.clone();
        watches.secrets.register(Arc::new(stores.secrets.clone()));
        watches.secrets.register(Arc::new(OnEvent {
            f: move |o: &Secret, d| t.secret(o, d),
        }));
        let synced = vec![
            watches.ingresses.synced(),
            watches.services.synced(),
            watches.ingress_classes.synced(),
            watches.ingress_class_params.synced(),
            watches.namespaces.synced(),
        ];
        Warm {
            stores,
            trig,
            synced,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::Index;
    use serde_json::json;

    fn ingress(g: usize, host: &str) -> Arc<Ingress> {
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": format!("ing{g}"), "namespace": "ns", "annotations": {
                    "kubernetes.io/ingress.class": "alb",
                    "alb.ingress.kubernetes.io/group.name": format!("group{g}")}},
                "spec": {"rules": [{"host": host}]}
            }))
            .unwrap(),
        )
    }

    /// The cold-start backlog waits low; a user's change to one Ingress made meanwhile is
    /// handed out first (on a first-in-first-out queue it waited behind every group).
    #[tokio::test]
    async fn a_users_change_during_the_initial_resync_goes_ahead_of_the_backlog() {
        let warm = Warm::register(&Watches::default(), "alb");
        for g in 0..5 {
            let ing = ingress(g, "a.example.com");
            warm.stores.ingresses.apply(&ing);
            warm.trig.ingress(&ing, false);
        }
        let queue: Arc<Queue<GroupId>> = Arc::new(Queue::default());
        warm.trig.attach(Some(queue.clone()));
        warm.trig.all(Priority::Low);
        assert_eq!(queue.len(), 5);

        let changed = ingress(3, "b.example.com");
        warm.stores.ingresses.apply(&changed);
        warm.trig.ingress(&changed, false);
        assert_eq!(queue.len(), 5, "already queued: moved, not added");
        let objs = warm.stores.class_objects();
        let want = objects::groups_of(&changed, &objs, "alb");
        assert_eq!(vec![queue.next().await], want);
    }
}
