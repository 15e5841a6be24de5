//! The AdmissionReview v1 envelope: decoding requests and encoding responses on raw JSON.
//!
//! Objects stay `serde_json::Value` all the way through, so a field this build does not know is
//! never dropped: mutators compute patches against the bytes the API server sent.

use base64::Engine;
use serde_json::{json, Value};

/// Operations the API server sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
    /// Any other (or no) operation text; allowed unread, as controller-runtime's handlers do.
    Other,
}

impl Operation {
    /// Only CREATE and UPDATE reach a handler; upstream allows everything else before decoding.
    pub fn admits_unread(self) -> bool {
        !matches!(self, Operation::Create | Operation::Update)
    }
}

/// The parts of an AdmissionRequest our handlers use.
#[derive(Clone, Debug)]
pub struct AdmissionRequest {
    pub uid: String,
    pub operation: Operation,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub object: Option<Value>,
    pub old_object: Option<Value>,
    pub dry_run: bool,
}

/// A handler's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    Allow,
    /// Rejected by a check: 403 Forbidden with the check's text; `category` labels the metric.
    Deny {
        message: String,
        category: String,
    },
    /// Allowed with these JSON Patch operations (empty = allowed unchanged).
    Patch(Vec<json_patch::PatchOperation>),
    /// The request itself could not be processed (e.g. the object does not decode): 400.
    Errored {
        message: String,
        category: String,
    },
}

impl Decision {
    pub fn deny(category: &str, message: impl Into<String>) -> Self {
        Decision::Deny {
            message: message.into(),
            category: category.to_string(),
        }
    }

    pub fn errored(category: &str, message: impl Into<String>) -> Self {
        Decision::Errored {
            message: message.into(),
            category: category.to_string(),
        }
    }
}

/// Why a body is not an AdmissionReview we can answer.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ReviewError {
    #[error("request body is empty")]
    Empty,
    #[error("request body is not valid JSON: {0}")]
    Json(String),
    #[error("expected kind AdmissionReview with apiVersion admission.k8s.io/v1, got kind {kind:?} apiVersion {api_version:?}")]
    WrongKind { kind: String, api_version: String },
    #[error("AdmissionReview has no request")]
    NoRequest,
    #[error("AdmissionReview request: {0}")]
    BadRequest(String),
}

/// Result of decoding: a request, or an error with the uid when one could be read (then we can
/// still answer with a well-formed AdmissionReview denial instead of a bare HTTP error).
pub fn decode(body: &[u8]) -> Result<AdmissionRequest, (ReviewError, Option<String>)> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err((ReviewError::Empty, None));
    }
    let review: Value =
        serde_json::from_slice(body).map_err(|e| (ReviewError::Json(e.to_string()), None))?;
    let uid = review
        .pointer("/request/uid")
        .and_then(Value::as_str)
        .map(String::from);
    let kind = review
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let api_version = review
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kind != "AdmissionReview" || api_version != "admission.k8s.io/v1" {
        let err = ReviewError::WrongKind {
            kind: kind.to_string(),
            api_version: api_version.to_string(),
        };
        return Err((err, uid));
    }
    let Some(request) = review.get("request").filter(|r| r.is_object()) else {
        return Err((ReviewError::NoRequest, None));
    };
    let Some(uid) = uid.filter(|u| !u.is_empty()) else {
        return Err((ReviewError::BadRequest("missing uid".into()), None));
    };
    let operation = match request.get("operation").and_then(Value::as_str) {
        Some("CREATE") => Operation::Create,
        Some("UPDATE") => Operation::Update,
        Some("DELETE") => Operation::Delete,
        Some("CONNECT") => Operation::Connect,
        _ => Operation::Other,
    };
    let text = |k: &str| {
        request
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    let object = |k: &str| request.get(k).filter(|v| !v.is_null()).cloned();
    Ok(AdmissionRequest {
        operation,
        namespace: text("namespace"),
        name: text("name"),
        object: object("object"),
        old_object: object("oldObject"),
        dry_run: request
            .get("dryRun")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        uid,
    })
}

/// Encodes the AdmissionReview response for `uid`.
pub fn encode(uid: &str, decision: &Decision) -> Value {
    let response = match decision {
        Decision::Allow => json!({ "uid": uid, "allowed": true }),
        Decision::Patch(ops) if ops.is_empty() => json!({ "uid": uid, "allowed": true }),
        Decision::Patch(ops) => {
            let patch = serde_json::to_vec(ops).expect("a JSON patch always serialises");
            json!({
                "uid": uid,
                "allowed": true,
                "patchType": "JSONPatch",
                "patch": base64::engine::general_purpose::STANDARD.encode(patch),
            })
        }
        Decision::Deny { message, .. } => json!({
            "uid": uid,
            "allowed": false,
            "status": { "code": 403, "reason": "Forbidden", "message": message },
        }),
        Decision::Errored { message, .. } => json!({
            "uid": uid,
            "allowed": false,
            "status": { "code": 400, "message": message },
        }),
    };
    json!({ "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(op: &str) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": { "uid": "u-1", "operation": op, "namespace": "ns", "object": {"a": 1}, "oldObject": null }
        }))
        .unwrap()
    }

    #[test]
    fn decodes_a_review() {
        let r = decode(&review("CREATE")).unwrap();
        assert_eq!(
            (r.uid.as_str(), r.operation, r.namespace.as_deref()),
            ("u-1", Operation::Create, Some("ns"))
        );
        assert_eq!(r.object, Some(json!({"a": 1})));
        assert_eq!(r.old_object, None);
    }

    #[test]
    fn rejects_bad_bodies_with_a_reason() {
        assert_eq!(decode(b"").unwrap_err().0, ReviewError::Empty);
        assert!(matches!(
            decode(b"{not json").unwrap_err().0,
            ReviewError::Json(_)
        ));
        let wrong = br#"{"apiVersion":"v1","kind":"Pod","request":{"uid":"x"}}"#;
        let (err, uid) = decode(wrong).unwrap_err();
        assert!(matches!(err, ReviewError::WrongKind { .. }));
        assert_eq!(
            uid.as_deref(),
            Some("x"),
            "the uid is kept so we can answer in-protocol"
        );
        assert_eq!(
            decode(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#)
                .unwrap_err()
                .0,
            ReviewError::NoRequest
        );
        assert_eq!(decode(&review("FROB")).unwrap().operation, Operation::Other);
    }

    #[test]
    fn encodes_denials_and_patches_like_controller_runtime() {
        let deny = encode("u", &Decision::deny("checkX", "nope"));
        assert_eq!(deny["response"]["allowed"], false);
        assert_eq!(deny["response"]["status"]["code"], 403);
        assert_eq!(deny["response"]["status"]["reason"], "Forbidden");
        assert_eq!(deny["response"]["status"]["message"], "nope");

        let ops: json_patch::Patch =
            serde_json::from_value(json!([{"op": "add", "path": "/a", "value": 1}])).unwrap();
        let patched = encode("u", &Decision::Patch(ops.0));
        assert_eq!(patched["response"]["patchType"], "JSONPatch");
        let raw = base64::engine::general_purpose::STANDARD
            .decode(patched["response"]["patch"].as_str().unwrap())
            .unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&raw).unwrap(),
            json!([{"op": "add", "path": "/a", "value": 1}])
        );

        let unchanged = encode("u", &Decision::Patch(vec![]));
        assert_eq!(unchanged["response"], json!({"uid": "u", "allowed": true}));
        assert_eq!(
            encode("u", &Decision::errored("decode", "bad"))["response"]["status"]["code"],
            400
        );
    }
}
