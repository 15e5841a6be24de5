//! The ALB Gateway model against upstream: target group names from upstream's
//! `model_build_target_group_test.go` cases, rule order from `route_rule_precedence.go`, and
//! listener/attachment refusals with upstream's reasons and messages — inputs built with
//! `crate::fixtures`. The fixtures the other test modules share are here too.

use super::attach::compatible_hostnames;
use super::conditions::header_values;
use super::names::{target_group_name, TargetGroupNameInputs};
use super::*;
use crate::fixtures::{ListenerFixture, TestObject};
use crate::model::action::{Action, RuleCondition};
use crate::model::types::{Protocol, ProtocolVersion, StackKind, TargetType, Token};
use crate::model::ModelConfig;

mod addons;
mod backends;
mod certificates;
mod existing_nlb;
mod filters;
mod grants;
mod lb_config;
mod listener_sets;
mod routes;
mod unread;

pub(super) fn yaml<T: serde::de::DeserializeOwned>(s: &str) -> T {
    serde_yaml::from_str(s).unwrap()
}

pub(super) fn cfg() -> ModelConfig {
    ModelConfig {
        cluster_name: "my-cluster".into(),
        ..ModelConfig::default()
    }
}

#[test]
fn target_group_names_equal_upstreams_builder_test_cases() {
    // pkg/gateway/model/model_build_target_group_test.go, Test_buildTargetGroupSpec: cluster
    // my-cluster, Gateway my-gw-ns/my-gw, route my-route-ns/my-route, Service my-svc-ns/my-svc
    // port 80 → targetPort 80, nodePort 8080.
    let case = |kind: &'static str, tt: TargetType, protocol: Protocol, version| {
        let port = match tt {
            TargetType::Instance => "8080",
            TargetType::Ip => "80",
        };
        target_group_name(&TargetGroupNameInputs {
            cluster: "my-cluster",
            gateway_namespace: "my-gw-ns",
            gateway_name: "my-gw",
            route_namespace: "my-route-ns",
            route_name: "my-route",
            route_kind: kind,
            service_namespace: "my-svc-ns",
            service_name: "my-svc",
            port,
            target_type: tt,
            protocol,
            protocol_version: version,
            target_control_port: None,
        })
    };
    let http1 = Some(ProtocolVersion::HTTP1);
    assert_eq!(
        case("TCPRoute", TargetType::Instance, Protocol::Tcp, None),
        "k8s-myrouten-myroute-8d8111f6ac"
    );
    assert_eq!(
        case("HTTPRoute", TargetType::Instance, Protocol::Http, http1),
        "k8s-myrouten-myroute-224f4b6ea6"
    );
    assert_eq!(
        case("TCPRoute", TargetType::Ip, Protocol::Tcp, None),
        "k8s-myrouten-myroute-3bce8b0f70"
    );
    assert_eq!(
        case("HTTPRoute", TargetType::Ip, Protocol::Http, http1),
        "k8s-myrouten-myroute-a44a20bcbf"
    );
}

/// The uid of the shared test Gateway (upstream's builder tests use it too).
pub(super) const UID: &str = "11111111-2222-3333-4444-555555555555";

/// The ALB Gateway `my-gw-ns/my-gw`: listener `http` (port 80) takes routes from every
/// namespace, listener `other` (8080) is as `other` makes it (by default it takes routes from
/// the Gateway's own namespace).
pub(super) fn gateway_with_other(
    other: impl FnOnce(ListenerFixture) -> ListenerFixture,
) -> Gateway {
    Gateway::test("my-gw-ns", "my-gw")
        .uid(UID)
        .alb()
        .listener_with("http", "HTTP", 80, |l| l.from_all())
        .listener_with("other", "HTTP", 8080, other)
        .build()
}

/// [`gateway_with_other`] with a plain `other` listener.
pub(super) fn gateway() -> Gateway {
    gateway_with_other(|l| l)
}

