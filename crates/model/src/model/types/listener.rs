//! Listener kinds of the stack: listeners (with mTLS) and listener rules.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Action, Protocol, RuleCondition, Token, Transform};

/// A listener.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Listener {
    pub id: String,
    pub load_balancer_arn: Token,
    pub port: i32,
    pub protocol: Protocol,
    pub default_actions: Vec<Action>,
    /// First entry is the default certificate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificates: Vec<String>,
    /// HTTPS without explicit certificates: hosts for ACM discovery at deploy time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_discovery_hosts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssl_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutual_authentication: Option<MutualAuthentication>,
    /// NLB TLS listeners: `aws-load-balancer-alpn-policy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpn_policy: Option<String>,
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
}

/// Listener mTLS settings.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct MutualAuthentication {
    pub mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_store: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_client_certificate_expiry: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advertise_trust_store_ca_names: Option<String>,
}

/// A listener rule.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ListenerRule {
    pub id: String,
    pub listener_arn: Token,
    pub priority: i32,
    /// The Ingress this rule comes from (`ns/name`).
    pub ingress: String,
    pub conditions: Vec<RuleCondition>,
    pub actions: Vec<Action>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transforms: Vec<Transform>,
    pub tags: BTreeMap<String, String>,
}
