//! NLB stacks on FakeAws under change and failure: a port change touches only its listener and
//! target group; 20 % throttling + 5xx and a deploy failing at any single call (a crash between
//! target group and listener included) converge without duplicates; deletion removes the whole
//! stack and nothing another stack or a user owns; deletion protection keeps the NLB.

use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::retry::RetryPolicy;
use aws_load_balancer_controller::aws::throttle::Throttler;
use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::deploy::Error as DeployError;
use aws_load_balancer_controller::model::{Stack, StackKind};

use super::functional::deployer;
use super::nlb::*;
use super::*;

/// Ports 80 (TCP) and 53 (UDP), ip targets, managed SG.
const TWO_PORTS: &str = r#"
metadata:
  name: dns
  namespace: net
  uid: 0d6f5a1e-0000-4000-8000-000000000010
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: nlb-ip
    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing
spec:
  type: LoadBalancer
  ports:
  - {name: http, port: 80, targetPort: 8080, protocol: TCP}
  - {name: dns, port: 53, targetPort: 5353, protocol: UDP}
"#;

async fn two_ports(fake: &Arc<FakeAws>) -> (String, Stack) {
    let vpc = nlb_network(fake, &SUBNETS, false);
    let stack = service_stack(fake, &vpc, &svc(TWO_PORTS), &nlb_config(&vpc)).await;
    (vpc, stack)
}

/// Exactly one deploy's worth of resources, and nothing else in the account.
async fn assert_converged(fake: &Arc<FakeAws>, stack: &Stack) {
    let inv = nlb_inventory(fake, &stack.stack_id).await;
    assert_nlb_shape("converged", &inv, stack);
    let all_lbs = fake.describe_load_balancers(&Default::default()).await;
    assert_eq!(all_lbs.unwrap().len(), 1);
    let all_tgs = fake.describe_target_groups(&Default::default()).await;
    assert_eq!(all_tgs.unwrap().len(), stack.target_groups.len());
    let all_sgs = fake.describe_security_groups(&Ec2Query::default()).await;
    assert_eq!(all_sgs.unwrap().len(), 2, "managed + backend SG");
}

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
async fn nlb_throttling_and_server_errors_converge_without_duplicates() {
    let caller = Caller::new(
        Throttler::unlimited(),
        RetryPolicy {
            max_retries: 10,
            base_delay: Duration::from_millis(2),
            max_delay: Duration::from_millis(20),
        },
        None,
    );
    let fake = Arc::new(FakeAws::with_caller("us-west-2", caller));
    let vpc = nlb_network(&fake, &SUBNETS, true);
    let stack = service_stack(&fake, &vpc, &svc(EDGE), &nlb_config(&vpc)).await;
    fake.set_throttle_rate(0.2);
    fake.set_server_error_rate(0.2);
    let d = deployer(&fake, &vpc);
    let mut ok = false;
    for _ in 0..5 {
        if d.deploy(&stack).await.is_ok() {
            ok = true;
            break;
        }
    }
    assert!(ok, "no deploy succeeded in 5 attempts");
    assert!(fake.calls().len() > fake.write_calls().len());
    fake.clear_faults();
    let inv = nlb_inventory(&fake, &stack.stack_id).await;
    assert_nlb_shape("throttled", &inv, &stack);
    let all_tgs = fake.describe_target_groups(&Default::default()).await;
    assert_eq!(all_tgs.unwrap().len(), stack.target_groups.len());
    assert_eq!(
        fake.describe_load_balancers(&Default::default())
            .await
            .unwrap()
            .len(),
        1
    );
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&stack).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

#[tokio::test]
async fn an_nlb_deploy_failing_at_any_call_is_repaired_by_the_next_one() {
    let calls = {
        let fake = fake();
        let (vpc, stack) = two_ports(&fake).await;
        fake.clear_calls();
        deployer(&fake, &vpc).deploy(&stack).await.unwrap();
        fake.calls()
    };
    let at = |op: &str| calls.iter().position(|(_, o)| o == op).unwrap();
    assert!(
        at("CreateTargetGroup") < at("CreateListener"),
        "target groups come before listeners, so one crash point is between them"
    );
    for n in 1..=calls.len() as u64 {
        let fake = fake();
        let (vpc, stack) = two_ports(&fake).await;
        fake.clear_calls();
        fake.fail_nth_call(
            n,
            AwsError::from_code("InternalFailure", "crash", Some(500)),
        );
        let first = deployer(&fake, &vpc).deploy(&stack).await;
        assert!(
            first.is_err(),
            "call {n} ({}) was made to fail",
            calls[n as usize - 1].1
        );
        deployer(&fake, &vpc).deploy(&stack).await.unwrap();
        assert_converged(&fake, &stack).await;
        fake.clear_calls();
        deployer(&fake, &vpc).deploy(&stack).await.unwrap();
        assert_eq!(
            write_ops(&fake),
            Vec::<String>::new(),
            "after failing call {n}"
        );
    }
}

