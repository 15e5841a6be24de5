//! Cold start of the Service controller: 500 LoadBalancer Services (10 namespaces × 50, one TCP
//! port each) already in the (in-memory) API server, the controller started against FakeAws with
//! realistic per-call latency and upstream's default ELBv2 throttle and retries; wall time until
//! every Service shows its NLB hostname in status, AWS calls per resource, and calls while idle
//! after.

use std::time::{Duration, Instant};

use aws_load_balancer_controller::controller::service::{self, ServiceConfig};
use aws_load_balancer_controller::model::ModelConfig;
use tokio_util::sync::CancellationToken;

use super::fixtures::{lb_service_objects, services_with_status};

const NAMESPACES: usize = 10;
const PER_NAMESPACE: usize = 50;
const LATENCY: Duration = Duration::from_millis(50);

async fn one(concurrency: usize) {
    let server = super::fixtures::api_server_with_crds().await;
    let client = server.client();
    lb_service_objects(&client, "ns", NAMESPACES, PER_NAMESPACE).await;

    // Upstream's default ELBv2 throttle and SDK retries.
    let (fake, vpc) = super::fixtures::fake_account();
    fake.set_latency(LATENCY);
    let cfg = ServiceConfig {
        model: ModelConfig {
            cluster_name: "bench".into(),
            ..ModelConfig::default()
        },
        concurrency,
        vpc_cidrs: vec!["10.0.0.0/16".into()],
        ..ServiceConfig::default()
    };
    let token = CancellationToken::new();
    let start = Instant::now();
    let task = tokio::spawn(service::run(
        client.clone(),
        fake.clone(),
        fake.clone(),
        vpc,
        cfg,
        token.clone(),
    ));
    let total = NAMESPACES * PER_NAMESPACE;
    while services_with_status(&client).await < total {
        assert!(
            start.elapsed() < Duration::from_secs(1800),
            "bench did not converge"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let wall = start.elapsed();
    let calls = fake.calls().len();
    let writes = fake.write_calls().len();
    // Per Service: NLB, managed SG, listener, target group; + the shared backend SG.
    let resources = total * 4 + 1;
    println!(
        "service/cold {total} services, {concurrency} workers, {} ms/call: {:.2} s wall to status on all, {calls} calls ({writes} writes) for {resources} resources = {:.2} calls/resource",
        LATENCY.as_millis(),
        wall.as_secs_f64(),
        calls as f64 / resources as f64
    );
    fake.clear_calls();
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!(
        "service/idle 2 s after convergence: {} calls, {} writes",
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
