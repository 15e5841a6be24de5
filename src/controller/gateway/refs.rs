//! What a route points at, read the same way for every route kind (HTTP, GRPC, TCP, UDP, TLS):
//! the Gateways its `parentRefs` name and the Services, Gateways and target group names its
//! `backendRefs` name. The Gateway controllers use it to pick the routes of one Gateway and to
//! find the Gateways an event about a route, Service, Gateway or configuration object concerns.

use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde_json::Value;

const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";

/// The Gateways (`ns/name`) and Services (`(ns, name)`) one route refers to, and its other
/// backends: Gateways (`(ns, name)`, NLB → ALB chaining) and existing target groups by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteRefs {
    pub namespace: String,
    pub parents: Vec<String>,
    /// The ListenerSets (`ns/name`) its parentRefs of kind ListenerSet name.
    pub listener_sets: Vec<String>,
    pub backends: Vec<(String, String)>,
    pub gateway_backends: Vec<(String, String)>,
    pub target_group_names: Vec<String>,
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

    /// Whether a backend of the route is Gateway `ns/name`.
    pub fn has_gateway_backend(&self, ns: &str, name: &str) -> bool {
        self.gateway_backends
            .iter()
            .any(|(n, g)| n == ns && g == name)
    }

    /// Whether a Service or Gateway backend of the route is in namespace `ns`.
    pub fn has_backend_in(&self, ns: &str) -> bool {
        self.backends
            .iter()
            .chain(&self.gateway_backends)
            .any(|(n, _)| n == ns)
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
    let refs: Vec<&Value> = spec["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["backendRefs"].as_array().into_iter().flatten())
        .collect();
    // Gateway and TargetGroupName backends are told apart by kind alone, as the model does.
    let of_kind = |pick: &dyn Fn(&Value) -> bool| {
        let mut v: Vec<(String, String)> = refs
            .iter()
            .filter(|b| pick(b))
            .filter_map(|b| {
                let ns = str_of(b, "namespace").unwrap_or(&namespace);
                Some((ns.to_string(), str_of(b, "name")?.to_string()))
            })
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let backends = of_kind(&|b| is_kind(b, "Service", ""));
    let gateway_backends = of_kind(&|b| str_of(b, "kind") == Some("Gateway"));
    let mut target_group_names: Vec<String> =
        of_kind(&|b| str_of(b, "kind") == Some("TargetGroupName"))
            .into_iter()
            .map(|(_, name)| name)
            .collect();
    target_group_names.sort();
    target_group_names.dedup();
    RouteRefs {
        namespace,
        parents,
        listener_sets,
        backends,
        gateway_backends,
        target_group_names,
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
                                           {"name": "other", "kind": "Gateway", "group": "gateway.networking.k8s.io"}]},
                          {"backendRefs": [{"name": "existing", "kind": "TargetGroupName"},
                                           {"name": "edge", "namespace": "infra", "kind": "Gateway", "port": 80}]}]
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
        assert_eq!(
            refs.gateway_backends,
            vec![
                ("apps".into(), "other".into()),
                ("infra".into(), "edge".into())
            ]
        );
        assert!(refs.has_gateway_backend("infra", "edge") && !refs.has_backend("infra", "edge"));
        assert!(refs.has_backend_in("infra") && !refs.has_backend_in("elsewhere"));
        assert_eq!(refs.target_group_names, vec!["existing"]);
    }
}
