//! TargetGroupBinding controller at scale: 10,000 pods behind 500 bindings on the in-memory
//! API server and AWS fake. Measures the time from a burst of EndpointSlice changes to all
//! (de)registrations done, and resident memory.
//!
//! The API server runs in this process too, so memory is reported as the process figure and
//! the growth over the baseline taken once the server holds all objects.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::fake::spec;
use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::{ElbV2, Tags};
use aws_load_balancer_controller::controller::tgb::{self, TgbConfig};
use aws_load_balancer_controller::crd::{all_crds, TargetGroupBinding};
use futures::{stream, StreamExt};
use k8s_openapi::api::core::v1::{Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;

pub const BINDINGS: usize = 500;
pub const PODS_PER: usize = 20;
pub const NS: &str = "default";

pub fn proc_kib(field: &str) -> u64 {
    proc_status_kib("self", field)
}

/// A `/proc/<pid>/status` field in KiB (0 when unreadable).
pub fn proc_status_kib(pid: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn mem(label: &str) -> u64 {
    let rss = proc_kib("VmRSS:");
    println!(
        "tgb/memory {label}: VmRSS {:.1} MiB, VmHWM {:.1} MiB",
        rss as f64 / 1024.0,
        proc_kib("VmHWM:") as f64 / 1024.0
    );
    rss
}

fn ip(b: usize, p: usize) -> String {
    let n = b * PODS_PER + p;
    format!("10.0.{}.{}", n / 250, n % 250 + 1)
}

fn slice(b: usize, pods: usize) -> serde_json::Value {
    let eps: Vec<_> = (0..pods)
        .map(|p| {
            json!({ "addresses": [ip(b, p)], "conditions": { "ready": true },
                    "targetRef": { "kind": "Pod", "name": format!("p{b}-{p}") } })
        })
        .collect();
    json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": { "name": format!("s{b}-abc"), "namespace": NS,
                      "labels": { "kubernetes.io/service-name": format!("s{b}") } },
        "addressType": "IPv4",
        "ports": [{ "name": "", "port": 8080 }],
        "endpoints": eps,
    })
}

pub async fn apply_slices(client: &kube::Client, pods: usize) {
    apply_slices_of(client, BINDINGS, pods).await
}

/// The EndpointSlice of each of the first `bindings` Services with its first `pods` pods ready.
pub async fn apply_slices_of(client: &kube::Client, bindings: usize, pods: usize) {
    let api: Api<EndpointSlice> = Api::namespaced(client.clone(), NS);
    stream::iter(0..bindings)
        .for_each_concurrent(32, |b| {
            let api = api.clone();
            async move {
                let pp = PatchParams::apply("bench").force();
                api.patch(&format!("s{b}-abc"), &pp, &Patch::Apply(&slice(b, pods)))
                    .await
                    .expect("slice");
            }
        })
        .await;
}

/// Waits until every target group holds exactly `n` targets; returns the time taken.
pub async fn wait_targets(elb: &dyn ElbV2, arns: &[String], n: usize, start: Instant) -> Duration {
    let mut pending: Vec<&String> = arns.iter().collect();
    while !pending.is_empty() {
        let mut still = Vec::new();
        for arn in pending {
            if elb
                .describe_target_health(arn, &[])
                .await
                .expect("health")
                .len()
                != n
            {
                still.push(arn);
            }
        }
        pending = still;
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "targets did not converge"
        );
        if !pending.is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    start.elapsed()
}

/// Creates the CRDs, one Ready node, and per binding a target group (in `elb`), a Service,
/// `PODS_PER` running pods and the ip TargetGroupBinding.
pub async fn seed(client: &kube::Client, elb: &dyn ElbV2, vpc: &str) -> Vec<String> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in all_crds() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("crd");
    }
    seed_bindings(client, elb, vpc, BINDINGS, PODS_PER, None).await
}

