//! Patch formats: JSON patch (RFC 6902), JSON merge patch (RFC 7386), strategic merge patch
//! (the Kubernetes one, for the built-in fields controllers patch), and server-side apply,
//! which is modelled as a create-or-merge without field ownership tracking.

use crate::error::ApiError;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    pub fn from_content_type(ct: &str) -> Result<Self, ApiError> {
        let base = ct.split(';').next().unwrap_or("").trim();
        match base {
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Ok(PatchType::Apply),
            other => Err(ApiError::UnsupportedMediaType(format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got {other:?})"
            ))),
        }
    }
}

/// Parses a patch body: JSON for every type, YAML (a JSON superset) for apply.
pub fn parse_body(kind: PatchType, body: &[u8]) -> Result<Value, ApiError> {
    let parsed = match kind {
        PatchType::Apply => serde_yaml::from_slice::<Value>(body).map_err(|e| e.to_string()),
        _ => serde_json::from_slice::<Value>(body).map_err(|e| e.to_string()),
    };
    parsed.map_err(|e| ApiError::BadRequest(format!("error decoding patch: {e}")))
}

/// Applies a patch of any non-apply type to `doc`. `custom` refuses strategic merge, as the
/// real apiserver does for custom resources.
pub fn apply_patch(
    doc: &mut Value,
    kind: PatchType,
    patch: &Value,
    custom: bool,
) -> Result<(), ApiError> {
    match kind {
        PatchType::Json => {
            let ops: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| ApiError::BadRequest(format!("error decoding patch: {e}")))?;
            json_patch::patch(doc, &ops).map_err(|e| ApiError::Invalid(format!("the server rejected our request due to an error in our request: {e}")))
        }
        PatchType::Merge => {
            if !patch.is_object() {
                return Err(ApiError::BadRequest("error decoding patch: merge patch must be an object".into()));
            }
            json_patch::merge(doc, patch);
            Ok(())
        }
        PatchType::Strategic if custom => Err(ApiError::UnsupportedMediaType(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml".into(),
        )),
        PatchType::Strategic | PatchType::Apply => {
            if !patch.is_object() {
                return Err(ApiError::BadRequest("error decoding patch: strategic merge patch must be an object".into()));
            }
            if custom {
                json_patch::merge(doc, patch);
            } else if merge_map(doc, patch, "") {
                *doc = Value::Object(Map::new());
            }
            Ok(())
        }
    }
}

