//! Scale benchmark for the test API server: creates 10,000 pods, lists them, replays them as a
//! 10,000-event watch, and streams 10,000 live MODIFIED events to a watcher.
//! Run: `cargo run --release -p kube-test-apiserver --example scale`.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::json;
use std::time::Instant;

const N: usize = 10_000;

fn pod(i: usize) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": format!("pod-{i:05}"), "labels": {"app": "scale", "shard": (i % 10).to_string()}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80}]}], "nodeName": "node-1"},
    }))
    .expect("a valid pod")
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let server = TestApiServer::start(Options::default()).await?;
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    let rv0 = server.resource_version().to_string();

    let t = Instant::now();
    futures::stream::iter(0..N)
        .map(|i| {
            let pods = pods.clone();
            async move { pods.create(&PostParams::default(), &pod(i)).await }
        })
        .buffer_unordered(32)
        .try_collect::<Vec<_>>()
        .await?;
    println!(
        "create {N} pods (32 concurrent, kube::Client): {:?}",
        t.elapsed()
    );

    let t = Instant::now();
    let list = pods.list(&ListParams::default()).await?;
    assert_eq!(list.items.len(), N);
    println!(
        "list {N} pods (kube::Client, typed decode): {:?}",
        t.elapsed()
    );

    let t = Instant::now();
    let raw = reqwest_like_get(&format!("{}/api/v1/namespaces/default/pods", server.url())).await?;
    println!("list {N} pods (raw HTTP, {} bytes): {:?}", raw, t.elapsed());

    let t = Instant::now();
    let sel = pods
        .list(&ListParams::default().labels("shard in (3,7)"))
        .await?;
    assert_eq!(sel.items.len(), N / 5);
    println!(
        "list with label selector over {N} pods ({} match): {:?}",
        sel.items.len(),
        t.elapsed()
    );

    let t = Instant::now();
    let replayed = pods
        .watch(&WatchParams::default().timeout(60), &rv0)
        .await?
        .try_take_while(|_| futures::future::ready(Ok(true)))
        .take(N)
        .try_fold(0usize, |n, e| {
            futures::future::ready(Ok(n + matches!(e, WatchEvent::Added(_)) as usize))
        })
        .await?;
    assert_eq!(replayed, N);
    println!(
        "watch replay of {N} ADDED events from history: {:?}",
        t.elapsed()
    );

    let rv1 = server.resource_version().to_string();
    let watcher = {
        let pods = pods.clone();
        tokio::spawn(async move {
            let stream = pods
                .watch(&WatchParams::default().timeout(120), &rv1)
                .await?;
            let n = stream
                .take(N)
                .try_fold(0usize, |n, e| {
                    futures::future::ready(Ok(n + matches!(e, WatchEvent::Modified(_)) as usize))
                })
                .await?;
            Ok::<_, kube::Error>(n)
        })
    };
    let t = Instant::now();
    futures::stream::iter(0..N)
        .map(|i| {
            let pods = pods.clone();
            async move {
                let p = Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}}));
                pods.patch(&format!("pod-{i:05}"), &PatchParams::default(), &p)
                    .await
            }
        })
        .buffer_unordered(32)
        .try_collect::<Vec<_>>()
        .await?;
    let writes = t.elapsed();
    let got = watcher.await??;
    assert_eq!(got, N);
    println!("{N} merge patches (32 concurrent): {writes:?}; live watch received all {N} MODIFIED events after {:?}", t.elapsed());
    server.stop().await;
    Ok(())
}

/// Plain HTTP GET with hyper, returning the body size (measures serving without typed decode).
async fn reqwest_like_get(url: &str) -> anyhow::Result<usize> {
    use http_body_util::{BodyExt, Empty};
    let uri: http::Uri = url.parse()?;
    let addr = format!(
        "{}:{}",
        uri.host().unwrap_or("127.0.0.1"),
        uri.port_u16().unwrap_or(80)
    );
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await?;
    tokio::spawn(conn);
    let req = http::Request::get(uri.path())
        .header("host", "127.0.0.1")
        .body(Empty::<bytes::Bytes>::new())?;
    let resp = sender.send_request(req).await?;
    Ok(resp.into_body().collect().await?.to_bytes().len())
}
