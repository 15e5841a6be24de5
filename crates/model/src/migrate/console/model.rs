//! A dry-run plan (the JSON upstream's stack marshaller writes into the `dry-run-plan`
//! annotations, ours as `model::upstream_json` renders it) as the console compares it: resource
//! type → resource id → field path → value, nested objects flattened into dotted paths, arrays
//! kept whole (`pkg/ingress2gateway/console/model.go`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::ConsoleError;

/// Field path (`spec.healthCheckConfig.port`) → value.
pub type Fields = BTreeMap<String, Value>;

/// Resource type → resource id → fields.
pub type ResourceTree = BTreeMap<String, BTreeMap<String, Fields>>;

/// Parses a plan; every resource's object flattened.
pub fn parse_stack(raw: &str) -> Result<ResourceTree, ConsoleError> {
    if raw.is_empty() {
        return Err(ConsoleError::EmptyStack);
    }
    let doc: Value =
        serde_json::from_str(raw).map_err(|e| ConsoleError::InvalidStack(e.to_string()))?;
    let Value::Object(doc) = doc else {
        return Err(ConsoleError::InvalidStack("not a JSON object".into()));
    };
    let mut tree = ResourceTree::new();
    let resources = match doc.get("resources") {
        None | Some(Value::Null) => return Ok(tree),
        Some(Value::Object(r)) => r,
        Some(_) => {
            return Err(ConsoleError::InvalidStack(
                "resources is not an object".into(),
            ))
        }
    };
    for (kind, entries) in resources {
        let Value::Object(entries) = entries else {
            return Err(ConsoleError::InvalidStack(format!(
                "resources of {kind} are not an object"
            )));
        };
        let by_id = tree.entry(kind.clone()).or_default();
        for (id, resource) in entries {
            let Value::Object(resource) = resource else {
                return Err(ConsoleError::InvalidResource {
                    kind: kind.clone(),
                    id: id.clone(),
                    error: "not a JSON object".into(),
                });
            };
            let mut flat = Fields::new();
            flatten_map("", resource, &mut flat);
            by_id.insert(id.clone(), flat);
        }
    }
    Ok(tree)
}

/// Nested objects become dotted keys; everything else (arrays, scalars, null) is a leaf.
pub fn flatten_map(prefix: &str, m: &Map<String, Value>, out: &mut Fields) {
    for (k, v) in m {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Object(child) => flatten_map(&key, child, out),
            other => {
                out.insert(key, other.clone());
            }
        }
    }
}

/// A plan in upstream's schema. Every current writer produces it — upstream's controllers, and
/// this build's Ingress and Gateway controllers (`model::upstream_json`) — so a plan with
/// `resources`, or any text that is not our older format, is returned as written. Builds
/// before the Gateway controller wrote upstream's schema put the model's own stack JSON into
/// `gateway.k8s.aws/dry-run-plan` (`{"stackId": ...}`, no `resources`), and clusters may still
/// carry such a plan: it is rendered in upstream's schema, so both plans compare field by field.
pub fn upstream_plan(raw: &str) -> String {
    let Ok(doc) = serde_json::from_str::<Value>(raw) else {
        return raw.to_string();
    };
    if doc.get("resources").is_some() || doc.get("stackId").is_none() {
        return raw.to_string();
    }
    legacy_plan(doc).unwrap_or_else(|| raw.to_string())
}

/// An older build's Gateway plan (the model's stack JSON) in upstream's schema; `None` when it
/// does not read as a stack.
fn legacy_plan(doc: Value) -> Option<String> {
    let stack = serde_json::from_value::<crate::model::Stack>(doc).ok()?;
    Some(crate::model::upstream_json::to_string(
        &stack,
        &crate::model::upstream_json::PlanFacts::default(),
    ))
}
