//! A route's `status.parents` with this controller's new entries merged in (upstream's
//! `updateRouteStatus`, with one difference, see [`merge`]): entries are matched by parentRef
//! (group, kind, namespace defaulted to the route's, name, sectionName, port, as written), each
//! entry echoes the spec's parentRef as written, and a condition keeps its lastTransitionTime
//! while its status holds.

use std::collections::BTreeSet;

use serde_json::{json, Value};

/// Upstream's `getParentStatusKey`: the parentRef's fields as written, namespace defaulted.
pub fn parent_key(p: &Value, route_ns: &str) -> String {
    let s = |f: &str| p.get(f).and_then(Value::as_str).unwrap_or_default();
    let namespace = p
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or(route_ns);
    let port = p.get("port").and_then(Value::as_i64).map(|n| n.to_string());
    format!(
        "{}/{}/{}/{}/{}/{}",
        s("group"),
        s("kind"),
        namespace,
        s("name"),
        s("sectionName"),
        port.unwrap_or_default()
    )
}

/// One entry to write: the parentRef it is for (as the build read it) and its conditions (type,
/// status, reason, message; generation and time are filled in here).
#[derive(Debug, Clone)]
pub struct Update {
    pub parent_ref: Value,
    pub conditions: Vec<Value>,
}

/// The route as the merge sees it.
pub struct Route<'a> {
    pub namespace: &'a str,
    pub generation: i64,
    pub spec_refs: &'a [Value],
    pub current: &'a [Value],
}

/// `route.current` with `updates` (entries of `controller`) applied:
/// - entries of other controllers stay as they are, where they are;
/// - our entries whose parentRef left the spec are dropped (upstream drops every entry whose
///   parentRef left the spec, other controllers' too; they are not ours to remove);
/// - an updated entry replaces ours for the same parentRef in place, unless that entry already
///   speaks for a newer generation of the route (observedGeneration never moves backwards);
/// - with `append`, updates without an entry yet are added at the end, in spec order.
pub fn merge(
    route: &Route<'_>,
    controller: &str,
    updates: &[Update],
    append: bool,
    now: &str,
) -> Vec<Value> {
    let ns = route.namespace;
    let spec_keys: BTreeSet<String> = route.spec_refs.iter().map(|p| parent_key(p, ns)).collect();
    let by_key = |k: &str| updates.iter().find(|u| parent_key(&u.parent_ref, ns) == k);
    let mut out = Vec::new();
    let mut done = BTreeSet::new();
    for entry in route.current {
        if entry.get("controllerName").and_then(Value::as_str) != Some(controller) {
            out.push(entry.clone());
            continue;
        }
        let key = entry
            .get("parentRef")
            .map(|p| parent_key(p, ns))
            .unwrap_or_default();
        if !spec_keys.contains(&key) || !done.insert(key.clone()) {
            // Left the spec, or a second entry of ours for one parentRef.
            continue;
        }
        match by_key(&key) {
            Some(u) => out.push(render(route, controller, (&key, u), Some(entry), now)),
            None => out.push(entry.clone()),
        }
    }
    if append {
        for u in updates {
            let key = parent_key(&u.parent_ref, ns);
            // A parentRef that left the spec since the build gets no entry.
            if spec_keys.contains(&key) && done.insert(key.clone()) {
                out.push(render(route, controller, (&key, u), None, now));
            }
        }
    }
    out
}

fn observed(entry: &Value) -> i64 {
    entry
        .pointer("/conditions/0/observedGeneration")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

fn render(
    route: &Route<'_>,
    controller: &str,
    (key, u): (&str, &Update),
    existing: Option<&Value>,
    now: &str,
) -> Value {
    if let Some(e) = existing.filter(|e| observed(e) > route.generation) {
        return e.clone();
    }
    let old: &[Value] = existing
        .and_then(|e| e.get("conditions"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let conditions: Vec<Value> = u
        .conditions
        .iter()
        .map(|c| {
            let mut c = c.clone();
            let same_status = old
                .iter()
                .find(|o| o.get("type") == c.get("type"))
                .filter(|o| o.get("status") == c.get("status"));
            let since = same_status
                .and_then(|o| o.get("lastTransitionTime").cloned())
                .unwrap_or_else(|| json!(now));
            c["lastTransitionTime"] = since;
            c["observedGeneration"] = json!(route.generation);
            c
        })
        .collect();
    // The spec's parentRef as written now (the same key as the build's).
    let parent_ref = route
        .spec_refs
        .iter()
        .find(|p| parent_key(p, route.namespace) == key)
        .unwrap_or(&u.parent_ref)
        .clone();
    json!({
        "parentRef": parent_ref,
        "controllerName": controller,
        "conditions": conditions,
    })
}
