//! Deploys of a representative Ingress group on FakeAws: upstream names and tags, zero writes on
//! an unchanged second deploy, one ModifyRule for one edited path, leftovers and deletion.

use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::{spec, FakeAws};
use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::deploy::Deployer;

pub use crate::support::inventory::{inventory, Inventory};

use super::*;

pub fn deployer(fake: &Arc<FakeAws>, vpc: &str) -> Deployer {
    Deployer::new(fake.clone(), fake.clone(), CLUSTER, vpc).with_delete_retry(
        std::time::Duration::from_millis(10),
        std::time::Duration::from_secs(1),
    )
}

fn paths(r: &Rule) -> Vec<String> {
    r.conditions
        .iter()
        .filter_map(|c| match c {
            aws_load_balancer_controller::model::RuleCondition::PathPattern { config } => {
                Some(config.values.clone())
            }
            _ => None,
        })
        .flatten()
        .collect()
}

#[tokio::test]
async fn deploy_creates_upstream_resources_and_second_deploy_writes_nothing() {
    let fake = fake();
    let vpc = network(&fake);
    let stack = build_one(SHOP, &vpc);
    let want_lb = stack.load_balancer.as_ref().unwrap();
    let d = deployer(&fake, &vpc);
    let out = d.deploy(&stack).await.unwrap();

    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert_eq!(inv.lbs.len(), 1);
    let (lb, lb_tags) = &inv.lbs[0];
    assert_eq!(lb.name, want_lb.name);
    assert!(lb.name.starts_with("k8s-shop-"), "{}", lb.name);
    assert_eq!(lb.scheme, "internal", "model default scheme");
    assert_eq!(
        lb.availability_zones.len(),
        3,
        "discovered role-tagged subnets"
    );
    assert_eq!(lb_tags["elbv2.k8s.aws/cluster"], CLUSTER);
    assert_eq!(lb_tags["ingress.k8s.aws/stack"], "shop");
    assert_eq!(lb_tags["ingress.k8s.aws/resource"], "LoadBalancer");
    assert_eq!(lb_tags["Team"], "api");
    let lb_out = out.load_balancer.as_ref().unwrap();
    assert_eq!(lb_out.arn, lb.arn);
    assert_eq!(lb_out.dns_name, lb.dns_name.to_ascii_lowercase());

    // Managed SG (named by the model, upstream's hash) with port 80 open; backend SG attached.
    assert_eq!(inv.sgs.len(), 1);
    let sg = &inv.sgs[0];
    let want_sg = stack.managed_security_group.as_ref().unwrap();
    assert_eq!(sg.name, want_sg.name);
    assert_eq!(
        sg.tags["ingress.k8s.aws/resource"],
        "ManagedLBSecurityGroup"
    );
    assert_eq!(sg.ingress.len(), 1);
    assert_eq!(sg.ingress[0].from_port, Some(80));
    let backend = out.backend_security_group.clone().unwrap();
    let mut lb_sgs = lb.security_groups.clone();
    lb_sgs.sort();
    let mut want_sgs = vec![sg.id.clone(), backend.clone()];
    want_sgs.sort();
    assert_eq!(lb_sgs, want_sgs);

    // Target groups: model names (upstream hashes) and resource tags; TGB specs carry the ARNs.
    assert_eq!(inv.tgs.len(), 2);
    for want in &stack.target_groups {
        let (tg, t) = inv.tgs.iter().find(|(tg, _)| tg.name == want.name).unwrap();
        assert_eq!(t["ingress.k8s.aws/resource"], want.id);
        assert_eq!(tg.port, Some(want.port as u16));
        assert_eq!(tg.health_check.interval_seconds, Some(15));
        assert_eq!(out.target_group_arns[&want.id], tg.arn);
        let b = out
            .target_group_bindings
            .iter()
            .find(|b| b.id == want.id)
            .unwrap();
        assert_eq!(b.spec.target_group_arn, tg.arn);
        let from = &b.spec.networking.as_ref().unwrap().ingress[0].from[0];
        assert_eq!(from.security_group.as_ref().unwrap().group_id, backend);
    }

    // Listener 80 with a 404 default, three rules in group order with their resource ids.
    assert_eq!(out.listener_ports, vec![80]);
    assert_eq!(inv.listeners.len(), 1);
    let rules: Vec<(String, Vec<String>, String)> = inv
        .rules
        .iter()
        .map(|(r, t)| {
            (
                r.priority.clone(),
                paths(r),
                t["ingress.k8s.aws/resource"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rules,
        vec![
            ("1".into(), vec!["/healthz".into()], "80:1".into()),
            (
                "2".into(),
                vec!["/api/v1".into(), "/api/v1/*".into()],
                "80:2".into()
            ),
            ("3".into(), vec!["/*".into()], "80:3".into()),
        ]
    );

    // Unchanged stack: no write call, with the same deployer and with a fresh one (no cache).
    fake.clear_calls();
    assert_eq!(d.deploy(&stack).await.unwrap(), out);
    assert_eq!(write_ops(&fake), Vec::<String>::new());
    assert_eq!(deployer(&fake, &vpc).deploy(&stack).await.unwrap(), out);
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

#[tokio::test]
async fn editing_one_path_modifies_only_that_rule() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);
    d.deploy(&build_one(SHOP, &vpc)).await.unwrap();
    let before = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    fake.clear_calls();
    let edited = SHOP.replace("path: /healthz", "path: /ready");
    d.deploy(&build_one(&edited, &vpc)).await.unwrap();
    assert_eq!(write_ops(&fake), vec!["ModifyRule".to_string()]);
    let after = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert_eq!(
        after.rules[0].0.arn, before.rules[0].0.arn,
        "same rule, changed in place"
    );
    assert_eq!(paths(&after.rules[0].0), vec!["/ready".to_string()]);
    assert_eq!(after.rules[1].0, before.rules[1].0);
}

#[tokio::test]
async fn removed_member_leaves_only_its_rule_and_target_group_to_delete() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);
    d.deploy(&build_one(SHOP, &vpc)).await.unwrap();
    fake.clear_calls();
    // `web` leaves the group: its rule (priority 3) and target group go.
    let api_only = SHOP.replace("alb.ingress.kubernetes.io/group.name: shop\n    alb.ingress.kubernetes.io/group.order: \"2\"", "alb.ingress.kubernetes.io/group.name: other");
    let stacks = build_stacks(&api_only, &vpc);
    let shop = stacks.iter().find(|s| s.stack_id == "shop").unwrap();
    d.deploy(shop).await.unwrap();
    let mut ops = write_ops(&fake);
    ops.sort();
    assert_eq!(
        ops,
        vec!["DeleteRule".to_string(), "DeleteTargetGroup".to_string()]
    );
    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert_eq!(inv.rules.len(), 2);
    assert_eq!(inv.tgs.len(), 1);
}

