//! TargetGroupConfiguration `gateway.k8s.aws` (namespaced): target group settings for one Service
//! (or Gateway, for chaining), by default and per route — what Service annotations carry for
//! Ingress target groups. Follows upstream's `apis/gateway/v1/targetgroupconfig_types.go`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::KeyValue;

/// The object a TargetGroupConfiguration applies to.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct Reference {
    /// API group of the referent; empty is the core group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = ""))]
    pub group: Option<String>,
    /// Kind of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Service"))]
    pub kind: Option<String>,
    /// Name of the referent.
    pub name: String,
}

/// Codes a healthy target answers with.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthCheckMatcher {
    /// HTTP codes.
    #[serde(rename = "httpCode", default, skip_serializing_if = "Option::is_none")]
    pub http_code: Option<String>,
    /// gRPC codes.
    #[serde(rename = "grpcCode", default, skip_serializing_if = "Option::is_none")]
    pub grpc_code: Option<String>,
}

/// Protocol of the health checks.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum HealthCheckProtocol {
    #[serde(rename = "HTTP")]
    Http,
    #[serde(rename = "HTTPS")]
    Https,
    #[serde(rename = "TCP")]
    Tcp,
}

/// Health check settings of a target group.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthCheckConfiguration {
    /// Successes before a target is healthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthy_threshold_count: Option<i32>,
    /// Seconds between checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check_interval: Option<i32>,
    /// Path of HTTP(S) checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check_path: Option<String>,
    /// `traffic-port`, a number or a Service port name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check_port: Option<String>,
    /// HTTP, HTTPS or TCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check_protocol: Option<HealthCheckProtocol>,
    /// Seconds without an answer that fail a check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check_timeout: Option<i32>,
    /// Failures before a target is unhealthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy_threshold_count: Option<i32>,
    /// Codes of a successful check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<HealthCheckMatcher>,
}

/// IPv4 or IPv6 targets.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum TgIpAddressType {
    #[serde(rename = "ipv4")]
    Ipv4,
    #[serde(rename = "ipv6")]
    Ipv6,
}

/// Nodes (instance) or pods (ip) as targets.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum TgTargetType {
    #[serde(rename = "instance")]
    Instance,
    #[serde(rename = "ip")]
    Ip,
}

/// Protocol of a target group (QUIC kinds are derived from listeners, never written here).
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum TgProtocol {
    #[serde(rename = "HTTP")]
    Http,
    #[serde(rename = "HTTPS")]
    Https,
    #[serde(rename = "TCP")]
    Tcp,
    #[serde(rename = "TLS")]
    Tls,
    #[serde(rename = "UDP")]
    Udp,
    #[serde(rename = "TCP_UDP")]
    TcpUdp,
}

/// Protocol version of HTTP/HTTPS target groups.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum TgProtocolVersion {
    #[serde(rename = "HTTP1")]
    Http1,
    #[serde(rename = "HTTP2")]
    Http2,
    #[serde(rename = "GRPC")]
    Grpc,
}

/// The routes a route configuration applies to: kind, then namespace, then name.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct RouteIdentifier {
    /// Route kind, e.g. HTTPRoute.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Route namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Route name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
}

/// Target group settings for the routes one identifier selects.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RouteConfiguration {
    /// The routes these settings apply to.
    pub route_identifier: RouteIdentifier,
    /// The settings.
    pub target_group_props: TargetGroupProps,
}

/// Target group settings.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroupProps {
    /// Name of the target group; generated when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_group_name: Option<String>,
    /// ipv4 or ipv6; inferred from the Service when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_address_type: Option<TgIpAddressType>,
    /// Health checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check_config: Option<HealthCheckConfiguration>,
    /// Nodes registered for instance targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<LabelSelector>,
    /// Target group attributes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_group_attributes: Vec<KeyValue>,
    /// instance or ip; `--default-target-type` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_type: Option<TgTargetType>,
    /// Protocol; inferred when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<TgProtocol>,
    /// HTTP1, HTTP2 or GRPC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<TgProtocolVersion>,
    /// [ALB] Port on which targets report their capacity; fixed at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_control_port: Option<i32>,
    /// Allow other clusters and Services to use the target group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_multi_cluster: Option<bool>,
    /// AWS tags on the target group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
}

impl TargetGroupProps {
    /// Nothing set.
    pub fn is_empty(&self) -> bool {
        *self == TargetGroupProps::default()
    }
}

/// Desired state of a TargetGroupConfiguration.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[kube(
    group = "gateway.k8s.aws",
    version = "v1",
    kind = "TargetGroupConfiguration",
    plural = "targetgroupconfigurations",
    singular = "targetgroupconfiguration",
    namespaced,
    status = "TargetGroupConfigurationStatus",
    printcolumn = r#"{"name":"SERVICE-NAME","type":"string","jsonPath":".spec.targetReference.name","description":"The Kubernetes Service's name"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroupConfigurationSpec {
    /// The object these settings apply to; without it the configuration only serves as a
    /// LoadBalancerConfiguration's `defaultTargetGroupConfiguration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_reference: Option<Reference>,
    /// Settings for every route unless a route configuration overrides them.
    #[serde(default, skip_serializing_if = "TargetGroupProps::is_empty")]
    pub default_configuration: TargetGroupProps,
    /// Settings for particular routes, merged over the default ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub route_configurations: Vec<RouteConfiguration>,
}

/// Observed state of a TargetGroupConfiguration (kept for schema compatibility).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroupConfigurationStatus {
    /// Generation of the configuration attached to the Gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_gateway_configuration_generation: Option<i64>,
    /// Generation of the configuration attached to the GatewayClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_gateway_class_configuration_generation: Option<i64>,
}
