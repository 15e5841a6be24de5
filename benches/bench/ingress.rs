//! Cold start of the Ingress controller: 200 Ingresses in 20 explicit groups already in the
//! (in-memory) API server, the controller started against FakeAws with realistic per-call
//! latency and upstream's default ELBv2 throttle and retries; wall time until every Ingress
//! shows its load balancer in status, AWS calls per resource, and writes while idle after.

use std::time::{Duration, Instant};

use aws_load_balancer_controller::controller::ingress::{self, IngressConfig};
use aws_load_balancer_controller::model::ModelConfig;
use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, PostParams};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const GROUPS: usize = 20;
const PER_GROUP: usize = 10;
const LATENCY: Duration = Duration::from_millis(50);

async fn objects(client: &kube::Client) {
    let pp = PostParams::default();
    for g in 0..GROUPS {
        let ns = format!("ns{g}");
        let n: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        Api::<Namespace>::all(client.clone())
            .create(&pp, &n)
            .await
            .unwrap();
        for i in 0..PER_GROUP {
            let svc: Service = serde_json::from_value(json!({
                "metadata": {"name": format!("svc{i}"), "namespace": ns},
                "spec": {"type": "NodePort", "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30000 + i}]}
            }))
            .unwrap();
            Api::<Service>::namespaced(client.clone(), &ns)
                .create(&pp, &svc)
                .await
                .unwrap();
            let ing: Ingress = serde_json::from_value(json!({
                "metadata": {"name": format!("ing{i}"), "namespace": ns, "annotations": {
                    "kubernetes.io/ingress.class": "alb",
                    "alb.ingress.kubernetes.io/group.name": format!("group{g}")}},
                "spec": {"rules": [{"host": format!("app{i}.group{g}.example.com"), "http": {"paths": [
                    {"path": "/", "pathType": "Prefix",
                     "backend": {"service": {"name": format!("svc{i}"), "port": {"number": 80}}}}]}}]}
            }))
            .unwrap();
            Api::<Ingress>::namespaced(client.clone(), &ns)
                .create(&pp, &ing)
                .await
                .unwrap();
        }
    }
}

async fn all_have_status(client: &kube::Client) -> usize {
    Api::<Ingress>::all(client.clone())
        .list(&Default::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
        .iter()
        .filter(|i| {
            i.status
                .as_ref()
                .and_then(|s| s.load_balancer.as_ref())
                .and_then(|l| l.ingress.as_ref())
                .is_some_and(|v| !v.is_empty())
        })
        .count()
}

async fn one(concurrency: usize) {
    let server = super::fixtures::api_server_with_crds().await;
    let client = server.client();
    objects(&client).await;

    // Upstream's default ELBv2 throttle and SDK retries.
    let (fake, vpc) = super::fixtures::fake_account();
    fake.set_latency(LATENCY);
    let cfg = IngressConfig {
        model: ModelConfig {
            cluster_name: "bench".into(),
            ..ModelConfig::default()
        },
        concurrency,
        ..IngressConfig::default()
    };
    let token = CancellationToken::new();
    let start = Instant::now();
    let task = tokio::spawn(ingress::run(
        client.clone(),
        fake.clone(),
        fake.clone(),
        vpc,
        cfg,
        token.clone(),
    ));
    let total = GROUPS * PER_GROUP;
    while all_have_status(&client).await < total {
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "bench did not converge"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let wall = start.elapsed();
    let calls = fake.calls().len();
    let writes = fake.write_calls().len();
    // Per group: LB, managed SG, listener, one rule and one TG per Ingress; + backend SG.
    let resources = GROUPS * (3 + 2 * PER_GROUP) + 1;
    println!(
        "ingress/cold {total} ingresses, {GROUPS} groups, {concurrency} workers, {} ms/call: {:.2} s wall to status on all, {calls} calls ({writes} writes) for {resources} resources = {:.2} calls/resource",
        LATENCY.as_millis(),
        wall.as_secs_f64(),
        calls as f64 / resources as f64
    );
    fake.clear_calls();
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!(
        "ingress/idle 2 s after convergence: {} calls, {} writes",
        fake.calls().len(),
        fake.write_calls().len()
    );
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
    for c in [3, 10] {
        rt.block_on(one(c));
    }
}
