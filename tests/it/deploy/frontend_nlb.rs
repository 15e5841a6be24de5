//! The frontend NLB (`enable-frontend-nlb`) on the fake: created in upstream's order (target
//! groups of type `alb`, the ALB, the NLB and its listeners, then the ALB registered), zero
//! writes on a redeploy, an annotation change touching only its part, removal deleting only the
//! frontend NLB's resources, and an upstream-made frontend NLB adopted with zero writes and
//! never deleted while the group asks for it.

use aws_load_balancer_controller::aws::fake::spec;
use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::model::{self, FrontendNlb, Protocol, Stack, Token};

use super::functional::{deployer, inventory, Inventory};
use super::*;

const ON: &str = "    alb.ingress.kubernetes.io/tags: Team=api\n    alb.ingress.kubernetes.io/enable-frontend-nlb: \"true\"\n    alb.ingress.kubernetes.io/frontend-nlb-scheme: internet-facing\n";

/// SHOP with the frontend NLB turned on by `api` (and `extra` annotation lines on it).
fn shop_with_nlb(extra: &str) -> String {
    SHOP.replace(
        "    alb.ingress.kubernetes.io/tags: Team=api\n",
        &format!("{ON}{extra}"),
    )
}

fn fe(stack: &Stack) -> &FrontendNlb {
    stack.frontend_nlb.as_ref().expect("a frontend NLB")
}

fn network_lbs(inv: &Inventory) -> Vec<&LoadBalancer> {
    inv.lbs
        .iter()
        .map(|(l, _)| l)
        .filter(|l| l.lb_type == "network")
        .collect()
}

#[tokio::test]
async fn frontend_nlb_is_created_in_upstreams_order_then_zero_writes() {
    let fake = fake();
    let vpc = network(&fake);
    let stack = build_one(&shop_with_nlb(""), &vpc);
    let d = deployer(&fake, &vpc);
    let out = d.deploy(&stack).await.unwrap();
    let alb = out.load_balancer.clone().unwrap();
    let nlb = out.frontend_nlb.clone().expect("deployed frontend NLB");
    assert_eq!(nlb.name, fe(&stack).load_balancer.name);

    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    let nlbs = network_lbs(&inv);
    assert_eq!(nlbs.len(), 1);
    assert_eq!(nlbs[0].scheme, "internet-facing");
    let alb_tgs: Vec<&TargetGroup> = inv
        .tgs
        .iter()
        .map(|(t, _)| t)
        .filter(|t| t.target_type == "alb")
        .collect();
    assert_eq!(alb_tgs.len(), 1);
    assert_eq!(alb_tgs[0].name, fe(&stack).target_groups[0].name);
    let listener = inv
        .listeners
        .iter()
        .find(|l| l.load_balancer_arn == nlb.arn)
        .expect("NLB listener");
    assert_eq!((listener.port, listener.protocol.as_str()), (80, "TCP"));
    let model::Action::Forward { config: fwd } = &listener.default_actions[0] else {
        panic!("{:?}", listener.default_actions)
    };
    assert_eq!(
        fwd.target_groups[0].target_group_arn,
        Token::Literal(alb_tgs[0].arn.clone())
    );
    let targets = fake
        .describe_target_health(&alb_tgs[0].arn, &[])
        .await
        .unwrap();
    let ids: Vec<(String, Option<u16>)> = targets
        .into_iter()
        .map(|t| (t.target.id, t.target.port))
        .collect();
    assert_eq!(
        ids,
        vec![(alb.arn.clone(), Some(80))],
        "the ALB on its port 80"
    );

    // Upstream's order: target groups, load balancers, listeners, then the registration.
    let ops = write_ops(&fake);
    let pos = |op: &str| {
        ops.iter()
            .position(|o| o == op)
            .unwrap_or_else(|| panic!("{op}: {ops:?}"))
    };
    let last = |op: &str| ops.iter().rposition(|o| o == op).unwrap();
    assert!(
        last("CreateTargetGroup") < pos("CreateLoadBalancer"),
        "{ops:?}"
    );
    assert!(
        last("CreateLoadBalancer") < pos("CreateListener"),
        "{ops:?}"
    );
    assert!(last("CreateListener") < pos("RegisterTargets"), "{ops:?}");
    assert_eq!(ops.iter().filter(|o| *o == "CreateLoadBalancer").count(), 2);

    fake.clear_calls();
    let again = d.deploy(&stack).await.unwrap();
    assert_eq!(
        write_ops(&fake),
        Vec::<String>::new(),
        "second deploy: no write"
    );
    assert_eq!(again.frontend_nlb, out.frontend_nlb);
}

