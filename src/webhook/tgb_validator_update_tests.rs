//! UPDATE: upstream's immutable-field rules and the order of the update checks.

use super::tests::{update, validator, OWN_VPC};
use super::*;
use crate::webhook::indexes::TgbEntry;
use crate::webhook::test_support::{denial, World};
use serde_json::{json, Value};

#[tokio::test]
async fn immutable_fields_on_update() {
    let w = World::new();
    let v = validator(&w);
    let base = json!({"targetGroupARN": "arn:1", "targetType": "ip", "ipAddressType": "ipv4", "vpcID": "vpc-12345678"});
    let with = |changes: Value| {
        let mut s = base.clone();
        for (k, val) in changes.as_object().unwrap() {
            if val.is_null() {
                s.as_object_mut().unwrap().remove(k);
            } else {
                s[k] = val.clone();
            }
        }
        s
    };
    let msg = |fields: &str| {
        format!("TargetGroupBinding update may not change these immutable fields: {fields}")
    };
    let cases = [
        (
            base.clone(),
            with(json!({"targetGroupARN": "arn:2"})),
            Some("spec.targetGroupARN"),
        ),
        (
            base.clone(),
            with(json!({"targetType": "instance"})),
            Some("spec.targetType"),
        ),
        (
            with(json!({"ipAddressType": null})),
            with(json!({"ipAddressType": "ipv4"})),
            None,
        ),
        (
            with(json!({"ipAddressType": null})),
            with(json!({"ipAddressType": "ipv6"})),
            Some("spec.ipAddressType"),
        ),
        (
            base.clone(),
            with(json!({"ipAddressType": null})),
            Some("spec.ipAddressType"),
        ),
        (
            base.clone(),
            with(json!({"ipAddressType": "ipv6"})),
            Some("spec.ipAddressType"),
        ),
        (
            base.clone(),
            with(json!({"vpcID": "vpc-87654321"})),
            Some("spec.vpcID"),
        ),
        (base.clone(), with(json!({"vpcID": ""})), Some("spec.vpcID")),
        (
            with(json!({"vpcID": ""})),
            with(json!({"vpcID": OWN_VPC})),
            None,
        ),
        (
            with(json!({"vpcID": ""})),
            with(json!({"vpcID": "vpc-87654321"})),
            Some("spec.vpcID"),
        ),
        (
            base.clone(),
            with(
                json!({"targetGroupARN": "arn:2", "targetType": "instance", "ipAddressType": "ipv6", "vpcID": ""}),
            ),
            Some("spec.targetGroupARN,spec.targetType,spec.ipAddressType,spec.vpcID"),
        ),
    ];
    for (old, new, want) in cases {
        let d = update(&v, old.clone(), new.clone()).await;
        match want {
            None => assert_eq!(d, Decision::Allow, "{old} -> {new}"),
            Some(f) => assert_eq!(
                denial(&d),
                ("checkImmutableFields", msg(f).as_str()),
                "{old} -> {new}"
            ),
        }
    }
    // targetType removed: required fields come first.
    let d = update(&v, base.clone(), with(json!({"targetType": null}))).await;
    assert_eq!(denial(&d).0, "checkRequiredFields");
    assert_eq!(w.describes(), 0, "no AWS checks on update");
}

#[tokio::test]
async fn update_order_immutable_before_node_selector_before_duplicates() {
    let w = World::new();
    let v = validator(&w);
    v.bindings.upsert(
        "other",
        "x",
        TgbEntry {
            uid: "u-x".into(),
            target_group_arn: "arn:2".into(),
            multi_cluster: false,
        },
    );
    let old = json!({"targetGroupARN": "arn:1", "targetType": "ip"});
    let new = json!({"targetGroupARN": "arn:2", "targetType": "ip", "nodeSelector": {}});
    assert_eq!(
        denial(&update(&v, old.clone(), new.clone()).await).0,
        "checkImmutableFields"
    );
    let new = json!({"targetGroupARN": "arn:1", "targetType": "ip", "nodeSelector": {}});
    assert_eq!(
        denial(&update(&v, old.clone(), new).await).0,
        "checkNodeSelector"
    );
    v.bindings.upsert(
        "other",
        "x",
        TgbEntry {
            uid: "u-x".into(),
            target_group_arn: "arn:1".into(),
            multi_cluster: false,
        },
    );
    let d = update(&v, old.clone(), old).await;
    assert!(denial(&d).1.contains("[other/x]"));
}
