//! Authentication and JWT validation (`translate/pre_routing.go`): `auth-type` with
//! `auth-idp-cognito` / `auth-idp-oidc` and the shared `auth-*` annotations, or
//! `jwt-validation`, become the pre-routing action of a ListenerRuleConfiguration. Unset
//! optional fields stay unset so the CRD's defaults (openid, authenticate, the ALB's cookie
//! name, 7 days) apply, as the Ingress controller's defaults do.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::annotations::{get_int64, get_string, parse_jwt_validation_annotation};
use super::lr_config::lrc_action;
use super::{go_quote, MigrateError};
use crate::annotations::{self as ann, suffix, AnnotationMap};
use crate::crd::gateway::listener_rule_configuration::{
    Action as LrcAction, ActionType, AuthenticateCognitoActionConfig, AuthenticateOidcActionConfig,
    JwtAdditionalClaim, JwtValidationActionConfig, OnUnauthenticatedRequest, SecretReference,
};

const AUTH_TYPE_NONE: &str = "none";
const AUTH_TYPE_COGNITO: &str = "cognito";
const AUTH_TYPE_OIDC: &str = "oidc";

/// `auth-idp-cognito` as users write it.
#[derive(Deserialize, Default)]
struct CognitoIdp {
    #[serde(rename = "userPoolARN", default)]
    user_pool_arn: String,
    #[serde(rename = "userPoolClientID", default)]
    user_pool_client_id: String,
    #[serde(rename = "userPoolDomain", default)]
    user_pool_domain: String,
    #[serde(rename = "authenticationRequestExtraParams", default)]
    extra_params: BTreeMap<String, String>,
}

/// `auth-idp-oidc` as users write it.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct OidcIdp {
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
    authentication_request_extra_params: BTreeMap<String, String>,
}

/// A value of one of the CRD's string enums, read through its serde names.
pub(crate) fn enum_value<T: DeserializeOwned>(raw: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(raw.to_string())).ok()
}

/// The authentication action `auth-type` asks for; `None` for `none` or no annotation.
pub fn build_auth_action(a: &AnnotationMap) -> Result<Option<LrcAction>, MigrateError> {
    let auth_type = get_string(a, suffix::AUTH_TYPE);
    match auth_type.as_str() {
        "" | AUTH_TYPE_NONE => Ok(None),
        AUTH_TYPE_COGNITO => build_auth_cognito_action(a).map(Some),
        AUTH_TYPE_OIDC => build_oidc_action(a).map(Some),
        other => Err(MigrateError::Translate(format!(
            "unsupported auth-type {}",
            go_quote(other)
        ))),
    }
}

fn idp<T: DeserializeOwned>(
    a: &AnnotationMap,
    sfx: &str,
    auth_type: &str,
) -> Result<T, MigrateError> {
    match ann::json::<T>(a, sfx) {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(MigrateError::Translate(format!(
            "auth-type is {} but {sfx} annotation is missing",
            go_quote(auth_type)
        ))),
        Err(e) => Err(MigrateError::Translate(format!(
            "failed to parse {sfx} annotation: {}",
            e.message
        ))),
    }
}

/// The shared optional settings: scope, on-unauthenticated-request, cookie name, timeout.
struct Shared {
    scope: Option<String>,
    on_unauthenticated: Option<OnUnauthenticatedRequest>,
    session_cookie: Option<String>,
    session_timeout: Option<i64>,
}

