//! `migrate --console` through the real binary: the page over files holding a seeded mistake
//! (`migrate`'s own output with one HTTPRoute path type changed) loaded in headless Chromium —
//! the request that shows the mistake is in the rendered DOM, marked as routed differently, and
//! a screenshot is taken (its path printed); the console over the cluster (the in-memory API
//! server holding the two `dry-run-plan` annotations) answers upstream's endpoints and the page,
//! reading only; the flags the console refuses; SIGTERM stops it (exit 0).
//!
//! Chromium: `$CHROMIUM`, else `chromium` or `chromium-browser` on PATH (scripts/test.sh installs
//! Debian's `chromium`); without one the browser test fails saying so.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use albc_model::migrate::console::files::file_reports;
use albc_model::migrate::objects::PATH_EXACT;
use albc_model::migrate::reader::decode_resources;
use albc_model::migrate::verify::default_model_config;
use albc_model::migrate::{translate, InputResources};
use serde_json::{json, Value};

use crate::support::e2e::Cluster;
use crate::support::gateway::{create_all, install_gateway_api};
use crate::support::moto::free_port;
use crate::support::process::BIN;

const APP: &str = r#"apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  namespace: shop
  annotations:
    alb.ingress.kubernetes.io/scheme: internet-facing
spec:
  ingressClassName: alb
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
"#;

/// The request below the prefix: the Ingress forwards it, the Exact path of the mistake does not.
const MISTAKE_REQUEST: &str = "GET shop.example.com:80/api/w";

