//! Configuration fields upstream accepts and ignores where they are set: each gives a Warning
//! naming the field (and none where the field applies) — `unread_config`, `unread_props` and
//! `unread_rules` against configurations as manifests.

use super::filters::{alb_gateway, lrc, CERT, WITH_CONFIG};
use super::lb_config::{lbc, nlb_without_groups, warnings, with_gateway, Case};
use super::{cfg, services, yaml};
use crate::fixtures::{Fixture, TestObject};
use crate::model::gateway::listeners::LbKind;
use crate::model::gateway::*;

/// The fields (annotations) of the build's Warnings.
fn fields(b: &GatewayBuild) -> Vec<&str> {
    b.stack
        .warnings
        .iter()
        .filter_map(|w| w.annotation.as_deref())
        .collect()
}

/// The Gateway `my-gw-ns/my-gw` of class `c`, listeners to be added.
fn my_gw() -> Fixture<Gateway> {
    Gateway::test("my-gw-ns", "my-gw").uid("u1").class("c")
}

/// A Gateway of `lb` with the listeners `listeners` adds, under the configuration `spec`.
fn listeners_under(
    lb: LbKind,
    listeners: fn(Fixture<Gateway>) -> Fixture<Gateway>,
    spec: &str,
) -> GatewayBuild {
    Case {
        gateway: Some(lbc("my-gw-ns", "lbc", spec)),
        gw: listeners(my_gw()).build(),
        ..Case::default()
    }
    .build(lb)
    .unwrap()
}

/// HTTP on 80, HTTPS on 443.
fn alb_listeners(gw: Fixture<Gateway>) -> Fixture<Gateway> {
    gw.listener("http", "HTTP", 80)
        .listener("https", "HTTPS", 443)
}

/// TCP on 80, TLS on 443.
fn nlb_listeners(gw: Fixture<Gateway>) -> Fixture<Gateway> {
    gw.listener("tcp", "TCP", 80).listener("tls", "TLS", 443)
}

#[test]
fn mutual_authentication_off_an_alb_https_listener_is_a_warning() {
    let entry = |pp: &str| {
        format!("{{listenerConfigurations: [{{protocolPort: '{pp}', mutualAuthentication: {{mode: passthrough}}}}]}}")
    };
    let field = "listenerConfigurations[].mutualAuthentication";
    let b = listeners_under(LbKind::Alb, alb_listeners, &entry("HTTP:80"));
    assert_eq!(fields(&b), [field]);
    assert!(
        warnings(&b)[0].contains("listenerConfigurations entry HTTP:80: mutualAuthentication is ignored: mutual authentication needs an HTTPS listener"),
        "{:?}",
        warnings(&b)
    );
    let b = listeners_under(LbKind::Nlb, nlb_listeners, &entry("TLS:443"));
    assert_eq!(fields(&b), [field]);
    assert!(
        warnings(&b)[0].contains("Network Load Balancer listeners take no mutual authentication")
    );
    let b = listeners_under(LbKind::Alb, alb_listeners, &entry("HTTPS:443"));
    assert_eq!(fields(&b), Vec::<&str>::new());
}

#[test]
fn alpn_policy_off_an_nlb_tls_listener_is_a_warning() {
    let entry = |pp: &str| {
        format!("{{listenerConfigurations: [{{protocolPort: '{pp}', alpnPolicy: HTTP2Only}}]}}")
    };
    let field = "listenerConfigurations[].alpnPolicy";
    let b = listeners_under(LbKind::Alb, alb_listeners, &entry("HTTPS:443"));
    assert_eq!(fields(&b), [field]);
    assert!(warnings(&b)[0].contains("Application Load Balancer listeners take no ALPN policy"));
    let b = listeners_under(LbKind::Nlb, nlb_listeners, &entry("TCP:80"));
    assert_eq!(fields(&b), [field]);
    let b = listeners_under(LbKind::Nlb, nlb_listeners, &entry("TLS:443"));
    assert_eq!(fields(&b), Vec::<&str>::new());
}

