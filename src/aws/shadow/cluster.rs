//! The Kubernetes side of shadow mode: a client layer that lets reads through and answers every
//! write itself. A create is answered with the object sent; an update, patch or delete with the
//! object as it is now (read with a GET), so the reconciler carries on as if its write had been
//! accepted and overtaken. Its own leader-election Lease passes (the shadow needs one, under its
//! own `…-dry-run` id) — that one Lease only, by namespace and name: a write to any other Lease,
//! the owner's included, is answered here like any other write. Warning events pass with
//! `--dry-run-events`; other events are dropped quietly.

use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use kube::client::{Body, DynBody};
use tower::{BoxError, Layer, Service};

/// Wraps a client stack; `real` is an unwrapped client used for the GETs.
#[derive(Clone)]
pub struct DryRunLayer {
    pub real: kube::Client,
    pub events: bool,
    /// The shadow's own leader-election Lease, the one `coordination.k8s.io` object whose writes
    /// are sent; `None` (no election, or `diff`) sends none.
    pub lease: Option<OwnLease>,
}

/// A Lease by namespace and name: the shadow's own, the only one it writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnLease {
    pub namespace: String,
    pub name: String,
}

impl OwnLease {
    /// Whether the write `m` to `path`, sending `body`, is to this Lease. A create names its
    /// object in the body (its path is the namespace's collection); every other write in the
    /// path. Writes to the collection other than a create (a delete-collection) never are.
    pub fn is_written_by(&self, m: &Method, path: &str, body: &[u8]) -> bool {
        let Some((namespace, name)) = lease_target(path) else {
            return false;
        };
        if namespace != self.namespace {
            return false;
        }
        match name {
            None => *m == Method::POST && created_name(body).as_deref() == Some(self.name.as_str()),
            Some(name) => {
                matches!(*m, Method::PUT | Method::PATCH | Method::DELETE) && name == self.name
            }
        }
    }
}

/// `(namespace, name)` of a `coordination.k8s.io` Lease path, any version: `Some(name)` for
/// one Lease, `None` for a namespace's collection. `None` for every other path.
fn lease_target(path: &str) -> Option<(&str, Option<&str>)> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        ["apis", "coordination.k8s.io", _, "namespaces", ns, "leases"] => Some((*ns, None)),
        ["apis", "coordination.k8s.io", _, "namespaces", ns, "leases", name] => {
            Some((*ns, Some(*name)))
        }
        _ => None,
    }
}

/// `metadata.name` of the object a create sends.
fn created_name(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v["metadata"]["name"].as_str().map(str::to_string)
}

impl<S> Layer<S> for DryRunLayer {
    type Service = DryRunService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        DryRunService {
            inner,
            layer: self.clone(),
        }
    }
}

#[derive(Clone)]
pub struct DryRunService<S> {
    inner: S,
    layer: DryRunLayer,
}

type Resp = Response<Box<DynBody>>;

fn body(bytes: Bytes) -> Box<DynBody> {
    Box::new(Full::new(bytes).map_err(|never| match never {}))
}

fn respond(status: StatusCode, bytes: Bytes) -> Resp {
    let mut r = Response::new(body(bytes));
    *r.status_mut() = status;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

/// `(resource[/subresource], object path)` of an API path, e.g.
/// `/apis/networking.k8s.io/v1/namespaces/a/ingresses/b/status` → `ingresses/status`.
pub fn resource_of(path: &str) -> String {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let rest: &[&str] = match segs.first() {
        Some(&"api") => segs.get(2..).unwrap_or_default(),
        Some(&"apis") => segs.get(3..).unwrap_or_default(),
        _ => &segs,
    };
    let rest = match rest {
        ["namespaces", _, more @ ..] if !more.is_empty() => more,
        other => other,
    };
    match rest {
        [res, _, sub, ..] => format!("{res}/{sub}"),
        [res, ..] => res.to_string(),
        [] => String::new(),
    }
}

fn operation(m: &Method) -> &'static str {
    match *m {
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "other",
    }
}

/// Sends `req` through the unwrapped client and answers with what the API server said.
async fn forward(real: kube::Client, req: Request<Body>) -> Result<Resp, BoxError> {
    let resp = real.send(req).await?;
    let status = resp.status();
    let out = resp.into_body().collect().await?.to_bytes();
    Ok(respond(status, out))
}

