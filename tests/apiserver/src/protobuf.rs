//! Protobuf request bodies (`application/vnd.kubernetes.protobuf`), as kubectl's typed commands
//! (`create namespace|configmap|secret|serviceaccount`) send them: the `k8s\0` magic, then a
//! `runtime.Unknown` envelope naming apiVersion/kind with the typed object in `raw`. Decoded into
//! the JSON the rest of the server works on; other kinds are refused with 415, never misread.

use base64::Engine;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

use crate::error::{ApiError, ApiResult};

/// Prefix of every protobuf-encoded Kubernetes object.
const MAGIC: &[u8] = b"k8s\0";

/// The JSON object a protobuf body carries.
pub fn decode(body: &[u8]) -> ApiResult<Value> {
    let bad = |what: &str, e: &dyn std::fmt::Display| {
        ApiError::BadRequest(format!(
            "error decoding protobuf request body ({what}): {e}"
        ))
    };
    let envelope = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| bad("prefix", &"missing the k8s\\0 magic"))?;
    let unknown = Unknown::decode(envelope).map_err(|e| bad("runtime.Unknown", &e))?;
    let type_meta = unknown.type_meta.unwrap_or_default();
    let api_version = type_meta.api_version.unwrap_or_default();
    let kind = type_meta.kind.unwrap_or_default();
    if unknown
        .content_encoding
        .as_deref()
        .is_some_and(|e| !e.is_empty())
    {
        return Err(ApiError::UnsupportedMediaType(
            "kube-test-apiserver does not decode content-encoded protobuf bodies".into(),
        ));
    }
    let raw = unknown.raw.unwrap_or_default();
    let raw = raw.as_slice();
    let mut obj = match (api_version.as_str(), kind.as_str()) {
        ("v1", "Namespace") => {
            namespace(core::Namespace::decode(raw).map_err(|e| bad("Namespace", &e))?)
        }
        ("v1", "ConfigMap") => {
            config_map(core::ConfigMap::decode(raw).map_err(|e| bad("ConfigMap", &e))?)
        }
        ("v1", "Secret") => secret(core::Secret::decode(raw).map_err(|e| bad("Secret", &e))?),
        ("v1", "ServiceAccount") => service_account(
            core::ServiceAccount::decode(raw).map_err(|e| bad("ServiceAccount", &e))?,
        ),
        _ => {
            return Err(ApiError::UnsupportedMediaType(format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (kube-test-apiserver decodes protobuf only for v1 Namespace, ConfigMap, Secret and ServiceAccount, not {api_version} {kind})"
            )))
        }
    };
    obj.insert("apiVersion".into(), json!(api_version));
    obj.insert("kind".into(), json!(kind));
    Ok(Value::Object(obj))
}

/// Go marshals non-pointer strings even when empty; empty means unset in JSON.
fn text(v: Option<String>) -> Option<Value> {
    v.filter(|s| !s.is_empty()).map(Value::String)
}

fn put(obj: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    if let Some(v) = v {
        obj.insert(key.into(), v);
    }
}

fn strings(map: BTreeMap<String, String>) -> Option<Value> {
    (!map.is_empty()).then(|| json!(map))
}

fn bytes(map: BTreeMap<String, Vec<u8>>) -> Option<Value> {
    let b64 = base64::engine::general_purpose::STANDARD;
    (!map.is_empty()).then(|| {
        Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, Value::String(b64.encode(v))))
                .collect(),
        )
    })
}

fn list(v: Vec<String>) -> Option<Value> {
    (!v.is_empty()).then(|| json!(v))
}

