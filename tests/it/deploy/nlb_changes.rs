//! Changes to a deployed NLB stack on FakeAws, each with only the writes it needs: a port
//! change (one listener and one target group), a scheme change (replacement, old NLB first),
//! a subnet change (SetSubnets), the PrivateLink SG setting, the capacity reservation, and
//! an Ingress's listener attributes (now applied by the deployer for ALBs too).

use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::deploy::Error as DeployError;
use std::time::Duration;

use super::functional::deployer;
use super::nlb::*;
use super::*;

#[tokio::test]
async fn nlb_port_change_touches_only_that_listener_and_target_group() {
    let fake = fake();
    let (vpc, stack) = two_ports(&fake).await;
    deployer(&fake, &vpc).deploy(&stack).await.unwrap();
    let before = nlb_inventory(&fake, "net/dns").await;
    let kept_listener = before.listeners.iter().find(|l| l.port == 53).unwrap();
    let kept_tg = before
        .tgs
        .iter()
        .find(|(_, t)| t["service.k8s.aws/resource"] == "net/dns:53")
        .map(|t| t.0.clone());

    let moved = TWO_PORTS.replace("port: 80, targetPort", "port: 8080, targetPort");
    let stack2 = service_stack(&fake, &vpc, &svc(&moved), &nlb_config(&vpc)).await;
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&stack2).await.unwrap();
    let mut ops = write_ops(&fake);
    ops.sort();
    assert_eq!(
        ops,
        [
            "AuthorizeSecurityGroupIngress",
            "CreateListener",
            "CreateTargetGroup",
            "DeleteListener",
            "DeleteTargetGroup",
            "RevokeSecurityGroupIngress",
        ],
        "one listener and one target group replaced, the SG rule moved"
    );
    let after = nlb_inventory(&fake, "net/dns").await;
    assert_nlb_shape("moved", &after, &stack2);
    let l53 = after.listeners.iter().find(|l| l.port == 53).unwrap();
    assert_eq!(l53, kept_listener, "port 53 untouched");
    let tg53 = after
        .tgs
        .iter()
        .find(|(_, t)| t["service.k8s.aws/resource"] == "net/dns:53")
        .map(|t| t.0.clone());
    assert_eq!(tg53, kept_tg);
    assert_eq!(after.lbs[0].0.arn, before.lbs[0].0.arn, "same NLB");
}

#[tokio::test]
async fn a_scheme_change_replaces_the_nlb_old_one_first_and_keeps_target_groups() {
    let fake = fake();
    let (vpc, stack) = two_ports(&fake).await;
    deployer(&fake, &vpc).deploy(&stack).await.unwrap();
    let before = nlb_inventory(&fake, "net/dns").await;
    let internal = TWO_PORTS.replace("scheme: internet-facing", "scheme: internal");
    let stack2 = service_stack(&fake, &vpc, &svc(&internal), &nlb_config(&vpc)).await;
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&stack2).await.unwrap();
    let ops = write_ops(&fake);
    let at = |op: &str| ops.iter().position(|o| o == op).unwrap();
    // The old NLB still holds the target groups: it has to go before the new listeners.
    assert!(
        at("DeleteLoadBalancer") < at("CreateLoadBalancer"),
        "{ops:?}"
    );
    assert!(!ops.contains(&"CreateTargetGroup".to_string()), "{ops:?}");
    let after = nlb_inventory(&fake, "net/dns").await;
    assert_nlb_shape("internal", &after, &stack2);
    assert_eq!(after.lbs[0].0.scheme, "internal");
    assert_ne!(after.lbs[0].0.arn, before.lbs[0].0.arn);
    let arns = |inv: &crate::support::inventory::Inventory| {
        let mut v: Vec<String> = inv.tgs.iter().map(|(t, _)| t.arn.clone()).collect();
        v.sort();
        v
    };
    assert_eq!(arns(&after), arns(&before), "target groups kept");
}

