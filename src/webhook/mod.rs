//! Admission webhooks on :9443: the route table and the shared request/response glue.
//!
//! Each webhook is a [`Handler`] returning a [`Decision`]; this module turns HTTP bodies into
//! requests and decisions into AdmissionReview responses, counts failures with upstream's
//! metric labels, and answers anything malformed without ever panicking.

pub mod icp_validator;
pub mod indexes;
pub mod ingress_validator;
pub mod late;
pub mod pod_index;
pub mod pod_index_feed;
pub mod pod_readiness;
pub mod quic_server_id;
pub mod review;
pub mod server;
pub mod service_mutator;
#[cfg(test)]
mod test_support;
pub mod tg_cache;
pub mod tgb_mutator;
pub mod tgb_validator;
pub mod tgb_view;
pub mod tls;

use crate::metrics::WebhookMetrics;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use http_body_util::BodyExt;
pub use review::{AdmissionRequest, Decision, Operation};
use std::sync::Arc;
use std::time::Duration;

/// One admission webhook.
#[async_trait::async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Mutating webhooks count failures in the mutation counter, validating ones in the validation counter.
    fn mutating(&self) -> bool;
    async fn admit(&self, request: &AdmissionRequest) -> Decision;
}

/// Limits applied to every admission request.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_body_bytes: usize,
    /// Time allowed to receive the body once headers arrived (headers have their own timeout).
    pub body_timeout: Duration,
}

#[derive(Clone)]
struct Route {
    path: &'static str,
    handler: Arc<dyn Handler>,
    metrics: WebhookMetrics,
    limits: Limits,
}

/// Builds the router for the given `(path, handler)` table; unknown paths get 404.
pub fn router(
    routes: Vec<(&'static str, Arc<dyn Handler>)>,
    metrics: WebhookMetrics,
    limits: Limits,
) -> Router {
    let mut app = Router::new();
    for (path, handler) in routes {
        let route = Route {
            path,
            handler,
            metrics: metrics.clone(),
            limits,
        };
        app = app.route(path, post(serve).with_state(route));
    }
    app.fallback(|| async { (StatusCode::NOT_FOUND, "no admission webhook at this path\n") })
}

async fn read_body(body: Body, limits: Limits) -> Result<Bytes, Response> {
    let limited = http_body_util::Limited::new(body, limits.max_body_bytes);
    match tokio::time::timeout(limits.body_timeout, limited.collect()).await {
        Err(_) => Err((
            StatusCode::REQUEST_TIMEOUT,
            "timed out reading the request body\n",
        )
            .into_response()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "request body is larger than {} bytes\n",
                limits.max_body_bytes
            ),
        )
            .into_response()),
        Ok(Err(e)) => Err((
            StatusCode::BAD_REQUEST,
            format!("cannot read request body: {e}\n"),
        )
            .into_response()),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

async fn serve(State(route): State<Route>, request: Request) -> Response {
    let body = match read_body(request.into_body(), route.limits).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let mutating = route.handler.mutating();
    let request = match review::decode(&body) {
        Ok(request) => request,
        Err((error, uid)) => {
            route
                .metrics
                .record_failure(mutating, route.path, "decodeAdmissionReview");
            tracing::warn!(path = route.path, %error, "malformed admission request");
            return match uid {
                // A uid means the caller speaks the protocol: answer in it so its error is readable.
                Some(uid) => Json(review::encode(
                    &uid,
                    &Decision::errored("decode", error.to_string()),
                ))
                .into_response(),
                None => (StatusCode::BAD_REQUEST, format!("{error}\n")).into_response(),
            };
        }
    };
    // Upstream's handlers answer every operation but CREATE and UPDATE with "allowed" before
    // looking at the object (a DELETE carries none, a CONNECT carries options).
    if request.operation.admits_unread() {
        return Json(review::encode(&request.uid, &Decision::Allow)).into_response();
    }
    let decision = route.handler.admit(&request).await;
    match &decision {
        Decision::Deny { message, category } | Decision::Errored { message, category } => {
            route.metrics.record_failure(mutating, route.path, category);
            tracing::info!(path = route.path, uid = %request.uid, category = %category, %message, "admission refused");
        }
        Decision::Allow | Decision::Patch(_) => {
            tracing::debug!(path = route.path, uid = %request.uid, "admission allowed")
        }
    }
    Json(review::encode(&request.uid, &decision)).into_response()
}