#[test]
fn target_group_stickiness_on_an_alb_listener_is_a_warning() {
    let entry = |pp: &str| {
        format!(
            "{{listenerConfigurations: [{{protocolPort: '{pp}', targetGroupStickiness: true}}]}}"
        )
    };
    let b = listeners_under(LbKind::Alb, alb_listeners, &entry("HTTP:80"));
    assert_eq!(
        fields(&b),
        ["listenerConfigurations[].targetGroupStickiness"]
    );
    assert!(warnings(&b)[0].contains("targetGroupStickinessConfig"));
    let b = listeners_under(LbKind::Nlb, nlb_listeners, &entry("TCP:80"));
    assert_eq!(fields(&b), Vec::<&str>::new());
}

#[test]
fn ssl_policy_and_certificates_on_a_plain_listener_are_a_warning() {
    let entry = |pp: &str| {
        format!("{{listenerConfigurations: [{{protocolPort: '{pp}', sslPolicy: ELBSecurityPolicy-TLS13-1-2-2021-06, defaultCertificate: 'arn:aws:acm:us-east-1:1:certificate/a', certificates: ['arn:aws:acm:us-east-1:1:certificate/b']}}]}}")
    };
    let b = listeners_under(LbKind::Nlb, nlb_listeners, &entry("TCP:80"));
    assert_eq!(
        fields(&b),
        [
            "listenerConfigurations[].sslPolicy",
            "listenerConfigurations[].defaultCertificate",
            "listenerConfigurations[].certificates"
        ]
    );
    let b = listeners_under(LbKind::Nlb, nlb_listeners, &entry("TLS:443"));
    assert_eq!(fields(&b), Vec::<&str>::new());
}

#[test]
fn disable_security_group_on_an_alb_is_a_warning() {
    let b = with_gateway("{disableSecurityGroup: true}").alb();
    assert_eq!(fields(&b), ["disableSecurityGroup"]);
    let b = with_gateway("{disableSecurityGroup: false}").alb();
    assert_eq!(fields(&b), Vec::<&str>::new());
    let b = nlb_without_groups("{disableSecurityGroup: true}", None);
    assert!(
        !fields(&b).contains(&"disableSecurityGroup"),
        "{:?}",
        fields(&b)
    );
}

#[test]
fn managed_group_fields_beside_security_groups_are_a_warning() {
    let rules = "sourceRanges: [192.0.2.0/24], securityGroupPrefixes: [pl-1], enableICMP: true";
    let b = with_gateway(&format!("{{securityGroups: [sg-1], {rules}}}")).alb();
    assert_eq!(
        fields(&b),
        ["sourceRanges", "securityGroupPrefixes", "enableICMP"]
    );
    assert!(warnings(&b)[0].contains("with securityGroups no managed security group is made"));
    // Without securityGroups they make the managed group's rules.
    let b = with_gateway(&format!("{{{rules}}}")).alb();
    assert_eq!(fields(&b), Vec::<&str>::new());
}

#[test]
fn security_group_fields_of_an_nlb_without_groups_are_a_warning() {
    let b = nlb_without_groups(
        "{disableSecurityGroup: true, securityGroups: [sg-1], securityGroupPrefixes: [pl-1], enableICMP: true, manageBackendSecurityGroupRules: true, sourceRanges: [192.0.2.0/24]}",
        None,
    );
    // sourceRanges still open the node ports (CIDR rules): no Warning for it.
    let f: Vec<&str> = fields(&b);
    assert_eq!(
        f,
        [
            "securityGroups",
            "securityGroupPrefixes",
            "enableICMP",
            "manageBackendSecurityGroupRules"
        ]
    );
}

#[test]
fn manage_backend_rules_without_security_groups_is_a_warning() {
    let b = with_gateway("{manageBackendSecurityGroupRules: true}").alb();
    assert_eq!(fields(&b), ["manageBackendSecurityGroupRules"]);
    let b = with_gateway("{securityGroups: [sg-1], manageBackendSecurityGroupRules: true}").alb();
    assert_eq!(fields(&b), Vec::<&str>::new());
}

#[test]
fn a_subnet_selector_beside_subnet_identifiers_is_a_warning() {
    let selector = "loadBalancerSubnetsSelector: {tier: [web]}";
    let b = with_gateway(&format!(
        "{{loadBalancerSubnets: [{{identifier: subnet-a}}], {selector}}}"
    ))
    .alb();
    assert_eq!(fields(&b), ["loadBalancerSubnetsSelector"]);
    let b = with_gateway(&format!("{{{selector}}}")).alb();
    assert_eq!(fields(&b), Vec::<&str>::new());
}

