//! Field-error texts and aggregation of the IngressClassParams validator.

use super::*;
use crate::webhook::test_support::{denial, req};
use serde_json::json;

async fn admit(spec: Value) -> Decision {
    let obj = json!({"apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "IngressClassParams",
                     "metadata": {"name": "p"}, "spec": spec});
    IcpValidator.admit(&req(Operation::Create, obj, None)).await
}

async fn message(spec: Value) -> String {
    denial(&admit(spec).await).1.to_string()
}

#[tokio::test]
async fn valid_params_are_allowed() {
    for spec in [
        json!({}),
        json!({"inboundCIDRs": ["10.0.0.0/8", "192.168.1.1/32", "2001:db8::/32", "0.0.0.0/0"]}),
        json!({"subnets": {"ids": ["subnet-1", "subnet-2"]}}),
        json!({"subnets": {"tags": {"k": ["a", "b"], "l": ["a"]}}}),
        json!({"subnets": null, "futureField": 1}),
    ] {
        assert_eq!(admit(spec.clone()).await, Decision::Allow, "{spec}");
    }
}

#[tokio::test]
async fn cidr_errors_with_hints() {
    let cases = [
        (
            "192.168.0.1",
            r#"spec.inboundCIDRs[0]: Invalid value: "192.168.0.1": Could not be parsed as a CIDR (did you mean "192.168.0.1/32")"#,
        ),
        (
            "2001:db8::1",
            r#"spec.inboundCIDRs[0]: Invalid value: "2001:db8::1": Could not be parsed as a CIDR (did you mean "2001:db8::1/64")"#,
        ),
        (
            "10.0.0.1/8",
            r#"spec.inboundCIDRs[0]: Invalid value: "10.0.0.1/8": Network contains bits outside prefix (did you mean "10.0.0.0/8")"#,
        ),
        (
            "2001:db8::1/32",
            r#"spec.inboundCIDRs[0]: Invalid value: "2001:db8::1/32": Network contains bits outside prefix (did you mean "2001:db8::/32")"#,
        ),
        (
            "10.0.0.0/33",
            r#"spec.inboundCIDRs[0]: Invalid value: "10.0.0.0/33": Could not be parsed as a CIDR"#,
        ),
        (
            "garbage",
            r#"spec.inboundCIDRs[0]: Invalid value: "garbage": Could not be parsed as a CIDR"#,
        ),
        (
            "10.0.0.0/",
            r#"spec.inboundCIDRs[0]: Invalid value: "10.0.0.0/": Could not be parsed as a CIDR"#,
        ),
        (
            "10.0.0.0/+8",
            r#"spec.inboundCIDRs[0]: Invalid value: "10.0.0.0/+8": Could not be parsed as a CIDR"#,
        ),
        (
            "010.0.0.0/8",
            r#"spec.inboundCIDRs[0]: Invalid value: "010.0.0.0/8": Could not be parsed as a CIDR"#,
        ),
        (
            "fe80::1%eth0/64",
            r#"spec.inboundCIDRs[0]: Invalid value: "fe80::1%eth0/64": Could not be parsed as a CIDR"#,
        ),
        (
            "a\"b\n",
            r#"spec.inboundCIDRs[0]: Invalid value: "a\"b\n": Could not be parsed as a CIDR"#,
        ),
    ];
    for (cidr, want) in cases {
        let d = admit(json!({"inboundCIDRs": [cidr]})).await;
        assert_eq!(denial(&d), ("checkInboundCIDRs", want), "{cidr}");
    }
}

