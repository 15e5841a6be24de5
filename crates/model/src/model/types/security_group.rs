//! Security group kinds of the stack: the managed frontend group and the shared backend group.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One ingress permission of the managed security group.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub struct IpPermission {
    pub ip_protocol: String,
    pub from_port: i32,
    pub to_port: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cidr_ipv4: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cidr_ipv6: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_list_id: Option<String>,
}

/// The managed (frontend) security group of the load balancer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SecurityGroup {
    pub id: String,
    pub name: String,
    pub description: String,
    pub ingress: Vec<IpPermission>,
    pub tags: BTreeMap<String, String>,
}

/// The cluster-wide backend security group: a known id, or the one the deployer finds/creates.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BackendSecurityGroup {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    pub name: String,
    pub description: String,
    pub tags: BTreeMap<String, String>,
}
