//! The frontend NLB upstream builds in front of an Ingress group's ALB (`enable-frontend-nlb`,
//! `pkg/ingress/model_build_frontend_nlb.go`): the network load balancer here (scheme, subnets
//! and EIPs, security groups, attributes, name, tags), its listeners and `alb`-type target
//! groups in `listeners`. Every failure fails the whole group, as upstream's does: excluding the
//! member that asked for the NLB would take the NLB down because of an invalid edit.

use std::collections::BTreeSet;

use super::lb_settings;
use crate::annotations::{self as ann, suffix};
use crate::model::agree::{ensure_same, go_list, group};
use crate::model::error::ModelError;
use crate::model::group::ClassifiedIngress;
use crate::model::subnets::{self, SubnetRules};
use crate::model::types::*;

mod inputs;
mod listeners;

pub use inputs::FrontendInputs;
use inputs::{resource_tags, Tags};

/// Whether a member turns the frontend NLB on (`enable-frontend-nlb`), errors aside.
pub fn member_enables(m: &ClassifiedIngress<'_>) -> bool {
    matches!(
        ann::bool(m.annotations(), suffix::ENABLE_FRONTEND_NLB),
        Ok(Some(true))
    )
}

/// The frontend NLB of the group, None unless the members turn it on.
pub fn build(
    members: &[ClassifiedIngress<'_>],
    i: &FrontendInputs<'_>,
) -> Result<Option<FrontendNlb>, ModelError> {
    if !enabled(members)? {
        return Ok(None);
    }
    let scheme = scheme(members, i.cfg.default_scheme)?;
    let (security_groups, security_group_names_or_ids) = match security_groups(members)? {
        Some(given) => (Vec::new(), given),
        None => (
            i.alb.security_groups.clone(),
            i.alb.security_group_names_or_ids.clone(),
        ),
    };
    let (subnets, eips, subnet_mappings) = subnets_and_eips(members, scheme, i)?;
    let user_tags = frontend_tags(members)?;
    let lb = LoadBalancer {
        id: FRONTEND_NLB_ID.into(),
        name: name(&i.alb.name),
        lb_type: "network".into(),
        scheme,
        ip_address_type: i.alb.ip_address_type,
        subnets,
        security_groups,
        security_group_names_or_ids,
        customer_owned_ipv4_pool: None,
        ipv4_ipam_pool_id: None,
        minimum_capacity_units: None,
        attributes: attributes(members)?,
        tags: resource_tags(i, user_tags.as_ref(), FRONTEND_NLB_ID),
        subnet_mappings,
        enable_prefix_for_ipv6_source_nat: None,
        security_groups_inbound_rules_on_private_link: None,
    };
    let (listeners, target_groups) = listeners::build(members, i, user_tags.as_ref())?;
    Ok(Some(FrontendNlb {
        load_balancer: lb,
        eip_allocations: eips,
        listeners,
        target_groups,
    }))
}

/// Members that set `enable-frontend-nlb` must agree; unset means off.
fn enabled(members: &[ClassifiedIngress<'_>]) -> Result<bool, ModelError> {
    let mut set = Vec::new();
    for m in members {
        let v = ann::bool(m.annotations(), suffix::ENABLE_FRONTEND_NLB)
            .map_err(|e| group(e.message))?;
        set.extend(v);
    }
    let chosen = ensure_same(set, |_, _, _| {
        "conflicting enable frontend NLB values".into()
    })?;
    Ok(chosen.unwrap_or(false))
}

/// `frontend-nlb-scheme`, else the controller's default scheme (not the ALB's, as upstream).
fn scheme(
    members: &[ClassifiedIngress<'_>],
    default: LoadBalancerScheme,
) -> Result<LoadBalancerScheme, ModelError> {
    let set: BTreeSet<String> = members
        .iter()
        .filter_map(|m| ann::string(m.annotations(), suffix::FRONTEND_NLB_SCHEME))
        .map(String::from)
        .collect();
    lb_settings::scheme(set, default)
}

/// `frontend-nlb-security-groups` (ids or names, members agree in order); None = the ALB's.
fn security_groups(members: &[ClassifiedIngress<'_>]) -> Result<Option<Vec<String>>, ModelError> {
    let lists = members
        .iter()
        .filter_map(|m| ann::string_list(m.annotations(), suffix::FRONTEND_NLB_SECURITY_GROUPS));
    let chosen = ensure_same(lists, |a, b, _| {
        format!(
            "conflicting securityGroups: {} | {}",
            go_list(a),
            go_list(b)
        )
    })?;
    Ok(chosen.filter(|l| !l.is_empty()))
}

fn as_set(v: &[String]) -> BTreeSet<&String> {
    v.iter().collect()
}

/// A list-valued annotation every member that sets it must set to the same set.
fn same_set_list(
    members: &[ClassifiedIngress<'_>],
    sfx: &str,
    conflict: impl Fn(&[String], &[String]) -> String,
) -> Result<Option<Vec<String>>, ModelError> {
    let lists: Vec<Vec<String>> = members
        .iter()
        .filter_map(|m| ann::string_list(m.annotations(), sfx))
        .collect();
    let Some(first) = lists.first() else {
        return Ok(None);
    };
    match lists.iter().find(|l| as_set(l) != as_set(first)) {
        Some(other) => Err(group(conflict(first, other))),
        None => Ok(Some(first.clone())),
    }
}

/// Subnets (`frontend-nlb-subnets` or discovery for a network load balancer of the NLB's
/// scheme), the EIPs (`frontend-nlb-eip-allocations`), and the subnet mappings when both the
/// subnets are resolved and EIPs are given.
fn subnets_and_eips(
    members: &[ClassifiedIngress<'_>],
    scheme: LoadBalancerScheme,
    i: &FrontendInputs<'_>,
) -> Result<(Subnets, Vec<String>, Vec<SubnetMapping>), ModelError> {
    let listed = same_set_list(members, suffix::FRONTEND_NLB_SUBNETS, |a, b| {
        format!("conflicting subnets: {} | {}", go_list(a), go_list(b))
    })?;
    let eips = same_set_list(members, suffix::FRONTEND_NLB_EIP_ALLOCATIONS, |a, b| {
        format!(
            "all EIP allocations for the ingress group must be the same: {} | {}",
            go_list(a),
            go_list(b)
        )
    })
    .map(Option::unwrap_or_default);
    let any_eips = members
        .iter()
        .any(|m| ann::string_list(m.annotations(), suffix::FRONTEND_NLB_EIP_ALLOCATIONS).is_some());
    if any_eips && scheme != LoadBalancerScheme::InternetFacing {
        return Err(group(
            "EIP allocations can only be set for internet facing load balancers".into(),
        ));
    }
    let eips = eips?;
    let rules = SubnetRules {
        cluster_name: &i.cfg.cluster_name,
        scheme,
        ip_address_type: i.alb.ip_address_type,
        cluster_tag_check: i.cfg.gate("SubnetsClusterTagCheck"),
        // A network load balancer may have a single subnet.
        alb_single_subnet: true,
        discover_by_reachability: i.cfg.gate("SubnetDiscoveryByReachability"),
    };
    let subnets = match (listed, &i.env.subnets) {
        (Some(l), Some(all)) => {
            Subnets::Resolved(subnets::resolve_names_or_ids(all, &l, &rules).map_err(group)?)
        }
        (Some(l), None) => Subnets::NamesOrIds(l),
        (None, Some(all)) => Subnets::Resolved(
            subnets::discover(all, &rules)
                .map_err(|e| group(format!("couldn't auto-discover subnets: {e}")))?,
        ),
        (None, None) => Subnets::Discover(rules.criteria()),
    };
    let count = match &subnets {
        Subnets::Resolved(ids) => Some(ids.len()),
        Subnets::NamesOrIds(l) => Some(l.len()),
        _ => None,
    };
    if let Some(n) = count.filter(|n| !eips.is_empty() && *n != eips.len()) {
        return Err(group(eip_count_mismatch(eips.len(), n)));
    }
    let mappings = match &subnets {
        Subnets::Resolved(ids) if !eips.is_empty() => pair_eips(ids, &eips),
        _ => Vec::new(),
    };
    Ok((subnets, eips, mappings))
}

/// Upstream's text when EIPs and subnets differ in number (also checked by the deployer once
/// discovered subnets are known).
pub fn eip_count_mismatch(eips: usize, subnets: usize) -> String {
    format!("count of EIP allocations ({eips}) and subnets ({subnets}) must match")
}

/// EIP `i` on subnet `i` (subnets sorted by id, as resolved).
pub fn pair_eips(subnet_ids: &[String], eips: &[String]) -> Vec<SubnetMapping> {
    subnet_ids
        .iter()
        .zip(eips)
        .map(|(s, e)| SubnetMapping {
            allocation_id: Some(e.clone()),
            ..SubnetMapping::subnet(s.clone())
        })
        .collect()
}

/// Go's `%v` of a `map[string]string`: `map[a:b c:d]`.
fn go_map(m: &Tags) -> String {
    let kv: Vec<String> = m.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    format!("map[{}]", kv.join(" "))
}

const ROUTING_POLICY: &str = "dns_record.client_routing_policy";

/// `frontend-nlb-attributes`: compared member by member as upstream does (a member without it
/// after one with it is a conflict); the DNS client routing policy is validated.
fn attributes(members: &[ClassifiedIngress<'_>]) -> Result<Tags, ModelError> {
    let mut chosen: Option<Tags> = None;
    for m in members {
        let attrs = ann::string_map(m.annotations(), suffix::FRONTEND_NLB_ATTRIBUTES)
            .map_err(|e| group(e.message))?;
        match &chosen {
            None => chosen = attrs,
            Some(c) if Some(c) != attrs.as_ref() => {
                return Err(group(format!(
                    "conflicting frontend NLB attributes: {} | {}",
                    go_map(c),
                    go_map(&attrs.unwrap_or_default())
                )))
            }
            Some(_) => {}
        }
    }
    let chosen = chosen.unwrap_or_default();
    if let Some(p) = chosen.get(ROUTING_POLICY) {
        let ok = [
            "availability_zone_affinity",
            "partial_availability_zone_affinity",
            "any_availability_zone",
        ];
        if !ok.contains(&p.as_str()) {
            // Upstream's text names the Service annotation suffix.
            return Err(group(format!("invalid {ROUTING_POLICY} set in annotation aws-load-balancer-attributes: got '{p}' expected one of ['any_availability_zone', 'partial_availability_zone_affinity', 'availability_zone_affinity']")));
        }
    }
    Ok(chosen)
}

/// `frontend-nlb-tags` (members that set it agree); None = the ALB's tags.
fn frontend_tags(members: &[ClassifiedIngress<'_>]) -> Result<Option<Tags>, ModelError> {
    let mut chosen: Option<Tags> = None;
    for m in members {
        let tags = ann::string_map(m.annotations(), suffix::FRONTEND_NLB_TAGS)
            .map_err(|e| group(e.message))?;
        let Some(tags) = tags else { continue };
        match &chosen {
            Some(c) if *c != tags => {
                return Err(group(format!(
                    "conflicting frontend NLB tags: {} | {}",
                    go_map(c),
                    go_map(&tags)
                )))
            }
            Some(_) => {}
            None => chosen = Some(tags),
        }
    }
    Ok(chosen)
}

/// The ALB's name cut to 28 characters, then `-nlb` (32 at most, as AWS allows).
fn name(alb_name: &str) -> String {
    let base: String = alb_name.chars().take(28).collect();
    format!("{base}-nlb")
}

#[cfg(test)]
#[path = "frontend_nlb_tests.rs"]
mod tests;
