//! Replays `translate/icp_overrides_test.go`: `TestAllIngressClassParamsFieldsHandled` (1; the
//! Go reflection over the spec's fields becomes one check per field, on every field this
//! build's IngressClassParams type has), `TestResolveSSLRedirectPort` (4),
//! `TestApplyIngressClassParamsToLBConfig_MultiICP_Conflict` (5), `TestApplyICPSpecOverride`
//! (3): all 13.

use super::icp;
use crate::crd::gateway::load_balancer_configuration::{
    LbIpAddressType, ListenerConfiguration, Scheme,
};
use crate::crd::gateway::target_group_configuration::{TargetGroupProps, TgTargetType};
use crate::crd::gateway::LoadBalancerConfigurationSpec;
use crate::migrate::icp::*;

#[test]
fn all_ingress_class_params_fields_handled() {
    let p = icp(
        "all",
        r#"
loadBalancerName: my-lb
certificateArn: [arn:aws:acm:us-west-2:123:certificate/abc]
namespaceSelector: {matchLabels: {env: prod}}
group: {name: my-group}
scheme: internet-facing
inboundCIDRs: [10.0.0.0/8]
sslPolicy: ELBSecurityPolicy-TLS-1-2-2017-01
sslRedirectPort: "443"
subnets: {ids: [subnet-aaa]}
ipAddressType: dualstack
tags: [{key: Env, value: prod}]
targetType: ip
loadBalancerAttributes: [{key: idle_timeout, value: "120"}]
listeners: [{protocol: HTTPS, port: 443, listenerAttributes: [{key: routing.http.response.server.enabled, value: "true"}]}]
minimumLoadBalancerCapacity: {capacityUnits: 100}
ipamConfiguration: {ipv4IPAMPoolId: ipam-pool-123}
prefixListsIDs: [pl-111]
PrefixListsIDs: [pl-111]
wafv2AclArn: arn:aws:wafv2:us-west-2:123:regional/webacl/my-acl/abc
wafv2AclName: my-acl
"#,
    );
    // Every field set: the spec's JSON has each of them.
    let fields = serde_json::to_value(&p.spec).unwrap();
    assert_eq!(fields.as_object().unwrap().len(), 20, "{fields}");
    let mut spec = LoadBalancerConfigurationSpec {
        // Certificates and SSL policy apply to listener configurations that exist.
        listener_configurations: Some(vec![ListenerConfiguration {
            protocol_port: "HTTPS:443".into(),
            ..Default::default()
        }]),
        ..Default::default()
    };
    apply_ingress_class_params_to_lb_config(&mut spec, &p).unwrap();
    let mut tg = TargetGroupProps::default();
    apply_ingress_class_params_to_tg_props(&mut tg, &p);
    let lc = &spec.listener_configurations.as_ref().unwrap()[0];
    // Intentionally not load balancer or target group settings: namespaceSelector (cluster
    // policy), group (grouping), sslRedirectPort (routes).
    let handled = [
        ("scheme", spec.scheme.is_some()),
        ("ipAddressType", spec.ip_address_type.is_some()),
        ("loadBalancerName", spec.load_balancer_name.is_some()),
        ("sslPolicy", lc.ssl_policy.is_some()),
        ("certificateArn", lc.default_certificate.is_some()),
        ("inboundCIDRs", spec.source_ranges.is_some()),
        ("tags", spec.tags.is_some()),
        (
            "loadBalancerAttributes",
            !spec.load_balancer_attributes.is_empty(),
        ),
        (
            "subnets",
            spec.load_balancer_subnets.is_some() || spec.load_balancer_subnets_selector.is_some(),
        ),
        ("prefixListsIDs", spec.security_group_prefixes.is_some()),
        ("PrefixListsIDs", spec.security_group_prefixes.is_some()),
        ("wafv2AclArn", spec.waf_v2.is_some()),
        ("wafv2AclName", spec.waf_v2.is_some()),
        (
            "minimumLoadBalancerCapacity",
            spec.minimum_load_balancer_capacity.is_some(),
        ),
        ("ipamConfiguration", spec.ipv4_ipam_pool_id.is_some()),
        ("listeners", !lc.listener_attributes.is_empty()),
        ("targetType", tg.target_type.is_some()),
    ];
    let skipped = ["namespaceSelector", "group", "sslRedirectPort"];
    for field in fields.as_object().unwrap().keys() {
        if skipped.contains(&field.as_str()) {
            continue;
        }
        let h = handled.iter().find(|(f, _)| *f == field.as_str());
        assert!(
            h.is_some_and(|(_, set)| *set),
            "IngressClassParams field {field} is not applied (or not listed here)"
        );
    }
}

