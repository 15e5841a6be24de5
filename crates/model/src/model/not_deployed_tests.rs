//! Each input this build cannot deploy fails the member's build with the annotation named; a
//! test fails if the input is ignored (the stack builds) or refused for another reason.

use std::path::Path;

use super::super::{build_stack, load_groups, BuildEnv, ClusterObjects, ModelConfig, ModelError};
use crate::plan::add_manifests;

const BASE: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: demo
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/group.name: shop
EXTRA
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: other
  namespace: demo
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/group.name: shop
spec:
  rules:
  - host: other.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#;

const HTTPS: &str = "    alb.ingress.kubernetes.io/listen-ports: '[{\"HTTPS\": 443}]'\n    alb.ingress.kubernetes.io/certificate-arn: arn:aws:acm:us-west-2:111122223333:certificate/c\n";

fn build(extra: &str, cfg: &ModelConfig) -> Result<super::super::Stack, ModelError> {
    let yaml = BASE.replace("EXTRA\n", extra);
    let mut objs = ClusterObjects::default();
    add_manifests(&mut objs, &yaml, Path::new("t.yaml")).unwrap();
    let (groups, errors) = load_groups(&objs, &cfg.ingress_class);
    assert!(errors.is_empty(), "{errors:?}");
    let g = groups.values().next().unwrap();
    build_stack(g, &objs, cfg, &BuildEnv::default())
}

fn cfg() -> ModelConfig {
    ModelConfig {
        cluster_name: "c".into(),
        vpc_id: Some("vpc-1".into()),
        ..ModelConfig::default()
    }
}

/// `web` (with `extra`) is left out of the group with `annotation` named; `other` still builds.
fn assert_refused(extra: &str, annotation: &str) {
    let stack = build(extra, &cfg()).unwrap_or_else(|e| panic!("{extra}: {e}"));
    assert_eq!(stack.members, vec!["demo/other".to_string()], "{extra}");
    let ex = &stack.excluded_members;
    assert_eq!(ex.len(), 1, "{extra}: {ex:?}");
    assert_eq!(ex[0].ingress, "demo/web");
    assert_eq!(ex[0].annotation.as_deref(), Some(annotation), "{extra}");
    assert!(
        ex[0].error.contains("not deployed by this build"),
        "{}",
        ex[0].error
    );
}

fn a(key: &str, value: &str) -> String {
    format!("    alb.ingress.kubernetes.io/{key}: '{value}'\n")
}

#[test]
fn baseline_builds_both_members() {
    let s = build("", &cfg()).unwrap();
    assert_eq!(s.members.len(), 2);
    assert!(s.excluded_members.is_empty());
    let s = build(HTTPS, &cfg()).unwrap();
    assert_eq!(s.members.len(), 2, "{:?}", s.excluded_members);
}

#[test]
fn load_balancer_addons_are_refused_not_ignored() {
    let arn = "arn:aws:wafv2:us-west-2:111122223333:regional/webacl/w/1";
    for (key, value) in [
        ("wafv2-acl-arn", arn),
        ("wafv2-acl-arn", "none"),
        ("wafv2-acl-arn", ""),
        ("wafv2-acl-name", "my-acl"),
        ("waf-acl-id", "0123-abcd"),
        ("web-acl-id", "0123-abcd"),
        ("shield-advanced-protection", "true"),
        ("shield-advanced-protection", "false"),
    ] {
        assert_refused(&a(key, value), &format!("alb.ingress.kubernetes.io/{key}"));
    }
}

#[test]
fn disabled_addons_and_empty_values_stay_accepted_as_upstream_ignores_them() {
    let mut c = cfg();
    c.enable_wafv2 = false;
    c.enable_waf = false;
    c.enable_shield = false;
    let extra = a("wafv2-acl-arn", "arn:x")
        + &a("waf-acl-id", "w")
        + &a("shield-advanced-protection", "true");
    let s = build(&extra, &c).unwrap();
    assert!(s.excluded_members.is_empty(), "{:?}", s.excluded_members);
    // Upstream ignores an empty WAFv2 name and an empty WAF Classic id.
    let s = build(&(a("wafv2-acl-name", "") + &a("waf-acl-id", "")), &cfg()).unwrap();
    assert!(s.excluded_members.is_empty(), "{:?}", s.excluded_members);
}

#[test]
fn listener_and_rule_features_are_refused_not_ignored() {
    // HTTPS without certificate-arn: ACM discovery by host.
    assert_refused(
        &a("listen-ports", r#"[{"HTTPS": 443}]"#),
        "alb.ingress.kubernetes.io/certificate-arn",
    );
    assert_refused(
        &(HTTPS.to_string()
            + &a("auth-type", "oidc")
            + &a(
                "auth-idp-oidc",
                r#"{"issuer":"https://i","authorizationEndpoint":"https://a","tokenEndpoint":"https://t","userInfoEndpoint":"https://u","secretName":"s"}"#,
            )),
        "alb.ingress.kubernetes.io/auth-idp-oidc",
    );
}

#[test]
fn oidc_on_an_http_listener_is_ignored_as_upstream_does() {
    let extra = a("auth-type", "oidc")
        + &a(
            "auth-idp-oidc",
            r#"{"issuer":"https://i","authorizationEndpoint":"https://a","tokenEndpoint":"https://t","userInfoEndpoint":"https://u","secretName":"s"}"#,
        );
    assert!(build(&extra, &cfg()).unwrap().excluded_members.is_empty());
}

#[test]
fn a_lone_member_with_an_undeployable_annotation_fails_the_whole_build() {
    let yaml_extra = a(
        "wafv2-acl-arn",
        "arn:aws:wafv2:us-west-2:1:regional/webacl/w/1",
    );
    let only_web = BASE
        .replace("EXTRA\n", &yaml_extra)
        .split("\n---\n")
        .take(2)
        .collect::<Vec<_>>()
        .join("\n---\n");
    let mut objs = ClusterObjects::default();
    add_manifests(&mut objs, &only_web, Path::new("t.yaml")).unwrap();
    let (groups, _) = load_groups(&objs, &cfg().ingress_class);
    let err = build_stack(
        groups.values().next().unwrap(),
        &objs,
        &cfg(),
        &BuildEnv::default(),
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with("ingress: demo/web: alb.ingress.kubernetes.io/wafv2-acl-arn: a WAFv2 web ACL association is not deployed"),
        "{err}"
    );
}
