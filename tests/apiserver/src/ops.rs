//! Write semantics shared by every kind: identity checks, uid/timestamps/generation, the status
//! subresource split, optimistic concurrency, finalizers and deletionTimestamp, admission calls,
//! and the side effects of storing a CRD (its resources start or stop being served).

use crate::admission::{self, AdmissionInput};
use crate::app::{name_suffix, new_uid, now, App};
use crate::defaults;
use crate::error::{ApiError, ApiResult};
use crate::patch::{self, PatchType};
use crate::resources::{crd_resources, ResourceDef};
use crate::store::object_rv;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Where a request writes: the resource, the namespace ("" when cluster-scoped) and the
/// subresource ("" for the main resource, "status").
pub struct Target<'a> {
    pub def: &'a ResourceDef,
    pub ns: &'a str,
    pub sub: &'a str,
}

pub(crate) const CAS_RETRIES: usize = 16;

pub(crate) fn meta_mut(obj: &mut Value) -> ApiResult<&mut Map<String, Value>> {
    let m = obj
        .as_object_mut()
        .ok_or_else(|| ApiError::BadRequest("the object must be a JSON object".into()))?;
    let meta = m
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    meta.as_object_mut()
        .ok_or_else(|| ApiError::BadRequest("metadata must be an object".into()))
}

pub(crate) fn str_of<'a>(obj: &'a Value, ptr: &str) -> &'a str {
    obj.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// Checks and fills apiVersion, kind, namespace and (when the URL has one) name.
fn normalize(t: &Target<'_>, obj: &mut Value, url_name: Option<&str>) -> ApiResult<()> {
    let def = t.def;
    let av = def.api_version();
    match obj.get("apiVersion").and_then(Value::as_str) {
        Some(v) if !v.is_empty() && v != av => {
            return Err(ApiError::BadRequest(format!(
                "the API version in the data ({v}) does not match the expected API version ({av})"
            )))
        }
        _ => {}
    }
    match obj.get("kind").and_then(Value::as_str) {
        Some(k) if !k.is_empty() && k != def.kind => {
            return Err(ApiError::BadRequest(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                def.kind
            )))
        }
        _ => {}
    }
    let meta = meta_mut(obj)?;
    if def.namespaced {
        match meta.get("namespace").and_then(Value::as_str) {
            Some(n) if !n.is_empty() && n != t.ns => {
                return Err(ApiError::BadRequest(
                    "the namespace of the provided object does not match the namespace sent on the request".into(),
                ))
            }
            _ => {
                meta.insert("namespace".into(), json!(t.ns));
            }
        }
    } else {
        meta.remove("namespace");
    }
    if let Some(url_name) = url_name {
        let name = meta.get("name").and_then(Value::as_str).unwrap_or("");
        if name != url_name {
            return Err(ApiError::BadRequest(format!(
                "the name of the object ({name}) does not match the name on the URL ({url_name})"
            )));
        }
    }
    meta.remove("managedFields");
    let o = obj.as_object_mut().expect("checked above");
    o.insert("apiVersion".into(), json!(av));
    o.insert("kind".into(), json!(def.kind));
    Ok(())
}

pub(crate) fn finalizers(obj: &Value) -> Vec<Value> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The part of an object whose change bumps `metadata.generation`: everything but metadata
/// and status.
fn spec_part(obj: &Value) -> Value {
    let mut o = obj.clone();
    if let Some(m) = o.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
    }
    o
}

pub async fn create(app: &App, t: &Target<'_>, mut obj: Value, dry_run: bool) -> ApiResult<Value> {
    normalize(t, &mut obj, None)?;
    if t.def.namespaced && app.store.get(&app.core("namespaces"), "", t.ns).is_none() {
        return Err(ApiError::not_found("namespaces", t.ns));
    }
    // Mutating admission sees the object before the name is generated and uid/timestamps set.
    let early_name = str_of(&obj, "/metadata/name").to_string();
    let input = AdmissionInput {
        def: t.def,
        sub: t.sub,
        op: "CREATE",
        ns: t.ns,
        name: &early_name,
        old: None,
        dry_run,
    };
    let mut obj = admission::mutate(app, &input, obj).await?;
    normalize(t, &mut obj, None)?;
    let meta = meta_mut(&mut obj)?;
    let mut name = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if name.is_empty() {
        let prefix = meta
            .get("generateName")
            .and_then(Value::as_str)
            .unwrap_or("");
        if prefix.is_empty() {
            return Err(ApiError::Invalid(format!(
                "{} \"\" is invalid: metadata.name: Required value: name or generateName is required",
                t.def.kind
            )));
        }
        name = format!("{prefix}{}", name_suffix());
        meta.insert("name".into(), json!(name));
    }
    for k in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        meta.remove(k);
    }
    meta.insert("uid".into(), json!(new_uid()));
    meta.insert("creationTimestamp".into(), json!(now()));
    meta.insert("generation".into(), json!(1));
    defaults::on_create(app, t.def, &mut obj)?;
    let input = AdmissionInput {
        name: &name,
        ..input
    };
    admission::validate(app, &input, Some(&obj)).await?;
    if dry_run {
        return Ok(obj);
    }
    let stored = app.store.create(t.def, obj)?;
    after_write(app, t.def, Some(&stored));
    Ok((*stored).clone())
}

/// Update (PUT) of the main resource or a subresource.
pub async fn update(
    app: &App,
    t: &Target<'_>,
    name: &str,
    mut body: Value,
    dry_run: bool,
) -> ApiResult<Value> {
    normalize(t, &mut body, Some(name))?;
    let wanted = object_rv(&body);
    let has_rv = !str_of(&body, "/metadata/resourceVersion").is_empty();
    guarded(app, t, name, dry_run, |cur| {
        if has_rv && wanted != object_rv(cur) {
            return Err(ApiError::conflict_modified(&t.def.qualified(), name));
        }
        Ok(body.clone())
    })
    .await
}

