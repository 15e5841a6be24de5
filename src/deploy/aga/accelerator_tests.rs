//! Upstream's accelerator and tagging tables that call AWS, replayed on the fake
//! (accelerator_synthesizer_test.go, accelerator_manager_test.go's `disableAccelerator`,
//! tagging_manager_test.go).
//!
//! accelerator_synthesizer_test.go: describeAcceleratorByARN (5 cases; "nil tag values" cannot
//! arise: the Rust SDK's tag has a key and a value), handleCreateAccelerator (3),
//! handleUpdateAccelerator (3). accelerator_manager_test.go: disableAccelerator (6; "nil
//! enabled field" is the SDK conversion's, in sdk::global_accelerator::convert).
//! tagging_manager_test.go: ReconcileTags (2), describeResourceTagsFromRGT (3) and
//! describeResourceTags (3, its tag-cache case not: no cache), replayed on
//! ListTagsForResource, which upstream's synthesizer uses to read the tags it reconciles.

use std::sync::Arc;

use super::*;
use crate::aws::fake::{FakeAws, GaDeployment};
use crate::aws::GlobalAccelerator;
use crate::deploy::aga::test_support::{self as ts};
use crate::deploy::aga::AgaOptions;
use crate::model::aga::AgaIpAddressType;

fn boom() -> AwsError {
    AwsError::from_code(
        "InternalServiceErrorException",
        "unexpected error",
        Some(500),
    )
}

fn fake() -> Arc<FakeAws> {
    Arc::new(FakeAws::new())
}

#[tokio::test]
async fn describe_by_arn_reads_the_accelerator_and_its_tags() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let arn = ts::accelerator(ga).await;
    fake.finish_ga_deployments();
    let opts = ts::options();
    let ctx = ts::ctx(ga, &opts);

    // "Successfully describe accelerator with tags".
    let found = describe_with_tags(&ctx, &arn).await.unwrap().unwrap();
    assert_eq!(found.acc.arn, arn);
    assert_eq!(found.acc.name, "k8s_ns_ga");
    assert_eq!(found.acc.status, "DEPLOYED");
    assert_eq!(found.tags, ts::tracking_tags());
    assert_eq!(fake.count("DescribeAccelerator"), 1);
    assert_eq!(fake.count("ListTagsForResource"), 1);

    // "Error describing accelerator".
    fake.fail_nth_call(1, boom());
    assert!(describe_with_tags(&ctx, &arn).await.is_err());
    // "Error listing tags".
    fake.fail_nth_call(2, boom());
    assert!(describe_with_tags(&ctx, &arn).await.is_err());

    // "Successfully describe accelerator with no tags".
    let bare = Accelerator {
        tags: Tags::new(),
        crd_uid: "other".into(),
        ..ts::model_accelerator("test-accelerator-no-tags")
    };
    let bare = ga.create_accelerator(&bare).await.unwrap().arn;
    let found = describe_with_tags(&ctx, &bare).await.unwrap().unwrap();
    assert_eq!(found.acc.name, "test-accelerator-no-tags");
    assert!(found.tags.is_empty());

    // Ours: gone is `None`, not an error.
    let gone = format!("{}-gone", arn);
    assert!(describe_with_tags(&ctx, &gone).await.unwrap().is_none());
}

#[tokio::test]
async fn create_answers_the_new_accelerator() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let opts = ts::options();
    let mut ctx = ts::ctx(ga, &opts);

    // "Successful accelerator creation": the status comes from the create's answer.
    let mut want = ts::model_accelerator("new-accelerator");
    want.tags.insert("Environment".into(), "test".into());
    let acc = sync(&mut ctx, &want, None).await.unwrap();
    assert!(acc
        .arn
        .starts_with("arn:aws:globalaccelerator::123456789012:accelerator/"));
    assert!(acc.dns_name.ends_with(".awsglobalaccelerator.com"));
    assert_eq!(acc.status, "IN_PROGRESS");
    assert_eq!(acc.ip_sets.len(), 1);
    assert_eq!(acc.ip_sets[0].ip_address_family, "IPv4");
    assert_eq!(acc.ip_sets[0].ip_addresses.len(), 2);
    assert_eq!(fake.ga_accelerators()[0].1["Environment"], "test");
    assert_eq!(ctx.writes, 1);

    // "Creation error case".
    fake.fail_nth_call(1, boom());
    let err = sync(&mut ctx, &ts::model_accelerator("error-accelerator"), None)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("create accelerator error-accelerator"),
        "{err}"
    );

    // "Create dual stack accelerator".
    let dual = Accelerator {
        ip_address_type: AgaIpAddressType::DualStack,
        crd_uid: "dual".into(),
        ..ts::model_accelerator("dual-stack-accelerator")
    };
    let acc = sync(&mut ctx, &dual, None).await.unwrap();
    assert_eq!(acc.ip_address_type, "DUAL_STACK");
    assert!(acc
        .dual_stack_dns_name
        .as_deref()
        .is_some_and(|d| d.ends_with(".dualstack.awsglobalaccelerator.com")));
    let families: Vec<&str> = acc
        .ip_sets
        .iter()
        .map(|s| s.ip_address_family.as_str())
        .collect();
    assert_eq!(families, ["IPv4", "IPv6"]);
}

