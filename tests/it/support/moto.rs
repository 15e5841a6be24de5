//! Starts a private `moto_server` on 127.0.0.1 for one test and stops it on drop.
//! The executable comes from `$MOTO_SERVER`, else `~/.cache/albc-venv/bin/moto_server`, else
//! `moto_server` on PATH; without one the test fails with instructions. It is started through
//! `moto_launcher.py` (beside this file), run by the Python of that moto_server, which keeps
//! the ELBv2 fields moto 5.2 drops (a target group's `TargetControlPort`, a target's
//! `QuicServerId`).

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Moto {
    child: Child,
    pub endpoint: String,
    /// Where moto's request recorder writes (off until [`Moto::start_recording`]).
    recording: PathBuf,
}

fn find_executable() -> PathBuf {
    if let Some(p) = std::env::var_os("MOTO_SERVER") {
        return PathBuf::from(p);
    }
    if let Some(home) = std::env::var_os("HOME") {
        let p = PathBuf::from(home).join(".cache/albc-venv/bin/moto_server");
        if p.exists() {
            return p;
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("moto_server");
            if p.exists() {
                return p;
            }
        }
    }
    panic!(
        "moto_server not found: set MOTO_SERVER, or install it with \
         `python3 -m venv $HOME/.cache/albc-venv && $HOME/.cache/albc-venv/bin/pip install 'moto[server]'`"
    );
}

/// Keeps the ELBv2 fields moto drops; see the file.
const LAUNCHER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/it/support/moto_launcher.py"
);

/// The Python that runs `moto_server`: its script's `#!` interpreter, else the `python3` beside
/// it (a pyenv shim directory), else `python3` on PATH.
fn python_of(moto_server: &std::path::Path) -> PathBuf {
    let text = std::fs::read(moto_server).unwrap_or_default();
    let first = text.split(|b| *b == b'\n').next().unwrap_or_default();
    let first = String::from_utf8_lossy(first);
    if let Some(interp) = first.strip_prefix("#!") {
        let interp = interp.trim();
        if interp.contains("python") && !interp.contains(' ') {
            return PathBuf::from(interp);
        }
    }
    let beside = moto_server.with_file_name("python3");
    if beside.exists() {
        return beside;
    }
    PathBuf::from("python3")
}

/// A loopback port nothing listens on (yet).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

impl Moto {
    /// Starts a fresh server on a free port and waits until it answers.
    pub fn start() -> Moto {
        Self::start_on(free_port())
    }

    /// Starts a fresh server on `port` (from [`free_port`], for a test that points the
    /// controller at AWS before AWS answers) and waits until it answers.
    pub fn start_on(port: u16) -> Moto {
        Self::start_with_env(port, &[])
    }

    /// A fresh server whose ACM issues a requested (DNS-validated) certificate after
    /// `seconds` instead of moto's default minute (`MOTO_ACM_VALIDATION_WAIT`, read at start).
    #[allow(dead_code)]
    pub fn start_with_acm_validation_wait(seconds: u32) -> Moto {
        Self::start_with_env(
            free_port(),
            &[("MOTO_ACM_VALIDATION_WAIT", &seconds.to_string())],
        )
    }

