//! Backend loading, ReferenceGrants and cross-namespace attachment against upstream: a
//! backendRef to a Service in another namespace needs a grant there (else route status
//! ResolvedRefs False, `RefNotPermitted`), and a parentRef to a Gateway in another namespace
//! needs the listener's `allowedRoutes`.

use super::{cfg, gateway, yaml};
use crate::fixtures::TestObject;
use crate::model::action::Action;
use crate::model::gateway::load::RouteProblem;
use crate::model::gateway::routes::{RouteKind, RouteRef};
use crate::model::gateway::*;

/// The HTTPRoute `apps/app` on listener `http` of `my-gw-ns/my-gw`, to the Service `api` of
/// namespace `backends`.
fn route() -> Vec<HttpRoute> {
    let route = HttpRoute::test("apps", "app")
        .parent_with("my-gw", |p| p.namespace("my-gw-ns").section("http"))
        .rule(|r| r.backend_with("api", |b| b.namespace("backends").port(80)));
    vec![route.build()]
}

/// The NodePort Service `backends/api` (port 80 to 8080, node port 30080).
fn api_service() -> Vec<Service> {
    let svc = Service::test("backends", "api")
        .uid("s1")
        .service_type("NodePort")
        .port(80, |p| p.target(8080).node_port(30080));
    vec![svc.build()]
}

fn build_with(grants: &str) -> GatewayBuild {
    let gw = gateway();
    let routes = route();
    let services = api_service();
    let grants: Vec<ReferenceGrant> = yaml(grants);
    let inputs = GatewayInputs {
        http_routes: &routes,
        services: &services,
        reference_grants: &grants,
        ..GatewayInputs::new(&gw)
    };
    build_alb_gateway_stack(&inputs, &cfg(), None).unwrap()
}

fn grant(namespace: &str, from_kind: &str, from_ns: &str, to_name: Option<&str>) -> String {
    let name = to_name.map(|n| format!(", name: {n}")).unwrap_or_default();
    format!(
        r#"
- apiVersion: gateway.networking.k8s.io/v1beta1
  kind: ReferenceGrant
  metadata: {{name: g, namespace: {namespace}}}
  spec:
    from: [{{group: gateway.networking.k8s.io, kind: {from_kind}, namespace: {from_ns}}}]
    to: [{{group: "", kind: Service{name}}}]
"#
    )
}

fn forwards(b: &GatewayBuild) -> bool {
    matches!(b.stack.listener_rules[0].actions[0], Action::Forward { .. })
}

#[test]
fn a_cross_namespace_backend_without_a_reference_grant_is_refused_with_ref_not_permitted() {
    let b = build_with("[]");
    // Left out of the stack: no target group, the rule answers 500.
    assert!(b.stack.target_groups.is_empty());
    assert_eq!(
        b.stack.listener_rules[0].actions,
        vec![Action::fixed("500", None)]
    );
    let problem = RouteProblem {
        route: RouteRef {
            kind: RouteKind::Http,
            namespace: "apps".into(),
            name: "app".into(),
        },
        reason: "RefNotPermitted",
        message: "No explicit ReferenceGrant exists to allow the reference.".into(),
    };
    assert_eq!(b.route_problems, vec![problem.clone()]);
    // Upstream: ResolvedRefs False, Accepted still True.
    assert!(problem.unresolved_refs() && !problem.refuses_acceptance());
    assert_eq!(b.dropped_backends[0].1.reason, "RefNotPermitted");
    // Still attached: the route is accepted by the listener.
    assert_eq!(b.attachment.attached_routes["http"], 1);
}

#[test]
fn a_reference_grant_in_the_service_namespace_allows_the_backend() {
    for to_name in [None, Some("api")] {
        let b = build_with(&grant("backends", "HTTPRoute", "apps", to_name));
        assert!(b.route_problems.is_empty(), "{:?}", b.route_problems);
        assert!(forwards(&b));
        assert_eq!(
            b.stack.target_groups[0].id,
            "my-gw-ns/my-gw:apps-app:HTTPRoute-backends-api:8080"
        );
    }
}

#[test]
fn a_reference_grant_that_does_not_match_exactly_allows_nothing() {
    let cases = [
        grant("apps", "HTTPRoute", "apps", None), // in the route's namespace
        grant("backends", "GRPCRoute", "apps", None), // another route kind
        grant("backends", "HTTPRoute", "other", None), // another namespace
        grant("backends", "HTTPRoute", "apps", Some("web")), // another Service
    ];
    for g in cases {
        let b = build_with(&g);
        assert_eq!(b.route_problems[0].reason, "RefNotPermitted", "{g}");
        assert!(!forwards(&b), "{g}");
    }
}

