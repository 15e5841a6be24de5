//! One compared field ([`DiffEntry`], [`DiffStatus`]) and what counts as equal
//! ([`semantic_equal`]): below both the differ and the classifier, which both use them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a field compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiffStatus {
    Same,
    Changed,
    Added,
    Removed,
}

impl DiffStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            DiffStatus::Same => "same",
            DiffStatus::Changed => "changed",
            DiffStatus::Added => "added",
            DiffStatus::Removed => "removed",
        }
    }
}

fn absent(v: &Option<Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One field of one resource. `correlation_id` joins the two plans; the raw ids are what each
/// controller names the resource (what the page shows in each column). `known` marks a
/// difference the migration itself makes (`classify`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffEntry {
    pub resource_type: String,
    pub correlation_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ingress_resource_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub gateway_resource_id: String,
    pub field: String,
    #[serde(default, skip_serializing_if = "absent")]
    pub ingress: Option<Value>,
    #[serde(default, skip_serializing_if = "absent")]
    pub gateway: Option<Value>,
    pub status: DiffStatus,
    #[serde(default, skip_serializing_if = "is_false")]
    pub known: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub known_cause: String,
}

impl DiffEntry {
    pub(super) fn new(kind: &str, corr: &str, field: &str, status: DiffStatus) -> DiffEntry {
        DiffEntry {
            resource_type: kind.to_string(),
            correlation_id: corr.to_string(),
            ingress_resource_id: String::new(),
            gateway_resource_id: String::new(),
            field: field.to_string(),
            ingress: None,
            gateway: None,
            status,
            known: false,
            known_cause: String::new(),
        }
    }
}

/// Whether two values hold the same content, arrays at any depth compared as multisets and
/// numbers by value (`80` = `80.0`, as Go decodes every number to a float).
pub fn semantic_equal(a: &Value, b: &Value) -> bool {
    canonical(a) == canonical(b)
}

fn canonical(v: &Value) -> Value {
    match v {
        Value::Array(items) => {
            let mut c: Vec<Value> = items.iter().map(canonical).collect();
            c.sort_by_cached_key(Value::to_string);
            Value::Array(c)
        }
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), canonical(v))).collect())
        }
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                Value::from(f as i64)
            }
            _ => v.clone(),
        },
        other => other.clone(),
    }
}
