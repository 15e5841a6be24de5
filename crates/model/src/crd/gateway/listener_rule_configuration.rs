//! ListenerRuleConfiguration `gateway.k8s.aws` (namespaced): extra actions (authentication, fixed
//! response, stickiness, redirect query) and source-ip conditions for the ALB rules of one route
//! rule, referenced by an `ExtensionRef` filter. Follows upstream's
//! `apis/gateway/v1/listenerruleconfig_types.go`, CEL rules included.

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The request field a condition matches (only `source-ip`).
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum ConditionField {
    #[serde(rename = "source-ip")]
    SourceIp,
}

/// What an authentication action does with an unauthenticated request.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum OnUnauthenticatedRequest {
    #[serde(rename = "deny")]
    Deny,
    #[serde(rename = "allow")]
    Allow,
    #[serde(rename = "authenticate")]
    Authenticate,
}

/// Source CIDRs of a `source-ip` condition.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct SourceIpConditionConfig {
    /// CIDRs.
    #[schemars(length(min = 1))]
    pub values: Vec<String>,
}

/// A condition ANDed to the route rule's own.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[x_kube(validation = kube::core::Rule::new("has(self.field) && self.field == 'source-ip' ? has(self.sourceIPConfig) : !has(self.sourceIPConfig)").message("sourceIPConfig must be specified only when field is 'source-ip'"))]
#[serde(rename_all = "camelCase")]
pub struct ListenerRuleCondition {
    /// The request field.
    pub field: ConditionField,
    /// Source CIDRs.
    #[serde(
        rename = "sourceIPConfig",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub source_ip_config: Option<SourceIpConditionConfig>,
    /// Indexes of the rule's matches this condition applies to; all when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("items" = {"type": "integer"}))]
    pub match_indexes: Option<Vec<i64>>,
}

/// Type of an action.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum ActionType {
    #[serde(rename = "forward")]
    Forward,
    #[serde(rename = "fixed-response")]
    FixedResponse,
    #[serde(rename = "redirect")]
    Redirect,
    #[serde(rename = "authenticate-cognito")]
    AuthenticateCognito,
    #[serde(rename = "authenticate-oidc")]
    AuthenticateOidc,
    #[serde(rename = "jwt-validation")]
    JwtValidation,
}

/// Target group stickiness of a forward action.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroupStickinessConfig {
    /// Seconds a client sticks to one target group (1–604800).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 3600, "minimum" = 1, "maximum" = 604800))]
    pub duration_seconds: Option<i32>,
    /// Whether stickiness is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub enabled: Option<bool>,
}

/// Forward settings the route itself cannot express.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ForwardActionConfig {
    /// Stickiness across the rule's weighted target groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {}))]
    pub target_group_stickiness_config: Option<TargetGroupStickinessConfig>,
}

/// Redirect settings the route's RequestRedirect filter cannot express.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct RedirectActionConfig {
    /// Query of the redirect URL, without the leading `?`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "#{query}"))]
    pub query: Option<String>,
}

/// Content type of a fixed response.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum FixedResponseContentType {
    #[serde(rename = "text/plain")]
    TextPlain,
    #[serde(rename = "text/css")]
    TextCss,
    #[serde(rename = "text/html")]
    TextHtml,
    #[serde(rename = "application/javascript")]
    ApplicationJavascript,
    #[serde(rename = "application/json")]
    ApplicationJson,
}

/// A fixed response.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct FixedResponseActionConfig {
    /// HTTP status (2XX, 4XX or 5XX).
    #[x_kube(validation = kube::core::Rule::new("(self >= 200 && self <= 299) || (self >= 400 && self <= 599)").message("StatusCode must be a valid HTTP status code in the 2XX, 4XX, or 5XX range"))]
    pub status_code: i32,
    /// Content type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "text/plain"))]
    pub content_type: Option<FixedResponseContentType>,
    /// Body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_body: Option<String>,
}

