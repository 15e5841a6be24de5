//! What the TargetGroupBinding controller keeps between terms of leadership: its projected
//! caches and binding store, fed from process start by the process's single watch of each kind,
//! and the triggers that enqueue bindings — silent until a term attaches its queue.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::{Endpoints, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::DynamicObject;
use kube::runtime::reflector::{self, store::Writer, ObjectRef, Store};
use kube::runtime::watcher::Event;
use kube::ResourceExt;

use super::cache::{self, Caches, Feed, ObjKey, OnChange};
use super::info::{PodInfo, SliceInfo, GATE_PREFIXES};
use crate::controller::skeleton::{Priority, QueueSlot, Source};
use crate::crd::target_group_binding::TargetType;
use crate::crd::TargetGroupBinding;
use crate::watch::{self, Synced, Watches};

/// Enqueues bindings for changes of the objects they depend on, while a term of leadership
/// has attached its queue (a standby only keeps its caches).
#[derive(Clone)]
pub(super) struct Triggers {
    pub(super) store: Store<TargetGroupBinding>,
    queue: Arc<QueueSlot<String>>,
}

impl Source<String> for Triggers {
    fn slot(&self) -> &QueueSlot<String> {
        &self.queue
    }

    fn resync_all(&self) {
        let keys: Vec<String> = self.store.state().iter().map(|b| binding_key(b)).collect();
        self.queue.add_all(keys, Priority::Low);
    }
}

/// A binding's queue key, `ns/name`.
fn binding_key(b: &TargetGroupBinding) -> String {
    format!("{}/{}", b.namespace().unwrap_or_default(), b.name_any())
}

impl Triggers {
    pub(super) fn send(&self, ns: &str, name: &str) {
        self.queue.add(format!("{ns}/{name}"));
    }

    fn by_service(&self, ns: &str, svc: &str) {
        for b in self.store.state() {
            if b.spec.service_ref.name == svc && b.namespace().as_deref() == Some(ns) {
                self.send(ns, &b.name_any());
            }
        }
    }

    pub(super) fn all(&self) {
        for b in self.store.state() {
            self.send(&b.namespace().unwrap_or_default(), &b.name_any());
        }
    }
}

fn gate_bindings(p: &PodInfo) -> impl Iterator<Item = &str> {
    p.gates
        .iter()
        .filter_map(|g| GATE_PREFIXES.iter().find_map(|pre| g.strip_prefix(pre)))
}

/// The typed binding store, fed from the untyped watch. A binding that does not decode (a value
/// these types do not know) never fails the list for the others, and never counts as gone: the
/// last version that decoded stays in the store (a deletion of it is still processed on that
/// version), and its key is listed in [`Caches::undecodable`] so the security-group rules only
/// ever grow while it is there (see `with_networking`). A delete is handled by key.
struct Bindings {
    writer: Mutex<Writer<TargetGroupBinding>>,
    trig: Triggers,
    caches: Arc<Caches>,
}

fn key_of(obj: &DynamicObject) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

/// The binding as its type, or why it does not decode.
fn typed(obj: &DynamicObject) -> Result<TargetGroupBinding, String> {
    let decoded = serde_json::to_value(obj).and_then(serde_json::from_value);
    decoded.map_err(|error| {
        tracing::warn!(%error, binding = %key_of(obj), "cannot decode TargetGroupBinding; its last decoded version is kept and its security-group rules are never revoked while it does not decode");
        error.to_string()
    })
}

impl Bindings {
    fn write(&self, ev: &Event<TargetGroupBinding>) {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        w.apply_watcher_event(ev);
    }