#[tokio::test]
async fn an_nlb_subnet_change_is_one_set_subnets_call() {
    let fake = fake();
    let vpc = nlb_network(&fake, &SUBNETS, false);
    let ids: Vec<String> = subnet_infos(fake.as_ref(), &vpc)
        .await
        .into_iter()
        .map(|s| s.id)
        .collect();
    let with_subnets = |list: &[String]| {
        TWO_PORTS.replace(
            "aws-load-balancer-scheme: internet-facing",
            &format!(
                "aws-load-balancer-scheme: internet-facing\n    service.beta.kubernetes.io/aws-load-balancer-subnets: {}",
                list.join(",")
            ),
        )
    };
    let two = service_stack(
        &fake,
        &vpc,
        &svc(&with_subnets(&ids[..2])),
        &nlb_config(&vpc),
    )
    .await;
    deployer(&fake, &vpc).deploy(&two).await.unwrap();
    assert_eq!(
        nlb_inventory(&fake, "net/dns").await.lbs[0]
            .0
            .availability_zones
            .len(),
        2
    );
    let three = service_stack(&fake, &vpc, &svc(&with_subnets(&ids)), &nlb_config(&vpc)).await;
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&three).await.unwrap();
    assert_eq!(write_ops(&fake), ["SetSubnets"]);
    assert_eq!(
        nlb_inventory(&fake, "net/dns").await.lbs[0]
            .0
            .availability_zones
            .len(),
        3
    );
}

#[tokio::test]
async fn capacity_reservation_waits_for_a_provisioning_nlb_then_applies() {
    let fake = fake();
    let vpc = nlb_network(&fake, &SUBNETS, false);
    let with_capacity = |n: u32| {
        TWO_PORTS.replace(
            "aws-load-balancer-scheme: internet-facing",
            &format!("aws-load-balancer-scheme: internet-facing\n    service.beta.kubernetes.io/aws-load-balancer-minimum-load-balancer-capacity: CapacityUnits={n}"),
        )
    };
    let cfg = nlb_config(&vpc);
    let first = service_stack(&fake, &vpc, &svc(&with_capacity(100)), &cfg).await;
    deployer(&fake, &vpc).deploy(&first).await.unwrap();
    let arn = nlb_inventory(&fake, "net/dns").await.lbs[0].0.arn.clone();
    assert_eq!(
        fake.describe_capacity_reservation(&arn).await.unwrap(),
        Some(100)
    );

    fake.set_load_balancer_state(&arn, "provisioning");
    let more = service_stack(&fake, &vpc, &svc(&with_capacity(200)), &cfg).await;
    let err = deployer(&fake, &vpc).deploy(&more).await.unwrap_err();
    // Retried after upstream's default --lb-stabilization-monitor-interval, 2m...
    assert!(
        matches!(err, DeployError::NotReady { retry_after, .. } if retry_after == Duration::from_secs(120)),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("monitor provisioning state for load balancer: k8s-net-dns-"),
        "{err}"
    );
    // ... or after the flag's value.
    let err = deployer(&fake, &vpc)
        .with_lb_stabilization_interval(Duration::from_secs(7))
        .deploy(&more)
        .await
        .unwrap_err();
    assert!(
        matches!(err, DeployError::NotReady { retry_after, .. } if retry_after == Duration::from_secs(7)),
        "{err:?}"
    );
    assert_eq!(
        fake.describe_capacity_reservation(&arn).await.unwrap(),
        Some(100)
    );

    fake.set_load_balancer_state(&arn, "active");
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&more).await.unwrap();
    assert_eq!(write_ops(&fake), ["ModifyCapacityReservation"]);
    assert_eq!(
        fake.describe_capacity_reservation(&arn).await.unwrap(),
        Some(200)
    );
    // CapacityUnits=0 resets the reservation.
    let reset = service_stack(&fake, &vpc, &svc(&with_capacity(0)), &cfg).await;
    deployer(&fake, &vpc).deploy(&reset).await.unwrap();
    assert_eq!(
        fake.describe_capacity_reservation(&arn).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn the_private_link_setting_changes_with_one_set_security_groups_call() {
    let fake = fake();
    let vpc = nlb_network(&fake, &SUBNETS, false);
    let with_pl = |v: &str| {
        TWO_PORTS.replace(
            "aws-load-balancer-scheme: internet-facing",
            &format!("aws-load-balancer-scheme: internet-facing\n    service.beta.kubernetes.io/aws-load-balancer-inbound-sg-rules-on-private-link-traffic: \"{v}\""),
        )
    };
    let cfg = nlb_config(&vpc);
    let off = service_stack(&fake, &vpc, &svc(&with_pl("off")), &cfg).await;
    deployer(&fake, &vpc).deploy(&off).await.unwrap();
    let lb = &nlb_inventory(&fake, "net/dns").await.lbs[0].0;
    assert_eq!(
        lb.enforce_private_link_inbound_rules.as_deref(),
        Some("off")
    );
    let sgs = lb.security_groups.clone();
    let on = service_stack(&fake, &vpc, &svc(&with_pl("on")), &cfg).await;
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&on).await.unwrap();
    assert_eq!(write_ops(&fake), ["SetSecurityGroups"]);
    let lb = &nlb_inventory(&fake, "net/dns").await.lbs[0].0;
    assert_eq!(lb.enforce_private_link_inbound_rules.as_deref(), Some("on"));
    assert_eq!(lb.security_groups, sgs, "same groups");
}