#[tokio::test]
async fn a_frontend_nlb_annotation_change_touches_only_that_part() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);
    d.deploy(&build_one(&shop_with_nlb(""), &vpc))
        .await
        .unwrap();

    let hc = "    alb.ingress.kubernetes.io/frontend-nlb-healthcheck-path: /ready\n";
    fake.clear_calls();
    d.deploy(&build_one(&shop_with_nlb(hc), &vpc))
        .await
        .unwrap();
    assert_eq!(write_ops(&fake), vec!["ModifyTargetGroup".to_string()]);

    // Upstream compares the attributes member by member: both members carry them.
    let attrs = "    alb.ingress.kubernetes.io/frontend-nlb-attributes: load_balancing.cross_zone.enabled=true\n";
    let order2 = "    alb.ingress.kubernetes.io/group.order: \"2\"\n";
    let both = |yaml: String| yaml.replace(order2, &format!("{order2}{attrs}"));
    fake.clear_calls();
    d.deploy(&build_one(
        &both(shop_with_nlb(&format!("{hc}{attrs}"))),
        &vpc,
    ))
    .await
    .unwrap();
    assert_eq!(
        write_ops(&fake),
        vec!["ModifyLoadBalancerAttributes".to_string()]
    );

    // A new NLB port through the mapping: one target group, one listener, one registration.
    let mapping =
        "    alb.ingress.kubernetes.io/frontend-nlb-listener-port-mapping: 80=80,8080=80\n";
    fake.clear_calls();
    d.deploy(&build_one(
        &both(shop_with_nlb(&format!("{hc}{attrs}{mapping}"))),
        &vpc,
    ))
    .await
    .unwrap();
    assert_eq!(
        write_ops(&fake),
        vec!["CreateTargetGroup", "CreateListener", "RegisterTargets"]
    );
}

