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

/// A body in pieces, each after a wait (the task is woken, as by a socket): what a chunked or
/// slow client sends.
struct Pieces {
    left: std::collections::VecDeque<Bytes>,
    ready: bool,
}

impl hyper::body::Body for Pieces {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if !std::mem::replace(&mut self.ready, false) {
            self.ready = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(self.left.pop_front().map(|piece| Ok(Frame::data(piece))))
    }
}

fn pieces(body: &[u8], sizes: &[usize]) -> Pieces {
    let mut left = std::collections::VecDeque::new();
    let mut at = 0usize;
    for size in sizes.iter().copied().chain([usize::MAX]) {
        let end = body.len().min(at.saturating_add(size));
        left.push_back(Bytes::copy_from_slice(&body[at..end]));
        at = end;
        if at == body.len() {
            break;
        }
    }
    Pieces { left, ready: false }
}

#[tokio::test]
async fn a_body_in_pieces_is_read_whole_and_one_past_the_maximum_is_refused() {
    let app = admission(Duration::from_secs(5));
    let body = delete_review();
    let whole = app
        .handle(
            http::Request::post(PATH)
                .body(Full::new(Bytes::from(body.clone())))
                .unwrap(),
        )
        .await;
    let expected = text(whole).await;
    assert!(
        expected.contains(r#""uid":"u-1","allowed":true"#),
        "{expected}"
    );
    // Without Content-Length (chunked), then with it.
    for declared in [None, Some(body.len())] {
        let mut request = http::Request::post(PATH);
        if let Some(n) = declared {
            request = request.header("content-length", n);
        }
        let request = request.body(pieces(&body, &[1, 7, 40])).unwrap();
        let response = app.handle(request).await;
        assert_eq!(response.status(), 200, "{declared:?}");
        assert_eq!(text(response).await, expected, "{declared:?}");
    }

    let limits = Limits {
        max_body_bytes: 64,
        ..Limits::default()
    };
    let handler: Arc<dyn Handler> = Arc::new(ServiceMutator {
        load_balancer_class: "service.k8s.aws/nlb".into(),
    });
    let small = router(
        vec![(PATH, handler)],
        WebhookMetrics::register(&mut new_registry()),
        limits,
    );
    let padded = [vec![b' '; 40], body.clone()].concat();
    let request = http::Request::post(PATH)
        .body(pieces(&padded, &[40, 30]))
        .unwrap();
    let response = small.handle(request).await;
    assert_eq!(response.status(), 413);
}

/// A body whose first piece arrives after a wait and whose rest never does.
struct Stalls(Option<Bytes>, bool);

impl hyper::body::Body for Stalls {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if !std::mem::replace(&mut self.1, true) {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        match self.0.take() {
            Some(piece) => Poll::Ready(Some(Ok(Frame::data(piece)))),
            None => Poll::Pending,
        }
    }
}

#[tokio::test]
async fn a_body_that_came_with_its_head_is_never_shed_one_still_arriving_is() {
    let handler: Arc<dyn Handler> = Arc::new(ServiceMutator {
        load_balancer_class: "service.k8s.aws/nlb".into(),
    });
    let app = router(
        vec![(PATH, handler)],
        WebhookMetrics::register(&mut new_registry()),
        Limits {
            max_inflight_body_bytes: 64 * 1024,
            ..Limits::default()
        },
    );
    // 60 of the 64 KiB held by a body that began to arrive and stopped.
    let holder = tokio::spawn({
        let app = app.clone();
        async move {
            let request = http::Request::post(PATH)
                .header("content-length", 60 * 1024)
                .body(Stalls(Some(Bytes::from(vec![b' '; 1024])), false))
                .unwrap();
            app.handle(request).await
        }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!holder.is_finished());

    // 200 KB that came whole with its head: over the budget, answered all the same.
    let body = [delete_review(), vec![b' '; 200 * 1024]].concat();
    let whole = http::Request::post(PATH)
        .header("content-length", body.len())
        .body(Full::new(Bytes::from(body.clone())))
        .unwrap();
    let response = app.handle(whole).await;
    assert_eq!(response.status(), 200);
    assert!(text(response).await.contains(r#""allowed":true"#));

    // 20 KiB that has to be waited for does not fit: 429 before it is read.
    let arriving = http::Request::post(PATH)
        .header("content-length", 20 * 1024)
        .body(pieces(&body[..20 * 1024], &[4096]))
        .unwrap();
    let response = app.handle(arriving).await;
    assert_eq!(response.status(), 429);
    holder.abort();
    // Its share returned, the same body is read.
    let _ = holder.await;
    let arriving = http::Request::post(PATH)
        .header("content-length", body.len())
        .body(pieces(&body, &[4096]))
        .unwrap();
    assert_eq!(app.handle(arriving).await.status(), 200);
}
