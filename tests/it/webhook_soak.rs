//! The real binary under abuse: 500 concurrent 3 MiB admission bodies plus 1,100 idle
//! connections, started with a soft open-file limit of 1024. Memory stays bounded, every real
//! admission is answered, the open-file limit is raised. Also: a client-chosen uid cannot forge
//! a log line. How fast the admissions are answered is a benchmark's figure, not an assertion
//! here (a shared 2-core machine can stall any one request): the soak prints it, and
//! `scripts/flood-webhook.py` measures it (docs/performance.md).

use crate::process::unreachable_kubeconfig;
use crate::support::client::{connect, connect_from, post, read_response, tls_config, write_post};
use crate::support::process::Controller;
use crate::support::{service_review, test_bundle, write_pair_atomic};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use webhook_certs::Bundle;

const PATH: &str = "/mutate-v1-service";
/// What the soak holds the process to: the memory limit we document for the chart
/// (`resources.limits.memory` in values.yaml; the chart sets none by default, as upstream's).
const MEMORY_LIMIT: u64 = 256 * 1024 * 1024;
/// How long a probe may wait for its answer before it counts as dropped: the API server gives up
/// on the webhook after its `timeoutSeconds` (10 s in the chart) and the admission fails. This
/// is the protocol's limit on an answer, not a speed goal.
const ANSWER_DEADLINE: Duration = Duration::from_secs(10);

fn setup(extra: &[&str]) -> (Vec<String>, Bundle, tempfile::TempDir) {
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
    (args, bundle, dir)
}

fn review(uid: &str, annotation_bytes: usize) -> Vec<u8> {
    let svc = serde_json::json!({"metadata": {"name": "big", "annotations": {"filler": "x".repeat(annotation_bytes)}},
        "spec": {"type": "LoadBalancer"}});
    serde_json::to_vec(&service_review(uid, "CREATE", svc)).unwrap()
}

