//! NLB subnet mappings: EIP allocations, private IPv4 / IPv6 addresses and source-NAT IPv6
//! prefixes, index-aligned with the resolved subnets, with upstream's validation texts.

use super::annotations::{key, sfx};
use super::subnets::ChosenSubnets;
use super::task::Task;
use crate::model::error::Fail;
use crate::model::subnet_addresses::{parse_addresses, pick, source_nat_prefix};
use crate::model::types::{IpAddressType, LoadBalancerScheme, SubnetMapping};

/// `aws-load-balancer-enable-prefix-for-ipv6-source-nat`: `on` / `off` (default `off`).
pub(super) fn prefix_for_ipv6_source_nat(
    t: &Task<'_>,
    ip: IpAddressType,
    chosen: &ChosenSubnets,
) -> Result<String, Fail> {
    let Some(raw) = t.a.string(sfx::PREFIX_FOR_IPV6_SOURCE_NAT) else {
        return Ok("off".into());
    };
    let at = key(sfx::PREFIX_FOR_IPV6_SOURCE_NAT);
    if raw != "on" && raw != "off" {
        return Err(Fail::at(&at, format!("Invalid enable-prefix-for-ipv6-source-nat value: {raw}. Valid values are ['on', 'off'].")));
    }
    if raw == "on" {
        if !ip.is_dual_stack() {
            return Err(Fail::at(&at, "enable-prefix-for-ipv6-source-nat annotation is only applicable to Network Load Balancers using Dualstack IP address type."));
        }
        let missing: Vec<&str> = chosen
            .resolved
            .iter()
            .flatten()
            .filter(|s| s.ipv6_cidrs.is_empty())
            .map(|s| s.id.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(Fail::at(&at, format!("To enable prefix for source NAT, all associated subnets must have an IPv6 CIDR. Subnets without IPv6 CIDR: [{}].", missing.join(" "))));
        }
    }
    Ok(raw.to_string())
}

/// Count rule shared by every per-subnet list.
fn check_count(n: usize, subnets: Option<usize>, what: &str, at: &str) -> Result<(), Fail> {
    match subnets {
        Some(m) if m != n => Err(Fail::at(
            at,
            format!("count of {what} ({n}) and subnets ({m}) must match"),
        )),
        _ => Ok(()),
    }
}

/// Validates the mapping annotations and builds one mapping per resolved subnet (none while
/// the subnets are unknown: the deployer then validates against the subnets it resolves).
pub(super) fn build(
    t: &Task<'_>,
    scheme: LoadBalancerScheme,
    ip: IpAddressType,
    chosen: &ChosenSubnets,
    prefix_nat: &str,
) -> Result<Vec<SubnetMapping>, Fail> {
    let n = chosen.resolved.as_ref().map(Vec::len);
    let eips = t.a.list(sfx::EIP_ALLOCATIONS);
    if let Some(e) = &eips {
        let at = key(sfx::EIP_ALLOCATIONS);
        if scheme != LoadBalancerScheme::InternetFacing {
            return Err(Fail::at(
                &at,
                "EIP allocations can only be set for internet facing load balancers",
            ));
        }
        check_count(e.len(), n, "EIP allocations", &at)?;
    }
    let v4_at = key(sfx::PRIVATE_IPV4);
    let v4 = match t.a.list(sfx::PRIVATE_IPV4) {
        None => None,
        Some(raw) => {
            if scheme != LoadBalancerScheme::Internal {
                return Err(Fail::at(
                    &v4_at,
                    "private IPv4 addresses can only be set for internal load balancers",
                ));
            }
            check_count(raw.len(), n, "private IPv4 addresses", &v4_at)?;
            Some(
                parse_addresses(&raw, false, "private IPv4 addresses")
                    .map_err(|m| Fail::at(&v4_at, m))?,
            )
        }
    };
    let v6_at = key(sfx::IPV6_ADDRESSES);
    let v6 = match t.a.list(sfx::IPV6_ADDRESSES) {
        None => None,
        Some(raw) => {
            if ip != IpAddressType::DualStack {
                return Err(Fail::at(
                    &v6_at,
                    "IPv6 addresses can only be set for dualstack load balancers",
                ));
            }
            check_count(raw.len(), n, "IPv6 addresses", &v6_at)?;
            Some(parse_addresses(&raw, true, "IPv6 addresses").map_err(|m| Fail::at(&v6_at, m))?)
        }
    };
    let nat_at = key(sfx::SOURCE_NAT_IPV6_PREFIXES);
    let nat = t.a.list(sfx::SOURCE_NAT_IPV6_PREFIXES);
    if let Some(p) = &nat {
        if ip != IpAddressType::DualStack {
            return Err(Fail::at(&nat_at, "source-nat-ipv6-prefixes annotation can only be set for Network Load Balancers using Dualstack IP address type."));
        }
        if prefix_nat != "on" {
            return Err(Fail::at(&nat_at, "source-nat-ipv6-prefixes annotation is only applicable if enable-prefix-for-ipv6-source-nat annotation is set to on."));
        }
        if let Some(m) = n.filter(|m| *m != p.len()) {
            return Err(Fail::at(&nat_at, format!("Number of values in source-nat-ipv6-prefixes ({}) must match the number of subnets ({m}).", p.len())));
        }
    }
    let Some(resolved) = &chosen.resolved else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(resolved.len());
    for (i, s) in resolved.iter().enumerate() {
        if let Some(p) = &nat {
            source_nat_prefix(&p[i], s).map_err(|m| Fail::at(&nat_at, m))?;
        }
        out.push(SubnetMapping {
            subnet_id: s.id.clone(),
            allocation_id: eips.as_ref().map(|e| e[i].clone()),
            private_ipv4_address: match &v4 {
                Some(ips) => Some(
                    pick(ips, s, false, "private IPv4 address").map_err(|m| Fail::at(&v4_at, m))?,
                ),
                None => None,
            },
            ipv6_address: match &v6 {
                Some(ips) => {
                    Some(pick(ips, s, true, "IPv6 address").map_err(|m| Fail::at(&v6_at, m))?)
                }
                None => None,
            },
            source_nat_ipv6_prefix: nat.as_ref().map(|p| p[i].clone()),
        });
    }
    Ok(out)
}
