//! The GatewayClass and configuration controllers' view of the watches: a store per kind they
//! read and the triggers that queue work (upstream's `SetupWatches` of the four reconcilers):
//! a class of an enabled controller on its own events, and when the LoadBalancerConfiguration
//! it names — or that configuration's default TargetGroupConfiguration — changes; each
//! configuration object on its own events; and every object held back from deletion by our
//! finalizer whenever something that may have been using it changes or goes.

use std::sync::Arc;

use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::grpcroutes::GrpcRoute;
use gateway_api::apis::standard::httproutes::HttpRoute;
use kube::{Resource, ResourceExt};

use super::in_use::classes_using;
use super::references::ServiceReferences;
use crate::controller::skeleton::{Priority, QueueSlot, Source};
use crate::crd::gateway::{
    ListenerRuleConfiguration, LoadBalancerConfiguration, TargetGroupConfiguration,
};
use crate::model::gateway::{
    GATEWAY_CLASS_FINALIZER, LISTENER_RULE_CONFIGURATION_FINALIZER,
    LOAD_BALANCER_CONFIGURATION_FINALIZER, TARGET_GROUP_CONFIGURATION_FINALIZER,
};
use crate::watch::{OnEvent, Store, Synced, Watches};

/// One unit of work: a GatewayClass by name, or a configuration object by `(namespace, name)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    Class(String),
    LoadBalancerConfig(String, String),
    TargetGroupConfig(String, String),
    RuleConfig(String, String),
}

/// How a key shows in logs and keys the backoff.
impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Class(n) => write!(f, "GatewayClass {n}"),
            Key::LoadBalancerConfig(ns, n) => write!(f, "LoadBalancerConfiguration {ns}/{n}"),
            Key::TargetGroupConfig(ns, n) => write!(f, "TargetGroupConfiguration {ns}/{n}"),
            Key::RuleConfig(ns, n) => write!(f, "ListenerRuleConfiguration {ns}/{n}"),
        }
    }
}

/// Stores and triggers, kept on every replica from process start; work is queued only while a
/// term of leadership has attached its queue.
pub struct Feed {
    pub classes: Store<GatewayClass>,
    pub gateways: Store<Gateway>,
    pub lb_configs: Store<LoadBalancerConfiguration>,
    pub tg_configs: Store<TargetGroupConfiguration>,
    pub rule_configs: Store<ListenerRuleConfiguration>,
    pub http_routes: Store<HttpRoute>,
    pub grpc_routes: Store<GrpcRoute>,
    /// Services per Gateway, recorded by the Gateway reconcilers.
    pub references: Arc<ServiceReferences>,
    /// Controller names whose classes this process reconciles (ALB and/or NLB gate).
    controllers: Vec<&'static str>,
    queue: QueueSlot<Key>,
}

fn ns_name<K: Resource>(o: &K) -> (String, String) {
    (
        o.namespace().unwrap_or_else(|| "default".into()),
        o.name_any(),
    )
}

fn held<K: Resource>(o: &K, finalizer: &str) -> bool {
    o.meta().deletion_timestamp.is_some() && o.finalizers().iter().any(|f| f == finalizer)
}

impl Feed {
    fn new(controllers: Vec<&'static str>) -> Self {
        Feed {
            classes: Store::default(),
            gateways: Store::default(),
            lb_configs: Store::default(),
            tg_configs: Store::default(),
            rule_configs: Store::default(),
            http_routes: Store::default(),
            grpc_routes: Store::default(),
            references: Arc::default(),
            controllers,
            queue: QueueSlot::default(),
        }
    }

    /// A feed registered with nothing (both Gateway gates off).
    pub(super) fn unregistered() -> Self {
        Feed::new(Vec::new())
    }

    /// Registers stores, then triggers, with `watches` (before they start) and returns what the
    /// controller waits for before its first pass. HTTPRoutes and GRPCRoutes are read only with
    /// the ALB controller (their CRDs may be absent otherwise).
    pub fn register(watches: &Watches, controllers: Vec<&'static str>) -> (Arc<Feed>, Vec<Synced>) {
        let alb = controllers.contains(&crate::model::gateway::ALB_CONTROLLER_NAME);
        let feed = Arc::new(Feed::new(controllers));
        let g = &watches.gateway;
        let mut synced = Vec::new();
        macro_rules! watch {
            ($kind:expr, $store:ident, $ty:ty, $on:ident) => {{
                $kind.register(Arc::new(feed.$store.clone()));
                let f = feed.clone();
                $kind.register(Arc::new(OnEvent {
                    f: move |o: &$ty, deleted| f.$on(o, deleted),
                }));
                synced.push($kind.synced());
            }};
        }
        watch!(g.classes, classes, GatewayClass, on_class);
        watch!(g.gateways, gateways, Gateway, on_user);
        watch!(
            g.lb_configs,
            lb_configs,
            LoadBalancerConfiguration,
            on_lb_config
        );
        watch!(
            g.tg_configs,
            tg_configs,
            TargetGroupConfiguration,
            on_tg_config
        );
        watch!(
            g.rule_configs,
            rule_configs,
            ListenerRuleConfiguration,
            on_rule_config
        );
        if alb {
            watch!(g.http_routes, http_routes, HttpRoute, on_user);
            watch!(g.grpc_routes, grpc_routes, GrpcRoute, on_user);
        }
        (feed, synced)
    }

