//! The frontend NLB of an Ingress group (`enable-frontend-nlb`): a network load balancer in
//! front of the group's ALB, one TCP listener per mapped port, and per listener a target group
//! of type `alb` whose single target is the ALB on the mapped ALB listener port. NLB Gateways
//! use the same `alb`-type target groups for their `Gateway` backends (`Stack::alb_target_groups`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::*;

/// Resource id of the frontend NLB; its listeners and target groups extend it.
pub const FRONTEND_NLB_ID: &str = "FrontendNlb";

/// The frontend NLB with its listeners and `alb`-type target groups.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FrontendNlb {
    /// Type `network`, resource id `FrontendNlb`.
    pub load_balancer: LoadBalancer,
    /// `frontend-nlb-eip-allocations`: paired index by index with the subnets (sorted by id)
    /// once they are resolved; empty without EIPs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub eip_allocations: Vec<String>,
    /// TCP listeners (`FrontendNlb-ls-TCP-<port>`), sorted by port; each forwards to the
    /// target group of the same port.
    pub listeners: Vec<Listener>,
    /// `FrontendNlb-tg-TCP-<port>`, sorted by port.
    pub target_groups: Vec<AlbTargetGroup>,
}

/// A target group of type `alb`: the ALB registered on `target_port` is its one target (the
/// frontend NLB's, and an NLB Gateway's `Gateway` backends).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AlbTargetGroup {
    pub id: String,
    pub name: String,
    /// The NLB listener port.
    pub port: i32,
    pub protocol: Protocol,
    /// Always `ipv4`, as upstream builds it.
    pub ip_address_type: String,
    pub health_check: HealthCheck,
    pub tags: BTreeMap<String, String>,
    /// The ALB listener port the ALB is registered on.
    pub target_port: i32,
    /// The ALB registered as the target: unset for the stack's own ALB (frontend NLB), the ARN
    /// of another stack's ALB for a Gateway backend (NLB → ALB chaining).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_arn: Option<String>,
    /// Target group attributes (a Gateway backend's TargetGroupConfiguration).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
}

impl FrontendNlb {
    /// The listener id of an NLB port (`FrontendNlb-ls-TCP-<port>`).
    pub fn listener_id(port: i32) -> String {
        format!("{FRONTEND_NLB_ID}-ls-TCP-{port}")
    }

    /// The target group id of an NLB port (`FrontendNlb-tg-TCP-<port>`).
    pub fn target_group_id(port: i32) -> String {
        format!("{FRONTEND_NLB_ID}-tg-TCP-{port}")
    }
}