/// Posts `body` the way a frugal client does: the head first, and the body only if the server
/// has not already answered (429) — so the load generator's CPU goes to bodies the server
/// actually reads, not to encrypting megabytes that are thrown away on a 2-core test machine.
async fn big_post(
    from: Option<std::net::IpAddr>,
    addr: SocketAddr,
    cfg: Arc<rustls::ClientConfig>,
    body: &[u8],
) -> std::io::Result<crate::support::client::Response> {
    use tokio::io::AsyncWriteExt;
    let mut stream = connect_from(from, addr, cfg).await?;
    write_post(&mut stream, PATH, b"", body.len()).await?;
    if let Ok(answer) =
        tokio::time::timeout(Duration::from_millis(30), read_response(&mut stream)).await
    {
        return answer;
    }
    // Then the body at about 10 MiB/s: a body in flight for a third of a second holds its share
    // of the budget the longest, the harder case for memory.
    for chunk in body.chunks(64 * 1024) {
        stream.write_all(chunk).await?;
        stream.flush().await?;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    read_response(&mut stream).await
}

/// `VmRSS`/`VmHWM` of a process, in bytes.
fn memory(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap()
}

/// Soft and hard "Max open files" of a process.
fn nofile(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let f: Vec<&str> = line.split_whitespace().collect();
    (f[3].to_string(), f[4].to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_big_bodies_and_idle_connections_keep_memory_bounded_and_admissions_answered() {
    let (args, bundle, _dir) = setup(&[]);
    let ctl = Controller::start_with_soft_nofile(1024, &args);
    let addr = ctl.addr_of("webhook server listening");
    let pid = ctl.child.id();
    let (soft, hard) = nofile(pid);
    assert_eq!(
        soft, hard,
        "the soft open-file limit is raised to the hard one"
    );
    let cfg = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS13]);
    let done = Arc::new(AtomicBool::new(false));

    // 1,100 idle TLS connections, reopened whenever the server closes one. The load comes from
    // 16 and 32 addresses other than the probe's, as from pods other than the API server, each
    // within its share of the connection cap and of the body budget.
    let idle_open = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..1100 {
        let (cfg, done, open) = (cfg.clone(), done.clone(), idle_open.clone());
        tasks.push(tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                let Ok(mut stream) = connect_from(peer(10 + (i % 16) as u8), addr, cfg.clone()).await else {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                open.fetch_add(1, Ordering::Relaxed);
                let mut byte = [0u8; 1];
                let _ = tokio::select! {
                    r = tokio::io::AsyncReadExt::read(&mut stream, &mut byte) => r.ok(),
                    _ = async { while !done.load(Ordering::Relaxed) { tokio::time::sleep(Duration::from_millis(200)).await } } => None,
                };
                open.fetch_sub(1, Ordering::Relaxed);
            }
        }));
    }
    let started = Instant::now();
    while idle_open.load(Ordering::Relaxed) < 1100 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "only {} idle connections opened",
            idle_open.load(Ordering::Relaxed)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // 500 clients sending 3 MiB admission bodies over and over.
    let big = Arc::new(review("big", 3 * 1024 * 1024 - 4096));
    assert!(big.len() <= 3 * 1024 * 1024);
    let outcomes = Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::<
        String,
        usize,
    >::new()));
    for i in 0..500 {
        let (cfg, done, big, outcomes) = (cfg.clone(), done.clone(), big.clone(), outcomes.clone());
        let from = peer(30 + (i % 32) as u8);
        tasks.push(tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                let outcome = match big_post(from, addr, cfg.clone(), &big).await {
                    Ok(r) => r.status.to_string(),
                    Err(e) => format!("{:?}", e.kind()),
                };
                // Shed requests come with `Retry-After: 1`, which this client honours.
                let pause = if outcome == "429" { 1000 } else { 100 };
                *outcomes.lock().unwrap().entry(outcome).or_default() += 1;
                tokio::time::sleep(Duration::from_millis(pause)).await;
            }
        }));
    }

    // Throughout: a real admission every 100 ms on a kept-alive connection, as an API server
    // sends them, and the process's memory. On a thread of its own, so that the load
    // generators' tasks cannot delay the probe on the client side. A probe that fails ends the
    // soak's probing (its connection is gone) and is reported, not panicked on in the thread.
    let probe = std::thread::spawn({
        let cfg = cfg.clone();
        move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let small = review("probe", 200);
                let mut stream = connect(addr, cfg).await.unwrap();
                let mut probes = Probes::default();
                let soak = Instant::now();
                while soak.elapsed() < Duration::from_secs(20) {
                    let t = Instant::now();
                    probes.sent += 1;
                    let answer = async {
                        write_post(&mut stream, PATH, &small, small.len()).await?;
                        read_response(&mut stream).await
                    };
                    let outcome = match tokio::time::timeout(ANSWER_DEADLINE, answer).await {
                        Ok(Ok(r)) if admitted(&r) => Ok(t.elapsed()),
                        Ok(Ok(r)) => Err(format!(
                            "answered {}: {}",
                            r.status,
                            String::from_utf8_lossy(&r.body)
                        )),
                        Ok(Err(e)) => Err(format!("connection failed: {e}")),
                        Err(_) => Err(format!("no answer within {ANSWER_DEADLINE:?}")),
                    };
                    probes.peak_rss = probes.peak_rss.max(memory(pid, "VmRSS:"));
                    match outcome {
                        Ok(latency) => probes.latencies.push(latency),
                        Err(failure) => {
                            probes.failure = Some(failure);
                            break;
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                probes
            })
        }
    });
    while !probe.is_finished() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut probes = probe.join().unwrap();
    done.store(true, Ordering::Relaxed);
    let hwm = memory(pid, "VmHWM:");
    probes.latencies.sort();
    let outcomes = outcomes.lock().unwrap().clone();
    // The latency figures for the record (a benchmark's, see the module comment).
    if let Some(max) = probes.latencies.last() {
        let at = |q: usize| probes.latencies[probes.latencies.len() * q / 100];
        eprintln!(
            "soak: {} of {} probes answered 200, latency p50 {:?} p99 {:?} max {max:?}; RSS peak sampled {} MiB, VmHWM {} MiB; big-body outcomes {outcomes:?}",
            probes.latencies.len(),
            probes.sent,
            at(50),
            at(99),
            probes.peak_rss >> 20,
            hwm >> 20
        );
    }
    for t in tasks {
        t.abort();
    }
    assert_eq!(probes.failure, None, "a real admission was not answered");
    assert!(probes.sent > 0, "no probe was sent");
    assert_eq!(
        probes.latencies.len(),
        probes.sent,
        "every real admission is answered 200 and allowed"
    );
    assert!(
        hwm < MEMORY_LIMIT,
        "peak RSS {} MiB over the {} MiB limit",
        hwm >> 20,
        MEMORY_LIMIT >> 20
    );
    assert!(
        outcomes.get("200").copied().unwrap_or(0) > 0,
        "no big body was ever admitted: the soak did not load the decoder"
    );
    assert!(
        outcomes.get("429").copied().unwrap_or(0) > 0,
        "nothing was shed: {outcomes:?}"
    );
}

