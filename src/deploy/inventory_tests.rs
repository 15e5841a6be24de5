//! The inventory against FakeAws and its call log: one listing for concurrent readers, freshness,
//! tag reuse, what it keeps (the VPC's load balancers and target groups, the cluster-tagged
//! security groups), changes made during a listing, invalidation, failures.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::aws::fake::FakeAws;
use crate::aws::{CreateSecurityGroup, Ec2};

fn t(kv: &[(&str, &str)]) -> Tags {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A fake account with one VPC; returns it and the VPC id.
fn account() -> (Arc<FakeAws>, String) {
    let fake = Arc::new(FakeAws::new());
    let vpc = fake.add_vpc("10.0.0.0/16", Tags::new());
    (fake, vpc)
}

fn tg(name: &str, vpc: &str) -> aws::TargetGroup {
    aws::TargetGroup {
        name: name.into(),
        protocol: Some("HTTP".into()),
        port: Some(80),
        vpc_id: Some(vpc.into()),
        target_type: "ip".into(),
        ..Default::default()
    }
}

fn inventory(fake: &Arc<FakeAws>, vpc: &str) -> Inventory {
    Inventory::new(fake.clone(), fake.clone(), vpc)
}

async fn sg(fake: &FakeAws, name: &str, vpc: &str, tags: Tags) -> String {
    fake.create_security_group(&CreateSecurityGroup {
        name: name.into(),
        description: "test".into(),
        vpc_id: vpc.into(),
        tags,
    })
    .await
    .unwrap()
}

fn names(tgs: &[(aws::TargetGroup, Tags)]) -> Vec<String> {
    let mut v: Vec<String> = tgs.iter().map(|(g, _)| g.name.clone()).collect();
    v.sort();
    v
}

#[test]
fn the_ttl_is_at_most_half_the_resync_period() {
    assert_eq!(ttl_for(Duration::from_secs(10 * 3600)), INVENTORY_TTL);
    assert_eq!(ttl_for(Duration::from_secs(120)), Duration::from_secs(60));
    assert_eq!(ttl_for(Duration::from_secs(2)), Duration::from_secs(1));
}

#[test]
fn errors_that_may_mean_a_stale_inventory() {
    let e = |code: &str, status| AwsError::from_code(code, "m", status);
    assert!(stales(&e("LoadBalancerNotFound", Some(400))));
    assert!(stales(&e("TargetGroupNotFound", Some(400))));
    assert!(stales(&e("InvalidGroup.NotFound", Some(400))));
    assert!(stales(&e("DuplicateTargetGroupName", Some(400))));
    assert!(stales(&e("InvalidSecurityGroup", Some(400))));
    assert!(stales(&e("InternalFailure", Some(500))), "outcome unknown");
    assert!(
        !stales(&e("Throttling", Some(400))),
        "refused: nothing changed"
    );
    assert!(!stales(&e("ValidationError", Some(400))));
    assert!(!stales(&e("AccessDenied", Some(403))));
}

#[tokio::test]
async fn concurrent_readers_share_one_listing_until_the_ttl() {
    let (fake, vpc) = account();
    // Slow calls: the three readers overlap the listing.
    fake.set_latency(Duration::from_millis(20));
    let inv = inventory(&fake, &vpc);
    let (a, b, c) = tokio::join!(inv.ensure(None), inv.ensure(None), inv.ensure(None));
    a.unwrap();
    b.unwrap();
    c.unwrap();
    for op in [
        "DescribeLoadBalancers",
        "DescribeTargetGroups",
        "DescribeSecurityGroups",
    ] {
        assert_eq!(fake.count(op), 1, "{op}");
    }
    // Within the TTL: no call.
    inv.ensure(None).await.unwrap();
    assert_eq!(fake.count("DescribeLoadBalancers"), 1);
    // A reader that needs a listing begun after it asked (a stack deletion) gets a new one.
    inv.ensure(Some(Instant::now())).await.unwrap();
    assert_eq!(fake.count("DescribeLoadBalancers"), 2);
    // Past the TTL: listed again.
    fake.set_latency(Duration::ZERO);
    let short = inventory(&fake, &vpc).with_ttl(Duration::from_millis(300));
    short.ensure(None).await.unwrap();
    short.ensure(None).await.unwrap();
    assert_eq!(fake.count("DescribeLoadBalancers"), 3);
    tokio::time::sleep(Duration::from_millis(350)).await;
    short.ensure(None).await.unwrap();
    assert_eq!(fake.count("DescribeLoadBalancers"), 4);
}

#[tokio::test]
async fn only_the_vpcs_resources_and_the_cluster_tagged_groups_are_kept() {
    let (fake, vpc) = account();
    let other = fake.add_vpc("10.1.0.0/16", Tags::new());
    fake.add_target_group(tg("ours", &vpc), t(&[("a", "1")]));
    fake.add_target_group(tg("elsewhere", &other), t(&[("a", "1")]));
    sg(&fake, "current", &vpc, t(&[(CLUSTER_TAG, "c")])).await;
    sg(&fake, "legacy", &vpc, t(&[(LEGACY_CLUSTER_TAG, "c")])).await;
    sg(&fake, "users", &vpc, t(&[("Name", "x")])).await;
    sg(&fake, "other-vpc", &other, t(&[(CLUSTER_TAG, "c")])).await;
    let inv = inventory(&fake, &vpc);
    inv.ensure(None).await.unwrap();
    let tgs = inv.tgs_where(|_, _| true);
    assert_eq!(names(&tgs), ["ours"]);
    assert_eq!(tgs[0].1, t(&[("a", "1")]));
    let mut sgs: Vec<String> = inv
        .sgs_where(|_| true)
        .into_iter()
        .map(|g| g.name)
        .collect();
    sgs.sort();
    assert_eq!(sgs, ["current", "legacy"]);
}

#[tokio::test]
async fn fresh_tags_are_not_read_again_by_the_next_listing() {
    let (fake, vpc) = account();
    fake.add_target_group(tg("one", &vpc), t(&[("a", "1")]));
    // TTL zero: every read lists.
    let inv = inventory(&fake, &vpc).with_ttl(Duration::ZERO);
    inv.ensure(None).await.unwrap();
    assert_eq!(fake.count("DescribeTags"), 1);
    inv.ensure(None).await.unwrap();
    assert_eq!(fake.count("DescribeTargetGroups"), 2);
    assert_eq!(fake.count("DescribeTags"), 1, "the tags of `one` are fresh");
    fake.add_target_group(tg("two", &vpc), t(&[("b", "2")]));
    inv.ensure(None).await.unwrap();
    assert_eq!(fake.count("DescribeTags"), 2, "only `two`'s are read");
    let tgs = inv.tgs_where(|_, tags| tags.contains_key("b"));
    assert_eq!(names(&tgs), ["two"]);
}

#[tokio::test]
async fn changes_made_while_a_listing_runs_are_applied_to_its_result() {
    let (fake, vpc) = account();
    let old = fake.add_target_group(tg("old", &vpc), t(&[("a", "1")]));
    let inv = inventory(&fake, &vpc);
    let (epoch, known) = inv.begin();
    let started = Instant::now();
    let listed = inv.list(known).await;
    // Meanwhile (after AWS answered the listing) this process deleted `old` and made `new`.
    let new = aws::TargetGroup {
        arn: "arn:new".into(),
        ..tg("new", &vpc)
    };
    inv.put_tg(new, Some(t(&[("b", "2")])));
    inv.gone(&old.arn);
    inv.finish(epoch, started, listed).unwrap();
    let tgs = inv.tgs_where(|_, _| true);
    assert_eq!(names(&tgs), ["new"]);
    assert_eq!(tgs[0].1, t(&[("b", "2")]));
    // And the result is fresh: no listing for the next reader.
    inv.ensure(None).await.unwrap();
    assert_eq!(fake.count("DescribeTargetGroups"), 1);
}

#[tokio::test]
async fn an_invalidation_during_a_listing_leaves_its_result_stale() {
    let (fake, vpc) = account();
    let inv = inventory(&fake, &vpc);
    let (epoch, known) = inv.begin();
    let started = Instant::now();
    let listed = inv.list(known).await;
    inv.invalidate();
    inv.finish(epoch, started, listed).unwrap();
    inv.ensure(None).await.unwrap();
    assert_eq!(fake.count("DescribeLoadBalancers"), 2);
    // An invalidation after a listing: the next reader lists.
    inv.invalidate();
    inv.ensure(None).await.unwrap();
    assert_eq!(fake.count("DescribeLoadBalancers"), 3);
}

#[tokio::test]
async fn our_own_writes_update_the_inventory() {
    let (fake, vpc) = account();
    let kept = fake.add_target_group(tg("kept", &vpc), t(&[("a", "1")]));
    let inv = inventory(&fake, &vpc);
    inv.ensure(None).await.unwrap();
    inv.put_tags(&kept.arn, t(&[("a", "2")]));
    let made = aws::TargetGroup {
        arn: "arn:made".into(),
        ..tg("made", &vpc)
    };
    inv.put_tg(made.clone(), Some(t(&[("m", "1")])));
    // Described again after a change (no tags given): its tags stay.
    let modified = aws::TargetGroup {
        port: Some(81),
        ..made
    };
    inv.put_tg(modified, None);
    // One whose tags were never known is not made up.
    inv.put_tg(tg("unknown", &vpc), None);
    let tgs = inv.tgs_where(|_, _| true);
    assert_eq!(names(&tgs), ["kept", "made"]);
    let of = |name: &str| tgs.iter().find(|(g, _)| g.name == name).unwrap().clone();
    assert_eq!(of("kept").1, t(&[("a", "2")]));
    assert_eq!(of("made").0.port, Some(81));
    assert_eq!(of("made").1, t(&[("m", "1")]));
    inv.gone("arn:made");
    assert_eq!(names(&inv.tgs_where(|_, _| true)), ["kept"]);
    let id = sg(&fake, "made-sg", &vpc, t(&[(CLUSTER_TAG, "c")])).await;
    assert!(
        inv.sgs_where(|g| g.id == id).is_empty(),
        "not ours to know yet"
    );
    inv.put_sg(aws::SecurityGroup {
        id: id.clone(),
        ..Default::default()
    });
    assert_eq!(inv.sgs_where(|g| g.id == id).len(), 1);
    inv.sg_gone(&id);
    assert!(inv.sgs_where(|g| g.id == id).is_empty());
    assert_eq!(
        fake.count("DescribeTargetGroups"),
        1,
        "no listing for any of it"
    );
}

#[tokio::test]
async fn a_failed_listing_is_an_error_and_the_next_reader_lists_again() {
    let (fake, vpc) = account();
    let inv = inventory(&fake, &vpc);
    fake.fail_nth_call(1, AwsError::from_code("InternalFailure", "boom", Some(500)));
    let err = inv.ensure(None).await.unwrap_err();
    assert!(
        matches!(&err, Error::Aws { source, .. } if source.code() == "InternalFailure"),
        "{err}"
    );
    inv.ensure(None).await.unwrap();
    assert_eq!(fake.count("DescribeLoadBalancers"), 2);
}