#[test]
fn merging_mode_on_a_gateways_own_configuration_is_a_warning() {
    let b = with_gateway("{mergingMode: prefer-gateway}").alb();
    assert_eq!(fields(&b), ["mergingMode"]);
    assert!(
        warnings(&b)[0].contains("LoadBalancerConfiguration my-gw-ns/lbc: mergingMode is ignored")
    );
    // On the class's configuration it decides the merge.
    let class = Case {
        class: Some(lbc("my-gw-ns", "class", "{mergingMode: prefer-gateway}")),
        gateway: Some(lbc("my-gw-ns", "lbc", "{}")),
        ..Case::default()
    };
    assert_eq!(fields(&class.alb()), Vec::<&str>::new());
}

/// The ALB test route's Service with a TargetGroupConfiguration of `props` (flow mapping body).
fn with_props(props: &str) -> GatewayBuild {
    Case {
        tg_configs: format!(
            "[{{apiVersion: gateway.k8s.aws/v1, kind: TargetGroupConfiguration, metadata: {{name: svc, namespace: my-route-ns}}, spec: {{targetReference: {{name: my-svc}}, defaultConfiguration: {{{props}}}}}}}]"
        ),
        ..Case::default()
    }
    .alb()
}

#[test]
fn a_target_group_ip_address_type_other_than_the_services_is_a_warning() {
    let b = with_props("ipAddressType: ipv6");
    assert_eq!(fields(&b), ["ipAddressType"]);
    assert!(warnings(&b)[0].contains(
        "TargetGroupConfiguration of Service my-route-ns/my-svc: ipAddressType is ignored"
    ));
    assert_eq!(
        fields(&with_props("ipAddressType: ipv4")),
        Vec::<&str>::new()
    );
}

#[test]
fn a_protocol_version_on_an_http_listener_is_a_warning() {
    // The route is on the HTTP listener: its target groups are HTTP1.
    let b = with_props("protocolVersion: HTTP2");
    assert_eq!(fields(&b), ["protocolVersion"]);
    assert_eq!(
        fields(&with_props("protocolVersion: HTTP1")),
        Vec::<&str>::new()
    );
}

#[test]
fn a_health_check_matcher_of_the_other_kind_is_a_warning() {
    let b = with_props("healthCheckConfig: {matcher: {grpcCode: '0'}}");
    assert_eq!(fields(&b), ["healthCheckConfig.matcher.grpcCode"]);
    let b = with_props("healthCheckConfig: {matcher: {httpCode: '200'}}");
    assert_eq!(fields(&b), Vec::<&str>::new());
    let b = with_props("healthCheckConfig: {healthCheckProtocol: TCP, healthCheckPath: /up}");
    assert_eq!(fields(&b), ["healthCheckConfig.healthCheckPath"]);
}

#[test]
fn a_node_selector_on_ip_targets_is_a_warning() {
    let selector = "nodeSelector: {matchLabels: {pool: web}}";
    let b = with_props(&format!("targetType: ip, {selector}"));
    assert_eq!(fields(&b), ["nodeSelector"]);
    let b = with_props(&format!("targetType: instance, {selector}"));
    assert_eq!(fields(&b), Vec::<&str>::new());
}

/// A TargetGroupConfiguration's `nodeSelector` reaches the binding whole, `matchExpressions`
/// too, as upstream copies it: no Warning, and no wider selection of nodes than asked for.
#[test]
fn node_selector_match_expressions_reach_the_binding_whole() {
    let b = with_props("targetType: instance, nodeSelector: {matchLabels: {pool: web}, matchExpressions: [{key: zone, operator: In, values: [a, b]}, {key: spot, operator: DoesNotExist, values: []}]}");
    assert_eq!(fields(&b), Vec::<&str>::new());
    let want = serde_json::json!({
        "matchLabels": {"pool": "web"},
        "matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["a", "b"]},
            {"key": "spot", "operator": "DoesNotExist"},
        ],
    });
    let tgb = &b.stack.target_group_bindings[0];
    assert_eq!(serde_json::to_value(&tgb.spec.node_selector).unwrap(), want);
    let rendered = crate::model::upstream_json::render(&b.stack, &Default::default());
    let bindings = rendered["resources"]["K8S::ElasticLoadBalancingV2::TargetGroupBinding"]
        .as_object()
        .unwrap();
    let spec = &bindings.values().next().unwrap()["spec"]["template"]["spec"];
    assert_eq!(spec["nodeSelector"], want);
}