/// Answers the write `m` to `path` (sending `bytes`) in the process: noted as a planned write,
/// a create answered with the object sent, anything else with the object as it is now.
async fn intercept(
    real: kube::Client,
    m: Method,
    path: String,
    resource: String,
    bytes: Bytes,
) -> Result<Resp, BoxError> {
    let op = operation(&m);
    let write = super::Write {
        call: format!("kubernetes:{op} {resource}"),
        resource: path.clone(),
        changes: (!bytes.is_empty())
            .then(|| super::Change {
                field: "body".into(),
                before: None,
                after: Some(String::from_utf8_lossy(&bytes).into_owned()),
            })
            .into_iter()
            .collect(),
    };
    super::note(&resource, &write);
    if m == Method::POST {
        return Ok(respond(StatusCode::CREATED, bytes));
    }
    // The object as it is: the write "happened", and someone else's write came after.
    // A status write is answered with the whole object, as the API server does; it is read from
    // the main resource, which the shadow's read-only RBAC grants (`get` on the status
    // subresource it does not).
    let object = path.strip_suffix("/status").unwrap_or(&path);
    let get = Request::get(object).body(Vec::new())?;
    match real.request_text(get).await {
        Ok(text) => Ok(respond(StatusCode::OK, Bytes::from(text))),
        Err(kube::Error::Api(e)) => {
            let status = StatusCode::from_u16(e.code).unwrap_or(StatusCode::NOT_FOUND);
            Ok(respond(status, Bytes::from(serde_json::to_vec(&e)?)))
        }
        Err(e) => Err(e.into()),
    }
}

impl<S> Service<Request<Body>> for DryRunService<S>
where
    S: Service<Request<Body>, Response = Resp> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
{
    type Response = Resp;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Resp, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let m = req.method().clone();
        let path = req.uri().path().to_string();
        // Reads, and the renewals and release of the shadow's own Lease (named in the path).
        let own = self
            .layer
            .lease
            .as_ref()
            .is_some_and(|l| l.is_written_by(&m, &path, &[]));
        if matches!(m, Method::GET | Method::HEAD) || own {
            let fut = self.inner.call(req);
            return Box::pin(async move { fut.await.map_err(Into::into) });
        }
        let resource = resource_of(&path);
        let real = self.layer.real.clone();
        if m == Method::POST && lease_target(&path).is_some() {
            // A create names its Lease in the body: the shadow's own is sent, any other (the
            // owner's) answered here.
            let lease = self.layer.lease.clone();
            return Box::pin(async move {
                let (parts, b) = req.into_parts();
                let bytes = b.collect().await?.to_bytes();
                if lease.is_some_and(|l| l.is_written_by(&m, &path, &bytes)) {
                    let req = Request::from_parts(parts, Body::from(bytes.to_vec()));
                    return forward(real, req).await;
                }
                intercept(real, m, path, resource, bytes).await
            });
        }
        if resource == "events" {
            let pass = self.layer.events;
            return Box::pin(async move {
                let (parts, b) = req.into_parts();
                let bytes = b.collect().await?.to_bytes();
                let warning = serde_json::from_slice::<serde_json::Value>(&bytes)
                    .is_ok_and(|v| v["type"] == "Warning");
                if !(pass && warning) {
                    return Ok(respond(StatusCode::CREATED, bytes));
                }
                forward(real, Request::from_parts(parts, Body::from(bytes.to_vec()))).await
            });
        }
        Box::pin(async move {
            let bytes = req.into_body().collect().await?.to_bytes();
            intercept(real, m, path, resource, bytes).await
        })
    }
}

