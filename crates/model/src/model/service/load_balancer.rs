//! The NLB itself: scheme, IP address type, name, attributes, capacity reservation, PrivateLink
//! SG enforcement and tags, one small function per setting (upstream's
//! `model_build_load_balancer.go`), on the subnets `subnets` chose; and the facts about it that
//! target groups and TargetGroupBindings depend on (`LbFacts`).

use std::collections::BTreeMap;

use super::annotations::{key, sfx};
use super::security_groups::SgDecision;
use super::subnet_mappings;
use super::subnets::ChosenSubnets;
use super::task::Task;
use crate::model::error::Fail;
use crate::model::naming;
use crate::model::subnets::SubnetInfo;
use crate::model::types::*;

/// The load balancer settings target groups and TargetGroupBindings depend on.
pub(super) struct LbFacts {
    pub scheme: LoadBalancerScheme,
    pub ip: IpAddressType,
    pub sgs: SgDecision,
    /// The NLB's subnets, when the VPC's subnets are known.
    pub subnets: Option<Vec<SubnetInfo>>,
}

/// `aws-load-balancer-scheme`, else legacy `aws-load-balancer-internal`, else the existing
/// NLB's scheme, else `--default-load-balancer-scheme`.
pub(super) fn scheme(t: &Task<'_>) -> Result<LoadBalancerScheme, Fail> {
    if let Some(raw) = t.a.string(sfx::SCHEME) {
        return match raw {
            "internal" => Ok(LoadBalancerScheme::Internal),
            "internet-facing" => Ok(LoadBalancerScheme::InternetFacing),
            _ => Err(Fail::at(key(sfx::SCHEME), format!("unknown scheme: {raw}"))),
        };
    }
    if let Some(internal) = t.a.bool(sfx::INTERNAL)? {
        return Ok(if internal {
            LoadBalancerScheme::Internal
        } else {
            LoadBalancerScheme::InternetFacing
        });
    }
    Ok(match &t.env.existing_load_balancer {
        Some(lb) => lb.scheme,
        None => t.cfg.default_scheme,
    })
}

/// `aws-load-balancer-ip-address-type`: `ipv4` (default) or `dualstack`.
pub(super) fn ip_address_type(t: &Task<'_>) -> Result<IpAddressType, Fail> {
    match t.a.string(sfx::IP_ADDRESS_TYPE) {
        None | Some("ipv4") => Ok(IpAddressType::Ipv4),
        Some("dualstack") => Ok(IpAddressType::DualStack),
        Some(raw) => Err(Fail::at(
            key(sfx::IP_ADDRESS_TYPE),
            format!("unknown IPAddressType: {raw}"),
        )),
    }
}

/// `aws-load-balancer-name` (≤ 32 characters), else `k8s-<ns>-<name>-<hash>`.
fn name(t: &Task<'_>, scheme: LoadBalancerScheme) -> Result<String, Fail> {
    if let Some(n) = t.a.string(sfx::NAME) {
        if n.len() > 32 {
            return Err(Fail::at(
                key(sfx::NAME),
                "load balancer name cannot be longer than 32 characters",
            ));
        }
        return Ok(n.to_string());
    }
    Ok(naming::service_load_balancer_name(
        &t.cfg.cluster_name,
        t.namespace,
        t.name,
        t.uid,
        scheme,
    ))
}

const ROUTING_POLICIES: [&str; 3] = [
    "availability_zone_affinity",
    "partial_availability_zone_affinity",
    "any_availability_zone",
];

