//! Faults on FakeAws: throttling and 5xx at 20% (retried by the Caller) still converge without
//! duplicates, and a deploy that fails at any single call ("crash") is repaired by the next
//! deploy with a fresh Deployer, with nothing leaked or duplicated.

use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::retry::RetryPolicy;
use aws_load_balancer_controller::aws::throttle::Throttler;
use aws_load_balancer_controller::aws::{Caller, Ec2, Ec2Query, ElbV2};
use aws_load_balancer_controller::model::Stack;

use super::functional::{deployer, inventory};
use super::*;

/// Exactly the resources of one deploy of SHOP, and nothing else in the account.
async fn assert_converged(fake: &Arc<FakeAws>, stack: &Stack) {
    let inv = inventory(fake.as_ref(), fake.as_ref(), "shop").await;
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    assert_eq!(inv.tgs.len(), stack.target_groups.len());
    assert_eq!(inv.sgs.len(), 1);
    assert_eq!(inv.listeners.len(), 1);
    assert_eq!(inv.rules.len(), stack.listener_rules.len());
    let all_sgs = fake
        .describe_security_groups(&Ec2Query::default())
        .await
        .unwrap();
    assert_eq!(all_sgs.len(), 2, "managed + one backend SG: {all_sgs:#?}");
    let all_tgs = fake
        .describe_target_groups(&Default::default())
        .await
        .unwrap();
    assert_eq!(all_tgs.len(), stack.target_groups.len());
}

#[tokio::test]
async fn throttling_and_server_errors_still_converge_without_duplicates() {
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
    let vpc = network(&fake);
    fake.set_throttle_rate(0.2);
    fake.set_server_error_rate(0.2);
    let stack = build_one(SHOP, &vpc);
    let d = deployer(&fake, &vpc);
    // A reconciler requeues failed deploys; retries in the Caller make failures rare.
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
    assert_converged(&fake, &stack).await;
    fake.clear_calls();
    deployer(&fake, &vpc).deploy(&stack).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

#[tokio::test]
async fn a_deploy_failing_at_any_call_is_repaired_by_the_next_one() {
    // Count the calls of a clean deploy, then fail each of them in turn on a fresh account.
    let stack_calls = {
        let fake = fake();
        let vpc = network(&fake);
        deployer(&fake, &vpc)
            .deploy(&build_one(SHOP, &vpc))
            .await
            .unwrap();
        fake.calls()
    };
    let listener_at = stack_calls
        .iter()
        .position(|(_, op)| op == "CreateListener")
        .unwrap();
    let tg_at = stack_calls
        .iter()
        .position(|(_, op)| op == "CreateTargetGroup")
        .unwrap();
    assert!(
        tg_at < listener_at,
        "target groups are created before the listener"
    );
    for n in 1..=stack_calls.len() as u64 {
        let fake = fake();
        let vpc = network(&fake);
        let stack = build_one(SHOP, &vpc);
        let what = (n, stack_calls[n as usize - 1].1.as_str());
        fail_call_then_repair(&fake, &vpc, &stack, what, || {
            assert_converged(&fake, &stack)
        })
        .await;
    }
}
