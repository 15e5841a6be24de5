//! One Event table, two APIs, as in kube-apiserver: `events.k8s.io/v1` Events are stored as core
//! `v1` Events (the resources cohabit), so an Event written through either API is read and
//! watched through both. The conversion is kube-apiserver's (`pkg/apis/events/v1`): a few
//! fields are renamed, everything else keeps its name. Fields present on one side are present
//! on the other, so a round trip gives back the same object.

use serde_json::{Map, Value};

/// `(core/v1 field, events.k8s.io/v1 field)` of every field the two versions name differently.
const RENAMED: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

const CORE_API_VERSION: &str = "v1";
const EVENTS_API_VERSION: &str = "events.k8s.io/v1";

/// `obj` with each top-level field renamed by `rename` and its `apiVersion` set to `api_version`
/// (when it has one: objects inside the server always do).
fn renamed(obj: &Value, api_version: &str, rename: impl Fn(&str) -> Option<&'static str>) -> Value {
    let Some(fields) = obj.as_object() else {
        return obj.clone();
    };
    let mut out = Map::with_capacity(fields.len());
    for (k, v) in fields {
        let v = if k == "apiVersion" {
            Value::String(api_version.to_string())
        } else {
            v.clone()
        };
        out.insert(rename(k.as_str()).unwrap_or(k.as_str()).to_string(), v);
    }
    Value::Object(out)
}

/// A stored (core `v1`) Event as `events.k8s.io/v1` serves it.
pub fn core_to_events(core: &Value) -> Value {
    renamed(core, EVENTS_API_VERSION, |k| {
        RENAMED.iter().find(|(c, _)| *c == k).map(|(_, e)| *e)
    })
}

/// An `events.k8s.io/v1` Event as it is stored (core `v1`).
pub fn events_to_core(events: &Value) -> Value {
    renamed(events, CORE_API_VERSION, |k| {
        RENAMED.iter().find(|(_, e)| *e == k).map(|(c, _)| *c)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn core() -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "e1", "namespace": "ns", "resourceVersion": "7"},
            "involvedObject": {"kind": "Ingress", "name": "web", "namespace": "ns"},
            "reason": "SuccessfullyReconciled",
            "message": "Successfully reconciled",
            "type": "Normal",
            "source": {"component": "ingress", "host": "node-1"},
            "firstTimestamp": "2024-01-01T00:00:00Z",
            "lastTimestamp": "2024-01-01T00:01:00Z",
            "count": 3,
            "eventTime": "2024-01-01T00:00:00.000000Z",
            "series": {"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"},
            "action": "Reconcile",
            "related": {"kind": "Service", "name": "web"},
            "reportingComponent": "ingress",
            "reportingInstance": "pod-1"
        })
    }

    #[test]
    fn fields_map_as_kube_apiserver_converts_them() {
        let ev = core_to_events(&core());
        assert_eq!(
            ev,
            json!({
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": "e1", "namespace": "ns", "resourceVersion": "7"},
                "regarding": {"kind": "Ingress", "name": "web", "namespace": "ns"},
                "reason": "SuccessfullyReconciled",
                "note": "Successfully reconciled",
                "type": "Normal",
                "deprecatedSource": {"component": "ingress", "host": "node-1"},
                "deprecatedFirstTimestamp": "2024-01-01T00:00:00Z",
                "deprecatedLastTimestamp": "2024-01-01T00:01:00Z",
                "deprecatedCount": 3,
                "eventTime": "2024-01-01T00:00:00.000000Z",
                "series": {"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"},
                "action": "Reconcile",
                "related": {"kind": "Service", "name": "web"},
                "reportingController": "ingress",
                "reportingInstance": "pod-1"
            })
        );
        assert_eq!(
            events_to_core(&ev),
            core(),
            "a round trip gives the object back"
        );
    }

    #[test]
    fn absent_fields_stay_absent() {
        let ev = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "x"}, "note": "hi"});
        let c = events_to_core(&ev);
        assert_eq!(
            c,
            json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "x"}, "message": "hi"})
        );
        assert_eq!(core_to_events(&c), ev);
    }
}
