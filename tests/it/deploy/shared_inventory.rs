//! The deployers' shared inventory on FakeAws (call counts from its log): stacks of two
//! controllers list the account once, concurrent deploys wait for one listing, what a deploy
//! creates or changes is found by the next one without a listing, out-of-band deletions are seen
//! after the TTL, an invalidation or a NotFound, a deletion reads a listing made after it began,
//! a load balancer of the stack made elsewhere after the listing is adopted rather than made
//! twice, resources without our tags are never touched, listener and rule tags come in one
//! DescribeTags, and an NLB's listeners have no rules read.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fake::{spec, FakeAws};
use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::deploy::Error as DeployError;
use aws_load_balancer_controller::deploy::Inventory as Shared;
use aws_load_balancer_controller::model;

use super::functional::{deployer, inventory};
use super::nlb::{nlb_config, nlb_network, service_stack, svc, SUBNETS, TWO_PORTS};
use super::*;

fn shared(fake: &Arc<FakeAws>, vpc: &str) -> Arc<Shared> {
    Arc::new(Shared::new(fake.clone(), fake.clone(), vpc))
}

/// The listings a deploy may make: load balancers, target groups, security groups.
fn listings(fake: &FakeAws) -> [usize; 3] {
    [
        "DescribeLoadBalancers",
        "DescribeTargetGroups",
        "DescribeSecurityGroups",
    ]
    .map(|op| fake.count(op))
}

#[tokio::test]
async fn stacks_of_two_controllers_list_the_account_once_through_the_shared_inventory() {
    let fake = fake();
    let vpc = nlb_network(&fake, &SUBNETS, false);
    let shop = build_one(SHOP, &vpc);
    let dns = service_stack(&fake, &vpc, &svc(TWO_PORTS), &nlb_config(&vpc)).await;
    for s in [&shop, &dns] {
        deployer(&fake, &vpc).deploy(s).await.unwrap();
    }

    // A new process: one inventory for its Ingress and its Service deployer.
    let inv = shared(&fake, &vpc);
    let ingress = deployer(&fake, &vpc).with_inventory(inv.clone());
    let service = deployer(&fake, &vpc).with_inventory(inv.clone());
    fake.clear_calls();
    ingress.deploy(&shop).await.unwrap();
    service.deploy(&dns).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
    assert_eq!(fake.count("DescribeLoadBalancers"), 1);
    assert_eq!(fake.count("DescribeTargetGroups"), 1);
    // The listing's, and each deployer's lookup of the backend SG (once per deployer).
    assert_eq!(fake.count("DescribeSecurityGroups"), 3);
    // Load balancer and target group tags with the listing (6 ARNs: one request), then per
    // stack its listeners' and rules' together.
    assert_eq!(fake.count("DescribeTags"), 3);
    // The ALB listener's rules only: an NLB's listeners have none to read.
    assert_eq!(fake.count("DescribeRules"), 1);
    // The Service model's look at its NLB reads the same inventory.
    assert!(service.existing_nlb(&dns.stack_id).await.unwrap().is_some());
    assert_eq!(fake.count("DescribeLoadBalancers"), 1);

    // Each deployer with its own inventory: a listing each.
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&shop).await.unwrap();
    deployer(&fake, &vpc).deploy(&dns).await.unwrap();
    assert_eq!(fake.count("DescribeLoadBalancers"), 2);
    assert_eq!(fake.count("DescribeTargetGroups"), 2);
}

