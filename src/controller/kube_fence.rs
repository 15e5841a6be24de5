//! The write fence, for Kubernetes: the client the leader's controllers write through sends a
//! write (create, update, patch, delete of a finalizer, a status, a binding, an event) only
//! while the same [`Fence`] that guards AWS writes is open, and abandons it at the fence's
//! deadline. A deposed leader that has not noticed its loss yet therefore cannot remove a
//! finalizer or overwrite a status the new leader wrote. Reads always pass, and the Lease
//! itself is renewed through the unfenced client.

use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::{Method, Request, Response};
use kube::client::Body;
use tower::{BoxError, Service};

use crate::aws::Fence;

/// A client whose writes pass `fence`; its reads, and everything when the fence never shuts
/// (no leader election), go straight to `client`.
pub fn fenced(client: &kube::Client, fence: Fence) -> kube::Client {
    let service = Fenced {
        inner: client.clone(),
        fence,
    };
    kube::Client::new(service, client.default_namespace())
}

#[derive(Clone)]
struct Fenced {
    inner: kube::Client,
    fence: Fence,
}

/// The fence's name of a request: reads are "Get", writes their method.
fn operation(m: &Method) -> &'static str {
    match *m {
        Method::GET | Method::HEAD | Method::OPTIONS => "Get",
        Method::POST => "Create",
        Method::PUT => "Update",
        Method::PATCH => "Patch",
        Method::DELETE => "Delete",
        _ => "Write",
    }
}

impl Service<Request<Body>> for Fenced {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<Body>, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let (client, fence) = (self.inner.clone(), self.fence.clone());
        Box::pin(async move {
            let what = format!("{} {}", req.method(), req.uri().path());
            let deadline = fence
                .check(operation(req.method()))
                .map_err(|_| -> BoxError {
                    format!("{what} not sent: this replica does not hold the leader lease").into()
                })?;
            let sent = client.send(req);
            match deadline {
                None => Ok(sent.await?),
                Some(at) => match tokio::time::timeout_at(at.into(), sent).await {
                    Ok(r) => Ok(r?),
                    Err(_) => Err(format!(
                        "{what} abandoned: the leader lease may have passed to another replica"
                    )
                    .into()),
                },
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Patch, PatchParams};
    use kube::Api;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// A client answering every request with an empty ConfigMap, counting what reached it.
    fn counting() -> (kube::Client, Arc<AtomicUsize>) {
        let seen = Arc::new(AtomicUsize::new(0));
        let s = seen.clone();
        let svc = tower::service_fn(move |_req: Request<Body>| {
            s.fetch_add(1, Ordering::SeqCst);
            async move {
                let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "c", "namespace": "default"}});
                Ok::<_, std::convert::Infallible>(Response::new(Body::from(
                    serde_json::to_vec(&cm).unwrap(),
                )))
            }
        });
        (kube::Client::new(svc, "default"), seen)
    }

    #[tokio::test]
    async fn writes_wait_for_the_lease_reads_never_do() {
        let (inner, seen) = counting();
        let fence = Fence::leader_only();
        let api: Api<ConfigMap> = Api::default_namespaced(fenced(&inner, fence.clone()));
        let patch = Patch::Merge(serde_json::json!({"data": {"k": "v"}}));

        api.get("c").await.expect("a read passes a shut fence");
        assert_eq!(seen.load(Ordering::SeqCst), 1);
        let err = api
            .patch("c", &PatchParams::default(), &patch)
            .await
            .expect_err("a write must not leave a replica without the lease");
        assert!(
            err.to_string().contains("does not hold the leader lease"),
            "{err}"
        );
        assert_eq!(
            seen.load(Ordering::SeqCst),
            1,
            "the write never reached the API"
        );

        let now = Instant::now();
        fence.open_until(now + Duration::from_secs(10), now + Duration::from_secs(20));
        api.patch("c", &PatchParams::default(), &patch)
            .await
            .expect("the leader writes");
        assert_eq!(seen.load(Ordering::SeqCst), 2);

        fence.shut();
        assert!(api.delete("c", &Default::default()).await.is_err());
        assert_eq!(
            seen.load(Ordering::SeqCst),
            2,
            "lost the lease: no delete either"
        );
    }

    #[tokio::test]
    async fn without_leader_election_everything_passes() {
        let (inner, seen) = counting();
        let api: Api<ConfigMap> = Api::default_namespaced(fenced(&inner, Fence::default()));
        api.patch(
            "c",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({})),
        )
        .await
        .unwrap();
        assert_eq!(seen.load(Ordering::SeqCst), 1);
    }
}
