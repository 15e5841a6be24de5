//! Listeners and rules as ELBv2 describes them: what AWS adds to the model's listener and rule
//! (ARN, the default rule, priority as text, only the default certificate). Their actions,
//! conditions, transforms and mutual authentication are the model's own types, every target
//! group ARN a `Token::Literal`; the write calls take the model's `Listener` / `ListenerRule`.

use crate::aws::error::AwsError;
use crate::model::{Action, MutualAuthentication, RuleCondition, Token, Transform};

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
    /// HTTPS: client-certificate handling (AWS reports `off` when never set); `trust_store`
    /// holds the trust store's ARN.
    pub mutual_authentication: Option<MutualAuthentication>,
}

/// A trust store found by name (`DescribeTrustStores`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrustStore {
    pub name: String,
    pub arn: String,
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
    pub transforms: Vec<Transform>,
}

/// The ARN a model reference holds once the deployer resolved it. Any other token is refused
/// before a request is built, so no placeholder ever reaches AWS (or the fake).
pub fn literal<'a>(t: &'a Token, what: &str) -> Result<&'a str, AwsError> {
    t.literal().ok_or_else(|| {
        AwsError::Unresolved(format!(
            "{what}: reference {t:?} was not resolved to an ARN before the call"
        ))
    })
}

/// The ARNs of the target groups the forward actions in `actions` name (literal ones only;
/// requests with others are refused before they are recorded).
pub fn forward_arns(actions: &[Action]) -> impl Iterator<Item = &str> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Forward { config } => Some(config),
            _ => None,
        })
        .flat_map(|f| &f.target_groups)
        .filter_map(|t| t.target_group_arn.literal())
}
