//! Admission webhooks on :9443: the route table and the shared request/response glue.
//!
//! Each webhook is a [`Handler`] returning a [`Decision`]; this module turns HTTP bodies into
//! requests and decisions into AdmissionReview responses, counts failures with upstream's
//! metric labels, and answers anything malformed without ever panicking.

pub mod aga_validator;
pub mod borrowed;
pub mod budget;
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
pub mod target_control;
pub mod target_control_agent;
pub mod target_control_index;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
pub mod tg_cache;
pub mod tgb_mutator;
pub mod tgb_validator;
pub mod tgb_view;
pub mod threads;
/// The server's TLS (with the certificate reload) lives with the certificates; re-exported under
/// its old path for the wiring that names it.
pub use crate::certs::tls;

use crate::metrics::{RouteMetrics, WebhookMetrics};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::BoxError;
use axum::Router;
use http_body_util::BodyExt;
use hyper::body::Body as HttpBody;
pub use review::{AdmissionRequest, Decision, Operation};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;
use tracing::Instrument;

/// One admission webhook.
#[async_trait::async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Mutating webhooks count failures in the mutation counter, validating ones in the validation counter.
    fn mutating(&self) -> bool;
    async fn admit(&self, request: &AdmissionRequest) -> Decision;

    /// Answers from the body itself when it reads as this handler's borrowed view
    /// ([`borrowed::read`]), with no JSON tree built; `None` hands the request to [`Self::admit`]
    /// after the generic decoding, which answers everything else (malformed reviews included).
    /// Where it answers, it answers what the generic path would.
    fn admit_borrowed<'b>(&self, _body: &'b [u8]) -> Option<Quick<'b>> {
        None
    }
}

/// A handler's answer read from the body by [`Handler::admit_borrowed`].
#[derive(Debug, PartialEq)]
pub struct Quick<'b> {
    pub uid: std::borrow::Cow<'b, str>,
    /// Operations other than CREATE and UPDATE are allowed unread, whatever `decision` says.
    pub operation: Operation,
    pub decision: Decision,
}

/// Limits applied to every admission request.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_body_bytes: usize,
    /// Time allowed to receive the body once headers arrived (headers have their own timeout).
    pub body_timeout: Duration,
    /// Bodies in memory at once, all routes together; over it requests get 429.
    pub max_inflight_body_bytes: usize,
}

/// The `--webhook-*` body limits.
impl From<&crate::config::WebhookConfig> for Limits {
    fn from(w: &crate::config::WebhookConfig) -> Self {
        Limits {
            max_body_bytes: w.max_body_bytes,
            body_timeout: w.request_timeout,
            max_inflight_body_bytes: w.max_inflight_body_bytes,
        }
    }
}

impl Default for Limits {
    /// The flags' defaults.
    fn default() -> Self {
        Limits {
            max_body_bytes: 3 * 1024 * 1024,
            body_timeout: Duration::from_secs(10),
            max_inflight_body_bytes: budget::DEFAULT_MAX_INFLIGHT_BODY_BYTES,
        }
    }
}

/// One webhook's state, shared by its requests (one `Arc` clone per request).
struct Route {
    path: &'static str,
    handler: Arc<dyn Handler>,
    metrics: RouteMetrics,
    limits: Limits,
    budget: Arc<budget::BodyBudget>,
}

/// The admission route table: `(path, handler)`, one line per webhook.
pub type Routes = Vec<(&'static str, Arc<dyn Handler>)>;

/// The webhook server's request handling: a POST to a webhook's exact path (any query, as the API
/// server appends `?timeout=`) is answered directly, everything else by the axum router, which
/// holds the same routes (404 for unknown paths, 405 with `Allow` for other methods).
///
/// Why not the router alone: every pod creation passes here, and the router's per-request
/// boxing, extensions and service layers were a measurable share of an admission's CPU (#24).
#[derive(Clone)]
pub struct Admission {
    routes: Arc<[Arc<Route>]>,
    router: Router,
}

impl Admission {
    /// Answers one request, as the router would.
    pub async fn handle<B>(&self, request: http::Request<B>) -> Response
    where
        B: HttpBody<Data = Bytes> + Send + Unpin + 'static,
        B::Error: Into<BoxError>,
    {
        self.handle_from(request, &Caller::default()).await
    }

    /// [`Self::handle`] for a request from `caller`.
    pub async fn handle_from<B>(&self, request: http::Request<B>, caller: &Caller) -> Response
    where
        B: HttpBody<Data = Bytes> + Send + Unpin + 'static,
        B::Error: Into<BoxError>,
    {
        if request.method() == http::Method::POST {
            let path = request.uri().path();
            if let Some(route) = self.routes.iter().find(|r| r.path == path) {
                return serve_counted(route, request, caller).await;
            }
        }
        match self.router.clone().oneshot(request.map(Body::new)).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }
}

/// Builds the request handling for the given `(path, handler)` table; unknown paths get 404.
pub fn router(routes: Routes, metrics: WebhookMetrics, limits: Limits) -> Admission {
    let mut app = Router::new();
    let mut fast = Vec::new();
    let budget = Arc::new(budget::BodyBudget::new(limits.max_inflight_body_bytes));
    for (path, handler) in routes {
        let route = Arc::new(Route {
            path,
            handler,
            metrics: metrics.route(path),
            limits,
            budget: budget.clone(),
        });
        fast.push(route.clone());
        app = app.route(path, post(serve).with_state(route));
    }
    let router =
        app.fallback(|| async { (StatusCode::NOT_FOUND, "no admission webhook at this path\n") });
    Admission {
        routes: fast.into(),
        router,
    }
}

fn too_large(limits: Limits) -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "request body is larger than {} bytes\n",
            limits.max_body_bytes
        ),
    )
        .into_response()
}

