//! Cold deploy of 200 Ingresses in 20 groups on FakeAws with realistic per-call latency and
//! upstream's default AWS throttles/retries, groups deployed concurrently; then a warm
//! (unchanged) redeploy of all groups. Reports wall time, calls and calls per AWS resource.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};

use aws_load_balancer_controller::deploy::Deployer;
use aws_load_balancer_controller::model::{self, BuildEnv, ClusterObjects, ModelConfig, Stack};
use aws_load_balancer_controller::plan::add_manifests;

const GROUPS: usize = 20;
const PER_GROUP: usize = 10;
const LATENCY: Duration = Duration::from_millis(50);

fn stacks(vpc: &str) -> Vec<Stack> {
    let mut objs = ClusterObjects::default();
    add_manifests(
        &mut objs,
        &super::fixtures::ingress_manifests(GROUPS, PER_GROUP),
        Path::new("bench.yaml"),
    )
    .expect("manifests");
    let cfg = ModelConfig {
        cluster_name: "bench".into(),
        vpc_id: Some(vpc.into()),
        ..ModelConfig::default()
    };
    let (groups, errors) = model::load_groups(&objs, &cfg.ingress_class);
    assert!(errors.is_empty(), "{errors:?}");
    groups
        .values()
        .map(|g| model::build_stack(g, &objs, &cfg, &BuildEnv::default()).expect("stack"))
        .collect()
}

fn resources(s: &Stack) -> usize {
    usize::from(s.load_balancer.is_some())
        + usize::from(s.managed_security_group.is_some())
        + s.listeners.len()
        + s.listener_rules.len()
        + s.target_groups.len()
}

async fn deploy_all(d: &Arc<Deployer>, stacks: &[Stack], concurrency: usize) -> Duration {
    let start = Instant::now();
    let results: Vec<_> = stream::iter(stacks.iter().map(|s| {
        let d = d.clone();
        async move { d.deploy(s).await }
    }))
    .buffer_unordered(concurrency)
    .collect()
    .await;
    for r in results {
        r.expect("deploy");
    }
    start.elapsed()
}

async fn one(concurrency: usize) {
    let (fake, vpc) = super::fixtures::fake_account();
    let stacks = stacks(&vpc);
    let n_res: usize = stacks.iter().map(resources).sum::<usize>() + 1; // + backend SG
    fake.set_latency(LATENCY);
    let d = Arc::new(Deployer::new(
        fake.clone(),
        fake.clone(),
        "bench",
        vpc.clone(),
    ));
    let cold = deploy_all(&d, &stacks, concurrency).await;
    let calls = fake.calls().len();
    let writes = fake.write_calls().len();
    println!(
        "deploy/cold {} ingresses, {} groups, {concurrency} at a time, {} ms/call: {:.2} s wall, {calls} calls ({writes} writes) for {n_res} resources = {:.2} calls/resource",
        GROUPS * PER_GROUP,
        stacks.len(),
        LATENCY.as_millis(),
        cold.as_secs_f64(),
        calls as f64 / n_res as f64
    );
    fake.clear_calls();
    let warm = deploy_all(&d, &stacks, concurrency).await;
    println!(
        "deploy/warm unchanged redeploy, {concurrency} at a time: {:.2} s wall, {} calls, {} writes",
        warm.as_secs_f64(),
        fake.calls().len(),
        fake.write_calls().len()
    );
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
