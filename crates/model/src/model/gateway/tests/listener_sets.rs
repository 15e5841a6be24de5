//! ListenerSets against upstream's `listener_set.go` and `validateListeners`: the Gateway's
//! `allowedListeners` handshake (default none), precedence of Gateway listeners, then older
//! sets, then `ns/name`, and routes attaching through parentRef kind ListenerSet.

use gateway_api::apis::standard::listenersets::ListenerSet;
use k8s_openapi::api::core::v1::Namespace;
use serde_json::{json, Value};

use super::{cfg, services, yaml, UID};
use crate::fixtures::TestObject;
use crate::model::gateway::listener_sets::handshake;
use crate::model::gateway::*;
use crate::model::types::Protocol;

/// The ALB Gateway `my-gw-ns/my-gw` (listener `http`, port 80, for every namespace) with
/// `allowed` as its `allowedListeners`.
fn gateway(allowed: Option<Value>) -> Gateway {
    let gw = Gateway::test("my-gw-ns", "my-gw")
        .uid(UID)
        .alb()
        .listener_with("http", "HTTP", 80, |l| l.from_all());
    let gw = match allowed {
        Some(allowed) => gw.set(&["spec", "allowedListeners"], allowed),
        None => gw,
    };
    gw.build()
}

/// `allowedListeners` from namespaces `from` (`None`, `Same`, `All`).
fn allowed_from(from: &str) -> Option<Value> {
    Some(json!({"namespaces": {"from": from}}))
}

fn set(ns: &str, name: &str, created: &str, listeners: &str) -> ListenerSet {
    yaml(&format!(
        r#"
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {{name: {name}, namespace: {ns}, generation: 3, creationTimestamp: "{created}"}}
spec:
  parentRef: {{name: my-gw, namespace: my-gw-ns}}
  listeners: {listeners}
"#
    ))
}

fn namespaces() -> Vec<Namespace> {
    yaml(
        r#"
- {apiVersion: v1, kind: Namespace, metadata: {name: team-a, labels: {gw-access: "true"}}}
- {apiVersion: v1, kind: Namespace, metadata: {name: team-b}}
"#,
    )
}

fn accepted_names(gw: &Gateway, sets: &[ListenerSet]) -> (Vec<String>, Vec<String>) {
    let ns = namespaces();
    let labels = |n: &str| {
        ns.iter()
            .find(|x| x.metadata.name.as_deref() == Some(n))
            .and_then(|x| x.metadata.labels.clone())
            .unwrap_or_default()
    };
    let h = handshake(gw, sets, &labels);
    (
        h.accepted
            .iter()
            .map(|s| format!("{}/{}", s.namespace, s.name))
            .collect(),
        h.rejected
            .iter()
            .map(|s| format!("{}/{}", s.namespace, s.name))
            .collect(),
    )
}

const L8080: &str =
    "[{name: extra, port: 8080, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]";

#[test]
fn the_gateway_allows_no_listener_set_unless_allowed_listeners_says_so() {
    let sets = [
        set("my-gw-ns", "same", "2025-01-01T00:00:00Z", L8080),
        set("team-a", "labelled", "2025-01-01T00:00:00Z", L8080),
        set("team-b", "plain", "2025-01-01T00:00:00Z", L8080),
    ];
    let all = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // Default (no allowedListeners) and `from: None`: every set naming the Gateway is rejected.
    for allowed in [None, allowed_from("None")] {
        let (ok, rejected) = accepted_names(&gateway(allowed.clone()), &sets);
        assert!(ok.is_empty(), "{allowed:?}: {ok:?}");
        assert_eq!(
            rejected,
            all(&["my-gw-ns/same", "team-a/labelled", "team-b/plain"])
        );
    }
    let (ok, rejected) = accepted_names(&gateway(allowed_from("Same")), &sets);
    assert_eq!(ok, all(&["my-gw-ns/same"]));
    assert_eq!(rejected, all(&["team-a/labelled", "team-b/plain"]));
    let (ok, _) = accepted_names(&gateway(allowed_from("All")), &sets);
    assert_eq!(
        ok,
        all(&["my-gw-ns/same", "team-a/labelled", "team-b/plain"])
    );
    let selector = json!({"namespaces": {
        "from": "Selector", "selector": {"matchLabels": {"gw-access": "true"}}
    }});
    let (ok, rejected) = accepted_names(&gateway(Some(selector)), &sets);
    assert_eq!(ok, all(&["team-a/labelled"]));
    assert_eq!(rejected, all(&["my-gw-ns/same", "team-b/plain"]));
}

#[test]
fn a_set_naming_another_gateway_is_neither_accepted_nor_rejected() {
    let mut other = set("my-gw-ns", "other", "2025-01-01T00:00:00Z", L8080);
    other.spec.parent_ref.name = "another-gw".into();
    let (ok, rejected) = accepted_names(&gateway(allowed_from("All")), &[other]);
    assert!(ok.is_empty() && rejected.is_empty());
}