#[tokio::test]
async fn deleting_an_nlb_stack_leaves_nothing_of_it_and_touches_nothing_else() {
    let fake = fake();
    let (vpc, stack) = two_ports(&fake).await;
    let d = deployer(&fake, &vpc);
    d.deploy(&stack).await.unwrap();
    let lb_name = stack.load_balancer.as_ref().unwrap().name.clone();
    let subnets: Vec<SubnetMapping> = subnet_infos(fake.as_ref(), &vpc)
        .await
        .into_iter()
        .map(|s| SubnetMapping::subnet(s.id))
        .collect();
    // A user's untagged NLB, and the Ingress group `net/dns` (same id, the other kind).
    let foreign = |name: &str, t: Tags| CreateLoadBalancer {
        name: name.into(),
        lb_type: "network".into(),
        scheme: "internal".into(),
        subnet_mappings: subnets.clone(),
        tags: t,
        ..Default::default()
    };
    let user = fake
        .create_load_balancer(&foreign("users-own", Tags::new()))
        .await
        .unwrap();
    let ingress_tags = tags(&[
        ("elbv2.k8s.aws/cluster", CLUSTER),
        ("ingress.k8s.aws/stack", "net/dns"),
    ]);
    let alb_group = fake
        .create_load_balancer(&foreign("ingress-dns", ingress_tags))
        .await
        .unwrap();

    d.delete_stack_of(StackKind::Service, "net/dns")
        .await
        .unwrap();
    assert!(nlb_inventory(&fake, "net/dns").await.is_empty());
    assert!(fake
        .describe_target_groups(&Default::default())
        .await
        .unwrap()
        .is_empty());
    let left: Vec<String> = fake
        .describe_load_balancers(&Default::default())
        .await
        .unwrap()
        .into_iter()
        .map(|l| l.arn)
        .collect();
    assert_eq!(left.len(), 2);
    assert!(left.contains(&user.arn) && left.contains(&alb_group.arn));
    assert!(!left.iter().any(|a| a.contains(&lb_name)));
    // The user's NLB was never written to: no tag, attribute or delete call on it.
    assert!(fake.describe_tags(&[user.arn.clone()]).await.unwrap()[&user.arn].is_empty());

    // An untagged NLB that has the stack's own name is not the stack's either.
    let same_name = fake
        .create_load_balancer(&foreign(&lb_name, Tags::new()))
        .await
        .unwrap();
    fake.clear_calls();
    d.delete_stack_of(StackKind::Service, "net/dns")
        .await
        .unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
    let arns = fake
        .describe_load_balancers(&Default::default())
        .await
        .unwrap();
    assert!(arns.iter().any(|l| l.arn == same_name.arn));

    // Deleting the Ingress group of the same id does not touch a Service stack either.
    fake.delete_load_balancer(&same_name.arn).await.unwrap();
    d.deploy(&stack).await.unwrap();
    d.delete_stack("net/dns").await.unwrap();
    assert_eq!(nlb_inventory(&fake, "net/dns").await.lbs.len(), 1);
}

#[tokio::test]
async fn a_protected_nlb_is_kept_and_named_in_the_error() {
    let fake = fake();
    let vpc = nlb_network(&fake, &SUBNETS, false);
    let yaml = TWO_PORTS.replace(
        "aws-load-balancer-scheme: internet-facing",
        "aws-load-balancer-scheme: internet-facing\n    service.beta.kubernetes.io/aws-load-balancer-attributes: deletion_protection.enabled=true",
    );
    let stack = service_stack(&fake, &vpc, &svc(&yaml), &nlb_config(&vpc)).await;
    let d = deployer(&fake, &vpc);
    d.deploy(&stack).await.unwrap();
    let err = d
        .check_deletable_of(StackKind::Service, "net/dns")
        .await
        .unwrap_err();
    assert!(
        matches!(err, DeployError::DeletionProtected { .. }),
        "{err}"
    );
    let err = d
        .delete_stack_of(StackKind::Service, "net/dns")
        .await
        .unwrap_err();
    assert!(
        matches!(err, DeployError::DeletionProtected { .. }),
        "{err}"
    );
    assert_eq!(nlb_inventory(&fake, "net/dns").await.lbs.len(), 1);
    let attrs = fake
        .describe_load_balancer_attributes(&nlb_inventory(&fake, "net/dns").await.lbs[0].0.arn)
        .await
        .unwrap();
    assert_eq!(
        attrs["deletion_protection.enabled"], "true",
        "never switched off"
    );
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
    assert!(matches!(err, DeployError::NotReady(_)), "{err}");
    assert!(
        err.to_string()
            .starts_with("monitor provisioning state for load balancer: k8s-net-dns-"),
        "{err}"
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
