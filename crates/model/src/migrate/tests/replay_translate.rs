//! Replays `translate/translate_test.go` `TestTranslate`: all 17 cases (object counts per kind
//! and each case's checks).

use super::{alb, class_with_params, icp, ingress, one_path, service};
use crate::crd::gateway::listener_rule_configuration::{ActionType, OnUnauthenticatedRequest};
use crate::crd::gateway::load_balancer_configuration::Scheme;
use crate::crd::gateway::target_group_configuration::{TgProtocol, TgTargetType};
use crate::migrate::names::http_route_name;
use crate::migrate::objects::{ALB_GATEWAY_CONTROLLER, FILTER_EXTENSION_REF};
use crate::migrate::{
    translate, InputResources, OutputResources, GATEWAY_CLASS_NAME, MIGRATION_TAG_KEY,
};

type Check = Box<dyn Fn(&OutputResources)>;

struct Case {
    name: &'static str,
    input: InputResources,
    err: bool,
    counts: (usize, usize, usize, usize),
    check: Option<Check>,
}

fn case(
    name: &'static str,
    input: InputResources,
    counts: (usize, usize, usize, usize),
    check: Option<Check>,
) -> Case {
    Case {
        name,
        input,
        err: false,
        counts,
        check,
    }
}

fn ingresses(list: Vec<k8s_openapi::api::networking::v1::Ingress>) -> InputResources {
    InputResources {
        ingresses: list,
        ..Default::default()
    }
}

fn with_icp(list: Vec<k8s_openapi::api::networking::v1::Ingress>, spec: &str) -> InputResources {
    InputResources {
        ingresses: list,
        ingress_classes: vec![class_with_params("alb", "alb-params")],
        ingress_class_params: vec![icp("alb-params", spec)],
        ..Default::default()
    }
}

fn has_ref_to(out: &OutputResources, route: usize, rule: usize, lrc: &str) -> bool {
    out.http_routes[route].spec.rules[rule]
        .filters
        .iter()
        .any(|f| {
            f.type_ == FILTER_EXTENSION_REF
                && f.extension_ref.as_ref().is_some_and(|r| r.name == lrc)
        })
}

