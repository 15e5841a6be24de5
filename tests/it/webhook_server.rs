//! The webhook server in-process: certificate rotation under load, body limits and timeouts.

use crate::support::client::{self, connect, read_response, tls_config, write_post};
use crate::support::{service_review, test_bundle, write_pair_atomic, write_pair_torn};
use aws_load_balancer_controller::certs::tls;
use aws_load_balancer_controller::config::TlsMinVersion;
use aws_load_balancer_controller::metrics::{new_registry, WebhookMetrics};
use aws_load_balancer_controller::webhook::service_mutator::{ServiceMutator, PATH};
use aws_load_balancer_controller::webhook::{self, server, Handler, Limits};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

struct Running {
    addr: SocketAddr,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

async fn start(dir: tempfile::TempDir, limits: Limits, conn: server::ConnLimits) -> Running {
    let (cfg, _resolver) = tls::server_config(
        dir.path().join("tls.crt"),
        dir.path().join("tls.key"),
        TlsMinVersion::Tls13,
    )
    .unwrap();
    let handler: Arc<dyn Handler> = Arc::new(ServiceMutator {
        load_balancer_class: "service.k8s.aws/nlb".into(),
    });
    let metrics = WebhookMetrics::register(&mut new_registry());
    let router = webhook::router(vec![(PATH, handler)], metrics, limits);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let task = tokio::spawn(server::serve_tls(listener, cfg, router, conn, stop.clone()));
    Running {
        addr,
        stop,
        task,
        _dir: dir,
    }
}

fn default_limits() -> Limits {
    Limits {
        max_body_bytes: 64 * 1024,
        body_timeout: Duration::from_millis(500),
        ..Limits::default()
    }
}

fn lb_review(uid: &str) -> Vec<u8> {
    serde_json::to_vec(&service_review(
        uid,
        "CREATE",
        serde_json::json!({"spec": {"type": "LoadBalancer"}}),
    ))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotation_under_a_request_loop_fails_no_request() {
    let dir = tempfile::tempdir().unwrap();
    let first = test_bundle(None);
    write_pair_atomic(dir.path(), &first);
    let server = start(dir, default_limits(), Default::default()).await;
    let cert_dir = server._dir.path().to_path_buf();

    // The client trusts every CA we will rotate through, as an API server with an overlapping
    // caBundle does; what we check is that no handshake or request fails during the swaps.
    let bundles: Vec<_> = (0..6).map(|_| test_bundle(None)).collect();
    let mut cas: Vec<&str> = bundles.iter().map(|b| b.ca.cert_pem.as_str()).collect();
    cas.push(&first.ca.cert_pem);
    let cfg = tls_config(&cas, &[&rustls::version::TLS13]);

    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut loops = Vec::new();
    for worker in 0..4 {
        let (cfg, done, ok, failed) = (cfg.clone(), done.clone(), ok.clone(), failed.clone());
        let addr = server.addr;
        loops.push(tokio::spawn(async move {
            let mut i = 0;
            while !done.load(Ordering::Relaxed) {
                i += 1;
                match client::post(
                    addr,
                    cfg.clone(),
                    PATH,
                    &lb_review(&format!("{worker}-{i}")),
                )
                .await
                {
                    Ok(r) if r.status == 200 && r.json()["response"]["allowed"] == true => {
                        ok.fetch_add(1, Ordering::Relaxed)
                    }
                    Ok(r) => panic!(
                        "unexpected response {} {}",
                        r.status,
                        String::from_utf8_lossy(&r.body)
                    ),
                    Err(_) => failed.fetch_add(1, Ordering::Relaxed),
                };
            }
        }));
    }
    for (n, bundle) in bundles.iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(150)).await;
        let dir = cert_dir.clone();
        let b = bundle.clone();
        // Alternate atomic swaps with torn writes (certificate first, key 30 ms later).
        tokio::task::spawn_blocking(move || {
            if n % 2 == 0 {
                write_pair_atomic(&dir, &b)
            } else {
                write_pair_torn(&dir, &b, Duration::from_millis(30))
            }
        })
        .await
        .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    done.store(true, Ordering::Relaxed);
    for l in loops {
        l.await.unwrap();
    }

    // New connections now see the last certificate.
    let stream = connect(server.addr, cfg.clone()).await.unwrap();
    let served = stream.get_ref().1.peer_certificates().unwrap()[0].clone();
    let last = bundles.last().unwrap();
    let expected =
        rustls::pki_types::CertificateDer::from_pem_slice(last.cert_pem.as_bytes()).unwrap();
    use rustls::pki_types::pem::PemObject;
    let idx = bundles.iter().position(|b| {
        rustls::pki_types::CertificateDer::from_pem_slice(b.cert_pem.as_bytes()).unwrap() == served
    });
    assert_eq!(
        served, expected,
        "new connections must get the rotated certificate (got bundle {idx:?})"
    );
    assert_eq!(
        failed.load(Ordering::Relaxed),
        0,
        "requests failed during rotation"
    );
    assert!(
        ok.load(Ordering::Relaxed) > 50,
        "the loop ran too few requests to mean anything"
    );
    server.stop.cancel();
    server.task.await.unwrap();
}

#[tokio::test]
async fn huge_and_slow_bodies_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = test_bundle(None);
    write_pair_atomic(dir.path(), &bundle);
    let server = start(dir, default_limits(), Default::default()).await;
    let cfg = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS13]);

    let huge = vec![b' '; 100 * 1024];
    let r = client::post(server.addr, cfg.clone(), PATH, &huge)
        .await
        .unwrap();
    assert_eq!(r.status, 413);

    // Announce a body and never send it: the server gives up instead of holding the connection.
    let mut stream = connect(server.addr, cfg.clone()).await.unwrap();
    write_post(&mut stream, PATH, b"{", 1000).await.unwrap();
    // The 408 itself shows the server gave up on the body (a held connection would never answer).
    let r = read_response(&mut stream).await.unwrap();
    assert_eq!(r.status, 408);
    server.stop.cancel();
    server.task.await.unwrap();
}