fn shared(a: &AnnotationMap) -> Result<Shared, MigrateError> {
    let non_empty = |sfx: &str| Some(get_string(a, sfx)).filter(|v| !v.is_empty());
    let on_unauthenticated = match non_empty(suffix::AUTH_ON_UNAUTHENTICATED_REQUEST) {
        None => None,
        // Upstream copies the text as it is; a value the CRD's enum lacks could not be applied.
        Some(v) => Some(enum_value(&v).ok_or_else(|| {
            MigrateError::Translate(format!(
                "{} {} is not one of deny, allow, authenticate",
                ann::key(suffix::AUTH_ON_UNAUTHENTICATED_REQUEST),
                go_quote(&v)
            ))
        })?),
    };
    Ok(Shared {
        scope: non_empty(suffix::AUTH_SCOPE),
        on_unauthenticated,
        session_cookie: non_empty(suffix::AUTH_SESSION_COOKIE),
        session_timeout: get_int64(a, suffix::AUTH_SESSION_TIMEOUT),
    })
}

fn extra_params(p: BTreeMap<String, String>) -> Option<BTreeMap<String, String>> {
    (!p.is_empty()).then_some(p)
}

fn build_auth_cognito_action(a: &AnnotationMap) -> Result<LrcAction, MigrateError> {
    let idp: CognitoIdp = idp(a, suffix::AUTH_IDP_COGNITO, AUTH_TYPE_COGNITO)?;
    let s = shared(a)?;
    let mut action = lrc_action(ActionType::AuthenticateCognito);
    action.authenticate_cognito_config = Some(AuthenticateCognitoActionConfig {
        user_pool_arn: idp.user_pool_arn,
        user_pool_client_id: idp.user_pool_client_id,
        user_pool_domain: idp.user_pool_domain,
        scope: s.scope,
        authentication_request_extra_params: extra_params(idp.extra_params),
        on_unauthenticated_request: s.on_unauthenticated,
        session_cookie_name: s.session_cookie,
        session_timeout: s.session_timeout,
    });
    Ok(action)
}

/// The Secret the annotation names is kept as the CRD's `secret.name` (same namespace).
fn build_oidc_action(a: &AnnotationMap) -> Result<LrcAction, MigrateError> {
    let idp: OidcIdp = idp(a, suffix::AUTH_IDP_OIDC, AUTH_TYPE_OIDC)?;
    let s = shared(a)?;
    let mut action = lrc_action(ActionType::AuthenticateOidc);
    action.authenticate_oidc_config = Some(AuthenticateOidcActionConfig {
        authorization_endpoint: idp.authorization_endpoint,
        secret: SecretReference {
            name: idp.secret_name,
        },
        issuer: idp.issuer,
        token_endpoint: idp.token_endpoint,
        user_info_endpoint: idp.user_info_endpoint,
        scope: s.scope,
        authentication_request_extra_params: extra_params(idp.authentication_request_extra_params),
        on_unauthenticated_request: s.on_unauthenticated,
        session_cookie_name: s.session_cookie,
        session_timeout: s.session_timeout,
        use_existing_client_secret: None,
    });
    Ok(action)
}

/// The JWT validation `jwt-validation` asks for; `None` without the annotation.
pub fn build_jwt_validation_action(a: &AnnotationMap) -> Result<Option<LrcAction>, MigrateError> {
    let cfg = parse_jwt_validation_annotation(a).map_err(|e| {
        e.context(&format!(
            "failed to parse {} annotation",
            suffix::JWT_VALIDATION
        ))
    })?;
    let Some(cfg) = cfg else {
        return Ok(None);
    };
    let mut claims = Vec::new();
    for c in cfg.additional_claims {
        let format = enum_value(&c.format).ok_or_else(|| {
            MigrateError::Translate(format!(
                "{} claim {}: format {} is not one of single-string, string-array, space-separated-values",
                ann::key(suffix::JWT_VALIDATION),
                go_quote(&c.name),
                go_quote(&c.format)
            ))
        })?;
        claims.push(JwtAdditionalClaim {
            format,
            name: c.name,
            values: c.values,
        });
    }
    let mut action = lrc_action(ActionType::JwtValidation);
    action.jwt_validation_config = Some(JwtValidationActionConfig {
        issuer: cfg.issuer,
        jwks_endpoint: cfg.jwks_endpoint,
        additional_claims: claims,
    });
    Ok(Some(action))
}