/// The filters tests' Gateway with one HTTPRoute rule `http_rule` and `grpc` GRPCRoutes, under
/// the ListenerRuleConfigurations `configs`.
fn with_rules(http_rule: &str, grpc: &[GrpcRoute], configs: &str) -> GatewayBuild {
    let gw = alb_gateway().build();
    let lbc: LoadBalancerConfiguration = yaml(CERT);
    let rule: serde_json::Value = yaml(http_rule);
    let http = [HttpRoute::test("my-route-ns", "r")
        .parent_with("my-gw", |p| p.section("http"))
        .push(&["spec", "rules"], rule)
        .build()];
    let services = services();
    let configs: Vec<ListenerRuleConfiguration> = yaml(configs);
    let inputs = GatewayInputs {
        gateway_config: Some(&lbc),
        http_routes: &http,
        grpc_routes: grpc,
        services: &services,
        rule_configs: &configs,
        ..GatewayInputs::new(&gw)
    };
    build_alb_gateway_stack(&inputs, &cfg(), None).unwrap()
}

const BACKEND: &str = "backendRefs: [{name: my-svc, port: 80}]";

#[test]
fn use_existing_client_secret_is_a_warning() {
    let oidc = |extra: &str| {
        lrc(&format!("{{actions: [{{type: authenticate-oidc, authenticateOIDCConfig: {{issuer: 'https://idp', authorizationEndpoint: 'https://idp/a', tokenEndpoint: 'https://idp/t', userInfoEndpoint: 'https://idp/u', secret: {{name: oidc}}{extra}}}}}]}}"), true)
    };
    let rule = format!("{{{WITH_CONFIG}, {BACKEND}}}");
    let field = "actions[].authenticateOIDCConfig.useExistingClientSecret";
    // The route is on the HTTP listener only: the action itself is dropped (its own Warning).
    let b = with_rules(&rule, &[], &oidc(", useExistingClientSecret: true"));
    assert!(fields(&b).contains(&field), "{:?}", warnings(&b));
    let b = with_rules(&rule, &[], &oidc(""));
    assert!(!fields(&b).contains(&field), "{:?}", warnings(&b));
}

#[test]
fn a_match_index_beyond_the_rules_matches_is_a_warning() {
    let config = |indexes: &str| {
        lrc(&format!("{{conditions: [{{field: source-ip, sourceIPConfig: {{values: [10.0.0.0/8]}}, matchIndexes: {indexes}}}]}}"), true)
    };
    let rule = format!(
        "{{matches: [{{path: {{value: /a}}}}, {{path: {{value: /b}}}}], {WITH_CONFIG}, {BACKEND}}}"
    );
    let b = with_rules(&rule, &[], &config("[1, 2]"));
    assert_eq!(fields(&b), ["conditions[].matchIndexes"]);
    assert!(
        warnings(&b)[0].contains("conditions[0].matchIndexes entry 2 is ignored on HTTPRoute my-route-ns/r rule 0, which has 2 match(es)"),
        "{:?}",
        warnings(&b)
    );
    assert_eq!(
        fields(&with_rules(&rule, &[], &config("[0, 1]"))),
        Vec::<&str>::new()
    );
}

