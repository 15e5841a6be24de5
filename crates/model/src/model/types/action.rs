//! Actions, conditions and transforms of listener rules as the model carries them (and, where
//! users write the same JSON shape in `actions.*` / `conditions.*` / `transforms.*`, as read).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Token;

/// Fixed response (input and model).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct FixedResponseConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_body: Option<String>,
    #[serde(default)]
    pub status_code: String,
}

/// Redirect (input and model).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct RedirectConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    #[serde(default)]
    pub status_code: String,
}

/// Target-group stickiness of a forward action.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct StickinessConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_seconds: Option<i32>,
}

/// Forward target in the model.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroupTuple {
    pub target_group_arn: Token,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
}

/// Forward action in the model.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ForwardConfig {
    pub target_groups: Vec<TargetGroupTuple>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_group_stickiness_config: Option<StickinessConfig>,
}

/// Cognito authentication.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticateCognitoConfig {
    pub user_pool_arn: String,
    pub user_pool_client_id: String,
    pub user_pool_domain: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub authentication_request_extra_params: BTreeMap<String, String>,
    pub on_unauthenticated_request: String,
    pub scope: String,
    pub session_cookie_name: String,
    pub session_timeout: i64,
}

/// A credential read from a Secret: compared by value, but never shown — `Debug` and
/// serialisation (plan output, logs, events) print `[REDACTED]`, as upstream marshals it.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Redacted(String);

impl Redacted {
    pub const SHOWN: &'static str = "[REDACTED]";

    pub fn new(value: impl Into<String>) -> Self {
        Redacted(value.into())
    }

    /// The real value, for the one place that sends it (the ELBv2 action).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(Self::SHOWN)
    }
}

impl Serialize for Redacted {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(Self::SHOWN)
    }
}

impl<'de> Deserialize<'de> for Redacted {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Redacted)
    }
}

/// OIDC authentication. `secret` (`ns/name`) names the Secret the client id and secret were
/// read from while building the model (upstream's keys `clientID`/`clientId`, `clientSecret`);
/// it is not part of the ELBv2 action (AWS never knows it, so an action described by AWS has
/// it empty, and no client secret either: DescribeListeners/DescribeRules never return one).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticateOidcConfig {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub user_info_endpoint: String,
    pub secret: String,
    #[serde(default, rename = "clientID")]
    pub client_id: Redacted,
    #[serde(default)]
    pub client_secret: Redacted,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub authentication_request_extra_params: BTreeMap<String, String>,
    pub on_unauthenticated_request: String,
    pub scope: String,
    pub session_cookie_name: String,
    pub session_timeout: i64,
    /// ELBv2's `UseExistingClientSecret`: the model never sets it (upstream always sends the
    /// secret); it is sent when set and kept on an action as AWS describes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_existing_client_secret: Option<bool>,
}

/// JWT validation (input and model).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct JwtValidationConfig {
    #[serde(default)]
    pub jwks_endpoint: String,
    #[serde(default)]
    pub issuer: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_claims: Vec<JwtAdditionalClaim>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct JwtAdditionalClaim {
    #[serde(default)]
    pub format: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub values: Vec<String>,
}

/// A listener or rule action in the model.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Action {
    FixedResponse {
        #[serde(rename = "fixedResponseConfig")]
        config: FixedResponseConfig,
    },
    Redirect {
        #[serde(rename = "redirectConfig")]
        config: RedirectConfig,
    },
    Forward {
        #[serde(rename = "forwardConfig")]
        config: ForwardConfig,
    },
    AuthenticateCognito {
        #[serde(rename = "authenticateCognitoConfig")]
        config: AuthenticateCognitoConfig,
    },
    #[serde(rename = "authenticate-oidc")]
    AuthenticateOidc {
        #[serde(rename = "authenticateOIDCConfig")]
        config: AuthenticateOidcConfig,
    },
    JwtValidation {
        #[serde(rename = "jwtValidationConfig")]
        config: JwtValidationConfig,
    },
}

impl Action {
    /// A forward to one target group known by its ARN (as AWS describes a simple forward).
    pub fn forward_arn(arn: impl Into<String>) -> Action {
        Action::Forward {
            config: ForwardConfig {
                target_groups: vec![TargetGroupTuple {
                    target_group_arn: Token::Literal(arn.into()),
                    weight: None,
                }],
                target_group_stickiness_config: None,
            },
        }
    }

    /// Fixed response with `text/plain` (404 default action, 503 for missing backends).
    pub fn fixed(status: &str, body: Option<&str>) -> Action {
        Action::FixedResponse {
            config: FixedResponseConfig {
                content_type: Some("text/plain".into()),
                message_body: body.map(String::from),
                status_code: status.into(),
            },
        }
    }
}

/// `values` / `regexValues` pair (host-header, path-pattern).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ValuesConfig {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regex_values: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct HttpHeaderConfig {
    #[serde(default)]
    pub http_header_name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regex_values: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct ListConfig {
    #[serde(default)]
    pub values: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct QueryStringPair {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default)]
    pub value: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct QueryStringConfig {
    #[serde(default)]
    pub values: Vec<QueryStringPair>,
}

/// A rule condition in the model.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "field", rename_all = "kebab-case")]
pub enum RuleCondition {
    HostHeader {
        #[serde(rename = "hostHeaderConfig")]
        config: ValuesConfig,
    },
    PathPattern {
        #[serde(rename = "pathPatternConfig")]
        config: ValuesConfig,
    },
    HttpHeader {
        #[serde(rename = "httpHeaderConfig")]
        config: HttpHeaderConfig,
    },
    HttpRequestMethod {
        #[serde(rename = "httpRequestMethodConfig")]
        config: ListConfig,
    },
    QueryString {
        #[serde(rename = "queryStringConfig")]
        config: QueryStringConfig,
    },
    SourceIp {
        #[serde(rename = "sourceIPConfig", alias = "sourceIpConfig")]
        config: ListConfig,
    },
}

impl RuleCondition {
    /// The ELBv2 `Field` of the condition.
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

/// Header / URL rewrite (input and model).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Transform {
    #[serde(rename = "type", default)]
    pub transform_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_header_rewrite_config: Option<RewriteConfigObject>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_rewrite_config: Option<RewriteConfigObject>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct RewriteConfigObject {
    #[serde(default)]
    pub rewrites: Vec<Rewrite>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Rewrite {
    #[serde(default)]
    pub regex: String,
    #[serde(default)]
    pub replace: String,
}

impl Transform {
    pub(crate) fn validate(&self) -> Result<(), String> {
        let check = |c: &Option<RewriteConfigObject>, name: &str| match c {
            None => Err(format!("missing {name}")),
            Some(c) if c.rewrites.is_empty() => Err(format!("{name}.rewrites cannot be empty")),
            Some(_) => Ok(()),
        };
        match self.transform_type.as_str() {
            "host-header-rewrite" => {
                check(&self.host_header_rewrite_config, "hostHeaderRewriteConfig")
            }
            "url-rewrite" => check(&self.url_rewrite_config, "urlRewriteConfig"),
            other => Err(format!("unknown transform type: {other}")),
        }
    }
}
