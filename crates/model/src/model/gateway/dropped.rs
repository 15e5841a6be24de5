//! Fields of a Gateway API object that the types we read it with do not carry (experimental
//! fields such as an HTTPRoute rule's `retry` or `sessionPersistence`, newer fields of a later
//! Gateway API release): the API server stores them, upstream reads none of them, and without a
//! word they would vanish in decoding. Decoding notes their paths on the object (in memory only)
//! so the model can give each a Warning like every other field it does not act on.

use kube::Resource;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeSet;

/// In-memory annotation carrying the dropped paths (comma-separated); never written back.
pub const DROPPED_FIELDS: &str = "albc.internal/dropped-fields";

/// Paths under `spec` that hold a value in `raw` and are missing in `typed` (the decoded object
/// written out again); array elements as `[]`. Empty values are no loss and are not listed.
pub fn dropped_paths(raw: &Value, typed: &Value) -> Vec<String> {
    let mut out = BTreeSet::new();
    if let Some(spec) = raw.get("spec") {
        walk(spec, typed.get("spec"), "spec", &mut out);
    }
    out.into_iter().collect()
}

fn empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

fn walk(raw: &Value, typed: Option<&Value>, path: &str, out: &mut BTreeSet<String>) {
    match raw {
        Value::Object(fields) => {
            for (key, value) in fields {
                let here = format!("{path}.{key}");
                match typed.and_then(|t| t.get(key)) {
                    None if !empty(value) => {
                        out.insert(here);
                    }
                    None => {}
                    Some(t) => walk(value, Some(t), &here, out),
                }
            }
        }
        Value::Array(items) => {
            let here = format!("{path}[]");
            for (i, item) in items.iter().enumerate() {
                walk(item, typed.and_then(|t| t.get(i)), &here, out);
            }
        }
        _ => {}
    }
}

/// `raw` decoded as `K`, with the paths its type dropped noted under [`DROPPED_FIELDS`]. A route
/// whose rules do not all decode (an experimental filter such as `ExternalAuth`) decodes with
/// those rules refused, noted under [`super::refused::REFUSED_RULES`] (see [`super::refused`]).
pub fn decode_noting_dropped<K>(raw: Value) -> Result<K, serde_json::Error>
where
    K: DeserializeOwned + Serialize + Resource,
{
    let (mut obj, raw, refused): (K, Value, _) = match serde_json::from_value(raw.clone()) {
        Ok(obj) => (obj, raw, Vec::new()),
        Err(e) => {
            let mut raw = raw;
            let refused = super::refused::refuse_undecodable_rules::<K>(&mut raw);
            if refused.is_empty() {
                return Err(e);
            }
            (serde_json::from_value(raw.clone())?, raw, refused)
        }
    };
    let dropped = dropped_paths(&raw, &serde_json::to_value(&obj)?);
    let annotations = obj
        .meta_mut()
        .annotations
        .get_or_insert_with(Default::default);
    if dropped.is_empty() {
        annotations.remove(DROPPED_FIELDS);
    } else {
        annotations.insert(DROPPED_FIELDS.into(), dropped.join(","));
    }
    super::refused::note(annotations, &refused);
    Ok(obj)
}

/// The paths [`decode_noting_dropped`] noted on an object.
pub fn dropped_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Vec<&str> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(DROPPED_FIELDS))
        .map(|s| s.split(',').filter(|p| !p.is_empty()).collect())
        .unwrap_or_default()
}

/// The Warning text of a dropped path of a `kind` object.
pub fn dropped_message(kind: &str, path: &str) -> String {
    format!("{kind} field {path} is not supported and is ignored (this controller, like upstream, does not read it)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_api::apis::standard::httproutes::HttpRoute;
    use serde_json::json;

    #[test]
    fn fields_the_standard_types_lack_are_noted_and_known_ones_are_not() {
        let raw = json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "r", "namespace": "ns", "annotations": {"keep": "me"}},
            "spec": {
                "parentRefs": [{"name": "gw"}],
                "rules": [
                    {"backendRefs": [{"name": "svc", "port": 80}],
                     "retry": {"attempts": 3, "codes": [503]},
                     "sessionPersistence": {"sessionName": "s", "type": "Cookie"}},
                    {"backendRefs": [{"name": "svc", "port": 80}], "retry": {"attempts": 2},
                     "futureField": null, "otherFuture": []}
                ]
            }
        });
        let route: HttpRoute = decode_noting_dropped(raw).unwrap();
        assert_eq!(
            dropped_of(&route.metadata),
            ["spec.rules[].retry", "spec.rules[].sessionPersistence"]
        );
        assert_eq!(route.metadata.annotations.as_ref().unwrap()["keep"], "me");
        let plain = json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "r", "namespace": "ns"},
            "spec": {"parentRefs": [{"name": "gw", "sectionName": "http"}], "hostnames": ["a.example.com"],
                     "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                                "filters": [], "backendRefs": [{"name": "svc", "port": 80, "weight": 1}]}]}
        });
        let route: HttpRoute = decode_noting_dropped(plain).unwrap();
        assert!(dropped_of(&route.metadata).is_empty());
    }
}
