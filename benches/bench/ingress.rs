//! Issue #19 items 1 and 2 at full size: 1,000 Ingresses in 100 explicit groups already in the
//! (in-memory) API server, the Ingress controller (default worker count) against FakeAws with
//! realistic per-call latency and upstream's default ELBv2 throttles and retries.
//!
//! Cold start: wall time until every Ingress shows its load balancer in status, calls and write
//! calls per resource, next to the floor the client throttles set (per throttle bucket, calls
//! beyond its burst ÷ its rate; the slowest bucket bounds the run). Meanwhile a user changes one
//! Ingress of the group last in the backlog: its latency to status (applied).
//!
//! Steady state: a controller restarted with the resync period shortened to `SYNC` stays idle for
//! a compressed day (several resyncs of every group): write calls (goal 0) and describe calls
//! per resource per resync (goal ≤ 1), resyncs counted from controller-runtime's
//! `controller_runtime_reconcile_total`.

use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::throttle::default_rules;
use aws_load_balancer_controller::aws::Service;
use aws_load_balancer_controller::controller::ingress::{self, IngressConfig};
use aws_load_balancer_controller::controller::metrics::ControllerMetrics;
use aws_load_balancer_controller::model::ModelConfig;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, Patch, PatchParams};
use prometheus_client::registry::Registry;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::fixtures::{
    by_op, ingress_has_status, ingress_object, ingress_objects, ingresses_with_status, reconciles,
};

const GROUPS: usize = 100;
const PER_GROUP: usize = 10;
const LATENCY: Duration = Duration::from_millis(50);
/// The shortened resync period of the steady-state run and how many periods it lasts.
const SYNC: Duration = Duration::from_secs(60);
const PERIODS: u32 = 3;

/// The client-throttle floor of `ops` (ELBv2 operation names): per upstream default bucket,
/// (calls beyond its burst) ÷ its rate; the slowest bucket bounds the run.
fn throttle_floor(ops: &[String]) -> (f64, String) {
    let mut worst = (0.0, String::from("none"));
    for rule in default_rules() {
        let n = ops.iter().filter(|o| rule.operation.is_match(o)).count();
        let secs = n.saturating_sub(rule.burst as usize) as f64 / rule.rate;
        if secs > worst.0 {
            worst = (
                secs,
                format!(
                    "{} calls of /{}/ at {}/s burst {}",
                    n,
                    rule.operation.as_str(),
                    rule.rate,
                    rule.burst
                ),
            );
        }
    }
    worst
}

fn config(sync_period: Duration, metrics: ControllerMetrics) -> IngressConfig {
    IngressConfig {
        model: ModelConfig {
            cluster_name: "bench".into(),
            ..ModelConfig::default()
        },
        sync_period,
        controller_metrics: metrics,
        ..IngressConfig::default()
    }
}

