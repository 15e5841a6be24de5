//! Issue #19 items 1 and 2 at full size, and issue #43 at five times that: Ingresses in explicit
//! groups of 10 already in the (in-memory) API server, the Ingress controller (default worker
//! count) against FakeAws with realistic per-call latency and upstream's default ELBv2 throttles
//! and retries. `INGRESS_BENCH_SIZE` picks 1,000 Ingresses in 100 groups (default; goal: cold
//! start within 600 s) or 5,000 in 500 groups (goal: cold start within 1.1× the write-throttle
//! floor).
//!
//! Cold start: wall time until every Ingress shows its load balancer in status, calls and write
//! calls per resource, next to the floors: the client throttles' (per throttle bucket, calls
//! beyond its burst ÷ its rate; the slowest bucket bounds the run), counted over all ELBv2 calls
//! and over the write calls alone, and the latency floor (calls × latency ÷ workers). Every 10 s
//! it prints its progress: Ingresses with status, and the controller's
//! `controller_runtime_reconcile_total` and `workqueue_depth`. Meanwhile a user changes one
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
use crate::report::print_goal;

/// A cluster of Ingress groups and the cold start's goal there.
struct Size {
    groups: usize,
    per_group: usize,
    goal: ColdGoal,
}

enum ColdGoal {
    /// Wall time to status on all, in seconds (issue #19).
    Wall(f64),
    /// Wall time within this many times the write-throttle floor (issue #43).
    WriteThrottle(f64),
}

/// The size `INGRESS_BENCH_SIZE` names (`1000` when unset).
fn size() -> Size {
    match std::env::var("INGRESS_BENCH_SIZE").as_deref() {
        Err(_) | Ok("") | Ok("1000") => Size {
            groups: 100,
            per_group: 10,
            goal: ColdGoal::Wall(600.0),
        },
        Ok("5000") => Size {
            groups: 500,
            per_group: 10,
            goal: ColdGoal::WriteThrottle(1.1),
        },
        Ok(other) => panic!("INGRESS_BENCH_SIZE={other}: expected 1000 or 5000"),
    }
}

/// How often the cold start prints its progress.
const PROGRESS: Duration = Duration::from_secs(10);
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

