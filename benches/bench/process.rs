//! The controller binary in its own process, as users run it, for the benches that measure it
//! whole (`tgb-process`, `targets`): the binary of the bench's profile (or `$ALBC_BIN`) started
//! against a kubeconfig and AWS endpoints, optionally under heaptrack; `/readyz` awaited,
//! `/metrics` read, and its resident memory taken from `/proc/<pid>/status`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::{build, parse_api_endpoints, AwsConfig, Ec2Query, ElbV2};

use crate::moto::{free_port, Moto};
use crate::tgb::proc_status_kib;

const HEAPTRACK: &str = "/usr/bin/heaptrack";

/// A private moto_server as the controller's AWS, and the bench's own ELBv2 client to it (to
/// create target groups and watch their targets).
pub struct MotoAws {
    /// Held to keep moto running; stopped on drop.
    _moto: Moto,
    /// `--aws-api-endpoints` sending ELBv2 and EC2 to it.
    pub endpoints: String,
    pub elb: Arc<dyn ElbV2>,
    /// moto's default VPC.
    pub vpc_id: String,
}

impl MotoAws {
    /// Starts moto; sets the (fake) credentials in this process's environment, which the
    /// controller inherits.
    pub async fn start() -> MotoAws {
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
        MotoAws {
            _moto: moto,
            endpoints,
            elb,
            vpc_id: vpc.id,
        }
    }
}

/// The controller binary next to this bench (`<target>/<profile>/deps/bench-*` →
/// `<target>/<profile>/aws-load-balancer-controller`), or `$ALBC_BIN`.
fn controller_binary() -> PathBuf {
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

/// Whether the environment variable `var` asks for heaptrack: unset or `0` is no, `1` yes;
/// anything else is refused rather than guessed.
pub fn heaptrack_wanted(var: &str) -> bool {
    match std::env::var(var).as_deref() {
        Err(_) | Ok("") | Ok("0") => false,
        Ok("1") => true,
        Ok(other) => panic!("{var}={other}: expected 1 (run the controller under heaptrack) or 0"),
    }
}

/// What a start needs besides the binary.
pub struct Launch<'a> {
    /// The bench's name: the prefix of printed lines, the kept log's and heaptrack data's names.
    pub area: &'static str,
    /// A scratch directory (certificates, the log while running).
    pub dir: &'a Path,
    pub kubeconfig: &'a Path,
    /// `--aws-api-endpoints`.
    pub endpoints: &'a str,
    pub vpc_id: &'a str,
    /// Further flags (`--aws-api-throttle=...`).
    pub extra_args: Vec<String>,
    /// Start it as `heaptrack -o <file> <binary> <flags>`.
    pub heaptrack: bool,
}

/// A running controller; stopped (and, under heaptrack, given time to write its data) on drop.
pub struct Controller {
    area: &'static str,
    /// What was spawned: the controller, or heaptrack's shell around it.
    child: Option<Child>,
    /// The controller's own process.
    pub pid: u32,
    /// Just before the spawn.
    pub started: Instant,
    health: u16,
    metrics: u16,
    log: PathBuf,
    /// heaptrack's data file without the suffix heaptrack adds (`.zst` or `.gz`).
    heaptrack: Option<PathBuf>,
}

impl Controller {
    pub fn start(launch: Launch<'_>) -> Controller {
        let bin = controller_binary();
        let certs = launch.dir.join("certs");
        let status = Command::new(&bin)
            .args([
                "certs",
                "generate",
                "--service=bench",
                "--namespace=kube-system",
                "--out",
            ])
            .arg(&certs)
            .stderr(Stdio::null())
            .status()
            .expect("certs generate");
        assert!(status.success(), "`certs generate` failed");
        let (health, metrics) = (free_port(), free_port());
        let log = launch.dir.join("controller.log");
        let heaptrack = launch
            .heaptrack
            .then(|| std::env::temp_dir().join(format!("{}-controller.heaptrack", launch.area)));
        let mut cmd = match &heaptrack {
            Some(out) => {
                let mut c = Command::new(HEAPTRACK);
                c.arg("-o").arg(out).arg(&bin);
                c
            }
            None => Command::new(&bin),
        };
        cmd.args([
            "--cluster-name=bench",
            "--aws-region=us-west-2",
            "--log-level=info",
            "--webhook-bind-host=127.0.0.1",
            "--webhook-bind-port=0",
        ])
        .arg(format!("--metrics-bind-addr=127.0.0.1:{metrics}"))
        .arg(format!("--health-probe-bind-addr=127.0.0.1:{health}"))
        .arg(format!("--aws-vpc-id={}", launch.vpc_id))
        .args(&launch.extra_args)
        .arg(format!("--aws-api-endpoints={}", launch.endpoints))
        .arg(format!("--webhook-cert-dir={}", certs.display()))
        .arg(format!("--kubeconfig={}", launch.kubeconfig.display()))
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log file"));
        let started = Instant::now();
        let child = cmd.spawn().expect("start controller");
        let pid = if heaptrack.is_some() {
            controller_under(child.id(), &bin, &log)
        } else {
            child.id()
        };
        Controller {
            area: launch.area,
            child: Some(child),
            pid,
            started,
            health,
            metrics,
            log,
            heaptrack,
        }
    }

