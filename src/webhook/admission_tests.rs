//! [`Admission::handle`]: the webhook paths answered directly, everything else as the router
//! answers it.

use super::service_mutator::{ServiceMutator, PATH};
use super::*;
use crate::metrics::new_registry;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Frame;
use std::pin::Pin;
use std::task::{Context, Poll};

fn admission(body_timeout: Duration) -> Admission {
    let handler: Arc<dyn Handler> = Arc::new(ServiceMutator {
        load_balancer_class: "service.k8s.aws/nlb".into(),
    });
    let limits = Limits {
        body_timeout,
        ..Limits::default()
    };
    router(
        vec![(PATH, handler)],
        WebhookMetrics::register(&mut new_registry()),
        limits,
    )
}

fn delete_review() -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u-1", "operation": "DELETE", "namespace": "ns"}
    }))
    .unwrap()
}

async fn text(response: Response) -> String {
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

/// A body that delivers its bytes, reports its end through `is_end_stream` (as hyper's does once
/// Content-Length bytes arrived) and never yields the end-of-stream frame.
struct NoEndFrame(Option<Bytes>, usize);

impl hyper::body::Body for NoEndFrame {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.0.take() {
            Some(data) => {
                self.1 = 0;
                Poll::Ready(Some(Ok(Frame::data(data))))
            }
            None => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.1 == 0
    }
}

#[tokio::test]
async fn a_body_is_answered_once_all_its_bytes_are_in_without_waiting_for_its_end_frame() {
    // With the wait for the end frame, this request would run into the body timeout (408).
    let app = admission(Duration::from_millis(300));
    let body = delete_review();
    let request = http::Request::post(PATH)
        .header("content-length", body.len())
        .body(NoEndFrame(Some(body.clone().into()), body.len()))
        .unwrap();
    let response = app.handle(request).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        text(response).await,
        r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u-1","allowed":true}}"#
    );
}

#[tokio::test]
async fn webhook_paths_with_a_query_are_answered_and_other_requests_get_the_router_answers() {
    let app = admission(Duration::from_secs(5));
    let post = |uri: &str| {
        http::Request::post(uri)
            .body(Full::new(Bytes::from(delete_review())))
            .unwrap()
    };
    // The API server appends `?timeout=10s` to the webhook's URL.
    let response = app.handle(post(&format!("{PATH}?timeout=10s"))).await;
    assert_eq!(response.status(), 200);
    assert!(text(response).await.contains(r#""allowed":true"#));

    let response = app.handle(post("/mutate-v1-unknown")).await;
    assert_eq!(response.status(), 404);
    assert_eq!(text(response).await, "no admission webhook at this path\n");

    let response = app.handle(post(&format!("{PATH}/"))).await;
    assert_eq!(response.status(), 404);

    let get = http::Request::get(PATH)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = app.handle(get).await;
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "POST");
}
