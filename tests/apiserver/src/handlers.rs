//! HTTP routing: parses Kubernetes API paths and dispatches to discovery, list/watch/get and
//! the write operations in `ops`.

use crate::app::App;
use crate::audit::{self, RequestRecord};
use crate::deletion;
use crate::discovery;
use crate::error::{json_response, ApiError, ApiResult};
use crate::openapi;
use crate::ops::{self, Target};
use crate::patch::{self, PatchType};
use crate::rbac;
use crate::resources::ResourceDef;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::store::WatchStart;
use crate::watch::{watch_response, WatchParams};
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

pub fn router(app: Arc<App>) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(app)
}

fn not_served() -> ApiError {
    ApiError::Custom {
        code: 404,
        reason: "NotFound".into(),
        message: "the server could not find the requested resource".into(),
    }
}

fn ok(v: Option<Value>) -> Response {
    match v {
        Some(v) => json_response(StatusCode::OK, &v),
        None => not_served().into_response(),
    }
}

async fn handle(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
    body: Bytes,
) -> Response {
    let path = uri.path().trim_matches('/');
    let segs: Vec<&str> = if path.is_empty() {
        vec![]
    } else {
        path.split('/').collect()
    };
    match segs.as_slice() {
        ["version"] => ok(Some(discovery::version())),
        ["healthz" | "readyz" | "livez"] => "ok".into_response(),
        ["api"] => ok(Some(discovery::api_versions(&app))),
        ["api", v] => ok(discovery::resource_list(&app, "", v)),
        ["apis"] => ok(Some(discovery::api_groups(&app))),
        ["apis", g] => ok(discovery::api_group(&app, g)),
        ["apis", g, v] => ok(discovery::resource_list(&app, g, v)),
        ["openapi", "v2"] => openapi::v2(&headers),
        ["openapi", "v3"] => ok(Some(openapi::root(&app))),
        ["openapi", "v3", "api", v] => ok(openapi::group_version(&app, "", v)),
        ["openapi", "v3", "apis", g, v] => ok(openapi::group_version(&app, g, v)),
        ["api", v, rest @ ..] => resource(app, "", v, rest, method, &headers, &q, body).await,
        ["apis", g, v, rest @ ..] => resource(app, g, v, rest, method, &headers, &q, body).await,
        _ => not_served().into_response(),
    }
}

/// A parsed resource path.
struct ResPath {
    def: ResourceDef,
    ns: Option<String>,
    name: Option<String>,
    sub: String,
    watch_path: bool,
}

fn parse_path(app: &App, group: &str, version: &str, rest: &[&str]) -> ApiResult<ResPath> {
    let (watch_path, rest) = match rest {
        ["watch", r @ ..] => (true, r),
        r => (false, r),
    };
    let (ns, rest) = match rest {
        ["namespaces", ns, r @ ..]
            if !(r.is_empty() || (r.len() == 1 && matches!(r[0], "status" | "finalize"))) =>
        {
            (Some(ns.to_string()), r)
        }
        r => (None, r),
    };
    let (plural, name, sub) = match rest {
        [p] => (*p, None, ""),
        [p, n] => (*p, Some(n.to_string()), ""),
        [p, n, s] => (*p, Some(n.to_string()), *s),
        _ => return Err(not_served()),
    };
    let def = app
        .resource(group, version, plural)
        .ok_or_else(not_served)?;
    if ns.is_some() && !def.namespaced {
        return Err(not_served());
    }
    if !(sub.is_empty() || (sub == "status" && def.status_subresource)) {
        return Err(not_served());
    }
    Ok(ResPath {
        def,
        ns,
        name,
        sub: sub.to_string(),
        watch_path,
    })
}

#[allow(clippy::too_many_arguments)]
async fn resource(
    app: Arc<App>,
    group: &str,
    version: &str,
    rest: &[&str],
    method: Method,
    headers: &HeaderMap,
    q: &HashMap<String, String>,
    body: Bytes,
) -> Response {
    match dispatch(app, group, version, rest, method, headers, q, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

/// The object of a POST/PUT body: JSON, or protobuf for the kinds kubectl's typed commands
/// create; CBOR is refused clearly instead of misread.
fn parse_body(headers: &HeaderMap, body: &[u8]) -> ApiResult<Value> {
    let ct = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if ct.contains("protobuf") {
        return crate::protobuf::decode(body);
    }
    if ct.contains("cbor") {
        return Err(ApiError::UnsupportedMediaType(format!(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (kube-test-apiserver does not decode {ct})"
        )));
    }
    parse_json(body)
}

fn parse_json(body: &[u8]) -> ApiResult<Value> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("error decoding request body: {e}")))
}

fn with_version(def: &ResourceDef, mut v: Value) -> Value {
    if v.get("apiVersion").and_then(Value::as_str) != Some(def.api_version().as_str())
        && v.get("kind").is_some()
    {
        v["apiVersion"] = json!(def.api_version());
    }
    v
}

