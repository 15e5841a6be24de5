//! Discovery documents: /version, /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>,
//! built from the live resource table so custom resources appear as soon as their CRD exists.

use crate::app::App;
use crate::resources::ResourceDef;
use serde_json::{json, Value};

pub fn version() -> Value {
    json!({
        "major": "1", "minor": "33", "gitVersion": "v1.33.0-kube-test-apiserver",
        "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.24.0", "compiler": "gc",
        "platform": "linux/amd64",
    })
}

pub fn api_versions(app: &App) -> Value {
    json!({
        "kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": app.addr.to_string()}],
    })
}

fn group_doc(app: &App, group: &str) -> Value {
    let versions: Vec<Value> = app
        .table()
        .versions(group)
        .into_iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({"name": group, "versions": versions, "preferredVersion": versions.first().cloned().unwrap_or(Value::Null)})
}

pub fn api_groups(app: &App) -> Value {
    let groups: Vec<String> = app
        .table()
        .groups()
        .iter()
        .filter(|g| !g.is_empty())
        .cloned()
        .collect();
    let groups: Vec<Value> = groups.iter().map(|g| group_doc(app, g)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `None` when the group is not served.
pub fn api_group(app: &App, group: &str) -> Option<Value> {
    if group.is_empty() || app.table().versions(group).is_empty() {
        return None;
    }
    let mut doc = group_doc(app, group);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

fn resource_entries(d: &ResourceDef) -> Vec<Value> {
    let verbs = [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];
    let mut main = json!({
        "name": d.plural, "singularName": d.singular, "namespaced": d.namespaced,
        "kind": d.kind, "verbs": verbs,
    });
    if !d.short_names.is_empty() {
        main["shortNames"] = json!(d.short_names);
    }
    if d.custom {
        main["categories"] = json!(["all"]);
    }
    let mut out = vec![main];
    if d.status_subresource {
        out.push(json!({
            "name": format!("{}/status", d.plural), "singularName": "", "namespaced": d.namespaced,
            "kind": d.kind, "verbs": ["get", "patch", "update"],
        }));
    }
    out
}

/// `None` when the group/version is not served.
pub fn resource_list(app: &App, group: &str, version: &str) -> Option<Value> {
    let table = app.table();
    let defs = table.in_group_version(group, version);
    if defs.is_empty() {
        return None;
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let resources: Vec<Value> = defs.into_iter().flat_map(resource_entries).collect();
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}