/// Builds the client of a `--dry-run` controller from `kc`: writes answered by [`DryRunLayer`],
/// those to `lease` (its own leader-election Lease) aside.
pub fn client(
    kc: kube::Config,
    events: bool,
    lease: Option<OwnLease>,
) -> Result<kube::Client, kube::Error> {
    let real = kube::Client::try_from(kc.clone())?;
    let layer = DryRunLayer {
        real,
        events,
        lease,
    };
    Ok(kube::client::ClientBuilder::try_from(kc)?
        .with_layer(&layer)
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::coordination::v1::Lease;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kube::api::{Api, Patch, PatchParams, PostParams};
    use std::convert::Infallible;
    use std::sync::{Arc, Mutex};

    /// What reached the API server, as `METHOD path`.
    type Seen = Arc<Mutex<Vec<String>>>;

    fn lease(namespace: &str, name: &str) -> Lease {
        Lease {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some(namespace.to_string()),
                ..Default::default()
            },
            spec: None,
        }
    }

    /// Notes the request and answers with a Lease.
    fn reply(seen: &Seen, req: &Request<Body>) -> Bytes {
        seen.lock()
            .unwrap()
            .push(format!("{} {}", req.method(), req.uri().path()));
        Bytes::from(serde_json::to_vec(&lease("kube-system", "any")).unwrap())
    }

    /// A shadow's client over a fake API server: the wrapped stack and the unwrapped client
    /// (`real`) both note what reaches the server in `Seen`.
    fn shadow(lease: Option<OwnLease>) -> (kube::Client, Seen) {
        let seen: Seen = Arc::default();
        let s = seen.clone();
        let real = kube::Client::new(
            tower::service_fn(move |req: Request<Body>| {
                let resp = Response::new(Body::from(reply(&s, &req).to_vec()));
                async move { Ok::<_, Infallible>(resp) }
            }),
            "default",
        );
        let s = seen.clone();
        let inner = tower::service_fn(move |req: Request<Body>| {
            let resp = respond(StatusCode::OK, reply(&s, &req));
            async move { Ok::<_, Infallible>(resp) }
        });
        let layer = DryRunLayer {
            real,
            events: false,
            lease,
        };
        (kube::Client::new(layer.layer(inner), "default"), seen)
    }

    /// The writes that reached the API server.
    fn writes(seen: &Seen) -> Vec<String> {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|r| !r.starts_with("GET "))
            .cloned()
            .collect()
    }

    const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";

    #[tokio::test]
    async fn a_shadow_writes_its_own_lease_and_no_other() {
        // Started with `--leader-election-id=custom`: it campaigns on `custom-dry-run`.
        let own = OwnLease {
            namespace: "kube-system".into(),
            name: "custom-dry-run".into(),
        };
        let (client, seen) = shadow(Some(own));
        let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-system");
        let pp = PostParams::default();

        // Its own Lease is created and renewed on the API server.
        let mine = lease("kube-system", "custom-dry-run");
        leases.create(&pp, &mine).await.unwrap();
        leases.replace("custom-dry-run", &pp, &mine).await.unwrap();
        assert_eq!(
            writes(&seen),
            [
                format!("POST {LEASES}"),
                format!("PUT {LEASES}/custom-dry-run"),
            ]
        );

        // The owner's Lease (`custom` itself), another Lease, and one of its own name in another
        // namespace: every write answered in the process, none sent.
        let owners = lease("kube-system", "custom");
        leases.create(&pp, &owners).await.unwrap();
        leases.replace("custom", &pp, &owners).await.unwrap();
        let take = Patch::Merge(serde_json::json!({"spec": {"holderIdentity": "shadow"}}));
        leases
            .patch("custom", &PatchParams::default(), &take)
            .await
            .unwrap();
        leases.delete("custom", &Default::default()).await.unwrap();
        leases
            .replace("other", &pp, &lease("kube-system", "other"))
            .await
            .unwrap();
        let elsewhere: Api<Lease> = Api::namespaced(client, "default");
        elsewhere
            .replace("custom-dry-run", &pp, &lease("default", "custom-dry-run"))
            .await
            .unwrap();
        assert_eq!(
            writes(&seen).len(),
            2,
            "only the shadow's own Lease is written: {:?}",
            seen.lock().unwrap()
        );
    }

    #[tokio::test]
    async fn without_an_own_lease_no_lease_is_written() {
        let (client, seen) = shadow(None);
        let leases: Api<Lease> = Api::namespaced(client, "kube-system");
        let l = lease("kube-system", "custom-dry-run");
        leases.create(&PostParams::default(), &l).await.unwrap();
        leases
            .replace("custom-dry-run", &PostParams::default(), &l)
            .await
            .unwrap();
        assert!(writes(&seen).is_empty(), "{:?}", seen.lock().unwrap());
    }

    #[test]
    fn own_lease_by_namespace_and_name() {
        let own = OwnLease {
            namespace: "kube-system".into(),
            name: "custom-dry-run".into(),
        };
        let body = |name: &str| serde_json::to_vec(&lease("kube-system", name)).unwrap();
        let put = Method::PUT;
        assert!(own.is_written_by(&put, &format!("{LEASES}/custom-dry-run"), &[]));
        assert!(own.is_written_by(&Method::PATCH, &format!("{LEASES}/custom-dry-run"), &[]));
        assert!(own.is_written_by(&Method::POST, LEASES, &body("custom-dry-run")));
        // The owner's Lease, another Lease, another namespace, a delete-collection, another group.
        assert!(!own.is_written_by(&put, &format!("{LEASES}/custom"), &[]));
        assert!(!own.is_written_by(&Method::POST, LEASES, &body("custom")));
        assert!(!own.is_written_by(&Method::POST, LEASES, &[]));
        assert!(!own.is_written_by(&put, &format!("{LEASES}/other"), &[]));
        assert!(!own.is_written_by(
            &put,
            "/apis/coordination.k8s.io/v1/namespaces/default/leases/custom-dry-run",
            &[]
        ));
        assert!(!own.is_written_by(&Method::DELETE, LEASES, &[]));
        assert!(!own.is_written_by(
            &put,
            "/api/v1/namespaces/kube-system/configmaps/custom-dry-run",
            &[]
        ));
    }

    #[test]
    fn resources_of_paths() {
        assert_eq!(
            resource_of("/apis/networking.k8s.io/v1/namespaces/a/ingresses/b/status"),
            "ingresses/status"
        );
        assert_eq!(
            resource_of("/apis/elbv2.k8s.aws/v1beta1/namespaces/a/targetgroupbindings"),
            "targetgroupbindings"
        );
        assert_eq!(resource_of("/api/v1/namespaces/a/events"), "events");
        assert_eq!(resource_of("/api/v1/namespaces/a"), "namespaces");
    }
}
