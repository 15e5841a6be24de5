//! GRPCRoutes on ALB Gateways, TCP/UDP/TLSRoutes on NLB Gateways against upstream: method paths,
//! GRPC target groups, one precedence order across HTTPRoutes and GRPCRoutes (the v3.4.2
//! cross-kind fix), TLS passthrough and termination listeners.

use serde_json::{json, Value};

use super::{cfg, services, yaml};
use crate::fixtures::TestObject;
use crate::model::action::{Action, RuleCondition};
use crate::model::gateway::*;
use crate::model::types::{Protocol, ProtocolVersion, StackKind};
use gateway_api::apis::experimental::tcproutes::TcpRoute;
use gateway_api::apis::experimental::udproutes::UdpRoute;

/// The ALB Gateway `my-route-ns/my-gw` with one HTTPS listener on 443.
fn alb_gateway() -> Gateway {
    Gateway::test("my-route-ns", "my-gw")
        .uid("u1")
        .alb()
        .listener("https", "HTTPS", 443)
        .build()
}

const CERT: &str = r#"
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {name: lbc, namespace: my-route-ns}
spec:
  listenerConfigurations:
  - {protocolPort: "HTTPS:443", defaultCertificate: "arn:aws:acm:us-east-1:1:certificate/a"}
  - {protocolPort: "TLS:8443", defaultCertificate: "arn:aws:acm:us-east-1:1:certificate/b"}
"#;

/// The GRPCRoute `my-route-ns/greeter` on `api.example.com`: a rule matching
/// `helloworld.Greeter/SayHello` with the header match `tenant` or any `helloworld.Greeter`
/// method, and a match-less rule.
fn greeter_with(tenant: Value) -> Vec<GrpcRoute> {
    let route = GrpcRoute::test("my-route-ns", "greeter")
        .created_at("2025-06-01T00:00:00Z")
        .parent("my-gw")
        .hostname("api.example.com")
        .rule(|r| {
            r.matching(|m| {
                m.grpc_method("helloworld.Greeter", Some("SayHello"))
                    .set("headers", json!([tenant]))
            })
            .matching(|m| m.grpc_method("helloworld.Greeter", None))
            .backend("my-svc", 80)
        })
        .rule(|r| r.backend("my-svc", 80));
    vec![route.build()]
}

/// [`greeter_with`] the Exact header match `x-tenant: a,b`.
fn greeter() -> Vec<GrpcRoute> {
    greeter_with(json!({"name": "x-tenant", "value": "a,b"}))
}

fn paths(conditions: &[RuleCondition]) -> Vec<String> {
    conditions
        .iter()
        .filter_map(|c| match c {
            RuleCondition::PathPattern { config } => Some(config.values.join("|")),
            RuleCondition::HttpHeader { config } => Some(format!(
                "{}={}",
                config.http_header_name,
                config.values.join("|")
            )),
            _ => None,
        })
        .collect()
}

fn alb(http: &[HttpRoute], grpc: &[GrpcRoute]) -> Result<GatewayBuild, crate::model::ModelError> {
    let gw = alb_gateway();
    let lbc: LoadBalancerConfiguration = yaml(CERT);
    let services = services();
    let inputs = GatewayInputs {
        gateway_config: Some(&lbc),
        http_routes: http,
        grpc_routes: grpc,
        services: &services,
        ..GatewayInputs::new(&gw)
    };
    build_alb_gateway_stack(&inputs, &cfg(), None)
}