    /// Whether classes of `controller_name` are reconciled here.
    pub fn handles(&self, controller_name: &str) -> bool {
        self.controllers.contains(&controller_name)
    }

    fn add(&self, key: Key) {
        self.queue.add(key);
    }

    /// A term's first pass: every class of ours and every configuration object (upstream's
    /// initial list delivers each as a create event), at low priority.
    pub fn all(&self) {
        let Some(q) = self.queue.get() else { return };
        for c in self.classes.state() {
            if self.handles(&c.spec.controller_name) {
                q.add_with(Key::Class(c.name_any()), Priority::Low);
            }
        }
        for l in self.lb_configs.state() {
            let (ns, name) = ns_name(l.as_ref());
            q.add_with(Key::LoadBalancerConfig(ns, name), Priority::Low);
        }
        for t in self.tg_configs.state() {
            let (ns, name) = ns_name(t.as_ref());
            q.add_with(Key::TargetGroupConfig(ns, name), Priority::Low);
        }
        for r in self.rule_configs.state() {
            let (ns, name) = ns_name(r.as_ref());
            q.add_with(Key::RuleConfig(ns, name), Priority::Low);
        }
    }

    fn on_class(&self, class: &GatewayClass, deleted: bool) {
        if !deleted && self.handles(&class.spec.controller_name) {
            self.add(Key::Class(class.name_any()));
        }
        self.requeue_held();
    }

    /// Classes whose parametersRef names LoadBalancerConfiguration `ns/name`.
    fn classes_of(&self, ns: &str, name: &str) {
        let classes = self.classes.state();
        for c in classes_using(&classes, ns, name, |c| self.handles(c)) {
            self.add(Key::Class(c.name_any()));
        }
    }

    fn on_lb_config(&self, lbc: &LoadBalancerConfiguration, deleted: bool) {
        let (ns, name) = ns_name(lbc);
        self.classes_of(&ns, &name);
        if !deleted {
            self.add(Key::LoadBalancerConfig(ns, name));
        }
    }

    fn on_tg_config(&self, tgc: &TargetGroupConfiguration, deleted: bool) {
        let (ns, name) = ns_name(tgc);
        // A default TargetGroupConfiguration's version is part of its classes' processed version.
        if tgc.spec.target_reference.is_none() {
            for l in self.lb_configs.state() {
                let (lns, lname) = ns_name(l.as_ref());
                let defaults_to_it = l
                    .spec
                    .default_target_group_configuration
                    .as_ref()
                    .is_some_and(|d| d.name == name);
                if lns == ns && defaults_to_it {
                    self.classes_of(&lns, &lname);
                    if held(l.as_ref(), LOAD_BALANCER_CONFIGURATION_FINALIZER) {
                        self.add(Key::LoadBalancerConfig(lns, lname));
                    }
                }
            }
        }
        if !deleted {
            self.add(Key::TargetGroupConfig(ns, name));
        }
    }

    fn on_rule_config(&self, lrc: &ListenerRuleConfiguration, deleted: bool) {
        if !deleted {
            let (ns, name) = ns_name(lrc);
            self.add(Key::RuleConfig(ns, name));
        }
    }

    /// A Gateway or route changed or went: it may have been what held something back.
    fn on_user<K>(&self, _obj: &K, _deleted: bool) {
        self.requeue_held();
    }

    /// Queues every object our finalizer holds back from deletion (few, and only while deleting),
    /// so its deletion proceeds as soon as its last user goes instead of at the next retry.
    fn requeue_held(&self) {
        if self.queue.get().is_none() {
            return;
        }
        for c in self.classes.state() {
            if held(c.as_ref(), GATEWAY_CLASS_FINALIZER) && self.handles(&c.spec.controller_name) {
                self.add(Key::Class(c.name_any()));
            }
        }
        for l in self.lb_configs.state() {
            if held(l.as_ref(), LOAD_BALANCER_CONFIGURATION_FINALIZER) {
                let (ns, name) = ns_name(l.as_ref());
                self.add(Key::LoadBalancerConfig(ns, name));
            }
        }
        for t in self.tg_configs.state() {
            if held(t.as_ref(), TARGET_GROUP_CONFIGURATION_FINALIZER) {
                let (ns, name) = ns_name(t.as_ref());
                self.add(Key::TargetGroupConfig(ns, name));
            }
        }
        for r in self.rule_configs.state() {
            if held(r.as_ref(), LISTENER_RULE_CONFIGURATION_FINALIZER) {
                let (ns, name) = ns_name(r.as_ref());
                self.add(Key::RuleConfig(ns, name));
            }
        }
    }
}

impl Source<Key> for Feed {
    fn slot(&self) -> &QueueSlot<Key> {
        &self.queue
    }

    fn resync_all(&self) {
        self.all();
    }
}

impl crate::controller::skeleton::QueueKey for Key {
    /// `GatewayClass <name>`, `LoadBalancerConfiguration <ns>/<name>`, ...
    fn id(&self) -> String {
        self.to_string()
    }
}
