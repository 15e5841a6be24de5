//! Gateway and TargetGroupName backends against upstream (`backend_gateway.go`,
//! `backend_literal.go`, `buildTargetGroupFromGateway`): an NLB route to a programmed ALB
//! Gateway gets an `alb`-type target group (upstream's name hash with target type `alb`) whose
//! target is that ALB; the ALB ARN comes from the Gateway's `Programmed=True` message; a
//! TargetGroupName backend forwards to the ARN the controller looked up, with no target group.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use super::{cfg, gateway, yaml};
use crate::fixtures::{RuleFixture, TestObject};
use crate::model::action::{Action, ForwardConfig, TargetGroupTuple};
use crate::model::gateway::*;
use crate::model::types::{Protocol, Token};

const ALB_ARN: &str =
    "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/edge/1234567890123456";

/// The NLB Gateway `my-gw-ns/my-gw`: one TCP listener on port 80 for routes of every namespace.
fn nlb_gateway() -> Gateway {
    Gateway::test("my-gw-ns", "my-gw")
        .uid("u1")
        .nlb()
        .listener_with("tcp", "TCP", 80, |l| l.from_all())
        .build()
}

/// The ALB Gateway `apps/edge` with `Programmed` as given (`status`, `message`).
fn edge(status: &str, message: &str) -> Gateway {
    let at = "2025-01-01T00:00:00Z";
    Gateway::test("apps", "edge")
        .alb()
        .listener("http", "HTTP", 8080)
        .condition("Accepted", "True", "Accepted", "", at)
        .condition("Programmed", status, "Programmed", message, at)
        .build()
}

/// A TCPRoute `ns/my-route` with the one rule `rule` makes (its backend).
fn tcp_route(ns: &str, rule: impl FnOnce(RuleFixture) -> RuleFixture) -> Vec<TcpRoute> {
    let route = TcpRoute::test(ns, "my-route")
        .parent_with("my-gw", |p| p.namespace("my-gw-ns"))
        .rule(rule);
    vec![route.build()]
}

struct Objects {
    gateways: Vec<Gateway>,
    grants: Vec<ReferenceGrant>,
    tgcs: Vec<TargetGroupConfiguration>,
    arns: BTreeMap<String, Result<String, String>>,
}

impl Default for Objects {
    fn default() -> Self {
        Objects {
            gateways: vec![edge("True", ALB_ARN)],
            grants: Vec::new(),
            tgcs: Vec::new(),
            arns: BTreeMap::new(),
        }
    }
}

fn nlb(routes: &[TcpRoute], o: &Objects) -> Result<GatewayBuild, crate::model::ModelError> {
    let gw = nlb_gateway();
    let inputs = GatewayInputs {
        tcp_routes: routes,
        gateways: &o.gateways,
        reference_grants: &o.grants,
        tg_configs: &o.tgcs,
        target_group_arns: &o.arns,
        ..GatewayInputs::new(&gw)
    };
    build_nlb_gateway_stack(&inputs, &cfg(), None)
}

/// The backend `edge` of kind Gateway (group named), port 8080.
fn to_edge(rule: RuleFixture) -> RuleFixture {
    rule.backend_with("edge", |b| {
        b.kind("Gateway")
            .group("gateway.networking.k8s.io")
            .port(8080)
    })
}

