//! Issue #19 item 3 and issue #43, and the TargetGroupBinding reconciler as users run it: the real
//! controller binary (its own process, so its memory is measured alone) against the in-memory
//! API server in this process and a private moto_server. `TGB_PROCESS_SIZE` picks the cluster:
//!
//! - `13k` (default): 13,000 pods (10,000 behind 500 bindings), 3,000 Services, 6,000 Secrets;
//!   goals ready ≤ 10 s, steady RSS ≤ 64 MiB, peak ≤ 96 MiB;
//! - `300k`: 300,000 pods (100,000 behind 5,000 bindings), 30,000 Services, 60,000 Secrets;
//!   goals ready ≤ 5 s, steady RSS ≤ 96 MiB, peak ≤ 128 MiB.
//!
//! Reports the time from process start to `/readyz` passing and to every binding reconciled, the
//! controller's peak (VmHWM) and steady (VmRSS once settled) resident memory next to the goals,
//! then (13k only) the time from a burst of EndpointSlice changes to all targets registered in
//! moto (moto's own latency included: it is a Python server). `TGB_PROCESS_HEAPTRACK=1` runs the
//! controller under heaptrack (its memory figures are then heaptrack's too);
//! `TGB_PROCESS_THROTTLE` replaces the ELBv2 client throttle (`--aws-api-throttle`).

use std::time::{Duration, Instant};

use aws_load_balancer_controller::crd::TargetGroupBinding;
use futures::{stream, StreamExt};
use k8s_openapi::api::core::v1::{Pod, Secret, Service};
use kube::api::{Api, ListParams, PostParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::json;

use crate::process::{heaptrack_wanted, Controller, Launch, MotoAws};
use crate::report::print_goal;
use crate::tgb::{apply_slices, create_running_pod, pod_ip, seed, wait_targets, Shape, NS, SHAPE};

/// A cluster the controller starts in, and the goals there.
struct Size {
    name: &'static str,
    /// The bindings and the pods behind them.
    shape: Shape,
    /// Pods, Services (one per binding among them) and Secrets (about 1 KiB each, like TLS and
    /// token Secrets) in all.
    pods: usize,
    services: usize,
    secrets: usize,
    ready_goal_s: f64,
    steady_goal_mib: f64,
    peak_goal_mib: f64,
    /// Whether the EndpointSlice bursts run once the start is measured. At 5,000 bindings a
    /// burst is at least 5,000 RegisterTargets calls, (5,000 − 20) ÷ 4/s ≈ 21 min under the
    /// default throttle; the `targets` area measures registration instead.
    bursts: bool,
}

const SIZE_13K: Size = Size {
    name: "13k",
    shape: SHAPE,
    pods: 13_000,
    services: 3_000,
    secrets: 6_000,
    ready_goal_s: 10.0,
    steady_goal_mib: 64.0,
    peak_goal_mib: 96.0,
    bursts: true,
};

const SIZE_300K: Size = Size {
    name: "300k",
    shape: Shape {
        bindings: 5_000,
        pods_per: 20,
    },
    pods: 300_000,
    services: 30_000,
    secrets: 60_000,
    ready_goal_s: 5.0,
    steady_goal_mib: 96.0,
    peak_goal_mib: 128.0,
    bursts: false,
};

/// The size `TGB_PROCESS_SIZE` names (`13k` when unset).
fn size() -> Size {
    match std::env::var("TGB_PROCESS_SIZE").as_deref() {
        Err(_) | Ok("") | Ok("13k") => SIZE_13K,
        Ok("300k") => SIZE_300K,
        Ok(other) => panic!("TGB_PROCESS_SIZE={other}: expected 13k or 300k"),
    }
}

/// Requests in flight while seeding the rest of the cluster.
const SEED_CONCURRENCY: usize = 64;
/// Pod IPs per second octet of [`pod_ip`]: the pods behind no binding start at the first
/// second octet the bindings' pods leave free (10.1.0.1 in the 13k cluster).
const IPS_PER_OCTET: usize = 256 * 250;

/// The cluster beyond what the bindings use: pods behind no binding, Services of no binding,
/// Secrets.
async fn rest_of_cluster(client: &kube::Client, size: &Size) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
    let svcs: Api<Service> = Api::namespaced(client.clone(), NS);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    let pp = PostParams::default();
    let first_ip = size.shape.pods().div_ceil(IPS_PER_OCTET) * IPS_PER_OCTET;
    stream::iter(0..size.pods - size.shape.pods())
        .for_each_concurrent(SEED_CONCURRENCY, |i| {
            let pods = pods.clone();
            async move {
                let (name, app) = (format!("other-{i}"), format!("other{}", i % 100));
                create_running_pod(&pods, &name, Some(app.as_str()), &pod_ip(first_ip + i)).await;
            }
        })
        .await;
    stream::iter(0..size.services - size.shape.bindings)
        .for_each_concurrent(SEED_CONCURRENCY, |i| {
            let (svcs, pp) = (svcs.clone(), pp.clone());
            async move {
                let svc: Service = serde_json::from_value(json!({
                    "metadata": { "name": format!("other-{i}") },
                    "spec": { "selector": { "app": format!("other{}", i % 100) },
                              "ports": [{ "port": 80, "targetPort": 8080 }] }
                }))
                .expect("svc");
                svcs.create(&pp, &svc).await.expect("svc");
            }
        })
        .await;
    let blob = "x".repeat(768);
    stream::iter(0..size.secrets)
        .for_each_concurrent(SEED_CONCURRENCY, |i| {
            let (secrets, pp, blob) = (secrets.clone(), pp.clone(), blob.clone());
            async move {
                let secret: Secret = serde_json::from_value(json!({
                    "metadata": { "name": format!("secret-{i}") },
                    "stringData": { "token": blob }
                }))
                .expect("secret");
                secrets.create(&pp, &secret).await.expect("secret");
            }
        })
        .await;
}

