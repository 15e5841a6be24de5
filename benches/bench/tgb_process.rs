//! Issue #19 item 3, and the TargetGroupBinding reconciler as users run it: the real controller
//! binary (its own process, so its memory is measured alone) against the in-memory API server in
//! this process and a private moto_server, in a cluster of 13,000 pods (10,000 behind 500
//! bindings), 3,000 Services and 6,000 Secrets. Reports the time from process start to `/readyz`
//! passing and to every binding reconciled, the controller's peak (VmHWM) and steady (VmRSS once
//! settled) resident memory next to the goals (ready ≤ 10 s, steady ≤ 64 MiB, peak ≤ 96 MiB),
//! then the time from a burst of EndpointSlice changes to all targets registered in moto (moto's
//! own latency included: it is a Python server).

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::{build, parse_api_endpoints, AwsConfig, Ec2Query};
use aws_load_balancer_controller::crd::TargetGroupBinding;
use futures::{stream, StreamExt};
use k8s_openapi::api::core::v1::{Pod, Secret, Service};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::json;

use crate::moto::Moto;
use crate::tgb::{apply_slices, proc_status_kib, seed, wait_targets, BINDINGS, NS, PODS_PER};

/// The cluster of item 3 beyond what the bindings use: pods behind no binding, Services of no
/// binding, Secrets (about 1 KiB each, like TLS and token Secrets).
const PODS: usize = 13_000;
const SERVICES: usize = 3_000;
const SECRETS: usize = 6_000;
const READY_GOAL_S: f64 = 10.0;
const STEADY_GOAL_MIB: f64 = 64.0;
const PEAK_GOAL_MIB: f64 = 96.0;

