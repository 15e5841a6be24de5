//! Every defaulting step and message of upstream's TargetGroupBinding mutator.

use super::*;
use crate::aws::AwsError;
use crate::webhook::test_support::{apply, denial, req, World};
use serde_json::json;

fn tgb(spec: Value) -> Value {
    json!({"apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
           "metadata": {"namespace": "ns", "name": "b"}, "spec": spec})
}

async fn create(w: &World, obj: &Value) -> Decision {
    TgbMutator::new(w.cache.clone())
        .admit(&req(Operation::Create, obj.clone(), None))
        .await
}

#[tokio::test]
async fn defaults_everything_from_one_describe_and_keeps_unknown_fields() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    let obj = tgb(
        json!({"targetGroupARN": tg.arn, "serviceRef": {"name": "s", "port": 80},
                         "futureField": {"keep": [1, 2]}}),
    );
    let out = apply(&obj, &create(&w, &obj).await);
    let spec = &out["spec"];
    assert_eq!(spec["targetType"], "ip");
    assert_eq!(spec["ipAddressType"], "ipv4");
    assert_eq!(spec["vpcID"], w.vpc.as_str());
    assert_eq!(spec["targetGroupProtocol"], "HTTP");
    assert_eq!(spec["futureField"], json!({"keep": [1, 2]}));
    assert_eq!(spec["serviceRef"], json!({"name": "s", "port": 80}));
    assert_eq!(
        w.describes(),
        1,
        "one memoised DescribeTargetGroups per request"
    );
}

#[tokio::test]
async fn resolves_the_arn_from_the_name_and_keeps_the_name() {
    let w = World::new();
    let tg = w.tg("by-name", "instance", Some("ipv6"), "TCP").await;
    let obj = tgb(json!({"targetGroupName": "by-name", "targetGroupARN": ""}));
    let out = apply(&obj, &create(&w, &obj).await);
    assert_eq!(out["spec"]["targetGroupARN"], tg.arn.as_str());
    assert_eq!(out["spec"]["targetGroupName"], "by-name");
    assert_eq!(out["spec"]["targetType"], "instance");
    assert_eq!(out["spec"]["ipAddressType"], "ipv6");
    assert_eq!(out["spec"]["targetGroupProtocol"], "TCP");
    assert_eq!(
        w.describes(),
        1,
        "the by-name answer serves the ARN lookup too"
    );
}

#[tokio::test]
async fn set_fields_are_never_overwritten_and_all_set_means_no_aws_call() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    let full = tgb(
        json!({"targetGroupARN": tg.arn, "targetType": "instance", "ipAddressType": "ipv6",
                          "vpcID": "vpc-12345678", "targetGroupProtocol": "TCP"}),
    );
    assert_eq!(create(&w, &full).await, Decision::Patch(vec![]));
    assert_eq!(w.describes(), 0);
    let partial =
        tgb(json!({"targetGroupARN": tg.arn, "targetType": "instance", "vpcID": "vpc-12345678"}));
    let out = apply(&partial, &create(&w, &partial).await);
    assert_eq!(out["spec"]["targetType"], "instance");
    assert_eq!(out["spec"]["vpcID"], "vpc-12345678");
    assert_eq!(out["spec"]["ipAddressType"], "ipv4");
}

#[tokio::test]
async fn null_fields_are_replaced_not_added_twice() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    let obj = tgb(json!({"targetGroupARN": tg.arn, "targetType": null, "vpcID": ""}));
    let d = create(&w, &obj).await;
    let Decision::Patch(ops) = &d else {
        panic!("{d:?}")
    };
    let kinds: Vec<_> = ops
        .iter()
        .map(|op| match op {
            PatchOperation::Add(a) => format!("add {}", a.path),
            PatchOperation::Replace(r) => format!("replace {}", r.path),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "replace /spec/targetType",
            "add /spec/ipAddressType",
            "replace /spec/vpcID",
            "add /spec/targetGroupProtocol"
        ]
    );
    assert_eq!(apply(&obj, &d)["spec"]["targetType"], "ip");
}

#[tokio::test]
async fn missing_name_and_arn_is_refused_before_aws() {
    let w = World::new();
    for spec in [
        json!({}),
        json!({"targetGroupARN": "", "targetGroupName": ""}),
    ] {
        let d = create(&w, &tgb(spec)).await;
        assert_eq!(
            denial(&d),
            (
                "checkTargetGroupArnOrName",
                "must provide either TargetGroupARN or TargetGroupName"
            )
        );
    }
    assert_eq!(w.describes(), 0);
}

#[tokio::test]
async fn unknown_name_is_refused_with_the_aws_error() {
    let w = World::new();
    let d = create(&w, &tgb(json!({"targetGroupName": "ghost"}))).await;
    assert_eq!(
        denial(&d),
        (
            "getArnFromNameIfNeeded",
            "TargetGroupNotFound: One or more target groups not found: 'ghost'"
        )
    );
}

