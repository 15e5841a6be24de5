//! The real binary: flags, TLS versions, envelope statuses, metrics, probes, SIGTERM drain.

use crate::support::client::{self, connect, get_plain, read_response, tls_config, write_post};
use crate::support::process::{run_to_end, Controller, BIN};
use crate::support::prom_text;
use crate::support::{service_review, test_bundle, write_pair_atomic};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use webhook_certs::Bundle;

/// A kubeconfig pointing at a closed loopback port: "no cluster" without touching the network.
pub(crate) fn unreachable_kubeconfig(dir: &std::path::Path) -> std::path::PathBuf {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:{port}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n  user: {{}}\n"
        ),
    )
    .unwrap();
    path
}

fn start(extra: &[&str]) -> (Controller, Bundle, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let bundle = test_bundle(None);
    write_pair_atomic(dir.path(), &bundle);
    let kubeconfig = unreachable_kubeconfig(dir.path());
    let mut args = vec![
        "--cluster-name=it".to_string(),
        format!("--webhook-cert-dir={}", dir.path().display()),
        format!("--kubeconfig={}", kubeconfig.display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    (Controller::start(&args), bundle, dir)
}

#[tokio::test]
async fn serves_tls13_and_refuses_older_versions() {
    let (ctl, bundle, _dir) = start(&[]);
    let addr = ctl.addr_of("webhook server listening");
    let tls13 = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS13]);
    let stream = connect(addr, tls13).await.expect("TLS 1.3 handshake");
    assert_eq!(
        stream.get_ref().1.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_3)
    );
    let tls12 = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS12]);
    assert!(
        connect(addr, tls12).await.is_err(),
        "TLS 1.2 must be refused by default"
    );
    for legacy in ["-tls1_1", "-tls1"] {
        assert!(!openssl_handshake(addr, legacy), "{legacy} must be refused");
    }
}

#[tokio::test]
async fn tls12_when_allowed_uses_ecdhe_aead_only() {
    let (ctl, bundle, _dir) = start(&["--webhook-tls-min-version=1.2"]);
    let addr = ctl.addr_of("webhook server listening");
    let tls12 = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS12]);
    let stream = connect(addr, tls12).await.expect("TLS 1.2 allowed by flag");
    let suite = format!(
        "{:?}",
        stream
            .get_ref()
            .1
            .negotiated_cipher_suite()
            .unwrap()
            .suite()
    );
    assert!(
        suite.contains("ECDHE") && (suite.contains("GCM") || suite.contains("CHACHA20")),
        "{suite}"
    );
    assert!(!openssl_handshake(addr, "-tls1_1"), "TLS 1.1 stays refused");
}