#[tokio::test]
async fn concurrent_deploys_wait_for_one_listing() {
    let fake = fake();
    let vpc = network(&fake);
    let two = format!(
        "{SHOP}\n---\n{}",
        SHOP.replace("namespace: shop", "namespace: blog")
            .replace("group.name: shop", "group.name: blog")
    );
    let stacks = build_stacks(&two, &vpc);
    assert_eq!(stacks.len(), 2);
    for s in &stacks {
        deployer(&fake, &vpc).deploy(s).await.unwrap();
    }
    let inv = shared(&fake, &vpc);
    let a = deployer(&fake, &vpc).with_inventory(inv.clone());
    let b = deployer(&fake, &vpc).with_inventory(inv.clone());
    // Slow calls: both deploys ask for the inventory while it is being listed.
    fake.set_latency(Duration::from_millis(5));
    fake.clear_calls();
    let (ra, rb) = tokio::join!(a.deploy(&stacks[0]), b.deploy(&stacks[1]));
    ra.unwrap();
    rb.unwrap();
    assert_eq!(fake.count("DescribeLoadBalancers"), 1);
    assert_eq!(fake.count("DescribeTargetGroups"), 1);
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

#[tokio::test]
async fn what_a_deploy_creates_or_changes_is_found_by_the_next_without_a_listing() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);
    let stack = build_one(SHOP, &vpc);
    d.deploy(&stack).await.unwrap();
    fake.clear_calls();
    d.deploy(&stack).await.unwrap();
    assert_eq!(
        write_ops(&fake),
        Vec::<String>::new(),
        "nothing created again"
    );
    assert_eq!(listings(&fake), [0, 0, 0]);

    // Tags and inbound CIDRs edited: tags of the load balancer, target groups, security group,
    // listener and rules change, and the security group's permissions.
    let edited = SHOP.replace("Team=api", "Team=shop").replace(
        "alb.ingress.kubernetes.io/group.name: shop",
        "alb.ingress.kubernetes.io/group.name: shop\n    alb.ingress.kubernetes.io/inbound-cidrs: 10.0.0.0/8",
    );
    let edited = build_one(&edited, &vpc);
    fake.clear_calls();
    d.deploy(&edited).await.unwrap();
    let writes = write_ops(&fake);
    for op in [
        "AuthorizeSecurityGroupIngress",
        "RevokeSecurityGroupIngress",
        "AddTags",
        "CreateTags",
    ] {
        assert!(writes.iter().any(|w| w == op), "{op}: {writes:?}");
    }
    fake.clear_calls();
    d.deploy(&edited).await.unwrap();
    assert_eq!(
        write_ops(&fake),
        Vec::<String>::new(),
        "the edit is in the inventory"
    );
    assert_eq!(listings(&fake), [0, 0, 0]);
}

#[tokio::test]
async fn a_load_balancer_deleted_out_of_band_is_recreated_once_the_ttl_has_passed() {
    let fake = fake();
    let vpc = network(&fake);
    let stack = build_one(SHOP, &vpc);
    let inv =
        Shared::new(fake.clone(), fake.clone(), vpc.clone()).with_ttl(Duration::from_millis(300));
    let d = deployer(&fake, &vpc).with_inventory(Arc::new(inv));
    let old = d.deploy(&stack).await.unwrap().load_balancer.unwrap().arn;
    fake.delete_load_balancer(&old).await.unwrap();
    tokio::time::sleep(Duration::from_millis(350)).await;
    fake.clear_calls();
    let new = d.deploy(&stack).await.unwrap().load_balancer.unwrap().arn;
    assert_ne!(new, old);
    assert_eq!(fake.count("CreateLoadBalancer"), 1);
    let now = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert_eq!(
        (now.lbs.len(), now.listeners.len(), now.rules.len()),
        (1, 1, 3)
    );
}

#[tokio::test]
async fn a_not_found_on_a_load_balancer_of_the_inventory_invalidates_it() {
    let fake = fake();
    let vpc = network(&fake);
    let stack = build_one(SHOP, &vpc);
    // Its own inventory, 60 s: the deletion below happens well within it.
    let d = deployer(&fake, &vpc);
    let old = d.deploy(&stack).await.unwrap().load_balancer.unwrap().arn;
    fake.delete_load_balancer(&old).await.unwrap();
    fake.clear_calls();
    let err = d.deploy(&stack).await.unwrap_err();
    assert!(
        matches!(&err, DeployError::Aws { source, .. } if source.is_not_found()),
        "{err}"
    );
    assert_eq!(write_ops(&fake), Vec::<String>::new(), "nothing written");
    assert_eq!(fake.count("DescribeLoadBalancers"), 0, "no listing yet");
    // The reconcile's retry lists again and makes the load balancer anew.
    let new = d.deploy(&stack).await.unwrap().load_balancer.unwrap().arn;
    assert_ne!(new, old);
    assert_eq!(fake.count("CreateLoadBalancer"), 1);
    assert!(fake.count("DescribeLoadBalancers") >= 1);
}