/// `aws-load-balancer-attributes` merged under the deprecated specific annotations.
fn attributes(t: &Task<'_>) -> Result<BTreeMap<String, String>, Fail> {
    let mut attrs = t.a.map(sfx::LB_ATTRIBUTES)?.unwrap_or_default();
    if let Some(p) = attrs.get("dns_record.client_routing_policy") {
        if !ROUTING_POLICIES.contains(&p.as_str()) {
            return Err(Fail::at(key(sfx::LB_ATTRIBUTES), format!("invalid dns_record.client_routing_policy set in annotation {}: got '{p}' expected one of ['any_availability_zone', 'partial_availability_zone_affinity', 'availability_zone_affinity']", sfx::LB_ATTRIBUTES)));
        }
    }
    if t.a.bool(sfx::ACCESS_LOG_ENABLED)? == Some(true) {
        attrs.insert("access_logs.s3.enabled".into(), "true".into());
        if let Some(b) = t.a.string(sfx::ACCESS_LOG_BUCKET) {
            attrs.insert("access_logs.s3.bucket".into(), b.into());
        }
        if let Some(p) = t.a.string(sfx::ACCESS_LOG_PREFIX) {
            attrs.insert("access_logs.s3.prefix".into(), p.into());
        }
    }
    if let Some(v) = t.a.bool(sfx::CROSS_ZONE)? {
        attrs.insert("load_balancing.cross_zone.enabled".into(), v.to_string());
    }
    Ok(attrs)
}

/// `aws-load-balancer-minimum-load-balancer-capacity: CapacityUnits=N` (gate LBCapacityReservation).
fn minimum_capacity(t: &Task<'_>) -> Result<Option<i32>, Fail> {
    if !t.cfg.gate("LBCapacityReservation") {
        return Ok(None);
    }
    let at = key(sfx::CAPACITY);
    let mut out = None;
    for (k, v) in t.a.map(sfx::CAPACITY)?.unwrap_or_default() {
        if k != "CapacityUnits" {
            return Err(Fail::at(
                &at,
                format!("invalid key to set the capacity: {k}, Expected key: CapacityUnits"),
            ));
        }
        let n = crate::annotations::go_parse_int(&v, 32)
            .map_err(|e| Fail::at(&at, format!("invalid value to set the capacity: {v}: {e}")))?;
        out = Some(n as i32);
    }
    Ok(out)
}

/// `aws-load-balancer-inbound-sg-rules-on-private-link-traffic`: `on` / `off`.
fn private_link_sg_rules(t: &Task<'_>) -> Result<Option<String>, Fail> {
    match t.a.string(sfx::PRIVATE_LINK_SG_RULES) {
        None => Ok(None),
        Some(v @ ("on" | "off")) => Ok(Some(v.to_string())),
        Some(v) => Err(Fail::at(
            key(sfx::PRIVATE_LINK_SG_RULES),
            format!("Invalid value for securityGroupsInboundRulesOnPrivateLink status: {v}, value must be one of [on, off]"),
        )),
    }
}

/// The `network` load balancer.
pub(super) fn build(
    t: &Task<'_>,
    scheme: LoadBalancerScheme,
    ip: IpAddressType,
    chosen: &ChosenSubnets,
    sgs: &SgDecision,
) -> Result<LoadBalancer, Fail> {
    let prefix_nat = subnet_mappings::prefix_for_ipv6_source_nat(t, ip, chosen)?;
    let attributes = attributes(t)?;
    let capacity = minimum_capacity(t)?;
    let user_tags = t.annotation_tags()?;
    let mappings = subnet_mappings::build(t, scheme, ip, chosen, &prefix_nat)?;
    Ok(LoadBalancer {
        id: "LoadBalancer".into(),
        name: name(t, scheme)?,
        lb_type: "network".into(),
        scheme,
        ip_address_type: ip,
        subnets: chosen.subnets.clone(),
        security_groups: sgs.load_balancer.clone(),
        security_group_names_or_ids: sgs.names.clone(),
        customer_owned_ipv4_pool: None,
        ipv4_ipam_pool_id: None,
        minimum_capacity_units: capacity,
        attributes,
        tags: t.tags.resource_tags("LoadBalancer", user_tags),
        subnet_mappings: mappings,
        enable_prefix_for_ipv6_source_nat: Some(prefix_nat),
        security_groups_inbound_rules_on_private_link: private_link_sg_rules(t)?,
    })
}
