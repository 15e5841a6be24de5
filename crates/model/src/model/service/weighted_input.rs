//! The weighted `actions.<PROTOCOL>-<port>` annotation of a Service as users write it
//! (upstream's `pkg/service/config_types.go`), decoded as Go's `encoding/json` does and validated
//! with upstream's texts, and the backend Services it names, which callers look up before the
//! build.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Deserialize;

use super::annotations::{sfx, PREFIX};
use crate::annotations::go_json;

/// One `forwardConfig.targetGroups` entry as users write it.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(super) struct TupleInput {
    #[serde(rename = "targetGroupARN")]
    pub(super) target_group_arn: Option<String>,
    pub(super) service_name: Option<String>,
    pub(super) service_port: Option<IntOrString>,
    /// On a TLS listener: the backend's target group takes TCP instead of TLS.
    pub(super) decrypt: Option<bool>,
    pub(super) weight: Option<i32>,
}

/// Upstream's Service stickiness has `enabled` only (no duration).
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(super) struct StickinessInput {
    pub(super) enabled: Option<bool>,
}

#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(super) struct ForwardInput {
    pub(super) base_service_weight: Option<i32>,
    #[serde(default)]
    pub(super) target_groups: Vec<TupleInput>,
    pub(super) target_group_stickiness_config: Option<StickinessInput>,
}

/// An `actions.<PROTOCOL>-<port>` annotation as users write it.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(super) struct ActionInput {
    #[serde(rename = "type", default)]
    pub(super) action_type: String,
    pub(super) forward_config: Option<ForwardInput>,
}

impl TupleInput {
    fn validate(&self) -> Result<(), &'static str> {
        if self.target_group_arn.is_some() == self.service_name.is_some() {
            return Err("precisely one of targetGroupARN and serviceName can be specified");
        }
        if self.service_name.is_some() && self.service_port.is_none() {
            return Err("missing servicePort");
        }
        if self.weight.is_some_and(|w| !(0..=999).contains(&w)) {
            return Err("target group weight must be between 0 and 999");
        }
        Ok(())
    }
}

impl ForwardInput {
    fn validate(&self) -> Result<(), String> {
        for t in &self.target_groups {
            t.validate()
                .map_err(|e| format!("invalid TargetGroupTuple: {e}"))?;
        }
        // Upstream checks the entries only: `baseServiceWeight` may stay unset.
        if self.target_groups.len() > 1 && self.target_groups.iter().any(|t| t.weight.is_none()) {
            return Err("weight must be set when routing to multiple target groups".into());
        }
        Ok(())
    }
}

impl ActionInput {
    /// Upstream's `Action.validate` texts.
    pub(super) fn validate(&self) -> Result<(), String> {
        match self.action_type.as_str() {
            "forward" => match &self.forward_config {
                Some(fc) => fc
                    .validate()
                    .map_err(|e| format!("invalid ForwardConfig: {e}")),
                None => Ok(()),
            },
            other => Err(format!("unknown action type: {other}")),
        }
    }
}

/// The Services `svc`'s weighted actions name (`serviceName`, in its namespace), read leniently:
/// what callers fetch for [`super::ServiceEnv::backend_services`] before the build, which
/// reports any malformed annotation.
pub fn weighted_backend_names(svc: &Service) -> BTreeSet<String> {
    let prefix = format!("{PREFIX}/{}.", sfx::ACTIONS_PREFIX);
    svc.metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(k, _)| k.starts_with(&prefix))
        .filter_map(|(_, v)| go_json::from_str::<ActionInput>(v).ok())
        .filter_map(|a| a.forward_config)
        .flat_map(|fc| fc.target_groups)
        .filter_map(|t| t.service_name)
        .collect()
}