#[test]
fn conflicts_go_to_the_gateway_then_the_oldest_set_then_namespace_and_name() {
    let gw = gateway(allowed_from("All"));
    let sets = [
        // Same creation second as `a-first`: `ns/name` decides.
        set(
            "team-b",
            "z-late",
            "2025-01-01T00:00:00Z",
            "[{name: x, port: 8080, protocol: HTTPS}]",
        ),
        set(
            "team-b",
            "a-first",
            "2025-01-01T00:00:00Z",
            "[{name: x, port: 8080, protocol: HTTP}]",
        ),
        set(
            "team-a",
            "newest",
            "2025-06-01T00:00:00Z",
            "[{name: x, port: 9090, protocol: HTTP}]",
        ),
        // Conflicts with the Gateway's own listener on port 80.
        set(
            "team-a",
            "clash",
            "2024-01-01T00:00:00Z",
            "[{name: http, port: 80, protocol: HTTPS}]",
        ),
    ];
    let built = build_alb_gateway_stack(
        &GatewayInputs {
            listener_sets: &sets,
            ..GatewayInputs::new(&gw)
        },
        &cfg(),
        None,
    )
    .unwrap();
    assert!(
        built.listeners["http"].valid,
        "the Gateway's listener keeps port 80"
    );
    let order: Vec<String> = built.listener_sets.iter().map(|s| s.key()).collect();
    assert_eq!(
        order,
        [
            "team-a/clash",
            "team-b/a-first",
            "team-b/z-late",
            "team-a/newest"
        ]
    );
    let v = |i: usize| built.listener_sets[i].validation["x"].clone();
    let clash = &built.listener_sets[0].validation["http"];
    assert_eq!(
        (clash.valid, clash.reason, clash.message.as_str()),
        (false, "ProtocolConflict", "Protocol conflict for port 80")
    );
    assert!(v(1).valid);
    assert_eq!(
        (v(2).valid, v(2).reason),
        (false, "ProtocolConflict"),
        "the later of two sets on 8080 loses"
    );
    assert!(v(3).valid);
}

/// `via-set` attaches through the ListenerSet `my-gw-ns/extra-listeners`, `via-gateway` names
/// the set's listener `extra` as a section of the Gateway.
fn routes() -> Vec<HttpRoute> {
    let route = |name: &str| {
        HttpRoute::test("my-route-ns", name)
            .created_at("2025-01-01T00:00:00Z")
            .rule(|r| r.backend("my-svc", 80))
    };
    vec![
        route("via-set")
            .parent_with("extra-listeners", |p| {
                p.kind("ListenerSet").namespace("my-gw-ns")
            })
            .build(),
        route("via-gateway")
            .parent_with("my-gw", |p| p.namespace("my-gw-ns").section("extra"))
            .build(),
    ]
}

fn build_with(allowed: Option<Value>) -> GatewayBuild {
    let gw = gateway(allowed);
    let sets = [set(
        "my-gw-ns",
        "extra-listeners",
        "2025-01-01T00:00:00Z",
        L8080,
    )];
    let routes = routes();
    let services = services();
    let inputs = GatewayInputs {
        http_routes: &routes,
        services: &services,
        listener_sets: &sets,
        ..GatewayInputs::new(&gw)
    };
    build_alb_gateway_stack(&inputs, &cfg(), None).unwrap()
}

#[test]
fn a_listener_set_adds_a_listener_that_routes_attach_to_by_kind_listener_set() {
    let built = build_with(allowed_from("Same"));
    let ports: Vec<(i32, Protocol)> = built
        .stack
        .listeners
        .iter()
        .map(|l| (l.port, l.protocol))
        .collect();
    assert_eq!(ports, vec![(8080, Protocol::Http)]);
    assert_eq!(built.stack.listener_rules.len(), 1);
    assert_eq!(built.listener_sets.len(), 1);
    assert!(built.listener_sets[0].validation["extra"].valid);
    assert_eq!(
        built.attachment.set_attached_routes["my-gw-ns/extra-listeners"]["extra"],
        1
    );
    assert_eq!(built.attachment.attached_routes["http"], 0);
    // The set's listener is not the Gateway's: naming it as the Gateway's section finds nothing.
    let refusal = &built.attachment.refusals[0];
    assert_eq!(
        (refusal.route.as_str(), refusal.reason),
        ("my-route-ns/via-gateway", "NoMatchingParent")
    );
    // The security group opens the set's port too.
    let sg = built.stack.managed_security_group.unwrap();
    let mut sg_ports: Vec<i32> = sg.ingress.iter().map(|p| p.from_port).collect();
    sg_ports.dedup();
    assert_eq!(sg_ports, vec![80, 8080]);
}

#[test]
fn a_rejected_listener_set_adds_nothing_and_its_routes_attach_nowhere() {
    let built = build_with(None);
    assert!(built.stack.listeners.is_empty());
    assert!(built.listener_sets.is_empty());
    assert_eq!(built.rejected_sets.len(), 1);
    assert_eq!(
        (
            built.rejected_sets[0].name.as_str(),
            built.rejected_sets[0].generation
        ),
        ("extra-listeners", 3)
    );
    assert!(
        !built.attachment.accepted.iter().any(|(i, _)| *i == 0),
        "a route naming a rejected set is not attached"
    );
}
