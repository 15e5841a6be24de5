//! HTTPRoute filters and ListenerRuleConfigurations against upstream's
//! `route_rule_action.go` / `route_rule_transform.go` / `route_rule_condition.go`: redirects,
//! URL and host rewrites, and the configuration's actions, source-ip conditions and tags.

use super::{cfg, services, yaml};
use crate::fixtures::{Fixture, TestObject};
use crate::model::action::*;
use crate::model::gateway::*;
use k8s_openapi::api::core::v1::Secret;

/// The ALB Gateway `my-route-ns/my-gw` with listeners `http` (80) and `https` (443).
pub(super) fn alb_gateway() -> Fixture<Gateway> {
    Gateway::test("my-route-ns", "my-gw")
        .uid("u1")
        .alb()
        .listener("http", "HTTP", 80)
        .listener("https", "HTTPS", 443)
}

pub(super) const CERT: &str = r#"
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {name: lbc, namespace: my-route-ns}
spec:
  listenerConfigurations:
  - {protocolPort: "HTTPS:443", defaultCertificate: "arn:aws:acm:us-east-1:1:certificate/a"}
"#;

/// One HTTPRoute on both listeners with `rule` (YAML of one rule; a rule followed by
/// `\n    - ` and another is two) and the configurations.
fn build(
    rule: &str,
    configs: &str,
    secrets: &str,
) -> Result<GatewayBuild, crate::model::ModelError> {
    let gw = alb_gateway().build();
    let lbc: LoadBalancerConfiguration = yaml(CERT);
    let rules: Vec<serde_json::Value> = yaml(&format!("    - {rule}\n"));
    let routes = [HttpRoute::test("my-route-ns", "r")
        .parent("my-gw")
        .set(&["spec", "rules"], rules)
        .build()];
    let services = services();
    let configs: Vec<ListenerRuleConfiguration> = yaml(configs);
    let secrets: Vec<Secret> = yaml(secrets);
    let inputs = GatewayInputs {
        gateway_config: Some(&lbc),
        http_routes: &routes,
        services: &services,
        rule_configs: &configs,
        secrets: &secrets,
        ..GatewayInputs::new(&gw)
    };
    build_alb_gateway_stack(&inputs, &cfg(), None)
}

/// The rules of one port.
pub(super) fn rules(b: &GatewayBuild, port: i32) -> Vec<&ListenerRule> {
    use crate::model::types::Token;
    b.stack
        .listener_rules
        .iter()
        .filter(|r| r.listener_arn == Token::ListenerArn(port))
        .collect()
}

use crate::model::types::ListenerRule;

pub(super) fn lrc(spec: &str, accepted: bool) -> String {
    format!(
        r#"
- apiVersion: gateway.k8s.aws/v1
  kind: ListenerRuleConfiguration
  metadata: {{name: cfg, namespace: my-route-ns}}
  spec: {spec}
  status: {{accepted: {accepted}, message: "secret [my-route-ns/oidc] not found"}}
"#
    )
}

pub(super) const WITH_CONFIG: &str = "filters: [{type: ExtensionRef, extensionRef: {group: gateway.k8s.aws, kind: ListenerRuleConfiguration, name: cfg}}]";

#[test]
fn a_request_redirect_filter_becomes_a_redirect_action() {
    let rule = "{filters: [{type: RequestRedirect, requestRedirect: {scheme: https, hostname: new.example.com, statusCode: 301, path: {type: ReplaceFullPath, replaceFullPath: /moved}}}]}";
    let b = build(rule, "[]", "[]").unwrap();
    let expected = Action::Redirect {
        config: RedirectConfig {
            host: Some("new.example.com".into()),
            path: Some("/moved".into()),
            port: Some("443".into()),
            protocol: Some("HTTPS".into()),
            query: None,
            status_code: "HTTP_301".into(),
        },
    };
    assert_eq!(rules(&b, 80)[0].actions, vec![expected]);
    // The CRD's default status code is 302.
    let b = build(
        "{filters: [{type: RequestRedirect, requestRedirect: {port: 8080}}]}",
        "[]",
        "[]",
    )
    .unwrap();
    let Action::Redirect { config } = &rules(&b, 80)[0].actions[0] else {
        panic!("redirect expected");
    };
    assert_eq!(
        (config.status_code.as_str(), config.port.as_deref()),
        ("HTTP_302", Some("8080"))
    );
}