    fn undecodable(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.caches
            .undecodable
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn stored(&self, obj: &DynamicObject) -> Option<Arc<TargetGroupBinding>> {
        let r = ObjectRef::new(&obj.name_any()).within(&obj.namespace().unwrap_or_default());
        self.trig.store.get(&r)
    }

    /// The version to keep for an object that does not decode: the last that did, carrying the
    /// object's current metadata (deletion timestamp, finalizers), so a deletion proceeds.
    fn kept(&self, obj: &DynamicObject) -> Option<TargetGroupBinding> {
        let mut prev = (*self.stored(obj)?).clone();
        prev.metadata = obj.metadata.clone();
        Some(prev)
    }
}

/// The Service of an ip binding (the only kind that reads pods).
fn ip_service(tgb: &TargetGroupBinding) -> Option<&str> {
    (tgb.spec.target_type == Some(TargetType::Ip)).then_some(tgb.spec.service_ref.name.as_str())
}

impl watch::Index<DynamicObject> for Bindings {
    fn apply(&self, obj: &Arc<DynamicObject>) {
        let key = key_of(obj);
        let tgb = match typed(obj) {
            Ok(tgb) => {
                self.undecodable().remove(&key);
                tgb
            }
            Err(error) => {
                self.undecodable().insert(key, error);
                match self.kept(obj) {
                    Some(prev) => prev,
                    None => return,
                }
            }
        };
        let (ns, name) = (obj.namespace().unwrap_or_default(), obj.name_any());
        // Before the trigger: the reconcile it queues finds the pods' refill asked for.
        let sources = self.caches.scope_sources();
        self.caches
            .scope
            .set_binding(&ns, &name, ip_service(&tgb), &sources);
        self.write(&Event::Apply(tgb));
        self.trig.send(&ns, &name);
    }

    fn delete(&self, obj: &Arc<DynamicObject>) {
        self.undecodable().remove(&key_of(obj));
        if let Some(tgb) = typed(obj)
            .ok()
            .or_else(|| self.stored(obj).map(|t| (*t).clone()))
        {
            self.write(&Event::Delete(tgb));
        }
        let (ns, name) = (obj.namespace().unwrap_or_default(), obj.name_any());
        let sources = self.caches.scope_sources();
        self.caches.scope.set_binding(&ns, &name, None, &sources);
    }

