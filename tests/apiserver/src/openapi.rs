//! A minimal OpenAPI surface. v3: just enough for kubectl to learn that every served kind
//! accepts the `fieldValidation` query parameter (server-side validation), so `kubectl create
//! -f` works without `--validate=false`. v2: an empty document, which Helm (client-go's
//! `OpenAPISchema`) fetches before validating a chart's objects; a kind absent from it is not
//! validated. Schemas are empty: objects are not validated.

use crate::app::App;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap};
use serde_json::{json, Map, Value};

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: one entry per served group/version.
pub fn root(app: &App) -> Value {
    let table = app.table();
    let mut paths = Map::new();
    for g in table.groups() {
        for v in table.versions(g) {
            let p = gv_path(g, &v);
            paths.insert(
                p.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash=0")}),
            );
        }
    }
    json!({"paths": paths})
}

/// `/openapi/v3/<api|apis/group>/<version>`: PATCH operations tagged with their kind.
pub fn group_version(app: &App, group: &str, version: &str) -> Option<Value> {
    let table = app.table();
    let defs = table.in_group_version(group, version);
    if defs.is_empty() {
        return None;
    }
    let mut paths = Map::new();
    for d in defs {
        let base = format!("/{}", gv_path(group, version));
        let item = if d.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}/{{name}}", d.plural)
        } else {
            format!("{base}/{}/{{name}}", d.plural)
        };
        let op = json!({
            "x-kubernetes-group-version-kind": {"group": d.group, "version": d.version, "kind": d.kind},
            "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}}],
            "responses": {"200": {"description": "OK"}},
        });
        paths.insert(item, json!({"patch": op.clone(), "put": op}));
    }
    Some(
        json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.33.0"}, "paths": paths, "components": {"schemas": {}}}),
    )
}

/// `/openapi/v2`: an empty document. Helm asks for it in protobuf
/// (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`); an empty protobuf
/// message is zero bytes, so that answer needs no protobuf encoder. The real server labels the
/// answer `application/octet-stream` (the `@` of the Accept type is no valid media type, and Go
/// clients refuse it in a Content-Type). JSON otherwise.
pub fn v2(headers: &HeaderMap) -> Response {
    const PB: &str = "application/octet-stream";
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if accept.contains("protobuf") {
        return ([(header::CONTENT_TYPE, PB)], Vec::<u8>::new()).into_response();
    }
    axum::Json(json!({"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.33.0"}, "paths": {}}))
        .into_response()
}