#[test]
fn redirects_with_301_or_302_are_served_and_other_status_codes_refuse_their_rule_only() {
    for code in [301, 302] {
        let rule = format!(
            "{{filters: [{{type: RequestRedirect, requestRedirect: {{statusCode: {code}}}}}]}}"
        );
        let b = build(&rule, "[]", "[]").unwrap();
        let Action::Redirect { config } = &rules(&b, 80)[0].actions[0] else {
            panic!("redirect expected for {code}");
        };
        assert_eq!(config.status_code, format!("HTTP_{code}"));
        assert!(b.route_problems.is_empty(), "{:?}", b.route_problems);
    }
    // 303, 307 and 308 (the Gateway API's experimental channel) are no ALB redirect: upstream
    // fails at the AWS call; here the rule is refused and the route's other rule is served.
    for code in [303, 307, 308] {
        let rule = format!(
            "{{matches: [{{path: {{type: PathPrefix, value: /old}}}}], filters: [{{type: RequestRedirect, requestRedirect: {{hostname: new.example.com, statusCode: {code}}}}}]}}
    - {{matches: [{{path: {{type: PathPrefix, value: /app}}}}], backendRefs: [{{name: my-svc, port: 80}}]}}"
        );
        let b = build(&rule, "[]", "[]").unwrap();
        let actions: Vec<_> = rules(&b, 80).iter().map(|r| r.actions.clone()).collect();
        assert_eq!(actions.len(), 2, "{actions:?}");
        assert!(
            actions.contains(&vec![Action::fixed("500", None)]),
            "the refused rule answers 500, never another redirect: {actions:?}"
        );
        assert!(
            actions
                .iter()
                .any(|a| matches!(a.as_slice(), [Action::Forward { .. }])),
            "the route's other rule is served: {actions:?}"
        );
        assert!(
            !actions
                .iter()
                .flatten()
                .any(|a| matches!(a, Action::Redirect { .. })),
            "no redirect for AWS to refuse: {actions:?}"
        );
        assert_eq!(b.route_problems.len(), 1, "{:?}", b.route_problems);
        let p = &b.route_problems[0];
        assert_eq!((p.route.name.as_str(), p.reason), ("r", "UnsupportedValue"));
        assert!(p.refuses_acceptance() && !p.unresolved_refs());
        let expected = format!("spec.rules[0]: RequestRedirect statusCode {code} is not supported (an ALB redirects with 301 or 302 only)");
        assert!(p.message.starts_with(&expected), "{}", p.message);
        assert!(
            b.stack
                .warnings
                .iter()
                .any(|w| w.ingress.as_deref() == Some("my-route-ns/r")
                    && w.message
                        .starts_with(&format!("HTTPRoute my-route-ns/r {expected}"))),
            "{:#?}",
            b.stack.warnings
        );
    }
}

#[test]
fn a_redirect_path_with_wildcards_is_refused_with_upstreams_message() {
    let rule = "{filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /a*}}}]}";
    let err = build(rule, "[]", "[]").unwrap_err().to_string();
    assert!(
        err.contains("ReplaceFullPath shouldn't contain wildcards: /a*"),
        "{err}"
    );
}

#[test]
fn url_rewrite_filters_become_rule_transforms() {
    let rule = r#"{matches: [{path: {type: PathPrefix, value: /old}}], filters: [{type: URLRewrite, urlRewrite: {hostname: internal.example.com, path: {type: ReplacePrefixMatch, replacePrefixMatch: /new}}}], backendRefs: [{name: my-svc, port: 80}]}"#;
    let b = build(rule, "[]", "[]").unwrap();
    let t = &rules(&b, 80)[0].transforms;
    let rewrite = |t: &Transform| {
        let c = t
            .url_rewrite_config
            .as_ref()
            .or(t.host_header_rewrite_config.as_ref());
        let r = &c.unwrap().rewrites[0];
        (t.transform_type.clone(), r.regex.clone(), r.replace.clone())
    };
    let got: Vec<_> = t.iter().map(rewrite).collect();
    assert_eq!(
        got,
        vec![
            ("url-rewrite".into(), "(^/old(/)?)".into(), "/new$2".into()),
            (
                "host-header-rewrite".into(),
                ".*".into(),
                "internal.example.com".into()
            ),
        ]
    );
    // A URL rewrite forwards (it is no redirect).
    assert!(matches!(
        rules(&b, 80)[0].actions[0],
        Action::Forward { .. }
    ));
    let full = r#"{filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplaceFullPath, replaceFullPath: /x}}}], backendRefs: [{name: my-svc, port: 80}]}"#;
    let b = build(full, "[]", "[]").unwrap();
    assert_eq!(rewrite(&rules(&b, 80)[0].transforms[0]).1, "^([^?]*)");
}

