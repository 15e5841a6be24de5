//! Which resource of the Gateway plan stands for which of the Ingress plan
//! (`pkg/ingress2gateway/console/correlate.go`): by resource id, except target groups and
//! their bindings, whose ids differ between the controllers even for one backend; they are
//! matched by the binding's `serviceRef` (`<name>:<port>`). Given the Services, a port named in
//! the Ingress (`port: {name: http}`) is resolved to its number first, so it matches the
//! Gateway's (a backendRef's port is always a number); upstream's console leaves such a pair
//! unmatched (one removed, one added).

use k8s_openapi::api::core::v1::Service;
use serde_json::Value;

use super::model::{Fields, ResourceTree};
use crate::model::upstream_json::{TARGET_GROUP, TARGET_GROUP_BINDING};

/// The key matching a resource of one plan with its counterpart in the other.
pub fn correlation_id(kind: &str, raw_id: &str, tree: &ResourceTree) -> String {
    correlation_id_with(kind, raw_id, tree, &[])
}

/// [`correlation_id`] with named ports resolved through `services`.
pub fn correlation_id_with(
    kind: &str,
    raw_id: &str,
    tree: &ResourceTree,
    services: &[Service],
) -> String {
    if kind != TARGET_GROUP && kind != TARGET_GROUP_BINDING {
        return raw_id.to_string();
    }
    // A target group and its binding share the raw id.
    tree.get(TARGET_GROUP_BINDING)
        .and_then(|bindings| bindings.get(raw_id))
        .map(|b| service_ref_with(b, services))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| raw_id.to_string())
}

/// `<name>:<port>` of a flattened binding's `serviceRef`; "" when either is missing.
pub fn service_ref(fields: &Fields) -> String {
    service_ref_with(fields, &[])
}

/// [`service_ref`] with a named port resolved through `services` (when one of the binding's
/// namespace and name has a port of that name).
pub fn service_ref_with(fields: &Fields, services: &[Service]) -> String {
    let text = |k: &str| fields.get(k).and_then(Value::as_str).unwrap_or_default();
    let name = text("spec.template.spec.serviceRef.name");
    if name.is_empty() {
        return String::new();
    }
    // A number, or (a named port) a string; shown as Go's `%v` shows either.
    let port = match fields.get("spec.template.spec.serviceRef.port") {
        None | Some(Value::Null) => return String::new(),
        Some(Value::String(s)) => {
            let ns = text("spec.template.metadata.namespace");
            named_port(services, ns, name, s).map_or_else(|| s.clone(), |n| n.to_string())
        }
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 => (f as i64).to_string(),
            _ => n.to_string(),
        },
        Some(other) => other.to_string(),
    };
    format!("{name}:{port}")
}

fn named_port(services: &[Service], ns: &str, name: &str, port: &str) -> Option<i32> {
    services
        .iter()
        .find(|s| {
            s.metadata.namespace.as_deref().unwrap_or("default") == ns
                && s.metadata.name.as_deref() == Some(name)
        })?
        .spec
        .as_ref()?
        .ports
        .as_ref()?
        .iter()
        .find(|p| p.name.as_deref() == Some(port))
        .map(|p| p.port)
}