/// A Secret (in the configuration's namespace) holding the OAuth client id and secret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct SecretReference {
    /// Name of the Secret.
    pub name: String,
}

/// An authenticate-cognito action.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticateCognitoActionConfig {
    /// ARN of the user pool.
    pub user_pool_arn: String,
    /// Id of the user pool client.
    pub user_pool_client_id: String,
    /// Domain (prefix or FQDN) of the user pool.
    pub user_pool_domain: String,
    /// Requested claims.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "openid"))]
    pub scope: Option<String>,
    /// Up to 10 extra query parameters of the authorization request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 10))]
    pub authentication_request_extra_params: Option<BTreeMap<String, String>>,
    /// What happens to unauthenticated requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "authenticate"))]
    pub on_unauthenticated_request: Option<OnUnauthenticatedRequest>,
    /// Session cookie name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "AWSELBAuthSessionCookie"))]
    pub session_cookie_name: Option<String>,
    /// Session length in seconds (1–604800).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 604800, "minimum" = 1, "maximum" = 604800))]
    pub session_timeout: Option<i64>,
}

/// An authenticate-oidc action.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticateOidcActionConfig {
    /// Authorization endpoint (full HTTPS URL).
    pub authorization_endpoint: String,
    /// The Secret with `clientID` and `clientSecret`.
    pub secret: SecretReference,
    /// Issuer (full HTTPS URL).
    pub issuer: String,
    /// Token endpoint (full HTTPS URL).
    pub token_endpoint: String,
    /// User info endpoint (full HTTPS URL).
    pub user_info_endpoint: String,
    /// Requested claims.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "openid"))]
    pub scope: Option<String>,
    /// Up to 10 extra query parameters of the authorization request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 10))]
    pub authentication_request_extra_params: Option<BTreeMap<String, String>>,
    /// What happens to unauthenticated requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "authenticate"))]
    pub on_unauthenticated_request: Option<OnUnauthenticatedRequest>,
    /// Session cookie name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "AWSELBAuthSessionCookie"))]
    pub session_cookie_name: Option<String>,
    /// Session length in seconds (1–604800).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 604800, "minimum" = 1, "maximum" = 604800))]
    pub session_timeout: Option<i64>,
    /// Keep the existing client secret when modifying a rule (accepted, unused, as upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_existing_client_secret: Option<bool>,
}

/// Format of an additional JWT claim.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum JwtClaimFormat {
    #[serde(rename = "single-string")]
    SingleString,
    #[serde(rename = "string-array")]
    StringArray,
    #[serde(rename = "space-separated-values")]
    SpaceSeparatedValues,
}

/// An additional claim a JWT must carry.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct JwtAdditionalClaim {
    /// Format of the values.
    pub format: JwtClaimFormat,
    /// Claim name (not exp, iss, nbf or iat).
    #[schemars(length(min = 1))]
    pub name: String,
    /// 1–10 accepted values of up to 256 characters.
    #[schemars(length(min = 1, max = 10), inner(length(max = 256)))]
    pub values: Vec<String>,
}

/// A jwt-validation action.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JwtValidationActionConfig {
    /// Issuer (at most 256 characters).
    #[schemars(length(max = 256))]
    pub issuer: String,
    /// JWKS endpoint (full HTTPS URL, at most 256 characters).
    #[schemars(length(max = 256))]
    pub jwks_endpoint: String,
    /// Further claims to validate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_claims: Vec<JwtAdditionalClaim>,
}