/// Whether the probe's admission was answered as the API server needs it: 200, allowed.
fn admitted(r: &crate::support::client::Response) -> bool {
    r.status == 200 && r.json()["response"]["allowed"] == true
}

/// What the soak's probe saw: how many admissions it sent, the time each answered one took, the
/// first failure (which ends the probing), and the highest RSS sampled between probes.
#[derive(Default)]
struct Probes {
    sent: usize,
    latencies: Vec<Duration>,
    failure: Option<String>,
    peak_rss: u64,
}

/// Peers on one machine: the loopback addresses past 127.0.0.1 are all this host's.
fn peer(n: u8) -> Option<std::net::IpAddr> {
    Some(std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, n)))
}

/// Sends `body` after its head in 64 KiB pieces, 5 ms apart (so the server waits for them, and
/// counts them as arriving), stopping after `send` bytes; returns the answer if one came while
/// sending, or after the whole body when it was all sent.
async fn slow_post<S>(
    stream: &mut S,
    body: &[u8],
    send: usize,
) -> Option<std::io::Result<crate::support::client::Response>>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::AsyncWriteExt;
    if let Err(e) = write_post(stream, PATH, b"", body.len()).await {
        return Some(Err(e));
    }
    for chunk in body[..send].chunks(64 * 1024) {
        tokio::time::sleep(Duration::from_millis(5)).await;
        if let Err(e) = stream.write_all(chunk).await {
            return Some(Err(e));
        }
        let _ = stream.flush().await;
        if let Ok(answer) =
            tokio::time::timeout(Duration::from_millis(20), read_response(&mut *stream)).await
        {
            return Some(answer);
        }
    }
    if send < body.len() {
        return None;
    }
    Some(read_response(stream).await)
}

/// The in-flight body budget counts bytes that arrived, not bytes promised, and one peer may
/// hold at most a quarter of it with bodies still arriving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn body_budget_counts_what_arrives_and_shares_it_per_peer() {
    let (args, bundle, _dir) = setup(&[
        "--webhook-max-body-bytes=1048576",
        "--webhook-max-inflight-body-bytes=4194304",
    ]);
    let ctl = Controller::start(&args);
    let addr: SocketAddr = ctl.addr_of("webhook server listening");
    let cfg = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS13]);

    // Thirty bodies from 127.0.0.2 that promise 1 MiB (30 MiB, seven times the budget) and
    // send nothing: they hold nothing, not even of their own peer's share.
    let mut promised = Vec::new();
    for _ in 0..30 {
        let mut s = connect_from(peer(2), addr, cfg.clone()).await.unwrap();
        write_post(&mut s, PATH, b"", 1024 * 1024).await.unwrap();
        promised.push(s);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let big = review("big", 900 * 1024);
    let mut s = connect_from(peer(2), addr, cfg.clone()).await.unwrap();
    let r = slow_post(&mut s, &big, big.len()).await.unwrap().unwrap();
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));

    // Bodies of 127.0.0.3 that send a byte and stop hold their declared size, but only up to
    // their peer's quarter: 127.0.0.1 is still admitted.
    let mut begun = Vec::new();
    let mut shed = 0;
    for _ in 0..10 {
        let mut s = connect_from(peer(3), addr, cfg.clone()).await.unwrap();
        write_post(&mut s, PATH, b"", 1024 * 1024).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        let _ = tokio::io::AsyncWriteExt::write_all(&mut s, b"{").await;
        let _ = tokio::io::AsyncWriteExt::flush(&mut s).await;
        if let Ok(Ok(r)) =
            tokio::time::timeout(Duration::from_millis(100), read_response(&mut s)).await
        {
            assert_eq!(r.status, 429);
            shed += 1;
        }
        begun.push(s);
    }
    assert_eq!(shed, 9, "one 1 MiB body fills a 1 MiB share");
    let r = slow_post(&mut s, &big, big.len()).await.unwrap().unwrap();
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));

    // 127.0.0.2 holds 700 KiB of a body that then stops; a second body of its own does not
    // fit its 1 MiB share and is shed, while the same body from 127.0.0.1 is admitted.
    let mut held = connect_from(peer(2), addr, cfg.clone()).await.unwrap();
    let body = review("share", 700 * 1024);
    let early = slow_post(&mut held, &body, 700 * 1024).await;
    assert!(
        early.is_none(),
        "{:?}",
        early.map(|r| r.map(|r| (r.status, String::from_utf8_lossy(&r.body).to_string())))
    );
    let mut second = connect_from(peer(2), addr, cfg.clone()).await.unwrap();
    let r = slow_post(&mut second, &body, body.len())
        .await
        .expect("answered")
        .expect("429 read before the connection closed");
    assert_eq!(r.status, 429, "{}", String::from_utf8_lossy(&r.body));
    let mut other = connect(addr, cfg.clone()).await.unwrap();
    let r = slow_post(&mut other, &body, body.len())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    drop((promised, begun, held));
}

