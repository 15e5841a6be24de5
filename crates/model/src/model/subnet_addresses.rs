//! Per-subnet NLB addresses shared by the Service annotations and a Gateway's
//! `loadBalancerSubnets`: address parsing, the one configured address inside each subnet's
//! CIDRs, and the source-NAT IPv6 prefix check (upstream's `networking` helpers, its messages).

use std::net::IpAddr;

use ipnet::IpNet;

use super::subnets::SubnetInfo;

/// Parses addresses; `v6` selects the family and the message wording.
pub fn parse_addresses(raw: &[String], v6: bool, what: &str) -> Result<Vec<IpAddr>, String> {
    raw.iter()
        .map(|r| {
            let ip: IpAddr = r
                .parse()
                .map_err(|_| format!("{what} must be valid IP address: {r}"))?;
            if ip.is_ipv6() != v6 {
                let fam = if v6 { "IPv6" } else { "IPv4" };
                return Err(format!("{what} must be valid {fam} address: {r}"));
            }
            Ok(ip)
        })
        .collect()
}

fn cidrs_of(s: &SubnetInfo, v6: bool) -> Vec<IpNet> {
    let raw: Vec<&String> = if v6 {
        s.ipv6_cidrs.iter().collect()
    } else {
        std::iter::once(&s.cidr_block)
            .filter(|c| !c.is_empty())
            .collect()
    };
    raw.iter().filter_map(|c| c.parse().ok()).collect()
}

/// The one configured address inside the subnet's CIDRs (`what` names it in the error).
pub fn pick(ips: &[IpAddr], s: &SubnetInfo, v6: bool, what: &str) -> Result<String, String> {
    let cidrs = cidrs_of(s, v6);
    let inside: Vec<&IpAddr> = ips
        .iter()
        .filter(|ip| cidrs.iter().any(|c| c.contains(*ip)))
        .collect();
    match inside.as_slice() {
        [one] => Ok(one.to_string()),
        _ => Err(format!("expect one {what} configured for subnet: {}", s.id)),
    }
}

/// A source-NAT prefix for subnet `s`: `auto_assigned`, or a /80 inside its IPv6 CIDRs.
pub fn source_nat_prefix(p: &str, s: &SubnetInfo) -> Result<(), String> {
    if p == "auto_assigned" {
        return Ok(());
    }
    let Some((addr, len)) = p.split_once('/') else {
        return Err(format!("Invalid value in source-nat-ipv6-prefixes: {p}."));
    };
    let len = len.split('/').next().unwrap_or(len);
    if len != "80" {
        return Err(format!("Invalid value in source-nat-ipv6-prefixes: {p}. Prefix length must be 80, but {len} is specified."));
    }
    let ip: IpAddr = match addr.parse() {
        Ok(ip @ IpAddr::V6(_)) => ip,
        _ => {
            return Err(format!(
                "Invalid value in source-nat-ipv6-prefixes: {p}. Value must be a valid IPv6 CIDR."
            ))
        }
    };
    let cidrs = cidrs_of(s, true);
    if !cidrs.iter().any(|c| c.contains(&ip)) {
        let list: Vec<String> = cidrs.iter().map(|c| c.to_string()).collect();
        return Err(format!("Invalid value in source-nat-ipv6-prefixes: {p}. Value must be within subnet CIDR range: [{}].", list.join(" ")));
    }
    Ok(())
}
