//! The GlobalAccelerator controller's view of the watches (upstream's `SetupWatches` of
//! `globalaccelerator_controller.go` and its `eventhandlers`): a store per kind a reconcile reads
//! and the triggers that queue work. A GlobalAccelerator on any event of its own; the
//! GlobalAccelerators referencing a Service, Ingress or Gateway (the [`ReferenceTracker`] the
//! reconciles fill) on any event of it, its status included (a load balancer's new hostname is
//! what they wait for); and, on a ReferenceGrant event, the GlobalAccelerators of a namespace its
//! `from` names (as a GlobalAccelerator, before or after an update) that reference something in
//! the grant's namespace.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use kube::ResourceExt;

use super::detect::Served;
use crate::controller::skeleton::{Priority, QueueSlot, Source};
use crate::crd::global_accelerator::{
    GlobalAccelerator, GlobalAcceleratorEndpointType, GROUP, KIND,
};
use crate::model::aga::{ReferenceTracker, ResourceKey};
use crate::watch::{OnEvent, Store, Synced, Watches};

/// `namespace/name` of a GlobalAccelerator: the queue key, the stack id and the tracker's name
/// for it.
pub fn key_of(ga: &GlobalAccelerator) -> String {
    ga.key()
}

/// Stores and triggers, kept on every replica from process start; keys are queued only while a
/// term of leadership has attached its queue.
pub struct Feed {
    pub accelerators: Store<GlobalAccelerator>,
    pub services: Store<Service>,
    pub ingresses: Store<Ingress>,
    /// Watched only when the API server serves the Gateway API (else always empty).
    pub gateways: Store<Gateway>,
    /// Watched only when the API server serves ReferenceGrants (else always empty).
    pub reference_grants: Store<ReferenceGrant>,
    /// What the API server serves of the kinds read (settled before the watches start).
    pub served: Served,
    /// Which GlobalAccelerators reference which objects, as the last reconcile of each saw them.
    tracker: Mutex<ReferenceTracker>,
    /// The namespaces each ReferenceGrant (by namespace and name) listed GlobalAccelerators of
    /// when last seen: an update that drops one still requeues the accelerators it allowed.
    grant_froms: Mutex<HashMap<(String, String), BTreeSet<String>>>,
    queue: QueueSlot<String>,
}

impl Feed {
    fn new(served: Served) -> Self {
        Feed {
            accelerators: Store::default(),
            services: Store::default(),
            ingresses: Store::default(),
            gateways: Store::default(),
            reference_grants: Store::default(),
            served,
            tracker: Mutex::new(ReferenceTracker::new()),
            grant_froms: Mutex::new(HashMap::new()),
            queue: QueueSlot::default(),
        }
    }

    /// Registers stores, then triggers, with `watches` (before they start) and returns what the
    /// controller waits for before its first pass. Gateways and ReferenceGrants are watched only
    /// when served: a cluster without the Gateway API never sees a failing watch.
    pub fn register(watches: &Watches, served: Served) -> (Arc<Feed>, Vec<Synced>) {
        let feed = Arc::new(Feed::new(served));
        let mut synced = Vec::new();
        let g = &watches.gateway;
        macro_rules! store {
            ($kind:expr, $store:ident) => {{
                $kind.register(Arc::new(feed.$store.clone()));
                synced.push($kind.synced());
            }};
        }
        macro_rules! trigger {
            ($kind:expr, $ty:ty, $on:expr) => {{
                let f = feed.clone();
                $kind.register(Arc::new(OnEvent {
                    f: move |o: &$ty, deleted: bool| {
                        let feed: &Feed = &f;
                        $on(feed, o, deleted)
                    },
                }));
            }};
        }
        store!(watches.global_accelerators, accelerators);
        trigger!(
            watches.global_accelerators,
            GlobalAccelerator,
            Feed::on_accelerator
        );
        store!(watches.services, services);
        trigger!(watches.services, Service, |f: &Feed, o: &Service, _| f
            .on_endpoint(GlobalAcceleratorEndpointType::Service, o));
        store!(watches.ingresses, ingresses);
        trigger!(watches.ingresses, Ingress, |f: &Feed, o: &Ingress, _| f
            .on_endpoint(GlobalAcceleratorEndpointType::Ingress, o));
        if served.gateways {
            store!(g.gateways, gateways);
            trigger!(g.gateways, Gateway, |f: &Feed, o: &Gateway, _| f
                .on_endpoint(GlobalAcceleratorEndpointType::Gateway, o));
        }
        if served.reference_grants {
            store!(g.reference_grants, reference_grants);
            trigger!(g.reference_grants, ReferenceGrant, Feed::on_reference_grant);
        }
        (feed, synced)
    }