/// Who sent a request: the peer's address, for its share of the body budget, and the
/// connection's activity when [`server`] serves it, so a body that stops arriving makes its
/// connection one that may be closed for a newcomer.
#[derive(Clone, Default)]
pub struct Caller {
    pub peer: Option<std::net::IpAddr>,
    pub activity: Option<Arc<server::Activity>>,
}

impl Caller {
    fn peer(&self) -> std::net::IpAddr {
        self.peer
            .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED))
    }

    fn body_progress(&self) {
        if let Some(a) = &self.activity {
            a.body_progress();
        }
    }

    fn body_read(&self) {
        if let Some(a) = &self.activity {
            a.body_read();
        }
    }
}

/// Reads the body within the size, time and in-flight budgets. The budget share is returned with
/// the body and must be held until the request has been answered.
async fn read_body<'b, B>(
    request: http::Request<B>,
    limits: Limits,
    budget: &'b budget::BodyBudget,
    caller: &Caller,
) -> Result<(Bytes, budget::Charge<'b>), Response>
where
    B: HttpBody<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    let declared = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes) {
        discard(request.into_body(), declared, limits).await;
        return Err(too_large(limits));
    }
    let mut charge = budget.charge(caller.peer(), declared);
    let body = read_limited(request.into_body(), limits, declared, &mut charge, caller).await;
    caller.body_read();
    Ok((body?, charge))
}

fn shed(declared: Option<usize>) -> Response {
    tracing::debug!(
        bytes = declared,
        "admission request shed: --webhook-max-inflight-body-bytes in use"
    );
    (
        StatusCode::TOO_MANY_REQUESTS,
        [(axum::http::header::RETRY_AFTER, "1")],
        "too many admission request bytes in flight; retry\n",
    )
        .into_response()
}

/// Before refusing a body unread: a small one is read and dropped (as Go's net/http does up to
/// 256 KiB), so the client, still writing, gets our status instead of a connection reset. A
/// large one is left unread; the connection closes after the answer.
async fn discard<B: HttpBody + Unpin>(mut body: B, declared: Option<usize>, limits: Limits) {
    if declared.is_none_or(|n| n > budget::SMALL_BODY_BYTES) {
        return;
    }
    let within = limits.body_timeout.min(Duration::from_secs(1));
    let _ = tokio::time::timeout(within, async {
        while let Some(Ok(_)) = body.frame().await {}
    })
    .await;
}

/// Reads the body as one piece: the frame itself when it came whole (no copy), else one buffer
/// grown as the pieces arrive, so a body is held once, not as chunks plus a copy, and never
/// more of it than has arrived.
///
/// Pieces that are there to read at once (the body came with the head) are counted in the
/// budget whatever it holds; once the body has to be waited for, it must fit the budget, and
/// takes its room when its bytes arrive, or the request is shed with 429 (see [`budget`]).
///
/// Stops as soon as the body says it has ended (all of Content-Length received), without waiting
/// for the end-of-stream frame: hyper sends that only on a later turn of the connection task, so
/// waiting for it put a task wake-up and a socket read before every answer (#24).
async fn read_limited<B>(
    mut body: B,
    limits: Limits,
    declared: Option<usize>,
    charge: &mut budget::Charge<'_>,
    caller: &Caller,
) -> Result<Bytes, Response>
where
    B: HttpBody<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    let read = async {
        // A body that arrives as one frame (an admission's, mostly: it comes with the head) is
        // kept as hyper read it, without a copy.
        let mut whole: Option<Bytes> = None;
        let mut buf = Vec::new();
        let mut waited = false;
        while !body.is_end_stream() {
            let frame = match futures::poll!(body.frame()) {
                std::task::Poll::Ready(frame) => frame,
                std::task::Poll::Pending => {
                    if !waited {
                        // The body did not come with the head: tell a client whose body will
                        // not fit now, before it sends it.
                        waited = true;
                        if declared.is_some_and(|n| !charge.fits(n)) {
                            return Err(shed(declared));
                        }
                    }
                    body.frame().await
                }
            };
            let Some(frame) = frame else {
                break;
            };
            let frame = frame.map_err(|e| {
                let e: BoxError = e.into();
                (
                    StatusCode::BAD_REQUEST,
                    format!("cannot read request body: {e}\n"),
                )
                    .into_response()
            })?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let held = whole.as_ref().map_or(buf.len(), Bytes::len);
            if held + data.len() > limits.max_body_bytes {
                return Err(too_large(limits));
            }
            if !waited {
                charge.whole(held + data.len());
            } else {
                caller.body_progress();
                // Room for the declared size once bytes arrive (a chunked body: for what came).
                let size = declared.unwrap_or(0).max(held + data.len());
                if !charge.grow_to(size) {
                    return Err(shed(declared));
                }
            }
            if buf.is_empty() && whole.is_none() {
                whole = Some(data);
                continue;
            }
            if let Some(first) = whole.take() {
                buf.reserve(first.len() + data.len());
                buf.extend_from_slice(&first);
            }
            buf.extend_from_slice(&data);
        }
        Ok(whole.unwrap_or_else(|| Bytes::from(buf)))
    };
    let mut read = std::pin::pin!(read);
    // Mostly the body is in already: answer without arming the body timer.
    if let std::task::Poll::Ready(done) = futures::poll!(read.as_mut()) {
        return done;
    }
    match tokio::time::timeout(limits.body_timeout, read).await {
        Err(_) => Err((
            StatusCode::REQUEST_TIMEOUT,
            "timed out reading the request body\n",
        )
            .into_response()),
        Ok(done) => done,
    }
}