/// `my-route` (a catch-all rule and an `/api/v1` rule with a header match and two weighted
/// backends, on listener `http`) and `newer` (a `/shop/` rule to a Service that does not exist,
/// with `newer_host` as its hostname when given), both of `my-route-ns`.
fn routes_with(newer_host: Option<&str>) -> Vec<HttpRoute> {
    let my_route = HttpRoute::test("my-route-ns", "my-route")
        .created_at("2025-01-01T00:00:00Z")
        .parent_with("my-gw", |p| p.namespace("my-gw-ns").section("http"))
        .rule(|r| r.backend_with("my-svc", |b| b.namespace("my-route-ns").port(80)))
        .rule(|r| {
            r.matching(|m| m.path_exact("/api/v1").header("x-env", "a,b\\,c"))
                .backend_with("my-svc", |b| b.port(80).weight(3))
                .backend_with("other-svc", |b| b.port(80).weight(1))
        });
    let mut newer = HttpRoute::test("my-route-ns", "newer")
        .created_at("2025-02-01T00:00:00Z")
        .parent_with("my-gw", |p| p.namespace("my-gw-ns"));
    if let Some(host) = newer_host {
        newer = newer.hostname(host);
    }
    let newer = newer.rule(|r| r.path_prefix("/shop/").backend("missing", 80));
    vec![my_route.build(), newer.build()]
}

/// [`routes_with`] `newer` on `app.example.com`.
fn routes() -> Vec<HttpRoute> {
    routes_with(Some("app.example.com"))
}

/// The NodePort Services of `my-route-ns`: `my-svc` (port 80 to target port 80, node port
/// 30080) and `other-svc` (port 80 to the target port named `http`, node port 30081).
pub(super) fn services() -> Vec<Service> {
    vec![
        Service::test("my-route-ns", "my-svc")
            .uid("s1")
            .service_type("NodePort")
            .port(80, |p| p.target(80).node_port(30080))
            .build(),
        Service::test("my-route-ns", "other-svc")
            .uid("s2")
            .service_type("NodePort")
            .port(80, |p| p.target("http").node_port(30081))
            .build(),
    ]
}

fn build(gw: &Gateway, routes: &[HttpRoute]) -> Result<GatewayBuild, crate::model::ModelError> {
    let services = services();
    let inputs = GatewayInputs {
        http_routes: routes,
        services: &services,
        ..GatewayInputs::new(gw)
    };
    build_alb_gateway_stack(&inputs, &cfg(), None)
}

