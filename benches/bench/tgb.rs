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

/// How many ip TargetGroupBindings there are and how many pods stand behind each: what [`seed`]
/// and [`apply_slices`] build (one Service, target group and EndpointSlice per binding).
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub bindings: usize,
    pub pods_per: usize,
}

impl Shape {
    /// Pods behind all the bindings.
    pub fn pods(self) -> usize {
        self.bindings * self.pods_per
    }
}

/// This area's cluster, also `tgb-process`'s default one: 10,000 pods behind 500 bindings.
pub const SHAPE: Shape = Shape {
    bindings: 500,
    pods_per: 20,
};
pub const NS: &str = "default";
/// Requests in flight while seeding the API server (and target groups in moto or the fake):
/// the seed is set up before anything is measured, so it only has to be quick.
const SEED_CONCURRENCY: usize = 64;

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

/// Pod IPs in 10.0.0.0/8 that [`pod_ip`] hands out: 250 per /24 (hosts .1 to .250).
pub const POD_IPS: usize = 256 * 256 * 250;

/// The `n`th pod IP in 10.0.0.0/8, 250 per /24: 10.0.0.1 … 10.0.0.250, 10.0.1.1 …, 10.1.0.1
/// after 64,000; unique for every `n` below [`POD_IPS`].
pub fn pod_ip(n: usize) -> String {
    assert!(n < POD_IPS, "pod {n} is beyond 10.0.0.0/8");
    format!("10.{}.{}.{}", n / (256 * 250), (n / 250) % 256, n % 250 + 1)
}

/// The IP of pod `p` of binding `b`: the first `shape.pods()` of [`pod_ip`].
fn ip(shape: Shape, b: usize, p: usize) -> String {
    pod_ip(b * shape.pods_per + p)
}