/// One action; exactly the config of its type is set.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[x_kube(validation = kube::core::Rule::new("has(self.type) && self.type == 'forward' ? has(self.forwardConfig) : !has(self.forwardConfig)").message("forwardConfig must be specified only when type is 'forward'"))]
#[x_kube(validation = kube::core::Rule::new("has(self.type) && self.type == 'redirect' ? has(self.redirectConfig) : !has(self.redirectConfig)").message("redirectConfig must be specified only when type is 'redirect'"))]
#[x_kube(validation = kube::core::Rule::new("has(self.type) && self.type == 'fixed-response' ? has(self.fixedResponseConfig) : !has(self.fixedResponseConfig)").message("fixedResponseConfig must be specified only when type is 'fixed-response'"))]
#[x_kube(validation = kube::core::Rule::new("has(self.type) && self.type == 'authenticate-cognito' ? has(self.authenticateCognitoConfig) : !has(self.authenticateCognitoConfig)").message("authenticateCognitoConfig must be specified only when type is 'authenticate-cognito'"))]
#[x_kube(validation = kube::core::Rule::new("has(self.type) && self.type == 'authenticate-oidc' ? has(self.authenticateOIDCConfig) : !has(self.authenticateOIDCConfig)").message("authenticateOIDCConfig must be specified only when type is 'authenticate-oidc'"))]
#[x_kube(validation = kube::core::Rule::new("has(self.type) && self.type == 'jwt-validation' ? has(self.jwtValidationConfig) : !has(self.jwtValidationConfig)").message("jwtValidationConfig must be specified only when type is 'jwt-validation'"))]
#[serde(rename_all = "camelCase")]
pub struct Action {
    /// The action type.
    #[serde(rename = "type")]
    pub type_: ActionType,
    /// Forward settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_config: Option<ForwardActionConfig>,
    /// Redirect settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_config: Option<RedirectActionConfig>,
    /// Fixed response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_response_config: Option<FixedResponseActionConfig>,
    /// Cognito authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authenticate_cognito_config: Option<AuthenticateCognitoActionConfig>,
    /// OIDC authentication.
    #[serde(
        rename = "authenticateOIDCConfig",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub authenticate_oidc_config: Option<AuthenticateOidcActionConfig>,
    /// JWT validation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwt_validation_config: Option<JwtValidationActionConfig>,
}

/// Desired state of a ListenerRuleConfiguration.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[kube(
    group = "gateway.k8s.aws",
    version = "v1",
    kind = "ListenerRuleConfiguration",
    plural = "listenerruleconfigurations",
    singular = "listenerruleconfiguration",
    namespaced,
    status = "ListenerRuleConfigurationStatus",
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[x_kube(validation = kube::core::Rule::new("!has(self.actions) || size(self.actions) > 0").message("At least one action must be specified if actions field is present"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.actions) || self.actions.all(a, a.type == 'authenticate-oidc' || a.type == 'authenticate-cognito' || a.type == 'jwt-validation' || a.type == 'fixed-response' || a.type == 'forward' || a.type == 'redirect')").message("Only forward, redirect, authenticate-oidc, authenticate-cognito, jwt-validation, and fixed-response action types are supported"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.actions) || size(self.actions.filter(a, a.type == 'authenticate-oidc' || a.type == 'authenticate-cognito' || a.type == 'jwt-validation')) <= 1").message("At most one pre-routing action (authenticate-oidc, authenticate-cognito, or jwt-validation) can be specified"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.actions) || size(self.actions.filter(a, a.type == 'fixed-response' || a.type == 'forward' || a.type == 'redirect')) <= 1").message("At most one routing action (fixed-response or forward or redirect) can be specified"))]
#[serde(rename_all = "camelCase")]
pub struct ListenerRuleConfigurationSpec {
    /// One or two actions: at most one pre-routing (authentication) and one routing action.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 2))]
    pub actions: Vec<Action>,
    /// Conditions ANDed to the route rule's matches (only `source-ip`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1))]
    pub conditions: Vec<ListenerRuleCondition>,
    /// AWS tags on the rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
}

/// Observed state of a ListenerRuleConfiguration, written by its reconciler.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListenerRuleConfigurationStatus {
    /// Generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Whether the configuration is valid (its OIDC Secret exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted: Option<bool>,
    /// Details of the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
