//! Issue #19 item 4: pod readiness gates in a rollout. 300 pods behind one ip TargetGroupBinding
//! are replaced in waves of 75 (a Deployment's default 25 % surge), once without and once with
//! the binding's readiness gate, through the in-process TargetGroupBinding reconciler (default
//! settings) and FakeAws. This bench plays the Deployment controller, the kubelet (containers
//! ready `START` after creation; Ready once every gate is True) and the EndpointSlice controller
//! (not-ready endpoints published for gated pods); a task plays the load balancer, turning each
//! registered target healthy `HEALTHY_AFTER` after it first sees it (polled every 50 ms).
//! Reports gated ÷ ungated wall time (goal ≤ 1.2; floor (START + HEALTHY_AFTER) ÷ START, the
//! health check alone), endpoint published → target registered p99 (goal ≤ 2 s) and target
//! healthy → gate True p99 (goal ≤ 5 s).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::fake::spec;
use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::{ElbV2, Tags, TargetHealthState};
use aws_load_balancer_controller::controller::tgb::{self, TgbConfig};
use aws_load_balancer_controller::crd::TargetGroupBinding;
use futures::{stream, StreamExt};
use k8s_openapi::api::core::v1::{Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const PODS: usize = 300;
const WAVE: usize = 75;
const START: Duration = Duration::from_secs(10);
const HEALTHY_AFTER: Duration = Duration::from_secs(1);
const NS: &str = "default";
const GATE: &str = "target-health.elbv2.k8s.aws/b0";

type Times = Arc<Mutex<HashMap<String, Instant>>>;

/// The EndpointSlice of `s0` as the bench's endpoints controller keeps it: pod → (ip, ready).
#[derive(Clone, Default)]
struct Endpoints {
    eps: Arc<Mutex<BTreeMap<String, (String, bool)>>>,
    published: Times,
}

impl Endpoints {
    fn set(&self, pod: &str, ip: &str, ready: bool) {
        self.eps
            .lock()
            .unwrap()
            .insert(pod.into(), (ip.into(), ready));
    }

    fn remove(&self, pod: &str) {
        self.eps.lock().unwrap().remove(pod);
    }

    async fn publish(&self, client: &kube::Client) {
        let (eps, ips): (Vec<_>, Vec<String>) = self
            .eps
            .lock()
            .unwrap()
            .iter()
            .map(|(pod, (ip, ready))| {
                (
                    json!({ "addresses": [ip], "conditions": { "ready": ready },
                            "nodeName": "node-a", "targetRef": { "kind": "Pod", "name": pod } }),
                    ip.clone(),
                )
            })
            .unzip();
        let slice = json!({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": { "name": "s0-abc", "namespace": NS,
                          "labels": { "kubernetes.io/service-name": "s0" } },
            "addressType": "IPv4",
            "ports": [{ "name": "", "port": 8080 }],
            "endpoints": eps,
        });
        Api::<EndpointSlice>::namespaced(client.clone(), NS)
            .patch(
                "s0-abc",
                &PatchParams::apply("bench").force(),
                &Patch::Apply(&slice),
            )
            .await
            .expect("slice");
        let now = Instant::now();
        let mut published = self.published.lock().unwrap();
        for ip in ips {
            published.entry(ip).or_insert(now);
        }
    }
}

fn ip(n: usize) -> String {
    format!("10.0.{}.{}", n / 250, n % 250 + 1)
}

async fn create_pods(pods: &Api<Pod>, names: &[(String, String)], gated: bool, ready: bool) {
    stream::iter(names.iter().cloned())
        .for_each_concurrent(16, |(name, _)| {
            let pods = pods.clone();
            async move {
                let mut spec = json!({ "nodeName": "node-a", "containers": [{ "name": "c", "image": "x" }] });
                if gated {
                    spec["readinessGates"] = json!([{ "conditionType": GATE }]);
                }
                let pod: Pod = serde_json::from_value(
                    json!({ "metadata": { "name": name, "labels": { "app": "web" } }, "spec": spec }),
                )
                .expect("pod");
                pods.create(&PostParams::default(), &pod).await.expect("pod");
            }
        })
        .await;
    if ready {
        containers_ready(pods, names, true).await;
    }
}

/// The kubelet: containers ready, pod IP, and Ready as given.
async fn containers_ready(pods: &Api<Pod>, names: &[(String, String)], ready: bool) {
    stream::iter(names.iter().cloned())
        .for_each_concurrent(16, |(name, ip)| {
            let pods = pods.clone();
            async move {
                let st = json!({ "status": { "podIP": ip, "conditions": [
                    { "type": "ContainersReady", "status": "True" },
                    { "type": "Ready", "status": if ready { "True" } else { "False" } } ] } });
                pods.patch_status(&name, &PatchParams::default(), &Patch::Strategic(&st))
                    .await
                    .expect("pod status");
            }
        })
        .await;
}

