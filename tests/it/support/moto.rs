//! Starts a private `moto_server` on 127.0.0.1 for one test and stops it on drop.
//! The executable comes from `$MOTO_SERVER`, else `~/.cache/albc-venv/bin/moto_server`, else
//! `moto_server` on PATH; without one the test fails with instructions.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Moto {
    child: Child,
    pub endpoint: String,
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

impl Moto {
    /// Starts a fresh server on a free port and waits until it answers.
    pub fn start() -> Moto {
        let exe = find_executable();
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let child = Command::new(&exe)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
        let mut moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
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
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let addr = self.endpoint.trim_start_matches("http://").to_string();
        let mut tcp = tokio::net::TcpStream::connect(&addr)
            .await
            .expect("connect moto");
        let req = format!("POST /moto-api/reset HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        tcp.write_all(req.as_bytes()).await.unwrap();
        let mut out = String::new();
        tcp.read_to_string(&mut out).await.unwrap();
        assert!(
            out.starts_with("HTTP/1.1 200") || out.starts_with("HTTP/1.0 200"),
            "{out}"
        );
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
