//! The TargetGroupBinding fields the webhooks read, taken from the raw admission JSON.
//!
//! Enum-typed fields are read as plain strings, like upstream's string-based Go types: the
//! mutator runs before schema validation and must not refuse `targetType: lambda` with a decode
//! error where upstream would default the other fields and let the schema answer.

use serde_json::{Map, Value};

use super::tg_cache::Role;

/// A TargetGroupBinding as the checks see it. Absent and `null` pointers are `None`; absent
/// plain strings are `""` (Go's zero values).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TgbView {
    pub uid: String,
    pub namespace: String,
    pub name: String,
    pub target_group_arn: String,
    pub target_group_name: String,
    pub multi_cluster: bool,
    pub target_type: Option<String>,
    pub ip_address_type: Option<String>,
    pub vpc_id: String,
    pub protocol: Option<String>,
    pub has_node_selector: bool,
    pub iam_role_arn_to_assume: String,
    pub assume_role_external_id: String,
}

fn opt_string(
    map: Option<&Map<String, Value>>,
    key: &str,
    at: &str,
) -> Result<Option<String>, String> {
    match map.and_then(|m| m.get(key)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "cannot decode TargetGroupBinding: {at}.{key} must be a string, got {other}"
        )),
    }
}

fn string(map: Option<&Map<String, Value>>, key: &str, at: &str) -> Result<String, String> {
    Ok(opt_string(map, key, at)?.unwrap_or_default())
}

fn object<'a>(parent: &'a Value, key: &str) -> Result<Option<&'a Map<String, Value>>, String> {
    match parent.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(format!(
            "cannot decode TargetGroupBinding: {key} must be an object"
        )),
    }
}

impl TgbView {
    /// Reads `obj`; `namespace` (the admission request's) wins over the object's, as upstream.
    pub fn parse(obj: &Value, namespace: Option<&str>) -> Result<Self, String> {
        if !obj.is_object() {
            return Err("cannot decode TargetGroupBinding: object is not a JSON object".into());
        }
        let meta = object(obj, "metadata")?;
        let spec = object(obj, "spec")?;
        let multi_cluster = match spec.and_then(|s| s.get("multiClusterTargetGroup")) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                return Err(format!(
                    "cannot decode TargetGroupBinding: spec.multiClusterTargetGroup must be a boolean, got {other}"
                ))
            }
        };
        let has_node_selector = match spec.and_then(|s| s.get("nodeSelector")) {
            None | Some(Value::Null) => false,
            Some(Value::Object(_)) => true,
            Some(_) => {
                return Err(
                    "cannot decode TargetGroupBinding: spec.nodeSelector must be an object".into(),
                )
            }
        };
        let meta_ns = string(meta, "namespace", "metadata")?;
        Ok(TgbView {
            uid: string(meta, "uid", "metadata")?,
            namespace: namespace.map(String::from).unwrap_or(meta_ns),
            name: string(meta, "name", "metadata")?,
            target_group_arn: string(spec, "targetGroupARN", "spec")?,
            target_group_name: string(spec, "targetGroupName", "spec")?,
            multi_cluster,
            target_type: opt_string(spec, "targetType", "spec")?,
            ip_address_type: opt_string(spec, "ipAddressType", "spec")?,
            vpc_id: string(spec, "vpcID", "spec")?,
            protocol: opt_string(spec, "targetGroupProtocol", "spec")?,
            has_node_selector,
            iam_role_arn_to_assume: string(spec, "iamRoleArnToAssume", "spec")?,
            assume_role_external_id: string(spec, "assumeRoleExternalId", "spec")?,
        })
    }

    pub fn uses_assume_role(&self) -> bool {
        !self.iam_role_arn_to_assume.is_empty()
    }

    /// The account AWS lookups are made in: the binding's role, or ours when it has none.
    pub fn role(&self) -> Role {
        Role {
            arn: self.iam_role_arn_to_assume.clone(),
            external_id: self.assume_role_external_id.clone(),
        }
    }

    pub fn is_instance(&self) -> bool {
        self.target_type.as_deref() == Some("instance")
    }
}

/// Upstream's assume-role rule.
pub const ASSUME_ROLE_INSTANCE: &str = "Unable to use instance target type while using assume role";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_go_zero_values_and_request_namespace() {
        let v = TgbView::parse(
            &json!({"metadata": {"namespace": "objns", "name": "b", "uid": "u"},
                    "spec": {"targetType": null, "ipAddressType": "ipv6", "targetGroupARN": null,
                             "nodeSelector": {}, "multiClusterTargetGroup": true, "x": 1}}),
            Some("reqns"),
        )
        .unwrap();
        assert_eq!(v.namespace, "reqns");
        assert_eq!((v.name.as_str(), v.uid.as_str()), ("b", "u"));
        assert_eq!(v.target_type, None);
        assert_eq!(v.ip_address_type.as_deref(), Some("ipv6"));
        assert_eq!(v.target_group_arn, "");
        assert!(v.has_node_selector && v.multi_cluster);
        let v = TgbView::parse(&json!({"metadata": {"namespace": "objns"}}), None).unwrap();
        assert_eq!(v.namespace, "objns");
        assert!(!v.has_node_selector && v.vpc_id.is_empty());
    }

    #[test]
    fn wrong_types_are_errors_not_panics() {
        for bad in [
            json!("str"),
            json!({"spec": 1}),
            json!({"spec": {"targetType": 5}}),
            json!({"spec": {"multiClusterTargetGroup": "yes"}}),
            json!({"spec": {"nodeSelector": []}}),
            json!({"metadata": {"uid": 1}}),
        ] {
            assert!(
                TgbView::parse(&bad, None)
                    .unwrap_err()
                    .starts_with("cannot decode"),
                "{bad}"
            );
        }
    }
}