#[test]
fn a_grpc_route_becomes_method_path_rules_and_grpc_target_groups() {
    let b = alb(&[], &greeter()).unwrap();
    let s = &b.stack;
    let rules: Vec<(i32, Vec<String>)> = s
        .listener_rules
        .iter()
        .map(|r| (r.priority, paths(&r.conditions)))
        .collect();
    // Exact method matches first (longer method first), the match-less rule last.
    assert_eq!(
        rules,
        vec![
            (
                1,
                vec![
                    "/helloworld.Greeter/SayHello".to_string(),
                    "x-tenant=a|b".to_string()
                ]
            ),
            (2, vec!["/helloworld.Greeter/*".to_string()]),
            (3, vec!["/*".to_string()]),
        ]
    );
    assert!(matches!(
        &s.listener_rules[0].conditions[0],
        RuleCondition::HostHeader { config } if config.values == ["api.example.com"]
    ));
    let tg = &s.target_groups[0];
    assert_eq!(
        tg.id,
        "my-route-ns/my-gw:my-route-ns-greeter:GRPCRoute-my-route-ns-my-svc:80"
    );
    assert_eq!(tg.protocol_version, Some(ProtocolVersion::GRPC));
    assert_eq!(tg.health_check.path, "/AWS.ALB/healthcheck");
    assert_eq!(tg.health_check.matcher["grpcCode"], "12");
    assert_eq!(b.routes[0].kind, routes::RouteKind::Grpc);
}

#[test]
fn a_catch_all_http_route_does_not_shadow_a_specific_grpc_route() {
    // Older HTTPRoute `PathPrefix /` on the same hostname: upstream before v3.4.2 put every
    // HTTPRoute rule first; one comparator puts the exact GRPC method first.
    let http = [HttpRoute::test("my-route-ns", "web")
        .created_at("2025-01-01T00:00:00Z")
        .parent("my-gw")
        .hostname("api.example.com")
        .rule(|r| r.backend("my-svc", 80))
        .build()];
    let b = alb(&http, &greeter()).unwrap();
    let order: Vec<(&str, String)> = b
        .stack
        .listener_rules
        .iter()
        .map(|r| (r.ingress.as_str(), paths(&r.conditions).join(" ")))
        .collect();
    assert_eq!(order[0].1, "/helloworld.Greeter/SayHello x-tenant=a|b");
    assert_eq!(order[1].1, "/helloworld.Greeter/*");
    // The HTTP catch-all (Prefix, 2) beats the match-less GRPC rule (none, 0).
    assert_eq!(order[2], ("my-route-ns/web", "/*".to_string()));
    assert_eq!(order[3], ("my-route-ns/greeter", "/*".to_string()));
}

#[test]
fn grpc_route_filters_other_than_extension_ref_are_refused_with_upstreams_message() {
    let modifier = json!({"type": "RequestHeaderModifier",
        "requestHeaderModifier": {"set": [{"name": "a", "value": "b"}]}});
    let grpc = [GrpcRoute::test("my-route-ns", "greeter")
        .parent("my-gw")
        .rule(|r| r.filter(modifier).backend("my-svc", 80))
        .build()];
    let err = alb(&[], &grpc).unwrap_err().to_string();
    assert!(
        err.contains("Unsupported filter type: RequestHeaderModifier. To specify header modification, please configure it through LoadBalancerConfiguration."),
        "{err}"
    );
}

/// The NLB Gateway `my-route-ns/my-gw`: TLS listeners `pass` (443, `*.example.com`, passed
/// through) and `term` (8443, terminated).
fn nlb_gateway() -> Gateway {
    Gateway::test("my-route-ns", "my-gw")
        .uid("u1")
        .nlb()
        .listener_with("pass", "TLS", 443, |l| {
            l.hostname("*.example.com").tls_mode("Passthrough")
        })
        .listener_with("term", "TLS", 8443, |l| l.tls_mode("Terminate"))
        .build()
}

/// `secure` (`a.example.com`, on both listeners) and `elsewhere` (`other.org`, on `pass`).
fn tls_routes() -> Vec<TlsRoute> {
    vec![
        TlsRoute::test("my-route-ns", "secure")
            .parent_with("my-gw", |p| p.section("pass"))
            .parent_with("my-gw", |p| p.section("term"))
            .hostname("a.example.com")
            .rule(|r| r.backend("my-svc", 80))
            .build(),
        TlsRoute::test("my-route-ns", "elsewhere")
            .parent_with("my-gw", |p| p.section("pass"))
            .hostname("other.org")
            .rule(|r| r.backend("my-svc", 80))
            .build(),
    ]
}