/// Decodes a review; a large body on the blocking pool, so that parsing megabytes never holds up
/// the small admissions served by the same async workers.
async fn decode(body: Bytes) -> Result<AdmissionRequest, (review::ReviewError, Option<String>)> {
    if body.len() <= budget::SMALL_BODY_BYTES {
        return review::decode(&body);
    }
    tokio::task::spawn_blocking(move || review::decode(&body))
        .await
        .unwrap_or_else(|e| {
            Err((
                review::ReviewError::BadRequest(format!("decoding failed: {e}")),
                None,
            ))
        })
}

/// The router's handler of a webhook path (see [`Admission::handle`]).
async fn serve(State(route): State<Arc<Route>>, request: Request) -> Response {
    serve_counted(&route, request, &Caller::default()).await
}

/// One admission request, counted as controller-runtime counts it (in flight, latency, status).
async fn serve_counted<B>(route: &Route, request: http::Request<B>, caller: &Caller) -> Response
where
    B: HttpBody<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    let in_flight = route.metrics.started();
    let response = serve_review(route, request, caller).await;
    route
        .metrics
        .answered(&in_flight, response.status().as_u16());
    response
}

/// An AdmissionReview answer: serialised straight from the decision, no JSON tree in between.
fn answer(uid: &str, decision: &Decision) -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            axum::http::HeaderValue::from_static("application/json"),
        )],
        review::encode_body(uid, decision),
    )
        .into_response()
}

async fn serve_review<B>(route: &Route, request: http::Request<B>, caller: &Caller) -> Response
where
    B: HttpBody<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    let (body, _charge) = match read_body(request, route.limits, &route.budget, caller).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    // A small body first goes to the handler's borrowed reading, when it has one.
    if body.len() <= budget::SMALL_BODY_BYTES {
        if let Some(quick) = route.handler.admit_borrowed(&body) {
            if quick.operation.admits_unread() {
                return answer(&quick.uid, &Decision::Allow);
            }
            let span = tracing::debug_span!("admission", path = route.path, uid = %quick.uid);
            return conclude(route, &quick.uid, &quick.decision, &span);
        }
    }
    let mutating = route.handler.mutating();
    let request = match decode(body).await {
        Ok(request) => request,
        Err((error, uid)) => {
            route
                .metrics
                .record_failure(mutating, "decodeAdmissionReview");
            tracing::warn!(path = route.path, %error, "malformed admission request");
            return match uid {
                // A uid means the caller speaks the protocol: answer in it so its error is readable.
                Some(uid) => answer(&uid, &Decision::errored("decode", error.to_string())),
                None => (StatusCode::BAD_REQUEST, format!("{error}\n")).into_response(),
            };
        }
    };
    // Upstream's handlers answer every operation but CREATE and UPDATE with "allowed" before
    // looking at the object (a DELETE carries none, a CONNECT carries options).
    if request.operation.admits_unread() {
        return answer(&request.uid, &Decision::Allow);
    }
    // With --log-level debug every log line of this admission carries its path and uid. At info
    // the span is disabled and costs nothing (creating an enabled one formats and stores its
    // fields on every admission); the refusal line names path and uid itself.
    let span = tracing::debug_span!("admission", path = route.path, uid = %request.uid);
    let decision = route.handler.admit(&request).instrument(span.clone()).await;
    conclude(route, &request.uid, &decision, &span)
}

/// Counts and logs a handler's decision, and answers it.
fn conclude(route: &Route, uid: &str, decision: &Decision, span: &tracing::Span) -> Response {
    match decision {
        Decision::Deny { message, category } | Decision::Errored { message, category } => {
            route
                .metrics
                .record_failure(route.handler.mutating(), category);
            tracing::info!(path = route.path, uid = %uid, category = %category, %message, "admission refused");
        }
        Decision::Allow | Decision::Patch(_) | Decision::PatchJson(_) => {
            span.in_scope(|| tracing::debug!("admission allowed"))
        }
    }
    answer(uid, decision)
}
