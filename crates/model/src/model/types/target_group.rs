//! Target group kinds of the stack: target groups, health checks and TargetGroupBindings.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Serialize};

use super::*;

/// Health-check settings of a target group.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HealthCheck {
    /// `traffic-port` or a port number.
    pub port: String,
    pub protocol: Protocol,
    /// Empty for TCP health checks (NLB), which have no path.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// `httpCode` (HTTP1/HTTP2) or `grpcCode` (GRPC); empty for TCP health checks.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub matcher: BTreeMap<String, String>,
    pub interval_seconds: i32,
    pub timeout_seconds: i32,
    pub healthy_threshold_count: i32,
    pub unhealthy_threshold_count: i32,
}

/// A target group.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroup {
    /// `<ingNs>/<ingName>-<svcName>:<svcPort>`.
    pub id: String,
    pub name: String,
    pub target_type: TargetType,
    pub port: i32,
    pub protocol: Protocol,
    /// ALB target groups only (NLB target groups have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<ProtocolVersion>,
    /// `ipv4` or `ipv6`.
    pub ip_address_type: String,
    pub health_check: HealthCheck,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_control_port: Option<i32>,
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    /// The Service UID hashed into `name` (placeholder when unknown, see `plan`).
    pub service_uid: String,
}

/// A TargetGroupBinding object the controller creates for a target group.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroupBindingResource {
    pub id: String,
    pub name: String,
    pub namespace: String,
    pub labels: BTreeMap<String, String>,
    /// Annotations the stack owns on the binding (a Gateway's `spec.infrastructure.annotations`).
    /// `Some` makes the binding's labels and annotations exactly the stack's, as upstream's
    /// binding manager keeps them (its checkpoint annotations aside); `None` (Ingress, Service)
    /// leaves what others added alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    pub spec: TargetGroupBindingModelSpec,
}

/// TargetGroupBinding spec with the target-group ARN and SG ids still as tokens.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroupBindingModelSpec {
    pub target_group_arn: Token,
    pub target_type: TargetType,
    pub service_name: String,
    /// The port as written in the Ingress (number or name).
    pub service_port: k8s_openapi::apimachinery::pkg::util::intstr::IntOrString,
    /// (source SG token, port or None = all ports); all TCP.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networking: Vec<NetworkingRule>,
    /// The whole label selector (`matchLabels` and `matchExpressions`), as the binding gets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<LabelSelector>,
    pub ip_address_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc_id: Option<String>,
    pub multi_cluster_target_group: bool,
    pub target_group_protocol: Protocol,
    /// NLBs without security groups: rules from CIDR blocks instead of a security group
    /// (upstream's legacy TGB networking), in upstream's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networking_from_cidrs: Vec<CidrNetworkingRule>,
    /// Upstream's Service shape: all `networking` ports in one rule (its Ingress and Gateway
    /// builders write one rule per port). The deployer writes whichever the model says.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub networking_one_rule: bool,
}

/// One TGB ingress rule from CIDR blocks (upstream's `ipBlock` peers) to these ports.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CidrNetworkingRule {
    pub from_cidrs: Vec<String>,
    pub ports: Vec<crate::crd::target_group_binding::NetworkingPort>,
}

/// One TGB networking rule: from a security group to a port (None = all ports), TCP unless
/// `protocol` says UDP (NLB UDP / TCP_UDP / QUIC target groups).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NetworkingRule {
    pub from_security_group: Token,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<crate::crd::target_group_binding::NetworkingProtocol>,
}