    fn reset(&self, objs: &[Arc<DynamicObject>]) {
        let mut bad = BTreeMap::new();
        let all: Vec<TargetGroupBinding> = objs
            .iter()
            .filter_map(|o| match typed(o) {
                Ok(tgb) => Some(tgb),
                Err(error) => {
                    bad.insert(key_of(o), error);
                    self.kept(o)
                }
            })
            .collect();
        *self.undecodable() = bad;
        let ip: Vec<(String, String, String)> = all
            .iter()
            .filter_map(|tgb| {
                let svc = ip_service(tgb)?;
                Some((
                    tgb.namespace().unwrap_or_default(),
                    tgb.name_any(),
                    svc.to_string(),
                ))
            })
            .collect();
        let sources = self.caches.scope_sources();
        self.caches.scope.reset_bindings(ip, &sources);
        {
            let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
            w.apply_watcher_event(&Event::Init);
            for tgb in &all {
                w.apply_watcher_event(&Event::InitApply(tgb.clone()));
            }
            w.apply_watcher_event(&Event::InitDone);
        }
        for tgb in &all {
            self.trig
                .send(&tgb.namespace().unwrap_or_default(), &tgb.name_any());
        }
    }
}

/// The controller's warm state.
pub struct Warm {
    pub(super) caches: Arc<Caches>,
    pub(super) trig: Triggers,
    /// The kinds a term waits for before its full resync.
    synced: Vec<Synced>,
}

impl Warm {
    /// Registers the controller's indexes with `watches` (before they start). `endpoint_slices`:
    /// read EndpointSlices, else core/v1 Endpoints; `quic_env`: the variable holding a pod's
    /// QUIC server id (`--quic-environment-variable-name`).
    pub fn register(watches: &Watches, endpoint_slices: bool, quic_env: &str) -> Warm {
        let caches = Arc::new(Caches::default());
        let (reader, writer) = reflector::store();
        let trig = Triggers {
            store: reader,
            queue: Default::default(),
        };
        watches.bindings.register(Arc::new(Bindings {
            writer: Mutex::new(writer),
            trig: trig.clone(),
            caches: caches.clone(),
        }));
        caches.scope.set_refills(watches.pods.refills());
        let (t, c) = (trig.clone(), caches.clone());
        let on_service: OnChange<_> = Box::new(move |(ns, n): &ObjKey, _, _| {
            c.scope.service_changed(ns, n, &c.scope_sources());
            t.by_service(ns, n)
        });
        watches.services.register(Arc::new(Feed::<Service, _>::new(
            caches.clone(),
            |c| &c.services,
            cache::project_service,
            on_service,
        )));
        let (t, c) = (trig.clone(), caches.clone());
        let on_slice = move |key: &ObjKey,
                             old: Option<&(String, Vec<SliceInfo>)>,
                             new: Option<&(String, Vec<SliceInfo>)>| {
            // Before the trigger: the reconcile it queues finds the pods' refill asked for.
            c.scope.slice_changed(key, new, &c.scope_sources());
            let ns = &key.0;
            let svcs: BTreeSet<&str> = old
                .iter()
                .chain(new.iter())
                .map(|(s, _)| s.as_str())
                .collect();
            svcs.into_iter().for_each(|s| t.by_service(ns, s));
        };
        let slices_synced = if endpoint_slices {
            watches
                .endpoint_slices
                .register(Arc::new(Feed::<EndpointSlice, _>::new(
                    caches.clone(),
                    |c| &c.slices,
                    cache::project_slice,
                    Box::new(on_slice),
                )));
            watches.endpoint_slices.synced()
        } else {
            watches
                .endpoints
                .register(Arc::new(Feed::<Endpoints, _>::new(
                    caches.clone(),
                    |c| &c.slices,
                    cache::project_endpoints,
                    Box::new(on_slice),
                )));
            watches.endpoints.synced()
        };
        let (t, c) = (trig.clone(), caches.clone());
        let on_pod: OnChange<PodInfo> = Box::new(move |(ns, pod): &ObjKey, old, new| {
            // Our own condition writes come back here; they need no reconcile.
            let strip = |p: Option<&PodInfo>| {
                p.map(|p| PodInfo {
                    conditions: Box::default(),
                    ..p.clone()
                })
            };
            if old.is_some() && new.is_some() && strip(old) == strip(new) {
                return;
            }
            let mut names: BTreeSet<String> = c.index.bindings_of(ns, pod).into_iter().collect();
            for p in old.iter().chain(new.iter()) {
                names.extend(gate_bindings(p).map(String::from));
            }
            names.iter().for_each(|b| t.send(ns, b));
        });
        watches.pods.register(Arc::new(Feed::<Pod, _>::new(
            caches.clone(),
            |c| &c.pods,
            cache::project_pod(quic_env.to_string(), caches.clone()),
            on_pod,
        )));
        // Which pods are kept depends on the bindings, Services and endpoints (see `scope`):
        // their lists come first (and the webhooks, which need the first two, are ready
        // sooner).
        watches.pods.start_after(watches.bindings.synced());
        watches.pods.start_after(watches.services.synced());
        watches.pods.start_after(slices_synced.clone());
        let t = trig.clone();
        watches.nodes.register(Arc::new(Feed::<Node, _>::new(
            caches.clone(),
            |c| &c.nodes,
            cache::project_node,
            Box::new(move |_, _, _| t.all()),
        )));
        let synced = vec![
            watches.bindings.synced(),
            watches.services.synced(),
            slices_synced,
            watches.pods.synced(),
            watches.nodes.synced(),
        ];
        Warm {
            caches,
            trig,
            synced,
        }
    }