/// RBAC for service accounts while enforcement is on (see `TestApiServer::enforce_rbac`).
fn authorize(app: &App, record: &RequestRecord) -> ApiResult<()> {
    if !app.rbac.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(());
    }
    let Some(user) = record.user.as_deref() else {
        return Ok(());
    };
    let Some((ns, name)) = rbac::service_account(user) else {
        return Ok(());
    };
    let group = "rbac.authorization.k8s.io";
    let kinds = [
        ("roles", "Role"),
        ("rolebindings", "RoleBinding"),
        ("clusterroles", "ClusterRole"),
        ("clusterrolebindings", "ClusterRoleBinding"),
    ];
    let mut docs = Vec::new();
    for (plural, kind) in kinds {
        let Some(def) = app.resource(group, "v1", plural) else {
            continue;
        };
        for obj in app.store.list(&def, None).0 {
            let mut obj = (*obj).clone();
            obj["kind"] = json!(kind);
            docs.push(obj);
        }
    }
    if rbac::grants_for(&docs, ns, name).allows(record) {
        Ok(())
    } else {
        Err(ApiError::Custom {
            code: 403,
            reason: "Forbidden".into(),
            message: rbac::forbidden_message(user, record),
        })
    }
}

#[allow(clippy::too_many_arguments)]
async fn dispatch(
    app: Arc<App>,
    group: &str,
    version: &str,
    rest: &[&str],
    method: Method,
    headers: &HeaderMap,
    q: &HashMap<String, String>,
    body: Bytes,
) -> ApiResult<Response> {
    let p = parse_path(&app, group, version, rest)?;
    let watching = p.watch_path || q.get("watch").is_some_and(|w| w == "true" || w == "1");
    let is_namespace_object = p.def.group.is_empty() && p.def.plural == "namespaces";
    let record = RequestRecord {
        verb: audit::verb(&method, p.name.is_some(), watching).to_string(),
        group: p.def.group.clone(),
        version: p.def.version.clone(),
        resource: p.def.plural.clone(),
        subresource: p.sub.clone(),
        // RBAC sees a Namespace object's own name as the request's namespace.
        namespace: if is_namespace_object {
            p.name.clone()
        } else {
            p.ns.clone()
        },
        name: p
            .name
            .clone()
            .or_else(|| audit::selected_name(&method, q.get("fieldSelector"))),
        user: audit::user(headers),
    };
    app.requests.push(record.clone());
    authorize(&app, &record)?;
    let def = &p.def;
    let dry_run = q.get("dryRun").is_some_and(|v| v == "All");
    if def.namespaced
        && p.ns.is_none()
        && (p.name.is_some() || (method != Method::GET && method != Method::DELETE))
    {
        return Err(not_served());
    }
    let ns = p.ns.clone().unwrap_or_default();
    let t = Target {
        def,
        ns: &ns,
        sub: &p.sub,
    };
    let done = |code: StatusCode, v: Value| Ok(json_response(code, &with_version(def, v)));
    match (method, p.name.as_deref()) {
        (Method::GET, _) if watching => watch(app.clone(), &p, q),
        (Method::GET, None) => list(&app, &p, q),
        (Method::GET, Some(name)) => {
            let obj = app
                .store
                .get(def, &ns, name)
                .ok_or_else(|| ApiError::not_found(&def.qualified(), name))?;
            done(StatusCode::OK, (*obj).clone())
        }
        (Method::POST, None) => done(
            StatusCode::CREATED,
            ops::create(&app, &t, parse_body(headers, &body)?, dry_run).await?,
        ),
        (Method::PUT, Some(name)) => done(
            StatusCode::OK,
            ops::update(&app, &t, name, parse_body(headers, &body)?, dry_run).await?,
        ),
        (Method::PATCH, Some(name)) => {
            let ct = headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let kind = PatchType::from_content_type(ct)?;
            if kind == PatchType::Apply && q.get("fieldManager").is_none_or(|m| m.is_empty()) {
                return Err(ApiError::Invalid(
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch".into(),
                ));
            }
            let existed = app.store.get(def, &ns, name).is_some();
            let patch = patch::parse_body(kind, &body)?;
            let out = ops::patch(&app, &t, name, kind, &patch, dry_run).await?;
            done(
                if existed {
                    StatusCode::OK
                } else {
                    StatusCode::CREATED
                },
                out,
            )
        }
        (Method::DELETE, Some(name)) => {
            let opts = if body.is_empty() {
                Value::Null
            } else {
                parse_json(&body)?
            };
            done(
                StatusCode::OK,
                deletion::delete(&app, &t, name, &opts, dry_run).await?,
            )
        }
        (Method::DELETE, None) => {
            let (items, _) = selected(&app, &p, q)?;
            let mut deleted = Vec::new();
            for obj in items {
                let name = obj
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let obj_ns = obj
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let t = Target {
                    def,
                    ns: &obj_ns,
                    sub: "",
                };
                match deletion::delete(&app, &t, &name, &Value::Null, dry_run).await {
                    Ok(v) => deleted.push(v),
                    Err(ApiError::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            let rv = app.store.current_rv().to_string();
            done(
                StatusCode::OK,
                json!({"kind": format!("{}List", def.kind), "apiVersion": def.api_version(), "metadata": {"resourceVersion": rv}, "items": deleted}),
            )
        }
        (m, _) => Err(ApiError::MethodNotAllowed(format!(
            "the server does not allow this method on the requested resource ({m})"
        ))),
    }
}

fn selectors(q: &HashMap<String, String>) -> ApiResult<(LabelSelector, FieldSelector)> {
    let labels = LabelSelector::parse(q.get("labelSelector").map(String::as_str).unwrap_or(""))?;
    let fields = FieldSelector::parse(q.get("fieldSelector").map(String::as_str).unwrap_or(""))?;
    Ok((labels, fields))
}

/// Objects matching the request's namespace and selectors, with the list resourceVersion.
fn selected(
    app: &App,
    p: &ResPath,
    q: &HashMap<String, String>,
) -> ApiResult<(Vec<Arc<Value>>, u64)> {
    let (labels, fields) = selectors(q)?;
    let (items, rv) = app.store.list(&p.def, p.ns.as_deref());
    let items = items
        .into_iter()
        .filter(|o| labels.matches(o) && fields.matches(o))
        .collect();
    Ok((items, rv))
}

fn parse_rv(s: &str) -> ApiResult<u64> {
    s.parse()
        .map_err(|_| ApiError::BadRequest(format!("invalid resource version: {s:?}")))
}

fn list(app: &App, p: &ResPath, q: &HashMap<String, String>) -> ApiResult<Response> {
    let def = &p.def;
    let compacted = app.store.compacted_rv();
    let current = app.store.current_rv();
    if q.get("resourceVersionMatch").is_some_and(|m| m == "Exact") {
        let rv = parse_rv(q.get("resourceVersion").map(String::as_str).unwrap_or(""))?;
        if rv != current {
            return Err(ApiError::Gone(format!(
                "too old resource version: {rv} ({compacted})"
            )));
        }
    }
    let limit = q
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|l| *l > 0);
    let after = match q.get("continue").filter(|c| !c.is_empty()) {
        None => None,
        Some(token) => {
            let bad = || ApiError::BadRequest("continue key is not valid".into());
            let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(token)
                .map_err(|_| bad())?;
            let c: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
            if c["rv"].as_u64().unwrap_or(0) < compacted {
                return Err(ApiError::Gone("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.".into()));
            }
            let part = |f: &str| c[f].as_str().unwrap_or("").to_string();
            Some((part("ns"), part("name")))
        }
    };
    let (labels, fields) = selectors(q)?;
    let (items, remaining, rv) = app.store.list_page(
        def,
        p.ns.as_deref(),
        after,
        |o| labels.matches(o) && fields.matches(o),
        limit.unwrap_or(usize::MAX),
    );
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if remaining > 0 {
        if let Some(last) = items.last() {
            let m = |f: &str| {
                last.pointer(&format!("/metadata/{f}"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let token = json!({"rv": rv, "ns": m("namespace"), "name": m("name")}).to_string();
            meta["continue"] =
                json!(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token));
            meta["remainingItemCount"] = json!(remaining);
        }
    }
    let items: &[Arc<Value>] = &items;
    // Written by hand so 10,000 stored objects are serialized without being copied.
    let av = def.api_version();
    let mut out = format!(
        "{{\"kind\":\"{}List\",\"apiVersion\":\"{av}\",\"metadata\":{meta},\"items\":[",
        def.kind
    )
    .into_bytes();
    for (i, o) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let res = if o.get("apiVersion").and_then(Value::as_str) == Some(av.as_str()) {
            serde_json::to_writer(&mut out, &**o)
        } else {
            serde_json::to_writer(&mut out, &with_version(def, (**o).clone()))
        };
        res.map_err(|e| ApiError::InternalError(e.to_string()))?;
    }
    out.extend_from_slice(b"]}");
    Ok((
        StatusCode::OK,
        [(http::header::CONTENT_TYPE, "application/json")],
        out,
    )
        .into_response())
}

fn watch(app: Arc<App>, p: &ResPath, q: &HashMap<String, String>) -> ApiResult<Response> {
    let (mut labels, mut fields) = selectors(q)?;
    if let Some(name) = p.name.as_ref() {
        fields = FieldSelector::parse(&format!("metadata.name={name}"))?;
        labels = LabelSelector::default();
    }
    let send_initial_events = q.get("sendInitialEvents").is_some_and(|v| v == "true");
    let start = match q.get("resourceVersion").map(String::as_str) {
        None | Some("") | Some("0") => WatchStart::Now,
        Some(_) if send_initial_events => WatchStart::Now,
        Some(rv) => WatchStart::From(parse_rv(rv)?),
    };
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .unwrap_or(1800);
    let params = WatchParams {
        def: p.def.clone(),
        ns: p.ns.clone(),
        labels,
        fields,
        start,
        bookmarks: q.get("allowWatchBookmarks").is_some_and(|v| v == "true"),
        send_initial_events,
        timeout: Duration::from_secs(timeout),
    };
    Ok(watch_response(app, params))
}