/// Tries a handshake with the openssl CLI (the only client here that still speaks TLS 1.0/1.1).
fn openssl_handshake(addr: std::net::SocketAddr, version_flag: &str) -> bool {
    let out = std::process::Command::new("openssl")
        .args([
            "s_client",
            "-connect",
            &addr.to_string(),
            version_flag,
            "-brief",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the openssl CLI is needed for the legacy-TLS test (apt-get install openssl)");
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    out.status.success() && text.contains("CONNECTION ESTABLISHED")
}

#[tokio::test]
async fn envelope_statuses() {
    let (ctl, bundle, _dir) = start(&["--webhook-max-body-bytes=65536"]);
    let addr = ctl.addr_of("webhook server listening");
    let cfg = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS13]);
    let path = "/mutate-v1-service";

    let good = serde_json::to_vec(&service_review(
        "u-1",
        "CREATE",
        serde_json::json!({"spec": {"type": "LoadBalancer"}}),
    ))
    .unwrap();
    let r = client::post(addr, cfg.clone(), path, &good).await.unwrap();
    assert_eq!(r.status, 200);
    let review = r.json();
    assert_eq!(review["kind"], "AdmissionReview");
    assert_eq!(review["response"]["uid"], "u-1");
    assert_eq!(review["response"]["patchType"], "JSONPatch");

    let cases: [(&[u8], u16); 4] = [
        (b"{this is not json", 400),
        (b"", 400),
        (br#"{"apiVersion":"v1","kind":"Pod"}"#, 400),
        (
            br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#,
            400,
        ),
    ];
    for (body, status) in cases {
        let r = client::post(addr, cfg.clone(), path, body).await.unwrap();
        assert_eq!(r.status, status, "body {:?}", String::from_utf8_lossy(body));
        assert!(!r.body.is_empty(), "a readable message is expected");
    }
    // Wrong kind but a uid: answered in-protocol with a 400 status inside the review.
    let wrong = br#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u-2"}}"#;
    let r = client::post(addr, cfg.clone(), path, wrong).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["response"]["uid"], "u-2");
    assert_eq!(r.json()["response"]["allowed"], false);
    assert_eq!(r.json()["response"]["status"]["code"], 400);

    let huge = vec![b'x'; 70_000];
    assert_eq!(
        client::post(addr, cfg.clone(), path, &huge)
            .await
            .unwrap()
            .status,
        413
    );
    assert_eq!(
        client::post(addr, cfg.clone(), "/no-such-webhook", &good)
            .await
            .unwrap()
            .status,
        404
    );

    // The server survived all of that.
    assert_eq!(
        client::post(addr, cfg.clone(), path, &good)
            .await
            .unwrap()
            .status,
        200
    );

    let metrics = ctl.addr_of("metrics server listening");
    let body = String::from_utf8(get_plain(metrics, "/metrics").await.unwrap().body).unwrap();
    assert!(
        body.contains(r#"awslbc_webhook_mutation_failure_total{webhook_name="/mutate-v1-service",error_category="decodeAdmissionReview"} 5"#),
        "{body}"
    );
    // The webhook latency histogram among them, its bounds as Go spells them.
    if let Err(e) = prom_text::check(&body) {
        panic!("{e}\n{body}");
    }
}

#[tokio::test]
async fn metrics_and_probes_without_a_cluster() {
    let (ctl, _bundle, _dir) = start(&[]);
    let probes = ctl.addr_of("health probe server listening");
    let metrics = ctl.addr_of("metrics server listening");
    assert_eq!(get_plain(probes, "/healthz").await.unwrap().status, 200);
    let ready = get_plain(probes, "/readyz").await.unwrap();
    assert_eq!(
        ready.status, 503,
        "not ready while the API server is unreachable"
    );
    let text = String::from_utf8(ready.body).unwrap();
    assert!(
        text.contains("[+]webhook ok") && text.contains("[-]kube-api not ready"),
        "{text}"
    );
    let m = get_plain(metrics, "/metrics").await.unwrap();
    assert_eq!(m.status, 200);
    // Upstream's format: Prometheus text 0.0.4, as client_golang writes it.
    assert_eq!(
        m.content_type.as_deref(),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let body = String::from_utf8(m.body).unwrap();
    assert!(body.contains("process_resident_memory_bytes"), "{body}");
    assert!(
        body.contains("# TYPE process_cpu_seconds_total counter"),
        "{body}"
    );
    if let Err(e) = prom_text::check(&body) {
        panic!("{e}\n{body}");
    }
    // It says clearly which URL fails and keeps retrying.
    let line = ctl.wait_for_log("Kubernetes API unreachable", Duration::from_secs(10));
    assert!(
        line["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:"),
        "{line}"
    );
    assert!(line["retry_in"].is_string(), "{line}");
}

#[tokio::test]
async fn sigterm_drains_in_flight_requests_and_exits_zero() {
    let (mut ctl, bundle, _dir) = start(&[]);
    let addr = ctl.addr_of("webhook server listening");
    let cfg = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS13]);
    let body = serde_json::to_vec(&service_review(
        "drain",
        "CREATE",
        serde_json::json!({"spec": {"type": "LoadBalancer"}}),
    ))
    .unwrap();
    let mut stream = connect(addr, cfg.clone()).await.unwrap();
    // Half the request is on the wire when SIGTERM arrives.
    let half = body.len() / 2;
    write_post(&mut stream, "/mutate-v1-service", &body[..half], body.len())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    ctl.sigterm();
    ctl.wait_for_log(
        "shutting down: draining in-flight requests",
        Duration::from_secs(5),
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    // New connections are no longer accepted...
    assert!(client::post(addr, cfg.clone(), "/mutate-v1-service", &body)
        .await
        .is_err());
    // ...but the in-flight one completes.
    stream.write_all(&body[half..]).await.unwrap();
    let r = read_response(&mut stream).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["response"]["uid"], "drain");
    let status = ctl.wait_exit(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
}

/// `--version` and `version` print the build's identity, as upstream's `version.GitVersion`,
/// `GitCommit` and `BuildDate`: the crate's version, 12 hex digits of the commit (or "unknown",
/// built without .git) and the commit's date (build.rs).
#[test]
fn version_prints_version_commit_and_build_date() {
    let shape = regex::Regex::new(&format!(
        r"^aws-load-balancer-controller {} \(commit ([0-9a-f]{{12}}|unknown), built ([0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}T[0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}Z|unknown)\)$",
        regex::escape(env!("CARGO_PKG_VERSION"))
    ))
    .unwrap();
    let mut lines = Vec::new();
    for arg in ["--version", "version"] {
        let out = std::process::Command::new(BIN)
            .arg(arg)
            .output()
            .expect("run controller");
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "{arg}: {out:?}");
        assert!(shape.is_match(stdout.trim_end()), "{arg}: {stdout:?}");
        lines.push(stdout);
    }
    assert_eq!(lines[0], lines[1], "--version and version print the same");
}