/// The load balancer: every target it sees not yet healthy turns healthy `HEALTHY_AFTER` later.
/// `calls` counts its own DescribeTargetHealth calls (FakeAws logs them with the controller's).
async fn health_checker(
    fake: Arc<FakeAws>,
    arn: String,
    (seen, healthy): (Times, Times),
    calls: Arc<AtomicUsize>,
) {
    loop {
        let now = Instant::now();
        calls.fetch_add(1, Ordering::Relaxed);
        for t in fake
            .describe_target_health(&arn, &[])
            .await
            .unwrap_or_default()
        {
            // A target group no listener uses reports `unused`; this one plays a used one.
            if matches!(
                t.health.state,
                TargetHealthState::Healthy | TargetHealthState::Draining
            ) {
                continue;
            }
            let first = *seen
                .lock()
                .unwrap()
                .entry(t.target.id.clone())
                .or_insert(now);
            if now.duration_since(first) >= HEALTHY_AFTER {
                let _ = fake.set_target_health(&arn, &t.target, TargetHealthState::Healthy, None);
                healthy
                    .lock()
                    .unwrap()
                    .entry(t.target.id.clone())
                    .or_insert(now);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn p99(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * 0.99).ceil() as usize).clamp(1, v.len()) - 1]
}

/// One rollout: wall s, endpoint → register p99 s, healthy → gate p99 s, and the controller's
/// DescribeTargetHealth calls.
struct Rollout {
    wall: f64,
    register: f64,
    gate: f64,
    describes: usize,
}

async fn rollout(gated: bool) -> Rollout {
    let server = super::fixtures::api_server_with_crds().await;
    let client = server.client();
    let fake = Arc::new(FakeAws::new());
    let vpc = fake.add_vpc("10.0.0.0/8", Tags::new());
    let arn = fake
        .create_target_group((&spec::ip_target_group("tg-web", 80)).into(), &vpc)
        .await
        .expect("tg")
        .arn;
    let node: Node = serde_json::from_value(json!({
        "metadata": { "name": "node-a" },
        "status": { "conditions": [{ "type": "Ready", "status": "True" }] }
    }))
    .unwrap();
    Api::<Node>::all(client.clone())
        .create(&PostParams::default(), &node)
        .await
        .unwrap();
    let svc: Service = serde_json::from_value(json!({
        "metadata": { "name": "s0" },
        "spec": { "selector": { "app": "web" }, "ports": [{ "port": 80, "targetPort": 8080 }] }
    }))
    .unwrap();
    Api::<Service>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &svc)
        .await
        .unwrap();
    let tgb: TargetGroupBinding = serde_json::from_value(json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
        "metadata": { "name": "b0" },
        "spec": { "targetGroupARN": arn, "targetType": "ip",
                  "serviceRef": { "name": "s0", "port": 80 } }
    }))
    .unwrap();
    Api::<TargetGroupBinding>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &tgb)
        .await
        .unwrap();

    // The old ReplicaSet: PODS ready pods, registered and healthy.
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
    let old: Vec<(String, String)> = (0..PODS).map(|i| (format!("old-{i}"), ip(i))).collect();
    create_pods(&pods, &old, false, true).await;
    let eps = Endpoints::default();
    for (name, ip) in &old {
        eps.set(name, ip, true);
    }
    eps.publish(&client).await;
    let token = CancellationToken::new();
    let ctl = tokio::spawn(tgb::run(
        client.clone(),
        fake.clone(),
        fake.clone(),
        TgbConfig::default(),
        token.clone(),
    ));
    let (seen, healthy): (Times, Times) = Default::default();
    let checker_calls = Arc::new(AtomicUsize::new(0));
    let checker = tokio::spawn(health_checker(
        fake.clone(),
        arn.clone(),
        (seen.clone(), healthy.clone()),
        checker_calls.clone(),
    ));
    let describes = || {
        fake.count("DescribeTargetHealth") as isize - checker_calls.load(Ordering::Relaxed) as isize
    };
    while healthy.lock().unwrap().len() < PODS {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The rollout.
    let describes_before = describes();
    let start = Instant::now();
    let gate_true: Times = Default::default();
    for w in 0..PODS / WAVE {
        let new: Vec<(String, String)> = (w * WAVE..(w + 1) * WAVE)
            .map(|i| (format!("new-{i}"), ip(PODS + i)))
            .collect();
        create_pods(&pods, &new, gated, false).await;
        tokio::time::sleep(START).await;
        containers_ready(&pods, &new, !gated).await;
        for (name, ip) in &new {
            eps.set(name, ip, !gated);
        }
        eps.publish(&client).await;
        if gated {
            // The kubelet: Ready once the gate is True; the endpoints controller follows.
            let mut waiting: HashMap<String, String> = new.iter().cloned().collect();
            while !waiting.is_empty() {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let list = pods
                    .list(&ListParams::default().labels("app=web"))
                    .await
                    .expect("pods");
                let now = Instant::now();
                let mut flipped = Vec::new();
                for p in list.items {
                    let name = p.metadata.name.clone().unwrap_or_default();
                    let gate = p
                        .status
                        .as_ref()
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|c| c.iter().any(|c| c.type_ == GATE && c.status == "True"));
                    if gate {
                        if let Some(ip) = waiting.remove(&name) {
                            gate_true.lock().unwrap().insert(ip.clone(), now);
                            flipped.push((name, ip));
                        }
                    }
                }
                if !flipped.is_empty() {
                    containers_ready(&pods, &flipped, true).await;
                    for (name, ip) in &flipped {
                        eps.set(name, ip, true);
                    }
                    eps.publish(&client).await;
                }
            }
        }
        // The old pods this wave replaces go.
        let gone: Vec<String> = (w * WAVE..(w + 1) * WAVE)
            .map(|i| format!("old-{i}"))
            .collect();
        for name in &gone {
            eps.remove(name);
        }
        eps.publish(&client).await;
        stream::iter(gone)
            .for_each_concurrent(16, |name| {
                let pods = pods.clone();
                async move {
                    let _ = pods.delete(&name, &DeleteParams::default()).await;
                }
            })
            .await;
    }
    let wall = start.elapsed().as_secs_f64();
    let controller_describes = (describes() - describes_before).max(0) as usize;
    // Let the last registrations land before reading the times.
    let new_ips: Vec<String> = (PODS..2 * PODS).map(ip).collect();
    while new_ips
        .iter()
        .any(|i| !seen.lock().unwrap().contains_key(i))
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (published, seen, healthy, gate_true) = (
        eps.published.lock().unwrap().clone(),
        seen.lock().unwrap().clone(),
        healthy.lock().unwrap().clone(),
        gate_true.lock().unwrap().clone(),
    );
    let since = |a: &HashMap<String, Instant>, b: &HashMap<String, Instant>| -> Vec<f64> {
        new_ips
            .iter()
            .filter_map(|i| {
                Some(
                    b.get(i)?
                        .saturating_duration_since(*a.get(i)?)
                        .as_secs_f64(),
                )
            })
            .collect()
    };
    let register = p99(since(&published, &seen));
    let gate = p99(since(&healthy, &gate_true));
    checker.abort();
    token.cancel();
    let _ = ctl.await;
    server.stop().await;
    Rollout {
        wall,
        register,
        gate,
        describes: controller_describes,
    }
}

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let ungated = rt.block_on(rollout(false));
    let with_gates = rt.block_on(rollout(true));
    let (plain, plain_reg) = (ungated.wall, ungated.register);
    let (gated, gated_reg, gate) = (with_gates.wall, with_gates.register, with_gates.gate);
    let floor = (START + HEALTHY_AFTER).as_secs_f64() / START.as_secs_f64();
    println!(
        "gates/rollout {PODS} pods in waves of {WAVE}, containers ready {} s after create, targets healthy {} s after registration, requeue {} s: ungated {plain:.1} s, gated {gated:.1} s; gated/ungated {:.2} (goal <= 1.2; floor {floor:.2}, the health check alone)",
        START.as_secs_f64(),
        HEALTHY_AFTER.as_secs_f64(),
        TgbConfig::default().requeue.as_secs_f64(),
        gated / plain
    );
    println!(
        "gates/latency endpoint published -> target registered p99: ungated {plain_reg:.2} s, gated {gated_reg:.2} s (goal <= 2 s, ratio {:.2}); target healthy -> gate True p99 {gate:.2} s (goal <= 5 s, ratio {:.2}) (50 ms polling on both sides)",
        plain_reg.max(gated_reg) / 2.0,
        gate / 5.0
    );
    println!(
        "gates/aws DescribeTargetHealth calls by the controller during the rollout: ungated {}, gated {} ({:.3} per new target)",
        ungated.describes,
        with_gates.describes,
        with_gates.describes as f64 / PODS as f64
    );
}