fn nlb(lbc: Option<&LoadBalancerConfiguration>) -> Result<GatewayBuild, crate::model::ModelError> {
    let gw = nlb_gateway();
    let tls = tls_routes();
    let services = services();
    let inputs = GatewayInputs {
        gateway_config: lbc,
        tls_routes: &tls,
        services: &services,
        ..GatewayInputs::new(&gw)
    };
    build_nlb_gateway_stack(&inputs, &cfg(), None)
}

#[test]
fn tls_routes_feed_passthrough_and_terminating_tls_listeners() {
    let lbc: LoadBalancerConfiguration = yaml(CERT);
    let b = nlb(Some(&lbc)).unwrap();
    let s = &b.stack;
    let listeners: Vec<(i32, Protocol)> =
        s.listeners.iter().map(|l| (l.port, l.protocol)).collect();
    // Passthrough is plain TCP; termination is TLS with the configured certificate, the
    // default SSL policy and ALPN `None`.
    assert_eq!(listeners, vec![(443, Protocol::Tcp), (8443, Protocol::Tls)]);
    let term = &s.listeners[1];
    assert_eq!(
        term.certificates,
        vec!["arn:aws:acm:us-east-1:1:certificate/b"]
    );
    assert_eq!(term.ssl_policy, Some(cfg().default_ssl_policy));
    assert_eq!(term.alpn_policy.as_deref(), Some("None"));
    assert_eq!(s.listeners[0].alpn_policy, None);
    let tg = &s.target_groups[0];
    assert_eq!(
        tg.id,
        "my-route-ns/my-gw:my-route-ns-secure:TLSRoute-my-route-ns-my-svc:80"
    );
    assert_eq!(tg.protocol, Protocol::Tls);
    assert!(matches!(
        s.listeners[0].default_actions[0],
        Action::Forward { .. }
    ));
    // SNI hostnames only decide attachment: other.org does not fit *.example.com.
    let refused: Vec<(&str, &str)> = b
        .attachment
        .refusals
        .iter()
        .map(|r| (r.route.as_str(), r.reason))
        .collect();
    assert_eq!(
        refused,
        vec![("my-route-ns/elsewhere", "NoMatchingListenerHostname")]
    );
}

/// Without a configured certificate the terminating listener is no longer refused: ACM
/// discovery covers the attached TLSRoute's hostname (the listener has none).
#[test]
fn a_terminating_tls_listener_without_a_certificate_is_left_to_acm_discovery() {
    let b = nlb(None).unwrap();
    let term = b.stack.listeners.iter().find(|l| l.port == 8443).unwrap();
    assert!(term.certificates.is_empty());
    assert_eq!(
        term.certificate_discovery[0].discovery_hosts,
        Some(vec!["a.example.com".to_string()])
    );
}

