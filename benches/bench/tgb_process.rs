//! The TargetGroupBinding reconciler as users run it: the real controller binary (its own
//! process, so its memory is measured alone) against the in-memory API server in this process
//! and a private moto_server, with 10,000 pods behind 500 bindings. Reports resident memory of
//! the controller process and the time from a burst of EndpointSlice changes to all targets
//! registered in moto (moto's own latency included: it is a Python server).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::{build, parse_api_endpoints, AwsConfig, Ec2Query};
use kube_test_apiserver::{Options, TestApiServer};

use crate::moto::Moto;
use crate::tgb::{apply_slices, proc_status_kib, seed, wait_targets, BINDINGS, PODS_PER};

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
    let (rss, hwm) = (
        proc_status_kib(&pid, "VmRSS:"),
        proc_status_kib(&pid, "VmHWM:"),
    );
    println!(
        "tgb-process/memory {label}: controller VmRSS {:.1} MiB, VmHWM {:.1} MiB",
        rss as f64 / 1024.0,
        hwm as f64 / 1024.0
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
        println!(
            "tgb-process/seed: {BINDINGS} target groups in moto, {BINDINGS} bindings and {} pods in {:.1} s",
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
        let child = Command::new(&bin)
            .args([
                "--cluster-name=bench",
                "--aws-region=us-west-2",
                "--log-level=info",
                "--webhook-bind-host=127.0.0.1",
                "--webhook-bind-port=0",
                "--metrics-bind-addr=127.0.0.1:0",
                "--health-probe-bind-addr=127.0.0.1:0",
            ])
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
        tokio::time::sleep(Duration::from_secs(3)).await;
        if let Ok(Some(status)) = child.0.try_wait() {
            let log = std::fs::read_to_string(dir.path().join("controller.log")).unwrap_or_default();
            panic!("the controller exited ({status}):\n{log}");
        }
        mem(pid, "3 s after start (caches synced, bindings settling)");

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
