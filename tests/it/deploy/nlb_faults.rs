//! NLB stacks on FakeAws under failure: 20 % throttling + 5xx and a deploy failing at any
//! single call (a crash between target group and listener included) converge without
//! duplicates; deletion removes the whole stack and nothing another stack or a user owns;
//! deletion protection keeps the NLB.

use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fake::{spec, FakeAws};
use aws_load_balancer_controller::aws::retry::RetryPolicy;
use aws_load_balancer_controller::aws::throttle::Throttler;
use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::deploy::Error as DeployError;
use aws_load_balancer_controller::model::StackKind;

use super::functional::deployer;
use super::nlb::*;
use super::nlb_families::EDGE;
use super::*;

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
        let what = (n, calls[n as usize - 1].1.as_str());
        fail_call_then_repair(&fake, &vpc, &stack, what, || {
            assert_converged(&fake, &stack)
        })
        .await;
    }
}

#[tokio::test]
async fn deleting_an_nlb_stack_leaves_nothing_of_it_and_touches_nothing_else() {
    let fake = fake();
    let (vpc, stack) = two_ports(&fake).await;
    let d = deployer(&fake, &vpc);
    d.deploy(&stack).await.unwrap();
    let lb_name = stack.load_balancer.as_ref().unwrap().name.clone();
    let subnets: Vec<String> = subnet_infos(fake.as_ref(), &vpc)
        .await
        .into_iter()
        .map(|s| s.id)
        .collect();
    // A user's untagged NLB, and the Ingress group `net/dns` (same id, the other kind).
    let foreign = |name: &str, t: Tags| aws_load_balancer_controller::model::LoadBalancer {
        tags: t,
        ..spec::load_balancer(
            name,
            "network",
            aws_load_balancer_controller::model::LoadBalancerScheme::Internal,
            &subnets,
            &[],
        )
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
    assert!(fake
        .describe_tags(std::slice::from_ref(&user.arn))
        .await
        .unwrap()[&user.arn]
        .is_empty());

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