#[tokio::test]
async fn removing_the_annotation_deletes_only_the_frontend_nlb() {
    let fake = fake();
    let vpc = network(&fake);
    let d = deployer(&fake, &vpc);
    let out = d
        .deploy(&build_one(&shop_with_nlb(""), &vpc))
        .await
        .unwrap();
    let before = inventory(fake.as_ref(), fake.as_ref(), "shop").await;

    fake.clear_calls();
    let plain = build_one(SHOP, &vpc);
    assert!(plain.frontend_nlb.is_none());
    let again = d.deploy(&plain).await.unwrap();
    assert_eq!(again.load_balancer, out.load_balancer, "the ALB stays");
    assert_eq!(again.frontend_nlb, None);
    assert_eq!(
        write_ops(&fake),
        vec![
            "DeregisterTargets",
            "DeleteLoadBalancer",
            "DeleteTargetGroup"
        ]
    );
    let after = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert!(network_lbs(&after).is_empty());
    assert!(after.tgs.iter().all(|(t, _)| t.target_type != "alb"));
    assert_eq!(after.lbs.len(), 1);
    assert_eq!(after.tgs.len(), before.tgs.len() - 1);
    assert_eq!(after.rules.len(), before.rules.len(), "ALB rules untouched");

    fake.clear_calls();
    d.deploy(&plain).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

/// Upstream's frontend NLB of `stack` (names, tags, health check as upstream builds them),
/// made with explicit requests in front of `alb_arn`; returns (NLB ARN, TG ARN).
async fn upstream_frontend_nlb(
    fake: &FakeAws,
    vpc: &str,
    stack: &Stack,
    alb_arn: &str,
) -> (String, String) {
    let f = fe(stack);
    let want_tg = &f.target_groups[0];
    let subnets: Vec<String> = fake
        .describe_subnets(&Default::default())
        .await
        .unwrap()
        .into_iter()
        .filter(|s| s.vpc_id == vpc)
        .map(|s| s.id)
        .collect();
    let alb = fake
        .describe_load_balancers(&Default::default())
        .await
        .unwrap()
        .into_iter()
        .find(|l| l.arn == alb_arn)
        .unwrap();
    let nlb = model::LoadBalancer {
        tags: f.load_balancer.tags.clone(),
        ..spec::load_balancer(
            &f.load_balancer.name,
            "network",
            model::LoadBalancerScheme::InternetFacing,
            &subnets,
            &alb.security_groups,
        )
    };
    let nlb = fake.create_load_balancer(&nlb).await.unwrap();
    let h = &want_tg.health_check;
    let upstream_tg = model::AlbTargetGroup {
        port: 80,
        protocol: model::Protocol::Tcp,
        ip_address_type: "ipv4".into(),
        health_check: model::HealthCheck {
            port: "traffic-port".into(),
            protocol: model::Protocol::Http,
            path: "/".into(),
            matcher: [("httpCode".to_string(), "200".to_string())].into(),
            interval_seconds: h.interval_seconds,
            timeout_seconds: h.timeout_seconds,
            healthy_threshold_count: 2,
            unhealthy_threshold_count: 2,
        },
        ..want_tg.clone()
    };
    let tg = fake
        .create_target_group((&upstream_tg).into(), vpc)
        .await
        .unwrap();
    // ElbV2's, not Global Accelerator's (the fake serves both).
    ElbV2::create_listener(
        fake,
        &model::Listener {
            load_balancer_arn: Token::Literal(nlb.arn.clone()),
            tags: f.listeners[0].tags.clone(),
            ..model::Listener::new(80, Protocol::Tcp, vec![model::Action::forward_arn(&tg.arn)])
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
    let stack = build_one(&shop_with_nlb(""), &vpc);
    let d = deployer(&fake, &vpc);
    // The ALB as upstream left it, then its frontend NLB made by upstream.
    let mut alb_only = stack.clone();
    alb_only.frontend_nlb = None;
    let alb = d.deploy(&alb_only).await.unwrap().load_balancer.unwrap();
    let (nlb_arn, tg_arn) = upstream_frontend_nlb(&fake, &vpc, &stack, &alb.arn).await;
    // Made outside this deployer after its inventory was listed: as after a restart (or once
    // the inventory's TTL has passed), a fresh one finds them.
    let d = deployer(&fake, &vpc);

    fake.clear_calls();
    let out = d.deploy(&stack).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new(), "adopted: no write");
    assert_eq!(out.frontend_nlb.unwrap().arn, nlb_arn);
    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert!(
        inv.lbs.iter().any(|(l, _)| l.arn == nlb_arn),
        "the frontend NLB is still there"
    );
    assert!(inv.tgs.iter().any(|(t, _)| t.arn == tg_arn));

    // An edit of the group elsewhere still leaves the frontend NLB alone.
    let edited = build_one(
        &shop_with_nlb("").replace("path: /healthz", "path: /ready"),
        &vpc,
    );
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

#[tokio::test]
async fn eips_not_matching_the_discovered_subnets_fail_before_any_write() {
    let fake = fake();
    let vpc = network(&fake);
    // Three discovered subnets, one EIP: upstream's error, and nothing written.
    let eip = "    alb.ingress.kubernetes.io/frontend-nlb-eip-allocations: eipalloc-1\n";
    let stack = build_one(&shop_with_nlb(eip), &vpc);
    assert_eq!(fe(&stack).eip_allocations, ["eipalloc-1"]);
    let err = deployer(&fake, &vpc).deploy(&stack).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "count of EIP allocations (1) and subnets (3) must match"
    );
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}