fn slice(shape: Shape, b: usize, pods: usize) -> serde_json::Value {
    let eps: Vec<_> = (0..pods)
        .map(|p| {
            json!({ "addresses": [ip(shape, b, p)], "conditions": { "ready": true },
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

/// Server-side applies every binding's EndpointSlice with its first `pods` pods, all ready.
pub async fn apply_slices(client: &kube::Client, shape: Shape, pods: usize) {
    let api: Api<EndpointSlice> = Api::namespaced(client.clone(), NS);
    stream::iter(0..shape.bindings)
        .for_each_concurrent(32, |b| {
            let api = api.clone();
            async move {
                let pp = PatchParams::apply("bench").force();
                api.patch(
                    &format!("s{b}-abc"),
                    &pp,
                    &Patch::Apply(&slice(shape, b, pods)),
                )
                .await
                .expect("slice");
            }
        })
        .await;
}

/// Waits until every target group holds exactly `n` targets; returns the time taken.
pub async fn wait_targets(elb: &dyn ElbV2, arns: &[String], n: usize, start: Instant) -> Duration {
    wait_targets_every(
        elb,
        arns,
        n,
        start,
        Duration::from_millis(10),
        Duration::from_secs(300),
    )
    .await
}

/// [`wait_targets`], asking again every `poll` about the target groups not there yet (each
/// pass asks once per such group, so a long interval keeps the polling off a slow AWS fake),
/// and failing after `patience` from `start`.
pub async fn wait_targets_every(
    elb: &dyn ElbV2,
    arns: &[String],
    n: usize,
    start: Instant,
    poll: Duration,
    patience: Duration,
) -> Duration {
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
        assert!(start.elapsed() < patience, "targets did not converge");
        if !pending.is_empty() {
            tokio::time::sleep(poll).await;
        }
    }
    start.elapsed()
}

/// Creates the CRDs, one Ready node, and per binding a target group (in `elb`), a Service,
/// `shape.pods_per` running pods and the ip TargetGroupBinding; returns the target groups' ARNs
/// in binding order.
pub async fn seed(client: &kube::Client, elb: &dyn ElbV2, vpc: &str, shape: Shape) -> Vec<String> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in all_crds() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("crd");
    }
    seed_bindings(client, elb, vpc, shape, None).await
}

/// With the CRDs in place: the Ready node `node-a` (with `provider_id`, which instance targets
/// need), and per binding `b{i}` a target group `tg-{i}` (in `elb`), a Service `s{i}`,
/// `shape.pods_per` running pods on `node-a` and the ip TargetGroupBinding; returns the target
/// groups' ARNs in binding order.
pub async fn seed_bindings(
    client: &kube::Client,
    elb: &dyn ElbV2,
    vpc: &str,
    shape: Shape,
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
    // In binding order (`buffered`, not `buffer_unordered`): binding b's ARN is arns[b].
    let arns: Vec<String> = stream::iter(0..shape.bindings)
        .map(|b| async move {
            elb.create_target_group((&spec::ip_target_group(&format!("tg-{b}"), 80)).into(), vpc)
                .await
                .expect("tg")
                .arn
        })
        .buffered(16)
        .collect()
        .await;
    let svcs: Api<Service> = Api::namespaced(client.clone(), NS);
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(client.clone(), NS);
    stream::iter(0..shape.bindings)
        .for_each_concurrent(SEED_CONCURRENCY, |b| {
            let svcs = svcs.clone();
            async move {
                let svc: Service = serde_json::from_value(json!({
                    "metadata": { "name": format!("s{b}") },
                    "spec": { "ports": [{ "port": 80, "targetPort": 8080 }] }
                }))
                .expect("svc");
                svcs.create(&PostParams::default(), &svc)
                    .await
                    .expect("svc");
            }
        })
        .await;
    stream::iter(0..shape.pods())
        .for_each_concurrent(SEED_CONCURRENCY, |n| {
            let pods = pods.clone();
            let (b, p) = (n / shape.pods_per, n % shape.pods_per);
            async move {
                create_running_pod(&pods, &format!("p{b}-{p}"), None, &ip(shape, b, p)).await
            }
        })
        .await;
    stream::iter(0..shape.bindings)
        .for_each_concurrent(SEED_CONCURRENCY, |b| {
            let (tgbs, arn) = (tgbs.clone(), arns[b].clone());
            async move {
                let tgb: TargetGroupBinding = serde_json::from_value(json!({
                    "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
                    "metadata": { "name": format!("b{b}") },
                    "spec": { "targetGroupARN": arn, "targetType": "ip",
                              "serviceRef": { "name": format!("s{b}"), "port": 80 } }
                }))
                .expect("tgb");
                tgbs.create(&PostParams::default(), &tgb)
                    .await
                    .expect("tgb");
            }
        })
        .await;
    arns
}

/// Creates pod `name` on node-a (labelled `app: <app>` when given) and sets its status as the
/// kubelet would: running at `ip`, containers ready, Ready. Two requests: the API server drops
/// the status a pod is created with (it starts `Pending`), as the real one does.
pub async fn create_running_pod(pods: &Api<Pod>, name: &str, app: Option<&str>, ip: &str) {
    let labels = app
        .map(|a| json!({ "app": a }))
        .unwrap_or_else(|| json!({}));
    let pod: Pod = serde_json::from_value(json!({
        "metadata": { "name": name, "labels": labels },
        "spec": { "nodeName": "node-a", "containers": [{ "name": "c", "image": "x" }] }
    }))
    .expect("pod");
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("pod");
    let st = json!({ "status": { "podIP": ip, "conditions": [
        { "type": "ContainersReady", "status": "True" }, { "type": "Ready", "status": "True" } ] } });
    pods.patch_status(name, &PatchParams::default(), &Patch::Merge(&st))
        .await
        .expect("pod status");
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
        let arns = seed(&client, fake.as_ref(), &vpc, SHAPE).await;
        apply_slices(&client, SHAPE, 0).await;
        println!(
            "tgb/seed: {} bindings, {} pods in {:.2} s",
            SHAPE.bindings,
            SHAPE.pods(),
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
            if done.count() == SHAPE.bindings {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        println!(
            "tgb/startup: {} bindings reconciled (caches synced, finalizers, status) in {:.2} s (concurrency {concurrency})",
            SHAPE.bindings,
            start.elapsed().as_secs_f64()
        );

        fake.clear_calls();
        let start = Instant::now();
        apply_slices(&client, SHAPE, SHAPE.pods_per).await;
        let pushed = start.elapsed();
        let took = wait_targets(fake.as_ref(), &arns, SHAPE.pods_per, start).await;
        println!(
            "tgb/burst-up: {} endpoints added across {} slices (written in {:.2} s) -> all registered after {:.2} s; RegisterTargets requests: {}",
            SHAPE.pods(),
            SHAPE.bindings,
            pushed.as_secs_f64(),
            took.as_secs_f64(),
            fake.count("RegisterTargets")
        );
        let after = mem("after registration");

        fake.clear_calls();
        let start = Instant::now();
        apply_slices(&client, SHAPE, SHAPE.pods_per - 5).await;
        let took = wait_targets(fake.as_ref(), &arns, SHAPE.pods_per - 5, start).await;
        println!(
            "tgb/burst-down: {} endpoints removed -> all deregistered after {:.2} s; DeregisterTargets requests: {}",
            SHAPE.bindings * 5,
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