#[tokio::test]
async fn empty_stack_deletes_everything_of_that_stack_only() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);
    let two_groups = format!(
        "{SHOP}\n---\n{}",
        SHOP.replace("namespace: shop", "namespace: blog")
            .replace("group.name: shop", "group.name: blog")
    );
    for s in build_stacks(&two_groups, &vpc) {
        d.deploy(&s).await.unwrap();
    }
    // A target group of another cluster carrying the same stack tag must survive.
    let foreign = aws_load_balancer_controller::model::TargetGroup {
        tags: tags(&[
            ("elbv2.k8s.aws/cluster", "other"),
            ("ingress.k8s.aws/stack", "shop"),
            ("ingress.k8s.aws/resource", "shop/api-api:80"),
        ]),
        ..spec::ip_target_group("someone-elses", 80)
    };
    let foreign = fake
        .create_target_group((&foreign).into(), &vpc)
        .await
        .unwrap();

    d.delete_stack("shop").await.unwrap();
    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert!(inv.lbs.is_empty() && inv.sgs.is_empty());
    assert_eq!(
        inv.tgs.len(),
        1,
        "only the other cluster's target group is left"
    );
    assert_eq!(inv.tgs[0].0.arn, foreign.arn);
    let blog = inventory(fake.as_ref(), fake.as_ref(), "blog").await;
    assert_eq!(
        (
            blog.lbs.len(),
            blog.tgs.len(),
            blog.sgs.len(),
            blog.rules.len()
        ),
        (1, 2, 1, 3)
    );

    // Deleting again finds nothing to do.
    fake.clear_calls();
    d.delete_stack("shop").await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

#[tokio::test]
async fn security_group_deletion_waits_for_dependency_then_times_out() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);
    let out = d.deploy(&build_one(SHOP, &vpc)).await.unwrap();
    // Another load balancer (not ours) still uses the managed SG: deletion stays blocked.
    let sg = out.managed_security_group.clone().unwrap();
    let subnets: Vec<String> = fake
        .describe_subnets(&Ec2Query::default())
        .await
        .unwrap()
        .iter()
        .map(|s| s.id.clone())
        .collect();
    fake.create_load_balancer(&spec::alb("not-ours", &subnets, std::slice::from_ref(&sg)))
        .await
        .unwrap();
    let err = d.delete_stack("shop").await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("timed out deleting security group {sg}")),
        "{err}"
    );
    assert!(fake.count("DeleteSecurityGroup") >= 2, "retried");
}

/// The remembered backend security group deleted behind the deployer's back (another replica or
/// a racing release): the next deploy resolves it anew instead of failing until a restart.
#[tokio::test]
async fn a_backend_security_group_deleted_behind_the_cache_is_resolved_again() {
    let fake = fake();
    let vpc = network(&fake);
    let stack = build_one(SHOP, &vpc);
    let d = deployer(&fake, &vpc);
    let first = d.deploy(&stack).await.unwrap();
    let old = first.backend_security_group.clone().unwrap();
    // Gone from AWS while the deployer still remembers it.
    d.delete_stack("shop").await.unwrap();
    fake.delete_security_group(&old).await.unwrap();

    let again = d
        .deploy(&stack)
        .await
        .expect("deploys with a new backend SG");
    let new = again.backend_security_group.clone().unwrap();
    assert_ne!(new, old);
    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert!(inv.lbs[0].0.security_groups.contains(&new));
    assert!(again.target_group_bindings.iter().all(|b| {
        b.spec.networking.as_ref().unwrap().ingress[0].from[0]
            .security_group
            .as_ref()
            .unwrap()
            .group_id
            == new
    }));
}
