//! The ALB Gateway model against upstream: target group names from upstream's
//! `model_build_target_group_test.go` cases, rule order from `route_rule_precedence.go`, and
//! listener/attachment refusals with upstream's reasons and messages — inputs as manifests.

use super::attach::compatible_hostnames;
use super::conditions::header_values;
use super::names::{target_group_name, TargetGroupNameInputs};
use super::*;
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

pub(super) const GATEWAY: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: my-gw, namespace: my-gw-ns, uid: 11111111-2222-3333-4444-555555555555}
spec:
  gatewayClassName: alb
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
  - {name: other, port: 8080, protocol: HTTP}
"#;

const ROUTES: &str = r#"
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: my-route, namespace: my-route-ns, creationTimestamp: "2025-01-01T00:00:00Z"}
  spec:
    parentRefs: [{name: my-gw, namespace: my-gw-ns, sectionName: http}]
    rules:
    - backendRefs: [{name: my-svc, namespace: my-route-ns, port: 80}]
    - matches: [{path: {type: Exact, value: /api/v1}, headers: [{name: x-env, value: "a,b\\,c"}]}]
      backendRefs:
      - {name: my-svc, port: 80, weight: 3}
      - {name: other-svc, port: 80, weight: 1}
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: newer, namespace: my-route-ns, creationTimestamp: "2025-02-01T00:00:00Z"}
  spec:
    parentRefs: [{name: my-gw, namespace: my-gw-ns}]
    hostnames: [app.example.com]
    rules:
    - matches: [{path: {type: PathPrefix, value: /shop/}}]
      backendRefs: [{name: missing, port: 80}]
"#;

pub(super) const SERVICES: &str = r#"
- apiVersion: v1
  kind: Service
  metadata: {name: my-svc, namespace: my-route-ns, uid: s1}
  spec: {type: NodePort, ports: [{port: 80, targetPort: 80, nodePort: 30080}]}
- apiVersion: v1
  kind: Service
  metadata: {name: other-svc, namespace: my-route-ns, uid: s2}
  spec: {type: NodePort, ports: [{port: 80, targetPort: http, nodePort: 30081}]}
"#;

fn build(gateway: &str, routes: &str) -> Result<GatewayBuild, crate::model::ModelError> {
    let gw: Gateway = yaml(gateway);
    let routes: Vec<HttpRoute> = yaml(routes);
    let services: Vec<Service> = yaml(SERVICES);
    let inputs = GatewayInputs {
        http_routes: &routes,
        services: &services,
        ..GatewayInputs::new(&gw)
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
    let b = build(GATEWAY, ROUTES).unwrap();
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
    let routes = r#"
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: b-new, namespace: my-gw-ns, creationTimestamp: "2025-03-01T00:00:00Z"}
  spec:
    parentRefs: [{name: my-gw}]
    rules: [{matches: [{path: {type: PathPrefix, value: /x}}], backendRefs: [{name: s, port: 80}]}]
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: a-old, namespace: my-gw-ns, creationTimestamp: "2025-01-01T00:00:00Z"}
  spec:
    parentRefs: [{name: my-gw}]
    rules: [{matches: [{path: {type: PathPrefix, value: /y}}], backendRefs: [{name: s, port: 80}]}]
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: foreign, namespace: elsewhere}
  spec:
    parentRefs: [{name: my-gw, namespace: my-gw-ns, sectionName: other}]
    rules: [{backendRefs: [{name: s, port: 80}]}]
"#;
    let b = build(GATEWAY, routes).unwrap();
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
    let gw = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: my-gw, namespace: my-gw-ns}
spec:
  gatewayClassName: alb
  listeners:
  - {name: a, port: 80, protocol: HTTP}
  - {name: b, port: 80, protocol: HTTPS}
  - {name: c, port: 81, protocol: TCP}
  - {name: d, port: 82, protocol: HTTP, allowedRoutes: {kinds: [{kind: TCPRoute}]}}
"#;
    let gw: Gateway = yaml(gw);
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
    let gateway = GATEWAY.replace(
        "{name: other, port: 8080, protocol: HTTP}",
        "{name: other, port: 8080, protocol: HTTP, hostname: 10.0.0.1, allowedRoutes: {namespaces: {from: All}}}",
    );
    let err = build(&gateway, ROUTES).unwrap_err();
    assert_eq!(
        err,
        crate::model::ModelError::ListenersNotValid {
            gateway: "my-gw-ns/my-gw".into(),
            message: "listener hostname other is not valid (listener name 10.0.0.1)".into(),
        }
    );
    // A route without hostnames takes the listener's as it is: no error.
    let without = ROUTES.replace("    hostnames: [app.example.com]\n", "");
    assert_ne!(without, ROUTES);
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
