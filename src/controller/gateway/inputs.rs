//! The objects one Gateway's model is built from, copied out of the stores: the routes of the
//! controller's kinds that name the Gateway as a parent (in namespace/name order, so a build
//! does not depend on store order), the Services they use, and the Namespaces and configuration
//! objects the checks read.

use gateway_api::apis::experimental::tcproutes::TcpRoute;
use gateway_api::apis::experimental::udproutes::UdpRoute;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::grpcroutes::GrpcRoute;
use gateway_api::apis::standard::httproutes::HttpRoute;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use gateway_api::apis::standard::tlsroutes::TlsRoute;
use k8s_openapi::api::core::v1::{Namespace, Secret, Service};
use kube::{Resource, ResourceExt};

use super::config::Configs;
use super::feed::Stores;
use super::refs::route_refs;
use crate::crd::gateway::{ListenerRuleConfiguration, TargetGroupConfiguration};
use crate::model::gateway::listeners::LbKind;
use crate::model::gateway::GatewayInputs;
use crate::watch::Store;

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

fn children<K: Resource + Clone + serde::Serialize>(s: &Store<K>, gw: &str) -> Vec<K> {
    sorted(s, |r| route_refs(r).has_parent(gw))
}

impl Owned {
    /// Copies what Gateway `key` of a controller of `lb` needs.
    pub fn gather(stores: &Stores, lb: LbKind, key: &str) -> Owned {
        let mut o = Owned::default();
        match lb {
            LbKind::Alb => {
                o.http_routes = children(&stores.http_routes, key);
                o.grpc_routes = children(&stores.grpc_routes, key);
                o.rule_configs = sorted(&stores.rule_configs, |_| true);
            }
            LbKind::Nlb => {
                o.tcp_routes = children(&stores.tcp_routes, key);
                o.udp_routes = children(&stores.udp_routes, key);
                o.tls_routes = children(&stores.tls_routes, key);
            }
        }
        let mut backends: Vec<(String, String)> = Vec::new();
        let mut add = |refs: super::refs::RouteRefs| backends.extend(refs.backends);
        o.http_routes.iter().for_each(|r| add(route_refs(r)));
        o.grpc_routes.iter().for_each(|r| add(route_refs(r)));
        o.tcp_routes.iter().for_each(|r| add(route_refs(r)));
        o.udp_routes.iter().for_each(|r| add(route_refs(r)));
        o.tls_routes.iter().for_each(|r| add(route_refs(r)));
        backends.sort();
        backends.dedup();
        o.services = backends
            .iter()
            .filter_map(|(ns, name)| stores.services.get(ns, name))
            .map(|s| (*s).clone())
            .collect();
        o.namespaces = sorted(&stores.namespaces, |_| true);
        o.tg_configs = sorted(&stores.tg_configs, |_| true);
        o.reference_grants = sorted(&stores.reference_grants, |_| true);
        o
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
            ..GatewayInputs::new(gw)
        }
    }
}