#[tokio::test]
async fn update_brings_the_accelerator_to_the_model() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let opts = ts::options();

    // "Successful accelerator update": a new name and enabled again.
    let original = Accelerator {
        enabled: Some(false),
        ..ts::model_accelerator("original-accelerator-name")
    };
    let arn = ga.create_accelerator(&original).await.unwrap().arn;
    fake.finish_ga_deployments();
    let mut ctx = ts::ctx(ga, &opts);
    let found = describe_with_tags(&ctx, &arn).await.unwrap().unwrap();
    let want = ts::model_accelerator("updated-accelerator-name");
    let acc = sync(&mut ctx, &want, Some(found)).await.unwrap();
    assert_eq!(acc.name, "updated-accelerator-name");
    assert!(acc.enabled);
    assert_eq!(acc.status, "IN_PROGRESS", "a change propagates");
    assert_eq!(fake.count("UpdateAccelerator"), 1);

    // "Update error case".
    let found = describe_with_tags(&ctx, &arn).await.unwrap().unwrap();
    fake.fail_nth_call(1, boom());
    let want = ts::model_accelerator("another-name");
    assert!(sync(&mut ctx, &want, Some(found)).await.is_err());

    // "Update with IP address type change".
    let found = describe_with_tags(&ctx, &arn).await.unwrap().unwrap();
    let want = Accelerator {
        ip_address_type: AgaIpAddressType::DualStack,
        ..ts::model_accelerator("updated-accelerator-name")
    };
    let acc = sync(&mut ctx, &want, Some(found)).await.unwrap();
    assert_eq!(acc.ip_address_type, "DUAL_STACK");
    assert!(acc.dual_stack_dns_name.is_some());

    // Unchanged: no write at all.
    let found = describe_with_tags(&ctx, &arn).await.unwrap().unwrap();
    fake.clear_calls();
    sync(&mut ctx, &want, Some(found)).await.unwrap();
    assert!(fake.write_calls().is_empty(), "{:?}", fake.write_calls());
}

/// accelerator_manager_test.go's `disableAccelerator`, as the first step of a deletion.
#[tokio::test]
async fn deletion_disables_first() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let opts = ts::options();
    let mut ctx = ts::ctx(ga, &opts);
    let arn = ts::accelerator(ga).await;
    fake.finish_ga_deployments();
    let found = describe_with_tags(&ctx, &arn).await.unwrap().unwrap();

    // "Accelerator enabled, successfully disabled": UpdateAccelerator, then wait.
    fake.clear_calls();
    let step = delete(&mut ctx, &found).await.unwrap();
    assert!(matches!(step, AgaDeletion::InProgress { .. }), "{step:?}");
    assert_eq!(fake.write_calls().len(), 1);
    assert!(!fake.ga_accelerators()[0].0.enabled);

    // "Error when updating/disabling accelerator".
    let enabled = Found {
        acc: DescribedAccelerator {
            enabled: true,
            ..found.acc.clone()
        },
        tags: found.tags.clone(),
    };
    fake.fail_nth_call(1, boom());
    assert!(delete(&mut ctx, &enabled).await.is_err());

    // "Accelerator already disabled": no UpdateAccelerator; once DEPLOYED, deleted.
    fake.finish_ga_deployments();
    let found = describe_with_tags(&ctx, &arn).await.unwrap().unwrap();
    fake.clear_calls();
    assert_eq!(
        delete(&mut ctx, &found).await.unwrap(),
        AgaDeletion::Deleted
    );
    assert_eq!(fake.count("UpdateAccelerator"), 0);
    assert!(fake.ga_accelerators().is_empty());

    // "Accelerator not found (already deleted)": the disable finds nothing, done.
    assert_eq!(
        delete(&mut ctx, &enabled).await.unwrap(),
        AgaDeletion::Deleted
    );

    // "Error when describing accelerator": the lookup fails, the deletion with it.
    fake.fail_nth_call(1, boom());
    assert!(find(&mut ctx, Some(arn.as_str()), true).await.is_err());
}