    /// A feed registered with nothing (tests of the reconcile's parts).
    #[cfg(test)]
    pub(super) fn unregistered(served: Served) -> Self {
        Feed::new(served)
    }

    pub(super) fn tracker(&self) -> MutexGuard<'_, ReferenceTracker> {
        self.tracker.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn on_accelerator(&self, ga: &GlobalAccelerator, deleted: bool) {
        let key = key_of(ga);
        if deleted {
            // Gone without our finalizer (or after it): nothing references through it any more.
            self.tracker().remove(&key);
            return;
        }
        self.queue.add(key);
    }

    /// A Service, Ingress or Gateway changed, appeared or went: the GlobalAccelerators
    /// referencing it (upstream's resource event handler).
    fn on_endpoint<K: kube::Resource>(&self, kind: GlobalAcceleratorEndpointType, obj: &K) {
        if self.queue.get().is_none() {
            return;
        }
        let key = ResourceKey {
            kind,
            namespace: obj.namespace().unwrap_or_default(),
            name: obj.name_any(),
        };
        let referencing = self.tracker().referencing(&key);
        for (ns, name) in referencing {
            self.queue.add(format!("{ns}/{name}"));
        }
    }

    /// Upstream's ReferenceGrant handler: the namespaces its `from` lists as GlobalAccelerators
    /// (before and after the event), and there the GlobalAccelerators with an endpoint in the
    /// grant's namespace (other than their own).
    fn on_reference_grant(&self, grant: &ReferenceGrant, deleted: bool) {
        let grant_ns = grant.namespace().unwrap_or_default();
        let now: BTreeSet<String> = grant
            .spec
            .from
            .iter()
            .filter(|f| f.group == GROUP && f.kind == KIND)
            .map(|f| f.namespace.clone())
            .collect();
        // Kept up to date whether or not a term is on: the next leader needs what was seen.
        let previous = {
            let mut froms = self.grant_froms.lock().unwrap_or_else(|p| p.into_inner());
            let key = (grant_ns.clone(), grant.name_any());
            if deleted {
                froms.remove(&key)
            } else {
                froms.insert(key, now.clone())
            }
        };
        if self.queue.get().is_none() {
            return;
        }
        let from_namespaces: BTreeSet<String> = now
            .into_iter()
            .chain(previous.into_iter().flatten())
            .collect();
        if from_namespaces.is_empty() {
            return;
        }
        for ga in self.accelerators.state() {
            let ns = ga.namespace().unwrap_or_default();
            if from_namespaces.contains(&ns) && references_namespace(&ga, &grant_ns) {
                self.queue.add(key_of(&ga));
            }
        }
    }
}

/// Whether an endpoint of `ga` names `namespace`, another namespace than its own (upstream's
/// `hasCrossNamespaceReferences`).
pub fn references_namespace(ga: &GlobalAccelerator, namespace: &str) -> bool {
    let own = ga.namespace().unwrap_or_default();
    ga.spec
        .listeners
        .iter()
        .flatten()
        .flat_map(|l| l.endpoint_groups.iter().flatten())
        .flat_map(|g| g.endpoints.iter().flatten())
        .filter_map(|e| e.namespace.as_deref())
        .any(|ns| ns == namespace && ns != own)
}

impl Source<String> for Feed {
    fn slot(&self) -> &QueueSlot<String> {
        &self.queue
    }

    /// Every GlobalAccelerator (upstream's initial list delivers each as a create event).
    fn resync_all(&self) {
        let keys: Vec<String> = self
            .accelerators
            .state()
            .iter()
            .map(|ga| key_of(ga))
            .collect();
        self.queue.add_all(keys, Priority::Low);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::skeleton::Queue;
    use crate::model::aga::desired_endpoints;
    use crate::watch::Index;
    use serde_json::json;

    fn ga(ns: &str, name: &str, endpoints: serde_json::Value) -> Arc<GlobalAccelerator> {
        Arc::new(
            serde_json::from_value(json!({
                "apiVersion": "aga.k8s.aws/v1beta1", "kind": "GlobalAccelerator",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"listeners": [{"endpointGroups": [{"endpoints": endpoints}]}]}
            }))
            .unwrap(),
        )
    }

