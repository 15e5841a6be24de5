//! The console's HTTP server (`pkg/ingress2gateway/console/server.go`'s routes): `GET /` the
//! page (every Gateway's comparison rendered on the server, so it is whole when loaded; `?namespace=`
//! and `&gateway=` narrow it), `/static/` its stylesheet and script, and the JSON of upstream's
//! endpoints — `/api/namespaces`, `/api/gateways?namespace=` (with this build's request counts),
//! `/api/diff?namespace=&gateway=` — plus this build's `/api/verify?namespace=&gateway=`
//! (`--verify`'s verdict and every request with both answers). Errors are `{"error": ...}` with
//! upstream's statuses and texts.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

use albc_model::migrate::console::differ::DiffSummary;
use albc_model::migrate::console::{DiffState, GatewayReport};
use albc_model::migrate::verify::{GroupVerdict, RequestDifference};

use super::page::{render, Page};
use super::source::Source;

/// The page's stylesheet and script, compiled in.
pub const STYLE: &str = include_str!("static/style.css");
pub const SCRIPT: &str = include_str!("static/app.js");

/// What the server answers from.
pub struct Console {
    pub source: Source,
}

type Shared = State<Arc<Console>>;
type Params = Query<HashMap<String, String>>;

/// Every route; any other path is the page, as upstream's `/` pattern answers every path.
pub fn router(console: Arc<Console>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/static/style.css", get(style))
        .route("/static/app.js", get(script))
        .route("/api/namespaces", get(namespaces))
        .route("/api/gateways", get(gateways))
        .route("/api/diff", get(diff))
        .route("/api/verify", get(verify))
        .fallback(index)
        .with_state(console)
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(serde_json::json!({ "error": message }))).into_response()
}

/// A non-empty query parameter.
fn param<'a>(q: &'a HashMap<String, String>, name: &str) -> Option<&'a str> {
    q.get(name).map(String::as_str).filter(|v| !v.is_empty())
}

/// `namespace` and `gateway`, or upstream's 400.
// Boxed: a Response is large, and the happy path should not carry its size.
fn gateway_params(q: &HashMap<String, String>) -> Result<(&str, &str), Box<Response>> {
    let ns = param(q, "namespace").ok_or_else(|| {
        Box::new(error(
            StatusCode::BAD_REQUEST,
            "missing ?namespace= parameter",
        ))
    })?;
    let gw = param(q, "gateway").ok_or_else(|| {
        Box::new(error(
            StatusCode::BAD_REQUEST,
            "missing ?gateway= parameter",
        ))
    })?;
    Ok((ns, gw))
}

async fn index(State(c): Shared, Query(q): Params) -> Response {
    let namespace = param(&q, "namespace");
    let gateway = param(&q, "gateway");
    let description = c.source.description();
    let namespaces = c.source.namespaces().await;
    let reports = match (namespace, gateway) {
        (Some(ns), Some(gw)) => c.source.report(ns, gw).await.map(|r| vec![r]),
        (ns, _) => c.source.reports(ns).await,
    };
    let failure = namespaces
        .as_ref()
        .err()
        .or(reports.as_ref().err())
        .cloned();
    let namespaces = namespaces.unwrap_or_default();
    let reports = reports.unwrap_or_default();
    let page = render(&Page {
        description: &description,
        namespaces: &namespaces,
        reports: &reports,
        namespace,
        gateway,
        error: failure.as_deref(),
    });
    let status = if failure.is_some() {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::OK
    };
    (status, Html(page)).into_response()
}

async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

async fn namespaces(State(c): Shared) -> Response {
    match c.source.namespaces().await {
        Ok(n) => Json(n).into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e),
    }
}

/// One Gateway of `/api/gateways`: upstream's fields, and the requests compared.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GatewayItem<'a> {
    name: &'a str,
    namespace: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    error: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    migrated_from: &'a str,
    summary: DiffSummary,
    verify: VerifyCounts<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VerifyCounts<'a> {
    requests: usize,
    routed_differently: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<&'a str>,
}

fn item(r: &GatewayReport) -> GatewayItem<'_> {
    GatewayItem {
        name: &r.info.name,
        namespace: &r.info.namespace,
        error: &r.info.error,
        migrated_from: &r.info.migrated_from,
        summary: r.summary(),
        verify: VerifyCounts {
            requests: r.verdict.requests,
            routed_differently: r.verdict.differences.len(),
            problem: r.verdict.problem.as_deref(),
        },
    }
}

async fn gateways(State(c): Shared, Query(q): Params) -> Response {
    let Some(ns) = param(&q, "namespace") else {
        return error(StatusCode::BAD_REQUEST, "missing ?namespace= parameter");
    };
    match c.source.reports(Some(ns)).await {
        Ok(reports) => Json(reports.iter().map(item).collect::<Vec<_>>()).into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e),
    }
}

async fn diff(State(c): Shared, Query(q): Params) -> Response {
    let (ns, gw) = match gateway_params(&q) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    let report = match c.source.report(ns, gw).await {
        Ok(r) => r,
        Err(e) => return error(StatusCode::NOT_FOUND, &e),
    };
    match report.diff {
        DiffState::Ready(d) => Json(d).into_response(),
        DiffState::NoIngressPlan => error(
            StatusCode::NOT_FOUND,
            &format!("no ingress plan found for gateway {ns}/{gw}"),
        ),
        DiffState::Invalid(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e),
    }
}

/// `/api/verify`: the verdict, and every request with both answers.
#[derive(Serialize)]
struct VerifyBody<'a> {
    verdict: &'a GroupVerdict,
    requests: &'a [RequestDifference],
}

async fn verify(State(c): Shared, Query(q): Params) -> Response {
    let (ns, gw) = match gateway_params(&q) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    match c.source.report(ns, gw).await {
        Ok(r) => Json(VerifyBody {
            verdict: &r.verdict,
            requests: &r.requests,
        })
        .into_response(),
        Err(e) => error(StatusCode::NOT_FOUND, &e),
    }
}
