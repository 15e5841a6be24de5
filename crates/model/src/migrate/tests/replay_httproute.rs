//! Replays `translate/httproute_test.go`: `TestBuildHTTPRoutes` (17 cases),
//! `TestToGatewayPathType` (1), `TestDeduplicateHostnames` (1), `TestResolveServicePort` (1),
//! `TestBuildHTTPRoutes_DefaultBackendError` (1): all 21.

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::IngressServiceBackend;

use super::{ingress, one_path, service, services_map, yaml};
use crate::crd::gateway::listener_rule_configuration::ActionType;
use crate::crd::gateway::ListenerRuleConfiguration;
use crate::migrate::httproute::*;
use crate::migrate::objects::{
    HttpRoute, FILTER_EXTENSION_REF, PATH_EXACT, PATH_PREFIX, PATH_REGEX,
};

type RouteCheck = Box<dyn Fn(&[HttpRoute])>;
type LrcCheck = Box<dyn Fn(&[ListenerRuleConfiguration])>;

struct Case {
    name: &'static str,
    ing: k8s_openapi::api::networking::v1::Ingress,
    namespace: &'static str,
    gw: &'static str,
    ssl_redirect: Option<i32>,
    user_tags: BTreeMap<String, String>,
    want_routes: usize,
    want_err: Option<&'static str>,
    check: Option<RouteCheck>,
    check_lrcs: Option<LrcCheck>,
}

fn case(
    name: &'static str,
    ing: k8s_openapi::api::networking::v1::Ingress,
    want_routes: usize,
) -> Case {
    Case {
        name,
        ing,
        namespace: "default",
        gw: "gw",
        ssl_redirect: None,
        user_tags: BTreeMap::new(),
        want_routes,
        want_err: None,
        check: None,
        check_lrcs: None,
    }
}

fn path_value(r: &HttpRoute, rule: usize) -> String {
    r.spec.rules[rule].matches[0]
        .path
        .as_ref()
        .and_then(|p| p.value.clone())
        .unwrap_or_default()
}

fn hosts(r: &HttpRoute) -> Vec<&str> {
    r.spec.hostnames.iter().map(String::as_str).collect()
}

const FIXED: &str = r#"{"type":"fixed-response","fixedResponseConfig":{"contentType":"text/plain","statusCode":"200","messageBody":"MSG"}}"#;

fn use_annotation_paths(host: &str, paths: &[(&str, &str, &str, Option<i32>)]) -> String {
    let mut s = String::from("rules:\n- ");
    if !host.is_empty() {
        s.push_str(&format!("host: {host}\n  "));
    }
    s.push_str("http:\n    paths:\n");
    for (path, ty, svc, port) in paths {
        let port = match port {
            Some(n) => format!("{{number: {n}}}"),
            None => "{name: use-annotation}".into(),
        };
        s.push_str(&format!(
            "    - path: {path}\n      pathType: {ty}\n      backend: {{service: {{name: {svc}, port: {port}}}}}\n"
        ));
    }
    s
}

