//! The Gateway controllers' view of the watches: one [`Store`] per kind a reconcile reads
//! (shared by the ALB and NLB controllers), and per controller a [`Feed`] deciding which
//! Gateways an event concerns, as upstream's event handlers do: a Gateway of one of our classes;
//! every Gateway of a class; the Gateways using a LoadBalancerConfiguration (directly or through
//! their class), or a TargetGroupConfiguration as their default; the parents of a route (before
//! and after the change, so a detached route's old Gateway hears of it); the parents of the
//! routes using a Service or TargetGroupConfiguration, of routes with backends in a
//! ReferenceGrant's namespace, and of routes in a Namespace; the parents of the routes with a
//! Gateway as backend when that Gateway changes, status included (its `Programmed` message
//! carries the ALB ARN they chain to); the parent Gateway of a ListenerSet (and of the sets a
//! route names).
//!
//! Each trigger remembers the Gateways an object last concerned and a signature of what matters
//! in it (spec, annotations, deletion; a class's status), so status-only writes — our own
//! included — queue nothing.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use gateway_api::apis::experimental::tcproutes::TcpRoute;
use gateway_api::apis::experimental::udproutes::UdpRoute;
use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::grpcroutes::GrpcRoute;
use gateway_api::apis::standard::httproutes::HttpRoute;
use gateway_api::apis::standard::listenersets::ListenerSet;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use gateway_api::apis::standard::tlsroutes::TlsRoute;
use k8s_openapi::api::core::v1::{Namespace, Service};
use kube::{Resource, ResourceExt};

use super::refs::{route_refs, RouteRefs};
use crate::controller::skeleton::{Priority, QueueSlot, Source};
use crate::crd::gateway::{
    ListenerRuleConfiguration, LoadBalancerConfiguration, TargetGroupConfiguration,
};
use crate::model::gateway::listener_sets::parent_key;
use crate::model::gateway::listeners::LbKind;
use crate::model::gateway::{ALB_CONTROLLER_NAME, NLB_CONTROLLER_NAME};
use crate::watch::{Index, Store};

/// Every object a Gateway reconcile reads, kept from process start.
#[derive(Clone, Default)]
pub struct Stores {
    pub classes: Store<GatewayClass>,
    pub gateways: Store<Gateway>,
    pub http_routes: Store<HttpRoute>,
    pub grpc_routes: Store<GrpcRoute>,
    pub tcp_routes: Store<TcpRoute>,
    pub udp_routes: Store<UdpRoute>,
    pub tls_routes: Store<TlsRoute>,
    pub reference_grants: Store<ReferenceGrant>,
    pub lb_configs: Store<LoadBalancerConfiguration>,
    pub tg_configs: Store<TargetGroupConfiguration>,
    pub rule_configs: Store<ListenerRuleConfiguration>,
    pub services: Store<Service>,
    pub namespaces: Store<Namespace>,
    /// Fed only while the `GatewayListenerSet` gate is on ([`Stores::listener_sets_on`]).
    pub listener_sets: Store<ListenerSet>,
    /// The `GatewayListenerSet` gate: ListenerSets are watched, built and given status.
    pub listener_sets_on: bool,
}

/// Controller name of the GatewayClasses a controller of this kind handles.
pub fn controller_name(lb: LbKind) -> &'static str {
    match lb {
        LbKind::Alb => ALB_CONTROLLER_NAME,
        LbKind::Nlb => NLB_CONTROLLER_NAME,
    }
}

impl Stores {
    /// The references of every route kind a controller of `lb` reads.
    pub fn route_refs(&self, lb: LbKind) -> Vec<RouteRefs> {
        fn all<K: Resource + serde::Serialize>(s: &Store<K>) -> Vec<RouteRefs> {
            s.state().iter().map(|r| route_refs(r.as_ref())).collect()
        }
        match lb {
            LbKind::Alb => [all(&self.http_routes), all(&self.grpc_routes)].concat(),
            LbKind::Nlb => [
                all(&self.tcp_routes),
                all(&self.udp_routes),
                all(&self.tls_routes),
            ]
            .concat(),
        }
    }

    /// The Gateways a route's parentRefs lead to: those it names, and the parents of the
    /// ListenerSets it names.
    pub fn gateways_of(&self, refs: &RouteRefs) -> Vec<String> {
        let mut keys = refs.parents.clone();
        for set in &refs.listener_sets {
            let (ns, name) = set.split_once('/').unwrap_or(("", set));
            if let Some(s) = self.listener_sets.get(ns, name) {
                keys.push(parent_key(&s));
            }
        }
        keys.sort();
        keys.dedup();
        keys
    }

    /// Whether Gateway `gw`'s class is one a controller of `lb` handles.
    pub fn is_ours(&self, gw: &Gateway, lb: LbKind) -> bool {
        self.classes
            .get("", &gw.spec.gateway_class_name)
            .is_some_and(|c| c.spec.controller_name == controller_name(lb))
    }
}