/// Whether the server closed `s` (within 3 s).
async fn closed<S: tokio::io::AsyncRead + Unpin>(s: &mut S) -> bool {
    let mut byte = [0u8; 1];
    let read = tokio::io::AsyncReadExt::read(s, &mut byte);
    let r = tokio::time::timeout(Duration::from_secs(3), read).await;
    matches!(r, Ok(Ok(0) | Err(_)))
}

/// Whether `s` is closed already (nothing to read within 300 ms means open).
async fn closed_now<S: tokio::io::AsyncRead + Unpin>(s: &mut S) -> bool {
    let mut byte = [0u8; 1];
    let read = tokio::io::AsyncReadExt::read(s, &mut byte);
    let r = tokio::time::timeout(Duration::from_millis(300), read).await;
    matches!(r, Ok(Ok(0) | Err(_)))
}

/// At `--webhook-max-connections` room is made for a newcomer: a connection whose body stalled,
/// then the idlest, then one of a peer holding more than its share; a newcomer from that
/// peer itself is refused rather than queued in front of everyone else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_cap_evicts_stalled_then_idle_then_over_share() {
    let (args, bundle, _dir) = setup(&["--webhook-max-connections=4"]);
    let ctl = Controller::start(&args);
    let addr: SocketAddr = ctl.addr_of("webhook server listening");
    let cfg = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS13]);
    let small = review("small", 100);

    // Two stalled bodies, then two idle connections, all four over a second old.
    let mut stalled = Vec::new();
    for _ in 0..2 {
        let mut s = connect_from(peer(2), addr, cfg.clone()).await.unwrap();
        write_post(&mut s, PATH, b"{", 100).await.unwrap();
        stalled.push(s);
    }
    let mut idle_old = connect_from(peer(2), addr, cfg.clone()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut idle_new = connect_from(peer(2), addr, cfg.clone()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let newcomer = || async {
        let r = tokio::time::timeout(
            Duration::from_secs(2),
            post(addr, cfg.clone(), PATH, &small),
        )
        .await
        .expect("a newcomer at the cap is served")
        .unwrap();
        assert_eq!(r.status, 200);
    };
    // Stalled bodies go first, one per newcomer; each newcomer's own connection is replaced by
    // a fresh one (under a second old, not to be closed), so the cap stays full.
    let mut fresh = Vec::new();
    for round in 1..=2 {
        newcomer().await;
        let mut cut = 0;
        for s in &mut stalled {
            cut += closed_now(s).await as usize;
        }
        assert_eq!(cut, round, "stalled bodies are cut first, one per newcomer");
        assert!(!closed_now(&mut idle_old).await && !closed_now(&mut idle_new).await);
        fresh.push(connect_from(peer(2), addr, cfg.clone()).await.unwrap());
    }
    // Then the connection idle for longest.
    newcomer().await;
    assert!(
        closed(&mut idle_old).await,
        "the idlest connection was closed"
    );
    assert!(
        !closed_now(&mut idle_new).await,
        "one idle connection at a time"
    );
    drop((stalled, fresh, idle_new));
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Four connections of 127.0.0.3 sending their bodies a byte every 300 ms: busy, never
    // stalled. A newcomer of 127.0.0.3 is refused; one from 127.0.0.1 takes a slot from it.
    let drip = |n: usize| {
        let cfg = cfg.clone();
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let mut s = connect_from(peer(3), addr, cfg).await.unwrap();
            write_post(&mut s, PATH, b"", 200).await.unwrap();
            for _ in 0..200 {
                if s.write_all(b" ").await.is_err() || s.flush().await.is_err() {
                    return n;
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            n
        })
    };
    let drippers: Vec<_> = (0..4).map(drip).collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let refused = tokio::time::timeout(Duration::from_secs(2), async {
        let mut s = connect_from(peer(3), addr, cfg.clone()).await?;
        write_post(&mut s, PATH, &small, small.len()).await?;
        read_response(&mut s).await
    })
    .await
    .expect("the newcomer over its peer's share is closed at once, not queued");
    assert!(refused.is_err(), "served over its share: {refused:?}");
    let t = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(2),
        post(addr, cfg.clone(), PATH, &small),
    )
    .await
    .expect("a newcomer from another peer is served")
    .unwrap();
    assert_eq!(r.status, 200);
    println!("served past the busy peer in {:?}", t.elapsed());
    // A writer learns of the cut at its next write or the one after (300 ms apart).
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let finished = drippers.iter().filter(|d| d.is_finished()).count();
    assert_eq!(finished, 1, "exactly one dripping connection was cut");
    for d in drippers {
        d.abort();
    }
}

