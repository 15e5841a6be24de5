//! The AdmissionReview v1 envelope: decoding requests and encoding responses on raw JSON.
//!
//! Objects stay `serde_json::Value` all the way through, so a field this build does not know is
//! never dropped: mutators compute patches against the bytes the API server sent.

use base64::Engine;
use serde::Serialize;
use serde_json::{Map, Value};

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
    /// `request.operation` as sent (any other text, or none, is [`Operation::Other`]).
    pub fn from_text(text: Option<&str>) -> Self {
        match text {
            Some("CREATE") => Operation::Create,
            Some("UPDATE") => Operation::Update,
            Some("DELETE") => Operation::Delete,
            Some("CONNECT") => Operation::Connect,
            _ => Operation::Other,
        }
    }

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
    /// Allowed with a JSON Patch already serialised (never empty): what serde writes for the
    /// operations, from a handler that writes its patch directly.
    PatchJson(Vec<u8>),
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
///
/// The objects are moved out of the parsed review, never copied.
pub fn decode(body: &[u8]) -> Result<AdmissionRequest, (ReviewError, Option<String>)> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err((ReviewError::Empty, None));
    }
    let review: Value =
        serde_json::from_slice(body).map_err(|e| (ReviewError::Json(e.to_string()), None))?;
    let mut review = match review {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let uid = review
        .get("request")
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str)
        .map(String::from);
    let (kind, api_version) = (str_of(review.get("kind")), str_of(review.get("apiVersion")));
    if kind != "AdmissionReview" || api_version != "admission.k8s.io/v1" {
        let err = ReviewError::WrongKind {
            kind: kind.to_string(),
            api_version: api_version.to_string(),
        };
        return Err((err, uid));
    }
    let Some(Value::Object(mut request)) = review.remove("request") else {
        return Err((ReviewError::NoRequest, None));
    };
    let Some(uid) = uid.filter(|u| !u.is_empty()) else {
        return Err((ReviewError::BadRequest("missing uid".into()), None));
    };
    let operation = Operation::from_text(request.get("operation").and_then(Value::as_str));
    let mut text = |k: &str| match request.remove(k) {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    };
    let (namespace, name) = (text("namespace"), text("name"));
    let mut object = |k: &str| request.remove(k).filter(|v| !v.is_null());
    let (object, old_object) = (object("object"), object("oldObject"));
    Ok(AdmissionRequest {
        operation,
        namespace,
        name,
        object,
        old_object,
        dry_run: request
            .get("dryRun")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        uid,
    })
}

fn str_of(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or_default()
}

/// The AdmissionReview v1 answer, as controller-runtime writes it.
#[derive(Serialize)]
struct Review<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    response: Response<'a>,
}

#[derive(Serialize)]
struct Response<'a> {
    uid: &'a str,
    allowed: bool,
    #[serde(rename = "patchType", skip_serializing_if = "Option::is_none")]
    patch_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    patch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status<'a>>,
}

#[derive(Serialize)]
struct Status<'a> {
    code: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    message: &'a str,
}

/// The AdmissionReview response body for `uid`.
pub fn encode_body(uid: &str, decision: &Decision) -> Vec<u8> {
    match decision {
        Decision::Allow => allowed_body(uid, None),
        Decision::Patch(ops) if ops.is_empty() => allowed_body(uid, None),
        Decision::Patch(ops) => {
            let patch = serde_json::to_vec(ops).expect("a JSON patch always serialises");
            allowed_body(uid, Some(&patch))
        }
        Decision::PatchJson(patch) => allowed_body(uid, Some(patch)),
        refused => encode_with_serde(uid, refused),
    }
}

