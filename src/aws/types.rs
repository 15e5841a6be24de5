//! Our own ELBv2/EC2 data types: what the controller reads and writes, independent of the SDK.
//! AWS enum-like values (protocols, schemes, target types) are kept as AWS spells them
//! (`"HTTP"`, `"internet-facing"`, `"ip"`), so they compare directly with annotation values.

use std::collections::BTreeMap;

mod ec2;
mod listener;
mod model_input;
pub use ec2::*;
pub use listener::*;
pub use model_input::*;

/// Resource tags, sorted by key.
pub type Tags = BTreeMap<String, String>;
/// Load balancer / target group attributes (`key → value`), as AWS lists them.
pub type Attributes = BTreeMap<String, String>;

/// The AWS service a call goes to; `id()` is the SDK service ID used in metrics and throttle config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Service {
    ElbV2,
    Ec2,
    WafV2,
    WafRegional,
    Shield,
    Acm,
    /// Resource Groups Tagging API (`GetResources`, gate `EnableRGTAPI`).
    Tagging,
    /// DNS validation of the ACM certificates the controller creates.
    Route53,
    /// Global Accelerator (the GlobalAccelerator controller's accelerators).
    GlobalAccelerator,
}

impl Service {
    pub fn id(self) -> &'static str {
        match self {
            Service::ElbV2 => "Elastic Load Balancing v2",
            Service::Ec2 => "EC2",
            Service::WafV2 => "WAFV2",
            Service::WafRegional => "WAF Regional",
            Service::Shield => "Shield",
            Service::Acm => "ACM",
            Service::Tagging => "Resource Groups Tagging API",
            Service::Route53 => "Route 53",
            Service::GlobalAccelerator => "Global Accelerator",
        }
    }
}

// ------------------------------------------------------------------ load balancers

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadBalancer {
    pub arn: String,
    pub name: String,
    pub dns_name: String,
    pub canonical_hosted_zone_id: String,
    /// `internal` or `internet-facing`.
    pub scheme: String,
    /// `application`, `network` or `gateway`.
    pub lb_type: String,
    /// `ipv4`, `dualstack` or `dualstack-without-public-ipv4`.
    pub ip_address_type: String,
    pub vpc_id: String,
    /// `provisioning`, `active`, `active_impaired` or `failed`.
    pub state: String,
    pub security_groups: Vec<String>,
    pub availability_zones: Vec<LbZone>,
    /// NLB: `on` / `off` as AWS reports it (absent on load balancers that never set it).
    pub enable_prefix_for_ipv6_source_nat: Option<String>,
    /// NLB: `on` / `off` (`EnforceSecurityGroupInboundRulesOnPrivateLinkTraffic`).
    pub enforce_private_link_inbound_rules: Option<String>,
    /// ALB on Outposts: the customer-owned address pool (set at creation only).
    pub customer_owned_ipv4_pool: Option<String>,
    /// The IPAM pool IPv4 addresses come from (`IpamPools.Ipv4IpamPoolId`).
    pub ipv4_ipam_pool_id: Option<String>,
}

/// One zone of a load balancer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LbZone {
    pub zone_name: String,
    pub subnet_id: String,
    /// NLB: the zone's addresses (EIP allocation, private IPv4, IPv6) where AWS reports them.
    pub addresses: Vec<LbAddress>,
}

/// One address of a load balancer in a zone (`LoadBalancerAddress`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LbAddress {
    pub allocation_id: Option<String>,
    pub private_ipv4_address: Option<String>,
    pub ipv6_address: Option<String>,
}

/// Which load balancers to describe; both empty means all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadBalancerQuery {
    pub arns: Vec<String>,
    pub names: Vec<String>,
}

/// The model's subnet mapping is what the ELBv2 calls take: one type, no conversion.
pub use crate::model::SubnetMapping;

// ------------------------------------------------------------------ target groups

/// A target group's health check as AWS describes it (what the model asks for is
/// [`crate::model::HealthCheck`]); fields AWS leaves out are `None`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DescribedHealthCheck {
    pub enabled: Option<bool>,
    pub protocol: Option<String>,
    /// A port number or `traffic-port`.
    pub port: Option<String>,
    pub path: Option<String>,
    pub interval_seconds: Option<i32>,
    pub timeout_seconds: Option<i32>,
    pub healthy_threshold: Option<i32>,
    pub unhealthy_threshold: Option<i32>,
    pub matcher_http_code: Option<String>,
    pub matcher_grpc_code: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TargetGroup {
    pub arn: String,
    pub name: String,
    pub protocol: Option<String>,
    pub protocol_version: Option<String>,
    pub port: Option<u16>,
    pub vpc_id: Option<String>,
    /// `instance`, `ip`, `lambda` or `alb`.
    pub target_type: String,
    pub ip_address_type: Option<String>,
    pub health_check: DescribedHealthCheck,
    /// The port the target-control agent listens on (`TargetControlPort`), set at creation only.
    pub target_control_port: Option<i32>,
    pub load_balancer_arns: Vec<String>,
}

/// Which target groups to describe; all empty means all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TargetGroupQuery {
    pub arns: Vec<String>,
    pub names: Vec<String>,
    pub load_balancer_arn: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TargetDescription {
    pub id: String,
    pub port: Option<u16>,
    pub availability_zone: Option<String>,
    /// `QuicServerId`: `0x` and 16 lowercase hex digits. AWS requires it on every target of a
    /// QUIC or TCP_QUIC target group (register and deregister) and refuses it on any other.
    pub quic_server_id: Option<String>,
}

impl TargetDescription {
    pub fn new(id: impl Into<String>, port: u16) -> Self {
        Self {
            id: id.into(),
            port: Some(port),
            availability_zone: None,
            quic_server_id: None,
        }
    }
}

/// Whether targets of a target group of this protocol carry a `QuicServerId`.
pub fn protocol_takes_quic_server_id(protocol: &str) -> bool {
    matches!(protocol, "QUIC" | "TCP_QUIC")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TargetHealthState {
    Initial,
    Healthy,
    Unhealthy,
    UnhealthyDraining,
    Unused,
    Draining,
    Unavailable,
}

impl TargetHealthState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Initial => "initial",
            Self::Healthy => "healthy",
            Self::Unhealthy => "unhealthy",
            Self::UnhealthyDraining => "unhealthy.draining",
            Self::Unused => "unused",
            Self::Draining => "draining",
            Self::Unavailable => "unavailable",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "initial" => Self::Initial,
            "healthy" => Self::Healthy,
            "unhealthy" => Self::Unhealthy,
            "unhealthy.draining" => Self::UnhealthyDraining,
            "unused" => Self::Unused,
            "draining" => Self::Draining,
            "unavailable" => Self::Unavailable,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetHealth {
    pub state: TargetHealthState,
    /// e.g. `Elb.RegistrationInProgress`, `Target.NotRegistered`.
    pub reason: Option<String>,
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetHealthDescription {
    pub target: TargetDescription,
    pub health_check_port: Option<String>,
    pub health: TargetHealth,
}