/// Metadata as a client sets it; server-owned fields (timestamps, managedFields) are left out.
fn object_meta(m: Option<meta::ObjectMeta>) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(m) = m else {
        return out;
    };
    put(&mut out, "name", text(m.name));
    put(&mut out, "generateName", text(m.generate_name));
    put(&mut out, "namespace", text(m.namespace));
    put(&mut out, "uid", text(m.uid));
    put(&mut out, "resourceVersion", text(m.resource_version));
    put(&mut out, "labels", strings(m.labels));
    put(&mut out, "annotations", strings(m.annotations));
    put(&mut out, "finalizers", list(m.finalizers));
    let owners: Vec<Value> = m
        .owner_references
        .into_iter()
        .map(|o| {
            let mut r = Map::new();
            put(&mut r, "apiVersion", text(o.api_version));
            put(&mut r, "kind", text(o.kind));
            put(&mut r, "name", text(o.name));
            put(&mut r, "uid", text(o.uid));
            put(&mut r, "controller", o.controller.map(Value::Bool));
            put(
                &mut r,
                "blockOwnerDeletion",
                o.block_owner_deletion.map(Value::Bool),
            );
            Value::Object(r)
        })
        .collect();
    put(
        &mut out,
        "ownerReferences",
        (!owners.is_empty()).then(|| json!(owners)),
    );
    out
}

fn with_meta(m: Option<meta::ObjectMeta>) -> Map<String, Value> {
    let mut obj = Map::new();
    obj.insert("metadata".into(), Value::Object(object_meta(m)));
    obj
}

fn namespace(ns: core::Namespace) -> Map<String, Value> {
    let mut obj = with_meta(ns.metadata);
    if let Some(f) = ns.spec.and_then(|s| list(s.finalizers)) {
        obj.insert("spec".into(), json!({ "finalizers": f }));
    }
    obj
}

fn config_map(cm: core::ConfigMap) -> Map<String, Value> {
    let mut obj = with_meta(cm.metadata);
    put(&mut obj, "immutable", cm.immutable.map(Value::Bool));
    put(&mut obj, "data", strings(cm.data));
    put(&mut obj, "binaryData", bytes(cm.binary_data));
    obj
}

fn secret(s: core::Secret) -> Map<String, Value> {
    let mut obj = with_meta(s.metadata);
    put(&mut obj, "immutable", s.immutable.map(Value::Bool));
    put(&mut obj, "data", bytes(s.data));
    put(&mut obj, "stringData", strings(s.string_data));
    put(&mut obj, "type", text(s.r#type));
    obj
}

fn service_account(sa: core::ServiceAccount) -> Map<String, Value> {
    let mut obj = with_meta(sa.metadata);
    let pull: Vec<Value> = sa
        .image_pull_secrets
        .into_iter()
        .filter_map(|r| text(r.name).map(|n| json!({ "name": n })))
        .collect();
    put(
        &mut obj,
        "imagePullSecrets",
        (!pull.is_empty()).then(|| json!(pull)),
    );
    put(
        &mut obj,
        "automountServiceAccountToken",
        sa.automount_service_account_token.map(Value::Bool),
    );
    obj
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope(kind: &str, raw: Vec<u8>) -> Vec<u8> {
        let unknown = Unknown {
            type_meta: Some(k8s_pb::apimachinery::pkg::runtime::TypeMeta {
                api_version: Some("v1".into()),
                kind: Some(kind.into()),
            }),
            raw: Some(raw),
            content_encoding: Some(String::new()),
            content_type: Some(String::new()),
        };
        let mut out = MAGIC.to_vec();
        out.extend(unknown.encode_to_vec());
        out
    }

    #[test]
    fn a_secret_decodes_to_its_json_with_base64_data() {
        let s = core::Secret {
            metadata: Some(meta::ObjectMeta {
                name: Some("creds".into()),
                namespace: Some(String::new()),
                labels: BTreeMap::from([("a".into(), "b".into())]),
                ..Default::default()
            }),
            data: BTreeMap::from([("k".into(), b"v\x00".to_vec())]),
            r#type: Some("Opaque".into()),
            ..Default::default()
        };
        let got = decode(&envelope("Secret", s.encode_to_vec())).unwrap();
        assert_eq!(
            got,
            json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                   "metadata": {"name": "creds", "labels": {"a": "b"}},
                   "data": {"k": "dgA="}})
        );
    }

    #[test]
    fn other_kinds_and_garbage_are_refused() {
        let e = decode(&envelope("Pod", vec![])).unwrap_err();
        assert_eq!(e.code(), 415, "{e}");
        assert_eq!(decode(b"not protobuf").unwrap_err().code(), 400);
        assert_eq!(decode(b"k8s\0\xff\xff").unwrap_err().code(), 400);
    }
}
