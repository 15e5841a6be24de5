//! Each input this build cannot deploy fails the member's build with the annotation named; a
//! test fails if the input is ignored (the stack builds) or refused for another reason. Also the
//! inputs once refused here that now reach the stack (add-ons, ACM discovery).

use std::path::Path;

use crate::model::{build_stack, load_groups, BuildEnv, ClusterObjects, ModelConfig, ModelError};
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

fn build(extra: &str, cfg: &ModelConfig) -> Result<crate::model::Stack, ModelError> {
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

/// Each WAF / Shield annotation reaches the stack's add-ons (deployed after the load balancer);
/// the case fails if the annotation is ignored.
#[test]
fn load_balancer_addons_are_carried_to_the_deployer() {
    use crate::model::Addons;
    let arn = "arn:aws:wafv2:us-west-2:111122223333:regional/webacl/w/1";
    let cases: [(&str, &str, Addons); 8] = [
        (
            "wafv2-acl-arn",
            arn,
            Addons {
                wafv2_acl_arn: Some(arn.into()),
                ..Default::default()
            },
        ),
        (
            "wafv2-acl-arn",
            "none",
            Addons {
                wafv2_acl_arn: Some("none".into()),
                ..Default::default()
            },
        ),
        (
            "wafv2-acl-name",
            "my-acl",
            Addons {
                wafv2_acl_name: Some("my-acl".into()),
                ..Default::default()
            },
        ),
        (
            "wafv2-acl-name",
            "none",
            Addons {
                wafv2_acl_name: Some("none".into()),
                ..Default::default()
            },
        ),
        (
            "waf-acl-id",
            "0123-abcd",
            Addons {
                waf_regional_acl_id: Some("0123-abcd".into()),
                ..Default::default()
            },
        ),
        (
            "web-acl-id",
            "0123-abcd",
            Addons {
                waf_regional_acl_id: Some("0123-abcd".into()),
                ..Default::default()
            },
        ),
        (
            "shield-advanced-protection",
            "true",
            Addons {
                shield_advanced_protection: Some(true),
                ..Default::default()
            },
        ),
        (
            "shield-advanced-protection",
            "false",
            Addons {
                shield_advanced_protection: Some(false),
                ..Default::default()
            },
        ),
    ];
    for (key, value, want) in cases {
        let s = build(&a(key, value), &cfg()).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert!(
            s.excluded_members.is_empty(),
            "{key}: {:?}",
            s.excluded_members
        );
        assert_eq!(s.addons, want, "{key}: {value}");
    }
    // A name beats an ARN; `waf-acl-id` beats the deprecated `web-acl-id`.
    let s = build(
        &(a("wafv2-acl-arn", arn) + &a("wafv2-acl-name", "n")),
        &cfg(),
    )
    .unwrap();
    assert_eq!(s.addons.wafv2_acl_name.as_deref(), Some("n"));
    assert_eq!(s.addons.wafv2_acl_arn, None);
    let s = build(&(a("waf-acl-id", "new") + &a("web-acl-id", "old")), &cfg()).unwrap();
    assert_eq!(s.addons.waf_regional_acl_id.as_deref(), Some("new"));
}

#[test]
fn disabled_addons_and_empty_values_leave_the_load_balancer_alone() {
    let mut c = cfg();
    c.enable_wafv2 = false;
    c.enable_waf = false;
    c.enable_shield = false;
    let extra = a("wafv2-acl-arn", "arn:x")
        + &a("waf-acl-id", "w")
        + &a("shield-advanced-protection", "true");
    let s = build(&extra, &c).unwrap();
    assert!(s.excluded_members.is_empty(), "{:?}", s.excluded_members);
    assert!(s.addons.is_empty(), "{:?}", s.addons);
    // Empty values ask for nothing (upstream disassociates on an empty ARN, against its docs).
    let extra = a("wafv2-acl-name", "") + &a("waf-acl-id", "") + &a("wafv2-acl-arn", "");
    let s = build(&extra, &cfg()).unwrap();
    assert!(s.excluded_members.is_empty(), "{:?}", s.excluded_members);
    assert!(s.addons.is_empty(), "{:?}", s.addons);
}

/// HTTPS without `certificate-arn` is no longer refused: the listener carries each member's
/// certificate source in group order for ACM discovery (fails if discovery is dropped or the
/// refusal comes back).
#[test]
fn https_without_certificate_arn_is_modelled_for_acm_discovery() {
    let s = build(&a("listen-ports", r#"[{"HTTPS": 443}]"#), &cfg()).unwrap();
    assert!(s.excluded_members.is_empty(), "{:?}", s.excluded_members);
    let l = s.listeners.iter().find(|l| l.port == 443).unwrap();
    assert!(l.certificates.is_empty());
    let d = &l.certificate_discovery;
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].ingress, "demo/web");
    assert_eq!(
        d[0].discovery_hosts,
        Some(vec!["shop.example.com".to_string()])
    );
    // What `plan` prints for it.
    let shown = serde_json::to_value(l).unwrap();
    assert_eq!(
        shown["certificateDiscovery"][0]["discoveryHosts"],
        serde_json::json!(["shop.example.com"])
    );
    // With explicit certificates there is nothing to discover.
    let s = build(HTTPS, &cfg()).unwrap();
    assert!(s
        .listeners
        .iter()
        .all(|l| l.certificate_discovery.is_empty()));
}

/// An HTTPS listener with neither a certificate ARN nor a host to discover one for fails the
/// group at build time (upstream only fails at CreateListener, after the ALB exists).
#[test]
fn https_without_certificate_or_host_fails_before_any_aws_call() {
    let yaml = BASE
        .replace("EXTRA\n", &a("listen-ports", r#"[{"HTTPS": 443}]"#))
        .replace("  - host: shop.example.com\n    http:", "  - http:");
    let mut objs = ClusterObjects::default();
    add_manifests(&mut objs, &yaml, Path::new("t.yaml")).unwrap();
    let (groups, _) = load_groups(&objs, &cfg().ingress_class);
    let g = groups.values().next().unwrap();
    let err = build_stack(g, &objs, &cfg(), &BuildEnv::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "HTTPS listener on port 443 has no certificate: no certificate-arn, and no host in the rules or tls of [demo/web] to discover one for in ACM"
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

/// The one refusal left, a forward to a target group by name: a lone member asking for it
/// fails the whole build with the annotation named (ACM certificate creation, refused here
/// before, is deployed now: see `certificate_tests`).
#[test]
fn a_lone_member_with_an_undeployable_annotation_fails_the_whole_build() {
    let yaml = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: demo
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/actions.fwd: '{"type":"forward","targetGroupName":"tg-name"}'
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: fwd, port: {name: use-annotation}}}}
"#;
    let mut objs = ClusterObjects::default();
    add_manifests(&mut objs, yaml, Path::new("t.yaml")).unwrap();
    let (groups, _) = load_groups(&objs, &cfg().ingress_class);
    let err = build_stack(
        groups.values().next().unwrap(),
        &objs,
        &cfg(),
        &BuildEnv::default(),
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with("ingress: demo/web: alb.ingress.kubernetes.io/actions.fwd: a forward to targetGroupName tg-name (an ELBv2 lookup by name) is not deployed"),
        "{err}"
    );
}

/// IngressClassParams `wafv2AclName` / `wafv2AclArn` override the member's annotations.
#[test]
fn class_params_web_acl_beats_the_annotation() {
    let yaml = r#"
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: alb}
spec:
  controller: ingress.k8s.aws/alb
  parameters: {apiGroup: elbv2.k8s.aws, kind: IngressClassParams, name: waf}
---
apiVersion: elbv2.k8s.aws/v1beta1
kind: IngressClassParams
metadata: {name: waf}
spec: {wafv2AclName: class-acl}
---
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
    alb.ingress.kubernetes.io/wafv2-acl-name: annotation-acl
spec:
  ingressClassName: alb
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#;
    let mut objs = ClusterObjects::default();
    add_manifests(&mut objs, yaml, Path::new("t.yaml")).unwrap();
    let (groups, errors) = load_groups(&objs, &cfg().ingress_class);
    assert!(errors.is_empty(), "{errors:?}");
    let g = groups.values().next().unwrap();
    let s = build_stack(g, &objs, &cfg(), &BuildEnv::default()).unwrap();
    assert_eq!(s.addons.wafv2_acl_name.as_deref(), Some("class-acl"));
}
