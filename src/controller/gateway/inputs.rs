//! The objects one Gateway's model is built from, copied out of the stores: the routes of the
//! controller's kinds that name the Gateway as a parent (in namespace/name order, so a build
//! does not depend on store order), the Services they use, and the Namespaces and configuration
//! objects the checks read.

use gateway_api::apis::experimental::tcproutes::TcpRoute;
use gateway_api::apis::experimental::udproutes::UdpRoute;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::grpcroutes::GrpcRoute;
use gateway_api::apis::standard::httproutes::HttpRoute;
use gateway_api::apis::standard::listenersets::ListenerSet;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use gateway_api::apis::standard::tlsroutes::TlsRoute;
use k8s_openapi::api::core::v1::{Namespace, Secret, Service};
use kube::{Api, Resource, ResourceExt};

use super::config::Configs;
use super::feed::Stores;
use super::refs::route_refs;
use crate::crd::gateway::{ListenerRuleConfiguration, TargetGroupConfiguration};
use crate::model::gateway::listener_sets::parent_key;
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
    /// The Secrets the rule configurations' OIDC actions name (see [`Owned::read_secrets`]).
    pub secrets: Vec<Secret>,
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

    /// Reads, one GET each, the Secrets the OIDC actions of the rule configurations name (in the
    /// configuration's namespace, as upstream): the model takes the client id and secret from
    /// them. A Secret that does not exist is left out, and the model says so by name. One GET
    /// needs only `get` on that Secret (a namespaced Role with `resourceNames` is enough).
    pub async fn read_secrets(&mut self, client: &kube::Client) -> Result<(), kube::Error> {
        let mut wanted = std::collections::BTreeSet::new();
        for c in &self.rule_configs {
            let ns = c.namespace().unwrap_or_else(|| "default".into());
            for a in &c.spec.actions {
                if let Some(o) = &a.authenticate_oidc_config {
                    wanted.insert((ns.clone(), o.secret.name.clone()));
                }
            }
        }
        for (ns, name) in wanted {
            let api: Api<Secret> = Api::namespaced(client.clone(), &ns);
            if let Some(secret) = api.get_opt(&name).await? {
                self.secrets.push(secret);
            }
        }
        Ok(())
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
            listener_sets: &self.listener_sets,
            ..GatewayInputs::new(gw)
        }
    }
}

#[cfg(test)]
mod secret_tests {
    use super::*;
    use http::{Request, Response, StatusCode};
    use kube::client::Body;
    use std::sync::{Arc, Mutex};

    /// A client that knows one Secret, `demo/oidc`, and records the paths it was asked for.
    fn client() -> (kube::Client, Arc<Mutex<Vec<String>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let svc = tower::service_fn(move |req: Request<Body>| {
            let path = req.uri().path().to_string();
            s.lock().unwrap().push(path.clone());
            async move {
                let r = if path == "/api/v1/namespaces/demo/secrets/oidc" {
                    let body = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
                        "metadata": {"name": "oidc", "namespace": "demo"},
                        "data": {"clientID": "aWQ=", "clientSecret": "c2VjcmV0"}});
                    Response::new(Body::from(serde_json::to_vec(&body).unwrap()))
                } else {
                    let body = serde_json::json!({"kind": "Status", "apiVersion": "v1",
                        "status": "Failure", "reason": "NotFound", "code": 404, "message": "not found"});
                    let mut r = Response::new(Body::from(serde_json::to_vec(&body).unwrap()));
                    *r.status_mut() = StatusCode::NOT_FOUND;
                    r
                };
                Ok::<_, std::convert::Infallible>(r)
            }
        });
        (kube::Client::new(svc, "default"), seen)
    }

    fn lrc(secret: &str) -> ListenerRuleConfiguration {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "gateway.k8s.aws/v1", "kind": "ListenerRuleConfiguration",
            "metadata": {"name": format!("auth-{secret}"), "namespace": "demo"},
            "spec": {"actions": [{"type": "authenticate-oidc", "authenticateOIDCConfig": {
                "issuer": "https://idp", "authorizationEndpoint": "https://idp/auth",
                "tokenEndpoint": "https://idp/token", "userInfoEndpoint": "https://idp/user",
                "secret": {"name": secret}}}]}
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn the_oidc_secrets_rule_configurations_name_are_read_once_each() {
        let (client, seen) = client();
        let mut owned = Owned {
            rule_configs: vec![lrc("oidc"), lrc("oidc"), lrc("missing")],
            ..Owned::default()
        };
        owned.read_secrets(&client).await.unwrap();
        let names: Vec<_> = owned.secrets.iter().map(|s| s.name_any()).collect();
        assert_eq!(
            names,
            vec!["oidc"],
            "the missing one is left to the model to report"
        );
        assert_eq!(
            seen.lock().unwrap().len(),
            2,
            "one GET per distinct Secret: {:?}",
            seen.lock().unwrap()
        );
    }
}