/// With the CRDs in place: the Ready node `node-a` (with `provider_id`, which instance targets
/// need), and per binding `b{i}` (`bindings` of them) a target group `tg-{i}` (in `elb`), a
/// Service `s{i}`, `pods_per` running pods on `node-a` and the ip TargetGroupBinding; returns
/// the target-group ARNs.
pub async fn seed_bindings(
    client: &kube::Client,
    elb: &dyn ElbV2,
    vpc: &str,
    bindings: usize,
    pods_per: usize,
    provider_id: Option<&str>,
) -> Vec<String> {
    let node: Node = serde_json::from_value(json!({
        "metadata": { "name": "node-a" },
        "spec": { "providerID": provider_id },
        "status": { "conditions": [{ "type": "Ready", "status": "True" }] }
    }))
    .expect("node");
    Api::<Node>::all(client.clone())
        .create(&PostParams::default(), &node)
        .await
        .expect("node");
    let mut arns = Vec::new();
    for b in 0..bindings {
        let tg = elb
            .create_target_group((&spec::ip_target_group(&format!("tg-{b}"), 80)).into(), vpc)
            .await
            .expect("tg");
        arns.push(tg.arn);
    }
    let svcs: Api<Service> = Api::namespaced(client.clone(), NS);
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(client.clone(), NS);
    stream::iter(0..bindings)
        .for_each_concurrent(16, |b| {
            let (svcs, pods, tgbs, arn) = (svcs.clone(), pods.clone(), tgbs.clone(), arns[b].clone());
            async move {
                let svc: Service = serde_json::from_value(json!({
                    "metadata": { "name": format!("s{b}") },
                    "spec": { "ports": [{ "port": 80, "targetPort": 8080 }] }
                }))
                .expect("svc");
                svcs.create(&PostParams::default(), &svc).await.expect("svc");
                for p in 0..pods_per {
                    let name = format!("p{b}-{p}");
                    let pod: Pod = serde_json::from_value(json!({
                        "metadata": { "name": name },
                        "spec": { "nodeName": "node-a", "containers": [{ "name": "c", "image": "x" }] }
                    }))
                    .expect("pod");
                    pods.create(&PostParams::default(), &pod).await.expect("pod");
                    let st = json!({ "status": { "podIP": ip(b, p), "conditions": [
                        { "type": "ContainersReady", "status": "True" }, { "type": "Ready", "status": "True" } ] } });
                    pods.patch_status(&name, &PatchParams::default(), &Patch::Merge(&st))
                        .await
                        .expect("pod status");
                }
                let tgb: TargetGroupBinding = serde_json::from_value(json!({
                    "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
                    "metadata": { "name": format!("b{b}") },
                    "spec": { "targetGroupARN": arn, "targetType": "ip",
                              "serviceRef": { "name": format!("s{b}"), "port": 80 } }
                }))
                .expect("tgb");
                tgbs.create(&PostParams::default(), &tgb).await.expect("tgb");
            }
        })
        .await;
    arns
}

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let server = TestApiServer::start(Options::default()).await.expect("server");
        let client = server.client();
        let fake = Arc::new(FakeAws::new());
        let t = Instant::now();
        let vpc = fake.add_vpc("10.0.0.0/8", Tags::new());
        let arns = seed(&client, fake.as_ref(), &vpc).await;
        apply_slices(&client, 0).await;
        println!(
            "tgb/seed: {BINDINGS} bindings, {} pods in {:.2} s",
            BINDINGS * PODS_PER,
            t.elapsed().as_secs_f64()
        );
        let base = mem("baseline (server holds all objects, controller not started)");

        let token = CancellationToken::new();
        let cfg = TgbConfig::default();
        let concurrency = cfg.concurrency;
        let task = tokio::spawn(tgb::run(
            client.clone(),
            fake.clone(),
            fake.clone(),
            cfg,
            token.clone(),
        ));
        let tgbs: Api<TargetGroupBinding> = Api::namespaced(client.clone(), NS);
        let start = Instant::now();
        loop {
            let list = tgbs.list(&ListParams::default()).await.expect("list");
            let done = list.items.iter().filter(|b| {
                b.status.as_ref().and_then(|s| s.observed_generation) == b.metadata.generation
            });
            if done.count() == BINDINGS {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        println!(
            "tgb/startup: {BINDINGS} bindings reconciled (caches synced, finalizers, status) in {:.2} s (concurrency {concurrency})",
            start.elapsed().as_secs_f64()
        );

        fake.clear_calls();
        let start = Instant::now();
        apply_slices(&client, PODS_PER).await;
        let pushed = start.elapsed();
        let took = wait_targets(fake.as_ref(), &arns, PODS_PER, start).await;
        println!(
            "tgb/burst-up: {} endpoints added across {BINDINGS} slices (written in {:.2} s) -> all registered after {:.2} s; RegisterTargets requests: {}",
            BINDINGS * PODS_PER,
            pushed.as_secs_f64(),
            took.as_secs_f64(),
            fake.count("RegisterTargets")
        );
        let after = mem("after registration");

        fake.clear_calls();
        let start = Instant::now();
        apply_slices(&client, PODS_PER - 5).await;
        let took = wait_targets(fake.as_ref(), &arns, PODS_PER - 5, start).await;
        println!(
            "tgb/burst-down: {} endpoints removed -> all deregistered after {:.2} s; DeregisterTargets requests: {}",
            BINDINGS * 5,
            took.as_secs_f64(),
            fake.count("DeregisterTargets")
        );
        mem("end");
        println!(
            "tgb/memory growth with the controller running: {:.1} MiB (includes API server growth: events, watch history)",
            (after.saturating_sub(base)) as f64 / 1024.0
        );
        token.cancel();
        let _ = task.await;
        server.stop().await;
    });
}