fn paths(c: &[RuleCondition]) -> Vec<String> {
    c.iter()
        .map(|c| match c {
            RuleCondition::HostHeader { config } => format!("host={}", config.values.join("|")),
            RuleCondition::PathPattern { config } => format!("path={}", config.values.join("|")),
            RuleCondition::HttpHeader { config } => {
                format!("{}={}", config.http_header_name, config.values.join("|"))
            }
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn alb_stack_from_a_gateway_and_two_http_routes() {
    let b = build(&gateway(), &routes()).unwrap();
    let s = &b.stack;
    assert_eq!(s.kind, StackKind::AlbGateway);
    assert_eq!(s.stack_id, "my-gw-ns/my-gw");
    let lb = s.load_balancer.as_ref().unwrap();
    assert_eq!(lb.lb_type, "application");
    assert_eq!(lb.tags["gateway.k8s.aws.alb/stack"], "my-gw-ns/my-gw");
    assert_eq!(lb.tags["gateway.k8s.aws.alb/resource"], "LoadBalancer");
    assert_eq!(lb.tags["elbv2.k8s.aws/cluster"], "my-cluster");
    assert!(lb.name.starts_with("k8s-mygwns-mygw-"), "{}", lb.name);
    // Only port 80 has routes: port 8080 (Same namespace only) gets none, so no listener, but
    // the managed security group still opens it.
    let ports: Vec<i32> = s.listeners.iter().map(|l| l.port).collect();
    assert_eq!(ports, vec![80]);
    let sg_ports: Vec<i32> = s
        .managed_security_group
        .as_ref()
        .unwrap()
        .ingress
        .iter()
        .map(|p| p.from_port)
        .collect();
    assert_eq!(sg_ports, vec![80, 8080]);
    assert_eq!(
        s.listeners[0].default_actions,
        vec![Action::fixed("404", None)]
    );

    // Priorities: the hostname unit first (any hostname beats none), then Exact over Prefix.
    let rules: Vec<(i32, &str, Vec<String>)> = s
        .listener_rules
        .iter()
        .map(|r| (r.priority, r.ingress.as_str(), paths(&r.conditions)))
        .collect();
    assert_eq!(
        rules,
        vec![
            (
                1,
                "my-route-ns/newer",
                vec!["host=app.example.com".into(), "path=/shop|/shop/*".into()]
            ),
            (
                2,
                "my-route-ns/my-route",
                vec!["path=/api/v1".into(), "x-env=a|b,c".into()]
            ),
            (3, "my-route-ns/my-route", vec!["path=/*".into()]),
        ]
    );
    // The missing Service is dropped (route status BackendNotFound): the rule answers 500.
    assert_eq!(
        s.listener_rules[0].actions,
        vec![Action::fixed("500", None)]
    );
    assert_eq!(
        b.dropped_backends[0].1.message,
        "Service (my-route-ns:missing) not found)"
    );
    let Action::Forward { config } = &s.listener_rules[1].actions[0] else {
        panic!("forward expected");
    };
    let weights: Vec<Option<i32>> = config.target_groups.iter().map(|t| t.weight).collect();
    assert_eq!(weights, vec![Some(3), Some(1)]);

    // One target group per (route, Service, port), ids and names as upstream.
    let tgs: Vec<(&str, &str, i32)> = s
        .target_groups
        .iter()
        .map(|t| (t.id.as_str(), t.name.as_str(), t.port))
        .collect();
    assert_eq!(tgs.len(), 2);
    assert_eq!(
        tgs[0].0,
        "my-gw-ns/my-gw:my-route-ns-my-route:HTTPRoute-my-route-ns-my-svc:80"
    );
    assert_eq!(
        tgs[1].0,
        "my-gw-ns/my-gw:my-route-ns-my-route:HTTPRoute-my-route-ns-other-svc:http"
    );
    let tg = &s.target_groups[0];
    assert_eq!((tg.port, tg.target_type), (30080, TargetType::Instance));
    assert_eq!(
        (
            tg.health_check.interval_seconds,
            tg.health_check.timeout_seconds
        ),
        (15, 5)
    );
    assert_eq!(
        (
            tg.health_check.healthy_threshold_count,
            tg.health_check.unhealthy_threshold_count
        ),
        (3, 3)
    );
    assert_eq!(tg.health_check.matcher["httpCode"], "200-399");
    let tgb = &s.target_group_bindings[0];
    assert_eq!(tgb.name, tg.name);
    assert_eq!(tgb.namespace, "my-route-ns");
    assert_eq!(
        tgb.labels["gateway.k8s.aws.alb/stack-namespace"],
        "my-gw-ns"
    );
    assert_eq!(tgb.labels["gateway.k8s.aws.alb/stack-name"], "my-gw");
    assert_eq!(
        tgb.spec.target_group_arn,
        Token::TargetGroupArn(tg.id.clone())
    );

    // attachedRoutes: both routes on "http"; "other" allows only its own namespace, which
    // refuses nothing as "newer" attached to "http" through the same parentRef (as upstream).
    assert_eq!(b.attachment.attached_routes["http"], 2);
    assert_eq!(b.attachment.attached_routes["other"], 0);
    assert_eq!(b.attachment.refusals, vec![]);
}

#[test]
fn older_route_wins_ties_and_catch_all_goes_last() {
    let route = |name: &str, created: &str, path: &str| {
        HttpRoute::test("my-gw-ns", name)
            .created_at(created)
            .parent("my-gw")
            .rule(|r| r.path_prefix(path).backend("s", 80))
            .build()
    };
    let routes = [
        route("b-new", "2025-03-01T00:00:00Z", "/x"),
        route("a-old", "2025-01-01T00:00:00Z", "/y"),
        HttpRoute::test("elsewhere", "foreign")
            .parent_with("my-gw", |p| p.namespace("my-gw-ns").section("other"))
            .rule(|r| r.backend("s", 80))
            .build(),
    ];
    let b = build(&gateway(), &routes).unwrap();
    // Both routes attach to both listeners (same namespace, no sectionName): ports 80 and 8080.
    let order: Vec<(i32, i32, &str)> = b
        .stack
        .listener_rules
        .iter()
        .map(|r| (r.priority, r.listener_arn_port(), r.ingress.as_str()))
        .collect();
    assert_eq!(
        order,
        vec![
            (1, 80, "my-gw-ns/a-old"),
            (2, 80, "my-gw-ns/b-new"),
            (1, 8080, "my-gw-ns/a-old"),
            (2, 8080, "my-gw-ns/b-new"),
        ]
    );
    let refused: Vec<(&str, &str, &str)> = b
        .attachment
        .refusals
        .iter()
        .map(|r| (r.route.as_str(), r.reason, r.message))
        .collect();
    assert_eq!(
        refused,
        vec![(
            "elsewhere/foreign",
            "NotAllowedByListeners",
            "Listener does not allow route attachment, namespace does not match between listener and route"
        )]
    );
}

trait ListenerPort {
    fn listener_arn_port(&self) -> i32;
}

impl ListenerPort for crate::model::types::ListenerRule {
    fn listener_arn_port(&self) -> i32 {
        match self.listener_arn {
            Token::ListenerArn(p) => p,
            _ => -1,
        }
    }
}

#[test]
fn listener_validation_uses_upstreams_reasons() {
    let gw = Gateway::test("my-gw-ns", "my-gw")
        .alb()
        .listener("a", "HTTP", 80)
        .listener("b", "HTTPS", 80)
        .listener("c", "TCP", 81)
        .listener_with("d", "HTTP", 82, |l| l.route_kinds(&["TCPRoute"]))
        .build();
    let v = listeners::validate(&gw.spec.listeners, listeners::LbKind::Alb);
    assert!(v["a"].valid);
    assert_eq!(
        (v["b"].reason, v["b"].message.as_str()),
        ("ProtocolConflict", "Protocol conflict for port 80")
    );
    assert_eq!(
        (v["c"].reason, v["c"].message.as_str()),
        (
            "UnsupportedProtocol",
            "Unsupported protocol TCP for listener c"
        )
    );
    assert_eq!(
        (v["d"].reason, v["d"].message.as_str()),
        ("InvalidRouteKinds", "Invalid route kind for listener d")
    );
}

#[test]
fn hostnames_intersect_wildcard_aware() {
    let route = |h: &[&str]| h.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        compatible_hostnames(
            Some("*.example.com"),
            &route(&["a.example.com", "other.org"])
        ),
        Some(vec!["a.example.com".to_string()])
    );
    assert_eq!(
        compatible_hostnames(Some("a.example.com"), &route(&["*.example.com"])),
        Some(vec!["a.example.com".to_string()])
    );
    assert_eq!(
        compatible_hostnames(Some("a.example.com"), &route(&["b.example.com"])),
        None
    );
    assert_eq!(
        compatible_hostnames(Some("a.example.com"), &[]),
        Some(vec!["a.example.com".to_string()])
    );
    assert_eq!(compatible_hostnames(None, &route(&["x.org"])), Some(vec![]));
}

#[test]
fn an_ip_listener_hostname_met_by_a_route_with_hostnames_fails_the_gateway_as_upstream() {
    // Upstream's `hostnameCheck`: a loader error, not a route refusal; its text swaps the names.
    let gateway = gateway_with_other(|l| l.hostname("10.0.0.1").from_all());
    let err = build(&gateway, &routes()).unwrap_err();
    assert_eq!(
        err,
        crate::model::ModelError::ListenersNotValid {
            gateway: "my-gw-ns/my-gw".into(),
            message: "listener hostname other is not valid (listener name 10.0.0.1)".into(),
        }
    );
    // A route without hostnames takes the listener's as it is: no error.
    let without = routes_with(None);
    assert_ne!(without, routes());
    let b = build(&gateway, &without).unwrap();
    assert_eq!(b.attachment.attached_routes["other"], 1);
}

#[test]
fn header_values_split_at_unescaped_commas() {
    assert_eq!(header_values("a,b\\,c"), vec!["a", "b,c"]);
    assert_eq!(header_values("plain"), vec!["plain"]);
}

#[test]
fn the_processed_config_version_is_the_lbc_version_then_its_default_tgcs() {
    use super::processed_config_version;
    let lbc: LoadBalancerConfiguration = serde_json::from_value(serde_json::json!({
        "apiVersion": "gateway.k8s.aws/v1", "kind": "LoadBalancerConfiguration",
        "metadata": {"name": "c", "namespace": "ns", "resourceVersion": "7"}, "spec": {}
    }))
    .unwrap();
    let tgc: TargetGroupConfiguration = serde_json::from_value(serde_json::json!({
        "apiVersion": "gateway.k8s.aws/v1", "kind": "TargetGroupConfiguration",
        "metadata": {"name": "t", "namespace": "ns", "resourceVersion": "12"}, "spec": {}
    }))
    .unwrap();
    assert_eq!(processed_config_version(None, Some(&tgc)), "");
    assert_eq!(processed_config_version(Some(&lbc), None), "7");
    assert_eq!(processed_config_version(Some(&lbc), Some(&tgc)), "7-12");
}