#[test]
fn build_http_routes_upstream_cases() {
    let mut cases = Vec::new();

    let mut c = case(
        "single rule with host and prefix path",
        ingress(
            "",
            "app",
            &[],
            &one_path("app.example.com", "/api", "Prefix", "api-svc", 80),
        ),
        1,
    );
    c.gw = "app-gw";
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        let r = &rs[0];
        assert!(r.metadata.name.contains("app-route-"));
        assert_eq!(
            (
                r.spec.rules.len(),
                r.spec.hostnames.len(),
                r.spec.parent_refs.len()
            ),
            (1, 1, 1)
        );
        let m = r.spec.rules[0].matches[0].path.as_ref().unwrap();
        assert_eq!(m.type_.as_deref(), Some(PATH_PREFIX));
        assert_eq!(m.value.as_deref(), Some("/api"));
        assert_eq!(r.spec.rules[0].backend_refs[0].name, "api-svc");
    }));
    cases.push(c);

    let mut c = case(
        "exact path type",
        ingress(
            "",
            "exact",
            &[],
            &one_path("", "/exact", "Exact", "svc", 80),
        ),
        1,
    );
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        let r = &rs[0];
        assert_eq!((r.spec.rules.len(), r.spec.hostnames.len()), (1, 0));
        assert_eq!(
            r.spec.rules[0].matches[0]
                .path
                .as_ref()
                .unwrap()
                .type_
                .as_deref(),
            Some(PATH_EXACT)
        );
    }));
    cases.push(c);

    let mut c = case(
        "default backend only (no hostnames) — single route with catch-all",
        ingress("", "def", &[], &super::default_backend("default-svc", 80)),
        1,
    );
    c.namespace = "ns";
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        let r = &rs[0];
        assert!(r.metadata.name.contains("def-route-"));
        assert_eq!((r.spec.hostnames.len(), r.spec.rules.len()), (0, 1));
        assert_eq!(r.spec.rules[0].backend_refs[0].name, "default-svc");
        assert!(r.spec.rules[0].matches.is_empty());
    }));
    cases.push(c);

    let mixed_spec = format!(
        "{}{}",
        super::default_backend("default-svc", 80),
        one_path("app.example.com", "/api", "Prefix", "api-svc", 80)
    );
    let mut c = case(
        "default backend with host rules — separate route for catch-all",
        ingress("", "mixed", &[], &mixed_spec),
        2,
    );
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        let (primary, default) = (&rs[0], &rs[1]);
        assert!(primary.metadata.name.contains("mixed-route-"));
        assert_eq!(hosts(primary), vec!["app.example.com"]);
        assert_eq!(primary.spec.rules.len(), 1);
        assert_eq!(primary.spec.rules[0].backend_refs[0].name, "api-svc");
        assert!(default.metadata.name.contains("mixed-default-"));
        assert_eq!(
            (default.spec.hostnames.len(), default.spec.rules.len()),
            (0, 1)
        );
        assert_eq!(default.spec.rules[0].backend_refs[0].name, "default-svc");
        assert!(default.spec.rules[0].matches.is_empty());
    }));
    cases.push(c);

    let nohost_spec = format!(
        "{}{}",
        super::default_backend("default-svc", 80),
        one_path("", "/api", "Prefix", "api-svc", 80)
    );
    let mut c = case(
        "default backend with no-host rules — single route",
        ingress("", "nohost", &[], &nohost_spec),
        1,
    );
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        assert_eq!((rs[0].spec.hostnames.len(), rs[0].spec.rules.len()), (0, 2));
    }));
    cases.push(c);

    let mut c = case(
        "multiple listeners produce single parentRef without sectionName",
        ingress("", "multi", &[], &one_path("", "/", "Prefix", "svc", 80)),
        1,
    );
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        assert_eq!(rs[0].spec.parent_refs.len(), 1);
        assert!(rs[0].spec.parent_refs[0].section_name.is_none());
        assert_eq!((rs[0].spec.hostnames.len(), rs[0].spec.rules.len()), (0, 1));
    }));
    cases.push(c);

    let tls_spec = format!(
        "tls:\n- hosts: [app.example.com]\n{}",
        one_path("app.example.com", "/", "Prefix", "svc", 80)
    );
    let mut c = case(
        "tls hosts deduplicated with rule hosts",
        ingress("", "tls", &[], &tls_spec),
        1,
    );
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        assert_eq!(
            (
                rs[0].spec.hostnames.len(),
                rs[0].spec.parent_refs.len(),
                rs[0].spec.rules.len()
            ),
            (1, 1, 1)
        );
    }));
    cases.push(c);

    let fixed_host = FIXED.replace("MSG", "host test");
    let fixed_combo = FIXED.replace("MSG", "combo");
    let fixed_api = FIXED.replace("MSG", "api only");
    let fixed_src = FIXED.replace("MSG", "source ip only");
    let mut c = case(
        "host-header condition splits rule into separate HTTPRoute",
        ingress(
            "",
            "ingress",
            &[
                (
                    "alb.ingress.kubernetes.io/actions.rule-path1",
                    fixed_host.as_str(),
                ),
                (
                    "alb.ingress.kubernetes.io/conditions.rule-path1",
                    r#"[{"field":"host-header","hostHeaderConfig":{"values":["anno.example.com"]}}]"#,
                ),
            ],
            &use_annotation_paths(
                "www.example.com",
                &[
                    ("/path1", "Exact", "rule-path1", None),
                    ("/path2", "Exact", "svc2", Some(80)),
                ],
            ),
        ),
        2,
    );
    c.gw = "my-gw";
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        let (primary, split) = (&rs[0], &rs[1]);
        assert_eq!(hosts(primary), vec!["www.example.com"]);
        assert_eq!(primary.spec.rules.len(), 1);
        assert_eq!(path_value(primary, 0), "/path2");
        assert!(hosts(split).contains(&"www.example.com"));
        assert!(hosts(split).contains(&"anno.example.com"));
        assert_eq!(split.spec.rules.len(), 1);
        assert_eq!(path_value(split, 0), "/path1");
    }));
    cases.push(c);

    let c_combo = case(
        "host-header + source-ip conditions on same rule — split route with LRC",
        ingress(
            "",
            "combo",
            &[
                (
                    "alb.ingress.kubernetes.io/actions.rule-combo",
                    fixed_combo.as_str(),
                ),
                (
                    "alb.ingress.kubernetes.io/conditions.rule-combo",
                    r#"[{"field":"host-header","hostHeaderConfig":{"values":["api.example.com"]}},{"field":"source-ip","sourceIpConfig":{"values":["10.0.0.0/8"]}}]"#,
                ),
            ],
            &use_annotation_paths(
                "www.example.com",
                &[("/combo", "Exact", "rule-combo", None)],
            ),
        ),
        2,
    );
    let mut c = c_combo;
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        let split = &rs[1];
        assert!(hosts(split).contains(&"www.example.com"));
        assert!(hosts(split).contains(&"api.example.com"));
        assert_eq!(split.spec.rules.len(), 1);
        assert_eq!(path_value(split, 0), "/combo");
        assert!(!split.spec.rules[0].filters.is_empty());
    }));
    cases.push(c);

    let mut c = case(
        "host-header condition without Ingress spec host — only condition hostnames",
        ingress(
            "",
            "nohost",
            &[
                (
                    "alb.ingress.kubernetes.io/actions.rule-api",
                    fixed_api.as_str(),
                ),
                (
                    "alb.ingress.kubernetes.io/conditions.rule-api",
                    r#"[{"field":"host-header","hostHeaderConfig":{"values":["api.example.com"]}}]"#,
                ),
            ],
            &use_annotation_paths("", &[("/api", "Exact", "rule-api", None)]),
        ),
        2,
    );
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        let (primary, split) = (&rs[0], &rs[1]);
        assert_eq!(
            (primary.spec.hostnames.len(), primary.spec.rules.len()),
            (0, 0)
        );
        assert_eq!(hosts(split), vec!["api.example.com"]);
        assert_eq!(split.spec.rules.len(), 1);
        assert_eq!(path_value(split, 0), "/api");
    }));
    cases.push(c);

    let mut c = case(
        "source-ip condition without host-header — no split, stays in primary route",
        ingress(
            "",
            "nosplit",
            &[
                (
                    "alb.ingress.kubernetes.io/actions.rule-src",
                    fixed_src.as_str(),
                ),
                (
                    "alb.ingress.kubernetes.io/conditions.rule-src",
                    r#"[{"field":"source-ip","sourceIpConfig":{"values":["10.0.0.0/8"]}}]"#,
                ),
            ],
            &use_annotation_paths("www.example.com", &[("/src", "Exact", "rule-src", None)]),
        ),
        1,
    );
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        assert_eq!(hosts(&rs[0]), vec!["www.example.com"]);
        assert_eq!(rs[0].spec.rules.len(), 1);
        assert_eq!(path_value(&rs[0], 0), "/src");
    }));
    cases.push(c);

    let mut c = case(
        "ssl-redirect produces redirect route on HTTP and rules route on HTTPS",
        ingress(
            "",
            "ssl",
            &[("alb.ingress.kubernetes.io/ssl-redirect", "443")],
            &one_path("app.example.com", "/api", "Prefix", "api-svc", 80),
        ),
        1,
    );
    c.ssl_redirect = Some(443);
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        assert_eq!(
            rs[0].spec.parent_refs[0].section_name.as_deref(),
            Some("https-443")
        );
        assert_eq!(rs[0].spec.rules.len(), 1);
        assert_eq!(path_value(&rs[0], 0), "/api");
    }));
    cases.push(c);

    let mut c = case(
        "jwt-validation annotation produces LRC with jwt-validation action",
        ingress(
            "",
            "jwt",
            &[(
                "alb.ingress.kubernetes.io/jwt-validation",
                r#"{"jwksEndpoint":"https://example.com/.well-known/jwks.json","issuer":"https://example.com","additionalClaims":[{"name":"scope","format":"space-separated-values","values":["read","write"]}]}"#,
            )],
            &one_path("api.example.com", "/api", "Prefix", "api-svc", 80),
        ),
        1,
    );
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        let rule = &rs[0].spec.rules[0];
        assert_eq!(rule.filters.len(), 1);
        assert_eq!(rule.filters[0].type_, FILTER_EXTENSION_REF);
    }));
    c.check_lrcs = Some(Box::new(|lrcs: &[ListenerRuleConfiguration]| {
        assert_eq!(lrcs.len(), 1);
        assert_eq!(lrcs[0].spec.actions.len(), 1);
        let a = &lrcs[0].spec.actions[0];
        assert_eq!(a.type_, ActionType::JwtValidation);
        let j = a.jwt_validation_config.as_ref().unwrap();
        assert_eq!(j.jwks_endpoint, "https://example.com/.well-known/jwks.json");
        assert_eq!(j.issuer, "https://example.com");
        assert_eq!(j.additional_claims.len(), 1);
        assert_eq!(j.additional_claims[0].name, "scope");
    }));
    cases.push(c);

    let mut c = case(
        "auth-type and jwt-validation both set — mutual exclusivity error",
        ingress(
            "",
            "conflict",
            &[
                ("alb.ingress.kubernetes.io/auth-type", "cognito"),
                (
                    "alb.ingress.kubernetes.io/auth-idp-cognito",
                    r#"{"userPoolARN":"arn:pool","userPoolClientID":"cid","userPoolDomain":"dom"}"#,
                ),
                (
                    "alb.ingress.kubernetes.io/jwt-validation",
                    r#"{"jwksEndpoint":"https://example.com/jwks","issuer":"https://example.com"}"#,
                ),
            ],
            &one_path("", "/api", "Prefix", "svc", 80),
        ),
        0,
    );
    c.want_err = Some("only one pre-routing action is allowed");
    cases.push(c);

    let jwt_multi_spec = "rules:\n- host: api.example.com\n  http:\n    paths:\n    - {path: /api, pathType: Prefix, backend: {service: {name: api-svc, port: {number: 80}}}}\n    - {path: /health, pathType: Exact, backend: {service: {name: api-svc, port: {number: 80}}}}\n";
    let mut c = case(
        "jwt-validation with multiple paths — single LRC action, not duplicated",
        ingress(
            "",
            "jwt-multi",
            &[(
                "alb.ingress.kubernetes.io/jwt-validation",
                r#"{"jwksEndpoint":"https://example.com/jwks","issuer":"https://example.com"}"#,
            )],
            jwt_multi_spec,
        ),
        1,
    );
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        assert_eq!(rs[0].spec.rules.len(), 2);
        for rule in &rs[0].spec.rules {
            assert_eq!(rule.filters.len(), 1);
            assert_eq!(rule.filters[0].type_, FILTER_EXTENSION_REF);
        }
    }));
    c.check_lrcs = Some(Box::new(|lrcs: &[ListenerRuleConfiguration]| {
        assert_eq!(lrcs.len(), 1);
        assert_eq!(lrcs[0].spec.actions.len(), 1);
        assert_eq!(lrcs[0].spec.actions[0].type_, ActionType::JwtValidation);
    }));
    cases.push(c);

    let mut c = case(
        "simple rule with user tags annotation produces tag-only LRC",
        ingress(
            "",
            "tagged",
            &[("alb.ingress.kubernetes.io/tags", "ManagedBy=platform-team")],
            &one_path("app.example.com", "/api", "Prefix", "api-svc", 80),
        ),
        1,
    );
    c.user_tags = BTreeMap::from([("ManagedBy".to_string(), "platform-team".to_string())]);
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        let rule = &rs[0].spec.rules[0];
        assert_eq!(rule.filters.len(), 1);
        assert_eq!(rule.filters[0].type_, FILTER_EXTENSION_REF);
        assert_eq!(
            rule.filters[0]
                .extension_ref
                .as_ref()
                .map(|r| r.kind.as_str()),
            Some("ListenerRuleConfiguration")
        );
    }));
    c.check_lrcs = Some(Box::new(|lrcs: &[ListenerRuleConfiguration]| {
        assert_eq!(lrcs.len(), 1);
        assert!(lrcs[0].spec.actions.is_empty());
        assert!(lrcs[0].spec.conditions.is_empty());
    }));
    cases.push(c);

    let mut c = case(
        "simple rule without tags annotation produces no LRC",
        ingress("", "untagged", &[], &one_path("", "/", "Prefix", "svc", 80)),
        1,
    );
    c.check = Some(Box::new(|rs: &[HttpRoute]| {
        assert!(rs[0].spec.rules[0].filters.is_empty())
    }));
    c.check_lrcs = Some(Box::new(|lrcs: &[ListenerRuleConfiguration]| {
        assert!(lrcs.is_empty())
    }));
    cases.push(c);

    assert_eq!(cases.len(), 17);
    for c in cases {
        let parent_refs = match c.ssl_redirect {
            Some(p) => build_parent_refs(c.gw, Some(format!("https-{p}").as_str())),
            None => build_parent_refs(c.gw, None),
        };
        let got = build_http_routes(
            &c.ing,
            c.namespace,
            &parent_refs,
            &BTreeMap::new(),
            &c.user_tags,
        );
        if let Some(w) = c.want_err {
            let e = got.expect_err(c.name);
            assert!(e.to_string().contains(w), "{}: {e}", c.name);
            continue;
        }
        let built = got.unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(
            built.routes.len(),
            c.want_routes,
            "{}: {:#?}",
            c.name,
            built.routes
        );
        if let Some(check) = &c.check {
            check(&built.routes);
        }
        if let Some(check) = &c.check_lrcs {
            check(&built.listener_rule_configurations);
        }
    }
}