#[test]
fn nlb_stack_from_tcp_and_udp_routes_forwards_to_the_oldest_route() {
    let gw = Gateway::test("my-gw-ns", "my-gw")
        .uid("u1")
        .nlb()
        .listener_with("tcp", "TCP", 53, |l| l.from_all())
        .listener_with("udp", "UDP", 53, |l| l.from_all())
        .listener("idle", "TCP", 9000)
        .build();
    let tcp = [TcpRoute::test("my-route-ns", "my-route")
        .created_at("2025-01-01T00:00:00Z")
        .parent_with("my-gw", |p| p.namespace("my-gw-ns").section("tcp"))
        .rule(|r| {
            r.backend_with("my-svc", |b| b.port(80).weight(2))
                .backend("other-svc", 80)
        })
        .build()];
    let udp = [UdpRoute::test("my-route-ns", "newer")
        .created_at("2025-06-01T00:00:00Z")
        .parent_with("my-gw", |p| p.namespace("my-gw-ns").section("udp"))
        .rule(|r| r.backend("my-svc", 80))
        .build()];
    let services = services();
    let inputs = GatewayInputs {
        tcp_routes: &tcp,
        udp_routes: &udp,
        services: &services,
        ..GatewayInputs::new(&gw)
    };
    let b = build_nlb_gateway_stack(&inputs, &cfg(), None).unwrap();
    let s = &b.stack;
    assert_eq!(s.kind, StackKind::NlbGateway);
    let lb = s.load_balancer.as_ref().unwrap();
    assert_eq!(lb.lb_type, "network");
    assert_eq!(lb.tags["gateway.k8s.aws.nlb/stack"], "my-gw-ns/my-gw");
    // TCP + UDP on one port ⇒ one TCP_UDP listener fed by the oldest route only; port 9000 has
    // no route ⇒ no listener (its security group rule still exists).
    assert_eq!(s.listeners.len(), 1);
    let l = &s.listeners[0];
    assert_eq!((l.port, l.protocol), (53, Protocol::TcpUdp));
    let Action::Forward { config } = &l.default_actions[0] else {
        panic!("forward expected");
    };
    let weights: Vec<Option<i32>> = config.target_groups.iter().map(|t| t.weight).collect();
    assert_eq!(weights, vec![Some(2), Some(1)]);
    assert!(s.listener_rules.is_empty());
    // The newer route is Accepted yet carries nothing: said in a Warning on it, none on the winner.
    let unrouted: Vec<(&str, &str)> = s
        .warnings
        .iter()
        .filter(|w| w.message.contains("gets no traffic"))
        .map(|w| (w.ingress.as_deref().unwrap(), w.message.as_str()))
        .collect();
    assert_eq!(unrouted.len(), 1, "{unrouted:?}");
    assert_eq!(unrouted[0].0, "my-route-ns/newer");
    assert!(
        unrouted[0]
            .1
            .starts_with("UDPRoute my-route-ns/newer gets no traffic on port 53")
            && unrouted[0].1.contains("(TCPRoute my-route-ns/my-route)"),
        "{}",
        unrouted[0].1
    );
    let sg = s.managed_security_group.as_ref().unwrap();
    let rules: Vec<(&str, i32)> = sg
        .ingress
        .iter()
        .map(|p| (p.ip_protocol.as_str(), p.from_port))
        .collect();
    assert_eq!(rules, vec![("tcp", 53), ("udp", 53), ("tcp", 9000)]);
    // Target groups of the chosen TCPRoute only, with the listener's TCP_UDP protocol, TCP
    // health checks and the Gateway defaults.
    assert_eq!(s.target_groups.len(), 2);
    let tg = &s.target_groups[0];
    assert_eq!(
        tg.id,
        "my-gw-ns/my-gw:my-route-ns-my-route:TCPRoute-my-route-ns-my-svc:80"
    );
    assert_eq!((tg.protocol, tg.protocol_version), (Protocol::TcpUdp, None));
    assert_eq!(tg.health_check.protocol, Protocol::Tcp);
    assert!(tg.health_check.path.is_empty() && tg.health_check.matcher.is_empty());
    assert_eq!(
        (
            tg.health_check.interval_seconds,
            tg.health_check.healthy_threshold_count
        ),
        (15, 3)
    );
    // Both routes are attached (and so reported Accepted) although only one gets traffic.
    assert_eq!(b.attachment.attached_routes["tcp"], 1);
    assert_eq!(b.attachment.attached_routes["udp"], 1);
}

#[test]
fn regular_expression_query_params_and_grpc_headers_are_literal_with_a_warning() {
    // `web`'s query parameter `q` matched as a regular expression, or (`exact`) not.
    let web = |exact: bool| {
        let q = if exact {
            json!({"name": "q", "value": "a.*"})
        } else {
            json!({"name": "q", "value": "a.*", "type": "RegularExpression"})
        };
        let p = json!({"name": "p", "value": "1"});
        [HttpRoute::test("my-route-ns", "web")
            .parent("my-gw")
            .rule(|r| {
                r.matching(|m| m.set("queryParams", json!([q, p])))
                    .backend("my-svc", 80)
            })
            .build()]
    };
    let regex_warnings = |b: &GatewayBuild| -> Vec<String> {
        b.stack
            .warnings
            .iter()
            .map(|w| w.message.clone())
            .filter(|m| m.contains("RegularExpression"))
            .collect()
    };
    let b = alb(&web(false), &[]).unwrap();
    assert_eq!(
        regex_warnings(&b),
        vec![
            r#"HTTPRoute my-route-ns/web: queryParams q of type RegularExpression is matched as the literal value "a.*" (the load balancer takes no regular expression there)"#
        ]
    );
    let grpc =
        greeter_with(json!({"name": "x-tenant", "value": "a.*", "type": "RegularExpression"}));
    let b = alb(&[], &grpc).unwrap();
    let w = regex_warnings(&b);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("GRPCRoute my-route-ns/greeter: headers x-tenant"),
        "{w:?}"
    );
    // Exact matches say nothing.
    assert!(regex_warnings(&alb(&[], &greeter()).unwrap()).is_empty());
    assert!(regex_warnings(&alb(&web(true), &[]).unwrap()).is_empty());
}