/// A uid with a newline and a fake "became leader" line stays inside one escaped log line.
#[tokio::test]
async fn a_crafted_uid_cannot_forge_a_log_line() {
    let (args, bundle, _dir) = setup(&[]);
    let ctl = Controller::start_text(&args);
    let deadline = Instant::now() + Duration::from_secs(20);
    let addr: SocketAddr = loop {
        let text = ctl.stderr_text.lock().unwrap().clone();
        if let Some(line) = text
            .lines()
            .find(|l| l.contains("webhook server listening"))
        {
            let at = line.split("addr=").nth(1).unwrap();
            break at.split_whitespace().next().unwrap().parse().unwrap();
        }
        assert!(Instant::now() < deadline, "no listening line:\n{text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let forged = "x\n2026-01-01T00:00:00.000000Z  INFO aws_load_balancer_controller::controller::leader: became leader lease=aws-load-balancer-controller-leader identity=evil";
    let cfg = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS13]);
    let body = serde_json::to_vec(&service_review(
        forged,
        "CREATE",
        serde_json::json!({"metadata": {"name": "a\nb"}, "spec": {"type": "LoadBalancer"}}),
    ))
    .unwrap();
    let r = post(addr, cfg, PATH, &body).await.unwrap();
    assert_eq!(r.status, 200);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = ctl.stderr_text.lock().unwrap().clone();
        if let Some(line) = text.lines().find(|l| l.contains("admission allowed")) {
            assert!(line.contains(r#"uid="x\n2026"#), "{line}");
            assert!(
                !text
                    .lines()
                    .any(|l| l.contains("became leader") && !l.contains("admission allowed")),
                "a forged line:\n{text}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "no admission log:\n{text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A peer whose connections keep ending badly (here: heads past the buffer, refused with 431)
/// gets its next connections closed before their TLS handshake; other peers are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_whose_connections_end_badly_is_closed_before_its_handshake() {
    use tokio::io::AsyncWriteExt;
    let (args, bundle, _dir) = setup(&[]);
    let ctl = Controller::start(&args);
    let addr: SocketAddr = ctl.addr_of("webhook server listening");
    let cfg = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS13]);
    let mut refused_head = 0;
    let mut closed_before_handshake = 0;
    for _ in 0..80 {
        let Ok(mut s) = connect_from(peer(2), addr, cfg.clone()).await else {
            closed_before_handshake += 1;
            continue;
        };
        let mut head = format!("POST {PATH} HTTP/1.1\r\nx-a: ").into_bytes();
        head.extend(std::iter::repeat_n(b'a', 80 * 1024));
        let _ = s.write_all(&head).await;
        let _ = s.flush().await;
        if let Ok(r) = read_response(&mut s).await {
            assert_eq!(r.status, 431);
            refused_head += 1;
        }
    }
    assert!(
        refused_head >= 50 && closed_before_handshake >= 20,
        "{refused_head} heads refused, {closed_before_handshake} connections closed unserved"
    );
    let small = review("small", 100);
    let r = post(addr, cfg.clone(), PATH, &small).await.unwrap();
    assert_eq!(r.status, 200, "another peer is served");
}
