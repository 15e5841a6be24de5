//! Gateway add-ons in the model, as upstream's `model_build_addon_test.go`: the configuration's
//! WAF, Shield and capacity land on the stack and count as on; an add-on the configuration
//! leaves out is removed only while the Gateway's annotation says it is active (and always when
//! the Gateway is being deleted); NLB Gateways carry only the capacity reservation.

use super::{cfg, yaml};
use crate::fixtures::TestObject;
use crate::model::gateway::addons::ActiveAddons;
use crate::model::gateway::*;
use crate::model::types::Addons;

const ACL: &str = "arn:aws:wafv2:us-west-2:111122223333:regional/webacl/acl/0123";

/// The Gateway `ns/gw` with exactly `annotations`, one listener of `protocol` on port 80, and
/// (when `deleting`) a deletion timestamp and the ALB finalizer.
fn gateway(protocol: &str, annotations: &[(&str, &str)], deleting: bool) -> Gateway {
    let gw = Gateway::test("ns", "gw")
        .uid("u1")
        .annotations(annotations)
        .class("c")
        .listener("l", protocol, 80);
    let gw = if deleting {
        gw.deleting_at("2025-01-01T00:00:00Z")
            .finalizer("gateway.k8s.aws/alb")
    } else {
        gw
    };
    gw.build()
}

fn lbc(spec: &str) -> LoadBalancerConfiguration {
    yaml(&format!(
        r#"
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {{name: cfg, namespace: ns}}
spec: {spec}
"#
    ))
}

const ALL_THREE: &str =
    "{wafV2: {webACL: \"arn:aws:wafv2:us-west-2:111122223333:regional/webacl/acl/0123\"}, shieldConfiguration: {enabled: true}, minimumLoadBalancerCapacity: {capacityUnits: 150}}";

const ALL_ACTIVE: &[(&str, &str)] = &[
    ("gateway.k8s.aws.addon.wafv2", "true"),
    ("gateway.k8s.aws.addon.shield", "True"),
    ("gateway.k8s.aws.addon.provisionedcapacity", "1"),
];

fn alb(gw: &Gateway, config: Option<&LoadBalancerConfiguration>) -> GatewayBuild {
    let inputs = GatewayInputs {
        gateway_config: config,
        ..GatewayInputs::new(gw)
    };
    build_alb_gateway_stack(&inputs, &cfg(), None).unwrap()
}

fn capacity(b: &GatewayBuild) -> Option<i32> {
    b.stack
        .load_balancer
        .as_ref()
        .unwrap()
        .minimum_capacity_units
}

const ALL_ON: ActiveAddons = ActiveAddons {
    wafv2: true,
    shield: true,
    provisioned_capacity: true,
};

#[test]
fn the_configurations_waf_shield_and_capacity_are_on_the_alb_stack() {
    let b = alb(&gateway("HTTP", &[], false), Some(&lbc(ALL_THREE)));
    assert_eq!(
        b.stack.addons,
        Addons {
            wafv2_acl_arn: Some(ACL.into()),
            shield_advanced_protection: Some(true),
            ..Addons::default()
        }
    );
    assert_eq!(capacity(&b), Some(150));
    assert_eq!(b.addons, ALL_ON);
    assert!(b.stack.warnings.is_empty(), "{:?}", b.stack.warnings);
}

#[test]
fn an_addon_left_out_is_removed_only_while_its_annotation_says_active() {
    // Never enabled by us: whatever someone attached by hand stays.
    let b = alb(&gateway("HTTP", &[], false), None);
    assert!(b.stack.addons.is_empty());
    assert_eq!(capacity(&b), None);
    assert_eq!(b.addons, ActiveAddons::default());
    // Recorded as on (Go's ParseBool spellings): removed — disassociate, protection off, 0 units.
    let b = alb(&gateway("HTTP", ALL_ACTIVE, false), None);
    assert_eq!(
        b.stack.addons,
        Addons {
            wafv2_acl_arn: Some(String::new()),
            shield_advanced_protection: Some(false),
            ..Addons::default()
        }
    );
    assert_eq!(capacity(&b), Some(0));
    assert_eq!(b.addons, ActiveAddons::default());
    // A value ParseBool does not read counts as false, as upstream.
    let unreadable = [
        ("gateway.k8s.aws.addon.wafv2", "yes"),
        ("gateway.k8s.aws.addon.shield", "false"),
    ];
    let b = alb(&gateway("HTTP", &unreadable, false), None);
    assert!(b.stack.addons.is_empty());
}

#[test]
fn a_gateway_being_deleted_removes_its_active_addons_whatever_its_configuration_says() {
    let b = alb(&gateway("HTTP", ALL_ACTIVE, true), Some(&lbc(ALL_THREE)));
    assert_eq!(b.stack.addons.wafv2_acl_arn.as_deref(), Some(""));
    assert_eq!(b.stack.addons.shield_advanced_protection, Some(false));
    assert_eq!(capacity(&b), Some(0));
    assert_eq!(b.addons, ActiveAddons::default());
}

#[test]
fn an_nlb_gateway_carries_only_the_capacity_and_says_so_of_the_rest() {
    let gw = gateway("TCP", &[], false);
    let config = lbc(ALL_THREE);
    let inputs = GatewayInputs {
        gateway_config: Some(&config),
        ..GatewayInputs::new(&gw)
    };
    let b = build_nlb_gateway_stack(&inputs, &cfg(), None).unwrap();
    assert!(b.stack.addons.is_empty());
    assert_eq!(capacity(&b), Some(150));
    assert_eq!(
        b.addons,
        ActiveAddons {
            provisioned_capacity: true,
            ..ActiveAddons::default()
        }
    );
    let fields: Vec<_> = b
        .stack
        .warnings
        .iter()
        .filter_map(|w| w.annotation.as_deref())
        .collect();
    assert_eq!(fields, ["wafV2", "shieldConfiguration"]);
}

#[test]
fn capacity_is_dropped_with_a_warning_when_class_and_gateway_both_configure() {
    // Upstream's merger does not carry minimumLoadBalancerCapacity into the merged config.
    let gw = gateway("HTTP", &[], false);
    let class = lbc("{minimumLoadBalancerCapacity: {capacityUnits: 150}}");
    let own = lbc("{scheme: internal}");
    let inputs = GatewayInputs {
        class_config: Some(&class),
        gateway_config: Some(&own),
        ..GatewayInputs::new(&gw)
    };
    let b = build_alb_gateway_stack(&inputs, &cfg(), None).unwrap();
    assert_eq!(capacity(&b), None);
    assert_eq!(b.addons, ActiveAddons::default());
    assert!(b.stack.warnings.iter().any(|w| w
        .message
        .contains("minimumLoadBalancerCapacity is not applied")));
}

#[test]
fn annotation_keys_of_changes_are_upstreams() {
    let none = ActiveAddons::default();
    assert_eq!(
        ALL_ON.keys_not_in(&none),
        [
            "gateway.k8s.aws.addon.provisionedcapacity",
            "gateway.k8s.aws.addon.shield",
            "gateway.k8s.aws.addon.wafv2"
        ]
    );
    assert!(ALL_ON.keys_not_in(&ALL_ON).is_empty());
    assert!(none.keys_not_in(&ALL_ON).is_empty());
}