#[test]
fn a_rule_configuration_adds_source_ip_conditions_stickiness_and_tags() {
    let spec = r#"{actions: [{type: forward, forwardConfig: {targetGroupStickinessConfig: {enabled: true}}}], conditions: [{field: source-ip, sourceIPConfig: {values: [10.0.0.0/8]}, matchIndexes: [1]}], tags: {team: a}}"#;
    let rule = format!(
        "{{matches: [{{path: {{value: /a}}}}, {{path: {{value: /b}}}}], {WITH_CONFIG}, backendRefs: [{{name: my-svc, port: 80}}]}}"
    );
    let b = build(&rule, &lrc(spec, true), "[]").unwrap();
    let r = rules(&b, 80);
    let source_ip = |r: &ListenerRule| {
        r.conditions.iter().any(
            |c| matches!(c, RuleCondition::SourceIp { config } if config.values == ["10.0.0.0/8"]),
        )
    };
    // Only match index 1 (/b) gets the source-ip condition.
    assert_eq!((source_ip(r[0]), source_ip(r[1])), (false, true));
    let Action::Forward { config } = &r[0].actions[0] else {
        panic!("forward expected");
    };
    let s = config.target_group_stickiness_config.as_ref().unwrap();
    assert_eq!((s.enabled, s.duration_seconds), (Some(true), Some(3600)));
    assert_eq!(r[0].tags.get("team").map(String::as_str), Some("a"));
}

#[test]
fn a_rule_configuration_fixed_response_replaces_the_forward() {
    let spec = r#"{actions: [{type: fixed-response, fixedResponseConfig: {statusCode: 403, messageBody: denied}}]}"#;
    let rule = format!("{{{WITH_CONFIG}, backendRefs: [{{name: my-svc, port: 80}}]}}");
    let b = build(&rule, &lrc(spec, true), "[]").unwrap();
    assert_eq!(
        rules(&b, 80)[0].actions,
        vec![Action::FixedResponse {
            config: FixedResponseConfig {
                content_type: Some("text/plain".into()),
                message_body: Some("denied".into()),
                status_code: "403".into(),
            }
        }]
    );
}

#[test]
fn an_unusable_rule_configuration_leaves_the_rule_without_backends() {
    let rule = format!("{{{WITH_CONFIG}, backendRefs: [{{name: my-svc, port: 80}}]}}");
    let spec = r#"{tags: {a: b}}"#;
    let two = "{filters: [{type: ExtensionRef, extensionRef: {group: gateway.k8s.aws, kind: ListenerRuleConfiguration, name: a}}, {type: ExtensionRef, extensionRef: {group: gateway.k8s.aws, kind: ListenerRuleConfiguration, name: b}}], backendRefs: [{name: my-svc, port: 80}]}";
    let cases = [
        (rule.clone(), lrc(spec, false), "ListenerRuleConfiguration [my-route-ns/cfg] is not accepted. Reason:  secret [my-route-ns/oidc] not found)"),
        (rule.clone(), "[]".to_string(), "ListenerRuleConfiguration [my-route-ns/cfg] not found)"),
        (two.to_string(), "[]".to_string(), "Only one listener rule config can be referenced per route rule, found multiple"),
    ];
    for (rule, configs, message) in cases {
        let b = build(&rule, &configs, "[]").unwrap();
        assert_eq!(b.route_problems[0].reason, "IncompatibleFilters");
        assert_eq!(b.route_problems[0].message, message);
        assert!(b.route_problems[0].refuses_acceptance());
        assert_eq!(rules(&b, 80)[0].actions, vec![Action::fixed("500", None)]);
        assert!(b.stack.target_groups.is_empty());
    }
}

#[test]
fn a_configuration_redirect_needs_a_request_redirect_filter_and_gives_its_query() {
    let spec = r#"{actions: [{type: redirect, redirectConfig: {query: "a=b"}}]}"#;
    let alone = format!("{{{WITH_CONFIG}}}");
    let err = build(&alone, &lrc(spec, true), "[]")
        .unwrap_err()
        .to_string();
    assert!(err.contains("HTTPRouteFilterRequestRedirect must be provided if RedirectActionConfig in ListenerRuleConfiguration is provided"), "{err}");
    let both = "{filters: [{type: ExtensionRef, extensionRef: {group: gateway.k8s.aws, kind: ListenerRuleConfiguration, name: cfg}}, {type: RequestRedirect, requestRedirect: {hostname: x.example.com}}]}";
    let b = build(both, &lrc(spec, true), "[]").unwrap();
    let Action::Redirect { config } = &rules(&b, 80)[0].actions[0] else {
        panic!("redirect expected");
    };
    assert_eq!(config.query.as_deref(), Some("a=b"));
}

