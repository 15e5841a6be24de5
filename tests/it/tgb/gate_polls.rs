//! Target-health polls of a binding whose readiness gates wait: they start half a second after
//! a registration and back off to `--targetgroupbinding-requeue-duration`.

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::TargetHealthState;
use serde_json::json;

use super::*;

/// With upstream's 15 s requeue, a target healthy right after its registration gets its gate
/// True within seconds; a fixed 15 s poll held every gated rollout wave back up to 15 s.
#[tokio::test]
async fn a_fresh_registration_is_polled_within_seconds_not_the_requeue_period() {
    let fake = Arc::new(FakeAws::new());
    let vpc = fake.add_vpc("10.0.0.0/16", BTreeMap::new());
    let arn = ip_tg(fake.as_ref(), "web", &vpc, "ip").await;
    let h = Harness::start_with(fake.clone(), Arc::new(FakeAws::new()), "10.0.0.0/16", |c| {
        c.requeue = Duration::from_secs(15)
    })
    .await;
    h.node("node-a", "i-0aaa", json!({})).await;
    h.service(
        "web",
        "ClusterIP",
        json!([{ "name": "http", "port": 80, "targetPort": 8080 }]),
    )
    .await;
    h.pod("web-1", "10.0.1.1", "node-a", Some("web")).await;
    h.endpoints("web", "http", 8080, &[("web-1", "10.0.1.1", false)])
        .await;
    h.binding("web", "web", 80, &arn, "ip").await;
    eventually("registered, gate False", WAIT, || async {
        h.gate("web-1", "web")
            .await
            .is_some_and(|(s, _, _)| s == "False")
    })
    .await;
    // Reconciles set off by the gate write itself are over: only a poll can see the health.
    tokio::time::sleep(Duration::from_millis(500)).await;
    fake.set_target_health(
        &arn,
        &target("10.0.1.1", 8080),
        TargetHealthState::Healthy,
        None,
    )
    .unwrap();
    // Polls at about 0.5, 1.5, 3.5 and 7.5 s after the registration; the requeue period is 15 s.
    eventually(
        "gate True well before the requeue period",
        Duration::from_secs(9),
        || async {
            h.gate("web-1", "web")
                .await
                .is_some_and(|(s, _, _)| s == "True")
        },
    )
    .await;
    h.stop().await;
}
