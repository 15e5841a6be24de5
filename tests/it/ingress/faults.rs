//! Faults: throttling and 5xx at 20% still converge without duplicates; a controller killed
//! between creating target groups and creating the listener converges after a restart with
//! nothing leaked or duplicated.

use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::retry::RetryPolicy;
use aws_load_balancer_controller::aws::throttle::Throttler;
use aws_load_balancer_controller::aws::{Caller, ElbV2};

use super::fake::{reconcile_again, settle, start};
use super::*;

/// Exactly one stack's worth of resources in the whole account.
async fn assert_exact(fake: &FakeAws, stack: &str, tgs: usize, rules: usize) {
    let inv = inventory(fake, fake, stack).await;
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    assert_eq!(inv.tgs.len(), tgs);
    assert_eq!(inv.sgs.len(), 1);
    assert_eq!(inv.listeners.len(), 1);
    assert_eq!(inv.rules.len(), rules);
    let all_lbs = fake
        .describe_load_balancers(&Default::default())
        .await
        .unwrap();
    assert_eq!(all_lbs.len(), 1, "no untracked load balancer");
    let all_tgs = fake
        .describe_target_groups(&Default::default())
        .await
        .unwrap();
    assert_eq!(all_tgs.len(), tgs, "no untracked target group");
    let all_sgs = fake
        .describe_security_groups(&aws_load_balancer_controller::aws::Ec2Query::default())
        .await
        .unwrap();
    assert_eq!(
        all_sgs.len(),
        2,
        "managed + backend security group: {all_sgs:#?}"
    );
}

#[tokio::test]
async fn throttling_and_server_errors_at_20_percent_converge_without_duplicates() {
    let caller = Caller::new(
        Throttler::unlimited(),
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(2),
            max_delay: Duration::from_millis(20),
        },
        None,
    );
    let fake = Arc::new(FakeAws::with_caller("us-west-2", caller));
    let vpc = network(&fake);
    fake.set_throttle_rate(0.2);
    fake.set_server_error_rate(0.2);
    let h = start(&fake, &vpc).await;
    h.apply_objects(app("a", "alpha", 30101, Some(("team", 1))))
        .await;
    h.apply_objects(app("b", "beta", 30102, Some(("team", 2))))
        .await;
    h.apply_objects(app("c", "gamma", 30103, Some(("team", 3))))
        .await;
    for (ns, n) in [("a", "alpha"), ("b", "beta"), ("c", "gamma")] {
        eventually(
            "member status under faults",
            Duration::from_secs(60),
            || async { h.hostname(ns, n).await.is_some() },
        )
        .await;
    }
    eventually(
        "all rules under faults",
        Duration::from_secs(60),
        || async {
            // Reads can fail too: only a successful, complete inventory counts.
            fake.clear_faults();
            let ok = inventory(fake.as_ref(), fake.as_ref(), "team")
                .await
                .rules
                .len()
                == 3;
            fake.set_throttle_rate(0.2);
            fake.set_server_error_rate(0.2);
            ok
        },
    )
    .await;
    fake.clear_faults();
    settle(&fake).await;
    assert_exact(&fake, "team", 3, 3).await;
    assert!(fake.calls().len() > fake.write_calls().len());
    assert_eq!(
        reconcile_again(&h, &fake, "a", "alpha").await,
        Vec::<String>::new()
    );
    h.stop().await;
}

#[tokio::test]
async fn crash_between_target_groups_and_listener_then_restart_converges() {
    let (fake, vpc) = super::fake::fake_aws();
    // Slow calls leave a window to kill the controller mid-deploy.
    fake.set_latency(Duration::from_millis(100));
    // Objects first, so that the first reconcile sees both Services (no 503 placeholder rule).
    let mut h = Harness::new(fake.clone(), fake.clone(), &vpc, test_config(&vpc)).await;
    h.apply(DEMO).await;
    h.launch();
    // The fake logs a request before its latency: the second CreateTargetGroup being on its
    // way means the first one is done.
    let deadline = std::time::Instant::now() + WAIT;
    while fake.count("CreateTargetGroup") < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no target group created"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    h.crash().await;
    assert_eq!(
        fake.count("CreateListener"),
        0,
        "killed before the listener: {:?}",
        fake.calls()
    );
    let half = inventory(fake.as_ref(), fake.as_ref(), "demo/app").await;
    assert!(
        half.listeners.is_empty() && !half.tgs.is_empty(),
        "{half:#?}"
    );

    fake.set_latency(Duration::ZERO);
    fake.clear_calls();
    h.launch();
    eventually("status after restart", WAIT, || async {
        h.hostname("demo", "app").await.is_some()
    })
    .await;
    settle(&fake).await;
    assert_exact(&fake, "demo/app", 2, 2).await;
    let creates: Vec<String> = super::fake::write_ops(&fake)
        .into_iter()
        .filter(|o| o == "CreateTargetGroup")
        .collect();
    assert!(
        creates.len() <= 1,
        "target groups made before the crash are adopted: {creates:?}"
    );
    assert_eq!(
        h.bindings()
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .len(),
        2
    );
    assert_eq!(
        reconcile_again(&h, &fake, "demo", "app").await,
        Vec::<String>::new()
    );
    h.stop().await;
}