#[test]
fn a_redirect_action_on_a_grpc_route_is_a_warning() {
    let config = lrc(
        r#"{actions: [{type: redirect, redirectConfig: {query: "a=b"}}]}"#,
        true,
    );
    let rule: serde_json::Value = yaml(&format!("{{{WITH_CONFIG}, {BACKEND}}}"));
    let grpc = [GrpcRoute::test("my-route-ns", "g")
        .parent_with("my-gw", |p| p.section("https"))
        .push(&["spec", "rules"], rule)
        .build()];
    let b = with_rules(&format!("{{{BACKEND}}}"), &grpc, &config);
    assert_eq!(fields(&b), ["actions[].redirectConfig"]);
    assert!(warnings(&b)[0]
        .contains("the redirect action is ignored on GRPCRoute my-route-ns/g rule 0"));
    // An HTTPRoute rule with other filters but no RequestRedirect forwards: said too.
    let rewrite = format!("{{filters: [{{type: ExtensionRef, extensionRef: {{group: gateway.k8s.aws, kind: ListenerRuleConfiguration, name: cfg}}}}, {{type: URLRewrite, urlRewrite: {{hostname: y.example.com}}}}], {BACKEND}}}");
    let b = with_rules(&rewrite, &[], &config);
    assert!(
        warnings(&b)
            .iter()
            .any(|w| w.contains("the redirect action is ignored on HTTPRoute my-route-ns/r rule 0")),
        "{:?}",
        warnings(&b)
    );
    // With the HTTPRoute's RequestRedirect filter it gives the redirect's query.
    let redirect = "{filters: [{type: ExtensionRef, extensionRef: {group: gateway.k8s.aws, kind: ListenerRuleConfiguration, name: cfg}}, {type: RequestRedirect, requestRedirect: {hostname: x.example.com}}]}";
    assert_eq!(
        fields(&with_rules(redirect, &[], &config)),
        Vec::<&str>::new()
    );
}

#[test]
fn an_infrastructure_parameters_ref_of_another_kind_is_a_warning() {
    let gateway = |group: &str, kind: &str| {
        Case {
            gateway: Some(lbc("my-gw-ns", "lbc", "{}")),
            gw: alb_listeners(my_gw().parameters_ref(group, kind, "lbc")).build(),
            ..Case::default()
        }
        .build(LbKind::Alb)
        .unwrap()
    };
    let foreign = gateway("example.com", "Params");
    assert_eq!(fields(&foreign), ["spec.infrastructure.parametersRef"]);
    assert!(warnings(&foreign)[0].starts_with(
        "spec.infrastructure.parametersRef names Params \"lbc\" of group \"example.com\""
    ));
    let ours = gateway("gateway.k8s.aws", "LoadBalancerConfiguration");
    assert_eq!(fields(&ours), Vec::<&str>::new());
}

#[test]
fn fields_the_route_and_gateway_types_drop_are_a_warning() {
    use crate::model::gateway::dropped::decode_noting_dropped;
    let mut gw = alb_gateway().into_value();
    gw["spec"]["futureField"] = "x".into();
    let gw: Gateway = decode_noting_dropped(gw).unwrap();
    let route = |rule: serde_json::Value| -> HttpRoute {
        decode_noting_dropped(serde_json::json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "r", "namespace": "my-route-ns"},
            "spec": {"parentRefs": [{"name": "my-gw", "sectionName": "http"}], "rules": [rule]}
        }))
        .unwrap()
    };
    let backend = serde_json::json!([{"name": "my-svc", "port": 80}]);
    let services = services();
    let build = |http: &[HttpRoute]| {
        let inputs = GatewayInputs {
            http_routes: http,
            services: &services,
            ..GatewayInputs::new(&gw)
        };
        build_alb_gateway_stack(&inputs, &cfg(), None).unwrap()
    };
    let retrying = [route(
        serde_json::json!({"backendRefs": backend, "retry": {"attempts": 3}}),
    )];
    let b = build(&retrying);
    let on_route: Vec<_> = b
        .stack
        .warnings
        .iter()
        .filter(|w| w.ingress.as_deref() == Some("my-route-ns/r"))
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        on_route,
        ["HTTPRoute field spec.rules[].retry is not supported and is ignored (this controller, like upstream, does not read it)"]
    );
    assert!(
        fields(&b).contains(&"spec.futureField"),
        "{:?}",
        warnings(&b)
    );
    // Nothing dropped, nothing said (the Gateway's own field still is).
    let plain = [route(serde_json::json!({"backendRefs": backend}))];
    let b = build(&plain);
    assert!(
        !b.stack.warnings.iter().any(|w| w.ingress.is_some()),
        "{:?}",
        warnings(&b)
    );
}