/// At start the controller logs its identity once, as upstream's `"version"` line.
#[test]
fn start_logs_version_commit_and_build_date() {
    let (ctl, _bundle, _dir) = start(&[]);
    let line = ctl.wait_for_log("version", Duration::from_secs(20));
    assert_eq!(line["GitVersion"], env!("CARGO_PKG_VERSION"), "{line}");
    for field in ["GitCommit", "BuildDate"] {
        assert!(
            line[field].as_str().is_some_and(|v| !v.is_empty()),
            "{field}: {line}"
        );
    }
    assert_eq!(line["level"], "info", "{line}");
    assert_eq!(ctl.count_logs("version"), 1);
}

/// With default flags every line is upstream's zap JSON: `level` in zap's lower-case spelling,
/// `ts` RFC 3339 in seconds, `msg`; the start's identity line and the failure itself included.
#[test]
fn default_logs_are_zap_json_lines_with_upstreams_keys() {
    let (code, stderr) = run_to_end(&["--cluster-name=x", "--webhook-cert-dir=/nonexistent/certs"]);
    assert_eq!(code, 1);
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(lines.len() >= 2, "{stderr}");
    for line in &lines {
        assert!(
            ["debug", "info", "warn", "error"].contains(&line["level"].as_str().unwrap_or("")),
            "{line}"
        );
        let ts = line["ts"].as_str().unwrap_or_default();
        assert!(
            ts.len() == 20 && ts.as_bytes()[10] == b'T' && ts.ends_with('Z'),
            "{line}"
        );
        assert!(line["msg"].is_string(), "{line}");
        assert!(
            line.get("message").is_none() && line.get("fields").is_none(),
            "{line}"
        );
    }
    assert!(lines
        .iter()
        .any(|l| l["msg"] == "version" && l["GitCommit"].is_string()));
    let last = lines.last().unwrap();
    assert_eq!(
        (&last["level"], &last["msg"]),
        (&"error".into(), &"problem running manager".into())
    );
    assert!(
        last["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/certs/tls.crt"),
        "{last}"
    );
}