#[test]
fn resolve_ssl_redirect_port_upstream_cases() {
    let redirect = "alb.ingress.kubernetes.io/ssl-redirect";
    let a443 = super::annotations_map(&[(redirect, "443")]);
    let none = super::annotations_map(&[]);
    let icp8443 = icp("p", "{sslRedirectPort: '8443'}");
    assert_eq!(
        resolve_ssl_redirect_port(&none, None),
        None,
        "no annotation, no ICP"
    );
    assert_eq!(
        resolve_ssl_redirect_port(&a443, None),
        Some(443),
        "annotation only"
    );
    assert_eq!(
        resolve_ssl_redirect_port(&none, Some(&icp8443)),
        Some(8443),
        "ICP only"
    );
    assert_eq!(
        resolve_ssl_redirect_port(&a443, Some(&icp8443)),
        Some(8443),
        "ICP overrides annotation"
    );
}

#[test]
fn apply_ingress_class_params_to_lb_config_multi_icp_conflict() {
    let cases = vec![
        (
            "non-overlapping fields combine",
            vec!["{scheme: internal}", "{ipAddressType: dualstack}"],
            None,
        ),
        (
            "same value no conflict",
            vec!["{scheme: internal}", "{scheme: internal}"],
            None,
        ),
        (
            "conflicting scheme errors",
            vec!["{scheme: internal}", "{scheme: internet-facing}"],
            Some("conflicting IngressClassParams scheme"),
        ),
        (
            "conflicting tags per-key errors",
            vec![
                "{tags: [{key: env, value: prod}]}",
                "{tags: [{key: env, value: staging}]}",
            ],
            Some("conflicting IngressClassParams tag"),
        ),
        (
            "non-overlapping tags combine",
            vec![
                "{tags: [{key: env, value: prod}]}",
                "{tags: [{key: team, value: platform}]}",
            ],
            None,
        ),
    ];
    for (name, specs, want) in cases {
        let mut spec = LoadBalancerConfigurationSpec::default();
        let mut last = Ok(());
        for (i, s) in specs.iter().enumerate() {
            last = apply_ingress_class_params_to_lb_config(&mut spec, &icp(&format!("p{i}"), s));
            if last.is_err() {
                break;
            }
        }
        match (last, want) {
            (Ok(()), None) => {}
            (Err(e), Some(w)) => assert!(e.to_string().contains(w), "{name}: {e}"),
            (got, w) => panic!("{name}: got {got:?}, want {w:?}"),
        }
    }
}

#[test]
fn apply_icp_spec_override_upstream_cases() {
    // ICP overrides annotation-derived value
    let mut dst = LoadBalancerConfigurationSpec {
        scheme: Some(Scheme::InternetFacing),
        ..Default::default()
    };
    apply_icp_spec_override(
        &mut dst,
        &LoadBalancerConfigurationSpec {
            scheme: Some(Scheme::Internal),
            ..Default::default()
        },
    );
    assert_eq!(dst.scheme, Some(Scheme::Internal));
    // ICP sets field not in annotations
    let mut dst = LoadBalancerConfigurationSpec::default();
    apply_icp_spec_override(
        &mut dst,
        &LoadBalancerConfigurationSpec {
            ip_address_type: Some(LbIpAddressType::Dualstack),
            ..Default::default()
        },
    );
    assert_eq!(dst.ip_address_type, Some(LbIpAddressType::Dualstack));
    // ICP nil field does not overwrite annotation
    let mut dst = LoadBalancerConfigurationSpec {
        scheme: Some(Scheme::InternetFacing),
        ..Default::default()
    };
    apply_icp_spec_override(&mut dst, &LoadBalancerConfigurationSpec::default());
    assert_eq!(dst.scheme, Some(Scheme::InternetFacing));
}

/// The target type of IngressClassParams reaches target group settings.
#[test]
fn icp_target_type_reaches_target_groups() {
    let mut tg = TargetGroupProps::default();
    apply_ingress_class_params_to_tg_props(
        &mut tg,
        &icp("p", "{targetType: ip, tags: [{key: a, value: b}]}"),
    );
    assert_eq!(tg.target_type, Some(TgTargetType::Ip));
    assert_eq!(tg.tags.unwrap()["a"], "b");
}
