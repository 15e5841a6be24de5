//! Every CREATE check, its order and its message in upstream's TargetGroupBinding validator.

use super::*;
use crate::aws::AwsError;
use crate::webhook::indexes::TgbEntry;
use crate::webhook::test_support::{denial, req, World};
use serde_json::{json, Value};

pub(super) const OWN_VPC: &str = "vpc-0123456789abcdef0";

pub(super) fn tgb(uid: &str, spec: Value) -> Value {
    json!({"metadata": {"namespace": "ns", "name": "b", "uid": uid}, "spec": spec})
}

pub(super) fn validator(w: &World) -> TgbValidator {
    let bindings = TgbIndex::default();
    bindings.reset(vec![]);
    TgbValidator::new(w.cache.clone(), bindings, OWN_VPC)
}

async fn create(v: &TgbValidator, spec: Value) -> Decision {
    v.admit(&req(Operation::Create, tgb("u-new", spec), None))
        .await
}

pub(super) async fn update(v: &TgbValidator, old: Value, new: Value) -> Decision {
    v.admit(&req(
        Operation::Update,
        tgb("u-1", new),
        Some(tgb("u-1", old)),
    ))
    .await
}

/// A valid ip binding for `tg` (as the mutator would leave it).
fn full(w: &World, arn: &str) -> Value {
    json!({"targetGroupARN": arn, "targetType": "ip", "ipAddressType": "ipv4",
           "vpcID": w.vpc, "targetGroupProtocol": "HTTP", "serviceRef": {"name": "s", "port": 80}})
}

#[tokio::test]
async fn a_complete_binding_is_allowed_with_one_describe() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    let v = validator(&w);
    assert_eq!(create(&v, full(&w, &tg.arn)).await, Decision::Allow);
    assert_eq!(w.describes(), 1);
    assert_eq!(create(&v, full(&w, &tg.arn)).await, Decision::Allow);
    assert_eq!(w.describes(), 1, "second request answered by the cache");
}

#[tokio::test]
async fn required_fields_are_listed_together() {
    let w = World::new();
    let v = validator(&w);
    let d = create(&v, json!({})).await;
    assert_eq!(
        denial(&d),
        (
            "checkRequiredFields",
            "TargetGroupBinding must specify these fields: either TargetGroupARN or TargetGroupName,spec.targetType"
        )
    );
    let d = create(&v, json!({"targetGroupARN": "arn:x"})).await;
    assert_eq!(
        denial(&d).1,
        "TargetGroupBinding must specify these fields: spec.targetType"
    );
    let d = create(&v, json!({"targetGroupName": "ghost", "targetType": "ip"})).await;
    assert_eq!(
        denial(&d),
        (
            "checkRequiredFields",
            "searching TargetGroup with name ghost: TargetGroupNotFound: One or more target groups not found: 'ghost'"
        )
    );
}

#[tokio::test]
async fn a_name_is_resolved_and_the_arn_used_by_later_checks() {
    let w = World::new();
    let tg = w.tg("web", "ip", Some("ipv6"), "HTTP").await;
    let v = validator(&w);
    let d = create(&v, json!({"targetGroupName": "web", "targetType": "ip"})).await;
    assert_eq!(
        denial(&d),
        (
            "checkTargetGroupIPAddressType",
            format!("invalid IP address type ipv6 for TargetGroup {}", tg.arn).as_str()
        )
    );
    assert_eq!(w.describes(), 1, "by-name answer reused for the ARN");
}

#[tokio::test]
async fn node_selector_is_refused_for_ip_targets_only() {
    let w = World::new();
    let tg = w.tg("web", "instance", None, "HTTP").await;
    let v = validator(&w);
    let mut spec = full(&w, &tg.arn);
    spec["nodeSelector"] = json!({"matchLabels": {"a": "b"}});
    let d = create(&v, spec.clone()).await;
    assert_eq!(
        denial(&d),
        (
            "checkNodeSelector",
            "TargetGroupBinding cannot set NodeSelector when TargetType is ip"
        )
    );
    spec["targetType"] = json!("instance");
    assert_eq!(create(&v, spec).await, Decision::Allow);
}