#[test]
fn missing_certificate_fails_fast_with_the_path() {
    let (code, stderr) = run_to_end(&["--cluster-name=x", "--webhook-cert-dir=/nonexistent/certs"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("/nonexistent/certs/tls.crt"), "{stderr}");
}

#[test]
fn bad_flags_fail_at_start_naming_the_flag() {
    let (code, stderr) = run_to_end(&[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("kubernetes cluster name must be specified"),
        "{stderr}"
    );
    let (code, stderr) = run_to_end(&["--cluster-name=x", "--sync-period=forever"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("--sync-period"), "{stderr}");
}

/// A bad `--aws-api-throttle` stops the binary at start (as upstream's flag parsing does) rather
/// than surfacing only when the AWS clients are built and retried.
#[test]
fn bad_aws_api_throttle_fails_at_start() {
    let (code, stderr) = run_to_end(&["--cluster-name=x", "--aws-api-throttle=garbage"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains(
            "invalid --aws-api-throttle: garbage must be formatted as serviceID:operationRegex=rate:burst"
        ),
        "{stderr}"
    );
}

/// A flag this build does not act on (none is refused today) is logged once as a warning
/// naming the flag and its value.
#[test]
fn inert_flags_are_warned_about_at_start() {
    let flag = aws_load_balancer_controller::config::inert::inert_flag("aws-vpc-tag-key").unwrap();
    let (ctl, _bundle, _dir) = start(&["--aws-vpc-tag-key=5"]);
    let message = format!(
        "--{} is not acted on by this build: {}",
        flag.long, flag.why
    );
    let line = ctl.wait_for_log(&message, Duration::from_secs(20));
    assert_eq!(line["level"], "warn", "{line}");
    assert_eq!(line["flag"], flag.long, "{line}");
    assert_eq!(line["value"], "5", "{line}");
    assert_eq!(ctl.count_logs(&message), 1);
}

/// `--kube-ca-pem-filepath` is read at start, as upstream: a file that cannot be read stops the
/// binary, naming the flag and the path (the handshakes it allows are tested with the TLS set-up).
#[test]
fn an_unreadable_kube_ca_pem_file_fails_at_start() {
    let (code, stderr) = run_to_end(&[
        "--cluster-name=x",
        "--kube-ca-pem-filepath=/nonexistent/kube-ca.pem",
    ]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("--kube-ca-pem-filepath") && stderr.contains("/nonexistent/kube-ca.pem"),
        "{stderr}"
    );
}

#[test]
fn certs_generate_writes_a_verifiable_chain() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("certs");
    let (code, stderr) = run_to_end(&[
        "certs",
        "generate",
        "--service",
        "aws-load-balancer-webhook-service",
        "--namespace",
        "kube-system",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let verify = std::process::Command::new("openssl")
        .args(["verify", "-CAfile"])
        .arg(out.join("ca.crt"))
        .arg(out.join("tls.crt"))
        .output()
        .expect("openssl CLI");
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    let text = std::process::Command::new("openssl")
        .args(["x509", "-noout", "-text", "-in"])
        .arg(out.join("tls.crt"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    for san in [
        "DNS:aws-load-balancer-webhook-service,",
        "DNS:aws-load-balancer-webhook-service.kube-system,",
        "DNS:aws-load-balancer-webhook-service.kube-system.svc,",
        "DNS:aws-load-balancer-webhook-service.kube-system.svc.cluster.local",
    ] {
        assert!(text.contains(san), "missing {san} in\n{text}");
    }
    assert!(
        text.contains("prime256v1") || text.contains("P-256"),
        "ECDSA P-256 expected:\n{text}"
    );
    // Validity at most one year.
    let end = std::process::Command::new("openssl")
        .args([
            "x509",
            "-noout",
            "-checkend",
            &(366 * 24 * 3600).to_string(),
            "-in",
        ])
        .arg(out.join("tls.crt"))
        .output()
        .unwrap();
    assert!(
        !end.status.success(),
        "the serving certificate must expire within a year"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(out.join("tls.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the key must not be readable by others");
    }
}

/// Text logs written to a pipe carry no colour escape sequences (log shippers and queries would
/// have to strip them).
#[test]
fn text_logs_into_a_pipe_have_no_escape_sequences() {
    let (code, stderr) = run_to_end(&[
        "--cluster-name=x",
        "--log-format=text",
        "--webhook-cert-dir=/nonexistent/certs",
    ]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("INFO") && stderr.contains("version"),
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
}
