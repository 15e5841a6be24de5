//! The Kubernetes side of shadow mode: a client layer that lets reads through and answers every
//! write itself. A create is answered with the object sent; an update, patch or delete with the
//! object as it is now (read with a GET), so the reconciler carries on as if its write had been
//! accepted and overtaken. Its own leader-election Lease passes (the shadow needs one, under its
//! own id), and so do Warning events with `--dry-run-events`; other events are dropped quietly.

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
        if matches!(m, Method::GET | Method::HEAD) || path.contains("/coordination.k8s.io/") {
            let fut = self.inner.call(req);
            return Box::pin(async move { fut.await.map_err(Into::into) });
        }
        let resource = resource_of(&path);
        if resource == "events" {
            let (real, pass) = (self.layer.real.clone(), self.layer.events);
            return Box::pin(async move {
                let (parts, b) = req.into_parts();
                let bytes = b.collect().await?.to_bytes();
                let warning = serde_json::from_slice::<serde_json::Value>(&bytes)
                    .is_ok_and(|v| v["type"] == "Warning");
                if !(pass && warning) {
                    return Ok(respond(StatusCode::CREATED, bytes));
                }
                let resp = real
                    .send(Request::from_parts(parts, Body::from(bytes.to_vec())))
                    .await?;
                let status = resp.status();
                let out = resp.into_body().collect().await?.to_bytes();
                Ok(respond(status, out))
            });
        }
        let real = self.layer.real.clone();
        let op = operation(&m);
        Box::pin(async move {
            let bytes = req.into_body().collect().await?.to_bytes();
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
            super::shadow::note(&resource, &write);
            if m == Method::POST {
                return Ok(respond(StatusCode::CREATED, bytes));
            }
            // The object as it is: the write "happened", and someone else's write came after.
            let get = Request::get(path.as_str()).body(Vec::new())?;
            match real.request_text(get).await {
                Ok(text) => Ok(respond(StatusCode::OK, Bytes::from(text))),
                Err(kube::Error::Api(e)) => {
                    let status = StatusCode::from_u16(e.code).unwrap_or(StatusCode::NOT_FOUND);
                    Ok(respond(status, Bytes::from(serde_json::to_vec(&e)?)))
                }
                Err(e) => Err(e.into()),
            }
        })
    }
}

/// Builds the client of a `--dry-run` controller from `kc`: writes answered by [`DryRunLayer`].
pub fn client(kc: kube::Config, events: bool) -> Result<kube::Client, kube::Error> {
    let real = kube::Client::try_from(kc.clone())?;
    let layer = DryRunLayer { real, events };
    Ok(kube::client::ClientBuilder::try_from(kc)?
        .with_layer(&layer)
        .build())
}

#[cfg(test)]
mod tests {
    use super::resource_of;

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
