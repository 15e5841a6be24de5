//! Actions of one ALB Gateway rule (upstream's `route_rule_action.go`): the
//! ListenerRuleConfiguration's pre-routing action (HTTPS listeners only) and routing action
//! (fixed response, or forward with stickiness), the HTTPRoute's RequestRedirect filter (with
//! the configuration's redirect query) overriding the forward, and 500 when nothing routes.
//! Filters upstream cannot build are refused with its messages.

use gateway_api::apis::standard::grpcroutes::{GrpcRouteRules, GrpcRouteRulesFiltersType};
use gateway_api::apis::standard::httproutes::{
    HttpRouteRulesFiltersRequestRedirect, HttpRouteRulesFiltersRequestRedirectScheme,
    HttpRouteRulesFiltersType as FilterType,
};
use k8s_openapi::api::core::v1::Secret;

use super::routes::RouteView;
use crate::crd::gateway::listener_rule_configuration::{
    Action as CrdAction, ActionType, OnUnauthenticatedRequest,
};
use crate::crd::gateway::ListenerRuleConfiguration;
use crate::model::action::*;
use crate::model::oidc;

/// Everything the actions of one rule are built from.
pub(super) struct RuleInputs<'a> {
    pub route: &'a RouteView<'a>,
    pub rule: usize,
    pub config: Option<&'a ListenerRuleConfiguration>,
    pub tuples: Vec<TargetGroupTuple>,
    pub https: bool,
    pub secrets: &'a [Secret],
}