/// How a list at a given field path is merged, following the `patchStrategy`/`patchMergeKey`
/// tags of the Kubernetes types. `path` is the dotted field path without list indices.
#[derive(Clone, Copy)]
enum ListStrategy {
    Replace,
    MergeKey(&'static str),
    PrimitiveSet,
}

fn list_strategy(path: &str) -> ListStrategy {
    let last = path.rsplit('.').next().unwrap_or("");
    let parent = path.rsplit('.').nth(1).unwrap_or("");
    match (parent, last) {
        ("metadata", "finalizers") => ListStrategy::PrimitiveSet,
        ("metadata", "ownerReferences") => ListStrategy::MergeKey("uid"),
        (_, "conditions") => ListStrategy::MergeKey("type"),
        ("spec", "readinessGates") => ListStrategy::MergeKey("conditionType"),
        (_, "containers" | "initContainers" | "ephemeralContainers") => {
            ListStrategy::MergeKey("name")
        }
        ("containers" | "initContainers" | "ephemeralContainers", "ports") => {
            ListStrategy::MergeKey("containerPort")
        }
        ("spec", "ports") => ListStrategy::MergeKey("port"),
        (_, "env" | "volumes" | "imagePullSecrets") => ListStrategy::MergeKey("name"),
        (_, "volumeMounts") => ListStrategy::MergeKey("mountPath"),
        ("status", "addresses") => ListStrategy::MergeKey("type"),
        ("spec", "hostAliases") => ListStrategy::MergeKey("ip"),
        ("spec", "topologySpreadConstraints") => ListStrategy::MergeKey("topologyKey"),
        // Mutating/ValidatingWebhookConfiguration: webhooks merge by name (Helm's three-way
        // patches of the chart's configurations rely on it).
        ("", "webhooks") => ListStrategy::MergeKey("name"),
        ("", "secrets") => ListStrategy::MergeKey("name"),
        _ => ListStrategy::Replace,
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Merges patch map `p` into `orig`; returns true when the map itself is to be deleted.
fn merge_map(orig: &mut Value, p: &Value, path: &str) -> bool {
    let Some(pm) = p.as_object() else {
        *orig = p.clone();
        return false;
    };
    match pm.get("$patch").and_then(Value::as_str) {
        Some("delete") => return true,
        Some("replace") => {
            let mut fresh = Value::Object(Map::new());
            let mut rest = pm.clone();
            rest.remove("$patch");
            merge_map(&mut fresh, &Value::Object(rest), path);
            *orig = fresh;
            return false;
        }
        _ => {}
    }
    if !orig.is_object() {
        *orig = Value::Object(Map::new());
    }
    let om = orig.as_object_mut().expect("made an object above");
    let mut orders: Vec<(&str, &Vec<Value>)> = Vec::new();
    for (k, v) in pm {
        if let (Some(field), Some(order)) = (k.strip_prefix("$setElementOrder/"), v.as_array()) {
            orders.push((field, order));
        }
        if k == "$patch" || k == "$retainKeys" || k.starts_with("$setElementOrder/") {
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(list)), Some(del)) = (om.get_mut(field), v.as_array()) {
                list.retain(|x| !del.contains(x));
            }
            continue;
        }
        let cpath = child(path, k);
        match v {
            Value::Null => {
                om.remove(k);
            }
            Value::Object(_) => {
                let slot = om
                    .entry(k.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if merge_map(slot, v, &cpath) {
                    om.remove(k);
                }
            }
            Value::Array(items) => {
                let slot = om
                    .entry(k.clone())
                    .or_insert_with(|| Value::Array(Vec::new()));
                merge_list(slot, items, &cpath);
            }
            scalar => {
                om.insert(k.clone(), scalar.clone());
            }
        }
    }
    for (field, order) in orders {
        let strategy = list_strategy(&child(path, field));
        if let Some(Value::Array(list)) = om.get_mut(field) {
            set_element_order(list, order, strategy);
        }
    }
    false
}

/// `$setElementOrder/<field>`: the merged list takes the order the patch gives (the elements it
/// names, in that order); elements it does not name (added by someone else) follow, as they were.
fn set_element_order(list: &mut [Value], order: &[Value], strategy: ListStrategy) {
    let rank = |item: &Value| -> usize {
        order
            .iter()
            .position(|o| match strategy {
                ListStrategy::MergeKey(key) => o.get(key).is_some() && o.get(key) == item.get(key),
                _ => o == item,
            })
            .unwrap_or(order.len())
    };
    list.sort_by_key(|item| rank(item));
}

fn merge_list(orig: &mut Value, patch: &[Value], path: &str) {
    let replace_all = patch
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"));
    if replace_all || !orig.is_array() {
        *orig = Value::Array(Vec::new());
    }
    let strategy = if replace_all {
        ListStrategy::MergeKey("")
    } else {
        list_strategy(path)
    };
    let list = orig.as_array_mut().expect("made an array above");
    match strategy {
        ListStrategy::Replace => {
            *list = patch.iter().map(|i| fresh(i, path)).collect();
        }
        ListStrategy::PrimitiveSet => {
            for item in patch {
                if !list.contains(item) {
                    list.push(item.clone());
                }
            }
        }
        ListStrategy::MergeKey(key) => {
            for item in patch {
                if item.get("$patch").and_then(Value::as_str) == Some("replace") {
                    continue;
                }
                let id = item.get(key).filter(|_| !key.is_empty());
                let pos = id.and_then(|id| list.iter().position(|o| o.get(key) == Some(id)));
                let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
                match (pos, delete) {
                    (Some(i), true) => {
                        list.remove(i);
                    }
                    (None, true) => {}
                    (Some(i), false) => {
                        if merge_map(&mut list[i], item, path) {
                            list.remove(i);
                        }
                    }
                    (None, false) => list.push(fresh(item, path)),
                }
            }
        }
    }
}

/// A patch value inserted where nothing was: directives are resolved against emptiness.
fn fresh(v: &Value, path: &str) -> Value {
    match v {
        Value::Object(_) => {
            let mut out = Value::Object(Map::new());
            merge_map(&mut out, v, path);
            out
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn smp(mut doc: Value, p: Value) -> Value {
        apply_patch(&mut doc, PatchType::Strategic, &p, false).unwrap();
        doc
    }

    #[test]
    fn strategic_merges_conditions_by_type() {
        let pod = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}]}});
        let out = smp(
            pod,
            json!({"status": {"conditions": [
            {"type": "Ready", "status": "True"}, {"type": "target-health.elbv2.k8s.aws/tg", "status": "True"}]}}),
        );
        assert_eq!(
            out["status"]["conditions"],
            json!([
            {"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"},
            {"type": "target-health.elbv2.k8s.aws/tg", "status": "True"}])
        );
    }

    #[test]
    fn strategic_containers_gates_and_deletes() {
        let pod = json!({"metadata": {"labels": {"a": "1", "b": "2"}, "finalizers": ["x"]},
            "spec": {"containers": [{"name": "c", "image": "i1", "ports": [{"containerPort": 80}]}],
                     "readinessGates": [{"conditionType": "g1"}], "tolerations": [{"key": "t"}]}});
        let out = smp(
            pod,
            json!({"metadata": {"labels": {"a": null, "c": "3"}, "finalizers": ["y"]},
            "spec": {"containers": [{"name": "c", "image": "i2"}, {"name": "d", "$patch": "delete"}],
                     "readinessGates": [{"conditionType": "g2"}], "tolerations": [{"key": "u"}]}}),
        );
        assert_eq!(out["metadata"]["labels"], json!({"b": "2", "c": "3"}));
        assert_eq!(out["metadata"]["finalizers"], json!(["x", "y"]));
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "c", "image": "i2", "ports": [{"containerPort": 80}]}])
        );
        assert_eq!(
            out["spec"]["readinessGates"],
            json!([{"conditionType": "g1"}, {"conditionType": "g2"}])
        );
        assert_eq!(out["spec"]["tolerations"], json!([{"key": "u"}]));
        let out = smp(
            out,
            json!({"spec": {"containers": [{"name": "c", "$patch": "delete"}]},
            "metadata": {"$deleteFromPrimitiveList/finalizers": ["x"], "labels": {"$patch": "replace", "z": "9"}}}),
        );
        assert_eq!(out["spec"]["containers"], json!([]));
        assert_eq!(out["metadata"]["finalizers"], json!(["y"]));
        assert_eq!(out["metadata"]["labels"], json!({"z": "9"}));
    }

    #[test]
    fn strategic_webhooks_merge_by_name_in_the_order_given() {
        // The shape of Helm's three-way patch when a chart adds a webhook: only the new one and
        // the order are sent; the live caBundle of the others is kept.
        let doc = json!({"webhooks": [
            {"name": "a", "clientConfig": {"caBundle": "CA", "service": {"name": "s"}}},
            {"name": "b", "clientConfig": {"caBundle": "CA", "service": {"name": "s"}}}]});
        let out = smp(
            doc,
            json!({"$setElementOrder/webhooks": [{"name": "c"}, {"name": "a"}, {"name": "b"}],
                "webhooks": [{"name": "c", "clientConfig": {"service": {"name": "s"}}},
                    {"name": "b", "clientConfig": {"caBundle": null}}]}),
        );
        let names: Vec<&str> = out["webhooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["c", "a", "b"]);
        assert_eq!(out["webhooks"][1]["clientConfig"]["caBundle"], "CA");
        assert!(out["webhooks"][2]["clientConfig"].get("caBundle").is_none());
    }

    #[test]
    fn json_and_merge_patches() {
        let mut doc = json!({"a": {"b": 1}, "l": [1, 2]});
        apply_patch(
            &mut doc,
            PatchType::Merge,
            &json!({"a": {"b": null, "c": 2}, "l": [3]}),
            true,
        )
        .unwrap();
        assert_eq!(doc, json!({"a": {"c": 2}, "l": [3]}));
        let p = json!([{"op": "add", "path": "/l/-", "value": 4}, {"op": "remove", "path": "/a"}]);
        apply_patch(&mut doc, PatchType::Json, &p, true).unwrap();
        assert_eq!(doc, json!({"l": [3, 4]}));
        let bad = json!([{"op": "test", "path": "/l/0", "value": 9}]);
        assert_eq!(
            apply_patch(&mut doc, PatchType::Json, &bad, true)
                .unwrap_err()
                .code(),
            422
        );
        assert_eq!(
            apply_patch(&mut doc, PatchType::Json, &json!({"op": 1}), true)
                .unwrap_err()
                .code(),
            400
        );
        assert_eq!(
            apply_patch(&mut doc, PatchType::Strategic, &json!({}), true)
                .unwrap_err()
                .code(),
            415
        );
        assert!(PatchType::from_content_type("text/plain").is_err());
        assert_eq!(
            PatchType::from_content_type("application/merge-patch+json; charset=utf-8").unwrap(),
            PatchType::Merge
        );
    }
}