/// An allowing answer written straight into one buffer: the same bytes as [`encode_with_serde`]
/// (the uid escaped by serde_json, the patch base64-encoded in place, which never needs JSON
/// escaping), without the patch's base64 String and a second pass escaping it. Every pod creation
/// in the cluster is answered here (#24).
fn allowed_body(uid: &str, patch: Option<&[u8]>) -> Vec<u8> {
    const HEAD: &[u8] =
        br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"#;
    const PATCH: &[u8] = br#","patchType":"JSONPatch","patch":""#;
    let encoded = patch.map_or(0, |p| base64::encoded_len(p.len(), true).unwrap_or(0));
    let mut out = Vec::with_capacity(HEAD.len() + uid.len() + 24 + PATCH.len() + encoded);
    out.extend_from_slice(HEAD);
    serde_json::to_writer(&mut out, uid).expect("a string always serialises");
    out.extend_from_slice(br#","allowed":true"#);
    if let Some(patch) = patch {
        out.extend_from_slice(PATCH);
        let start = out.len();
        out.resize(start + encoded, 0);
        let written = base64::engine::general_purpose::STANDARD
            .encode_slice(patch, &mut out[start..])
            .expect("sized by encoded_len");
        out.truncate(start + written);
        out.push(b'"');
    }
    out.extend_from_slice(b"}}");
    out
}

/// The AdmissionReview response body for `uid`, serialised from the response structs.
fn encode_with_serde(uid: &str, decision: &Decision) -> Vec<u8> {
    let allowed = |patch: Option<String>| Response {
        uid,
        allowed: true,
        patch_type: patch.as_ref().map(|_| "JSONPatch"),
        patch,
        status: None,
    };
    let refused = |code, reason, message| Response {
        uid,
        allowed: false,
        patch_type: None,
        patch: None,
        status: Some(Status {
            code,
            reason,
            message,
        }),
    };
    let response = match decision {
        Decision::Allow => allowed(None),
        Decision::Patch(ops) if ops.is_empty() => allowed(None),
        Decision::Patch(ops) => {
            let patch = serde_json::to_vec(ops).expect("a JSON patch always serialises");
            allowed(Some(
                base64::engine::general_purpose::STANDARD.encode(patch),
            ))
        }
        Decision::PatchJson(patch) => allowed(Some(
            base64::engine::general_purpose::STANDARD.encode(patch),
        )),
        Decision::Deny { message, .. } => refused(403, Some("Forbidden"), message),
        Decision::Errored { message, .. } => refused(400, None, message),
    };
    let review = Review {
        api_version: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response,
    };
    serde_json::to_vec(&review).expect("an AdmissionReview always serialises")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn encode(uid: &str, decision: &Decision) -> Value {
        serde_json::from_slice(&encode_body(uid, decision)).unwrap()
    }

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
    fn allowing_answers_are_the_bytes_serde_writes() {
        // Gate names of three lengths: patches of every length modulo 3, so base64 padding of 0,
        // 1 and 2 characters; uids with quotes, backslashes, controls and non-ASCII.
        for name in ["a", "ab", "abc"] {
            let ops: json_patch::Patch = serde_json::from_value(json!([
                {"op": "remove", "path": "/spec/readinessGates/0"},
                {"op": "add", "path": "/spec/readinessGates/-", "value": {"conditionType": name}}
            ]))
            .unwrap();
            for uid in ["0d9a7c4e-5f1b", "", "q\"u\\o\nte\u{1} é \u{2028}"] {
                for decision in [
                    Decision::Allow,
                    Decision::Patch(Vec::new()),
                    Decision::Patch(ops.0.clone()),
                    Decision::PatchJson(serde_json::to_vec(&ops.0).unwrap()),
                ] {
                    assert_eq!(
                        String::from_utf8(encode_body(uid, &decision)).unwrap(),
                        String::from_utf8(encode_with_serde(uid, &decision)).unwrap(),
                        "{uid:?} {decision:?}"
                    );
                }
                assert_eq!(
                    encode_body(
                        uid,
                        &Decision::PatchJson(serde_json::to_vec(&ops.0).unwrap())
                    ),
                    encode_body(uid, &Decision::Patch(ops.0.clone())),
                );
            }
        }
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