pub fn run() {
    let size = size();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let shape = size.shape;
        let aws = MotoAws::start().await;
        let elb = aws.elb.clone();

        let server = TestApiServer::start(Options::default())
            .await
            .expect("server");
        let client = server.client();
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        let t = Instant::now();
        let arns = seed(&client, elb.as_ref(), &aws.vpc_id, shape).await;
        apply_slices(&client, shape, 0).await;
        let bound = t.elapsed().as_secs_f64();
        rest_of_cluster(&client, &size).await;
        let seeded = t.elapsed().as_secs_f64();
        println!(
            "tgb-process/seed ({}): {} target groups in moto; {} bindings, {} pods ({} behind bindings), {} Services, {} Secrets in {seeded:.1} s ({bound:.1} s for the bindings' part; {:.0} objects/s)",
            size.name,
            shape.bindings,
            shape.bindings,
            size.pods,
            shape.pods(),
            size.services,
            size.secrets,
            (shape.bindings + size.pods + size.services + size.secrets) as f64 / seeded
        );

        let heaptrack = heaptrack_wanted("TGB_PROCESS_HEAPTRACK");
        let mut ctl = Controller::start(Launch {
            area: "tgb-process",
            dir: dir.path(),
            kubeconfig: &kubeconfig,
            endpoints: &aws.endpoints,
            vpc_id: &aws.vpc_id,
            // Upstream's default client throttle for Register/DeregisterTargets (4/s, burst 20)
            // alone makes 500 target groups take ~120 s; `TGB_PROCESS_THROTTLE` overrides it
            // (e.g. `elasticloadbalancing:RegisterTargets|DeregisterTargets=100:200`).
            extra_args: std::env::var("TGB_PROCESS_THROTTLE")
                .map(|t| vec![format!("--aws-api-throttle={t}")])
                .unwrap_or_default(),
            heaptrack,
        });
        let to_ready = ctl.wait_ready().await.as_secs_f64();
        ctl.mem("at /readyz");
        let tgbs: Api<TargetGroupBinding> = Api::namespaced(client.clone(), NS);
        // Listing every binding costs the API server (in this process, on the same 2 cores as
        // the controller): at 5,000 bindings ask every 500 ms.
        let poll = Duration::from_millis((shape.bindings as u64 / 10).max(50));
        let patience = Duration::from_secs(600 + shape.bindings as u64 / 5);
        loop {
            let list = tgbs.list(&ListParams::default()).await.expect("list");
            let done = list.items.iter().filter(|b| {
                b.status.as_ref().and_then(|s| s.observed_generation) == b.metadata.generation
            });
            if done.count() == shape.bindings {
                break;
            }
            assert!(ctl.started.elapsed() < patience, "bindings never settled");
            tokio::time::sleep(poll).await;
        }
        let to_settled = ctl.started.elapsed().as_secs_f64();
        tokio::time::sleep(Duration::from_secs(5)).await;
        let (steady, peak) = ctl.mem("5 s after every binding reconciled (steady)");
        let mib = |k: u64| k as f64 / 1024.0;
        let caveat = ctl.rss_caveat();
        print_goal("tgb-process/startup ready", to_ready, "s", size.ready_goal_s, "");
        print_goal(
            "tgb-process/startup steady RSS",
            mib(steady),
            "MiB",
            size.steady_goal_mib,
            caveat,
        );
        print_goal(
            "tgb-process/startup peak RSS",
            mib(peak),
            "MiB",
            size.peak_goal_mib,
            caveat,
        );
        println!(
            "tgb-process/startup: all {} bindings reconciled after {to_settled:.2} s",
            shape.bindings
        );

        if size.bursts {
            let start = Instant::now();
            apply_slices(&client, shape, shape.pods_per).await;
            let took = wait_targets(elb.as_ref(), &arns, shape.pods_per, start).await;
            println!(
                "tgb-process/burst-up: {} endpoints across {} slices -> all registered in moto after {:.1} s",
                shape.pods(),
                shape.bindings,
                took.as_secs_f64()
            );
            ctl.mem("after registration");
            let start = Instant::now();
            apply_slices(&client, shape, shape.pods_per - 5).await;
            let took = wait_targets(elb.as_ref(), &arns, shape.pods_per - 5, start).await;
            println!(
                "tgb-process/burst-down: {} endpoints removed -> all deregistered in moto after {:.1} s",
                shape.bindings * 5,
                took.as_secs_f64()
            );
            ctl.mem("end");
        } else {
            println!(
                "tgb-process/bursts: skipped at {} ({} target groups: at least {} RegisterTargets calls, throttle-bound; the `targets` area measures registration)",
                size.name,
                shape.bindings,
                shape.bindings
            );
        }
        ctl.stop();
        server.stop().await;
        drop(aws);
    });
}
