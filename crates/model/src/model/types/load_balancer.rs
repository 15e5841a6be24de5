//! Load balancer kinds of the stack: the load balancer, its subnets and addons (WAF / Shield).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::*;

/// How the load balancer's subnets are chosen.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub enum Subnets {
    /// Already resolved subnet ids (sorted).
    Resolved(Vec<String>),
    /// `subnets` annotation: ids or `Name` tag values, resolved against the VPC by the deployer.
    NamesOrIds(Vec<String>),
    /// IngressClassParams `spec.subnets` selector (ids or tag filters).
    Selector {
        ids: Vec<String>,
        tags: BTreeMap<String, Vec<String>>,
    },
    /// Auto-discovery; the deployer applies these criteria (see `model::subnets`).
    Discover(DiscoveryCriteria),
}

/// The subnet auto-discovery rules for this load balancer, shown when no subnet data is known.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveryCriteria {
    /// `kubernetes.io/role/elb` or `kubernetes.io/role/internal-elb`, value "" or "1".
    pub role_tag: String,
    /// Subnets tagged for another cluster are skipped unless also tagged for this one.
    pub cluster_tag_check: bool,
    pub min_available_ips: i32,
    pub one_subnet_per_az: bool,
    pub min_subnets: usize,
    pub requires_ipv6_cidr: bool,
    /// Fallback when no subnet has the role tag (gate SubnetDiscoveryByReachability).
    pub fallback_by_reachability: bool,
    /// An existing load balancer of the same scheme keeps its current subnets.
    pub reuse_existing_subnets: bool,
}

/// The Application Load Balancer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LoadBalancer {
    pub id: String,
    pub name: String,
    /// Always `application`.
    #[serde(rename = "type")]
    pub lb_type: String,
    pub scheme: LoadBalancerScheme,
    pub ip_address_type: IpAddressType,
    pub subnets: Subnets,
    pub security_groups: Vec<Token>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security_group_names_or_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_owned_ipv4_pool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv4_ipam_pool_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_capacity_units: Option<i32>,
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    /// NLB: one entry per subnet with its EIP / private addresses (empty for ALBs and when the
    /// subnets are not resolved yet).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subnet_mappings: Vec<SubnetMapping>,
    /// NLB: `on` / `off` (`aws-load-balancer-enable-prefix-for-ipv6-source-nat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_prefix_for_ipv6_source_nat: Option<String>,
    /// NLB: `on` / `off` (`aws-load-balancer-inbound-sg-rules-on-private-link-traffic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_groups_inbound_rules_on_private_link: Option<String>,
}

impl LoadBalancer {
    /// One mapping per subnet: the model's (EIP, private IPv4 / IPv6 address, source-NAT
    /// prefix) where it has one for that subnet, else the bare subnet. CreateLoadBalancer and
    /// SetSubnets both send these.
    pub fn subnet_mappings_for(&self, subnet_ids: &[String]) -> Vec<SubnetMapping> {
        subnet_ids
            .iter()
            .map(
                |id| match self.subnet_mappings.iter().find(|m| &m.subnet_id == id) {
                    Some(m) => m.clone(),
                    None => SubnetMapping::subnet(id.clone()),
                },
            )
            .collect()
    }
}

/// An NLB subnet mapping (`SubnetMapping` of CreateLoadBalancer / SetSubnets).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SubnetMapping {
    pub subnet_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_ipv4_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv6_address: Option<String>,
    /// NLB dualstack with prefix source NAT: a /80 or `auto_assigned`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_nat_ipv6_prefix: Option<String>,
}

impl SubnetMapping {
    /// The bare subnet (no address or EIP).
    pub fn subnet(id: impl Into<String>) -> Self {
        Self {
            subnet_id: id.into(),
            ..Default::default()
        }
    }
}

/// WAF / Shield settings of the load balancer; `None` leaves that add-on as it is, `"none"` /
/// `false` removes it. A WAFv2 name is resolved to its ARN by the deployer (a name beats an ARN:
/// the model carries no ARN when a name is given).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Addons {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wafv2_acl_arn: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wafv2_acl_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waf_regional_acl_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shield_advanced_protection: Option<bool>,
}

impl Addons {
    pub fn is_empty(&self) -> bool {
        *self == Addons::default()
    }
}
