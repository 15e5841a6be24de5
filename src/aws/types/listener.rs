//! Our own ELBv2 listener and rule types: listeners with their certificates, rules with their
//! actions and conditions.

use std::collections::BTreeMap;

use super::Tags;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listener {
    pub arn: String,
    pub load_balancer_arn: String,
    pub port: u16,
    pub protocol: String,
    pub ssl_policy: Option<String>,
    /// The default certificate (AWS returns only that one here).
    pub certificates: Vec<String>,
    pub alpn_policy: Vec<String>,
    pub default_actions: Vec<Action>,
    /// HTTPS: client-certificate handling (AWS reports `off` when never set).
    pub mutual_authentication: Option<MutualAuthentication>,
}

/// A listener's `MutualAuthentication` (`mode`: `off`, `passthrough` or `verify`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MutualAuthentication {
    pub mode: String,
    pub trust_store_arn: Option<String>,
    pub ignore_client_certificate_expiry: Option<bool>,
    /// `on` / `off`.
    pub advertise_trust_store_ca_names: Option<String>,
}

/// A trust store found by name (`DescribeTrustStores`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrustStore {
    pub name: String,
    pub arn: String,
}

/// What to create or change on a listener (ModifyListener replaces every field given).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListenerSpec {
    pub port: u16,
    pub protocol: String,
    pub ssl_policy: Option<String>,
    /// The default certificate first; extra certificates go through `add_listener_certificates`.
    pub certificates: Vec<String>,
    pub alpn_policy: Vec<String>,
    pub default_actions: Vec<Action>,
    /// Only used on create.
    /// Not sent when `None` (the listener keeps what it has).
    pub mutual_authentication: Option<MutualAuthentication>,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerCertificate {
    pub arn: String,
    pub is_default: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rule {
    pub arn: String,
    /// A number as text, or `default`.
    pub priority: String,
    pub is_default: bool,
    pub conditions: Vec<RuleCondition>,
    pub actions: Vec<Action>,
    pub transforms: Vec<RuleTransform>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleSpec {
    pub priority: u32,
    pub conditions: Vec<RuleCondition>,
    pub actions: Vec<Action>,
    pub transforms: Vec<RuleTransform>,
    pub tags: Tags,
}

/// A rule transform: `host-header-rewrite` or `url-rewrite`, with its (regex, replace) rewrites.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleTransform {
    pub transform_type: String,
    pub rewrites: Vec<(String, String)>,
}

/// One action; a list of actions is executed in order (AWS `Order` = position + 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Forward(ForwardConfig),
    Redirect(RedirectConfig),
    FixedResponse(FixedResponseConfig),
    AuthenticateOidc(AuthenticateOidcConfig),
    AuthenticateCognito(AuthenticateCognitoConfig),
    JwtValidation(JwtValidationConfig),
}

impl Action {
    /// A forward to a single target group.
    pub fn forward(tg_arn: impl Into<String>) -> Self {
        Action::Forward(ForwardConfig {
            target_groups: vec![WeightedTargetGroup {
                arn: tg_arn.into(),
                weight: None,
            }],
            stickiness: None,
        })
    }

    pub fn fixed(status: &str, content_type: Option<&str>, body: Option<&str>) -> Self {
        Action::FixedResponse(FixedResponseConfig {
            status_code: status.into(),
            content_type: content_type.map(Into::into),
            message_body: body.map(Into::into),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ForwardConfig {
    pub target_groups: Vec<WeightedTargetGroup>,
    pub stickiness: Option<Stickiness>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WeightedTargetGroup {
    pub arn: String,
    pub weight: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Stickiness {
    pub enabled: bool,
    pub duration_seconds: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RedirectConfig {
    pub protocol: Option<String>,
    pub port: Option<String>,
    pub host: Option<String>,
    pub path: Option<String>,
    pub query: Option<String>,
    /// `HTTP_301` or `HTTP_302`.
    pub status_code: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FixedResponseConfig {
    pub status_code: String,
    pub content_type: Option<String>,
    pub message_body: Option<String>,
}

/// `Debug` leaves the client id and secret out (error contexts and logs print actions).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct AuthenticateOidcConfig {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub user_info_endpoint: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub session_cookie_name: Option<String>,
    pub scope: Option<String>,
    pub session_timeout: Option<i64>,
    pub authentication_request_extra_params: BTreeMap<String, String>,
    pub on_unauthenticated_request: Option<String>,
    pub use_existing_client_secret: Option<bool>,
}

impl std::fmt::Debug for AuthenticateOidcConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |v: bool| if v { "[REDACTED]" } else { "" };
        f.debug_struct("AuthenticateOidcConfig")
            .field("issuer", &self.issuer)
            .field("authorization_endpoint", &self.authorization_endpoint)
            .field("token_endpoint", &self.token_endpoint)
            .field("user_info_endpoint", &self.user_info_endpoint)
            .field("client_id", &shown(!self.client_id.is_empty()))
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| shown(true)),
            )
            .field("session_cookie_name", &self.session_cookie_name)
            .field("scope", &self.scope)
            .field("session_timeout", &self.session_timeout)
            .field(
                "authentication_request_extra_params",
                &self.authentication_request_extra_params,
            )
            .field(
                "on_unauthenticated_request",
                &self.on_unauthenticated_request,
            )
            .field(
                "use_existing_client_secret",
                &self.use_existing_client_secret,
            )
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuthenticateCognitoConfig {
    pub user_pool_arn: String,
    pub user_pool_client_id: String,
    pub user_pool_domain: String,
    pub session_cookie_name: Option<String>,
    pub scope: Option<String>,
    pub session_timeout: Option<i64>,
    pub authentication_request_extra_params: BTreeMap<String, String>,
    pub on_unauthenticated_request: Option<String>,
}

/// `jwt-validation`: the token is checked against the issuer's JWKS before the next action.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JwtValidationConfig {
    pub jwks_endpoint: String,
    pub issuer: String,
    pub additional_claims: Vec<JwtClaim>,
}

/// One additional claim a JWT must carry (`format`: `single-string`, `string-array`,
/// `space-separated-values`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JwtClaim {
    pub format: String,
    pub name: String,
    pub values: Vec<String>,
}

/// A rule condition: `values` are wildcard patterns, `regex_values` regular expressions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleCondition {
    HostHeader {
        values: Vec<String>,
        regex_values: Vec<String>,
    },
    PathPattern {
        values: Vec<String>,
        regex_values: Vec<String>,
    },
    HttpHeader {
        name: String,
        values: Vec<String>,
        regex_values: Vec<String>,
    },
    HttpRequestMethod {
        values: Vec<String>,
    },
    QueryString {
        values: Vec<QueryStringPair>,
    },
    SourceIp {
        values: Vec<String>,
    },
}

impl RuleCondition {
    /// The AWS `Field` name of the condition.
    pub fn field(&self) -> &'static str {
        match self {
            Self::HostHeader { .. } => "host-header",
            Self::PathPattern { .. } => "path-pattern",
            Self::HttpHeader { .. } => "http-header",
            Self::HttpRequestMethod { .. } => "http-request-method",
            Self::QueryString { .. } => "query-string",
            Self::SourceIp { .. } => "source-ip",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueryStringPair {
    pub key: Option<String>,
    pub value: String,
}