/// Patch of any type; server-side apply creates the object when it does not exist.
pub async fn patch(
    app: &App,
    t: &Target<'_>,
    name: &str,
    kind: PatchType,
    p: &Value,
    dry_run: bool,
) -> ApiResult<Value> {
    if kind == PatchType::Apply && t.sub.is_empty() && app.store.get(t.def, t.ns, name).is_none() {
        let mut obj = json!({});
        patch::apply_patch(&mut obj, kind, p, t.def.custom)?;
        normalize(t, &mut obj, Some(name))?;
        return create(app, t, obj, dry_run).await;
    }
    guarded(app, t, name, dry_run, |cur| {
        let mut doc = cur.clone();
        patch::apply_patch(&mut doc, kind, p, t.def.custom)?;
        // A resourceVersion written by the patch is a precondition.
        let rv = str_of(&doc, "/metadata/resourceVersion");
        if !rv.is_empty()
            && Some(rv)
                != cur
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
        {
            return Err(ApiError::conflict_modified(&t.def.qualified(), name));
        }
        normalize(t, &mut doc, Some(name))?;
        Ok(doc)
    })
    .await
}

/// Read-modify-write with retries on concurrent writes; `make` builds the requested object
/// from the current one and reports precondition failures itself.
async fn guarded(
    app: &App,
    t: &Target<'_>,
    name: &str,
    dry_run: bool,
    make: impl Fn(&Value) -> ApiResult<Value>,
) -> ApiResult<Value> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let cur = app
            .store
            .get(t.def, t.ns, name)
            .ok_or_else(|| ApiError::not_found(&t.def.qualified(), name))?;
        let body = make(&cur)?;
        match commit_update(app, t, name, &cur, body, dry_run).await {
            Err(ApiError::Conflict { .. }) if attempt < CAS_RETRIES => continue,
            other => return other,
        }
    }
}

async fn commit_update(
    app: &App,
    t: &Target<'_>,
    name: &str,
    cur: &Arc<Value>,
    body: Value,
    dry_run: bool,
) -> ApiResult<Value> {
    let mut new = if t.sub == "status" {
        let mut n = (**cur).clone();
        match body.get("status") {
            Some(s) if !s.is_null() => n["status"] = s.clone(),
            _ => {
                if let Some(m) = n.as_object_mut() {
                    m.remove("status");
                }
            }
        }
        n
    } else {
        let mut n = body;
        if t.def.status_subresource {
            match cur.get("status") {
                Some(s) => n["status"] = s.clone(),
                None => {
                    if let Some(m) = n.as_object_mut() {
                        m.remove("status");
                    }
                }
            }
        }
        n
    };
    {
        let old_meta = cur
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let meta = meta_mut(&mut new)?;
        for k in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "resourceVersion",
        ] {
            match old_meta.get(k) {
                Some(v) => meta.insert(k.into(), v.clone()),
                None => meta.remove(k),
            };
        }
    }
    if cur.pointer("/metadata/deletionTimestamp").is_some() {
        let old = finalizers(cur);
        let added: Vec<Value> = finalizers(&new)
            .into_iter()
            .filter(|f| !old.contains(f))
            .collect();
        if !added.is_empty() {
            return Err(ApiError::Invalid(format!(
                "{} \"{name}\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {}",
                t.def.kind,
                Value::Array(added)
            )));
        }
    }
    let input = AdmissionInput {
        def: t.def,
        sub: t.sub,
        op: "UPDATE",
        ns: t.ns,
        name,
        old: Some(cur),
        dry_run,
    };
    let mut new = admission::mutate(app, &input, new).await?;
    normalize(t, &mut new, Some(name))?;
    defaults::on_update(app, t.def, cur, &mut new)?;
    if spec_part(&new) != spec_part(cur) {
        let g = cur
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta_mut(&mut new)?.insert("generation".into(), json!(g + 1));
    }
    admission::validate(app, &input, Some(&new)).await?;
    if new == **cur || dry_run {
        // A no-op write keeps the resourceVersion and sends no event, like the real server.
        return Ok(new);
    }
    let expected = object_rv(cur).unwrap_or(0);
    if new.pointer("/metadata/deletionTimestamp").is_some() && finalizers(&new).is_empty() {
        let gone = app.store.remove(t.def, t.ns, name, expected)?;
        after_delete(app, t.def, &gone);
        return Ok((*gone).clone());
    }
    let stored = app.store.update(t.def, expected, new)?;
    after_write(app, t.def, Some(&stored));
    Ok((*stored).clone())
}

fn is_crd(def: &ResourceDef) -> bool {
    !def.custom && def.group == "apiextensions.k8s.io" && def.plural == "customresourcedefinitions"
}

pub(crate) fn after_write(app: &App, def: &ResourceDef, obj: Option<&Value>) {
    if let (true, Some(crd)) = (is_crd(def), obj) {
        if let Ok(defs) = crd_resources(crd) {
            let mut table = app.table_mut();
            if let Some(first) = defs.first() {
                table.remove_custom(&first.group, &first.plural);
            }
            for d in defs {
                table.insert(d);
            }
        }
    }
}

pub(crate) fn after_delete(app: &App, def: &ResourceDef, obj: &Value) {
    if is_crd(def) {
        if let Ok(defs) = crd_resources(obj) {
            if let Some(first) = defs.first() {
                app.table_mut().remove_custom(&first.group, &first.plural);
                app.store.drop_resource(&first.storage_key());
            }
        }
    }
}