fn migrate(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("migrate")
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("KUBECONFIG")
        .output()
        .expect("run migrate")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A running console; killed on drop if still running.
struct Console {
    child: Child,
    port: u16,
    stderr: Arc<Mutex<String>>,
}

impl Console {
    fn start(port: u16, args: &[&str]) -> Console {
        let mut child = Command::new(BIN)
            .arg("migrate")
            .args(["--console", "--port", &port.to_string()])
            .args(args)
            .env_remove("RUST_LOG")
            .env_remove("KUBECONFIG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the console");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (pipe, sink) = (child.stderr.take().unwrap(), stderr.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        let mut c = Console {
            child,
            port,
            stderr,
        };
        c.wait_ready();
        c
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Until it says where it runs and answers there.
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let banner = format!(
            "Console running at http://127.0.0.1:{}\nPress Ctrl+C to stop.\n",
            self.port
        );
        loop {
            if self.stderr().contains(&banner)
                && TcpStream::connect(("127.0.0.1", self.port)).is_ok()
            {
                return;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("the console exited ({status}):\n{}", self.stderr());
            }
            assert!(
                Instant::now() < deadline,
                "the console did not start:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGTERM, then its exit status.
    fn stop(&mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the console did not stop:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET path` on 127.0.0.1:`port`: status and body.
fn http_get(port: u16, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = text(&raw);
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw.as_str(), ""));
    let status: u16 = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase().starts_with("transfer-encoding:")
            && l.to_ascii_lowercase().contains("chunked")
    });
    (
        status,
        if chunked {
            dechunk(body)
        } else {
            body.to_string()
        },
    )
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// The table row holding `request` in an HTML text, from its `<tr`.
fn row_of<'a>(html: &'a str, request: &str) -> &'a str {
    let at = html
        .find(&format!("<code>{request}</code>"))
        .unwrap_or_else(|| panic!("no row for {request} in:\n{html}"));
    let start = html[..at].rfind("<tr").unwrap();
    let end = at + html[at..].find("</tr>").unwrap();
    &html[start..end]
}

fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let p = dir.join(name);
            if p.exists() {
                return p;
            }
        }
    }
    panic!(
        "chromium not found: the migration console's browser test loads the page in headless \
         Chromium. Install it (scripts/test.sh does: `apt-get install --no-install-recommends \
         chromium`) or set CHROMIUM to a Chrome/Chromium executable."
    );
}

/// Runs headless Chromium on `url` with `extra` flags; its stdout.
fn run_chromium(url: &str, profile: &Path, extra: &[String]) -> String {
    let mut child = Command::new(chromium())
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.display()),
        ])
        .args(extra)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 120 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = reader.join().unwrap();
    if !status.success() {
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        panic!("chromium failed ({status}) on {url}:\n{err}");
    }
    out
}

/// `migrate`'s output for APP with the first PathPrefix match made Exact.
fn seeded_mistake(dir: &Path) -> PathBuf {
    let app = dir.join("app.yaml");
    std::fs::write(&app, APP).unwrap();
    let out_dir = dir.join("out");
    let out = migrate(&[
        "-f",
        app.to_str().unwrap(),
        "--output-dir",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let generated = std::fs::read_to_string(out_dir.join("gateway-resources.yaml")).unwrap();
    let edited = generated.replacen("type: PathPrefix", "type: Exact", 1);
    assert_ne!(edited, generated, "no PathPrefix match in:\n{generated}");
    let mistake = dir.join("mistake.yaml");
    std::fs::write(&mistake, edited).unwrap();
    mistake
}

/// The page over files with a seeded mistake, loaded in headless Chromium: the rendered DOM
/// holds the request that shows the mistake, in a row marked `differs`, with both answers.
#[test]
fn console_page_in_headless_chromium_marks_the_seeded_mistake() {
    let dir = tempfile::tempdir().unwrap();
    let mistake = seeded_mistake(dir.path());
    let files = format!(
        "{},{}",
        dir.path().join("app.yaml").display(),
        mistake.display()
    );
    let port = free_port();
    let mut console = Console::start(port, &["-f", &files]);
    let stderr = console.stderr();
    assert!(
        stderr.contains("Found 1 Ingress(es), 1 Service(s)"),
        "{stderr}"
    );
    // The generated objects are read, not skipped.
    assert!(
        !stderr.contains("Skipping unrecognized resource"),
        "{stderr}"
    );

    let url = format!("http://127.0.0.1:{port}/");
    let profile = tempfile::tempdir().unwrap();
    let dom = run_chromium(&url, profile.path(), &["--dump-dom".to_string()]);
    assert!(dom.contains("<title>Migration Console</title>"), "{dom}");
    let row = row_of(&dom, MISTAKE_REQUEST);
    assert!(
        row.starts_with("<tr class=\"request differs\" data-differs=\"true\">"),
        "{row}"
    );
    assert!(
        row.contains("forward to shop/api:80 as shop.example.com/api/w"),
        "{row}"
    );
    assert!(row.contains("fixed-response 404 text/plain"), "{row}");
    // The requests both answer alike are there, unmarked; the verdict counts the difference.
    assert!(dom.contains("<tr class=\"request alike\""), "{dom}");
    assert!(dom.contains("routed differently</p>"), "{dom}");
    // The script ran: the page's interactions are wired.
    assert!(dom.contains("data-console-ready=\"true\""), "{dom}");
    // Upstream's side-by-side comparison: both models' cards.
    assert!(
        dom.contains("<h4>Ingress model</h4>") && dom.contains("<h4>Gateway model</h4>"),
        "{dom}"
    );

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("migrate-console.png");
    let _ = std::fs::remove_file(&shot);
    run_chromium(
        &url,
        profile.path(),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,900".to_string(),
        ],
    );
    let png =
        std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot at {}: {e}", shot.display()));
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
    println!("migration console screenshot: {}", shot.display());

    let status = console.stop();
    assert!(status.success(), "{status}: {}", console.stderr());
    assert!(
        console.stderr().contains("Shutting down..."),
        "{}",
        console.stderr()
    );
}

/// Over files without generated objects, the Ingresses' own translation is compared: the JSON
/// endpoints answer, every request routed alike.
#[test]
fn console_over_files_answers_upstreams_endpoints() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app.yaml");
    std::fs::write(&app, APP).unwrap();
    let port = free_port();
    let mut console = Console::start(port, &["-f", app.to_str().unwrap()]);
    let (status, body) = http_get(port, "/api/namespaces");
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!([{"namespace": "shop", "gatewayCount": 1}])
    );
    let (status, body) = http_get(port, "/api/gateways?namespace=shop");
    assert_eq!(status, 200, "{body}");
    let items: Value = serde_json::from_str(&body).unwrap();
    let gw = items[0]["name"].as_str().unwrap().to_string();
    assert_eq!(items[0]["migratedFrom"], "ingress/shop/api");
    assert_eq!(items[0]["verify"]["routedDifferently"], 0);
    assert!(
        items[0]["verify"]["requests"].as_u64().unwrap() > 10,
        "{body}"
    );
    let (status, body) = http_get(port, &format!("/api/diff?namespace=shop&gateway={gw}"));
    assert_eq!(status, 200, "{body}");
    let diff: Value = serde_json::from_str(&body).unwrap();
    assert!(diff["summary"]["same"].as_u64().unwrap() > 0, "{body}");
    let (status, body) = http_get(port, "/api/diff?namespace=shop");
    assert_eq!(
        (status, body.trim()),
        (400, r#"{"error":"missing ?gateway= parameter"}"#)
    );
    let (status, page) = http_get(port, "/");
    assert_eq!(status, 200);
    assert!(page.contains("0 routed differently"), "{page}");
    assert!(!page.contains("class=\"request differs\""), "{page}");
    assert!(console.stop().success());
}

/// The plans as the controllers would write them for APP with the seeded mistake: (Gateway
/// name, Ingress plan, Gateway plan).
fn plans() -> (String, String, String) {
    let mut input = InputResources::default();
    decode_resources(APP, &mut input, &mut std::io::sink()).unwrap();
    input.normalize_namespaces();
    let mut output = translate(&input).unwrap();
    let path = output.http_routes[0].spec.rules[0].matches[0]
        .path
        .as_mut()
        .unwrap();
    path.type_ = Some(PATH_EXACT.into());
    let reports = file_reports(&input, &output, &default_model_config().unwrap()).unwrap();
    let info = &reports[0].info;
    assert!(info.error.is_empty(), "{}", info.error);
    (
        info.name.clone(),
        info.ingress_plan.clone(),
        info.gateway_plan.clone(),
    )
}

/// `--console --from-cluster`: the Gateway's and the Ingress's `dry-run-plan` annotations read
/// from the cluster (paired through the migrated-from tag), upstream's endpoints and the page
/// with the differing request marked; only gets and lists reach the API server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_reads_the_plans_from_the_cluster() {
    let cluster = Cluster::start().await;
    let client = cluster.client.clone();
    install_gateway_api(&client).await;
    let (gateway, ingress_plan, gateway_plan) = plans();
    let mut docs: Vec<Value> = aws_load_balancer_controller::plan::parse_documents(APP).unwrap();
    docs[1]["metadata"]["annotations"]["alb.ingress.kubernetes.io/dry-run-plan"] =
        json!(ingress_plan);
    docs.push(json!({
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
        "metadata": {"name": gateway, "namespace": "shop",
                     "annotations": {"gateway.k8s.aws/dry-run": "true", "gateway.k8s.aws/dry-run-plan": gateway_plan}},
        "spec": {"gatewayClassName": "aws-alb", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}
    }));
    for d in &docs {
        create_all(&client, &serde_json::to_string(d).unwrap()).await;
    }
    cluster.server.clear_requests();
    let port = free_port();
    let kubeconfig = cluster.kubeconfig.display().to_string();
    let mut console = tokio::task::spawn_blocking(move || {
        Console::start(port, &["--from-cluster", "--kubeconfig", &kubeconfig])
    })
    .await
    .unwrap();
    let get = |path: &'static str| tokio::task::spawn_blocking(move || http_get(port, path));
    let (status, body) = get("/api/namespaces").await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!([{"namespace": "shop", "gatewayCount": 1}])
    );
    let (status, body) = get("/api/gateways?namespace=shop").await.unwrap();
    assert_eq!(status, 200, "{body}");
    let items: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(items[0]["name"], gateway.as_str(), "{body}");
    assert_eq!(items[0]["migratedFrom"], "ingress/shop/api", "{body}");
    assert!(items[0].get("error").is_none(), "{body}");
    assert!(
        items[0]["verify"]["routedDifferently"].as_u64().unwrap() > 0,
        "{body}"
    );
    let (status, page) = get("/").await.unwrap();
    assert_eq!(status, 200, "{page}");
    let row = row_of(&page, MISTAKE_REQUEST);
    assert!(row.starts_with("<tr class=\"request differs\""), "{row}");
    // Reads only: gets and lists.
    let writes: Vec<String> = cluster
        .server
        .requests()
        .iter()
        .filter(|r| r.verb != "get" && r.verb != "list")
        .map(|r| r.describe())
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
    let status = tokio::task::spawn_blocking(move || {
        let s = console.stop();
        (s, console.stderr())
    })
    .await
    .unwrap();
    assert!(status.0.success(), "{}", status.1);
    cluster.server.stop().await;
}

/// What the console refuses, in upstream's words where upstream has them, exit status 1; a port
/// in use is upstream's error.
#[test]
fn console_flag_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app.yaml");
    std::fs::write(&app, APP).unwrap();
    let f = app.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["-f", f, "--port", "9000"], "Error: --port can only be used with --console\n"),
        (&["--console", "-f", f, "--output-dir", "x"], "Error: --output-dir cannot be used with --console (the console writes no file)\n"),
        (&["--console", "-f", f, "--split", "namespace"], "Error: --split cannot be used with --console (the console writes no file)\n"),
        (&["--console", "-f", f, "--namespaces", "shop"], "Error: --namespaces can only be used with --from-cluster\n"),
        (&["--console", "--from-cluster", "-f", f], "Error: --from-cluster cannot be used with --file or --input-dir\n"),
        (
            &["--console", "--ingress-name", "api", "--namespaces", "shop"],
            "Error: --ingress-name cannot be used with --console (the console shows every Gateway with a plan)\n",
        ),
    ];
    for (args, want) in cases {
        let out = migrate(args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stderr), *want, "{args:?}");
    }
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let out = migrate(&["--console", "--port", &port, "-f", f]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "Error: failed to start console on 127.0.0.1:{port}: "
        )),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("\nUse --port to specify a different port\n"),
        "{stderr}"
    );
}
