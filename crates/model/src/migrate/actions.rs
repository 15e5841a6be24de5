//! `actions.*` backends (`translate/translate_action_helper.go`): a forward becomes backendRefs
//! (Services, or existing target groups as `TargetGroupName` backends) with stickiness in a
//! ListenerRuleConfiguration, a redirect a `RequestRedirect` filter (its query in a
//! ListenerRuleConfiguration), a fixed response a ListenerRuleConfiguration.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::lr_config::{
    build_listener_rule_configuration, extension_ref_filter, lrc_action, lrc_name,
};
use super::objects::{
    HttpBackendRef, HttpPathModifier, HttpRequestRedirectFilter, HttpRouteFilter,
    FILTER_REQUEST_REDIRECT, FULL_PATH_MODIFIER,
};
use super::pre_routing::enum_value;
use super::service_ref::{lookup_named_port, ServiceRef};
use super::{go_quote, MigrateError, SERVICE_PORT_USE_ANNOTATION, TARGET_GROUP_NAME_BACKEND_KIND};
use crate::crd::gateway::listener_rule_configuration::{
    ActionType, FixedResponseActionConfig, ForwardActionConfig, RedirectActionConfig,
    TargetGroupStickinessConfig,
};
use crate::crd::gateway::ListenerRuleConfiguration;
use crate::model::backend::{ActionInput, TupleInput};

/// Whether an Ingress backend port names an `actions.*` annotation.
pub fn is_use_annotation(port_name: &str) -> bool {
    port_name == SERVICE_PORT_USE_ANNOTATION
}

/// What one action becomes.
#[derive(Debug, Clone, Default)]
pub struct ActionResult {
    /// The rule's backendRefs (forward).
    pub backend_refs: Vec<HttpBackendRef>,
    /// The rule's filters (redirect; `ExtensionRef` to the configuration below).
    pub filters: Vec<HttpRouteFilter>,
    /// The configuration the action needs (fixed response, stickiness, redirect query).
    pub listener_rule_configuration: Option<ListenerRuleConfiguration>,
    /// The Services a forward names (their TargetGroupConfigurations).
    pub service_refs: Vec<ServiceRef>,
}

/// Translates `action` (`actions.<action_name>` of Ingress `ingress` in `namespace`).
pub fn translate_action(
    action: &ActionInput,
    namespace: &str,
    ingress: &str,
    action_name: &str,
    services: &BTreeMap<String, Service>,
) -> Result<ActionResult, MigrateError> {
    match action.action_type.as_str() {
        "forward" => translate_forward_action(action, namespace, ingress, action_name, services),
        "redirect" => translate_redirect_action(action, namespace, ingress, action_name),
        "fixed-response" => {
            translate_fixed_response_action(action, namespace, ingress, action_name)
        }
        other => Err(MigrateError::Translate(format!(
            "unsupported action type {}",
            go_quote(other)
        ))),
    }
}

fn translate_forward_action(
    action: &ActionInput,
    namespace: &str,
    ingress: &str,
    action_name: &str,
    services: &BTreeMap<String, Service>,
) -> Result<ActionResult, MigrateError> {
    let fc = action.forward_config.as_ref().ok_or_else(|| {
        MigrateError::Translate(format!(
            "forward action {} missing forwardConfig",
            go_quote(action_name)
        ))
    })?;
    let mut result = ActionResult::default();
    for tg in &fc.target_groups {
        let r = build_backend_ref_from_tg(tg, namespace, services)
            .map_err(|e| e.context(&format!("forward action {}", go_quote(action_name))))?;
        if let (Some(svc), Some(port)) = (&tg.service_name, r.port) {
            result.service_refs.push(ServiceRef {
                namespace: namespace.to_string(),
                name: svc.clone(),
                port,
            });
        }
        result.backend_refs.push(r);
    }
    if let Some(sc) = &fc.target_group_stickiness_config {
        let mut lrc = build_listener_rule_configuration(namespace, ingress, action_name);
        let mut a = lrc_action(ActionType::Forward);
        a.forward_config = Some(ForwardActionConfig {
            target_group_stickiness_config: Some(TargetGroupStickinessConfig {
                duration_seconds: sc.duration_seconds,
                enabled: sc.enabled,
            }),
        });
        lrc.spec.actions = vec![a];
        result.filters.push(extension_ref_filter(&lrc_name(&lrc)));
        result.listener_rule_configuration = Some(lrc);
    }
    Ok(result)
}

fn translate_redirect_action(
    action: &ActionInput,
    namespace: &str,
    ingress: &str,
    action_name: &str,
) -> Result<ActionResult, MigrateError> {
    let rc = action.redirect_config.as_ref().ok_or_else(|| {
        MigrateError::Translate(format!(
            "redirect action {} missing redirectConfig",
            go_quote(action_name)
        ))
    })?;
    let mut redirect = HttpRequestRedirectFilter {
        hostname: rc.host.clone(),
        path: rc.path.as_ref().map(|p| HttpPathModifier {
            type_: FULL_PATH_MODIFIER.into(),
            replace_full_path: Some(p.clone()),
            replace_prefix_match: None,
        }),
        scheme: rc.protocol.as_ref().map(|p| p.to_lowercase()),
        ..Default::default()
    };
    if let Some(port) = &rc.port {
        let n = crate::annotations::go_parse_int(port, 32).map_err(|e| {
            MigrateError::Translate(format!(
                "redirect action {}: invalid port {}: {e}",
                go_quote(action_name),
                go_quote(port)
            ))
        })?;
        redirect.port = Some(n as i32);
    }
    if !rc.status_code.is_empty() {
        redirect.status_code = Some(redirect_status_code(&rc.status_code).map_err(|e| {
            MigrateError::Translate(format!("redirect action {}: {e}", go_quote(action_name)))
        })?);
    }
    let mut result = ActionResult {
        filters: vec![HttpRouteFilter {
            type_: FILTER_REQUEST_REDIRECT.into(),
            request_redirect: Some(redirect),
            ..Default::default()
        }],
        ..Default::default()
    };
    // The default query (`#{query}`, passed through) needs no configuration.
    if let Some(q) = rc.query.as_ref().filter(|q| q.as_str() != "#{query}") {
        let mut lrc = build_listener_rule_configuration(namespace, ingress, action_name);
        let mut a = lrc_action(ActionType::Redirect);
        a.redirect_config = Some(RedirectActionConfig {
            query: Some(q.clone()),
        });
        lrc.spec.actions = vec![a];
        result.filters.push(extension_ref_filter(&lrc_name(&lrc)));
        result.listener_rule_configuration = Some(lrc);
    }
    Ok(result)
}

