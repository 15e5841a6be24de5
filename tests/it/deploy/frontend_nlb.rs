//! A frontend NLB that upstream made in front of the group's ALB (same stack tags, resource id
//! `FrontendNlb`, a target group of type `alb` with the ALB registered) is adopted by a
//! reconcile of the group: zero writes, nothing of it deleted. Only the group's deletion takes
//! it apart, as upstream does.

use aws_load_balancer_controller::aws::*;

use super::functional::{deployer, inventory};
use super::*;

/// Upstream's frontend NLB for stack `shop` in front of `alb_arn`; returns (NLB ARN, TG ARN).
async fn upstream_frontend_nlb(fake: &FakeAws, vpc: &str, alb_arn: &str) -> (String, String) {
    let stack = |id: &str| {
        tags(&[
            ("elbv2.k8s.aws/cluster", CLUSTER),
            ("ingress.k8s.aws/stack", "shop"),
            ("ingress.k8s.aws/resource", id),
        ])
    };
    let subnets: Vec<SubnetMapping> = fake
        .describe_subnets(&Default::default())
        .await
        .unwrap()
        .into_iter()
        .filter(|s| s.vpc_id == vpc)
        .map(|s| SubnetMapping {
            subnet_id: s.id,
            allocation_id: None,
            private_ipv4_address: None,
            ipv6_address: None,
            ..Default::default()
        })
        .collect();
    let nlb = fake
        .create_load_balancer(&CreateLoadBalancer {
            name: "k8s-shop-0123456789-nlb".into(),
            lb_type: "network".into(),
            scheme: "internal".into(),
            subnet_mappings: subnets,
            tags: stack("FrontendNlb"),
            ..Default::default()
        })
        .await
        .unwrap();
    let tg = fake
        .create_target_group(&CreateTargetGroup {
            name: "k8s-shop-a1b2c3d4e5".into(),
            protocol: Some("TCP".into()),
            port: Some(80),
            vpc_id: Some(vpc.into()),
            target_type: "alb".into(),
            tags: stack("FrontendNlb-tg-TCP-80"),
            ..Default::default()
        })
        .await
        .unwrap();
    fake.create_listener(
        &nlb.arn,
        &ListenerSpec {
            port: 80,
            protocol: "TCP".into(),
            ssl_policy: None,
            certificates: vec![],
            alpn_policy: vec![],
            default_actions: vec![Action::forward(tg.arn.clone())],
            tags: stack("FrontendNlb-ls-TCP-80"),
            mutual_authentication: None,
        },
    )
    .await
    .unwrap();
    fake.register_targets(&tg.arn, &[TargetDescription::new(alb_arn, 80)])
        .await
        .unwrap();
    (nlb.arn, tg.arn)
}

#[tokio::test]
async fn upstream_made_frontend_nlb_is_adopted_with_zero_writes_and_never_deleted() {
    let fake = fake();
    let vpc = network(&fake);
    let stack = build_one(SHOP, &vpc);
    let d = deployer(&fake, &vpc);
    let alb = d.deploy(&stack).await.unwrap().load_balancer.unwrap();
    let (nlb_arn, tg_arn) = upstream_frontend_nlb(&fake, &vpc, &alb.arn).await;

    fake.clear_calls();
    d.deploy(&stack).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new(), "adopted: no write");
    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert!(
        inv.lbs.iter().any(|(l, _)| l.arn == nlb_arn),
        "the frontend NLB is still there"
    );
    assert!(inv.tgs.iter().any(|(t, _)| t.arn == tg_arn));

    // An edit of the group (one member gone) still leaves the frontend NLB alone.
    let edited = build_stacks(&SHOP.replace("path: /healthz", "path: /ready"), &vpc).remove(0);
    fake.clear_calls();
    d.deploy(&edited).await.unwrap();
    let writes = write_ops(&fake);
    assert!(
        !writes
            .iter()
            .any(|w| w.starts_with("Delete") && w != "DeleteRule")
            && !writes.contains(&"DeregisterTargets".to_string()),
        "{writes:?}"
    );
    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert_eq!(inv.lbs.len(), 2, "ALB and frontend NLB");

    // Deleting the group takes everything of the stack apart, the frontend NLB included.
    d.delete_stack("shop").await.unwrap();
    assert!(inventory(fake.as_ref(), fake.as_ref(), "shop")
        .await
        .is_empty());
}
