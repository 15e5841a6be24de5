//! Backends of Ingress paths: `actions.*`, `conditions.*` and `transforms.*` annotations with
//! upstream's JSON shapes and validation texts (the model's action / condition types are in
//! `action`, re-exported here). A backend port named `use-annotation` means "take `actions.<service>`".

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Deserialize;

use crate::annotations::{self as ann, suffix, AnnotationMap};
use crate::model::error::Fail;
pub use crate::model::types::action::*;

pub const USE_ANNOTATION: &str = "use-annotation";
pub const NON_EXISTENT_SERVICE_BODY: &str = "Backend service does not exist";
pub const NON_EXISTENT_ACTION_BODY: &str = "Backend action does not exist";

/// A `conditions.<svc>` entry as users write it.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ConditionInput {
    #[serde(default)]
    pub field: String,
    pub host_header_config: Option<ValuesConfig>,
    pub http_header_config: Option<HttpHeaderConfig>,
    pub http_request_method_config: Option<ListConfig>,
    pub path_pattern_config: Option<ValuesConfig>,
    pub query_string_config: Option<QueryStringConfig>,
    #[serde(rename = "sourceIPConfig", alias = "sourceIpConfig")]
    pub source_ip_config: Option<ListConfig>,
}

fn one_of(values: &[String], regex: &[String]) -> Result<(), &'static str> {
    match (values.is_empty(), regex.is_empty()) {
        (true, true) => Err("values or regexValues must be specified"),
        (false, false) => Err("precisely one of values and regexValues can be specified"),
        _ => Ok(()),
    }
}

impl ConditionInput {
    /// Upstream's `RuleCondition.Validate` texts; unknown fields pass (and are ignored later).
    pub fn validate(&self) -> Result<(), String> {
        let wrap = |name: &str, r: Result<(), &str>| r.map_err(|e| format!("invalid {name}: {e}"));
        match self.field.as_str() {
            "host-header" => match &self.host_header_config {
                None => Err("missing hostHeaderConfig".into()),
                Some(c) => wrap("hostHeaderConfig", one_of(&c.values, &c.regex_values)),
            },
            "path-pattern" => match &self.path_pattern_config {
                None => Err("missing pathPatternConfig".into()),
                Some(c) => wrap("pathPatternConfig", one_of(&c.values, &c.regex_values)),
            },
            "http-header" => match &self.http_header_config {
                None => Err("missing httpHeaderConfig".into()),
                Some(c) => wrap("httpHeaderConfig", one_of(&c.values, &c.regex_values)),
            },
            "http-request-method" => match &self.http_request_method_config {
                None => Err("missing httpRequestMethodConfig".into()),
                Some(c) if c.values.is_empty() => {
                    wrap("httpRequestMethodConfig", Err("values cannot be empty"))
                }
                Some(_) => Ok(()),
            },
            "query-string" => match &self.query_string_config {
                None => Err("missing queryStringConfig".into()),
                Some(c) if c.values.is_empty() => {
                    wrap("queryStringConfig", Err("Values cannot be empty"))
                }
                Some(c) if c.values.iter().any(|p| p.value.is_empty()) => {
                    wrap("queryStringConfig", Err("value cannot be empty"))
                }
                Some(_) => Ok(()),
            },
            "source-ip" => match &self.source_ip_config {
                None => Err("missing sourceIPConfig".into()),
                Some(c) if c.values.is_empty() => {
                    wrap("sourceIPConfig", Err("values cannot be empty"))
                }
                Some(_) => Ok(()),
            },
            _ => Ok(()),
        }
    }
}

/// A forward target as users write it in `actions.*`.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TupleInput {
    #[serde(rename = "targetGroupARN")]
    pub target_group_arn: Option<String>,
    pub target_group_name: Option<String>,
    pub service_name: Option<String>,
    pub service_port: Option<IntOrString>,
    pub weight: Option<i32>,
}

#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ForwardInput {
    #[serde(default)]
    pub target_groups: Vec<TupleInput>,
    pub target_group_stickiness_config: Option<StickinessConfig>,
}

/// An `actions.<name>` annotation as users write it.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ActionInput {
    #[serde(rename = "type", default)]
    pub action_type: String,
    #[serde(rename = "targetGroupARN")]
    pub target_group_arn: Option<String>,
    pub target_group_name: Option<String>,
    pub fixed_response_config: Option<FixedResponseConfig>,
    pub redirect_config: Option<RedirectConfig>,
    pub forward_config: Option<ForwardInput>,
}

impl ActionInput {
    /// Forward to one Service port (a plain Ingress backend).
    pub fn forward_to(service: &str, port: IntOrString) -> Self {
        ActionInput {
            action_type: "forward".into(),
            forward_config: Some(ForwardInput {
                target_groups: vec![TupleInput {
                    service_name: Some(service.into()),
                    service_port: Some(port),
                    ..Default::default()
                }],
                target_group_stickiness_config: None,
            }),
            ..Default::default()
        }
    }

