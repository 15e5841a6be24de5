//! Leader election on a Lease in the API test server: one leader at a time, a clean shutdown
//! hands over at once, a crashed leader is replaced after the lease expires.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::controller::leader::{run_elected, LeaderConfig};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube_test_apiserver::{Options, TestApiServer};
use tokio_util::sync::CancellationToken;

use crate::tgb::eventually;

fn config(identity: &str) -> LeaderConfig {
    LeaderConfig {
        identity: identity.into(),
        lease_duration: Duration::from_millis(1500),
        renew_deadline: Duration::from_millis(1000),
        retry_period: Duration::from_millis(100),
        ..LeaderConfig::new("kube-system", "aws-load-balancer-controller-leader")
    }
}

/// Starts a candidate whose "reconciler" counts itself in `leading` while it runs.
fn candidate(
    client: kube::Client,
    identity: &str,
    leading: Arc<AtomicUsize>,
    max_seen: Arc<AtomicUsize>,
) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let token = CancellationToken::new();
    let task = tokio::spawn(run_elected(
        client,
        config(identity),
        token.clone(),
        move |t| {
            let (leading, max_seen) = (leading.clone(), max_seen.clone());
            async move {
                let now = leading.fetch_add(1, Ordering::SeqCst) + 1;
                max_seen.fetch_max(now, Ordering::SeqCst);
                t.cancelled().await;
                leading.fetch_sub(1, Ordering::SeqCst);
            }
        },
    ));
    (token, task)
}

async fn holder(api: &Api<Lease>) -> Option<String> {
    api.get_opt("aws-load-balancer-controller-leader")
        .await
        .unwrap()
        .and_then(|l| l.spec?.holder_identity)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_leader_at_a_time_with_handover_on_shutdown_and_on_crash() {
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let client = server.client();
    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-system");
    let (leading, max_seen) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));

    let (a_token, a_task) = candidate(client.clone(), "a", leading.clone(), max_seen.clone());
    eventually("a leads", Duration::from_secs(5), || async {
        holder(&leases).await.as_deref() == Some("a") && leading.load(Ordering::SeqCst) == 1
    })
    .await;
    let (b_token, b_task) = candidate(client.clone(), "b", leading.clone(), max_seen.clone());
    // b campaigns for longer than a lease duration while a renews: a keeps the lease.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(holder(&leases).await.as_deref(), Some("a"));

    // Clean shutdown of a releases the lease: b takes over well within one lease duration.
    a_token.cancel();
    a_task.await.unwrap();
    let released = std::time::Instant::now();
    eventually(
        "b leads after a's release",
        Duration::from_secs(5),
        || async {
            holder(&leases).await.as_deref() == Some("b") && leading.load(Ordering::SeqCst) == 1
        },
    )
    .await;
    assert!(
        released.elapsed() < Duration::from_millis(1500),
        "handover took {:?}",
        released.elapsed()
    );

    // A crashed leader (task aborted, no release) is replaced once its lease expires.
    let (c_token, c_task) = candidate(client.clone(), "c", leading.clone(), max_seen.clone());
    b_task.abort();
    let _ = b_task.await;
    leading.fetch_sub(1, Ordering::SeqCst); // b's reconciler was dropped with it.
    eventually(
        "c leads after b's lease expired",
        Duration::from_secs(8),
        || async {
            holder(&leases).await.as_deref() == Some("c") && leading.load(Ordering::SeqCst) == 1
        },
    )
    .await;
    let lease = leases
        .get("aws-load-balancer-controller-leader")
        .await
        .unwrap();
    assert_eq!(lease.spec.unwrap().lease_transitions, Some(2), "a → b → c");
    assert_eq!(
        max_seen.load(Ordering::SeqCst),
        1,
        "never two leaders at once"
    );

    drop(b_token);
    c_token.cancel();
    c_task.await.unwrap();
    server.stop().await;
}