/// One controller's event filter: which of its Gateways to queue.
pub struct Feed {
    pub lb: LbKind,
    pub stores: Stores,
    queue: QueueSlot<String>,
}

impl Feed {
    pub fn new(lb: LbKind, stores: Stores) -> Self {
        Self {
            lb,
            stores,
            queue: QueueSlot::default(),
        }
    }

    /// Queues every Gateway of our classes (a term's first pass, at low priority).
    pub fn all(&self) {
        let Some(queue) = self.queue.get() else {
            return;
        };
        for gw in self.stores.gateways.state() {
            if self.stores.is_ours(&gw, self.lb) {
                queue.add_with(key_of(gw.as_ref()), Priority::Low);
            }
        }
    }

    /// Queues those of `keys` that are Gateways of our classes now (a trigger remembers keys
    /// unfiltered: a route seen before its Gateway or class still names it when it moves away).
    pub(super) fn enqueue(&self, keys: impl IntoIterator<Item = String>) {
        let Some(queue) = self.queue.get() else {
            return;
        };
        for k in self.ours(keys) {
            queue.add(k);
        }
    }

    /// Our Gateways among `keys`.
    fn ours(&self, keys: impl IntoIterator<Item = String>) -> Vec<String> {
        keys.into_iter()
            .filter(|k| {
                let (ns, name) = k.split_once('/').unwrap_or(("", k));
                self.stores
                    .gateways
                    .get(ns, name)
                    .is_some_and(|g| self.stores.is_ours(&g, self.lb))
            })
            .collect()
    }

    fn gateways_where(&self, f: impl Fn(&Gateway) -> bool) -> Vec<String> {
        self.stores
            .gateways
            .state()
            .iter()
            .filter(|g| f(g) && self.stores.is_ours(g, self.lb))
            .map(|g| key_of(g.as_ref()))
            .collect()
    }

    /// Parents of the routes `pick` selects.
    fn parents_of_routes(&self, pick: impl Fn(&RouteRefs) -> bool) -> Vec<String> {
        let parents: BTreeSet<String> = self
            .stores
            .route_refs(self.lb)
            .into_iter()
            .filter(|r| pick(r))
            .flat_map(|r| self.stores.gateways_of(&r))
            .collect();
        parents.into_iter().collect()
    }

    fn for_gateway(&self, gw: &Gateway) -> Vec<String> {
        if self.stores.is_ours(gw, self.lb) {
            vec![key_of(gw)]
        } else {
            Vec::new()
        }
    }

    fn for_class(&self, c: &GatewayClass) -> Vec<String> {
        let name = c.name_any();
        if c.spec.controller_name != controller_name(self.lb) {
            return Vec::new();
        }
        self.gateways_where(|g| g.spec.gateway_class_name == name)
    }

    fn for_lb_config(&self, l: &LoadBalancerConfiguration) -> Vec<String> {
        let (ns, name) = (l.namespace().unwrap_or_default(), l.name_any());
        let classes: BTreeSet<String> =
            self.stores
                .classes
                .state()
                .iter()
                .filter(|c| {
                    c.spec.parameters_ref.as_ref().is_some_and(|p| {
                        p.name == name && p.namespace.as_deref() == Some(ns.as_str())
                    })
                })
                .map(|c| c.name_any())
                .collect();
        self.gateways_where(|g| {
            let direct = g.namespace().as_deref() == Some(ns.as_str())
                && g.spec
                    .infrastructure
                    .as_ref()
                    .and_then(|i| i.parameters_ref.as_ref())
                    .is_some_and(|p| p.name == name);
            direct || classes.contains(&g.spec.gateway_class_name)
        })
    }
}

fn key_of<K: Resource>(o: &K) -> String {
    format!(
        "{}/{}",
        o.namespace().unwrap_or_else(|| "default".into()),
        o.name_any()
    )
}

impl Source<String> for Feed {
    fn slot(&self) -> &QueueSlot<String> {
        &self.queue
    }

    fn resync_all(&self) {
        self.all();
    }
}

/// What about an object counts for Gateways (changes of anything else queue nothing).
fn signature<K: Resource + serde::Serialize>(o: &K, with_status: bool) -> String {
    let mut v = serde_json::to_value(o).unwrap_or_default();
    if let Some(m) = v.as_object_mut() {
        if !with_status {
            m.remove("status");
        }
        if let Some(meta) = m.get_mut("metadata").and_then(|x| x.as_object_mut()) {
            meta.retain(|k, _| {
                matches!(
                    k.as_str(),
                    "annotations" | "labels" | "generation" | "deletionTimestamp"
                )
            });
        }
    }
    v.to_string()
}

type Mapper<K> = fn(&Feed, &K) -> Vec<String>;

