//! Replays `translate/lb_config_test.go` `TestBuildLoadBalancerConfigResource`: all 8 cases.

use super::{annotations_map, lp};
use crate::crd::gateway::load_balancer_configuration::Scheme;
use crate::migrate::annotations::ListenPort;
use crate::migrate::lb_config::build_load_balancer_config_resource;
use crate::migrate::MIGRATION_TAG_KEY;

fn build(
    a: &[(&str, &str)],
    ports: &[ListenPort],
) -> Option<crate::crd::gateway::LoadBalancerConfiguration> {
    let mut notes = Vec::new();
    let got = build_load_balancer_config_resource(
        "test-lb",
        "default",
        &annotations_map(a),
        ports,
        "ingress/default/test",
        &mut notes,
    );
    assert!(notes.is_empty(), "{notes:?}");
    got
}

#[test]
fn build_load_balancer_config_resource_upstream_cases() {
    let http = [lp("HTTP", 80)];
    let https = [lp("HTTPS", 443)];
    // no annotations returns nil
    assert!(build(&[], &http).is_none());
    // scheme annotation
    let c = build(
        &[("alb.ingress.kubernetes.io/scheme", "internet-facing")],
        &http,
    )
    .unwrap();
    assert_eq!(c.spec.scheme, Some(Scheme::InternetFacing));
    // certificate and ssl-policy on HTTPS listener
    let c = build(
        &[
            (
                "alb.ingress.kubernetes.io/certificate-arn",
                "arn:aws:acm:us-west-2:123:certificate/abc",
            ),
            (
                "alb.ingress.kubernetes.io/ssl-policy",
                "ELBSecurityPolicy-TLS-1-2-2017-01",
            ),
        ],
        &https,
    )
    .unwrap();
    let lcs = c.spec.listener_configurations.unwrap();
    assert_eq!(lcs.len(), 1);
    assert_eq!(
        lcs[0].default_certificate.as_deref(),
        Some("arn:aws:acm:us-west-2:123:certificate/abc")
    );
    assert_eq!(
        lcs[0].ssl_policy.as_deref(),
        Some("ELBSecurityPolicy-TLS-1-2-2017-01")
    );
    // cert on HTTP listener is not added
    assert!(build(
        &[(
            "alb.ingress.kubernetes.io/certificate-arn",
            "arn:aws:acm:us-west-2:123:certificate/abc"
        )],
        &http
    )
    .is_none());
    // load balancer attributes
    let c = build(
        &[(
            "alb.ingress.kubernetes.io/load-balancer-attributes",
            "idle_timeout.timeout_seconds=120",
        )],
        &http,
    )
    .unwrap();
    assert_eq!(c.spec.load_balancer_attributes.len(), 1);
    assert_eq!(
        c.spec.load_balancer_attributes[0].key,
        "idle_timeout.timeout_seconds"
    );
    // tags include migration tag
    let c = build(&[("alb.ingress.kubernetes.io/tags", "Env=prod")], &http).unwrap();
    let tags = c.spec.tags.unwrap();
    assert_eq!(tags["Env"], "prod");
    assert!(tags.contains_key(MIGRATION_TAG_KEY));
    // wafv2 and shield
    let c = build(
        &[
            (
                "alb.ingress.kubernetes.io/wafv2-acl-arn",
                "arn:aws:wafv2:us-west-2:123:regional/webacl/my-acl/abc",
            ),
            (
                "alb.ingress.kubernetes.io/shield-advanced-protection",
                "true",
            ),
        ],
        &http,
    )
    .unwrap();
    assert_eq!(
        c.spec.waf_v2.unwrap().web_acl,
        "arn:aws:wafv2:us-west-2:123:regional/webacl/my-acl/abc"
    );
    assert!(c.spec.shield_configuration.unwrap().enabled);
    // subnets and security groups
    let c = build(
        &[
            ("alb.ingress.kubernetes.io/subnets", "subnet-aaa,subnet-bbb"),
            ("alb.ingress.kubernetes.io/security-groups", "sg-111,sg-222"),
        ],
        &http,
    )
    .unwrap();
    assert_eq!(c.spec.load_balancer_subnets.unwrap().len(), 2);
    assert_eq!(c.spec.security_groups.unwrap().len(), 2);
}

/// A value the CRD's enum does not take is left out with a warning, never in silence.
#[test]
fn a_scheme_the_crd_does_not_take_is_warned() {
    let mut notes = Vec::new();
    let got = build_load_balancer_config_resource(
        "x",
        "default",
        &annotations_map(&[("alb.ingress.kubernetes.io/scheme", "public")]),
        &[lp("HTTP", 80)],
        "t",
        &mut notes,
    );
    assert!(got.is_none());
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].contains("alb.ingress.kubernetes.io/scheme \"public\""),
        "{notes:?}"
    );
}