fn enum_str<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// Refuses the filters upstream cannot build: HTTPRoute rules take RequestRedirect,
/// URLRewrite and ExtensionRef; GRPCRoute rules ExtensionRef only. (Upstream stops looking
/// after a RequestRedirect; we check every filter so none is ignored.)
pub(super) fn check_filters(route: &RouteView<'_>, rule: usize) -> Result<(), String> {
    if let Some(r) = route.http_rules.get(rule) {
        for f in r.filters.iter().flatten() {
            if !matches!(
                f.r#type,
                FilterType::RequestRedirect | FilterType::UrlRewrite | FilterType::ExtensionRef
            ) {
                return Err(format!("Unsupported filter type: {}. Only request redirect is supported. To specify header modification, please configure it through LoadBalancerConfiguration.", enum_str(&f.r#type)));
            }
        }
    }
    if let Some(r) = route.grpc_rules.get(rule) {
        check_grpc_filters(r)?;
    }
    Ok(())
}

fn check_grpc_filters(r: &GrpcRouteRules) -> Result<(), String> {
    match r
        .filters
        .iter()
        .flatten()
        .find(|f| f.r#type != GrpcRouteRulesFiltersType::ExtensionRef)
    {
        Some(f) => Err(format!("Unsupported filter type: {}. To specify header modification, please configure it through LoadBalancerConfiguration.", enum_str(&f.r#type))),
        None => Ok(()),
    }
}

fn first_action<'a>(
    config: Option<&'a ListenerRuleConfiguration>,
    types: &[ActionType],
) -> Option<&'a CrdAction> {
    config?
        .spec
        .actions
        .iter()
        .find(|a| types.contains(&a.type_))
}

/// Upstream builds a ListenerRuleConfiguration's authenticate action on HTTPS listeners only: on
/// an HTTP listener it is dropped and the traffic goes through unauthenticated, which we say.
pub(super) fn dropped_authentication(
    config: Option<&ListenerRuleConfiguration>,
    https: bool,
    port: i32,
) -> Option<String> {
    use ActionType::*;
    if https {
        return None;
    }
    let action = first_action(
        config,
        &[AuthenticateCognito, AuthenticateOidc, JwtValidation],
    )?;
    let config = config?;
    Some(format!(
        "ListenerRuleConfiguration {}/{}: the {} action is not applied on HTTP listener port {port} (authentication needs an HTTPS listener); its requests are not authenticated",
        config.metadata.namespace.as_deref().unwrap_or("default"),
        config.metadata.name.as_deref().unwrap_or_default(),
        enum_str(&action.type_)
    ))
}

/// The rule's actions, in order (pre-routing first).
pub(super) fn rule_actions(r: &RuleInputs<'_>) -> Result<Vec<Action>, String> {
    use ActionType::*;
    check_filters(r.route, r.rule)?;
    let mut actions = Vec::new();
    if r.https {
        let pre = first_action(
            r.config,
            &[AuthenticateCognito, AuthenticateOidc, JwtValidation],
        );
        if let Some(a) = pre {
            actions.push(pre_routing(a, r)?);
        }
    }
    let routing = first_action(r.config, &[Forward, FixedResponse, Redirect]);
    let action = match routing {
        Some(a) if a.type_ == FixedResponse => a.fixed_response_config.as_ref().map(|fixed| {
            Action::FixedResponse {
                config: FixedResponseConfig {
                    // The CRD defaults the content type to text/plain.
                    content_type: Some(
                        fixed
                            .content_type
                            .as_ref()
                            .map(enum_str)
                            .unwrap_or_else(|| "text/plain".into()),
                    ),
                    message_body: fixed.message_body.clone(),
                    status_code: fixed.status_code.to_string(),
                },
            }
        }),
        _ => {
            let forward = r
                .tuples
                .iter()
                .any(|t| t.weight != Some(0))
                .then(|| forward(routing, r.tuples.clone()));
            redirect(r, routing)?.or(forward)
        }
    };
    actions.push(action.unwrap_or_else(|| Action::fixed("500", None)));
    Ok(actions)
}

fn forward(routing: Option<&CrdAction>, tuples: Vec<TargetGroupTuple>) -> Action {
    // With a forwardConfig the CRD defaults stickiness to {enabled: false, 3600 s}.
    let stickiness = routing.and_then(|a| a.forward_config.as_ref()).map(|f| {
        let s = f.target_group_stickiness_config.clone().unwrap_or_default();
        StickinessConfig {
            enabled: Some(s.enabled.unwrap_or(false)),
            duration_seconds: Some(s.duration_seconds.unwrap_or(3600)),
        }
    });
    Action::Forward {
        config: ForwardConfig {
            target_groups: tuples,
            target_group_stickiness_config: stickiness,
        },
    }
}

/// The HTTPRoute rule's RequestRedirect filter as a redirect action, if any.
fn redirect(r: &RuleInputs<'_>, routing: Option<&CrdAction>) -> Result<Option<Action>, String> {
    let Some(rule) = r.route.http_rules.get(r.rule) else {
        return Ok(None);
    };
    let filters: Vec<_> = rule.filters.iter().flatten().collect();
    let redirect_config = routing.and_then(|a| a.redirect_config.as_ref());
    if let [only] = filters.as_slice() {
        if only.r#type == FilterType::ExtensionRef && redirect_config.is_some() {
            return Err("HTTPRouteFilterRequestRedirect must be provided if RedirectActionConfig in ListenerRuleConfiguration is provided".into());
        }
    }
    let Some(f) = filters
        .iter()
        .find(|f| f.r#type == FilterType::RequestRedirect)
        .and_then(|f| f.request_redirect.as_ref())
    else {
        return Ok(None);
    };
    // The CRD defaults the query to `#{query}`.
    let query = redirect_config.map(|c| c.query.clone().unwrap_or_else(|| "#{query}".into()));
    redirect_action(f, query).map(Some)
}

fn redirect_action(
    f: &HttpRouteRulesFiltersRequestRedirect,
    query: Option<String>,
) -> Result<Action, String> {
    let mut port = f.port.map(|p| p.to_string());
    let protocol = f.scheme.as_ref().map(|s| {
        let (name, default_port) = match s {
            HttpRouteRulesFiltersRequestRedirectScheme::Http => ("HTTP", "80"),
            HttpRouteRulesFiltersRequestRedirectScheme::Https => ("HTTPS", "443"),
        };
        port.get_or_insert_with(|| default_port.to_string());
        name.to_string()
    });
    let mut path = None;
    if let Some(p) = &f.path {
        if let Some(full) = &p.replace_full_path {
            if full.contains(['*', '?']) {
                return Err(format!(
                    "ReplaceFullPath shouldn't contain wildcards: {full}"
                ));
            }
            path = Some(full.clone());
        } else if let Some(prefix) = &p.replace_prefix_match {
            // The prefix replacement is a rule transform (see `transforms`).
            if prefix.contains(['*', '?']) {
                return Err(format!(
                    "ReplacePrefixMatch shouldn't contain wildcards: {prefix}"
                ));
            }
        }
    }
    Ok(Action::Redirect {
        config: RedirectConfig {
            host: f.hostname.clone(),
            path,
            port,
            protocol,
            query,
            // The CRD defaults the status code to 302.
            status_code: format!("HTTP_{}", f.status_code.unwrap_or(302)),
        },
    })
}

fn on_unauthenticated(o: Option<OnUnauthenticatedRequest>) -> String {
    enum_str(&o.unwrap_or(OnUnauthenticatedRequest::Authenticate))
}

/// authenticate-cognito, authenticate-oidc (client id and secret from the Secret in the
/// route's namespace) or jwt-validation, with the CRD's defaults.
fn pre_routing(a: &CrdAction, r: &RuleInputs<'_>) -> Result<Action, String> {
    const COOKIE: &str = "AWSELBAuthSessionCookie";
    if let Some(c) = &a.authenticate_cognito_config {
        return Ok(Action::AuthenticateCognito {
            config: AuthenticateCognitoConfig {
                user_pool_arn: c.user_pool_arn.clone(),
                user_pool_client_id: c.user_pool_client_id.clone(),
                user_pool_domain: c.user_pool_domain.clone(),
                authentication_request_extra_params: c
                    .authentication_request_extra_params
                    .clone()
                    .unwrap_or_default(),
                on_unauthenticated_request: on_unauthenticated(c.on_unauthenticated_request),
                scope: c.scope.clone().unwrap_or_else(|| "openid".into()),
                session_cookie_name: c
                    .session_cookie_name
                    .clone()
                    .unwrap_or_else(|| COOKIE.into()),
                session_timeout: c.session_timeout.unwrap_or(604800),
            },
        });
    }
    if let Some(c) = &a.authenticate_oidc_config {
        let ns = r.route.namespace.as_str();
        let name = c.secret.name.as_str();
        let secret = r.secrets.iter().find(|s| {
            s.metadata.namespace.as_deref().unwrap_or("default") == ns
                && s.metadata.name.as_deref() == Some(name)
        });
        let (client_id, client_secret) = oidc::credentials(secret, ns, name)?;
        return Ok(Action::AuthenticateOidc {
            config: AuthenticateOidcConfig {
                issuer: c.issuer.clone(),
                authorization_endpoint: c.authorization_endpoint.clone(),
                token_endpoint: c.token_endpoint.clone(),
                user_info_endpoint: c.user_info_endpoint.clone(),
                secret: format!("{ns}/{name}"),
                client_id,
                client_secret,
                authentication_request_extra_params: c
                    .authentication_request_extra_params
                    .clone()
                    .unwrap_or_default(),
                on_unauthenticated_request: on_unauthenticated(c.on_unauthenticated_request),
                scope: c.scope.clone().unwrap_or_else(|| "openid".into()),
                session_cookie_name: c
                    .session_cookie_name
                    .clone()
                    .unwrap_or_else(|| COOKIE.into()),
                session_timeout: c.session_timeout.unwrap_or(604800),
                use_existing_client_secret: None,
            },
        });
    }
    if let Some(c) = &a.jwt_validation_config {
        return Ok(Action::JwtValidation {
            config: JwtValidationConfig {
                jwks_endpoint: c.jwks_endpoint.clone(),
                issuer: c.issuer.clone(),
                additional_claims: c
                    .additional_claims
                    .iter()
                    .map(|claim| JwtAdditionalClaim {
                        format: enum_str(&claim.format),
                        name: claim.name.clone(),
                        values: claim.values.clone(),
                    })
                    .collect(),
            },
        });
    }
    Err(format!("unsupported action type {}", enum_str(&a.type_)))
}