fn translate_fixed_response_action(
    action: &ActionInput,
    namespace: &str,
    ingress: &str,
    action_name: &str,
) -> Result<ActionResult, MigrateError> {
    let frc = action.fixed_response_config.as_ref().ok_or_else(|| {
        MigrateError::Translate(format!(
            "fixed-response action {} missing fixedResponseConfig",
            go_quote(action_name)
        ))
    })?;
    let status = crate::annotations::go_parse_int(&frc.status_code, 32).map_err(|e| {
        MigrateError::Translate(format!(
            "fixed-response action {}: invalid statusCode {}: {e}",
            go_quote(action_name),
            go_quote(&frc.status_code)
        ))
    })?;
    let content_type = match &frc.content_type {
        None => None,
        // Upstream copies the text; the CRD's enum takes only the ALB's five content types.
        Some(ct) => Some(enum_value(ct).ok_or_else(|| {
            MigrateError::Translate(format!(
                "fixed-response action {}: contentType {} is not one of text/plain, text/css, text/html, application/javascript, application/json",
                go_quote(action_name),
                go_quote(ct)
            ))
        })?),
    };
    let mut lrc = build_listener_rule_configuration(namespace, ingress, action_name);
    let mut a = lrc_action(ActionType::FixedResponse);
    a.fixed_response_config = Some(FixedResponseActionConfig {
        status_code: status as i32,
        content_type,
        message_body: frc.message_body.clone(),
    });
    lrc.spec.actions = vec![a];
    Ok(ActionResult {
        filters: vec![extension_ref_filter(&lrc_name(&lrc))],
        listener_rule_configuration: Some(lrc),
        ..Default::default()
    })
}

/// One forward target as a backendRef: a Service port, or an existing target group by name
/// (an ARN's name part: the Gateway controller looks target groups up by name).
pub fn build_backend_ref_from_tg(
    tg: &TupleInput,
    namespace: &str,
    services: &BTreeMap<String, Service>,
) -> Result<HttpBackendRef, MigrateError> {
    if let Some(svc) = &tg.service_name {
        let port = resolve_service_port_from_tg(tg, svc, namespace, services)?;
        return Ok(HttpBackendRef {
            kind: None,
            name: svc.clone(),
            port: Some(port),
            weight: tg.weight,
        });
    }
    if let Some(name) = &tg.target_group_name {
        return Ok(HttpBackendRef {
            kind: Some(TARGET_GROUP_NAME_BACKEND_KIND.into()),
            name: name.clone(),
            port: None,
            weight: tg.weight,
        });
    }
    if let Some(arn) = &tg.target_group_arn {
        return Ok(HttpBackendRef {
            kind: Some(TARGET_GROUP_NAME_BACKEND_KIND.into()),
            name: extract_tg_name_from_arn(arn),
            port: None,
            weight: tg.weight,
        });
    }
    Err(MigrateError::Translate(
        "targetGroupTuple has no serviceName, targetGroupName, or targetGroupARN".into(),
    ))
}

fn resolve_service_port_from_tg(
    tg: &TupleInput,
    svc: &str,
    namespace: &str,
    services: &BTreeMap<String, Service>,
) -> Result<i32, MigrateError> {
    match &tg.service_port {
        None => Err(MigrateError::Translate(format!(
            "service {} missing servicePort",
            go_quote(svc)
        ))),
        Some(IntOrString::Int(n)) => Ok(*n),
        Some(IntOrString::String(s)) => match s.parse::<i32>() {
            Ok(n) => Ok(n),
            Err(_) => lookup_named_port(namespace, svc, s, services),
        },
    }
}

/// The name in `arn:aws:elasticloadbalancing:<region>:<account>:targetgroup/<name>/<id>`; the
/// whole text when it is no target group ARN.
pub fn extract_tg_name_from_arn(arn: &str) -> String {
    const PREFIX: &str = "targetgroup/";
    let Some(i) = arn.find(PREFIX) else {
        return arn.to_string();
    };
    let rest = &arn[i + PREFIX.len()..];
    match rest.find('/') {
        Some(j) => rest[..j].to_string(),
        None => rest.to_string(),
    }
}

/// `HTTP_301` / `HTTP_302` (or a number) as the status code.
pub fn redirect_status_code(code: &str) -> Result<i32, String> {
    match code {
        "HTTP_301" => Ok(301),
        "HTTP_302" => Ok(302),
        other => other
            .parse::<i32>()
            .map_err(|_| format!("unsupported redirect status code {}", go_quote(other))),
    }
}