    /// [`Moto::start_on`] with extra environment for moto's settings.
    pub fn start_with_env(port: u16, env: &[(&str, &str)]) -> Moto {
        let exe = python_of(&find_executable());
        let recording = std::env::temp_dir().join(format!("moto-recording-{port}.jsonl"));
        let child = Command::new(&exe)
            .args([LAUNCHER, "-H", "127.0.0.1", "-p", &port.to_string()])
            .envs(env.iter().copied())
            .env("MOTO_RECORDER_FILEPATH", &recording)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
        let mut moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
            recording,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return moto;
            }
            if let Ok(Some(status)) = moto.child.try_wait() {
                panic!("moto_server exited early: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "moto_server did not answer on port {port} within 30 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Wipes all state (`POST /moto-api/reset`), for tests that reuse one server.
    #[allow(dead_code)]
    pub async fn reset(&self) {
        self.post("/moto-api/reset").await;
    }

    /// From now on every request moto receives is logged (see [`Moto::recorded_actions`]).
    #[allow(dead_code)]
    pub async fn start_recording(&self) {
        self.post("/moto-api/recorder/reset-recording").await;
        self.post("/moto-api/recorder/start-recording").await;
    }

    /// `service:Action` of every request received since [`Moto::start_recording`], in order;
    /// the service is read from the request's SigV4 credential scope.
    #[allow(dead_code)]
    pub fn recorded_actions(&self) -> Vec<String> {
        self.recorded_requests()
            .into_iter()
            .map(|(_, a)| a)
            .collect()
    }

    /// Every recorded request, in order: the recorder's JSON line and the request body.
    #[allow(dead_code)]
    fn recorded(&self) -> Vec<(serde_json::Value, String)> {
        use base64::Engine;
        let text = std::fs::read_to_string(&self.recording).unwrap_or_default();
        text.lines()
            .map(|line| {
                let v: serde_json::Value = serde_json::from_str(line).expect("recording line");
                let body = v["body"].as_str().unwrap_or("");
                let body = if v["body_encoded"] == true {
                    let raw = base64::engine::general_purpose::STANDARD
                        .decode(body)
                        .expect("base64 body");
                    String::from_utf8_lossy(&raw).into_owned()
                } else {
                    body.to_string()
                };
                (v, body)
            })
            .collect()
    }

    /// The parameters of every recorded query-protocol request of `action` (ELBv2, EC2:
    /// `CreateTargetGroup`...), in order: form body and URL query decoded, e.g.
    /// `TargetControlPort` → `3000`, `Targets.member.1.Id` → `10.0.0.5`.
    #[allow(dead_code)]
    pub fn recorded_params(&self, action: &str) -> Vec<std::collections::BTreeMap<String, String>> {
        self.recorded()
            .into_iter()
            .map(|(line, body)| {
                let query = line["url"]
                    .as_str()
                    .unwrap_or("")
                    .split('?')
                    .nth(1)
                    .unwrap_or("");
                body.split('&')
                    .chain(query.split('&'))
                    .filter_map(|kv| kv.split_once('='))
                    .map(|(k, v)| (form_decode(k), form_decode(v)))
                    .collect::<std::collections::BTreeMap<String, String>>()
            })
            .filter(|p| p.get("Action").map(String::as_str) == Some(action))
            .collect()
    }

    /// `(access key id, service:Action)` of every recorded request, in order.
    #[allow(dead_code)]
    pub fn recorded_requests(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (v, body) in self.recorded() {
            let query = v["url"]
                .as_str()
                .unwrap_or("")
                .split('?')
                .nth(1)
                .unwrap_or("");
            // Query protocol: `Action=` in the body or URL; JSON protocol (ACM): the
            // `X-Amz-Target` header, `Service.Action`.
            let target = v["headers"]["X-Amz-Target"]
                .as_str()
                .or_else(|| v["headers"]["x-amz-target"].as_str())
                .and_then(|t| t.rsplit('.').next());
            let action = body
                .split('&')
                .chain(query.split('&'))
                .find_map(|kv| kv.strip_prefix("Action="))
                .or(target)
                .unwrap_or("?")
                .to_string();
            let auth = v["headers"]["Authorization"]
                .as_str()
                .or_else(|| v["headers"]["authorization"].as_str())
                .unwrap_or("");
            // Credential=KEY/DATE/REGION/SERVICE/aws4_request
            let scope: Vec<&str> = auth
                .split("Credential=")
                .nth(1)
                .map(|c| c.split('/').collect())
                .unwrap_or_default();
            let service = scope.get(3).copied().unwrap_or("?");
            let key = scope.first().copied().unwrap_or("?").to_string();
            out.push((key, format!("{service}:{action}")));
        }
        out
    }

    async fn post(&self, path: &str) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let addr = self.endpoint.trim_start_matches("http://").to_string();
        let mut tcp = tokio::net::TcpStream::connect(&addr)
            .await
            .expect("connect moto");
        let req = format!("POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        tcp.write_all(req.as_bytes()).await.unwrap();
        let mut out = String::new();
        tcp.read_to_string(&mut out).await.unwrap();
        assert!(
            out.starts_with("HTTP/1.1 200") || out.starts_with("HTTP/1.0 200"),
            "{out}"
        );
    }
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte.
#[allow(dead_code)]
fn form_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'+', _) => out.push(b' '),
            (b'%', Some(b)) => {
                out.push(b);
                i += 2;
            }
            (b, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.recording);
    }
}
