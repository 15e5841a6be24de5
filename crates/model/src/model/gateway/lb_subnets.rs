//! The subnets of a Gateway's load balancer (upstream's `model_build_subnet.go`): the
//! configuration's subnet list checked as upstream's `validateSubnetsInput` does, then subnet
//! identifiers, else the tag selector, else discovery. Per-subnet address allocations are NLB
//! subnet mappings this build does not make yet: refused by name, since an NLB made without them
//! cannot get them later.

use crate::crd::gateway::load_balancer_configuration::{
    LoadBalancerConfigurationSpec, SubnetConfiguration,
};
use crate::model::subnets::{
    discover, resolve_names_or_ids, resolve_selector, SubnetInfo, SubnetRules,
};
use crate::model::types::{IpAddressType, LoadBalancerScheme, Subnets};

use super::listeners::LbKind;

/// Upstream's checks of `loadBalancerSubnets` (its messages), then the refusal of allocations.
pub(super) fn validate(
    lbc: &LoadBalancerConfigurationSpec,
    lb: LbKind,
    scheme: LoadBalancerScheme,
    ip_type: IpAddressType,
) -> Result<(), String> {
    let Some(first) = lbc.load_balancer_subnets.as_ref().and_then(|l| l.first()) else {
        return Ok(());
    };
    let nlb = lb == LbKind::Nlb;
    if first.eip_allocation.is_some() {
        if !nlb {
            return Err("EIP Allocation is only allowed for Network LoadBalancers".into());
        }
        if scheme != LoadBalancerScheme::InternetFacing {
            return Err("EIPAllocation can only be set for internet facing load balancers".into());
        }
    }
    if first.ipv6_allocation.is_some() {
        if !nlb {
            return Err("IPv6Allocation is only supported for Network LoadBalancers".into());
        }
        if ip_type != IpAddressType::DualStack {
            return Err("IPv6Allocation can only be set for dualstack load balancers".into());
        }
    }
    if first.private_ipv4_allocation.is_some() {
        if !nlb {
            return Err("PrivateIPv4Allocation is only supported for Network LoadBalancers".into());
        }
        if scheme != LoadBalancerScheme::Internal {
            return Err("PrivateIPv4Allocation can only be set for internal load balancers".into());
        }
    }
    if first.source_nat_ipv6_prefix.is_some() && !nlb {
        return Err("SourceNatIPv6Prefix is only supported for Network LoadBalancers".into());
    }
    type Has = fn(&SubnetConfiguration) -> bool;
    let all_or_none: [(Has, &str, &str); 5] = [
        (|s| !s.identifier.is_empty(), "subnet identifiers", ""),
        (
            |s| s.eip_allocation.is_some(),
            "eip allocations",
            "eipAllocation",
        ),
        (
            |s| s.ipv6_allocation.is_some(),
            "ipv6 allocations",
            "ipv6Allocation",
        ),
        (
            |s| s.private_ipv4_allocation.is_some(),
            "private ipv4 allocations",
            "privateIPv4Allocation",
        ),
        (
            |s| s.source_nat_ipv6_prefix.is_some(),
            "source nat prefixes",
            "sourceNatIPv6Prefix",
        ),
    ];
    let list = lbc.load_balancer_subnets.iter().flatten();
    for s in list {
        if let Some((_, what, _)) = all_or_none.iter().find(|(has, ..)| has(s) != has(first)) {
            return Err(format!("Either specify all {what} or none."));
        }
    }
    if let Some((_, _, field)) = all_or_none[1..].iter().find(|(has, ..)| has(first)) {
        return Err(format!(
            "LoadBalancerConfiguration field loadBalancerSubnets[].{field} is not supported by this build yet"
        ));
    }
    Ok(())
}

/// Subnet identifiers win over the tag selector, which wins over discovery; without the VPC's
/// `subnets` (a plan from manifests) the choice is left to the deployer.
pub(super) fn choose(
    lbc: &LoadBalancerConfigurationSpec,
    subnets: Option<&[SubnetInfo]>,
    rules: &SubnetRules<'_>,
) -> Result<Subnets, String> {
    let listed: Vec<String> = lbc
        .load_balancer_subnets
        .iter()
        .flatten()
        .filter(|s| !s.identifier.is_empty())
        .map(|s| s.identifier.clone())
        .collect();
    let selector = lbc
        .load_balancer_subnets_selector
        .clone()
        .unwrap_or_default();
    Ok(match (listed.is_empty(), selector.is_empty(), subnets) {
        (false, _, Some(all)) => Subnets::Resolved(resolve_names_or_ids(all, &listed, rules)?),
        (false, _, None) => Subnets::NamesOrIds(listed),
        (true, false, Some(all)) => {
            Subnets::Resolved(resolve_selector(all, &[], &selector, rules)?)
        }
        (true, false, None) => Subnets::Selector {
            ids: Vec::new(),
            tags: selector,
        },
        (true, true, Some(all)) => Subnets::Resolved(
            discover(all, rules).map_err(|e| format!("couldn't auto-discover subnets: {e}"))?,
        ),
        (true, true, None) => Subnets::Discover(rules.criteria()),
    })
}