#[tokio::test]
async fn several_errors_are_bracketed_and_joined() {
    let msg = message(json!({"inboundCIDRs": ["10.0.0.0/8", "1.2.3.4", "1.2.3.4"],
                             "subnets": {"ids": ["subnet-1", "subnet-2", "subnet-1"]}}))
    .await;
    assert_eq!(
        msg,
        concat!(
            r#"[spec.inboundCIDRs[1]: Invalid value: "1.2.3.4": Could not be parsed as a CIDR (did you mean "1.2.3.4/32")"#,
            r#", spec.inboundCIDRs[2]: Invalid value: "1.2.3.4": Could not be parsed as a CIDR (did you mean "1.2.3.4/32")"#,
            r#", spec.subnets.ids[2]: Duplicate value: "subnet-1"]"#
        )
    );
    let d = admit(json!({"subnets": {"ids": ["s", "s"]}, "inboundCIDRs": ["x"]})).await;
    assert_eq!(
        denial(&d).0,
        "checkInboundCIDRs",
        "first failing check labels the metric"
    );
}

#[tokio::test]
async fn subnet_selector_errors() {
    let cases = [
        (
            json!({}),
            "spec.subnets: Required value: must have either `ids` or `tags`",
        ),
        (
            json!({"ids": null, "tags": null}),
            "spec.subnets: Required value: must have either `ids` or `tags`",
        ),
        (
            json!({"ids": ["subnet-1"], "tags": {"k": ["v"]}}),
            "spec.subnets.tags: Forbidden: may not have both `ids` and `tags` set",
        ),
        (
            json!({"ids": ["subnet-1", "subnet-2", "subnet-1"]}),
            r#"spec.subnets.ids[2]: Duplicate value: "subnet-1""#,
        ),
        (
            json!({"tags": {}}),
            "spec.subnets.tags: Required value: must have at least one tag key",
        ),
        (
            json!({"tags": {"Other": ["other0", "other1", "other1"]}}),
            r#"spec.subnets.tags[Other][2]: Duplicate value: "other1""#,
        ),
    ];
    for (subnets, want) in cases {
        let d = admit(json!({"subnets": subnets})).await;
        assert_eq!(denial(&d), ("checkSubnetSelectors", want), "{subnets}");
    }
    // Forbidden stops the subnet checks (no duplicate reported alongside).
    let msg = message(json!({"subnets": {"ids": ["a", "a"], "tags": {}}})).await;
    assert_eq!(
        msg,
        "spec.subnets.tags: Forbidden: may not have both `ids` and `tags` set"
    );
    let msg = message(json!({"subnets": {"tags": {"b": ["x", "x"], "a": ["y", "y", "y"]}}})).await;
    assert_eq!(
        msg,
        r#"[spec.subnets.tags[a][1]: Duplicate value: "y", spec.subnets.tags[a][2]: Duplicate value: "y", spec.subnets.tags[b][1]: Duplicate value: "x"]"#
    );
}

#[test]
fn aggregate_dedups_and_quotes_like_go() {
    let e = |v: &str| FieldError::Duplicate {
        field: "f".into(),
        value: v.into(),
    };
    assert_eq!(aggregate(&[e("a"), e("a")]), r#"f: Duplicate value: "a""#);
    assert_eq!(
        aggregate(&[e("a"), e("b"), e("a")]),
        r#"[f: Duplicate value: "a", f: Duplicate value: "b"]"#
    );
    assert_eq!(go_quote("\u{0}\u{7f}é\u{85}"), "\"\\x00\\x7fé\\u0085\"");
}

#[tokio::test]
async fn update_is_checked_delete_is_not_and_garbage_errors() {
    let bad = json!({"spec": {"inboundCIDRs": ["x"]}});
    let d = IcpValidator
        .admit(&req(Operation::Update, bad.clone(), Some(bad.clone())))
        .await;
    assert_eq!(denial(&d).0, "checkInboundCIDRs");
    assert_eq!(
        IcpValidator.admit(&req(Operation::Delete, bad, None)).await,
        Decision::Allow
    );
    for garbage in [
        json!({"spec": {"inboundCIDRs": "x"}}),
        json!({"spec": {"subnets": {"ids": [1]}}}),
        json!({"spec": 3}),
    ] {
        let d = IcpValidator
            .admit(&req(Operation::Create, garbage.clone(), None))
            .await;
        assert!(matches!(d, Decision::Errored { .. }), "{garbage}");
    }
}
