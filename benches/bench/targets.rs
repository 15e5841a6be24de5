//! Issue #43: target registration at scale. 50 ip TargetGroupBindings with 1,000 ready pods each
//! (50,000 targets), their EndpointSlices complete, are in the in-memory API server when the
//! controller binary starts in its own process (as in `tgb-process`) against a private
//! moto_server, with its default client throttle. Reports the time from process start to all
//! 50,000 targets registered in moto next to the registration floor (upstream registers 200
//! targets a call, `defaultRegisterTargetsChunkSize`, and throttles
//! RegisterTargets|DeregisterTargets at 4/s, burst 20: 250 calls take at least
//! (250 − 20) ÷ 4 = 57.5 s; goal ≤ 1.2× that), the RegisterTargets calls the controller counted
//! (`aws_api_calls_total` on its `/metrics`), and its steady (goal ≤ 64 MiB) and peak (goal ≤
//! 96 MiB) resident memory. `TARGETS_HEAPTRACK=1` runs the controller under heaptrack.

use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::throttle::default_rules;
use aws_load_balancer_controller::aws::{Service, TARGETS_PER_CALL};
use kube_test_apiserver::{Options, TestApiServer};

use crate::process::{heaptrack_wanted, Controller, Launch, MotoAws};
use crate::report::print_goal;
use crate::tgb::{apply_slices, seed, wait_targets_every, Shape};

const SHAPE: Shape = Shape {
    bindings: 50,
    pods_per: 1_000,
};
/// The goal: registration within this many times the throttle floor.
const FLOOR_GOAL: f64 = 1.2;
const STEADY_GOAL_MIB: f64 = 64.0;
const PEAK_GOAL_MIB: f64 = 96.0;
/// How often moto is asked about the target groups not complete yet: each question lists 1,000
/// targets in a Python server that also serves the controller, so not more often.
const POLL: Duration = Duration::from_secs(1);

/// The registration floor under upstream's default client throttle: (calls, burst, rate,
/// seconds) for `targets` targets registered `TARGETS_PER_CALL` a call.
fn floor(targets: usize) -> (usize, u32, f64, f64) {
    let rule = default_rules()
        .into_iter()
        .find(|r| r.service == Service::ElbV2.id() && r.operation.is_match("RegisterTargets"))
        .expect("upstream throttles RegisterTargets by default");
    let calls = targets.div_ceil(TARGETS_PER_CALL);
    let secs = calls.saturating_sub(rule.burst as usize) as f64 / rule.rate;
    (calls, rule.burst, rule.rate, secs)
}

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let aws = MotoAws::start().await;
        let server = TestApiServer::start(Options::default())
            .await
            .expect("server");
        let client = server.client();
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        let t = Instant::now();
        let arns = seed(&client, aws.elb.as_ref(), &aws.vpc_id, SHAPE).await;
        apply_slices(&client, SHAPE, SHAPE.pods_per).await;
        let total = SHAPE.pods();
        println!(
            "targets/seed: {} target groups in moto; {} ip bindings x {} ready pods = {total} endpoints in {:.1} s",
            SHAPE.bindings,
            SHAPE.bindings,
            SHAPE.pods_per,
            t.elapsed().as_secs_f64()
        );
        let (calls, burst, rate, floor_s) = floor(total);
        println!(
            "targets/floor: ceil({total} targets / {TARGETS_PER_CALL} per call) = {calls} RegisterTargets calls; ({calls} - {burst} burst) / {rate} per s = {floor_s:.1} s (upstream's default client throttle, ours the same)"
        );

        let mut ctl = Controller::start(Launch {
            area: "targets",
            dir: dir.path(),
            kubeconfig: &kubeconfig,
            endpoints: &aws.endpoints,
            vpc_id: &aws.vpc_id,
            extra_args: Vec::new(),
            heaptrack: heaptrack_wanted("TARGETS_HEAPTRACK"),
        });
        let to_ready = ctl.wait_ready().await.as_secs_f64();
        println!("targets/startup: ready after {to_ready:.2} s");
        ctl.mem("at /readyz");
        let took = wait_targets_every(
            aws.elb.as_ref(),
            &arns,
            SHAPE.pods_per,
            ctl.started,
            POLL,
            Duration::from_secs(600),
        )
        .await
        .as_secs_f64();
        let op = |name: &str| format!(r#"operation="{name}""#);
        let register = op("RegisterTargets");
        let deregister = op("DeregisterTargets");
        let registers = ctl.metric_sum("aws_api_calls_total", &[register.as_str()]);
        let registers_ok = ctl.metric_sum(
            "aws_api_calls_total",
            &[register.as_str(), r#"status_code="200""#],
        );
        let deregisters = ctl.metric_sum("aws_api_calls_total", &[deregister.as_str()]);
        print_goal(
            &format!(
                "targets/registered all {total} in moto (from process start, polled every {} s)",
                POLL.as_secs()
            ),
            took,
            "s",
            FLOOR_GOAL * floor_s,
            &format!(
                " (= {FLOOR_GOAL} x floor {floor_s:.1} s; wall / floor {:.2})",
                took / floor_s
            ),
        );
        println!(
            "targets/calls: RegisterTargets {registers} counted by the controller (aws_api_calls_total; {registers_ok} answered 200; the floor assumes {calls}), DeregisterTargets {deregisters}"
        );
        tokio::time::sleep(Duration::from_secs(5)).await;
        let (steady, peak) = ctl.mem("5 s after all registered (steady)");
        let mib = |k: u64| k as f64 / 1024.0;
        let caveat = ctl.rss_caveat();
        print_goal("targets/steady RSS", mib(steady), "MiB", STEADY_GOAL_MIB, caveat);
        print_goal("targets/peak RSS", mib(peak), "MiB", PEAK_GOAL_MIB, caveat);
        ctl.stop();
        server.stop().await;
        drop(aws);
    });
}