#[tokio::test]
async fn duplicates_are_listed_go_style_unless_all_are_multi_cluster() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    let v = validator(&w);
    let entry = |uid: &str, multi| TgbEntry {
        uid: uid.into(),
        target_group_arn: tg.arn.clone(),
        multi_cluster: multi,
    };
    v.bindings.upsert("z", "one", entry("u-a", true));
    v.bindings.upsert("a", "two", entry("u-b", false));
    v.bindings.upsert("ns", "b", entry("u-1", false)); // the object itself on update
    let arn = &tg.arn;
    let want = format!("TargetGroup {arn} is already bound to following TargetGroupBindings [a/two ns/b z/one]. Please enable MultiCluster mode on all TargetGroupBindings referencing {arn} or choose a different Target Group ARN.");
    let mut spec = full(&w, arn);
    spec["multiClusterTargetGroup"] = json!(true);
    let d = create(&v, spec.clone()).await;
    assert_eq!(denial(&d), ("checkExistingTargetGroups", want.as_str()));
    assert_eq!(w.describes(), 0, "refused before any AWS call");

    v.bindings.upsert("a", "two", entry("u-b", true));
    v.bindings.upsert("ns", "b", entry("u-1", true));
    assert_eq!(create(&v, spec.clone()).await, Decision::Allow);
    spec["multiClusterTargetGroup"] = json!(false);
    let d = create(&v, spec.clone()).await;
    assert_eq!(
        denial(&d).0,
        "checkExistingTargetGroups",
        "new one not multi-cluster"
    );

    // On update the object's own entry (same UID) is not a duplicate.
    v.bindings.remove("a", "two");
    v.bindings.remove("z", "one");
    assert_eq!(update(&v, spec.clone(), spec).await, Decision::Allow);
}

#[tokio::test]
async fn unsynced_binding_index_refuses_rather_than_guess() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    let v = TgbValidator::new(w.cache.clone(), TgbIndex::default(), OWN_VPC);
    let d = create(&v, full(&w, &tg.arn)).await;
    let (cat, msg) = denial(&d);
    assert_eq!(cat, "checkExistingTargetGroups");
    assert!(msg.starts_with("failed to list TargetGroupBindings in the cluster: "));
}

#[tokio::test]
async fn ip_address_type_must_match_the_target_group() {
    let w = World::new();
    let v4 = w.tg("v4", "ip", None, "HTTP").await;
    let v6 = w.tg("v6", "ip", Some("ipv6"), "HTTP").await;
    let odd = w.tg("odd", "ip", Some("dualstack"), "HTTP").await;
    let v = validator(&w);
    let mut spec = full(&w, &v4.arn);
    spec["ipAddressType"] = json!("ipv6");
    let d = create(&v, spec.clone()).await;
    let want = format!("invalid IP address type ipv4 for TargetGroup {}", v4.arn);
    assert_eq!(denial(&d), ("checkTargetGroupIPAddressType", want.as_str()));
    spec.as_object_mut().unwrap().remove("ipAddressType");
    assert_eq!(create(&v, spec).await, Decision::Allow, "nil means ipv4");
    let mut spec = full(&w, &v6.arn);
    spec.as_object_mut().unwrap().remove("ipAddressType");
    let want = format!("invalid IP address type ipv6 for TargetGroup {}", v6.arn);
    assert_eq!(denial(&create(&v, spec).await).1, want);
    let d = create(&v, full(&w, &odd.arn)).await;
    assert_eq!(
        denial(&d).1,
        "unable to get target group IP address type: unsupported IPAddressType: dualstack"
    );
    let ghost =
        "arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/g/0000000000000000";
    let d = create(&v, full(&w, ghost)).await;
    assert_eq!(
        denial(&d),
        ("checkTargetGroupIPAddressType", format!("unable to get target group IP address type: TargetGroupNotFound: Target groups '{ghost}' not found").as_str())
    );
}

#[tokio::test]
async fn vpc_id_format_and_match() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    let v = validator(&w);
    let fmt_err = |v: &str| {
        format!("ValidationError: vpcID {v} failed to satisfy constraint: VPC Id must begin with 'vpc-' followed by 8, 17 or 32 lowercase letters (a-f) or numbers.")
    };
    for bad in [
        "vpc-123",
        "vpc-0123456789ABCDEF0",
        "subnet-12345678",
        "vpc-1234567g",
        " vpc-12345678",
        "vpc-0123456789abcdef",
    ] {
        let mut spec = full(&w, &tg.arn);
        spec["vpcID"] = json!(bad);
        let d = create(&v, spec).await;
        assert_eq!(
            denial(&d),
            ("checkTargetGroupVpcID", fmt_err(bad).as_str()),
            "{bad}"
        );
    }
    let arn = &tg.arn;
    for other in [
        "vpc-1234abcd",
        "vpc-0123456789abcdef0",
        &format!("vpc-{}", "a".repeat(32)),
    ] {
        let mut spec = full(&w, arn);
        spec["vpcID"] = json!(other);
        let want = format!("invalid VpcID {other} doesnt match VpcID from TargetGroup {arn}");
        assert_eq!(
            denial(&create(&v, spec).await),
            ("checkTargetGroupVpcID", want.as_str())
        );
    }
    let mut spec = full(&w, arn);
    spec["vpcID"] = json!("");
    assert_eq!(
        create(&v, spec).await,
        Decision::Allow,
        "empty vpcID skips the check"
    );
}

