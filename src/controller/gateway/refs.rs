//! What a route points at, read the same way for every route kind (HTTP, GRPC, TCP, UDP, TLS):
//! the Gateways its `parentRefs` name and the Services its `backendRefs` name. The Gateway
//! controllers use it to pick the routes of one Gateway and to find the Gateways an event about
//! a route, Service or configuration object concerns.

use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde_json::Value;

const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";

/// The Gateways (`ns/name`) and Services (`(ns, name)`) one route refers to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteRefs {
    pub namespace: String,
    pub parents: Vec<String>,
    /// The ListenerSets (`ns/name`) its parentRefs of kind ListenerSet name.
    pub listener_sets: Vec<String>,
    pub backends: Vec<(String, String)>,
}

impl RouteRefs {
    /// Whether the route names Gateway `key` as a parent.
    pub fn has_parent(&self, key: &str) -> bool {
        self.parents.iter().any(|p| p == key)
    }

    /// Whether a backend of the route is Service `ns/name`.
    pub fn has_backend(&self, ns: &str, name: &str) -> bool {
        self.backends.iter().any(|(n, s)| n == ns && s == name)
    }
}

fn str_of<'a>(v: &'a Value, field: &str) -> Option<&'a str> {
    v.get(field).and_then(Value::as_str)
}

/// `kind`/`group` absent or the defaults the Gateway API gives them.
fn is_kind(v: &Value, kind: &str, group: &str) -> bool {
    str_of(v, "kind").is_none_or(|k| k == kind) && str_of(v, "group").is_none_or(|g| g == group)
}

/// The references of `route` (any Gateway API route kind).
pub fn route_refs<K: Resource + Serialize>(route: &K) -> RouteRefs {
    let namespace = route.namespace().unwrap_or_else(|| "default".into());
    let Ok(v) = serde_json::to_value(route) else {
        return RouteRefs {
            namespace,
            ..Default::default()
        };
    };
    let spec = &v["spec"];
    let parents_of = |kind: &str, kind_required: bool| {
        let mut keys: Vec<String> = spec["parentRefs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| !kind_required || str_of(p, "kind").is_some())
            .filter(|p| is_kind(p, kind, GATEWAY_GROUP))
            .filter_map(|p| {
                let ns = str_of(p, "namespace").unwrap_or(&namespace);
                Some(format!("{ns}/{}", str_of(p, "name")?))
            })
            .collect();
        keys.sort();
        keys.dedup();
        keys
    };
    let parents = parents_of("Gateway", false);
    let listener_sets = parents_of("ListenerSet", true);
    let mut backends: Vec<(String, String)> = spec["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["backendRefs"].as_array().into_iter().flatten())
        .filter(|b| is_kind(b, "Service", ""))
        .filter_map(|b| {
            let ns = str_of(b, "namespace").unwrap_or(&namespace);
            Some((ns.to_string(), str_of(b, "name")?.to_string()))
        })
        .collect();
    backends.sort();
    backends.dedup();
    RouteRefs {
        namespace,
        parents,
        listener_sets,
        backends,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_api::apis::standard::httproutes::HttpRoute;
    use serde_json::json;

    #[test]
    fn parents_and_backends_default_to_the_routes_namespace_and_skip_other_kinds() {
        let r: HttpRoute = serde_json::from_value(json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "r", "namespace": "apps"},
            "spec": {
                "parentRefs": [{"name": "gw"}, {"name": "edge", "namespace": "infra"},
                               {"name": "ls", "kind": "ListenerSet"}],
                "rules": [{"backendRefs": [{"name": "web", "port": 80},
                                           {"name": "db", "namespace": "data", "port": 5432},
                                           {"name": "other", "kind": "Gateway", "group": "gateway.networking.k8s.io"}]}]
            }
        }))
        .unwrap();
        let refs = route_refs(&r);
        assert_eq!(refs.parents, vec!["apps/gw", "infra/edge"]);
        assert_eq!(
            refs.backends,
            vec![("apps".into(), "web".into()), ("data".into(), "db".into())]
        );
        assert!(refs.has_parent("infra/edge") && !refs.has_parent("apps/ls"));
        assert_eq!(refs.listener_sets, vec!["apps/ls"]);
        assert!(refs.has_backend("data", "db"));
    }
}
