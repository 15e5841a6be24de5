//! Upstream's enhanced backend: an Ingress backend plus what annotations add to it — the
//! `actions.*` action a `use-annotation` port names, `conditions.*` and `transforms.*`, and
//! the Ingress's or Service's authentication (Cognito / OIDC) and JWT validation.

use std::collections::BTreeSet;

use k8s_openapi::api::networking::v1::IngressBackend;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::backend::{self, *};
use crate::annotations::{self as ann, suffix, AnnotationMap};
use crate::model::error::Fail;
use crate::model::group::ClassifiedIngress;

/// A parsed Ingress backend: routing extras from annotations plus the action to take.
pub struct EnhancedBackend {
    pub conditions: Vec<ConditionInput>,
    pub transforms: Vec<Transform>,
    pub action: ActionInput,
    pub auth: Option<Action>,
    pub jwt: Option<JwtValidationConfig>,
}

/// Annotations of a Service by name (`None` = no such Service; `Some(None)` = no annotations).
pub type ServiceAnnotations<'s> = dyn Fn(&str) -> Option<Option<&'s AnnotationMap>> + 's;

/// Parses a backend like upstream's enhanced-backend builder; `service_annotations` tells
/// whether a Service exists (for the 503 tolerance) and supplies its auth annotations.
pub fn enhanced_backend<'s>(
    m: &ClassifiedIngress<'_>,
    b: &IngressBackend,
    tolerate_service: bool,
    tolerate_action: bool,
    service_annotations: &ServiceAnnotations<'s>,
) -> Result<EnhancedBackend, Fail> {
    let svc = b
        .service
        .as_ref()
        .ok_or_else(|| Fail::msg("missing required \"service\" field"))?;
    let a = m.annotations();
    let conditions = backend::conditions(a, &svc.name)?;
    let transforms = backend::transforms(a, &svc.name)?;
    let port = svc.port.as_ref();
    let port_name = port.and_then(|p| p.name.clone()).unwrap_or_default();
    let mut action = if port_name == USE_ANNOTATION {
        backend::action_via_annotation(a, &svc.name, tolerate_action)?
    } else if !port_name.is_empty() {
        ActionInput::forward_to(&svc.name, IntOrString::String(port_name))
    } else {
        ActionInput::forward_to(
            &svc.name,
            IntOrString::Int(port.and_then(|p| p.number).unwrap_or(0)),
        )
    };
    let mut single_svc_annotations = None;
    if action.action_type == "forward" {
        if let Some(fc) = &action.forward_config {
            let names: BTreeSet<&String> = fc
                .target_groups
                .iter()
                .filter_map(|t| t.service_name.as_ref())
                .collect();
            let single = fc.target_groups.len() == 1 && names.len() == 1;
            for name in &names {
                match service_annotations(name) {
                    Some(sa) if single => single_svc_annotations = Some(sa),
                    Some(_) => {}
                    None if tolerate_service && single => {
                        action = backend::ActionInput {
                            action_type: "fixed-response".into(),
                            fixed_response_config: Some(FixedResponseConfig {
                                content_type: Some("text/plain".into()),
                                message_body: Some(NON_EXISTENT_SERVICE_BODY.into()),
                                status_code: "503".into(),
                            }),
                            ..Default::default()
                        };
                        break;
                    }
                    None => return Err(Fail::msg(format!("services \"{name}\" not found"))),
                }
            }
        }
    }
    // Only auth-* keys are read from the merged map, so merge only when the Service has some.
    let auth_prefix = ann::key("auth-");
    let auth = match single_svc_annotations
        .flatten()
        .filter(|sa| sa.keys().any(|k| k.starts_with(&auth_prefix)))
    {
        Some(sa) => auth_action(&ann::merge_service_over_ingress(sa, a), m.namespace())?,
        None => auth_action(a, m.namespace())?,
    };
    let jwt = jwt_validation(a)?;
    Ok(EnhancedBackend {
        conditions,
        transforms,
        action,
        auth,
        jwt,
    })
}

