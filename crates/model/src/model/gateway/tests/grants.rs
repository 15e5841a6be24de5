//! Backend loading, ReferenceGrants and cross-namespace attachment against upstream: a
//! backendRef to a Service in another namespace needs a grant there (else route status
//! ResolvedRefs False, `RefNotPermitted`), and a parentRef to a Gateway in another namespace
//! needs the listener's `allowedRoutes`.

use super::{cfg, yaml, GATEWAY};
use crate::model::action::Action;
use crate::model::gateway::load::RouteProblem;
use crate::model::gateway::routes::{RouteKind, RouteRef};
use crate::model::gateway::*;

const ROUTE: &str = r#"
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: app, namespace: apps}
  spec:
    parentRefs: [{name: my-gw, namespace: my-gw-ns, sectionName: http}]
    rules: [{backendRefs: [{name: api, namespace: backends, port: 80}]}]
"#;

const BACKEND: &str = r#"
- apiVersion: v1
  kind: Service
  metadata: {name: api, namespace: backends, uid: s1}
  spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}
"#;

fn build_with(grants: &str) -> GatewayBuild {
    let gw: Gateway = yaml(GATEWAY);
    let routes: Vec<HttpRoute> = yaml(ROUTE);
    let services: Vec<Service> = yaml(BACKEND);
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
    // GATEWAY: listener "http" allows All namespaces, "other" the Gateway's own (default).
    let routes: Vec<HttpRoute> = yaml(
        r#"
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: app, namespace: apps}
  spec:
    parentRefs: [{name: my-gw, namespace: my-gw-ns, sectionName: other}, {name: my-gw}]
    rules: [{backendRefs: [{name: api, port: 80}]}]
"#,
    );
    let gw: Gateway = yaml(GATEWAY);
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
    let mut doc: serde_json::Value = yaml(
        r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: my-gw, namespace: my-gw-ns}
spec:
  gatewayClassName: alb
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: None}}}
"#,
    );
    normalize_gateway(&mut doc);
    let gw: Gateway = serde_json::from_value(doc).unwrap();
    let routes: Vec<HttpRoute> = yaml(
        r#"
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: same, namespace: my-gw-ns}
  spec: {parentRefs: [{name: my-gw}]}
"#,
    );
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
    let gw: Gateway = yaml(GATEWAY);
    let routes: Vec<HttpRoute> = yaml(&format!(
        r#"
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {{name: app, namespace: backends}}
  spec:
    parentRefs: [{{name: my-gw, namespace: my-gw-ns, sectionName: http}}]
    rules: [{{backendRefs: [{backend}]}}]
"#
    ));
    let services: Vec<Service> = yaml(BACKEND);
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