    /// Returns once every kind the controller reads has listed.
    pub(super) async fn wait_synced(&self) {
        for s in &self.synced {
            s.wait().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::skeleton::Queue;
    use crate::watch::Index;
    use serde_json::json;

    fn dynamic(v: serde_json::Value) -> Arc<DynamicObject> {
        Arc::new(serde_json::from_value(v).unwrap())
    }

    #[tokio::test]
    async fn a_binding_that_does_not_decode_is_skipped_and_the_others_are_kept() {
        let watches = Watches::default();
        let warm = Warm::register(&watches, true, super::super::quic::DEFAULT_ENV_NAME);
        let good = dynamic(json!({
            "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
            "metadata": {"name": "good", "namespace": "ns"},
            "spec": {"serviceRef": {"name": "web", "port": 80}, "targetGroupARN": "arn:tg"}
        }));
        let bad = dynamic(json!({
            "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
            "metadata": {"name": "bad", "namespace": "ns"},
            "spec": {"serviceRef": "not an object"}
        }));
        let (store, writer) = reflector::store();
        let trig = Triggers {
            store: store.clone(),
            queue: Default::default(),
        };
        let queue = Arc::new(Queue::default());
        trig.attach(Some(queue.clone()));
        let bindings = Bindings {
            writer: Mutex::new(writer),
            trig: trig.clone(),
            caches: warm.caches.clone(),
        };
        bindings.reset(&[good.clone(), bad.clone()]);
        bindings.apply(&bad);
        trig.attach(None);
        assert_eq!(queue.len(), 1, "only the binding that decodes is queued");
        assert_eq!(queue.next().await, "ns/good");
        let kept: Vec<String> = store.state().iter().map(|b| b.name_any()).collect();
        assert_eq!(kept, ["good"]);
        let undecodable: Vec<String> = warm
            .caches
            .undecodable
            .lock()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(undecodable, ["ns/bad"]);
    }

    /// A binding that stops decoding (a newer CRD's value) keeps its last decoded version
    /// through edits and relists, is deleted by key, and a deletion in progress is processed
    /// on the kept version.
    #[tokio::test]
    async fn a_binding_that_stops_decoding_is_kept_and_deleted_by_key() {
        let watches = Watches::default();
        let warm = Warm::register(&watches, true, super::super::quic::DEFAULT_ENV_NAME);
        let (store, writer) = reflector::store();
        let trig = Triggers {
            store: store.clone(),
            queue: Default::default(),
        };
        let bindings = Bindings {
            writer: Mutex::new(writer),
            trig,
            caches: warm.caches.clone(),
        };
        let spec = |target_type: &str| {
            json!({"serviceRef": {"name": "web", "port": 80}, "targetGroupARN": "arn:tg",
                "targetType": target_type})
        };
        let obj = |meta: serde_json::Value, target_type: &str| {
            dynamic(
                json!({"apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
                "metadata": meta, "spec": spec(target_type)}),
            )
        };
        let meta = json!({"name": "web", "namespace": "ns", "resourceVersion": "1"});
        bindings.reset(&[obj(meta, "ip")]);
        let newer = json!({"name": "web", "namespace": "ns", "resourceVersion": "2"});
        bindings.apply(&obj(newer.clone(), "lambda-of-the-future"));
        bindings.reset(&[obj(newer, "lambda-of-the-future")]);
        let kept = store.state();
        assert_eq!(kept.len(), 1, "present, not gone");
        assert_eq!(
            serde_json::to_value(&kept[0].spec).unwrap()["targetType"],
            "ip"
        );
        assert!(warm
            .caches
            .undecodable
            .lock()
            .unwrap()
            .contains_key("ns/web"));

        // Deleting: the kept version carries the deletion timestamp, so cleanup runs on it.
        let deleting = json!({"name": "web", "namespace": "ns", "resourceVersion": "3",
            "deletionTimestamp": "2026-11-27T00:00:00Z", "finalizers": ["elbv2.k8s.aws/resources"]});
        bindings.apply(&obj(deleting.clone(), "lambda-of-the-future"));
        let kept = store.state();
        assert!(kept[0].metadata.deletion_timestamp.is_some());
        assert_eq!(kept[0].metadata.resource_version.as_deref(), Some("3"));
        bindings.delete(&obj(deleting, "lambda-of-the-future"));
        assert!(store.state().is_empty(), "deleted by key");
        assert!(warm.caches.undecodable.lock().unwrap().is_empty());
    }
}