#[tokio::test]
async fn tags_reconciled_with_tag_and_untag() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let arn = ts::accelerator(ga).await;
    let opts = AgaOptions {
        external_managed_tags: vec!["team".into()],
        ..ts::options()
    };
    let mut ctx = ts::ctx(ga, &opts);
    let t = |kv: &[(&str, &str)]| -> Tags {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };

    // "standard case - add and remove tags".
    fake.seed_ga_tags(
        &arn,
        t(&[("keyA", "valueA"), ("keyB", "valueB"), ("keyC", "valueC")]),
    );
    let current = fake.ga_accelerators()[0].1.clone();
    let mut desired = current.clone();
    desired.remove("keyC");
    desired.insert("keyB".into(), "valueB2".into());
    desired.insert("keyD".into(), "valueD".into());
    fake.clear_calls();
    tags::reconcile_tags(&mut ctx, &arn, &desired, &current)
        .await
        .unwrap();
    let ops: Vec<String> = fake.write_calls().into_iter().map(|(_, op)| op).collect();
    assert_eq!(ops, ["TagResource", "UntagResource"]);
    assert_eq!(fake.ga_accelerators()[0].1, desired);

    // "aws: prefixed tags on current resource are not removed" (nor external managed ones).
    fake.seed_ga_tags(
        &arn,
        t(&[
            ("aws:cloudformation:stack-name", "my-stack"),
            ("aws:cloudformation:logical-id", "Accelerator"),
            ("team", "theirs"),
        ]),
    );
    let current = fake.ga_accelerators()[0].1.clone();
    fake.clear_calls();
    tags::reconcile_tags(&mut ctx, &arn, &desired, &current)
        .await
        .unwrap();
    assert!(fake.write_calls().is_empty(), "{:?}", fake.write_calls());
    let held = fake.ga_accelerators().remove(0).1;
    assert_eq!(held["aws:cloudformation:stack-name"], "my-stack");
    assert_eq!(held["team"], "theirs");
}

/// describeResourceTagsFromRGT / describeResourceTags, on the call we read tags with.
#[tokio::test]
async fn tags_read_or_fail() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let arn = ts::accelerator(ga).await;
    fake.seed_ga_tags(
        &arn,
        [("Name", "test-accelerator"), ("Environment", "production")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    // "successfully retrieve tags" / "fetch tags ... when not in cache".
    let tags = ga.list_tags_for_resource(&arn).await.unwrap();
    assert_eq!(tags["Name"], "test-accelerator");
    assert_eq!(tags["Environment"], "production");
    // "resource not found ... returns error".
    let err = ga
        .list_tags_for_resource(&format!("{arn}0"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "AcceleratorNotFoundException");
    // "RGT API error".
    fake.fail_nth_call(1, boom());
    assert!(ga.list_tags_for_resource(&arn).await.is_err());
}

/// Ours: several accelerators tagged for the stack: the model's name wins, the rest are
/// reported and left alone.
#[tokio::test]
async fn one_of_several_tagged_accelerators_is_kept() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let a = ga
        .create_accelerator(&Accelerator {
            crd_uid: "a".into(),
            ..ts::model_accelerator("first")
        })
        .await
        .unwrap()
        .arn;
    let b = ga
        .create_accelerator(&Accelerator {
            crd_uid: "b".into(),
            ..ts::model_accelerator("second")
        })
        .await
        .unwrap()
        .arn;
    let opts = ts::options();
    let mut ctx = ts::ctx(ga, &opts);
    let Lookup::Owned(owned) = find(&mut ctx, None, false).await.unwrap() else {
        panic!("both are the stack's");
    };
    assert_eq!(owned.len(), 2);
    let kept = pick(&mut ctx, owned, "second").unwrap();
    assert_eq!(kept.acc.arn, b);
    assert_eq!(ctx.warnings.len(), 1);
    assert!(ctx.warnings[0].contains(&a), "{:?}", ctx.warnings);
}

/// Ours: the ARN in the status names an accelerator without the stack's tags.
#[tokio::test]
async fn a_foreign_accelerator_is_refused() {
    let fake = fake();
    fake.set_ga_deployment(GaDeployment::Immediate);
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let theirs = ga
        .create_accelerator(&Accelerator {
            tags: Tags::new(),
            ..ts::model_accelerator("theirs")
        })
        .await
        .unwrap()
        .arn;
    let opts = ts::options();
    let mut ctx = ts::ctx(ga, &opts);
    match find(&mut ctx, Some(theirs.as_str()), false).await.unwrap() {
        Lookup::Foreign { arn, reason } => {
            assert_eq!(arn, theirs);
            assert!(reason.contains("elbv2.k8s.aws/cluster=c1"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // Under upstream's IAM policy AWS will not even describe it: foreign for a deletion, an
    // error for a deploy.
    fake.enforce_ga_iam_policy(true);
    assert!(matches!(
        find(&mut ctx, Some(theirs.as_str()), true).await.unwrap(),
        Lookup::Foreign { .. }
    ));
    assert!(find(&mut ctx, Some(theirs.as_str()), false).await.is_err());
}
