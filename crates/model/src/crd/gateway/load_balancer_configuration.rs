//! LoadBalancerConfiguration `gateway.k8s.aws` (namespaced): the load balancer settings a
//! GatewayClass (`parametersRef`) or a Gateway (`spec.infrastructure.parametersRef`) asks for —
//! what annotations carry for Ingresses. Field names, enums, defaults and CEL rules follow
//! upstream's `apis/gateway/v1/loadbalancerconfig_types.go`.

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::KeyValue;

/// Which side wins when both the GatewayClass and the Gateway carry a configuration.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default, JsonSchema,
)]
pub enum MergingMode {
    #[serde(rename = "prefer-gateway")]
    PreferGateway,
    #[default]
    #[serde(rename = "prefer-gateway-class")]
    PreferGatewayClass,
}

/// Scheme of the load balancer.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum Scheme {
    #[serde(rename = "internal")]
    Internal,
    #[serde(rename = "internet-facing")]
    InternetFacing,
}

/// IP address type of the load balancer.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum LbIpAddressType {
    #[serde(rename = "ipv4")]
    Ipv4,
    #[serde(rename = "dualstack")]
    Dualstack,
    #[serde(rename = "dualstack-without-public-ipv4")]
    DualstackWithoutPublicIpv4,
}

/// One subnet of the load balancer, with the NLB-only address allocations.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubnetConfiguration {
    /// Subnet id or Name tag value.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub identifier: String,
    /// [NLB] Elastic IP allocation for this subnet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eip_allocation: Option<String>,
    /// [NLB] Private IPv4 address in this subnet.
    #[serde(
        rename = "privateIPv4Allocation",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub private_ipv4_allocation: Option<String>,
    /// [NLB] IPv6 address in this subnet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv6_allocation: Option<String>,
    /// [NLB] IPv6 prefix (/80) for source NAT, or `auto_assigned`.
    #[serde(
        rename = "sourceNatIPv6Prefix",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub source_nat_ipv6_prefix: Option<String>,
}

/// ALPN policy of TLS listeners.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum AlpnPolicy {
    #[serde(rename = "HTTP1Only")]
    Http1Only,
    #[serde(rename = "HTTP2Only")]
    Http2Only,
    #[serde(rename = "HTTP2Optional")]
    Http2Optional,
    #[serde(rename = "HTTP2Preferred")]
    Http2Preferred,
    None,
}

/// `on` / `off`.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum OnOff {
    #[serde(rename = "on")]
    On,
    #[serde(rename = "off")]
    Off,
}

/// Client certificate handling of an HTTPS listener.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default, JsonSchema,
)]
pub enum MutualAuthenticationMode {
    #[default]
    #[serde(rename = "off")]
    Off,
    #[serde(rename = "passthrough")]
    Passthrough,
    #[serde(rename = "verify")]
    Verify,
}

/// Mutual TLS settings of a listener; the trust store and its options only with `verify`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[x_kube(validation = kube::core::Rule::new("!(self.mode == 'verify' && !has(self.trustStore))").message("trustStore is required when mutualAuthentication mode is 'verify'"))]
#[x_kube(validation = kube::core::Rule::new("!(self.mode != 'verify' && has(self.trustStore))").message("Mutual Authentication mode 'off' or 'passthrough' does not support 'trustStore'"))]
#[x_kube(validation = kube::core::Rule::new("!(self.mode != 'verify' && has(self.ignoreClientCertificateExpiry))").message("Mutual Authentication mode 'off' or 'passthrough' does not support 'ignoreClientCertificateExpiry'"))]
#[x_kube(validation = kube::core::Rule::new("!(self.mode != 'verify' && has(self.advertiseTrustStoreCaNames))").message("Mutual Authentication mode 'off' or 'passthrough' does not support 'advertiseTrustStoreCaNames'"))]
#[serde(rename_all = "camelCase")]
pub struct MutualAuthenticationAttributes {
    /// Whether the trust store's CA names are advertised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advertise_trust_store_ca_names: Option<OnOff>,
    /// Whether expired client certificates are accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_client_certificate_expiry: Option<bool>,
    /// off, passthrough or verify.
    pub mode: MutualAuthenticationMode,
    /// Trust store name or ARN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_store: Option<String>,
}

/// Shield Advanced protection of the load balancer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct ShieldConfiguration {
    /// Whether Shield Advanced protects the Gateway's load balancer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub enabled: bool,
}

/// WAFv2 web ACL of the load balancer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct WafV2Configuration {
    /// ARN of the web ACL.
    #[serde(rename = "webACL")]
    pub web_acl: String,
}

