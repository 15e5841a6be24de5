//! Runs the real controller binary and learns its ports from its JSON logs.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_aws-load-balancer-controller");

/// A running controller; killed on drop if still alive.
pub struct Controller {
    pub child: Child,
    pub logs: Arc<Mutex<Vec<serde_json::Value>>>,
    pub stderr_text: Arc<Mutex<String>>,
}

impl Controller {
    /// Starts the binary with loopback ports chosen by the OS and the given extra flags.
    pub fn start(extra: &[String]) -> Controller {
        Self::start_with_env(extra, &[])
    }

    /// As [`Controller::start`], with environment variables set last (they win).
    pub fn start_with_env(extra: &[String], env: &[(&str, &str)]) -> Controller {
        Self::launch(Command::new(BIN), "json", "debug", extra, env)
    }

    /// As [`Controller::start`] with text logs (only `stderr_text` is filled).
    pub fn start_text(extra: &[String]) -> Controller {
        Self::launch(Command::new(BIN), "text", "debug", extra, &[])
    }

    /// As [`Controller::start`] at info level, with the soft open-file limit lowered to `soft`
    /// first (as many hosts start processes).
    pub fn start_with_soft_nofile(soft: u64, extra: &[String]) -> Controller {
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            &format!("ulimit -Sn {soft} && exec \"$0\" \"$@\""),
            BIN,
        ]);
        Self::launch(cmd, "json", "info", extra, &[])
    }

    fn launch(
        mut cmd: Command,
        format: &str,
        level: &str,
        extra: &[String],
        env: &[(&str, &str)],
    ) -> Controller {
        cmd.arg(format!("--log-format={format}"))
            .arg(format!("--log-level={level}"))
            .args([
                "--webhook-bind-host=127.0.0.1",
                "--webhook-bind-port=0",
                "--metrics-bind-addr=127.0.0.1:0",
                "--health-probe-bind-addr=127.0.0.1:0",
            ])
            .args(extra)
            .env_remove("RUST_LOG")
            // The downward API's pod identity only where a test sets it (events on the Pod,
            // the Lease namespace), also when the tests themselves run in a pod.
            .env_remove("POD_NAME")
            .env_remove("POD_NAMESPACE")
            // Tests talk to 127.0.0.1 only, also on a CI host inside AWS: no instance metadata, fixed
            // dummy keys, and AWS endpoints on a closed local port unless a test passes
            // `--aws-api-endpoints` (moto), which takes precedence over the environment.
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn controller");
        let stderr = child.stderr.take().unwrap();
        let logs = Arc::new(Mutex::new(Vec::new()));
        let text = Arc::new(Mutex::new(String::new()));
        let (l, t) = (logs.clone(), text.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                t.lock().unwrap().push_str(&line);
                t.lock().unwrap().push('\n');
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                    l.lock().unwrap().push(v);
                }
            }
        });
        Controller {
            child,
            logs,
            stderr_text: text,
        }
    }

    /// Waits for a log line with `message` and returns its `addr` field.
    pub fn addr_of(&self, message: &str) -> SocketAddr {
        let line = self.wait_for_log(message, Duration::from_secs(20));
        line["addr"].as_str().unwrap().parse().unwrap()
    }

    /// How many log lines so far have `message`.
    pub fn count_logs(&self, message: &str) -> usize {
        self.logs
            .lock()
            .unwrap()
            .iter()
            .filter(|v| v["msg"] == message)
            .count()
    }

    /// Everything the process wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr_text.lock().unwrap().clone()
    }

    pub fn wait_for_log(&self, message: &str, timeout: Duration) -> serde_json::Value {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(v) = self
                .logs
                .lock()
                .unwrap()
                .iter()
                .find(|v| v["msg"] == message)
            {
                return v.clone();
            }
            assert!(
                Instant::now() < deadline,
                "no log {message:?}; stderr:\n{}",
                self.stderr_text.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn sigterm(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for exit; panics after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "controller did not exit; stderr:\n{}",
                self.stderr_text.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the binary to completion and returns (exit code, stderr).
pub fn run_to_end(args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("run controller");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}
