//! The objects one Gateway's model is built from, copied out of the stores: the routes of the
//! controller's kinds that name the Gateway as a parent (in namespace/name order, so a build
//! does not depend on store order), the Services and Gateways they use as backends, and the
//! Namespaces and configuration objects the checks read; then what only the API server or AWS
//! knows: OIDC Secrets, and the ARNs of target groups named by `TargetGroupName` backends.

use std::collections::BTreeMap;

use gateway_api::apis::experimental::tcproutes::TcpRoute;
use gateway_api::apis::experimental::udproutes::UdpRoute;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::grpcroutes::GrpcRoute;
use gateway_api::apis::standard::httproutes::HttpRoute;
use gateway_api::apis::standard::listenersets::ListenerSet;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use gateway_api::apis::standard::tlsroutes::TlsRoute;
use k8s_openapi::api::core::v1::{Namespace, Secret, Service};
use kube::{Resource, ResourceExt};

use super::config::Configs;
use super::feed::Stores;
use super::refs::{route_refs, RouteRefs};
use crate::crd::gateway::{ListenerRuleConfiguration, TargetGroupConfiguration};
use crate::model::gateway::listener_sets::parent_key;
use crate::model::gateway::listeners::LbKind;
use crate::model::gateway::GatewayInputs;
use crate::watch::Store;
use crate::webhook::tg_cache::TgCache;

/// Owned copies of everything [`GatewayInputs`] borrows.
#[derive(Default)]
pub struct Owned {
    pub http_routes: Vec<HttpRoute>,
    pub grpc_routes: Vec<GrpcRoute>,
    pub tcp_routes: Vec<TcpRoute>,
    pub udp_routes: Vec<UdpRoute>,
    pub tls_routes: Vec<TlsRoute>,
    pub services: Vec<Service>,
    pub namespaces: Vec<Namespace>,
    pub tg_configs: Vec<TargetGroupConfiguration>,
    pub reference_grants: Vec<ReferenceGrant>,
    pub rule_configs: Vec<ListenerRuleConfiguration>,
    /// The Secrets the rule configurations' OIDC actions name (see [`super::secrets`]).
    pub secrets: Vec<Secret>,
    /// The Gateways the routes name as backends (NLB → ALB chaining), as the store has them.
    pub gateways: Vec<Gateway>,
    /// The ARNs of the target groups `TargetGroupName` backends name (see
    /// [`Owned::look_up_target_groups`]).
    pub target_group_arns: BTreeMap<String, Result<String, String>>,
    /// The ListenerSets naming the Gateway (gate `GatewayListenerSet`; the model does the
    /// handshake).
    pub listener_sets: Vec<ListenerSet>,
}

fn sorted<K: Resource + Clone>(s: &Store<K>, keep: impl Fn(&K) -> bool) -> Vec<K> {
    let mut v: Vec<K> = s
        .state()
        .iter()
        .filter(|o| keep(o))
        .map(|o| (**o).clone())
        .collect();
    v.sort_by_key(|o| (o.namespace(), o.name_any()));
    v
}

/// The routes naming Gateway `gw` or one of `sets` (`ns/name` of its ListenerSets).
fn children<K: Resource + Clone + serde::Serialize>(
    s: &Store<K>,
    gw: &str,
    sets: &[String],
) -> Vec<K> {
    sorted(s, |r| {
        let refs = route_refs(r);
        refs.has_parent(gw) || refs.listener_sets.iter().any(|l| sets.contains(l))
    })
}

impl Owned {
    /// Copies what Gateway `key` of a controller of `lb` needs.
    pub fn gather(stores: &Stores, lb: LbKind, key: &str) -> Owned {
        let mut o = Owned::default();
        if stores.listener_sets_on {
            o.listener_sets = sorted(&stores.listener_sets, |s| parent_key(s) == key);
        }
        let sets: Vec<String> = o
            .listener_sets
            .iter()
            .map(|s| format!("{}/{}", s.namespace().unwrap_or_default(), s.name_any()))
            .collect();
        match lb {
            LbKind::Alb => {
                o.http_routes = children(&stores.http_routes, key, &sets);
                o.grpc_routes = children(&stores.grpc_routes, key, &sets);
                o.rule_configs = sorted(&stores.rule_configs, |_| true);
            }
            LbKind::Nlb => {
                o.tcp_routes = children(&stores.tcp_routes, key, &sets);
                o.udp_routes = children(&stores.udp_routes, key, &sets);
                o.tls_routes = children(&stores.tls_routes, key, &sets);
            }
        }
        let (mut backends, mut gateways) = (Vec::new(), Vec::new());
        for refs in o.route_refs() {
            backends.extend(refs.backends);
            gateways.extend(refs.gateway_backends);
        }
        backends.sort();
        backends.dedup();
        gateways.sort();
        gateways.dedup();
        o.services = backends
            .iter()
            .filter_map(|(ns, name)| stores.services.get(ns, name))
            .map(|s| (*s).clone())
            .collect();
        o.gateways = gateways
            .iter()
            .filter_map(|(ns, name)| stores.gateways.get(ns, name))
            .map(|g| (*g).clone())
            .collect();
        o.namespaces = sorted(&stores.namespaces, |_| true);
        o.tg_configs = sorted(&stores.tg_configs, |_| true);
        o.reference_grants = sorted(&stores.reference_grants, |_| true);
        o
    }

    /// The references of every route copied.
    fn route_refs(&self) -> Vec<RouteRefs> {
        let mut out = Vec::new();
        out.extend(self.http_routes.iter().map(route_refs));
        out.extend(self.grpc_routes.iter().map(route_refs));
        out.extend(self.tcp_routes.iter().map(route_refs));
        out.extend(self.udp_routes.iter().map(route_refs));
        out.extend(self.tls_routes.iter().map(route_refs));
        out
    }

    /// Looks up by name (`DescribeTargetGroups`, answers kept by `cache`) the target groups
    /// that `TargetGroupName` backends name, so the model can forward to their ARNs. A failed
    /// lookup is recorded with its error: the model fails the build with it when it reaches
    /// that backend, as upstream's model builder does.
    pub async fn look_up_target_groups(&mut self, cache: &TgCache) {
        let mut names: Vec<String> = self
            .route_refs()
            .into_iter()
            .flat_map(|r| r.target_group_names)
            .collect();
        names.sort();
        names.dedup();
        for name in names {
            let arn = cache
                .by_name(&name)
                .await
                .map(|tg| tg.arn)
                .map_err(|e| e.to_string());
            self.target_group_arns.insert(name, arn);
        }
    }

    /// The model's inputs of `gw` with `configs`.
    pub fn inputs<'a>(&'a self, gw: &'a Gateway, configs: &'a Configs) -> GatewayInputs<'a> {
        GatewayInputs {
            class_config: configs.class.as_ref(),
            gateway_config: configs.gateway.as_ref(),
            http_routes: &self.http_routes,
            grpc_routes: &self.grpc_routes,
            tcp_routes: &self.tcp_routes,
            udp_routes: &self.udp_routes,
            tls_routes: &self.tls_routes,
            services: &self.services,
            namespaces: &self.namespaces,
            tg_configs: &self.tg_configs,
            reference_grants: &self.reference_grants,
            rule_configs: &self.rule_configs,
            secrets: &self.secrets,
            gateways: &self.gateways,
            target_group_arns: &self.target_group_arns,
            listener_sets: &self.listener_sets,
            ..GatewayInputs::new(gw)
        }
    }
}
