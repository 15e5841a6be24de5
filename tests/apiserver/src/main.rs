//! `kube-test-apiserver` binary: runs the in-memory API server until Ctrl-C or SIGTERM.

use clap::Parser;
use kube_test_apiserver::{Options, TestApiServer};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "kube-test-apiserver",
    about = "In-memory Kubernetes API server for tests"
)]
struct Args {
    /// Port on 127.0.0.1 (0 picks a free one; the chosen port is printed).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Write a kubeconfig for this server to this file.
    #[arg(long)]
    kubeconfig_out: Option<PathBuf>,
    /// Where a webhook service listens: `<namespace>/<name>=<ip>:<port>` (repeatable).
    #[arg(long = "service-endpoint", value_parser = parse_endpoint)]
    service_endpoints: Vec<((String, String), SocketAddr)>,
    /// Number of events kept for watches resuming from a resourceVersion.
    #[arg(long)]
    event_history: Option<usize>,
}

fn parse_endpoint(s: &str) -> Result<((String, String), SocketAddr), String> {
    let (svc, addr) = s
        .split_once('=')
        .ok_or("expected <namespace>/<name>=<ip>:<port>")?;
    let (ns, name) = svc
        .split_once('/')
        .ok_or("expected <namespace>/<name> before '='")?;
    if ns.is_empty() || name.is_empty() {
        return Err("namespace and name must not be empty".into());
    }
    let addr: SocketAddr = addr
        .parse()
        .map_err(|e| format!("invalid address {addr:?}: {e}"))?;
    Ok(((ns.to_string(), name.to_string()), addr))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let opts = Options {
        port: args.port,
        service_endpoints: args
            .service_endpoints
            .into_iter()
            .collect::<HashMap<_, _>>(),
        event_history: args.event_history,
    };
    let server = TestApiServer::start(opts).await?;
    if let Some(path) = &args.kubeconfig_out {
        server.write_kubeconfig(path)?;
    }
    println!(
        "kube-test-apiserver listening on {} (port {})",
        server.url(),
        server.addr().port()
    );
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    server.stop().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_endpoint;

    #[test]
    fn service_endpoint_flag() {
        let ((ns, name), addr) = parse_endpoint("kube-system/webhook=127.0.0.1:9443").unwrap();
        assert_eq!(
            (ns.as_str(), name.as_str(), addr.port()),
            ("kube-system", "webhook", 9443)
        );
        assert!(parse_endpoint("webhook=127.0.0.1:9443").is_err());
        assert!(parse_endpoint("a/b=nowhere").is_err());
        assert!(parse_endpoint("/b=127.0.0.1:1").is_err());
    }
}