#[test]
fn oidc_from_a_rule_configuration_authenticates_on_https_listeners_only() {
    let spec = r#"{actions: [{type: authenticate-oidc, authenticateOIDCConfig: {issuer: "https://idp", authorizationEndpoint: "https://idp/auth", tokenEndpoint: "https://idp/token", userInfoEndpoint: "https://idp/user", secret: {name: oidc}}}]}"#;
    let rule = format!("{{{WITH_CONFIG}, backendRefs: [{{name: my-svc, port: 80}}]}}");
    let secret = r#"
- apiVersion: v1
  kind: Secret
  metadata: {name: oidc, namespace: my-route-ns}
  stringData: {clientID: "id ", clientSecret: s3cret}
"#;
    let b = build(&rule, &lrc(spec, true), secret).unwrap();
    let https = rules(&b, 443);
    let Action::AuthenticateOidc { config } = &https[0].actions[0] else {
        panic!("oidc expected: {:?}", https[0].actions);
    };
    assert_eq!(config.client_id.expose(), "id");
    assert_eq!(config.client_secret.expose(), "s3cret");
    assert_eq!(
        (
            config.scope.as_str(),
            config.session_timeout,
            config.on_unauthenticated_request.as_str()
        ),
        ("openid", 604800, "authenticate")
    );
    assert!(matches!(https[0].actions[1], Action::Forward { .. }));
    assert!(matches!(
        rules(&b, 80)[0].actions[..],
        [Action::Forward { .. }]
    ));
    assert_eq!(b.secrets, vec!["my-route-ns/oidc"]);
    // Dropped on the HTTP listener: said once, naming the configuration and the port.
    let dropped: Vec<&str> = b
        .stack
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .filter(|m| m.contains("not authenticated"))
        .collect();
    assert_eq!(dropped.len(), 1, "{:?}", b.stack.warnings);
    assert!(
        dropped[0].contains("ListenerRuleConfiguration my-route-ns/cfg")
            && dropped[0].contains("authenticate-oidc")
            && dropped[0].contains("HTTP listener port 80"),
        "{}",
        dropped[0]
    );
    let plain = build("{backendRefs: [{name: my-svc, port: 80}]}", "[]", "[]").unwrap();
    assert!(
        plain.stack.warnings.is_empty(),
        "{:?}",
        plain.stack.warnings
    );
    let err = build(&rule, &lrc(spec, true), "[]")
        .unwrap_err()
        .to_string();
    assert!(err.contains(r#"secrets "oidc" not found"#), "{err}");
}

#[test]
fn an_extension_ref_to_another_kind_is_reported_not_silently_ignored() {
    let rule = "{filters: [{type: ExtensionRef, extensionRef: {group: example.com, kind: Thing, name: t}}], backendRefs: [{name: my-svc, port: 80}]}";
    let b = build(rule, "[]", "[]").unwrap();
    assert!(b.stack.warnings[0]
        .message
        .contains("example.com/Thing t is ignored"));
    assert!(matches!(
        rules(&b, 80)[0].actions[0],
        Action::Forward { .. }
    ));
}

#[test]
fn unsupported_http_filters_fail_the_gateway_with_upstreams_message() {
    for t in ["RequestHeaderModifier", "ResponseHeaderModifier", "CORS"] {
        let rule =
            format!("{{filters: [{{type: {t}}}], backendRefs: [{{name: my-svc, port: 80}}]}}");
        let err = build(&rule, "[]", "[]").unwrap_err().to_string();
        assert!(
            err.contains(&format!("Unsupported filter type: {t}. Only request redirect is supported. To specify header modification, please configure it through LoadBalancerConfiguration.")),
            "{err}"
        );
    }
}

#[test]
fn cognito_and_jwt_validation_from_a_rule_configuration_get_the_crd_defaults() {
    let rule = format!("{{{WITH_CONFIG}, backendRefs: [{{name: my-svc, port: 80}}]}}");
    let cognito = r#"{actions: [{type: authenticate-cognito, authenticateCognitoConfig: {userPoolArn: "arn:aws:cognito-idp:us-east-1:1:userpool/p", userPoolClientId: c, userPoolDomain: d}}]}"#;
    let b = build(&rule, &lrc(cognito, true), "[]").unwrap();
    let expected = AuthenticateCognitoConfig {
        user_pool_arn: "arn:aws:cognito-idp:us-east-1:1:userpool/p".into(),
        user_pool_client_id: "c".into(),
        user_pool_domain: "d".into(),
        authentication_request_extra_params: Default::default(),
        on_unauthenticated_request: "authenticate".into(),
        scope: "openid".into(),
        session_cookie_name: "AWSELBAuthSessionCookie".into(),
        session_timeout: 604800,
    };
    assert_eq!(
        rules(&b, 443)[0].actions[0],
        Action::AuthenticateCognito { config: expected }
    );
    let jwt = r#"{actions: [{type: jwt-validation, jwtValidationConfig: {issuer: "https://idp", jwksEndpoint: "https://idp/jwks", additionalClaims: [{format: string-array, name: groups, values: [admin]}]}}]}"#;
    let b = build(&rule, &lrc(jwt, true), "[]").unwrap();
    let Action::JwtValidation { config } = &rules(&b, 443)[0].actions[0] else {
        panic!("jwt-validation expected");
    };
    assert_eq!(config.additional_claims[0].format, "string-array");
    assert_eq!(config.jwks_endpoint, "https://idp/jwks");
}

#[test]
fn a_rule_with_an_external_auth_filter_answers_500_with_unsupported_value_and_the_rest_is_served() {
    use crate::model::gateway::dropped::decode_noting_dropped;
    use serde_json::json;
    let gw = alb_gateway().build();
    let lbc: LoadBalancerConfiguration = yaml(CERT);
    // Decoded as the watch decodes: the crate's types do not know `ExternalAuth`.
    let route = |name: &str, rules: serde_json::Value| -> HttpRoute {
        decode_noting_dropped(json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": name, "namespace": "my-route-ns"},
            "spec": {"parentRefs": [{"name": "my-gw", "sectionName": "http"}], "rules": rules}
        }))
        .unwrap()
    };
    let prefix = |p: &str| json!([{"path": {"type": "PathPrefix", "value": p}}]);
    let external_auth = json!([{"type": "ExternalAuth",
        "externalAuth": {"protocol": "HTTP", "backendRef": {"name": "authz", "port": 9000}}}]);
    let routes = [
        route(
            "auth",
            json!([
                {"matches": prefix("/app"), "backendRefs": [{"name": "my-svc", "port": 80}]},
                {"matches": prefix("/admin"), "filters": external_auth,
                 "backendRefs": [{"name": "other-svc", "port": 80}]}
            ]),
        ),
        route(
            "open",
            json!([{"matches": prefix("/public"), "backendRefs": [{"name": "my-svc", "port": 80}]}]),
        ),
    ];
    let services = services();
    let inputs = GatewayInputs {
        gateway_config: Some(&lbc),
        http_routes: &routes,
        services: &services,
        ..GatewayInputs::new(&gw)
    };
    let b = build_alb_gateway_stack(&inputs, &cfg(), None).unwrap();
    let on_80 = rules(&b, 80);
    let of = |route: &str| -> Vec<Vec<Action>> {
        on_80
            .iter()
            .filter(|r| r.ingress == route)
            .map(|r| r.actions.clone())
            .collect()
    };
    let fixed_500 = vec![Action::fixed("500", None)];
    let auth = of("my-route-ns/auth");
    assert_eq!(auth.len(), 2, "{on_80:#?}");
    assert_eq!(
        auth.iter().filter(|a| **a == fixed_500).count(),
        1,
        "the ExternalAuth rule forwards nowhere: 500, never served without its filter"
    );
    assert!(
        auth.iter()
            .any(|a| matches!(a.as_slice(), [Action::Forward { .. }])),
        "the route's other rule is served"
    );
    let open = of("my-route-ns/open");
    assert!(
        matches!(open.as_slice(), [a] if matches!(a.as_slice(), [Action::Forward { .. }])),
        "the other route is served: {open:?}"
    );
    assert!(
        b.stack
            .target_group_bindings
            .iter()
            .all(|t| t.spec.service_name != "other-svc"),
        "no target group for the refused rule's backend"
    );
    assert_eq!(b.route_problems.len(), 1, "{:?}", b.route_problems);
    let p = &b.route_problems[0];
    assert_eq!(
        (p.route.name.as_str(), p.reason),
        ("auth", "UnsupportedValue")
    );
    assert!(p.refuses_acceptance() && !p.unresolved_refs());
    assert!(
        p.message
            .starts_with("spec.rules[1]: filter type ExternalAuth is not supported"),
        "{}",
        p.message
    );
    assert!(
        b.stack
            .warnings
            .iter()
            .any(|w| w.ingress.as_deref() == Some("my-route-ns/auth")
                && w.message.starts_with(
                    "HTTPRoute my-route-ns/auth spec.rules[1]: filter type ExternalAuth"
                )),
        "{:#?}",
        b.stack.warnings
    );
}