async fn run_both() {
    let server = super::fixtures::api_server_with_crds().await;
    let client = server.client();
    ingress_objects(&client, GROUPS, PER_GROUP).await;
    let (fake, vpc) = super::fixtures::fake_account();
    fake.set_latency(LATENCY);
    let total = GROUPS * PER_GROUP;
    // Per group: LB, managed SG, listener, one rule and one TG per Ingress; + backend SG.
    let resources = GROUPS * (3 + 2 * PER_GROUP) + 1;

    // ---- item 1: cold start
    let cfg = config(
        IngressConfig::default().sync_period,
        ControllerMetrics::default(),
    );
    let workers = cfg.concurrency;
    let token = CancellationToken::new();
    let start = Instant::now();
    let task = tokio::spawn(ingress::run(
        client.clone(),
        fake.clone(),
        fake.clone(),
        vpc.clone(),
        cfg,
        token.clone(),
    ));
    // The user's change: a new host on one Ingress of the group last in the backlog, made once
    // the cold start is under way (the first group has status).
    let last = (0..GROUPS).max_by_key(|g| format!("group{g}")).unwrap();
    let ings: Api<Ingress> = Api::namespaced(client.clone(), &format!("ns{last}"));
    while ingresses_with_status(&client).await == 0 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let before = ings.get("ing0").await.unwrap();
    let mut user = None;
    if !ingress_has_status(&before) {
        let changed = ingress_object(last, 0, &format!("changed.group{last}.example.com"));
        ings.patch(
            "ing0",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": changed.spec})),
        )
        .await
        .unwrap();
        user = Some((Instant::now(), ingresses_with_status(&client).await));
    }
    let mut user_latency = None;
    loop {
        if user_latency.is_none() {
            if let Some((at, done_then)) = user {
                if ingress_has_status(&ings.get("ing0").await.unwrap()) {
                    let done_after = ingresses_with_status(&client).await;
                    user_latency = Some((at.elapsed(), done_then, done_after));
                }
            }
        }
        if ingresses_with_status(&client).await >= total {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(3600),
            "bench did not converge"
        );
        tokio::time::sleep(Duration::from_millis(if user_latency.is_none() {
            20
        } else {
            500
        }))
        .await;
    }
    let wall = start.elapsed();
    let elb_ops: Vec<String> = fake
        .calls()
        .into_iter()
        .filter(|(s, _)| matches!(s, Service::ElbV2))
        .map(|(_, o)| o)
        .collect();
    let calls = fake.calls().len();
    let writes: Vec<String> = fake.write_calls().into_iter().map(|(_, o)| o).collect();
    let (floor, bucket) = throttle_floor(&elb_ops);
    // Each worker makes its group's calls one after another: calls × latency ÷ workers.
    let serial = calls as f64 * LATENCY.as_secs_f64() / workers as f64;
    println!(
        "ingress/cold {total} ingresses in {GROUPS} groups, {workers} workers, {} ms/call: {:.1} s wall to status on all (goal <= 600 s, ratio {:.3}); throttle floor {:.1} s ({bucket}; upstream throttles no Create*), wall/throttle floor {:.2}; latency floor {serial:.1} s (calls x latency / workers), wall/latency floor {:.2}",
        LATENCY.as_millis(),
        wall.as_secs_f64(),
        wall.as_secs_f64() / 600.0,
        floor,
        wall.as_secs_f64() / floor.max(f64::EPSILON),
        wall.as_secs_f64() / serial
    );
    println!(
        "ingress/cold calls: {calls} ({} writes) for {resources} resources = {:.2} calls, {:.2} writes per resource; writes: {}",
        writes.len(),
        calls as f64 / resources as f64,
        writes.len() as f64 / resources as f64,
        by_op(&writes)
    );
    match user_latency {
        Some((lat, done_then, done_after)) => println!(
            "ingress/cold user change to ns{last}/ing0 (group last in the backlog) during the cold start: applied after {:.2} s ({done_then} of {total} Ingresses had status at the change, {done_after} when applied); wall/that {:.1}",
            lat.as_secs_f64(),
            wall.as_secs_f64() / lat.as_secs_f64().max(f64::EPSILON)
        ),
        None => println!("ingress/cold user change: not measured (group{last} had status before the change)"),
    }
    token.cancel();
    let _ = task.await;

    // ---- item 2: steady state, restarted with a short resync period
    let mut registry = Registry::default();
    let metrics = ControllerMetrics::register(&mut registry);
    fake.clear_calls();
    let token = CancellationToken::new();
    let task = tokio::spawn(ingress::run(
        client.clone(),
        fake.clone(),
        fake.clone(),
        vpc,
        config(SYNC, metrics),
        token.clone(),
    ));
    tokio::time::sleep(SYNC * PERIODS).await;
    let succeeded = reconciles(&registry, "ingress")
        .get("success")
        .copied()
        .unwrap_or(0);
    let passes = succeeded as f64 / GROUPS as f64;
    let calls = fake.calls();
    let describes = calls
        .iter()
        .filter(|(_, o)| o.starts_with("Describe"))
        .count();
    let writes: Vec<String> = fake.write_calls().into_iter().map(|(_, o)| o).collect();
    println!(
        "ingress/steady restart + {PERIODS} x {} s resync period: {passes:.1} passes over every group (restart pass + resyncs), {} writes (goal 0){}; {describes} describes = {:.2} per resource per pass (goal <= 1, ratio {:.2})",
        SYNC.as_secs(),
        writes.len(),
        if writes.is_empty() { String::new() } else { format!(": {}", by_op(&writes)) },
        describes as f64 / resources as f64 / passes.max(f64::EPSILON),
        describes as f64 / resources as f64 / passes.max(f64::EPSILON),
    );
    let all: Vec<String> = calls.into_iter().map(|(_, o)| o).collect();
    println!("ingress/steady calls: {}", by_op(&all));
    token.cancel();
    let _ = task.await;
    server.stop().await;
}

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(run_both());
}