pub(super) fn auth_action(a: &AnnotationMap, namespace: &str) -> Result<Option<Action>, Fail> {
    let kind = ann::string(a, suffix::AUTH_TYPE).unwrap_or("none");
    let on_unauth = ann::string(a, suffix::AUTH_ON_UNAUTHENTICATED_REQUEST)
        .unwrap_or("authenticate")
        .to_string();
    let scope = ann::string(a, suffix::AUTH_SCOPE)
        .unwrap_or("openid")
        .to_string();
    let cookie = ann::string(a, suffix::AUTH_SESSION_COOKIE)
        .unwrap_or("AWSELBAuthSessionCookie")
        .to_string();
    let timeout = ann::int64(a, suffix::AUTH_SESSION_TIMEOUT)?.unwrap_or(604800);
    #[derive(serde::Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Cognito {
        #[serde(rename = "userPoolARN", default)]
        user_pool_arn: String,
        #[serde(rename = "userPoolClientID", default)]
        user_pool_client_id: String,
        #[serde(default)]
        user_pool_domain: String,
        #[serde(default)]
        authentication_request_extra_params: std::collections::BTreeMap<String, String>,
    }
    #[derive(serde::Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Oidc {
        #[serde(default)]
        issuer: String,
        #[serde(default)]
        authorization_endpoint: String,
        #[serde(default)]
        token_endpoint: String,
        #[serde(default)]
        user_info_endpoint: String,
        #[serde(default)]
        secret_name: String,
        #[serde(default)]
        authentication_request_extra_params: std::collections::BTreeMap<String, String>,
    }
    let cognito: Option<Cognito> = ann::json(a, suffix::AUTH_IDP_COGNITO)?;
    let oidc: Option<Oidc> = ann::json(a, suffix::AUTH_IDP_OIDC)?;
    match kind {
        "none" => Ok(None),
        "cognito" => {
            let c = cognito.ok_or_else(|| {
                Fail::at(
                    ann::key(suffix::AUTH_IDP_COGNITO),
                    "missing IDPConfigCognito",
                )
            })?;
            Ok(Some(Action::AuthenticateCognito {
                config: AuthenticateCognitoConfig {
                    user_pool_arn: c.user_pool_arn,
                    user_pool_client_id: c.user_pool_client_id,
                    user_pool_domain: c.user_pool_domain,
                    authentication_request_extra_params: c.authentication_request_extra_params,
                    on_unauthenticated_request: on_unauth,
                    scope,
                    session_cookie_name: cookie,
                    session_timeout: timeout,
                },
            }))
        }
        "oidc" => {
            let o = oidc.ok_or_else(|| {
                Fail::at(ann::key(suffix::AUTH_IDP_OIDC), "missing IDPConfigOIDC")
            })?;
            Ok(Some(Action::AuthenticateOidc {
                config: AuthenticateOidcConfig {
                    issuer: o.issuer,
                    authorization_endpoint: o.authorization_endpoint,
                    token_endpoint: o.token_endpoint,
                    user_info_endpoint: o.user_info_endpoint,
                    secret: format!("{namespace}/{}", o.secret_name),
                    // Read from the Secret when the action is built (listeners, HTTPS only).
                    client_id: Redacted::default(),
                    client_secret: Redacted::default(),
                    authentication_request_extra_params: o.authentication_request_extra_params,
                    on_unauthenticated_request: on_unauth,
                    scope,
                    session_cookie_name: cookie,
                    session_timeout: timeout,
                    use_existing_client_secret: None,
                },
            }))
        }
        other => Err(Fail::at(
            ann::key(suffix::AUTH_TYPE),
            format!("unknown authType: {other}"),
        )),
    }
}

pub(super) fn jwt_validation(a: &AnnotationMap) -> Result<Option<JwtValidationConfig>, Fail> {
    let Some(cfg) = ann::json::<JwtValidationConfig>(a, suffix::JWT_VALIDATION)? else {
        return Ok(None);
    };
    let at = ann::key(suffix::JWT_VALIDATION);
    if cfg.jwks_endpoint.is_empty() {
        return Err(Fail::at(
            at,
            "jwksEndpoint is a required field for jwt validation",
        ));
    }
    if cfg.issuer.is_empty() {
        return Err(Fail::at(
            at,
            "issuer is a required field for jwt validation",
        ));
    }
    for c in &cfg.additional_claims {
        if c.format.is_empty() {
            return Err(Fail::at(
                at,
                "format is a required field for additional claims for jwt validation",
            ));
        }
        if c.name.is_empty() {
            return Err(Fail::at(
                at,
                "name is a required field for additional claims for jwt validation",
            ));
        }
        if c.values.is_empty() {
            return Err(Fail::at(
                at,
                "values must not be empty for additional claims for jwt validation",
            ));
        }
    }
    Ok(Some(cfg))
}