/// The write-throttle floor: `writes` (service, operation) counted per upstream default bucket,
/// each in the first bucket its service and operation match (as the throttle charges them);
/// per bucket (calls − burst) ÷ rate, the slowest bounding the run. Returns the floor, each
/// bucket's arithmetic, and the writes no default bucket throttles (upstream throttles no
/// `Create*`).
fn write_throttle_floor(writes: &[(Service, String)]) -> (f64, Vec<String>, Vec<String>) {
    let rules = default_rules();
    let mut per_rule = vec![0usize; rules.len()];
    let mut free = Vec::new();
    for (svc, op) in writes {
        let bucket = rules
            .iter()
            .position(|r| r.service == svc.id() && r.operation.is_match(op));
        match bucket {
            Some(i) => per_rule[i] += 1,
            None => free.push(op.clone()),
        }
    }
    let mut floor = 0.0f64;
    let mut lines = Vec::new();
    for (rule, n) in rules.iter().zip(per_rule) {
        if n == 0 {
            continue;
        }
        let secs = n.saturating_sub(rule.burst as usize) as f64 / rule.rate;
        floor = floor.max(secs);
        lines.push(format!(
            "{n} {} writes of /{}/: ({n} - {} burst) / {} per s = {secs:.1} s",
            rule.service,
            rule.operation.as_str(),
            rule.burst,
            rule.rate
        ));
    }
    (floor, lines, free)
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

/// The sum of the samples of `metric` in `registry` whose labels contain all of `labels`.
fn metric_sum(registry: &Registry, metric: &str, labels: &[&str]) -> f64 {
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, registry).unwrap();
    let open = format!("{metric}{{");
    out.lines()
        .filter(|l| l.starts_with(&open) && labels.iter().all(|x| l.contains(x)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The progress the controller's metrics show: reconciles by result, and the queue's depth
/// (all priorities).
fn progress(registry: &Registry) -> String {
    let ingress = r#"controller="ingress""#;
    let total = "controller_runtime_reconcile_total";
    format!(
        "controller_runtime_reconcile_total success {}, error {}, requeue {}; workqueue_depth {}",
        metric_sum(registry, total, &[ingress, r#"result="success""#]),
        metric_sum(registry, total, &[ingress, r#"result="error""#]),
        metric_sum(registry, total, &[ingress, r#"result="requeue""#])
            + metric_sum(registry, total, &[ingress, r#"result="requeue_after""#]),
        metric_sum(registry, "workqueue_depth", &[ingress])
    )
}

async fn run_both(size: Size) {
    let (groups, per_group) = (size.groups, size.per_group);
    let server = super::fixtures::api_server_with_crds().await;
    let client = server.client();
    let t = Instant::now();
    ingress_objects(&client, groups, per_group).await;
    let total = groups * per_group;
    println!(
        "ingress/seed: {total} Ingresses (and as many Services) in {groups} namespaces in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let (fake, vpc) = super::fixtures::fake_account();
    fake.set_latency(LATENCY);
    // Per group: LB, managed SG, listener, one rule and one TG per Ingress; + backend SG.
    let resources = groups * (3 + 2 * per_group) + 1;

    // ---- item 1: cold start
    let mut cold_registry = Registry::default();
    let cfg = config(
        IngressConfig::default().sync_period,
        ControllerMetrics::register(&mut cold_registry),
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
    let last = (0..groups).max_by_key(|g| format!("group{g}")).unwrap();
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
    let mut next_progress = start + PROGRESS;
    loop {
        if Instant::now() >= next_progress {
            println!(
                "ingress/cold progress at {:.0} s: {} of {total} Ingresses with status; {}",
                start.elapsed().as_secs_f64(),
                ingresses_with_status(&client).await,
                progress(&cold_registry)
            );
            next_progress += PROGRESS;
        }
        if user_latency.is_none() {
            if let Some((at, done_then)) = user {
                if ingress_has_status(&ings.get("ing0").await.unwrap()) {
                    user_latency = Some((
                        at.elapsed(),
                        done_then,
                        ingresses_with_status(&client).await,
                    ));
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
    let (write_floor, write_buckets, unthrottled) = write_throttle_floor(&fake.write_calls());
    // Each worker makes its group's calls one after another: calls × latency ÷ workers.
    let serial = calls as f64 * LATENCY.as_secs_f64() / workers as f64;
    let wall_s = wall.as_secs_f64();
    println!(
        "ingress/cold {total} ingresses in {groups} groups, {workers} workers, {} ms/call: {wall_s:.1} s wall to status on all",
        LATENCY.as_millis(),
    );
    match size.goal {
        ColdGoal::Wall(goal) => print_goal("ingress/cold wall", wall_s, "s", goal, ""),
        ColdGoal::WriteThrottle(times) if write_floor > 0.0 => print_goal(
            "ingress/cold wall",
            wall_s,
            "s",
            times * write_floor,
            &format!(" (= {times} x write-throttle floor {write_floor:.1} s)"),
        ),
        ColdGoal::WriteThrottle(times) => println!(
            "ingress/cold wall: {wall_s:.1} s; goal {times} x write-throttle floor not applicable: no write went through a default throttle bucket"
        ),
    }
    let buckets = if write_buckets.is_empty() {
        "no throttled write".to_string()
    } else {
        write_buckets.join("; ")
    };
    let over_write_floor = if write_floor > 0.0 {
        format!("{:.2}", wall_s / write_floor)
    } else {
        "n/a".to_string()
    };
    println!(
        "ingress/cold write-throttle floor {write_floor:.1} s (write calls / upstream's default throttle rates, bursts subtracted; the slowest bucket bounds the run): {buckets}; unthrottled writes {} ({}); wall/write-throttle floor {over_write_floor}",
        unthrottled.len(),
        by_op(&unthrottled),
    );
    println!(
        "ingress/cold throttle floor over all ELBv2 calls {floor:.1} s ({bucket}), wall/throttle floor {:.2}; latency floor {serial:.1} s (calls x latency / workers), wall/latency floor {:.2}",
        wall_s / floor.max(f64::EPSILON),
        wall_s / serial
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
    let passes = succeeded as f64 / groups as f64;
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
    rt.block_on(run_both(size()));
}