#[test]
fn an_explicit_empty_matches_list_is_a_match_less_rule_as_upstream() {
    // `matches: []` is kept by the API server (only an absent list is defaulted): upstream gives
    // the rule no path condition and the lowest precedence, so a regex rule on the same
    // hostname still comes first. Without a hostname the rule would have no condition at all,
    // which the ALB refuses: it matches every path instead.
    let route = |name: &str| {
        HttpRoute::test("my-route-ns", name)
            .created_at("2025-01-01T00:00:00Z")
            .parent("my-gw")
    };
    let http = [
        route("api")
            .hostname("api.example.com")
            .rule(|r| r.no_matches().backend("my-svc", 80))
            .rule(|r| {
                r.matching(|m| m.path("RegularExpression", "/v[0-9]+/.*"))
                    .backend("my-svc", 80)
            })
            .build(),
        route("any")
            .rule(|r| r.no_matches().backend("my-svc", 80))
            .build(),
    ];
    let b = alb(&http, &[]).unwrap();
    let rules: Vec<(&str, Vec<RuleCondition>)> = b
        .stack
        .listener_rules
        .iter()
        .map(|r| (r.ingress.as_str(), r.conditions.clone()))
        .collect();
    let host = RuleCondition::HostHeader {
        config: crate::model::action::ValuesConfig {
            values: vec!["api.example.com".into()],
            regex_values: Vec::new(),
        },
    };
    let path = |values: Vec<&str>, regex: Vec<&str>| RuleCondition::PathPattern {
        config: crate::model::action::ValuesConfig {
            values: values.into_iter().map(String::from).collect(),
            regex_values: regex.into_iter().map(String::from).collect(),
        },
    };
    assert_eq!(
        rules,
        vec![
            (
                "my-route-ns/api",
                vec![host.clone(), path(vec![], vec!["/v[0-9]+/.*"])]
            ),
            ("my-route-ns/api", vec![host]),
            ("my-route-ns/any", vec![path(vec!["/*"], vec![])]),
        ]
    );
}

#[test]
fn the_last_listener_configuration_for_a_port_wins_as_upstreams_map() {
    // The CRD does not make `protocolPort` unique; upstream indexes the entries by port, so the
    // last one is the listener's configuration.
    let gw = alb_gateway();
    let lbc: LoadBalancerConfiguration = yaml(
        r#"
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {name: lbc, namespace: my-route-ns}
spec:
  listenerConfigurations:
  - {protocolPort: "HTTPS:443", defaultCertificate: "arn:aws:acm:us-east-1:1:certificate/first", sslPolicy: first-policy}
  - {protocolPort: "HTTPS:443", defaultCertificate: "arn:aws:acm:us-east-1:1:certificate/last", sslPolicy: last-policy}
"#,
    );
    let http = [HttpRoute::test("my-route-ns", "web")
        .parent("my-gw")
        .rule(|r| r.backend("my-svc", 80))
        .build()];
    let services = services();
    let inputs = GatewayInputs {
        gateway_config: Some(&lbc),
        http_routes: &http,
        services: &services,
        ..GatewayInputs::new(&gw)
    };
    let b = build_alb_gateway_stack(&inputs, &cfg(), None).unwrap();
    let listener = &b.stack.listeners[0];
    assert_eq!(listener.ssl_policy.as_deref(), Some("last-policy"));
    assert_eq!(
        listener.certificates,
        vec!["arn:aws:acm:us-east-1:1:certificate/last".to_string()]
    );
}
