//! Deletion: preconditions, admission for DELETE, finalizers (deletionTimestamp first, removal
//! when the last finalizer goes, handled in `ops`), and namespace deletion emptying the
//! namespace at once instead of through a namespace controller.

use crate::admission::{self, AdmissionInput};
use crate::app::{now, App};
use crate::error::{ApiError, ApiResult};
use crate::ops::{after_delete, finalizers, meta_mut, str_of, Target, CAS_RETRIES};
use crate::resources::ResourceDef;
use crate::store::object_rv;
use serde_json::{json, Value};

/// Delete: objects with finalizers get a deletionTimestamp and stay; others go at once.
pub async fn delete(
    app: &App,
    t: &Target<'_>,
    name: &str,
    opts: &Value,
    dry_run: bool,
) -> ApiResult<Value> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let cur = app
            .store
            .get(t.def, t.ns, name)
            .ok_or_else(|| ApiError::not_found(&t.def.qualified(), name))?;
        for (field, ptr) in [
            ("UID", "/metadata/uid"),
            ("ResourceVersion", "/metadata/resourceVersion"),
        ] {
            let key = if field == "UID" {
                "uid"
            } else {
                "resourceVersion"
            };
            if let Some(want) = opts
                .pointer(&format!("/preconditions/{key}"))
                .and_then(Value::as_str)
            {
                let have = str_of(&cur, ptr);
                if want != have {
                    return Err(ApiError::Conflict {
                        resource: t.def.qualified(),
                        name: name.into(),
                        detail: format!("Precondition failed: {field} in precondition: {want}, {field} in object meta: {have}"),
                    });
                }
            }
        }
        if attempt == 1 {
            let input = AdmissionInput {
                def: t.def,
                sub: "",
                op: "DELETE",
                ns: t.ns,
                name,
                old: Some(&cur),
                dry_run,
            };
            admission::admit_delete(app, &input).await?;
        }
        if dry_run {
            return Ok((*cur).clone());
        }
        if t.def.group.is_empty() && t.def.plural == "namespaces" && !t.def.custom {
            delete_namespace_content(app, name);
        }
        let expected = object_rv(&cur).unwrap_or(0);
        let result = if finalizers(&cur).is_empty() {
            app.store
                .remove(t.def, t.ns, name, expected)
                .inspect(|gone| after_delete(app, t.def, gone))
        } else if cur.pointer("/metadata/deletionTimestamp").is_some() {
            return Ok((*cur).clone());
        } else {
            let mut new = (*cur).clone();
            let g = new
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let meta = meta_mut(&mut new)?;
            meta.insert("deletionTimestamp".into(), json!(now()));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            meta.insert("generation".into(), json!(g + 1));
            app.store.update(t.def, expected, new)
        };
        match result {
            Err(ApiError::Conflict { .. }) if attempt < CAS_RETRIES => continue,
            Err(e) => return Err(e),
            Ok(v) => return Ok((*v).clone()),
        }
    }
}

/// The real namespace controller empties a deleted namespace; here it happens at once
/// (objects with finalizers only get their deletionTimestamp).
fn delete_namespace_content(app: &App, ns: &str) {
    let defs: Vec<ResourceDef> = {
        let table = app.table();
        let mut seen = Vec::new();
        for g in table.groups().to_vec() {
            for v in table.versions(&g) {
                for d in table.in_group_version(&g, &v) {
                    if d.namespaced
                        && !seen
                            .iter()
                            .any(|s: &ResourceDef| s.storage_key() == d.storage_key())
                    {
                        seen.push(d.clone());
                    }
                }
            }
        }
        seen
    };
    for def in defs {
        for obj in app.store.list(&def, Some(ns)).0 {
            let name = str_of(&obj, "/metadata/name").to_string();
            let rv = object_rv(&obj).unwrap_or(0);
            // Races with other writers are fine to lose here: the object changed or went away.
            if finalizers(&obj).is_empty() {
                let _ = app.store.remove(&def, ns, &name, rv);
            } else if obj.pointer("/metadata/deletionTimestamp").is_none() {
                let mut new = (*obj).clone();
                if let Ok(meta) = meta_mut(&mut new) {
                    meta.insert("deletionTimestamp".into(), json!(now()));
                    meta.insert("deletionGracePeriodSeconds".into(), json!(0));
                }
                let _ = app.store.update(&def, rv, new);
            }
        }
    }
}
