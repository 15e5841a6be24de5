//! The subnets of a Gateway's load balancer (upstream's `model_build_subnet.go`): the
//! configuration's subnet list checked as upstream's `validateSubnetsInput` does, then subnet
//! identifiers, else the tag selector, else discovery; an NLB's per-subnet allocations become its
//! subnet mappings, index-aligned with the resolved subnets (upstream's `subnet` mutators).

use crate::crd::gateway::load_balancer_configuration::{
    LoadBalancerConfigurationSpec, SubnetConfiguration,
};
use crate::model::subnet_addresses::{parse_addresses, pick, source_nat_prefix};
use crate::model::subnets::{
    discover, resolve_names_or_ids, resolve_selector, SubnetInfo, SubnetRules,
};
use crate::model::types::{IpAddressType, LoadBalancerScheme, SubnetMapping, Subnets};

use super::listeners::LbKind;

/// Upstream's checks of `loadBalancerSubnets` (its messages); true when the entries carry
/// source-NAT prefixes (the NLB then gets `enablePrefixForIpv6SourceNat: on`).
pub(super) fn validate(
    lbc: &LoadBalancerConfigurationSpec,
    lb: LbKind,
    scheme: LoadBalancerScheme,
    ip_type: IpAddressType,
) -> Result<bool, String> {
    let Some(first) = lbc.load_balancer_subnets.as_ref().and_then(|l| l.first()) else {
        return Ok(false);
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
    Ok(first.source_nat_ipv6_prefix.is_some())
}

/// The subnets chosen and, when the VPC's subnets are known, their details in that order.
pub(super) struct Chosen {
    pub subnets: Subnets,
    pub resolved: Option<Vec<SubnetInfo>>,
}

/// Subnet identifiers win over the tag selector, which wins over discovery; without the VPC's
/// `subnets` (a plan from manifests) the choice is left to the deployer.
pub(super) fn choose(
    lbc: &LoadBalancerConfigurationSpec,
    subnets: Option<&[SubnetInfo]>,
    rules: &SubnetRules<'_>,
) -> Result<Chosen, String> {
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
    let chosen = match (listed.is_empty(), selector.is_empty(), subnets) {
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
    };
    let resolved = match (&chosen, subnets) {
        (Subnets::Resolved(ids), Some(all)) => Some(
            ids.iter()
                .filter_map(|id| all.iter().find(|s| &s.id == id).cloned())
                .collect(),
        ),
        _ => None,
    };
    Ok(Chosen {
        subnets: chosen,
        resolved,
    })
}

/// An NLB's subnet mappings from the entries' allocations, entry `i` for the `i`th resolved
/// subnet (upstream's mutator chain: EIP, private IPv4, IPv6, source NAT, with its messages).
/// None without allocations, on ALBs, or while the subnets are unknown (a plan from manifests;
/// the deployer then creates the NLB on bare subnets, as for Services).
pub(super) fn mappings(
    lbc: &LoadBalancerConfigurationSpec,
    lb: LbKind,
    resolved: Option<&[SubnetInfo]>,
) -> Result<Vec<SubnetMapping>, String> {
    let config = lbc.load_balancer_subnets.as_deref().unwrap_or_default();
    let (Some(first), Some(resolved), LbKind::Nlb) = (config.first(), resolved, lb) else {
        return Ok(Vec::new());
    };
    let (n, m) = (resolved.len(), config.len());
    let mut out: Vec<SubnetMapping> = resolved
        .iter()
        .map(|s| SubnetMapping {
            subnet_id: s.id.clone(),
            ..SubnetMapping::default()
        })
        .collect();
    let values = |f: fn(&SubnetConfiguration) -> Option<&String>| -> Vec<String> {
        config.iter().filter_map(f).cloned().collect()
    };
    if first.eip_allocation.is_some() {
        if n != m {
            return Err(format!(
                "Unable to assign EIP allocations we have {n} subnets and {m} EIP allocations"
            ));
        }
        for (o, eip) in out.iter_mut().zip(values(|c| c.eip_allocation.as_ref())) {
            o.allocation_id = Some(eip);
        }
    }
    if first.private_ipv4_allocation.is_some() {
        if n != m {
            return Err(format!(
                "Unable to assign private IPv4 addresses we have {n} subnets and {m} addresses"
            ));
        }
        let ips = parse_addresses(
            &values(|c| c.private_ipv4_allocation.as_ref()),
            false,
            "private IPv4 addresses",
        )?;
        for (o, s) in out.iter_mut().zip(resolved) {
            o.private_ipv4_address = Some(pick(&ips, s, false, "private IPv4 address")?);
        }
    }
    if first.ipv6_allocation.is_some() {
        if n != m {
            return Err(format!(
                "Unable to assign IPv6 addresses we have {n} subnets and {m} addresses"
            ));
        }
        let ips = parse_addresses(
            &values(|c| c.ipv6_allocation.as_ref()),
            true,
            "IPv6 addresses",
        )?;
        for (o, s) in out.iter_mut().zip(resolved) {
            o.ipv6_address = Some(pick(&ips, s, true, "IPv6 address")?);
        }
    }
    if first.source_nat_ipv6_prefix.is_some() {
        if n != m {
            return Err(format!(
                "Unable to assign Source NAT prefix because we have {n} subnets and {m} prefixes"
            ));
        }
        let prefixes = values(|c| c.source_nat_ipv6_prefix.as_ref());
        for ((o, s), p) in out.iter_mut().zip(resolved).zip(prefixes) {
            source_nat_prefix(&p, s)?;
            o.source_nat_ipv6_prefix = Some(p);
        }
    }
    Ok(out)
}