    fn ingress(ns: &str, name: &str) -> Arc<Ingress> {
        Arc::new(
            serde_json::from_value(json!({"metadata": {"name": name, "namespace": ns}})).unwrap(),
        )
    }

    fn grant(ns: &str, name: &str, from: serde_json::Value) -> Arc<ReferenceGrant> {
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": ns},
                "spec": {"from": from, "to": [{"group": "", "kind": "Service"}]}
            }))
            .unwrap(),
        )
    }

    async fn drain(q: &Queue<String>) -> Vec<String> {
        let mut out = Vec::new();
        while !q.is_empty() {
            let k = q.next().await;
            q.done(&k);
            out.push(k);
        }
        out.sort();
        out
    }

    fn attached(served: Served) -> (Feed, Arc<Queue<String>>) {
        let q = Arc::new(Queue::default());
        let feed = Feed::unregistered(served);
        feed.attach(Some(q.clone()));
        (feed, q)
    }

    #[tokio::test]
    async fn an_ingress_event_queues_the_accelerators_referencing_it_only() {
        let (f, q) = attached(Served::default());
        let web = ga("edge", "web", json!([{"type": "Ingress", "name": "app"}]));
        let other = ga("edge", "other", json!([{"type": "Service", "name": "app"}]));
        f.tracker().update(&key_of(&web), &desired_endpoints(&web));
        f.tracker()
            .update(&key_of(&other), &desired_endpoints(&other));
        f.on_endpoint(
            GlobalAcceleratorEndpointType::Ingress,
            ingress("edge", "app").as_ref(),
        );
        assert_eq!(drain(&q).await, ["edge/web"]);
        f.on_endpoint(
            GlobalAcceleratorEndpointType::Ingress,
            ingress("other", "app").as_ref(),
        );
        assert!(
            q.is_empty(),
            "same name in another namespace is another object"
        );
        // A deleted accelerator stops listening.
        f.on_accelerator(&web, true);
        f.on_endpoint(
            GlobalAcceleratorEndpointType::Ingress,
            ingress("edge", "app").as_ref(),
        );
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn a_reference_grant_queues_the_accelerators_of_its_from_namespaces_that_cross_into_it() {
        let served = Served {
            accelerators: true,
            gateways: true,
            reference_grants: true,
        };
        let (f, q) = attached(served);
        let crossing = ga(
            "edge",
            "crossing",
            json!([{"type": "Service", "name": "api", "namespace": "backend"}]),
        );
        let local = ga("edge", "local", json!([{"type": "Service", "name": "api"}]));
        let elsewhere = ga(
            "team",
            "elsewhere",
            json!([{"type": "Service", "name": "api", "namespace": "backend"}]),
        );
        f.accelerators.reset(&[crossing, local, elsewhere]);
        drain(&q).await;
        let from_edge =
            json!([{"group": "aga.k8s.aws", "kind": "GlobalAccelerator", "namespace": "edge"}]);
        let from_routes = json!([{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": "edge"}]);
        f.on_reference_grant(&grant("backend", "allow", from_edge), false);
        assert_eq!(drain(&q).await, ["edge/crossing"]);
        // A grant for routes only concerns no accelerator.
        f.on_reference_grant(&grant("backend", "routes", from_routes.clone()), false);
        assert!(q.is_empty());
        // An update that drops the accelerators' `from`: the grant as it was still counts.
        let narrowed = grant("backend", "allow", from_routes);
        f.on_reference_grant(&narrowed, false);
        assert_eq!(drain(&q).await, ["edge/crossing"]);
        // Its deletion afterwards allowed nothing any more.
        f.on_reference_grant(&narrowed, true);
        assert!(q.is_empty());
    }

    #[test]
    fn only_an_endpoint_in_another_namespace_is_a_cross_namespace_reference() {
        let g = ga(
            "edge",
            "web",
            json!([{"type": "Service", "name": "a", "namespace": "edge"},
                   {"type": "Ingress", "name": "b", "namespace": "shop"}]),
        );
        assert!(references_namespace(&g, "shop"));
        assert!(!references_namespace(&g, "edge"));
        assert!(!references_namespace(&g, "other"));
    }
}
