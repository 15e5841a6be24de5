//! Per-kind behaviour of the real apiserver that controllers notice: status reset on create,
//! the namespace name label, Secret type `Opaque`, Service cluster IP and node port allocation,
//! CRD status.

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::resources::{crd_resources, ResourceDef};
use serde_json::{json, Map, Value};

fn is(def: &ResourceDef, group: &str, plural: &str) -> bool {
    !def.custom && def.group == group && def.plural == plural
}

/// Defaults applied to a new object before admission and storage.
pub fn on_create(app: &App, def: &ResourceDef, obj: &mut Value) -> ApiResult<()> {
    if def.status_subresource {
        // Status cannot be set at creation for kinds with a status subresource; nodes are the
        // exception (the kubelet registers a node with its status).
        match (def.group.as_str(), def.plural.as_str()) {
            ("", "nodes") if !def.custom => {}
            ("", "pods") if !def.custom => obj["status"] = json!({"phase": "Pending"}),
            ("", "services") | ("networking.k8s.io", "ingresses") if !def.custom => {
                obj["status"] = json!({"loadBalancer": {}})
            }
            _ => {
                if let Some(m) = obj.as_object_mut() {
                    m.remove("status");
                }
            }
        }
    }
    if is(def, "", "namespaces") {
        obj["status"] = json!({"phase": "Active"});
    }
    let untyped = obj
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty();
    if is(def, "", "secrets") && untyped {
        obj["type"] = json!("Opaque");
    }
    common(app, def, None, obj)
}

/// Defaults applied to an updated object (main resource or status).
pub fn on_update(app: &App, def: &ResourceDef, old: &Value, obj: &mut Value) -> ApiResult<()> {
    common(app, def, Some(old), obj)
}

fn common(app: &App, def: &ResourceDef, old: Option<&Value>, obj: &mut Value) -> ApiResult<()> {
    if is(def, "", "namespaces") {
        let name = obj
            .pointer("/metadata/name")
            .cloned()
            .unwrap_or(Value::Null);
        let meta = obj["metadata"]
            .as_object_mut()
            .ok_or_else(|| ApiError::BadRequest("metadata must be an object".into()))?;
        let labels = meta
            .entry("labels")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), name);
        }
    }
    if is(def, "", "services") {
        service(app, old, obj)?;
    }
    if is(def, "apiextensions.k8s.io", "customresourcedefinitions") {
        crd_resources(obj).map_err(|e| {
            let name = obj
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            ApiError::Invalid(format!(
                "CustomResourceDefinition.apiextensions.k8s.io \"{name}\" is invalid: {e}"
            ))
        })?;
        let names = obj.pointer("/spec/names").cloned().unwrap_or(Value::Null);
        let stored: Vec<Value> = obj
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
            .filter_map(|v| v.get("name").cloned())
            .collect();
        let t = crate::app::now();
        obj["status"] = json!({
            "acceptedNames": names,
            "storedVersions": stored,
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": t},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": t},
            ],
        });
    }
    Ok(())
}

fn service(app: &App, old: Option<&Value>, obj: &mut Value) -> ApiResult<()> {
    let spec = obj
        .as_object_mut()
        .ok_or_else(|| ApiError::BadRequest("object must be a JSON object".into()))?
        .entry("spec")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(spec) = spec.as_object_mut() else {
        return Err(ApiError::BadRequest("spec must be an object".into()));
    };
    let old_spec = old.and_then(|o| o.get("spec"));
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_string();
    spec.insert("type".into(), json!(ty));
    if ty != "ExternalName" {
        let ip = match spec.get("clusterIP").and_then(Value::as_str) {
            Some(ip) if !ip.is_empty() => ip.to_string(),
            _ => match old_spec
                .and_then(|s| s.get("clusterIP"))
                .and_then(Value::as_str)
            {
                Some(ip) if !ip.is_empty() => ip.to_string(),
                _ => app.next_cluster_ip(),
            },
        };
        spec.insert("clusterIP".into(), json!(ip));
        spec.insert("clusterIPs".into(), json!([ip]));
        spec.entry("ipFamilies").or_insert_with(|| json!(["IPv4"]));
        spec.entry("sessionAffinity")
            .or_insert_with(|| json!("None"));
    }
    let wants_node_port = ty == "NodePort" || ty == "LoadBalancer";
    let old_ports = old_spec
        .and_then(|s| s.get("ports"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            p.entry("protocol").or_insert_with(|| json!("TCP"));
            if let Some(port) = p.get("port").cloned() {
                p.entry("targetPort").or_insert(port);
            }
            if wants_node_port && p.get("nodePort").and_then(Value::as_u64).unwrap_or(0) == 0 {
                let same = old_ports
                    .iter()
                    .find(|o| o.get("port") == p.get("port") && o.get("nodePort").is_some());
                let np = match same.and_then(|o| o.get("nodePort")) {
                    Some(np) => np.clone(),
                    None => json!(app.next_node_port()),
                };
                p.insert("nodePort".into(), np);
            }
            if !wants_node_port {
                p.remove("nodePort");
            }
        }
    }
    Ok(())
}
