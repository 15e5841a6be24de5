//! kube-test-apiserver: an in-memory Kubernetes API server for tests. It serves discovery,
//! the built-in kinds the controller uses and custom resources of CRDs created at run time,
//! with watches, resourceVersions, finalizers, status subresources, patches and admission
//! webhooks, over plain HTTP on 127.0.0.1. Never shipped in the controller binary.
//!
//! Simplifications (documented, on purpose): objects are schema-less JSON (no validation, no
//! defaulting beyond a few fields, no version conversion but the one between core and
//! `events.k8s.io` Events, which share one table); server-side apply is a merge without
//! field ownership; no garbage collection of ownerReferences; deleting a namespace deletes its
//! content at once; no authentication.
#![forbid(unsafe_code)]

mod admission;
mod app;
pub mod audit;
mod defaults;
mod deletion;
mod discovery;
mod error;
mod events;
mod handlers;
mod openapi;
mod ops;
pub mod patch;
mod protobuf;
pub mod rbac;
pub mod resources;
pub mod selectors;
mod store;
mod watch;
mod webhook_client;

pub use audit::RequestRecord;
pub use error::ApiError;

use anyhow::Context;
use app::App;
use serde_json::json;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How to start the server.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Where webhook services (`clientConfig.service` namespace, name) really listen.
    pub service_endpoints: HashMap<(String, String), SocketAddr>,
    /// How many events the watch history keeps (default 100,000); older resourceVersions
    /// get 410 Gone.
    pub event_history: Option<usize>,
}

/// A running server; stop it with [`TestApiServer::stop`].
pub struct TestApiServer {
    app: Arc<App>,
    addr: SocketAddr,
    shutdown: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl TestApiServer {
    pub async fn start(opts: Options) -> anyhow::Result<TestApiServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", opts.port))
            .await
            .with_context(|| format!("binding 127.0.0.1:{}", opts.port))?;
        let addr = listener.local_addr()?;
        let (tx, rx) = tokio::sync::watch::channel(false);
        let app = Arc::new(App::new(
            opts.event_history.unwrap_or(100_000),
            opts.service_endpoints,
            addr,
            rx.clone(),
        ));
        let ns_def = app.core("namespaces");
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let t = ops::Target {
                def: &ns_def,
                ns: "",
                sub: "",
            };
            let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            ops::create(&app, &t, obj, false)
                .await
                .map_err(|e| anyhow::anyhow!("seeding namespace {ns}: {e}"))?;
        }
        let router = handlers::router(app.clone());
        let mut stop = rx;
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, router).with_graceful_shutdown(async move {
                let _ = stop.wait_for(|s| *s).await;
            });
            if let Err(e) = serve.await {
                tracing::error!(error = %e, "kube-test-apiserver stopped with an error");
            }
        });
        Ok(TestApiServer {
            app,
            addr,
            shutdown: tx,
            task,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A `kube::Client` talking to this server, default namespace `default`.
    pub fn client(&self) -> kube::Client {
        let uri: http::Uri = self.url().parse().expect("a valid http URL");
        let config = kube::Config::new(uri);
        kube::Client::try_from(config).expect("a plain-HTTP kube client needs no TLS setup")
    }

    /// Writes a kubeconfig (context `kube-test-apiserver`) for kubectl and other processes.
    /// Owner-only, as clients (helm) warn on a readable kubeconfig.
    pub fn write_kubeconfig(&self, path: &Path) -> anyhow::Result<()> {
        self.write_kubeconfig_as(path, "test")
    }

    /// A kubeconfig whose token is `user`: `system:serviceaccount:<ns>:<name>` makes its requests
    /// those of that service account, authorized by RBAC once [`Self::enforce_rbac`] is on.
    pub fn write_kubeconfig_as(&self, path: &Path, user: &str) -> anyhow::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(path, kubeconfig_as(&self.url(), user))
            .and_then(|()| std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)))
            .with_context(|| format!("writing {}", path.display()))
    }

    /// From now on requests of a service account (token `system:serviceaccount:<ns>:<name>`)
    /// are authorized by the Roles, ClusterRoles and bindings stored in the server, as the
    /// real API server's RBAC authorizer does, and refused with 403 Forbidden otherwise. Any
    /// other user (the `test` token, no token) stays unrestricted, as a cluster admin.
    pub fn enforce_rbac(&self, on: bool) {
        self.app.rbac.store(on, std::sync::atomic::Ordering::SeqCst);
    }

    /// Makes every resourceVersion older than the current one too old (410 Gone) and ends
    /// every open watch with an ERROR 410 event, like an etcd compaction.
    pub fn force_compaction(&self) {
        self.app.store.force_compaction();
    }

    /// Maps a webhook service (namespace, name) to where it listens; replaces any earlier one.
    pub fn set_service_endpoint(&self, namespace: &str, name: &str, addr: SocketAddr) {
        self.set_service_endpoints(namespace, name, &[addr]);
    }

    /// Maps a webhook service to several ready endpoints (old and new pods during a rolling
    /// update): each webhook call goes to the next one in turn. An empty list leaves the
    /// service without endpoints, as when no pod is ready.
    pub fn set_service_endpoints(&self, namespace: &str, name: &str, addrs: &[SocketAddr]) {
        let mut map = self
            .app
            .endpoints
            .write()
            .unwrap_or_else(|p| p.into_inner());
        let key = (namespace.to_string(), name.to_string());
        if addrs.is_empty() {
            map.remove(&key);
        } else {
            map.insert(key, addrs.to_vec());
        }
    }

    /// Every resource request served so far (also those that failed after routing), in order,
    /// with RBAC's attributes. Requests made while seeding the default namespaces are not in it.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.app.requests.snapshot()
    }

    /// Forgets the requests logged so far.
    pub fn clear_requests(&self) {
        self.app.requests.clear();
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.app.store.current_rv()
    }

    /// Ends every watch, stops accepting connections and waits (up to 5 s) for the server.
    pub async fn stop(self) {
        let _ = self.shutdown.send(true);
        let mut task = self.task;
        if tokio::time::timeout(Duration::from_secs(5), &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }
}

/// The kubeconfig text for a server URL.
pub fn kubeconfig(url: &str) -> String {
    kubeconfig_as(url, "test")
}

/// The kubeconfig text for a server URL, authenticating with `token` (taken as the user name).
pub fn kubeconfig_as(url: &str, token: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kube-test-apiserver\n  cluster:\n    server: {url}\n\
         contexts:\n- name: kube-test-apiserver\n  context:\n    cluster: kube-test-apiserver\n    user: test\n    namespace: default\n\
         current-context: kube-test-apiserver\nusers:\n- name: test\n  user:\n    token: {token}\npreferences: {{}}\n"
    )
}