#[test]
fn translate_upstream_cases() {
    let mut cases = Vec::new();
    let scheme = alb("scheme");
    let target_type = alb("target-type");
    let group = alb("group.name");
    let tags = alb("tags");

    cases.push(case(
        "basic ingress produces all resource types",
        ingresses(vec![ingress(
            "production",
            "my-app",
            &[(scheme, "internet-facing"), (target_type, "ip")],
            &one_path("api.example.com", "/api", "Prefix", "api-svc", 8080),
        )]),
        (1, 1, 1, 1),
        Some(Box::new(|out: &OutputResources| {
            assert_eq!(out.gateway_class.metadata.name, GATEWAY_CLASS_NAME);
            assert_eq!(
                out.gateway_class.spec.controller_name,
                ALB_GATEWAY_CONTROLLER
            );
            assert!(out.gateways[0].spec.infrastructure.is_some());
            assert_eq!(out.http_routes[0].spec.hostnames.len(), 1);
            assert!(out.load_balancer_configurations[0].spec.scheme.is_some());
            assert!(out.target_group_configurations[0]
                .spec
                .default_configuration
                .target_type
                .is_some());
        })),
    ));

    cases.push(case(
        "IngressClassParams overrides scheme",
        with_icp(
            vec![ingress(
                "default",
                "icp-app",
                &[(scheme, "internal")],
                "ingressClassName: alb\ndefaultBackend: {service: {name: svc, port: {number: 80}}}",
            )],
            "{scheme: internet-facing}",
        ),
        (1, 1, 1, 0),
        Some(Box::new(|out: &OutputResources| {
            assert_eq!(
                out.load_balancer_configurations[0].spec.scheme,
                Some(Scheme::InternetFacing)
            );
        })),
    ));

    let mut input = ingresses(vec![ingress(
        "default",
        "svc-override",
        &[(target_type, "instance")],
        &one_path("", "/", "Prefix", "override-svc", 80),
    )]);
    input.services = vec![service(
        "default",
        "override-svc",
        &[(target_type, "ip")],
        &[],
    )];
    cases.push(case(
        "service annotations override ingress for TG fields",
        input,
        (1, 1, 0, 1),
        Some(Box::new(|out: &OutputResources| {
            assert_eq!(
                out.target_group_configurations[0]
                    .spec
                    .default_configuration
                    .target_type,
                Some(TgTargetType::Ip)
            );
        })),
    ));

    cases.push(case(
        "IngressClassParams creates LBConfig when no LB annotations present",
        with_icp(
            vec![ingress(
                "default",
                "no-annos",
                &[],
                "ingressClassName: alb\ndefaultBackend: {service: {name: svc, port: {number: 80}}}",
            )],
            "{scheme: internet-facing}",
        ),
        (1, 1, 1, 0),
        Some(Box::new(|out: &OutputResources| {
            assert_eq!(
                out.load_balancer_configurations[0].spec.scheme,
                Some(Scheme::InternetFacing)
            );
        })),
    ));

    cases.push(case(
        "no annotations produces minimal output",
        ingresses(vec![ingress(
            "default",
            "bare",
            &[],
            &one_path("", "/", "Prefix", "svc", 80),
        )]),
        (1, 1, 0, 0),
        Some(Box::new(|out: &OutputResources| {
            assert!(out.gateways[0].spec.infrastructure.is_none())
        })),
    ));

    cases.push(case(
        "defaultBackend with host rules produces separate catch-all route",
        ingresses(vec![ingress(
            "demo",
            "mixed",
            &[],
            &format!(
                "defaultBackend: {{service: {{name: default-svc, port: {{number: 80}}}}}}\n{}",
                one_path("app.example.com", "/api", "Prefix", "api-svc", 80)
            ),
        )]),
        (1, 2, 0, 0),
        Some(Box::new(|out: &OutputResources| {
            let (primary, default) = (&out.http_routes[0], &out.http_routes[1]);
            assert!(primary.metadata.name.contains("mixed-route-"));
            assert_eq!(
                (primary.spec.hostnames.len(), primary.spec.rules.len()),
                (1, 1)
            );
            assert!(default.metadata.name.contains("mixed-default-"));
            assert_eq!(
                (default.spec.hostnames.len(), default.spec.rules.len()),
                (0, 1)
            );
            assert!(default.spec.rules[0].matches.is_empty());
        })),
    ));

    let cert = alb("certificate-arn");
    cases.push(case(
        "cognito auth annotations produce LRC with authenticate-cognito action",
        ingresses(vec![ingress(
            "prod",
            "auth-app",
            &[
                (alb("auth-type"), "cognito"),
                (
                    alb("auth-idp-cognito"),
                    r#"{"userPoolARN":"arn:aws:cognito-idp:us-west-2:123456789:userpool/pool-id","userPoolClientID":"client-id","userPoolDomain":"my-domain"}"#,
                ),
                (alb("auth-scope"), "email openid"),
                (alb("auth-on-unauthenticated-request"), "deny"),
                (alb("auth-session-cookie"), "my-cookie"),
                (alb("auth-session-timeout"), "3600"),
                (cert, "arn:aws:acm:us-west-2:123456789:certificate/cert-id"),
            ],
            &one_path("app.example.com", "/", "Prefix", "web-svc", 443),
        )]),
        (1, 1, 1, 0),
        Some(Box::new(|out: &OutputResources| {
            assert_eq!(out.listener_rule_configurations.len(), 1);
            let lrc = &out.listener_rule_configurations[0];
            assert_eq!(lrc.spec.actions.len(), 1);
            let a = &lrc.spec.actions[0];
            assert_eq!(a.type_, ActionType::AuthenticateCognito);
            let c = a.authenticate_cognito_config.as_ref().unwrap();
            assert_eq!(c.user_pool_arn, "arn:aws:cognito-idp:us-west-2:123456789:userpool/pool-id");
            assert_eq!(c.user_pool_client_id, "client-id");
            assert_eq!(c.user_pool_domain, "my-domain");
            assert_eq!(c.scope.as_deref(), Some("email openid"));
            assert_eq!(c.on_unauthenticated_request, Some(OnUnauthenticatedRequest::Deny));
            assert_eq!(c.session_cookie_name.as_deref(), Some("my-cookie"));
            assert_eq!(c.session_timeout, Some(3600));
            assert_eq!(out.http_routes[0].spec.rules.len(), 1);
            assert!(has_ref_to(out, 0, 0, lrc.metadata.name.as_deref().unwrap()));
        })),
    ));

    cases.push(case(
        "oidc auth annotations produce LRC with authenticate-oidc action and secret preserved",
        ingresses(vec![ingress(
            "prod",
            "oidc-app",
            &[
                (alb("auth-type"), "oidc"),
                (
                    alb("auth-idp-oidc"),
                    r#"{"issuer":"https://example.com","authorizationEndpoint":"https://auth.example.com","tokenEndpoint":"https://token.example.com","userInfoEndpoint":"https://userinfo.example.com","secretName":"my-oidc-secret"}"#,
                ),
                (alb("auth-scope"), "email openid"),
                (alb("auth-on-unauthenticated-request"), "allow"),
                (alb("auth-session-cookie"), "oidc-cookie"),
                (alb("auth-session-timeout"), "1800"),
                (cert, "arn:aws:acm:us-west-2:123456789:certificate/cert-id"),
            ],
            &one_path("oidc.example.com", "/", "Prefix", "oidc-svc", 443),
        )]),
        (1, 1, 1, 0),
        Some(Box::new(|out: &OutputResources| {
            assert_eq!(out.listener_rule_configurations.len(), 1);
            let lrc = &out.listener_rule_configurations[0];
            let a = &lrc.spec.actions[0];
            assert_eq!(a.type_, ActionType::AuthenticateOidc);
            let c = a.authenticate_oidc_config.as_ref().unwrap();
            assert_eq!(c.issuer, "https://example.com");
            assert_eq!(c.authorization_endpoint, "https://auth.example.com");
            assert_eq!(c.token_endpoint, "https://token.example.com");
            assert_eq!(c.user_info_endpoint, "https://userinfo.example.com");
            assert_eq!(c.secret.name, "my-oidc-secret");
            assert_eq!(c.scope.as_deref(), Some("email openid"));
            assert_eq!(c.on_unauthenticated_request, Some(OnUnauthenticatedRequest::Allow));
            assert_eq!(c.session_cookie_name.as_deref(), Some("oidc-cookie"));
            assert_eq!(c.session_timeout, Some(1800));
            assert!(has_ref_to(out, 0, 0, lrc.metadata.name.as_deref().unwrap()));
        })),
    ));

    cases.push(case(
        "grouped ingresses produce one shared Gateway",
        ingresses(vec![
            ingress(
                "demo",
                "api",
                &[(group, "shared-alb"), (scheme, "internet-facing")],
                &one_path("api.example.com", "/api", "Prefix", "api-svc", 8080),
            ),
            ingress(
                "demo",
                "web",
                &[(group, "shared-alb"), (scheme, "internet-facing")],
                &one_path("web.example.com", "/", "Prefix", "web-svc", 80),
            ),
        ]),
        (1, 2, 1, 0),
        Some(Box::new(|out: &OutputResources| {
            assert!(out.gateways[0].metadata.name.contains("grp-gw"));
            assert_eq!(out.http_routes[0].spec.hostnames.len(), 1);
            assert_eq!(out.http_routes[1].spec.hostnames.len(), 1);
        })),
    ));

    cases.push(case(
        "cross-namespace group gets allowedRoutes All",
        ingresses(vec![
            ingress(
                "team-a",
                "api",
                &[(group, "cross-ns")],
                &one_path("", "/api", "Prefix", "api-svc", 80),
            ),
            ingress(
                "team-b",
                "web",
                &[(group, "cross-ns")],
                &one_path("", "/web", "Prefix", "web-svc", 80),
            ),
        ]),
        (1, 2, 0, 0),
        Some(Box::new(|out: &OutputResources| {
            let gw = &out.gateways[0];
            assert_eq!(gw.spec.listeners.len(), 1);
            let ns = gw.spec.listeners[0]
                .allowed_routes
                .as_ref()
                .unwrap()
                .namespaces
                .as_ref()
                .unwrap();
            assert_eq!(ns.from.as_deref(), Some("All"));
            for route in &out.http_routes {
                if route.metadata.namespace != gw.metadata.namespace {
                    assert_eq!(route.spec.parent_refs[0].namespace, gw.metadata.namespace);
                }
            }
            assert!(out.warnings.iter().any(
                |w| w.contains("IngressGroup \"cross-ns\" has members in different namespaces")
            ));
        })),
    ));

    let proto = alb("backend-protocol");
    let hc_path = alb("healthcheck-path");
    cases.push(case(
        "grouped ingresses with different TG annotations produce RouteConfigurations",
        ingresses(vec![
            ingress(
                "demo",
                "ing-a",
                &[
                    (group, "shared-alb"),
                    (proto, "HTTP"),
                    (hc_path, "/healthz"),
                ],
                &one_path("a.example.com", "/a", "Prefix", "shared-svc", 8080),
            ),
            ingress(
                "demo",
                "ing-b",
                &[(group, "shared-alb"), (proto, "HTTPS"), (hc_path, "/ready")],
                &one_path("b.example.com", "/b", "Prefix", "shared-svc", 8080),
            ),
        ]),
        (1, 2, 0, 1),
        Some(Box::new(|out: &OutputResources| {
            let tgc = &out.target_group_configurations[0];
            assert_eq!(
                tgc.spec.target_reference.as_ref().unwrap().name,
                "shared-svc"
            );
            assert!(tgc.spec.default_configuration.protocol.is_none());
            let rc = &tgc.spec.route_configurations;
            assert_eq!(rc.len(), 2);
            assert_eq!(
                rc[0].route_identifier.name,
                http_route_name("demo", "ing-a")
            );
            assert_eq!(rc[0].target_group_props.protocol, Some(TgProtocol::Http));
            assert_eq!(
                rc[0]
                    .target_group_props
                    .health_check_config
                    .as_ref()
                    .unwrap()
                    .health_check_path
                    .as_deref(),
                Some("/healthz")
            );
            assert_eq!(
                rc[1].route_identifier.name,
                http_route_name("demo", "ing-b")
            );
            assert_eq!(rc[1].target_group_props.protocol, Some(TgProtocol::Https));
            assert_eq!(
                rc[1]
                    .target_group_props
                    .health_check_config
                    .as_ref()
                    .unwrap()
                    .health_check_path
                    .as_deref(),
                Some("/ready")
            );
        })),
    ));

    cases.push(case(
        "grouped ingresses with same TG annotations produce RouteConfigurations for each",
        ingresses(vec![
            ingress(
                "demo",
                "ing-a",
                &[(group, "shared-alb"), (target_type, "ip")],
                &one_path("a.example.com", "/a", "Prefix", "shared-svc", 8080),
            ),
            ingress(
                "demo",
                "ing-b",
                &[(group, "shared-alb"), (target_type, "ip")],
                &one_path("b.example.com", "/b", "Prefix", "shared-svc", 8080),
            ),
        ]),
        (1, 2, 0, 1),
        Some(Box::new(|out: &OutputResources| {
            let rc = &out.target_group_configurations[0].spec.route_configurations;
            assert_eq!(rc.len(), 2);
            assert!(rc
                .iter()
                .all(|r| r.target_group_props.target_type == Some(TgTargetType::Ip)));
        })),
    ));

    let backend = "defaultBackend: {service: {name: svc, port: {number: 80}}}";
    let mut c = case(
        "conflicting scheme in group errors",
        ingresses(vec![
            ingress(
                "ns",
                "a",
                &[(group, "conflict"), (scheme, "internal")],
                backend,
            ),
            ingress(
                "ns",
                "b",
                &[(group, "conflict"), (scheme, "internet-facing")],
                backend,
            ),
        ]),
        (0, 0, 0, 0),
        None,
    );
    c.err = true;
    cases.push(c);

    cases.push(case(
        "user tags on simple ingress propagate to ListenerRuleConfiguration",
        ingresses(vec![ingress(
            "default",
            "tagged",
            &[(tags, "ManagedBy=platform-team,Env=prod")],
            &one_path("app.example.com", "/api", "Prefix", "api-svc", 80),
        )]),
        (1, 1, 1, 1),
        Some(Box::new(|out: &OutputResources| {
            assert_eq!(out.listener_rule_configurations.len(), 1);
            let t = out.listener_rule_configurations[0]
                .spec
                .tags
                .as_ref()
                .unwrap();
            assert_eq!(t["ManagedBy"], "platform-team");
            assert_eq!(t["Env"], "prod");
            assert_eq!(t[MIGRATION_TAG_KEY], "ingress/default/tagged");
        })),
    ));

    cases.push(case(
        "simple ingress without tags annotation produces no ListenerRuleConfiguration",
        ingresses(vec![ingress(
            "default",
            "untagged",
            &[],
            &one_path("", "/", "Prefix", "svc", 80),
        )]),
        (1, 1, 0, 0),
        Some(Box::new(|out: &OutputResources| {
            assert!(out.listener_rule_configurations.is_empty())
        })),
    ));

    cases.push(case(
        "IngressClassParams tags propagate to ListenerRuleConfiguration (no annotation)",
        with_icp(
            vec![ingress(
                "default",
                "icp-tagged",
                &[],
                &format!(
                    "ingressClassName: alb\n{}",
                    one_path("", "/", "Prefix", "svc", 80)
                ),
            )],
            "{tags: [{key: ManagedBy, value: platform-team}]}",
        ),
        (1, 1, 1, 0),
        Some(Box::new(|out: &OutputResources| {
            assert_eq!(out.listener_rule_configurations.len(), 1);
            let t = out.listener_rule_configurations[0]
                .spec
                .tags
                .as_ref()
                .unwrap();
            assert_eq!(t["ManagedBy"], "platform-team");
            assert_eq!(t[MIGRATION_TAG_KEY], "ingress/default/icp-tagged");
        })),
    ));

    cases.push(case(
        "annotation tags and IngressClassParams tags merged (ICP wins on conflict)",
        with_icp(
            vec![ingress(
                "default",
                "both-tagged",
                &[(tags, "ManagedBy=app-team,Env=dev")],
                &format!(
                    "ingressClassName: alb\n{}",
                    one_path("", "/", "Prefix", "svc", 80)
                ),
            )],
            "{tags: [{key: ManagedBy, value: platform-team}]}",
        ),
        (1, 1, 1, 1),
        Some(Box::new(|out: &OutputResources| {
            let t = out.listener_rule_configurations[0]
                .spec
                .tags
                .as_ref()
                .unwrap();
            assert_eq!(t["ManagedBy"], "platform-team");
            assert_eq!(t["Env"], "dev");
        })),
    ));

    assert_eq!(cases.len(), 17);
    for c in cases {
        let mut input = c.input;
        input.normalize_namespaces();
        let got = translate(&input);
        if c.err {
            assert!(got.is_err(), "{}", c.name);
            continue;
        }
        let out = got.unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(
            (
                out.gateways.len(),
                out.http_routes.len(),
                out.load_balancer_configurations.len(),
                out.target_group_configurations.len()
            ),
            c.counts,
            "{}",
            c.name
        );
        if let Some(check) = &c.check {
            check(&out);
        }
    }
}