fn forward_of(b: &GatewayBuild) -> Vec<TargetGroupTuple> {
    match &b.stack.listeners[0].default_actions[0] {
        Action::Forward {
            config: ForwardConfig { target_groups, .. },
        } => target_groups.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_nlb_route_to_a_programmed_alb_gateway_gets_an_alb_target_group_with_upstreams_name() {
    let b = nlb(&tcp_route("apps", to_edge), &Objects::default()).unwrap();
    assert!(b.route_problems.is_empty(), "{:?}", b.route_problems);
    let s = &b.stack;
    assert!(s.target_groups.is_empty() && s.target_group_bindings.is_empty());
    assert_eq!(s.alb_target_groups.len(), 1);
    let tg = &s.alb_target_groups[0];
    let id = "my-gw-ns/my-gw:apps-my-route:TCPRoute-apps-edge:8080";
    assert_eq!(tg.id, id);
    // Upstream's hash inputs, in its order, with the target Gateway where the Service would be,
    // the backendRef port and target type `alb`.
    let mut h = Sha256::new();
    for part in [
        "my-cluster",
        "my-gw-ns",
        "my-gw",
        "apps",
        "my-route",
        "TCPRoute",
        "apps",
        "edge",
        "8080",
        "alb",
        "TCP",
    ] {
        h.update(part.as_bytes());
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(tg.name, format!("k8s-apps-myroute-{}", &hex[..10]));
    assert_eq!(tg.target_arn.as_deref(), Some(ALB_ARN));
    assert_eq!((tg.port, tg.target_port), (8080, 8080));
    assert_eq!(tg.protocol, Protocol::Tcp);
    assert_eq!(tg.ip_address_type, "ipv4");
    let hc = &tg.health_check;
    assert_eq!(
        (hc.protocol, hc.port.as_str(), hc.path.as_str()),
        (Protocol::Http, "traffic-port", "/")
    );
    assert_eq!(hc.matcher["httpCode"], "200-399");
    assert_eq!(
        (
            hc.interval_seconds,
            hc.timeout_seconds,
            hc.healthy_threshold_count,
            hc.unhealthy_threshold_count
        ),
        (15, 5, 3, 3)
    );
    assert_eq!(tg.tags["gateway.k8s.aws.nlb/resource"], id);
    assert_eq!(
        forward_of(&b),
        vec![TargetGroupTuple {
            target_group_arn: Token::TargetGroupArn(id.into()),
            weight: Some(1),
        }]
    );
}

#[test]
fn a_gateway_not_programmed_yet_fails_the_nlb_gateway_with_upstreams_message() {
    for gw in [
        edge("Unknown", "Waiting for load balancer to be active."),
        edge("True", ""),
    ] {
        let o = Objects {
            gateways: vec![gw],
            ..Objects::default()
        };
        let err = nlb(&tcp_route("apps", to_edge), &o).unwrap_err();
        // Upstream's loader error: the Gateway's Accepted False ListenersNotValid.
        assert!(
            matches!(err, crate::model::ModelError::ListenersNotValid { .. }),
            "{err:?}"
        );
        let err = err.to_string();
        assert!(
            err.contains("Gateway (apps:edge) is not usable yet, LB ARN is not provisioned). Invalid data can be found in route (TCPRoute, apps:my-route)"),
            "{err}"
        );
    }
}

#[test]
fn a_gateway_backend_that_is_not_an_alb_or_not_there_is_dropped() {
    let nlb_arn =
        "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/net/other/0123456789abcdef";
    let o = Objects {
        gateways: vec![edge("True", nlb_arn)],
        ..Objects::default()
    };
    let b = nlb(&tcp_route("apps", to_edge), &o).unwrap();
    assert_eq!(b.route_problems[0].reason, "BackendNotFound");
    assert_eq!(
        b.route_problems[0].message,
        format!(
            "invalid gateway ARN: {nlb_arn}, the resource type must be application load balancer"
        )
    );
    assert!(b.stack.alb_target_groups.is_empty() && b.stack.listeners.is_empty());
    let o = Objects {
        gateways: Vec::new(),
        ..Objects::default()
    };
    let b = nlb(&tcp_route("apps", to_edge), &o).unwrap();
    assert_eq!(
        b.route_problems[0].message,
        "Gateway (apps:edge) not found)"
    );
}

#[test]
fn a_gateway_in_another_namespace_needs_a_reference_grant_to_kind_gateway() {
    let grant = |to_kind: &str| -> Vec<ReferenceGrant> {
        yaml(&format!(
            r#"
- apiVersion: gateway.networking.k8s.io/v1beta1
  kind: ReferenceGrant
  metadata: {{name: g, namespace: apps}}
  spec:
    from: [{{group: gateway.networking.k8s.io, kind: TCPRoute, namespace: routes}}]
    to: [{{group: {group}, kind: {to_kind}}}]
"#,
            group = if to_kind == "Gateway" {
                "gateway.networking.k8s.io"
            } else {
                "\"\""
            }
        ))
    };
    let route = tcp_route("routes", |r| {
        r.backend_with("edge", |b| b.namespace("apps").kind("Gateway").port(8080))
    });
    for (grants, allowed) in [
        (Vec::new(), false),
        (grant("Service"), false),
        (grant("Gateway"), true),
    ] {
        let o = Objects {
            grants,
            ..Objects::default()
        };
        let b = nlb(&route, &o).unwrap();
        if allowed {
            assert!(b.route_problems.is_empty(), "{:?}", b.route_problems);
            assert_eq!(b.stack.alb_target_groups.len(), 1);
        } else {
            assert_eq!(b.route_problems[0].reason, "RefNotPermitted");
            assert!(b.stack.alb_target_groups.is_empty());
        }
    }
}

#[test]
fn a_target_group_configuration_of_kind_gateway_shapes_the_alb_target_group() {
    let tgcs: Vec<TargetGroupConfiguration> = yaml(
        r#"
- apiVersion: gateway.k8s.aws/v1beta1
  kind: TargetGroupConfiguration
  metadata: {name: for-service, namespace: apps}
  spec:
    targetReference: {name: edge}
    defaultConfiguration: {targetGroupName: not-this-one}
- apiVersion: gateway.k8s.aws/v1beta1
  kind: TargetGroupConfiguration
  metadata: {name: for-gateway, namespace: apps}
  spec:
    targetReference: {kind: Gateway, name: edge}
    defaultConfiguration:
      targetGroupName: chained
      healthCheckConfig: {healthCheckPath: /healthz, healthCheckPort: "9000", healthCheckInterval: 10}
      targetGroupAttributes: [{key: deregistration_delay.timeout_seconds, value: "30"}]
      tags: {team: edge}
"#,
    );
    let o = Objects {
        tgcs,
        ..Objects::default()
    };
    let b = nlb(&tcp_route("apps", to_edge), &o).unwrap();
    let tg = &b.stack.alb_target_groups[0];
    assert_eq!(tg.name, "chained");
    assert_eq!(tg.health_check.path, "/healthz");
    // Upstream: a port other than `traffic-port` means the backendRef port.
    assert_eq!(tg.health_check.port, "8080");
    assert_eq!(tg.health_check.interval_seconds, 10);
    assert_eq!(tg.attributes["deregistration_delay.timeout_seconds"], "30");
    assert_eq!(tg.tags["team"], "edge");
}

/// The Gateway backend's TargetGroupConfiguration with `props` (flow mapping body): the fields
/// of the build's Warnings.
fn gateway_backend_warnings(props: &str) -> Vec<String> {
    let tgcs: Vec<TargetGroupConfiguration> = yaml(&format!(
        "[{{apiVersion: gateway.k8s.aws/v1, kind: TargetGroupConfiguration, metadata: {{name: gw, namespace: apps}}, spec: {{targetReference: {{kind: Gateway, name: edge}}, defaultConfiguration: {{{props}}}}}}}]"
    ));
    let o = Objects {
        tgcs,
        ..Objects::default()
    };
    let b = nlb(&tcp_route("apps", to_edge), &o).unwrap();
    b.stack
        .warnings
        .iter()
        .filter_map(|w| w.annotation.clone())
        .collect()
}

#[test]
fn target_group_fields_a_gateway_backend_ignores_are_a_warning() {
    let ignored = "targetType: ip, nodeSelector: {matchLabels: {a: b}}, enableMultiCluster: true, ipAddressType: ipv6, protocolVersion: HTTP2, healthCheckConfig: {healthCheckPort: '9000', matcher: {grpcCode: '0'}}";
    assert_eq!(
        gateway_backend_warnings(ignored),
        [
            "targetType",
            "nodeSelector",
            "enableMultiCluster",
            "ipAddressType",
            "protocolVersion",
            "healthCheckConfig.healthCheckPort",
            "healthCheckConfig.matcher.grpcCode"
        ]
    );
    // What the alb-type target group takes says nothing.
    let taken = "ipAddressType: ipv4, healthCheckConfig: {healthCheckPort: '8080', matcher: {httpCode: '200'}}";
    assert_eq!(gateway_backend_warnings(taken), Vec::<String>::new());
}

#[test]
fn a_target_group_name_backend_forwards_to_the_looked_up_arn_and_builds_no_target_group() {
    let route = tcp_route("apps", |r| {
        r.backend_with("existing", |b| b.kind("TargetGroupName").weight(5))
    });
    let arn = "arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/existing/abc";
    let mut o = Objects::default();
    o.arns.insert("existing".into(), Ok(arn.into()));
    let b = nlb(&route, &o).unwrap();
    assert!(b.route_problems.is_empty(), "{:?}", b.route_problems);
    assert!(b.stack.target_groups.is_empty() && b.stack.alb_target_groups.is_empty());
    assert_eq!(
        forward_of(&b),
        vec![TargetGroupTuple {
            target_group_arn: Token::Literal(arn.into()),
            weight: Some(5),
        }]
    );
    // A failed lookup fails the build with the lookup's error, as upstream's model builder.
    let not_found = "TargetGroupNotFound: One or more target groups not found";
    o.arns.insert("existing".into(), Err(not_found.into()));
    let err = nlb(&route, &o).unwrap_err().to_string();
    assert!(err.contains(not_found), "{err}");
    o.arns.clear();
    let err = nlb(&route, &o).unwrap_err().to_string();
    assert!(err.contains("the ARN of target group existing"), "{err}");
}

#[test]
fn an_alb_rule_forwards_to_a_target_group_name_and_refuses_a_gateway_backend() {
    let gw = gateway();
    let arns = BTreeMap::from([("existing".to_string(), Ok("arn:tg/existing".to_string()))]);
    let gateways = vec![edge("True", ALB_ARN)];
    let route = |rule: fn(RuleFixture) -> RuleFixture| -> Vec<HttpRoute> {
        let route = HttpRoute::test("apps", "app")
            .parent_with("my-gw", |p| p.namespace("my-gw-ns").section("http"))
            .rule(rule);
        vec![route.build()]
    };
    let build = |routes: &[HttpRoute]| {
        let inputs = GatewayInputs {
            http_routes: routes,
            gateways: &gateways,
            target_group_arns: &arns,
            ..GatewayInputs::new(&gw)
        };
        build_alb_gateway_stack(&inputs, &cfg(), None)
    };
    let b = build(&route(|r| {
        r.backend_with("existing", |b| b.kind("TargetGroupName"))
    }))
    .unwrap();
    assert!(b.stack.target_groups.is_empty());
    assert_eq!(
        b.stack.listener_rules[0].actions,
        vec![Action::Forward {
            config: ForwardConfig {
                target_groups: vec![TargetGroupTuple {
                    target_group_arn: Token::Literal("arn:tg/existing".into()),
                    weight: Some(1),
                }],
                target_group_stickiness_config: None,
            }
        }]
    );
    let err = build(&route(|r| {
        r.backend_with("edge", |b| b.kind("Gateway").port(8080))
    }))
    .unwrap_err()
    .to_string();
    assert!(err.contains("only supported on NLB Gateways"), "{err}");
}