async fn rest_of_cluster(client: &kube::Client) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
    let svcs: Api<Service> = Api::namespaced(client.clone(), NS);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    let pp = PostParams::default();
    stream::iter(0..PODS - BINDINGS * PODS_PER)
        .for_each_concurrent(16, |i| {
            let (pods, pp) = (pods.clone(), pp.clone());
            async move {
                let name = format!("other-{i}");
                let pod: Pod = serde_json::from_value(json!({
                    "metadata": { "name": name, "labels": { "app": format!("other{}", i % 100) } },
                    "spec": { "nodeName": "node-a", "containers": [{ "name": "c", "image": "x" }] }
                }))
                .expect("pod");
                pods.create(&pp, &pod).await.expect("pod");
                let st = json!({ "status": { "podIP": format!("10.1.{}.{}", i / 250, i % 250 + 1),
                    "conditions": [{ "type": "Ready", "status": "True" }] } });
                pods.patch_status(&name, &PatchParams::default(), &Patch::Merge(&st))
                    .await
                    .expect("pod status");
            }
        })
        .await;
    stream::iter(0..SERVICES - BINDINGS)
        .for_each_concurrent(16, |i| {
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
    stream::iter(0..SECRETS)
        .for_each_concurrent(16, |i| {
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

/// Whether `GET /readyz` on 127.0.0.1:`port` answers 200.
fn ready(port: u16) -> bool {
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /readyz HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.ends_with(b"200")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// The controller binary next to this bench (`<target>/<profile>/deps/bench-*` →
/// `<target>/<profile>/aws-load-balancer-controller`), or `$ALBC_BIN`.
fn controller_binary() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("ALBC_BIN") {
        return p.into();
    }
    let exe = std::env::current_exe().expect("current exe");
    let bin = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("bench lives in <target>/<profile>/deps")
        .join("aws-load-balancer-controller");
    assert!(
        bin.exists(),
        "{} not found: build it with the same profile (`cargo build --profile perf --bins`) or set ALBC_BIN",
        bin.display()
    );
    bin
}

fn mem(pid: u32, label: &str) -> (u64, u64) {
    let pid = pid.to_string();
    let kib = |field| proc_status_kib(&pid, field);
    let (rss, hwm) = (kib("VmRSS:"), kib("VmHWM:"));
    let mib = |k: u64| k as f64 / 1024.0;
    // VmRSS = RssAnon (heap, stacks) + RssFile (the binary's code and data pages it touched).
    println!(
        "tgb-process/memory {label}: controller VmRSS {:.1} MiB (anon {:.1}, file {:.1}), VmHWM {:.1} MiB",
        mib(rss),
        mib(kib("RssAnon:")),
        mib(kib("RssFile:")),
        mib(hwm)
    );
    (rss, hwm)
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let bin = controller_binary();
        let moto = Moto::start();
        std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
        let endpoints = format!("elasticloadbalancing={0},ec2={0}", moto.endpoint);
        let aws = AwsConfig {
            region: Some("us-west-2".into()),
            vpc_id: Some("vpc-unused".into()),
            api_endpoints: parse_api_endpoints(&endpoints).expect("endpoints"),
            ..Default::default()
        };
        let (elb, ec2, _) = build(&aws, None).await.expect("sdk");
        let vpc = ec2.describe_vpcs(&Ec2Query::default()).await.expect("vpcs")[0].clone();

        let server = TestApiServer::start(Options::default())
            .await
            .expect("server");
        let client = server.client();
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        let t = Instant::now();
        let arns = seed(&client, elb.as_ref(), &vpc.id).await;
        apply_slices(&client, 0).await;
        rest_of_cluster(&client).await;
        println!(
            "tgb-process/seed: {BINDINGS} target groups in moto; {BINDINGS} bindings, {PODS} pods ({} behind bindings), {SERVICES} Services, {SECRETS} Secrets in {:.1} s",
            BINDINGS * PODS_PER,
            t.elapsed().as_secs_f64()
        );

        let certs = dir.path().join("certs");
        let status = Command::new(&bin)
            .args(["certs", "generate", "--service=bench", "--namespace=kube-system", "--out"])
            .arg(&certs)
            .stderr(Stdio::null())
            .status()
            .expect("certs generate");
        assert!(status.success());
        let health = free_port();
        let started = Instant::now();
        let child = Command::new(&bin)
            .args([
                "--cluster-name=bench",
                "--aws-region=us-west-2",
                "--log-level=info",
                "--webhook-bind-host=127.0.0.1",
                "--webhook-bind-port=0",
                "--metrics-bind-addr=127.0.0.1:0",
            ])
            .arg(format!("--health-probe-bind-addr=127.0.0.1:{health}"))
            .arg(format!("--aws-vpc-id={}", vpc.id))
            // Upstream's default client throttle for Register/DeregisterTargets (4/s, burst 20)
            // alone makes 500 target groups take ~120 s; `TGB_PROCESS_THROTTLE` overrides it
            // (e.g. `elasticloadbalancing:RegisterTargets|DeregisterTargets=100:200`).
            .args(
                std::env::var("TGB_PROCESS_THROTTLE")
                    .map(|t| vec![format!("--aws-api-throttle={t}")])
                    .unwrap_or_default(),
            )
            .arg(format!("--aws-api-endpoints={endpoints}"))
            .arg(format!("--webhook-cert-dir={}", certs.display()))
            .arg(format!("--kubeconfig={}", kubeconfig.display()))
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("controller.log")).expect("log file"))
            .spawn()
            .expect("start controller");
        let mut child = Killed(child);
        let pid = child.0.id();
        while !ready(health) {
            if let Ok(Some(status)) = child.0.try_wait() {
                let log = std::fs::read_to_string(dir.path().join("controller.log")).unwrap_or_default();
                panic!("the controller exited ({status}):\n{log}");
            }
            assert!(started.elapsed() < Duration::from_secs(300), "never ready");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let to_ready = started.elapsed().as_secs_f64();
        mem(pid, "at /readyz");
        let tgbs: Api<TargetGroupBinding> = Api::namespaced(client.clone(), NS);
        loop {
            let list = tgbs.list(&ListParams::default()).await.expect("list");
            let done = list.items.iter().filter(|b| {
                b.status.as_ref().and_then(|s| s.observed_generation) == b.metadata.generation
            });
            if done.count() == BINDINGS {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(600), "bindings never settled");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let to_settled = started.elapsed().as_secs_f64();
        tokio::time::sleep(Duration::from_secs(5)).await;
        let (steady, peak) = mem(pid, "5 s after every binding reconciled (steady)");
        let mib = |k: u64| k as f64 / 1024.0;
        println!(
            "tgb-process/startup: ready after {to_ready:.2} s (goal <= {READY_GOAL_S} s, ratio {:.2}); all {BINDINGS} bindings reconciled after {to_settled:.2} s",
            to_ready / READY_GOAL_S
        );
        println!(
            "tgb-process/startup memory: steady {:.1} MiB (goal <= {STEADY_GOAL_MIB}, ratio {:.2}), peak {:.1} MiB (goal <= {PEAK_GOAL_MIB}, ratio {:.2})",
            mib(steady),
            mib(steady) / STEADY_GOAL_MIB,
            mib(peak),
            mib(peak) / PEAK_GOAL_MIB
        );

        let start = Instant::now();
        apply_slices(&client, PODS_PER).await;
        let took = wait_targets(elb.as_ref(), &arns, PODS_PER, start).await;
        println!(
            "tgb-process/burst-up: {} endpoints across {BINDINGS} slices -> all registered in moto after {:.1} s",
            BINDINGS * PODS_PER,
            took.as_secs_f64()
        );
        mem(pid, "after registration");
        let start = Instant::now();
        apply_slices(&client, PODS_PER - 5).await;
        let took = wait_targets(elb.as_ref(), &arns, PODS_PER - 5, start).await;
        println!(
            "tgb-process/burst-down: {} endpoints removed -> all deregistered in moto after {:.1} s",
            BINDINGS * 5,
            took.as_secs_f64()
        );
        mem(pid, "end");
        drop(child);
        let kept = std::env::temp_dir().join("tgb-process-controller.log");
        if std::fs::copy(dir.path().join("controller.log"), &kept).is_ok() {
            println!("tgb-process: controller log kept at {}", kept.display());
        }
        server.stop().await;
        drop(moto);
    });
}
