//! `diff` over 1,000 Ingresses in 100 groups on FakeAws with per-call latency: the groups are
//! first deployed for real, then diffed (reads forwarded, writes recorded) as the command does,
//! one group after another, each printed (to memory) as it is done. Reports wall time, read
//! calls and read calls per AWS resource, and the writes recorded (0 when in sync).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};

use aws_load_balancer_controller::controller::ingress::IngressConfig;
use aws_load_balancer_controller::deploy::Deployer;
use aws_load_balancer_controller::diff::{groups, Progress, Recorder, Sink};
use aws_load_balancer_controller::model::{self, BuildEnv, ClusterObjects, ModelConfig};
use aws_load_balancer_controller::plan::add_manifests;

const GROUPS: usize = 100;
const PER_GROUP: usize = 10;
const LATENCY: Duration = Duration::from_millis(20);

fn objects() -> ClusterObjects {
    let y = super::fixtures::ingress_manifests(GROUPS, PER_GROUP);
    let mut objs = ClusterObjects::default();
    add_manifests(&mut objs, &y, Path::new("bench.yaml")).expect("manifests");
    objs
}

async fn one() {
    let (fake, vpc) = super::fixtures::fake_account();
    let objs = objects();
    let cfg = IngressConfig {
        model: ModelConfig {
            cluster_name: "bench".into(),
            vpc_id: Some(vpc.clone()),
            ..ModelConfig::default()
        },
        ..IngressConfig::default()
    };
    let (gs, errors) = model::load_groups(&objs, &cfg.model.ingress_class);
    assert!(errors.is_empty(), "{errors:?}");
    let stacks: Vec<_> = gs
        .values()
        .map(|g| model::build_stack(g, &objs, &cfg.model, &BuildEnv::default()).expect("stack"))
        .collect();
    let resources: usize = stacks
        .iter()
        .map(|s| {
            usize::from(s.load_balancer.is_some())
                + usize::from(s.managed_security_group.is_some())
                + s.listeners.len()
                + s.listener_rules.len()
                + s.target_groups.len()
        })
        .sum::<usize>()
        + 1;
    let real = Arc::new(Deployer::new(
        fake.clone(),
        fake.clone(),
        "bench",
        vpc.clone(),
    ));
    let results: Vec<_> = stream::iter(stacks.iter().map(|s| {
        let d = real.clone();
        async move { d.deploy(s).await }
    }))
    .buffer_unordered(10)
    .collect()
    .await;
    results.into_iter().for_each(|r| {
        r.expect("deploy");
    });

    fake.set_latency(LATENCY);
    fake.clear_calls();
    let recorder = Arc::new(Recorder::new(fake.clone(), fake.clone()));
    let deployer = Deployer::new(recorder.clone(), recorder.clone(), "bench", vpc.clone());
    let env = groups::Env {
        recorder: &recorder,
        deployer: &deployer,
        cfg: &cfg,
        client: None,
    };
    // As the command runs: every group listed, then each printed as soon as it is diffed.
    let planned = groups::plan(&env, &objs);
    let mut out: Vec<u8> = Vec::new();
    let mut sink = Sink::new(&mut out, false, Progress::off());
    sink.begin(Vec::new(), &[("ingress", planned.len())])
        .expect("print");
    let start = Instant::now();
    groups::diff_groups(&env, &objs, &planned, &mut sink)
        .await
        .expect("print");
    let wall = start.elapsed();
    let writes = sink.finish().expect("print").pending_writes;
    let calls = fake.calls().len();
    println!(
        "diff {} ingresses, {} groups, {} ms/call: {:.2} s wall, {calls} read calls for {resources} resources = {:.2} calls/resource, {} sent writes, {writes} recorded writes",
        GROUPS * PER_GROUP,
        planned.len(),
        LATENCY.as_millis(),
        wall.as_secs_f64(),
        calls as f64 / resources as f64,
        fake.write_calls().len(),
    );
}

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(one());
}
