//! Replays `translate/pre_routing_test.go`: `TestBuildAuthAction` (10 cases) and
//! `TestBuildJwtValidationAction` (4): all 14.

use super::annotations_map;
use crate::crd::gateway::listener_rule_configuration::{
    ActionType, JwtClaimFormat, OnUnauthenticatedRequest,
};
use crate::migrate::pre_routing::{build_auth_action, build_jwt_validation_action};

const AUTH_TYPE: &str = "alb.ingress.kubernetes.io/auth-type";
const COGNITO: &str = "alb.ingress.kubernetes.io/auth-idp-cognito";
const OIDC: &str = "alb.ingress.kubernetes.io/auth-idp-oidc";
const SCOPE: &str = "alb.ingress.kubernetes.io/auth-scope";
const ON_UNAUTH: &str = "alb.ingress.kubernetes.io/auth-on-unauthenticated-request";
const COOKIE: &str = "alb.ingress.kubernetes.io/auth-session-cookie";
const TIMEOUT: &str = "alb.ingress.kubernetes.io/auth-session-timeout";
const JWT: &str = "alb.ingress.kubernetes.io/jwt-validation";

#[test]
fn build_auth_action_upstream_cases() {
    // auth-type none
    assert!(build_auth_action(&annotations_map(&[(AUTH_TYPE, "none")]))
        .unwrap()
        .is_none());
    // no annotation
    assert!(build_auth_action(&annotations_map(&[])).unwrap().is_none());
    // unsupported auth-type
    let e = build_auth_action(&annotations_map(&[(AUTH_TYPE, "foobar")])).unwrap_err();
    assert!(e.to_string().contains("unsupported auth-type"), "{e}");
    // cognito full
    let a = build_auth_action(&annotations_map(&[
        (AUTH_TYPE, "cognito"),
        (
            COGNITO,
            r#"{"userPoolARN":"arn:aws:cognito-idp:us-west-2:123456789:userpool/us-west-2_abc","userPoolClientID":"my-client-id","userPoolDomain":"my-domain"}"#,
        ),
        (SCOPE, "email openid"),
        (ON_UNAUTH, "deny"),
        (COOKIE, "my-cookie"),
        (TIMEOUT, "86400"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(a.type_, ActionType::AuthenticateCognito);
    let c = a.authenticate_cognito_config.unwrap();
    assert_eq!(
        c.user_pool_arn,
        "arn:aws:cognito-idp:us-west-2:123456789:userpool/us-west-2_abc"
    );
    assert_eq!(c.user_pool_client_id, "my-client-id");
    assert_eq!(c.user_pool_domain, "my-domain");
    assert_eq!(c.scope.as_deref(), Some("email openid"));
    assert_eq!(
        c.on_unauthenticated_request,
        Some(OnUnauthenticatedRequest::Deny)
    );
    assert_eq!(c.session_cookie_name.as_deref(), Some("my-cookie"));
    assert_eq!(c.session_timeout, Some(86400));
    assert!(c.authentication_request_extra_params.is_none());
    // cognito with extra params
    let c = build_auth_action(&annotations_map(&[
        (AUTH_TYPE, "cognito"),
        (
            COGNITO,
            r#"{"userPoolARN":"arn:pool","userPoolClientID":"cid","userPoolDomain":"dom","authenticationRequestExtraParams":{"display":"page","prompt":"login"}}"#,
        ),
    ]))
    .unwrap()
    .unwrap()
    .authenticate_cognito_config
    .unwrap();
    let p = c.authentication_request_extra_params.unwrap();
    assert_eq!(
        (p["display"].as_str(), p["prompt"].as_str()),
        ("page", "login")
    );
    // cognito missing IDP annotation
    let e = build_auth_action(&annotations_map(&[(AUTH_TYPE, "cognito")])).unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
    // oidc full
    let a = build_auth_action(&annotations_map(&[
        (AUTH_TYPE, "oidc"),
        (
            OIDC,
            r#"{"issuer":"https://example.com","authorizationEndpoint":"https://auth.example.com","tokenEndpoint":"https://token.example.com","userInfoEndpoint":"https://userinfo.example.com","secretName":"my-k8s-secret"}"#,
        ),
        (SCOPE, "email openid profile"),
        (ON_UNAUTH, "allow"),
        (COOKIE, "oidc-cookie"),
        (TIMEOUT, "7200"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(a.type_, ActionType::AuthenticateOidc);
    let c = a.authenticate_oidc_config.unwrap();
    assert_eq!(c.issuer, "https://example.com");
    assert_eq!(c.authorization_endpoint, "https://auth.example.com");
    assert_eq!(c.token_endpoint, "https://token.example.com");
    assert_eq!(c.user_info_endpoint, "https://userinfo.example.com");
    assert_eq!(c.secret.name, "my-k8s-secret");
    assert_eq!(c.scope.as_deref(), Some("email openid profile"));
    assert_eq!(
        c.on_unauthenticated_request,
        Some(OnUnauthenticatedRequest::Allow)
    );
    assert_eq!(c.session_cookie_name.as_deref(), Some("oidc-cookie"));
    assert_eq!(c.session_timeout, Some(7200));
    assert!(c.authentication_request_extra_params.is_none());
    // oidc with extra params
    let c = build_auth_action(&annotations_map(&[
        (AUTH_TYPE, "oidc"),
        (
            OIDC,
            r#"{"issuer":"https://ex.com","authorizationEndpoint":"https://auth.ex.com","tokenEndpoint":"https://tok.ex.com","userInfoEndpoint":"https://ui.ex.com","secretName":"sec","authenticationRequestExtraParams":{"display":"page","prompt":"consent"}}"#,
        ),
    ]))
    .unwrap()
    .unwrap()
    .authenticate_oidc_config
    .unwrap();
    let p = c.authentication_request_extra_params.unwrap();
    assert_eq!(
        (p["display"].as_str(), p["prompt"].as_str()),
        ("page", "consent")
    );
    // oidc missing IDP annotation
    let e = build_auth_action(&annotations_map(&[(AUTH_TYPE, "oidc")])).unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
    // oidc secret name preserved
    let c = build_auth_action(&annotations_map(&[
        (AUTH_TYPE, "oidc"),
        (
            OIDC,
            r#"{"issuer":"https://ex.com","authorizationEndpoint":"https://auth.ex.com","tokenEndpoint":"https://tok.ex.com","userInfoEndpoint":"https://ui.ex.com","secretName":"my-special-secret"}"#,
        ),
    ]))
    .unwrap()
    .unwrap()
    .authenticate_oidc_config
    .unwrap();
    assert_eq!(c.secret.name, "my-special-secret");
}

#[test]
fn build_jwt_validation_action_upstream_cases() {
    // no annotation
    assert!(build_jwt_validation_action(&annotations_map(&[]))
        .unwrap()
        .is_none());
    // basic — issuer and jwks only
    let a = build_jwt_validation_action(&annotations_map(&[(
        JWT,
        r#"{"jwksEndpoint":"https://example.com/.well-known/jwks.json","issuer":"https://example.com"}"#,
    )]))
    .unwrap()
    .unwrap();
    assert_eq!(a.type_, ActionType::JwtValidation);
    let c = a.jwt_validation_config.unwrap();
    assert_eq!(c.jwks_endpoint, "https://example.com/.well-known/jwks.json");
    assert_eq!(c.issuer, "https://example.com");
    assert!(c.additional_claims.is_empty());
    // with additional claims — all three formats
    let c = build_jwt_validation_action(&annotations_map(&[(
        JWT,
        r#"{"jwksEndpoint":"https://example-endpoint.com","issuer":"https://example-issuer.com","additionalClaims":[{"name":"admin","format":"single-string","values":["true"]},{"name":"ver","format":"string-array","values":["6","19"]},{"name":"scope","format":"space-separated-values","values":["read:api","write","email"]}]}"#,
    )]))
    .unwrap()
    .unwrap()
    .jwt_validation_config
    .unwrap();
    assert_eq!(c.jwks_endpoint, "https://example-endpoint.com");
    assert_eq!(c.issuer, "https://example-issuer.com");
    let claims: Vec<(&str, JwtClaimFormat, Vec<&str>)> = c
        .additional_claims
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.format,
                c.values.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        claims,
        vec![
            ("admin", JwtClaimFormat::SingleString, vec!["true"]),
            ("ver", JwtClaimFormat::StringArray, vec!["6", "19"]),
            (
                "scope",
                JwtClaimFormat::SpaceSeparatedValues,
                vec!["read:api", "write", "email"]
            ),
        ]
    );
    // invalid JSON
    let e = build_jwt_validation_action(&annotations_map(&[(JWT, "{invalid json}")])).unwrap_err();
    assert!(
        e.to_string().contains("failed to parse jwt-validation"),
        "{e}"
    );
}