    /// Upstream's `Action.validate` texts.
    pub fn validate(&self) -> Result<(), String> {
        match self.action_type.as_str() {
            "fixed-response" => match &self.fixed_response_config {
                None => Err("missing FixedResponseConfig".into()),
                Some(c) if c.status_code.is_empty() => {
                    Err("invalid FixedResponseConfig: statusCode is required".into())
                }
                Some(_) => Ok(()),
            },
            "redirect" => match &self.redirect_config {
                None => Err("missing RedirectConfig".into()),
                Some(c) if c.status_code.is_empty() => {
                    Err("invalid RedirectConfig: statusCode is required".into())
                }
                Some(_) => Ok(()),
            },
            "forward" => {
                let simple = self.target_group_arn.is_some() || self.target_group_name.is_some();
                match (&self.forward_config, simple) {
                    (None, false) => {
                        Err("missing ForwardConfig or TargetGroupARN/TargetGroupName".into())
                    }
                    (Some(_), true) => Err(
                        "either ForwardConfig or TargetGroupARN/TargetGroupName can be specified"
                            .into(),
                    ),
                    (Some(fc), false) => {
                        validate_forward(fc).map_err(|e| format!("invalid ForwardConfig: {e}"))
                    }
                    (None, true) => Ok(()),
                }
            }
            other => Err(format!("unknown action type: {other}")),
        }
    }

    /// Simplified `targetGroupARN`/`targetGroupName` forms become a one-entry forwardConfig, and
    /// string service ports that are numbers become numbers (old controller compatibility).
    pub fn normalize(mut self) -> Self {
        if self.action_type == "forward"
            && (self.target_group_arn.is_some() || self.target_group_name.is_some())
        {
            let tuple = TupleInput {
                target_group_arn: self.target_group_arn.take(),
                target_group_name: self.target_group_name.take(),
                ..Default::default()
            };
            self.forward_config = Some(ForwardInput {
                target_groups: vec![tuple],
                target_group_stickiness_config: None,
            });
        }
        if let Some(fc) = self.forward_config.as_mut() {
            for t in &mut fc.target_groups {
                if let Some(IntOrString::String(s)) = &t.service_port {
                    if let Ok(n) = s.parse::<i32>() {
                        t.service_port = Some(IntOrString::Int(n));
                    }
                }
            }
        }
        self
    }
}

fn validate_forward(fc: &ForwardInput) -> Result<(), String> {
    for t in &fc.target_groups {
        let tg = t.target_group_arn.is_some() || t.target_group_name.is_some();
        let err = if !tg && t.service_name.is_none() {
            Some("missing serviceName or targetGroupARN/targetGroupName")
        } else if tg && t.service_name.is_some() {
            Some("either serviceName or targetGroupARN/targetGroupName can be specified")
        } else if t.service_name.is_some() && t.service_port.is_none() {
            Some("missing servicePort")
        } else {
            None
        };
        if let Some(e) = err {
            return Err(format!("invalid TargetGroupTuple: {e}"));
        }
    }
    if fc.target_groups.len() > 1 && fc.target_groups.iter().any(|t| t.weight.is_none()) {
        return Err("weight must be set when route to multiple target groups".into());
    }
    Ok(())
}

/// `conditions.<svc>` for a backend, validated.
pub fn conditions(ing_ann: &AnnotationMap, svc: &str) -> Result<Vec<ConditionInput>, Fail> {
    let sfx = format!("{}.{svc}", suffix::CONDITIONS_PREFIX);
    let list: Vec<ConditionInput> = ann::json(ing_ann, &sfx)?.unwrap_or_default();
    for c in &list {
        c.validate().map_err(|e| Fail::at(ann::key(&sfx), e))?;
    }
    Ok(list)
}

/// `transforms.<svc>` for a backend, validated.
pub fn transforms(ing_ann: &AnnotationMap, svc: &str) -> Result<Vec<Transform>, Fail> {
    let sfx = format!("{}.{svc}", suffix::TRANSFORMS_PREFIX);
    let list: Vec<Transform> = ann::json(ing_ann, &sfx)?.unwrap_or_default();
    for t in &list {
        t.validate().map_err(|e| Fail::at(ann::key(&sfx), e))?;
    }
    Ok(list)
}

/// `actions.<svc>`; a missing annotation is a 503 when tolerated, else upstream's error.
pub fn action_via_annotation(
    ing_ann: &AnnotationMap,
    svc: &str,
    tolerate: bool,
) -> Result<ActionInput, Fail> {
    let sfx = format!("{}.{svc}", suffix::ACTIONS_PREFIX);
    match ann::json::<ActionInput>(ing_ann, &sfx)? {
        None if tolerate => Ok(ActionInput {
            action_type: "fixed-response".into(),
            fixed_response_config: Some(FixedResponseConfig {
                content_type: Some("text/plain".into()),
                message_body: Some(NON_EXISTENT_ACTION_BODY.into()),
                status_code: "503".into(),
            }),
            ..Default::default()
        }),
        None => Err(Fail::at(
            ann::key(&sfx),
            format!("missing {sfx} configuration"),
        )),
        Some(a) => {
            a.validate().map_err(|e| Fail::at(ann::key(&sfx), e))?;
            Ok(a.normalize())
        }
    }
}

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
