//! Leader election on a Lease in the API test server: one leader at a time, a clean shutdown
//! hands over at once, a crashed leader is replaced after the lease expires, and a leader whose
//! API connection freezes stops its AWS writes before a standby can take over.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::{Caller, Ec2, Tags};
use aws_load_balancer_controller::controller::leader::{run_elected, LeaderConfig, Leadership};
use aws_load_balancer_controller::probes::{probes_router, Readiness};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube_test_apiserver::{Options, TestApiServer};
use tokio_util::sync::CancellationToken;

use crate::support::freeze_proxy::FreezeProxy;
use crate::tgb::eventually;

fn config(identity: &str) -> LeaderConfig {
    LeaderConfig {
        identity: identity.into(),
        lease_duration: Duration::from_secs(2),
        renew_deadline: Duration::from_millis(1000),
        retry_period: Duration::from_millis(100),
        healthz_tolerance: Duration::from_millis(500),
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
        Leadership::new(true),
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
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(holder(&leases).await.as_deref(), Some("a"));

    // Clean shutdown of a releases the lease: b takes over well within one lease duration.
    a_token.cancel();
    a_task.await.unwrap();
    // Released, not left to expire: once a has stopped, the lease no longer names it (b may
    // already hold it).
    assert_ne!(
        holder(&leases).await.as_deref(),
        Some("a"),
        "a released its lease"
    );
    eventually(
        "b leads after a's release",
        Duration::from_secs(5),
        || async {
            holder(&leases).await.as_deref() == Some("b") && leading.load(Ordering::SeqCst) == 1
        },
    )
    .await;

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

/// Successful AWS writes of one replica: (replica, started, finished).
type WriteLog = Arc<std::sync::Mutex<Vec<(&'static str, Instant, Instant)>>>;

/// A replica whose AWS clients are fenced by its own leadership and whose "reconciler" is as bad
/// as one can be: it starts a writer that ignores cancellation, and never returns itself.
fn stubborn_replica(
    client: kube::Client,
    name: &'static str,
    log: WriteLog,
    writers: Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>,
) -> (Leadership, CancellationToken, tokio::task::JoinHandle<()>) {
    let guards = Leadership::new(true);
    let fake = Arc::new(FakeAws::with_caller(
        "us-west-2",
        Caller::default().with_fence(guards.fence.clone()),
    ));
    let vpc = fake.add_vpc("10.0.0.0/16", Default::default());
    let token = CancellationToken::new();
    let task = tokio::spawn(run_elected(
        client,
        config(name),
        guards.clone(),
        token.clone(),
        move |_ignored| {
            let (fake, vpc, log) = (fake.clone(), vpc.clone(), log.clone());
            writers.lock().unwrap().push(tokio::spawn(async move {
                let tags: Tags = [("writer".to_string(), name.to_string())].into();
                loop {
                    let started = Instant::now();
                    if fake
                        .create_tags(std::slice::from_ref(&vpc), &tags)
                        .await
                        .is_ok()
                    {
                        log.lock().unwrap().push((name, started, Instant::now()));
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }));
            futures::future::pending::<()>()
        },
    ));
    (guards, token, task)
}

async fn healthz(guards: &Leadership) -> u16 {
    use tower::ServiceExt;
    let router = probes_router(Readiness::default(), guards.health.clone());
    let request = http::Request::get("/healthz")
        .body(axum::body::Body::empty())
        .unwrap();
    router.oneshot(request).await.unwrap().status().as_u16()
}

/// The old leader's API connection freezes (a proxy stops forwarding, nothing is closed): its
/// renewals time out, its AWS writes stop at the renew deadline although its reconciler ignores
/// cancellation, and only then may the standby lead and write. `/healthz` reports the stuck
/// leader.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frozen_leader_stops_writing_before_the_standby_takes_over() {
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let leases: Api<Lease> = Api::namespaced(server.client(), "kube-system");
    let (proxy_a, proxy_b) = (
        FreezeProxy::start(server.addr()).await,
        FreezeProxy::start(server.addr()).await,
    );
    let log: WriteLog = Default::default();
    let writers = Arc::new(std::sync::Mutex::new(Vec::new()));
    let writes_of = |name: &str| -> Vec<(Instant, Instant)> {
        let log = log.lock().unwrap();
        log.iter()
            .filter(|w| w.0 == name)
            .map(|w| (w.1, w.2))
            .collect()
    };

    let (a, a_token, a_task) =
        stubborn_replica(proxy_a.client(), "a", log.clone(), writers.clone());
    eventually("a leads and writes", Duration::from_secs(5), || async {
        holder(&leases).await.as_deref() == Some("a") && !writes_of("a").is_empty()
    })
    .await;
    let (b, b_token, b_task) =
        stubborn_replica(proxy_b.client(), "b", log.clone(), writers.clone());
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(writes_of("b").is_empty(), "b wrote while a held the lease");
    assert_eq!(healthz(&a).await, 200);

    proxy_a.freeze();
    let frozen = Instant::now();
    eventually(
        "b takes over and writes",
        Duration::from_secs(10),
        || async { !writes_of("b").is_empty() },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;

    let a_last = writes_of("a").iter().map(|w| w.1).max().unwrap();
    let b_first = writes_of("b").iter().map(|w| w.0).min().unwrap();
    assert!(
        a_last < b_first,
        "a wrote until {:?} after the freeze, b from {:?}: two writers at once",
        a_last - frozen,
        b_first - frozen
    );
    // a's writes ended at its renew deadline, not whenever its reconciler noticed.
    assert!(
        a_last < frozen + config("a").renew_deadline + Duration::from_millis(100),
        "a kept writing {:?} after the freeze",
        a_last - frozen
    );
    assert!(
        writes_of("a").iter().all(|w| w.1 < b_first),
        "no write of a after b's first"
    );

    // a's reconciler never stopped: a stuck leader, which /healthz must report once the lease
    // plus the tolerance has passed; b is healthy.
    eventually("a's /healthz fails", Duration::from_secs(5), || async {
        healthz(&a).await == 500
    })
    .await;
    assert_eq!(healthz(&b).await, 200);

    for w in writers.lock().unwrap().drain(..) {
        w.abort();
    }
    a_task.abort();
    drop(a_token);
    b_token.cancel();
    b_task.abort();
    server.stop().await;
}