#[tokio::test]
async fn protocol_checks() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    let quic = w.tg("q", "instance", None, "QUIC").await;
    let v = validator(&w);
    let mut spec = full(&w, &tg.arn);
    spec["targetGroupProtocol"] = json!("HTTPS");
    let want = format!(
        "TargetGroup {} protocol differs (got HTTPS, expected HTTP)",
        tg.arn
    );
    assert_eq!(
        denial(&create(&v, spec.clone()).await),
        ("checkTargetGroupProtocol", want.as_str())
    );
    spec.as_object_mut().unwrap().remove("targetGroupProtocol");
    assert_eq!(
        create(&v, spec).await,
        Decision::Allow,
        "legacy bindings without protocol"
    );
    let mut spec = full(&w, &quic.arn);
    spec["targetType"] = json!("instance");
    spec["targetGroupProtocol"] = json!("QUIC");
    let d = create(&v, spec.clone()).await;
    assert_eq!(
        denial(&d),
        (
            "checkTargetGroupProtocol",
            "QUIC protocol is not supported for Instance target types."
        )
    );
    spec["targetType"] = json!("ip");
    assert_eq!(create(&v, spec).await, Decision::Allow);
}

#[tokio::test]
async fn aws_failures_are_wrapped_and_not_cached() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    let v = validator(&w);
    // The IP type check is always the first to ask AWS (the protocol check's own wrapping is
    // unreachable because the per-request answer is shared).
    let spec = json!({"targetGroupARN": tg.arn, "targetType": "ip", "targetGroupProtocol": "HTTP"});
    w.aws
        .fail_nth_call(1, AwsError::from_code("Throttling", "slow down", Some(400)));
    let d = create(&v, spec.clone()).await;
    assert_eq!(
        denial(&d).1,
        "unable to get target group IP address type: Throttling: slow down"
    );
    assert_eq!(
        create(&v, spec).await,
        Decision::Allow,
        "failures are not cached"
    );
}

#[tokio::test]
async fn cross_account_bindings_are_checked_in_the_roles_account() {
    use crate::webhook::test_support::{CROSS_EXTERNAL_ID, CROSS_ROLE};
    let w = World::new();
    let v = validator(&w);
    let theirs = w.other_tg("theirs").await;
    let spec = json!({"targetGroupARN": theirs.arn, "targetType": "ip", "ipAddressType": "ipv4",
                      "vpcID": w.other_vpc, "targetGroupProtocol": "HTTP",
                      "iamRoleArnToAssume": CROSS_ROLE, "assumeRoleExternalId": CROSS_EXTERNAL_ID});
    assert_eq!(create(&v, spec.clone()).await, Decision::Allow);
    assert_eq!(w.describes(), 0, "never asks our own account");
    assert_eq!(w.other.count("DescribeTargetGroups"), 1);
    assert_eq!(
        w.roles.assumed(),
        vec![(CROSS_ROLE.to_string(), CROSS_EXTERNAL_ID.to_string())]
    );

    // By name, also in their account.
    let mut by_name = spec.clone();
    by_name["targetGroupARN"] = json!("");
    by_name["targetGroupName"] = json!("theirs");
    assert_eq!(create(&v, by_name).await, Decision::Allow);

    // Their VPC is checked against their group.
    let mut wrong_vpc = spec.clone();
    wrong_vpc["vpcID"] = json!(w.vpc);
    assert_eq!(
        denial(&create(&v, wrong_vpc).await).0,
        "checkTargetGroupVpcID"
    );

    // A wrong external id is STS's refusal, at the first AWS check.
    let mut wrong_id = spec.clone();
    wrong_id["assumeRoleExternalId"] = json!("nope");
    let decision = create(&v, wrong_id).await;
    let (category, message) = denial(&decision);
    assert_eq!(category, "checkTargetGroupIPAddressType");
    assert!(message.contains("sts:AssumeRole"), "{message}");

    // Upstream's instance rule.
    let mut instance = spec.clone();
    instance["targetType"] = json!("instance");
    let decision = create(&v, instance.clone()).await;
    let (category, message) = denial(&decision);
    assert_eq!(
        (category, message),
        ("checkAssumeRoleConfig", ASSUME_ROLE_INSTANCE)
    );
    assert_eq!(
        update(&v, spec.clone(), spec.clone()).await,
        Decision::Allow
    );
    assert_eq!(
        denial(&update(&v, instance.clone(), instance).await).1,
        ASSUME_ROLE_INSTANCE
    );
}

#[tokio::test]
async fn delete_is_allowed_and_garbage_is_an_error() {
    let w = World::new();
    let v = validator(&w);
    let d = v.admit(&req(Operation::Delete, json!({}), None)).await;
    assert_eq!(d, Decision::Allow);
    let d = v
        .admit(&req(Operation::Create, json!({"spec": []}), None))
        .await;
    assert!(matches!(d, Decision::Errored { .. }));
    let d = v
        .admit(&req(Operation::Update, tgb("u", json!({})), None))
        .await;
    assert!(
        matches!(d, Decision::Errored { .. }),
        "update without oldObject"
    );
}