/// Settings of one load balancer listener, keyed by `PROTOCOL:PORT`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListenerConfiguration {
    /// The listener this applies to, as `PROTOCOL:PORT`.
    #[schemars(regex(
        pattern = r"^(HTTP|HTTPS|TLS|TCP|UDP|TCP_UDP)?:(6553[0-5]|655[0-2]\d|65[0-4]\d{2}|6[0-4]\d{3}|[1-5]\d{4}|[1-9]\d{0,3})?$"
    ))]
    pub protocol_port: String,
    /// Default certificate ARN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_certificate: Option<String>,
    /// Further certificate ARNs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificates: Vec<String>,
    /// Security policy of HTTPS/TLS listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssl_policy: Option<String>,
    /// ALPN policy of TLS listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "None"))]
    pub alpn_policy: Option<AlpnPolicy>,
    /// [NLB] Sticky routing across weighted target groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_group_stickiness: Option<bool>,
    /// Mutual TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutual_authentication: Option<MutualAuthenticationAttributes>,
    /// Listener attributes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listener_attributes: Vec<KeyValue>,
    /// Upgrade UDP to QUIC (and TCP_UDP to TCP_QUIC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic_enabled: Option<bool>,
}

/// Load balancer capacity reservation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MinimumLoadBalancerCapacity {
    /// Capacity units.
    pub capacity_units: i32,
}

/// A TargetGroupConfiguration in the same namespace whose settings are the defaults of every
/// Service backend of the Gateway.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct DefaultTargetGroupConfigurationReference {
    /// Name of the TargetGroupConfiguration.
    pub name: String,
}

/// Desired state of a LoadBalancerConfiguration.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[kube(
    group = "gateway.k8s.aws",
    version = "v1",
    kind = "LoadBalancerConfiguration",
    plural = "loadbalancerconfigurations",
    singular = "loadbalancerconfiguration",
    namespaced,
    status = "LoadBalancerConfigurationStatus",
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LoadBalancerConfigurationSpec {
    /// Which side wins when the GatewayClass and the Gateway both have a configuration; only
    /// read on the GatewayClass's configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merging_mode: Option<MergingMode>,
    /// Name of the load balancer; generated when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub load_balancer_name: Option<String>,
    /// internal or internet-facing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<Scheme>,
    /// ipv4, dualstack or dualstack-without-public-ipv4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_address_type: Option<LbIpAddressType>,
    /// [NLB] Whether inbound security group rules apply to PrivateLink traffic (on/off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforce_security_group_inbound_rules_on_private_link_traffic: Option<String>,
    /// [ALB] Customer-owned IPv4 pool (Outposts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_owned_ipv4_pool: Option<String>,
    /// [ALB] IPAM pool for the IPv4 addresses.
    #[serde(
        rename = "ipv4IPAMPoolId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ipv4_ipam_pool_id: Option<String>,
    /// Subnets; wins over `loadBalancerSubnetsSelector`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_balancer_subnets: Option<Vec<SubnetConfiguration>>,
    /// Subnets whose tag (key) has one of the values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_balancer_subnets_selector: Option<BTreeMap<String, Vec<String>>>,
    /// Per-listener settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listener_configurations: Option<Vec<ListenerConfiguration>>,
    /// [NLB] A load balancer without security groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_security_group: Option<bool>,
    /// Security group ids or names instead of a managed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_groups: Option<Vec<String>>,
    /// Prefix lists allowed to reach the load balancer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_group_prefixes: Option<Vec<String>>,
    /// CIDRs allowed to reach the load balancer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_ranges: Option<Vec<String>>,
    /// Load balancer attributes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_balancer_attributes: Vec<KeyValue>,
    /// AWS tags on the Gateway's resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
    /// [NLB] ICMP rules for path MTU discovery in the managed security group.
    #[serde(
        rename = "enableICMP",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub enable_icmp: Option<bool>,
    /// Manage node/pod security group rules when `securityGroups` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manage_backend_security_group_rules: Option<bool>,
    /// Capacity reservation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_load_balancer_capacity: Option<MinimumLoadBalancerCapacity>,
    /// [ALB] WAFv2 web ACL.
    #[serde(rename = "wafV2", default, skip_serializing_if = "Option::is_none")]
    pub waf_v2: Option<WafV2Configuration>,
    /// [ALB] Shield Advanced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shield_configuration: Option<ShieldConfiguration>,
    /// Default target group settings for every Service backend of the Gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_target_group_configuration: Option<DefaultTargetGroupConfigurationReference>,
}

/// Observed state of a LoadBalancerConfiguration (kept for schema compatibility; upstream never
/// writes it).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoadBalancerConfigurationStatus {
    /// Generation of the configuration attached to the Gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_gateway_configuration_generation: Option<i64>,
    /// Generation of the configuration attached to the GatewayClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_gateway_class_configuration_generation: Option<i64>,
}
