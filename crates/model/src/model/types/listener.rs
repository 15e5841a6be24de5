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
    /// HTTPS where a member names no certificate: every member's certificates on this listener
    /// in group order, those of members without explicit ARNs to be found in ACM by their hosts
    /// before the deploy writes anything, or (`create-acm-cert`) created by the deployer for the
    /// member (`Stack::created_certificate`); `certificates` then holds the explicit ones only,
    /// and [`merge_member_certificates`] gives the listener's list once discovery has answered
    /// and the created certificates exist (`Stack::listener_certificate_tokens`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificate_discovery: Vec<MemberCertificates>,
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

impl Listener {
    /// A listener of the stack's load balancer with these default actions and nothing else
    /// (no id, certificates, policies, mTLS, attributes or tags).
    pub fn new(port: i32, protocol: Protocol, default_actions: Vec<Action>) -> Listener {
        Listener {
            id: String::new(),
            load_balancer_arn: Token::LoadBalancerArn,
            port,
            protocol,
            default_actions,
            certificates: Vec::new(),
            certificate_discovery: Vec::new(),
            ssl_policy: None,
            mutual_authentication: None,
            alpn_policy: None,
            attributes: BTreeMap::new(),
            tags: BTreeMap::new(),
        }
    }
}

/// One member's certificates on an HTTPS listener whose certificates ACM discovery completes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct MemberCertificates {
    /// The Ingress (`ns/name`); on a Gateway's listener, the Gateway (one entry per listener,
    /// with that listener's hosts).
    pub ingress: String,
    /// Its explicit certificate ARNs (`certificate-arn` or IngressClassParams), first = default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificates: Vec<String>,
    /// Without explicit ARNs: the hosts of its rules and TLS sections (sorted), each of which
    /// needs an issued ACM certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovery_hosts: Option<Vec<String>>,
}

/// Upstream's merge of the members' certificates (in group order) into a listener's: the first
/// member's first certificate is the default, then every other certificate once, in member
/// order (the default may reappear as an SNI certificate).
pub fn merge_member_certificates(per_member: &[&[String]]) -> Vec<String> {
    merge_members(per_member)
}

/// [`merge_member_certificates`] over any kind of certificate reference (ARNs, or tokens that
/// stand for the ARN of a certificate the controller creates).
pub fn merge_members<T: Clone + Ord>(per_member: &[&[T]]) -> Vec<T> {
    let mut out = Vec::new();
    let default_idx = per_member.iter().position(|c| !c.is_empty());
    if let Some(i) = default_idx {
        out.push(per_member[i][0].clone());
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, certs) in per_member.iter().enumerate() {
        for (j, cert) in certs.iter().enumerate() {
            if Some(i) == default_idx && j == 0 {
                continue;
            }
            if seen.insert(cert.clone()) {
                out.push(cert.clone());
            }
        }
    }
    out
}

/// Listener mTLS settings (`mode`: `off`, `passthrough` or `verify`). `trust_store` is a trust
/// store's name or ARN in the model; the deployer resolves names to ARNs before the listener
/// goes to AWS, and a listener AWS describes carries the ARN.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
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

impl ListenerRule {
    /// A rule of the listener `listener_arn` with these conditions and actions and nothing
    /// else (no id, Ingress, transforms or tags).
    pub fn new(
        listener_arn: Token,
        priority: i32,
        conditions: Vec<RuleCondition>,
        actions: Vec<Action>,
    ) -> ListenerRule {
        ListenerRule {
            id: String::new(),
            listener_arn,
            priority,
            ingress: String::new(),
            conditions,
            actions,
            transforms: Vec::new(),
            tags: BTreeMap::new(),
        }
    }
}