#[test]
fn a_route_in_another_namespace_attaches_only_where_allowed_routes_allows() {
    // gateway(): listener "http" allows All namespaces, "other" the Gateway's own (default).
    let routes = [HttpRoute::test("apps", "app")
        .parent_with("my-gw", |p| p.namespace("my-gw-ns").section("other"))
        .parent("my-gw")
        .rule(|r| r.backend("api", 80))
        .build()];
    let gw = gateway();
    let inputs = GatewayInputs {
        http_routes: &routes,
        ..GatewayInputs::new(&gw)
    };
    let b = build_alb_gateway_stack(&inputs, &cfg(), None).unwrap();
    // The first parentRef is refused by namespace; the second (no namespace = the route's
    // own, `apps`) names no Gateway of this controller and is not this Gateway's to report.
    let refused: Vec<(&str, RouteKind, &str)> = b
        .attachment
        .refusals
        .iter()
        .map(|r| (r.route.as_str(), r.kind, r.reason))
        .collect();
    assert_eq!(
        refused,
        vec![("apps/app", RouteKind::Http, "NotAllowedByListeners")]
    );
    assert!(b.stack.listeners.is_empty());
}

#[test]
fn allowed_routes_from_none_refuses_every_namespace_like_upstream() {
    // The gateway-api crate has no `None` variant; the manifest is normalised first.
    let mut doc = Gateway::test("my-gw-ns", "my-gw")
        .alb()
        .listener_with("http", "HTTP", 80, |l| l.from_namespaces("None"))
        .into_value();
    normalize_gateway(&mut doc);
    let gw: Gateway = serde_json::from_value(doc).unwrap();
    let routes = [HttpRoute::test("my-gw-ns", "same").parent("my-gw").build()];
    let inputs = GatewayInputs {
        http_routes: &routes,
        ..GatewayInputs::new(&gw)
    };
    let b = build_alb_gateway_stack(&inputs, &cfg(), None).unwrap();
    assert_eq!(b.attachment.refusals[0].reason, "NotAllowedByListeners");
    assert_eq!(b.attachment.attached_routes["http"], 0);
}

/// The route with one rule whose only backendRef is `backend` (YAML).
fn build_backend(backend: &str) -> Result<GatewayBuild, crate::model::ModelError> {
    let gw = gateway();
    let backend_ref: serde_json::Value = yaml(backend);
    let routes = [HttpRoute::test("backends", "app")
        .parent_with("my-gw", |p| p.namespace("my-gw-ns").section("http"))
        .rule(|r| r.set("backendRefs", vec![backend_ref]))
        .build()];
    let services = api_service();
    let inputs = GatewayInputs {
        http_routes: &routes,
        services: &services,
        ..GatewayInputs::new(&gw)
    };
    build_alb_gateway_stack(&inputs, &cfg(), None)
}

#[test]
fn backend_problems_carry_upstreams_reasons_and_only_the_weight_is_fatal() {
    let cases = [
        ("{name: api}", "UnsupportedValue", "Port is required"),
        (
            "{name: gone, port: 80}",
            "BackendNotFound",
            "Service (backends:gone) not found)",
        ),
        (
            "{name: api, port: 81}",
            "BackendNotFound",
            "Unable to find service port for port 81",
        ),
        (
            "{name: api, kind: ConfigMap, port: 80}",
            "InvalidKind",
            "Unknown backend reference kind",
        ),
        (
            "{name: edge, kind: Gateway}",
            "UnsupportedValue",
            "Port is required",
        ),
        (
            "{name: edge, kind: Gateway, port: 80}",
            "BackendNotFound",
            "Gateway (backends:edge) not found)",
        ),
    ];
    for (backend, reason, message) in cases {
        let b = build_backend(backend).unwrap();
        let got: Vec<(&str, &str)> = b
            .route_problems
            .iter()
            .map(|p| (p.reason, p.message.as_str()))
            .collect();
        assert_eq!(got, vec![(reason, message)], "{backend}");
        assert_eq!(
            b.stack.listener_rules[0].actions,
            vec![Action::fixed("500", None)]
        );
    }
    let err = build_backend("{name: api, port: 80, weight: 1000}")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Weight [1000] must be less than or equal to 999"),
        "{err}"
    );
}
