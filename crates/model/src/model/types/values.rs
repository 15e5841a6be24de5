//! Plain values every resource of the stack uses: scheme, IP address type, protocol and its
//! version, and the `Token` that references a value another resource produces when deployed.

use serde::{Deserialize, Serialize};

/// Load balancer scheme.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LoadBalancerScheme {
    #[serde(rename = "internal")]
    Internal,
    #[serde(rename = "internet-facing")]
    InternetFacing,
}

impl LoadBalancerScheme {
    pub fn as_str(&self) -> &'static str {
        match self {
            LoadBalancerScheme::Internal => "internal",
            LoadBalancerScheme::InternetFacing => "internet-facing",
        }
    }
}

/// Load balancer IP address type.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IpAddressType {
    #[serde(rename = "ipv4")]
    Ipv4,
    #[serde(rename = "dualstack")]
    DualStack,
    #[serde(rename = "dualstack-without-public-ipv4")]
    DualStackWithoutPublicIpv4,
}

impl IpAddressType {
    /// The wire value (`ipv4`, `dualstack`, `dualstack-without-public-ipv4`).
    pub fn as_str(&self) -> &'static str {
        match self {
            IpAddressType::Ipv4 => "ipv4",
            IpAddressType::DualStack => "dualstack",
            IpAddressType::DualStackWithoutPublicIpv4 => "dualstack-without-public-ipv4",
        }
    }

    pub fn is_dual_stack(&self) -> bool {
        !matches!(self, IpAddressType::Ipv4)
    }
}

/// Listener / target-group / health-check protocol: HTTP and HTTPS for ALBs, the rest for NLBs.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Protocol {
    #[serde(rename = "HTTP")]
    Http,
    #[serde(rename = "HTTPS")]
    Https,
    #[serde(rename = "TCP")]
    Tcp,
    #[serde(rename = "UDP")]
    Udp,
    #[serde(rename = "TCP_UDP")]
    TcpUdp,
    #[serde(rename = "TLS")]
    Tls,
    #[serde(rename = "QUIC")]
    Quic,
    #[serde(rename = "TCP_QUIC")]
    TcpQuic,
}

impl Protocol {
    pub fn as_str(&self) -> &'static str {
        match self {
            Protocol::Http => "HTTP",
            Protocol::Https => "HTTPS",
            Protocol::Tcp => "TCP",
            Protocol::Udp => "UDP",
            Protocol::TcpUdp => "TCP_UDP",
            Protocol::Tls => "TLS",
            Protocol::Quic => "QUIC",
            Protocol::TcpQuic => "TCP_QUIC",
        }
    }

    /// Whether the protocol carries UDP (the TGB then needs UDP rules).
    pub fn carries_udp(&self) -> bool {
        matches!(
            self,
            Protocol::Udp | Protocol::TcpUdp | Protocol::Quic | Protocol::TcpQuic
        )
    }
}

impl From<Protocol> for crate::crd::target_group_binding::TargetGroupProtocol {
    fn from(p: Protocol) -> Self {
        use crate::crd::target_group_binding::TargetGroupProtocol as T;
        match p {
            Protocol::Http => T::Http,
            Protocol::Https => T::Https,
            Protocol::Tcp => T::Tcp,
            Protocol::Udp => T::Udp,
            Protocol::TcpUdp => T::TcpUdp,
            Protocol::Tls => T::Tls,
            Protocol::Quic => T::Quic,
            Protocol::TcpQuic => T::TcpQuic,
        }
    }
}

/// Target group protocol version.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    HTTP1,
    HTTP2,
    GRPC,
}

impl ProtocolVersion {
    pub fn as_str(&self) -> &'static str {
        match self {
            ProtocolVersion::HTTP1 => "HTTP1",
            ProtocolVersion::HTTP2 => "HTTP2",
            ProtocolVersion::GRPC => "GRPC",
        }
    }
}

/// A value known now (`literal`) or produced by another resource when it is deployed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "camelCase")]
pub enum Token {
    Literal(String),
    /// ARN of the stack's load balancer.
    LoadBalancerArn,
    /// ARN of the listener with this port.
    ListenerArn(i32),
    /// ARN of the target group with this resource id.
    TargetGroupArn(String),
    /// Group id of the stack's managed security group.
    ManagedSecurityGroupId,
    /// Group id of the cluster's shared backend security group (auto-created when unknown).
    BackendSecurityGroupId,
    /// ARN of the stack's frontend NLB (`enable-frontend-nlb`).
    FrontendNlbArn,
    /// ARN of the ACM certificate with this resource id, which the deployer requests
    /// (`create-acm-cert`).
    CertificateArn(String),
}

impl Token {
    /// The value of a `Literal`: what the deployer turns every other token into before it
    /// hands a resource to the AWS layer (which refuses anything else).
    pub fn literal(&self) -> Option<&str> {
        match self {
            Token::Literal(s) => Some(s),
            _ => None,
        }
    }
}