#[tokio::test]
async fn unsupported_target_types_are_refused() {
    let w = World::new();
    let lambda = w.tg("fn", "lambda", None, "").await;
    let d = create(&w, &tgb(json!({"targetGroupARN": lambda.arn}))).await;
    assert_eq!(
        denial(&d),
        ("defaultingTargetType", "unsupported TargetType: lambda")
    );
    let alb = w.tg("chain", "alb", None, "TCP").await;
    let d = create(&w, &tgb(json!({"targetGroupARN": alb.arn}))).await;
    assert_eq!(denial(&d).1, "unsupported TargetType: alb");
}

#[tokio::test]
async fn unsupported_ip_address_type_is_wrapped() {
    let w = World::new();
    let tg = w.tg("odd", "ip", Some("dualstack"), "HTTP").await;
    let d = create(&w, &tgb(json!({"targetGroupARN": tg.arn}))).await;
    assert_eq!(
        denial(&d),
        (
            "defaultingIPAddressType",
            "unable to get target group IP address type: unsupported IPAddressType: dualstack"
        )
    );
}

#[tokio::test]
async fn aws_errors_carry_the_prefix_of_the_first_step_needing_aws() {
    let w = World::new();
    let ghost =
        "arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/ghost/0123456789abcdef";
    let cases = [
        (
            json!({}),
            "defaultingTargetType",
            "couldn't determine TargetType: ",
        ),
        (
            json!({"targetType": "ip"}),
            "defaultingIPAddressType",
            "unable to get target group IP address type: ",
        ),
        (
            json!({"targetType": "ip", "ipAddressType": "ipv4"}),
            "defaultingVpcID",
            "unable to get target group VpcID: ",
        ),
        (
            json!({"targetType": "ip", "ipAddressType": "ipv4", "vpcID": "vpc-12345678"}),
            "defaultingTargetGroupProtocol",
            "couldn't determine TargetGroup protocol: ",
        ),
    ];
    for (mut spec, category, prefix) in cases {
        spec["targetGroupARN"] = json!(ghost);
        let d = create(&w, &tgb(spec)).await;
        let (cat, msg) = denial(&d);
        assert_eq!(cat, category);
        assert_eq!(
            msg,
            format!("{prefix}TargetGroupNotFound: Target groups '{ghost}' not found")
        );
    }
    // A throttled call is wrapped the same way and not remembered.
    let tg = w.tg("web", "ip", None, "HTTP").await;
    w.aws.fail_nth_call(
        1,
        AwsError::from_code("AccessDenied", "no perms", Some(403)),
    );
    let d = create(&w, &tgb(json!({"targetGroupARN": tg.arn}))).await;
    assert_eq!(
        denial(&d).1,
        "couldn't determine TargetType: AccessDenied: no perms"
    );
    assert!(matches!(
        create(&w, &tgb(json!({"targetGroupARN": tg.arn}))).await,
        Decision::Patch(_)
    ));
}

#[tokio::test]
async fn cache_hit_across_requests_means_no_second_describe() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    for _ in 0..5 {
        assert!(matches!(
            create(&w, &tgb(json!({"targetGroupARN": tg.arn}))).await,
            Decision::Patch(ops) if ops.len() == 4
        ));
    }
    assert_eq!(w.describes(), 1);
}

#[tokio::test]
async fn cross_account_bindings_are_defaulted_from_the_roles_account() {
    use crate::webhook::test_support::{CROSS_EXTERNAL_ID, CROSS_ROLE};
    let w = World::new();
    let theirs = w.other_tg("theirs").await;
    let obj = tgb(
        json!({"targetGroupName": "theirs", "iamRoleArnToAssume": CROSS_ROLE,
                         "assumeRoleExternalId": CROSS_EXTERNAL_ID}),
    );
    let out = apply(&obj, &create(&w, &obj).await);
    let spec = &out["spec"];
    assert_eq!(spec["targetGroupARN"], theirs.arn.as_str());
    assert_eq!(spec["targetType"], "ip");
    assert_eq!(spec["vpcID"], w.other_vpc.as_str());
    assert_eq!(spec["targetGroupProtocol"], "HTTP");
    assert_eq!(w.describes(), 0, "never asks our own account");

    let wrong = tgb(json!({"targetGroupName": "theirs", "iamRoleArnToAssume": CROSS_ROLE}));
    let decision = create(&w, &wrong).await;
    let (category, message) = denial(&decision);
    assert_eq!(category, "getArnFromNameIfNeeded");
    assert!(message.contains("sts:AssumeRole"), "{message}");
}

#[tokio::test]
async fn update_and_other_operations_are_unchanged() {
    let w = World::new();
    let obj = tgb(json!({}));
    for op in [Operation::Update, Operation::Delete] {
        let d = TgbMutator::new(w.cache.clone())
            .admit(&req(op, obj.clone(), Some(obj.clone())))
            .await;
        assert_eq!(d, Decision::Patch(vec![]));
    }
    let d = create(&w, &json!({"spec": {"targetType": 7}})).await;
    assert!(matches!(d, Decision::Errored { .. }), "{d:?}");
}