#[tokio::test]
async fn slow_headers_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = test_bundle(None);
    write_pair_atomic(dir.path(), &bundle);
    let conn = server::ConnLimits {
        header_timeout: Duration::from_millis(300),
        ..Default::default()
    };
    let server = start(dir, default_limits(), conn).await;
    let cfg = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS13]);
    let mut stream = connect(server.addr, cfg).await.unwrap();
    stream
        .write_all(b"POST /mutate-v1-service HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // hyper answers 408 or closes; either way the connection must end within the limit.
    let result = tokio::time::timeout(Duration::from_secs(5), read_response(&mut stream)).await;
    match result {
        Ok(Ok(r)) => assert_eq!(r.status, 408),
        Ok(Err(_)) => {}
        Err(_) => panic!("slow-header connection was never cut"),
    }
    server.stop.cancel();
    server.task.await.unwrap();
}

/// The read buffer bounds a head, not a body: a head past `server::MAX_BUF` is refused, while an
/// admission whose body is several times the buffer is answered as usual.
#[tokio::test]
async fn a_head_past_the_buffer_is_refused_and_a_large_body_still_served() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = test_bundle(None);
    write_pair_atomic(dir.path(), &bundle);
    let limits = Limits {
        max_body_bytes: 4 * 1024 * 1024,
        ..default_limits()
    };
    let server = start(dir, limits, Default::default()).await;
    let cfg = tls_config(&[&bundle.ca.cert_pem], &[&rustls::version::TLS13]);

    let mut stream = connect(server.addr, cfg.clone()).await.unwrap();
    let head = format!(
        "POST {PATH} HTTP/1.1\r\nHost: x\r\nx-pad: {}\r\n",
        "a".repeat(server::MAX_BUF + 1024)
    );
    let _ = stream.write_all(head.as_bytes()).await;
    match tokio::time::timeout(Duration::from_secs(5), read_response(&mut stream)).await {
        Ok(Ok(r)) => assert_eq!(r.status, 431),
        Ok(Err(_)) => {}
        Err(_) => panic!("an oversize head was never refused"),
    }

    // A review padded to 4 x the buffer (an annotation) is read in pieces and answered.
    let mut review = service_review(
        "big",
        "CREATE",
        serde_json::json!({"metadata": {"annotations": {"pad": "p".repeat(4 * server::MAX_BUF)}},
            "spec": {"type": "LoadBalancer"}}),
    );
    review["request"]["uid"] = "big".into();
    let body = serde_json::to_vec(&review).unwrap();
    assert!(body.len() > 4 * server::MAX_BUF);
    let r = client::post(server.addr, cfg, PATH, &body).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["response"]["uid"], "big");
    server.stop.cancel();
    server.task.await.unwrap();
}
