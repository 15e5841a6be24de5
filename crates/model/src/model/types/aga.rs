//! The desired state of one GlobalAccelerator object (`aga.k8s.aws/v1beta1`): the accelerator,
//! its listeners and their endpoint groups, as upstream's `pkg/model/aga` has them. A stack of
//! its own, apart from load-balancer stacks: one per GlobalAccelerator object.
//!
//! References are by nesting, not by token: a listener belongs to the accelerator it sits in,
//! an endpoint group to its listener, so the deployer creates them top-down and needs no ARN
//! it has not just read or made. Endpoint ids are literal ARNs: the builder resolves Services,
//! Ingresses and Gateways to their load balancers before the stack exists.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Upstream's resource id of the one accelerator of a stack.
pub const RESOURCE_ID_ACCELERATOR: &str = "GlobalAccelerator";
/// Upstream's model resource types (the `resource` key of `plan`).
pub const RESOURCE_TYPE_ACCELERATOR: &str = "AWS::GlobalAccelerator::Accelerator";
pub const RESOURCE_TYPE_LISTENER: &str = "AWS::GlobalAccelerator::Listener";
pub const RESOURCE_TYPE_ENDPOINT_GROUP: &str = "AWS::GlobalAccelerator::EndpointGroup";

/// Everything one GlobalAccelerator object asks AWS for.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AgaStack {
    /// `namespace/name` of the GlobalAccelerator object.
    pub id: String,
    pub accelerator: Accelerator,
    /// Sorted by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listeners: Vec<AgaListener>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AgaIpAddressType {
    #[serde(rename = "IPV4")]
    Ipv4,
    #[serde(rename = "DUAL_STACK")]
    DualStack,
}

impl AgaIpAddressType {
    /// AWS's spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            AgaIpAddressType::Ipv4 => "IPV4",
            AgaIpAddressType::DualStack => "DUAL_STACK",
        }
    }
}

/// The accelerator (upstream `AcceleratorSpec`), and what of the object identifies it in AWS.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Accelerator {
    pub name: String,
    /// BYOIP addresses asked for at creation (AWS cannot change them afterwards).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_addresses: Vec<String>,
    pub ip_address_type: AgaIpAddressType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// User tags and the controller's tracking tags, merged.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// The object's uid: upstream's idempotency token at creation.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub crd_uid: String,
    /// The ARN the object's status names, when it has one: the accelerator to update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub existing_arn: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AgaProtocol {
    #[serde(rename = "TCP")]
    Tcp,
    #[serde(rename = "UDP")]
    Udp,
}

impl AgaProtocol {
    pub fn as_str(&self) -> &'static str {
        match self {
            AgaProtocol::Tcp => "TCP",
            AgaProtocol::Udp => "UDP",
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClientAffinity {
    #[serde(rename = "SOURCE_IP")]
    SourceIp,
    #[serde(rename = "NONE")]
    None,
}

impl ClientAffinity {
    pub fn as_str(&self) -> &'static str {
        match self {
            ClientAffinity::SourceIp => "SOURCE_IP",
            ClientAffinity::None => "NONE",
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "camelCase")]
pub struct PortRange {
    pub from_port: i32,
    pub to_port: i32,
}

/// One listener of the accelerator (upstream `ListenerSpec`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AgaListener {
    /// Upstream's model resource id of this listener.
    pub id: String,
    pub protocol: AgaProtocol,
    pub port_ranges: Vec<PortRange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_affinity: Option<ClientAffinity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoint_groups: Vec<EndpointGroup>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "camelCase")]
pub struct PortOverride {
    pub listener_port: i32,
    pub endpoint_port: i32,
}

/// One endpoint: a load balancer ARN (or another id AWS accepts), resolved by the builder.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub struct EndpointConfiguration {
    pub endpoint_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_ip_preservation_enabled: Option<bool>,
}

/// One endpoint group of a listener (upstream `EndpointGroupSpec`), one per region.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct EndpointGroup {
    /// Upstream's model resource id of this endpoint group.
    pub id: String,
    pub region: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic_dial_percentage: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub port_overrides: Vec<PortOverride>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoint_configurations: Vec<EndpointConfiguration>,
}
