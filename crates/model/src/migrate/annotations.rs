//! The annotation readers the translation uses, with upstream's lookups (`getString`,
//! `getBool`, `getStringMap`, ... of `ingress_annotation_parser.go`) on this crate's parsers:
//! Go `strconv` syntax, comma lists, `k=v` maps and JSON decoded with Go's key rules. A value
//! that does not parse reads as unset here, as upstream's translation reads it; `unsupported`
//! warns about every such value before the translation runs.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::MigrateError;
use crate::annotations::{self as ann, suffix, AnnotationMap};
use crate::model::action::JwtValidationConfig;
use crate::model::backend::{ActionInput, ConditionInput, ForwardInput, Transform, TupleInput};

/// The value, or "" when absent.
pub fn get_string(a: &AnnotationMap, sfx: &str) -> String {
    ann::string(a, sfx).unwrap_or_default().to_string()
}

/// A Go-syntax bool; unset when absent or malformed.
pub fn get_bool(a: &AnnotationMap, sfx: &str) -> Option<bool> {
    ann::bool(a, sfx).ok().flatten()
}

/// An int32; unset when absent or malformed.
pub fn get_int32(a: &AnnotationMap, sfx: &str) -> Option<i32> {
    ann::int32(a, sfx).ok().flatten()
}

/// An int64; unset when absent or malformed.
pub fn get_int64(a: &AnnotationMap, sfx: &str) -> Option<i64> {
    ann::int64(a, sfx).ok().flatten()
}

/// A comma list, items trimmed and empty ones dropped; empty when absent.
pub fn get_string_slice(a: &AnnotationMap, sfx: &str) -> Vec<String> {
    ann::string_list(a, sfx).unwrap_or_default()
}

/// A `k=v,...` map; empty when absent or malformed.
pub fn get_string_map(a: &AnnotationMap, sfx: &str) -> BTreeMap<String, String> {
    ann::string_map(a, sfx).ok().flatten().unwrap_or_default()
}

/// One `listen-ports` entry: the protocol upper-cased, as upstream reads it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ListenPort {
    pub protocol: String,
    pub port: i32,
}

impl ListenPort {
    pub fn new(protocol: &str, port: i32) -> Self {
        ListenPort {
            protocol: protocol.to_string(),
            port,
        }
    }
}

/// `listen-ports` (`[{"HTTP": 80}, {"HTTPS": 443}]`); empty when absent.
pub fn parse_listen_ports(a: &AnnotationMap) -> Result<Vec<ListenPort>, MigrateError> {
    let raw: Option<Vec<BTreeMap<String, i32>>> =
        ann::json(a, suffix::LISTEN_PORTS).map_err(|e| {
            MigrateError::Translate(format!(
                "failed to parse listen-ports annotation: {}",
                e.message
            ))
        })?;
    let mut out = Vec::new();
    for entry in raw.into_iter().flatten() {
        for (protocol, port) in entry {
            out.push(ListenPort {
                protocol: protocol.to_uppercase(),
                port,
            });
        }
    }
    Ok(out)
}

/// `conditions.<svc>`; empty when absent. Not validated: upstream's translation takes the
/// Ingress as the controller accepted it.
pub fn parse_condition_annotation(
    a: &AnnotationMap,
    svc: &str,
) -> Result<Vec<ConditionInput>, MigrateError> {
    let sfx = format!("{}.{svc}", suffix::CONDITIONS_PREFIX);
    ann::json::<Vec<ConditionInput>>(a, &sfx)
        .map(Option::unwrap_or_default)
        .map_err(|e| MigrateError::Translate(e.message))
}

/// `transforms.<svc>`; empty when absent.
pub fn parse_transform_annotation(
    a: &AnnotationMap,
    svc: &str,
) -> Result<Vec<Transform>, MigrateError> {
    let sfx = format!("{}.{svc}", suffix::TRANSFORMS_PREFIX);
    ann::json::<Vec<Transform>>(a, &sfx)
        .map(Option::unwrap_or_default)
        .map_err(|e| MigrateError::Translate(e.message))
}

/// `jwt-validation`; `None` when absent.
pub fn parse_jwt_validation_annotation(
    a: &AnnotationMap,
) -> Result<Option<JwtValidationConfig>, MigrateError> {
    ann::json::<JwtValidationConfig>(a, suffix::JWT_VALIDATION)
        .map_err(|e| MigrateError::Translate(e.message))
}

/// `actions.<svc>`, normalized as the controller reads it: the simplified `targetGroupARN` /
/// `targetGroupName` form becomes a one-entry `forwardConfig`, and numeric string Service
/// ports become numbers. A missing annotation is upstream's error.
pub fn parse_action_annotation(a: &AnnotationMap, svc: &str) -> Result<ActionInput, MigrateError> {
    let sfx = format!("{}.{svc}", suffix::ACTIONS_PREFIX);
    match ann::json::<ActionInput>(a, &sfx).map_err(|e| MigrateError::Translate(e.message))? {
        Some(action) => Ok(normalize_action(action)),
        None => Err(MigrateError::Translate(format!(
            "missing action annotation {} for service {}",
            super::go_quote(&sfx),
            super::go_quote(svc)
        ))),
    }
}

/// Upstream's two normalizations of an `actions.*` forward (see [`parse_action_annotation`]).
fn normalize_action(mut a: ActionInput) -> ActionInput {
    if a.action_type == "forward" && (a.target_group_arn.is_some() || a.target_group_name.is_some())
    {
        a = ActionInput {
            action_type: "forward".into(),
            forward_config: Some(ForwardInput {
                target_groups: vec![TupleInput {
                    target_group_arn: a.target_group_arn.take(),
                    target_group_name: a.target_group_name.take(),
                    ..Default::default()
                }],
                target_group_stickiness_config: None,
            }),
            ..Default::default()
        };
    }
    if a.action_type == "forward" {
        if let Some(fc) = a.forward_config.as_mut() {
            for t in &mut fc.target_groups {
                if let Some(IntOrString::String(s)) = &t.service_port {
                    // intstr.Parse: a number when it is one, else the name.
                    if let Ok(n) = s.parse::<i32>() {
                        t.service_port = Some(IntOrString::Int(n));
                    }
                }
            }
        }
    }
    a
}