#[test]
fn to_gateway_path_type_upstream() {
    assert_eq!(to_gateway_path_type(None, false).unwrap(), PATH_PREFIX);
    assert_eq!(
        to_gateway_path_type(Some("Prefix"), false).unwrap(),
        PATH_PREFIX
    );
    assert_eq!(
        to_gateway_path_type(Some("Exact"), false).unwrap(),
        PATH_EXACT
    );
    assert_eq!(
        to_gateway_path_type(Some("ImplementationSpecific"), false).unwrap(),
        PATH_PREFIX
    );
    assert_eq!(
        to_gateway_path_type(Some("ImplementationSpecific"), true).unwrap(),
        PATH_REGEX
    );
    assert!(to_gateway_path_type(Some("Unknown"), false).is_err());
}

#[test]
fn deduplicate_hostnames_ignores_case() {
    let input: Vec<String> = ["a.com", "A.COM", "b.com", "a.com"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        deduplicate_hostnames(&input),
        vec!["a.com".to_string(), "b.com".to_string()]
    );
}

#[test]
fn resolve_service_port_upstream() {
    let svcs = services_map(&[service(
        "default",
        "my-svc",
        &[],
        &[("http", 80), ("https", 443)],
    )]);
    let backend = |name: &str, port: &str| -> IngressServiceBackend {
        yaml(&format!("{{name: {name}, port: {port}}}"))
    };
    assert_eq!(
        resolve_service_port(&backend("my-svc", "{number: 8080}"), "default", &svcs).unwrap(),
        8080
    );
    assert_eq!(
        resolve_service_port(&backend("my-svc", "{name: http}"), "default", &svcs).unwrap(),
        80
    );
    assert!(
        resolve_service_port(&backend("missing-svc", "{name: http}"), "default", &svcs).is_err()
    );
    assert!(resolve_service_port(&backend("my-svc", "{name: grpc}"), "default", &svcs).is_err());
    assert!(resolve_service_port(&backend("my-svc", "{}"), "default", &svcs).is_err());
}

#[test]
fn build_http_routes_default_backend_error() {
    let spec = format!(
        "defaultBackend: {{service: {{name: missing-svc, port: {{name: http}}}}}}\n{}",
        one_path("", "/", "Prefix", "svc", 80)
    );
    let ing = ingress("", "app", &[], &spec);
    let err = build_http_routes(
        &ing,
        "default",
        &build_parent_refs("gw", None),
        &BTreeMap::new(),
        &BTreeMap::new(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("defaultBackend"), "{err}");
}