/// One kind's trigger for one controller: maps an event to Gateway keys and queues them.
pub struct Trigger<K> {
    feed: Arc<Feed>,
    map: Mapper<K>,
    with_status: bool,
    /// Per object: its last signature and the Gateways it concerned.
    seen: Mutex<HashMap<String, (String, Vec<String>)>>,
}

impl<K> Trigger<K> {
    pub fn new(feed: Arc<Feed>, map: Mapper<K>, with_status: bool) -> Arc<Self> {
        Arc::new(Self {
            feed,
            map,
            with_status,
            seen: Mutex::new(HashMap::new()),
        })
    }
}

impl<K: Resource + serde::Serialize + Send + Sync> Trigger<K> {
    fn changed(&self, obj: &K) {
        let sig = signature(obj, self.with_status);
        let key = key_of(obj);
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.get(&key).is_some_and(|(s, _)| *s == sig) {
            return;
        }
        let now = (self.map)(&self.feed, obj);
        let old = seen
            .insert(key, (sig, now.clone()))
            .map(|(_, g)| g)
            .unwrap_or_default();
        drop(seen);
        let all: BTreeSet<String> = old.into_iter().chain(now).collect();
        self.feed.enqueue(all);
    }

    fn gone(&self, obj: &K) {
        let old = self
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key_of(obj))
            .map(|(_, g)| g)
            .unwrap_or_default();
        let all: BTreeSet<String> = old.into_iter().chain((self.map)(&self.feed, obj)).collect();
        self.feed.enqueue(all);
    }
}

impl<K: Resource + serde::Serialize + Send + Sync> Index<K> for Trigger<K> {
    fn apply(&self, obj: &Arc<K>) {
        self.changed(obj);
    }

    fn delete(&self, obj: &Arc<K>) {
        self.gone(obj);
    }

    fn reset(&self, objs: &[Arc<K>]) {
        let present: BTreeSet<String> = objs.iter().map(|o| key_of(o.as_ref())).collect();
        let vanished: Vec<Vec<String>> = {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            let keys: Vec<String> = seen
                .keys()
                .filter(|k| !present.contains(*k))
                .cloned()
                .collect();
            keys.iter()
                .filter_map(|k| seen.remove(k).map(|(_, g)| g))
                .collect()
        };
        self.feed.enqueue(vanished.into_iter().flatten());
        for o in objs {
            self.changed(o);
        }
    }
}

/// Mappers of each kind (see the module docs).
pub fn on_gateway(f: &Feed, g: &Gateway) -> Vec<String> {
    let (ns, name) = (g.namespace().unwrap_or_default(), g.name_any());
    // The Gateways whose routes chain to `g` read its `Programmed` ARN: its status counts.
    let chained = f.parents_of_routes(|r| r.has_gateway_backend(&ns, &name));
    f.for_gateway(g).into_iter().chain(chained).collect()
}
pub fn on_class(f: &Feed, c: &GatewayClass) -> Vec<String> {
    f.for_class(c)
}
pub fn on_lb_config(f: &Feed, l: &LoadBalancerConfiguration) -> Vec<String> {
    f.for_lb_config(l)
}
pub fn on_route<K: Resource + serde::Serialize>(f: &Feed, r: &K) -> Vec<String> {
    f.stores.gateways_of(&route_refs(r))
}
pub fn on_listener_set(_: &Feed, s: &ListenerSet) -> Vec<String> {
    vec![parent_key(s)]
}
pub fn on_service(f: &Feed, s: &Service) -> Vec<String> {
    let (ns, name) = (s.namespace().unwrap_or_default(), s.name_any());
    f.parents_of_routes(|r| r.has_backend(&ns, &name))
}
pub fn on_tg_config(f: &Feed, t: &TargetGroupConfiguration) -> Vec<String> {
    let (ns, name) = (t.namespace().unwrap_or_default(), t.name_any());
    let mut keys = f.parents_of_routes(|r| r.has_backend_in(&ns));
    // A Gateway's default TargetGroupConfiguration (named by its or its class's configuration).
    for lbc in f.stores.lb_configs.state() {
        let names_it = lbc
            .spec
            .default_target_group_configuration
            .as_ref()
            .is_some_and(|r| r.name == name);
        if names_it && lbc.namespace().as_deref() == Some(ns.as_str()) {
            keys.extend(f.for_lb_config(&lbc));
        }
    }
    keys
}
pub fn on_reference_grant(f: &Feed, g: &ReferenceGrant) -> Vec<String> {
    let ns = g.namespace().unwrap_or_default();
    f.parents_of_routes(|r| r.has_backend_in(&ns))
}
pub fn on_namespace(f: &Feed, n: &Namespace) -> Vec<String> {
    let ns = n.name_any();
    f.parents_of_routes(|r| r.namespace == ns)
}
pub fn on_rule_config(f: &Feed, l: &ListenerRuleConfiguration) -> Vec<String> {
    let ns = l.namespace().unwrap_or_default();
    f.parents_of_routes(|r| r.namespace == ns)
}