    /// Waits for `/readyz` to pass; the time since the spawn.
    pub async fn wait_ready(&mut self) -> Duration {
        while !ready(self.health) {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                let log = std::fs::read_to_string(&self.log).unwrap_or_default();
                panic!("the controller exited ({status}):\n{log}");
            }
            assert!(
                self.started.elapsed() < Duration::from_secs(300),
                "never ready"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.started.elapsed()
    }

    /// The sum of the `/metrics` samples of `metric` (e.g. `aws_api_calls_total`) whose labels
    /// contain every one of `labels` (e.g. `operation="RegisterTargets"`); 0 when none.
    pub fn metric_sum(&self, metric: &str, labels: &[&str]) -> f64 {
        let body = http_get(self.metrics, "/metrics").unwrap_or_default();
        let open = format!("{metric}{{");
        body.lines()
            .filter(|l| l.starts_with(&open) && labels.iter().all(|x| l.contains(x)))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    /// Prints the controller's resident memory; returns (VmRSS, VmHWM) in KiB.
    pub fn mem(&self, label: &str) -> (u64, u64) {
        let pid = self.pid.to_string();
        let kib = |field| proc_status_kib(&pid, field);
        let (rss, hwm) = (kib("VmRSS:"), kib("VmHWM:"));
        let mib = |k: u64| k as f64 / 1024.0;
        // VmRSS = RssAnon (heap, stacks) + RssFile (the binary's code and data pages it touched).
        println!(
            "{}/memory {label}: controller VmRSS {:.1} MiB (anon {:.1}, file {:.1}), VmHWM {:.1} MiB{}",
            self.area,
            mib(rss),
            mib(kib("RssAnon:")),
            mib(kib("RssFile:")),
            mib(hwm),
            self.rss_caveat()
        );
        (rss, hwm)
    }

    /// What to say after a memory figure: under heaptrack it is heaptrack's process too.
    pub fn rss_caveat(&self) -> &'static str {
        if self.heaptrack.is_some() {
            " [under heaptrack: RSS includes heaptrack's own bookkeeping, not meaningful]"
        } else {
            ""
        }
    }

    /// Stops it, keeps its log (printing where) and says where heaptrack's data is.
    pub fn stop(mut self) {
        self.shutdown();
        let kept = std::env::temp_dir().join(format!("{}-controller.log", self.area));
        if std::fs::copy(&self.log, &kept).is_ok() {
            println!("{}: controller log kept at {}", self.area, kept.display());
        }
        if let Some(out) = &self.heaptrack {
            let data = ["zst", "gz"]
                .iter()
                .map(|s| PathBuf::from(format!("{}.{s}", out.display())))
                .find(|p| p.exists());
            match data {
                Some(p) => println!(
                    "{}: heaptrack data at {} (`heaptrack --analyze {}`)",
                    self.area,
                    p.display(),
                    p.display()
                ),
                None => println!(
                    "{}: heaptrack wrote no {}.zst or .gz; see the controller log",
                    self.area,
                    out.display()
                ),
            }
        }
    }

    fn shutdown(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if self.heaptrack.is_some() {
            // SIGTERM to the controller alone: it shuts down, heaptrack's library flushes at its
            // exit and the shell around it waits for the data to be written, then exits.
            let _ = Command::new("kill")
                .args(["-TERM", &self.pid.to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The controller's pid under heaptrack's shell `shell`: its child named like `bin` (a
/// process name is the file name's first 15 bytes).
fn controller_under(shell: u32, bin: &Path, log: &Path) -> u32 {
    let name = bin
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let comm: String = name.chars().take(15).collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .find(|pid| {
                // `pid (comm) state ppid ...`; comm may hold spaces, so split after its `)`.
                let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                    return false;
                };
                let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                    return false;
                };
                let ppid = stat[close + 1..].split_whitespace().nth(1);
                stat[open + 1..close] == comm && ppid == Some(shell.to_string().as_str())
            });
        if let Some(pid) = found {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "no {comm} process under heaptrack ({HEAPTRACK}, pid {shell}) after 30 s:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
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

/// The body of a 200 answer to `GET <path>` on 127.0.0.1:`port` (HTTP/1.0: the server closes
/// the connection after the answer).
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").as_bytes())
        .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.lines().next()?;
    status
        .split_whitespace()
        .nth(1)
        .is_some_and(|code| code == "200")
        .then(|| body.to_string())
}