#[tokio::test]
async fn ingress_listener_attributes_are_applied_then_left_alone() {
    let fake = fake();
    let vpc = network(&fake);
    let yaml = SHOP.replace(
        "alb.ingress.kubernetes.io/tags: Team=api",
        "alb.ingress.kubernetes.io/tags: Team=api\n    alb.ingress.kubernetes.io/listener-attributes.HTTP-80: routing.http.response.server.enabled=false",
    );
    let stack = build_one(&yaml, &vpc);
    assert!(stack.warnings.is_empty(), "{:?}", stack.warnings);
    deployer(&fake, &vpc).deploy(&stack).await.unwrap();
    let inv = super::functional::inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    let attrs = fake
        .describe_listener_attributes(&inv.listeners[0].arn)
        .await
        .unwrap();
    assert_eq!(attrs["routing.http.response.server.enabled"], "false");
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&stack).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

#[tokio::test]
async fn turning_dualstack_with_ipv6_addresses_sets_type_then_subnets_once() {
    let fake = fake();
    let vpc = nlb_network(&fake, &SUBNETS, true);
    let cfg = nlb_config(&vpc);
    let v4 = service_stack(&fake, &vpc, &svc(TWO_PORTS), &cfg).await;
    deployer(&fake, &vpc).deploy(&v4).await.unwrap();
    let yaml = TWO_PORTS.replace(
        "aws-load-balancer-scheme: internet-facing",
        "aws-load-balancer-scheme: internet-facing\n    service.beta.kubernetes.io/aws-load-balancer-ip-address-type: dualstack\n    service.beta.kubernetes.io/aws-load-balancer-ipv6-addresses: 2600:1f13:0::20,2600:1f13:1::20,2600:1f13:2::20",
    );
    let dual = service_stack(&fake, &vpc, &svc(&yaml), &cfg).await;
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&dual).await.unwrap();
    let ops = write_ops(&fake);
    let at = |op: &str| ops.iter().position(|o| o == op).unwrap();
    assert!(at("SetIpAddressType") < at("SetSubnets"), "{ops:?}");
    let lb = &nlb_inventory(&fake, "net/dns").await.lbs[0].0;
    assert_eq!(lb.ip_address_type, "dualstack");
    let v6 = lb
        .availability_zones
        .iter()
        .flat_map(|z| &z.addresses)
        .filter(|a| a.ipv6_address.is_some())
        .count();
    assert_eq!(v6, 3);
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&dual).await.unwrap();
    assert!(
        !write_ops(&fake).contains(&"SetSubnets".to_string()),
        "only the first time: {:?}",
        write_ops(&fake)
    );
}