#[tokio::test]
async fn an_invalidated_inventory_lists_again() {
    let fake = fake();
    let vpc = network(&fake);
    let stack = build_one(SHOP, &vpc);
    let d = deployer(&fake, &vpc);
    let old = d.deploy(&stack).await.unwrap().load_balancer.unwrap().arn;
    fake.delete_load_balancer(&old).await.unwrap();
    d.inventory().invalidate();
    fake.clear_calls();
    let new = d.deploy(&stack).await.unwrap().load_balancer.unwrap().arn;
    assert_ne!(new, old);
    assert_eq!(fake.count("CreateLoadBalancer"), 1);
}

#[tokio::test]
async fn a_deletion_reads_a_listing_made_after_it_began() {
    let fake = fake();
    let vpc = network(&fake);
    let stack = build_one(SHOP, &vpc);
    let d = deployer(&fake, &vpc);
    d.deploy(&stack).await.unwrap();
    // A target group of the stack that appeared after the deployer listed.
    let late = model::TargetGroup {
        tags: tags(&[
            ("elbv2.k8s.aws/cluster", CLUSTER),
            ("ingress.k8s.aws/stack", "shop"),
            ("ingress.k8s.aws/resource", "shop/late:80"),
        ]),
        ..spec::ip_target_group("late", 80)
    };
    let late = fake
        .create_target_group((&late).into(), &vpc)
        .await
        .unwrap();
    d.delete_stack("shop").await.unwrap();
    assert!(inventory(fake.as_ref(), fake.as_ref(), "shop")
        .await
        .is_empty());
    let left = fake
        .describe_target_groups(&Default::default())
        .await
        .unwrap();
    assert!(!left.iter().any(|t| t.arn == late.arn), "{left:#?}");
}

/// A load balancer of the stack that someone else made after the inventory was listed
/// (upstream's controller putting the stack in place, right after its target groups): the
/// deploy that would create one lists again first, finds it and keeps it; never a second.
#[tokio::test]
async fn a_load_balancer_made_elsewhere_after_the_listing_is_adopted_not_made_twice() {
    let fake = fake();
    let vpc = network(&fake);
    let stack = build_one(SHOP, &vpc);
    let d = deployer(&fake, &vpc);
    // Listed now, well within the TTL of what follows: nothing of the stack yet.
    let kind = model::StackKind::Ingress;
    assert!(!d.has_load_balancer_of(kind, "shop").await.unwrap());
    let want = stack.load_balancer.clone().unwrap();
    let subnets: Vec<String> = fake
        .describe_subnets(&Ec2Query::default())
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    // Another name than ours (the fake, as AWS, would answer a create of the same name with
    // the existing one), the stack's tags.
    let theirs = model::LoadBalancer {
        tags: want.tags.clone(),
        ..spec::load_balancer("made-elsewhere", &want.lb_type, want.scheme, &subnets, &[])
    };
    let theirs = fake.create_load_balancer(&theirs).await.unwrap();
    fake.clear_calls();
    let out = d.deploy(&stack).await.unwrap();
    assert_eq!(fake.count("CreateLoadBalancer"), 0, "{:?}", fake.calls());
    assert_eq!(out.load_balancer.unwrap().arn, theirs.arn);
    let now = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert_eq!(now.lbs.len(), 1, "{now:#?}");
    assert_eq!(now.listeners.len(), 1);
    fake.clear_calls();
    d.deploy(&stack).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new(), "kept as it is now");
}

/// What AWS says of these resources: load balancers, target groups, security groups, tags.
async fn state_of(
    fake: &FakeAws,
    lbs: &[String],
    tgs: &[String],
    sgs: &[String],
) -> (
    Vec<LoadBalancer>,
    Vec<TargetGroup>,
    Vec<SecurityGroup>,
    BTreeMap<String, Tags>,
) {
    let arns: Vec<String> = lbs.iter().chain(tgs).cloned().collect();
    let lq = LoadBalancerQuery {
        arns: lbs.to_vec(),
        ..Default::default()
    };
    let tq = TargetGroupQuery {
        arns: tgs.to_vec(),
        ..Default::default()
    };
    (
        fake.describe_load_balancers(&lq).await.unwrap(),
        fake.describe_target_groups(&tq).await.unwrap(),
        fake.describe_security_groups(&Ec2Query::ids(sgs.iter().cloned()))
            .await
            .unwrap(),
        fake.describe_tags(&arns).await.unwrap(),
    )
}

#[tokio::test]
async fn resources_without_our_tags_in_the_inventory_are_never_touched() {
    let fake = fake();
    let vpc = network(&fake);
    let stack = build_one(SHOP, &vpc);
    let api = stack.target_groups[0].id.clone();
    let stack_tags = |cluster: Option<&str>, resource: &str| {
        let mut t = tags(&[
            ("ingress.k8s.aws/stack", "shop"),
            ("ingress.k8s.aws/resource", resource),
        ]);
        if let Some(c) = cluster {
            t.insert("elbv2.k8s.aws/cluster".into(), c.into());
        }
        t
    };
    // In the VPC, so in the inventory: target groups with the stack's tags but another
    // cluster's or none, such a security group, and a user's untagged load balancer.
    let mut foreign_tgs = Vec::new();
    for (name, cluster) in [("other-cluster", Some("other")), ("no-cluster", None)] {
        let tg = model::TargetGroup {
            tags: stack_tags(cluster, api.as_str()),
            ..spec::ip_target_group(name, 80)
        };
        let made = fake.create_target_group((&tg).into(), &vpc).await.unwrap();
        foreign_tgs.push(made.arn);
    }
    let foreign_sg = fake
        .create_security_group(&CreateSecurityGroup {
            name: "other-cluster".into(),
            description: "another cluster's".into(),
            vpc_id: vpc.clone(),
            tags: stack_tags(Some("other"), "ManagedLBSecurityGroup"),
        })
        .await
        .unwrap();
    let subnets: Vec<String> = fake
        .describe_subnets(&Ec2Query::default())
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    let users = fake
        .create_load_balancer(&spec::alb("users-own", &subnets, &[]))
        .await
        .unwrap();
    let (lbs, sgs) = (vec![users.arn.clone()], vec![foreign_sg.clone()]);
    let before = state_of(&fake, &lbs, &foreign_tgs, &sgs).await;

    let d = deployer(&fake, &vpc);
    fake.clear_calls();
    let out = d.deploy(&stack).await.unwrap();
    assert_eq!(fake.count("CreateTargetGroup"), stack.target_groups.len());
    assert!(out
        .target_group_arns
        .values()
        .all(|a| !foreign_tgs.contains(a)));
    assert_ne!(out.managed_security_group, Some(foreign_sg.clone()));
    assert_ne!(out.load_balancer.unwrap().arn, users.arn);
    assert_eq!(state_of(&fake, &lbs, &foreign_tgs, &sgs).await, before);

    d.delete_stack("shop").await.unwrap();
    // Of what carries the stack tag, only theirs is left.
    let left = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert!(left.lbs.is_empty(), "{left:#?}");
    let mut left_tgs: Vec<String> = left.tgs.iter().map(|(t, _)| t.arn.clone()).collect();
    left_tgs.sort();
    let mut want_tgs = foreign_tgs.clone();
    want_tgs.sort();
    assert_eq!(left_tgs, want_tgs);
    let left_sgs: Vec<String> = left.sgs.iter().map(|g| g.id.clone()).collect();
    assert_eq!(left_sgs, vec![foreign_sg.clone()]);
    assert_eq!(
        state_of(&fake, &lbs, &foreign_tgs, &sgs).await,
        before,
        "still there, as they were"
    );
}

#[tokio::test]
async fn listener_and_rule_tags_come_in_one_describe_tags() {
    let fake = fake();
    let vpc = network(&fake);
    let stack = build_one(SHOP, &vpc);
    deployer(&fake, &vpc).deploy(&stack).await.unwrap();
    // A fresh deployer: every tag cache cold.
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&stack).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
    // The load balancer's and target groups' with the inventory's listing, then the
    // listener's and its three rules' together.
    assert_eq!(fake.count("DescribeTags"), 2);
    assert_eq!(fake.count("DescribeRules"), 1);
}
