//! Subnet selection as a pure function over a subnet list: explicit ids / `Name` tags, selector
//! tags, or discovery by role tag with upstream's eligibility rules (cluster tag check, ≥ 8 free
//! IPs, IPv6 CIDR for dualstack), one subnet per AZ, minimum counts and error texts. Each
//! builder decides which of those its load balancer uses.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::types::{DiscoveryCriteria, IpAddressType, LoadBalancerScheme};

pub const ROLE_TAG_PUBLIC: &str = "kubernetes.io/role/elb";
pub const ROLE_TAG_INTERNAL: &str = "kubernetes.io/role/internal-elb";
const MIN_AVAILABLE_IPS: i32 = 8;

/// What the model needs to know about a subnet (the AWS layer converts from EC2's Subnet).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SubnetInfo {
    pub id: String,
    #[serde(default)]
    pub vpc_id: String,
    pub availability_zone: String,
    /// `availability-zone`, `local-zone`, `wavelength-zone` or `outpost`.
    #[serde(default = "default_zone_type")]
    pub zone_type: String,
    #[serde(default)]
    pub available_ips: i32,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Associated IPv6 CIDR blocks.
    #[serde(default)]
    pub ipv6_cidrs: Vec<String>,
    /// IPv4 CIDR block (NLB private-IPv4 subnet mappings); empty when unknown.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cidr_block: String,
    /// Route table has a route to an internet gateway (for discovery by reachability).
    #[serde(default)]
    pub public: Option<bool>,
}

fn default_zone_type() -> String {
    "availability-zone".into()
}

/// Knobs of the selection that come from config / feature gates.
#[derive(Debug, Clone, Copy)]
pub struct SubnetRules<'a> {
    pub cluster_name: &'a str,
    pub scheme: LoadBalancerScheme,
    pub ip_address_type: IpAddressType,
    pub cluster_tag_check: bool,
    pub alb_single_subnet: bool,
    pub discover_by_reachability: bool,
}

impl SubnetRules<'_> {
    /// The criteria as shown in the stack when no subnet data is at hand.
    pub fn criteria(&self) -> DiscoveryCriteria {
        DiscoveryCriteria {
            role_tag: role_tag(self.scheme).to_string(),
            cluster_tag_check: self.cluster_tag_check,
            min_available_ips: MIN_AVAILABLE_IPS,
            one_subnet_per_az: true,
            min_subnets: if self.alb_single_subnet { 1 } else { 2 },
            requires_ipv6_cidr: self.ip_address_type.is_dual_stack(),
            fallback_by_reachability: self.discover_by_reachability,
            reuse_existing_subnets: true,
        }
    }
}

fn role_tag(scheme: LoadBalancerScheme) -> &'static str {
    match scheme {
        LoadBalancerScheme::Internal => ROLE_TAG_INTERNAL,
        LoadBalancerScheme::InternetFacing => ROLE_TAG_PUBLIC,
    }
}

fn cluster_key(cluster: &str) -> String {
    format!("kubernetes.io/cluster/{cluster}")
}

fn eligible_cluster_tag(s: &SubnetInfo, r: &SubnetRules<'_>) -> bool {
    if !r.cluster_tag_check || s.tags.contains_key(&cluster_key(r.cluster_name)) {
        return true;
    }
    !s.tags
        .keys()
        .any(|k| k.starts_with("kubernetes.io/cluster"))
}

/// Discovery: role-tagged subnets (value "" or "1"), else by reachability when enabled.
pub fn discover(subnets: &[SubnetInfo], r: &SubnetRules<'_>) -> Result<Vec<String>, String> {
    let tag = role_tag(r.scheme);
    let mut candidates: Vec<&SubnetInfo> = subnets
        .iter()
        .filter(|s| matches!(s.tags.get(tag).map(String::as_str), Some("") | Some("1")))
        .collect();
    if candidates.is_empty() && r.discover_by_reachability {
        let want_public = r.scheme == LoadBalancerScheme::InternetFacing;
        candidates = subnets
            .iter()
            .filter(|s| s.public == Some(want_public))
            .collect();
    }
    choose_per_az(&candidates, r)
}

fn choose_per_az(subnets: &[&SubnetInfo], r: &SubnetRules<'_>) -> Result<Vec<String>, String> {
    let needs_v6 = r.ip_address_type.is_dual_stack();
    let (mut other_cluster, mut low_ips, mut no_v6) = (0, 0, 0);
    let mut by_az: BTreeMap<&str, Vec<&SubnetInfo>> = BTreeMap::new();
    for s in subnets {
        if !eligible_cluster_tag(s, r) {
            other_cluster += 1;
        } else if s.available_ips < MIN_AVAILABLE_IPS {
            low_ips += 1;
        } else if needs_v6 && s.ipv6_cidrs.is_empty() {
            no_v6 += 1;
        } else {
            by_az.entry(&s.availability_zone).or_default().push(s);
        }
    }
    let own = cluster_key(r.cluster_name);
    let mut chosen: Vec<&SubnetInfo> = by_az
        .into_values()
        .filter_map(|mut v| {
            v.sort_by(|a, b| {
                b.tags
                    .contains_key(&own)
                    .cmp(&a.tags.contains_key(&own))
                    .then(a.id.cmp(&b.id))
            });
            v.first().copied()
        })
        .collect();
    if chosen.is_empty() {
        let n = subnets.len();
        return Err(if needs_v6 {
            format!("unable to resolve at least one subnet. Evaluated {n} subnets: {other_cluster} are tagged for other clusters, {low_ips} have insufficient available IP addresses, and {no_v6} don't have an associated IPv6 CIDR block, which is required for {} load balancers", ip_type_str(r.ip_address_type))
        } else {
            format!("unable to resolve at least one subnet. Evaluated {n} subnets: {other_cluster} are tagged for other clusters, and {low_ips} have insufficient available IP addresses")
        });
    }
    chosen.sort_by(|a, b| a.id.cmp(&b.id));
    validate_locale_and_count(&chosen, r)?;
    Ok(chosen.iter().map(|s| s.id.clone()).collect())
}

fn ip_type_str(t: IpAddressType) -> &'static str {
    match t {
        IpAddressType::Ipv4 => "ipv4",
        IpAddressType::DualStack => "dualstack",
        IpAddressType::DualStackWithoutPublicIpv4 => "dualstack-without-public-ipv4",
    }
}

fn validate_locale_and_count(chosen: &[&SubnetInfo], r: &SubnetRules<'_>) -> Result<(), String> {
    let locales: std::collections::BTreeSet<&str> =
        chosen.iter().map(|s| s.zone_type.as_str()).collect();
    if locales.len() > 1 {
        return Err(format!(
            "subnets in multiple locales: [{}]",
            locales.into_iter().collect::<Vec<_>>().join(" ")
        ));
    }
    let in_azs = locales
        .iter()
        .next()
        .is_some_and(|l| *l == "availability-zone");
    let min = if in_azs && !r.alb_single_subnet { 2 } else { 1 };
    if chosen.len() < min {
        return Err(format!(
            "subnets count less than minimal required count: {} < {min}",
            chosen.len()
        ));
    }
    Ok(())
}

/// Explicit subnets by id (`subnet-...`) or `Name` tag value, validated like upstream.
pub fn resolve_names_or_ids(
    subnets: &[SubnetInfo],
    names_or_ids: &[String],
    r: &SubnetRules<'_>,
) -> Result<Vec<String>, String> {
    let mut chosen: Vec<&SubnetInfo> = Vec::new();
    for n in names_or_ids {
        let found = if n.starts_with("subnet-") {
            subnets
                .iter()
                .find(|s| &s.id == n)
                .ok_or_else(|| format!("subnet ID not found: {n}"))?
        } else {
            subnets
                .iter()
                .find(|s| s.tags.get("Name") == Some(n) && !chosen.iter().any(|c| c.id == s.id))
                .ok_or_else(|| format!("subnet with Name tag not found: {n}"))?
        };
        chosen.push(found);
    }
    validate_explicit(chosen, r)
}

/// IngressClassParams selector: ids, or every tag key matching one of its values.
pub fn resolve_selector(
    subnets: &[SubnetInfo],
    ids: &[String],
    tags: &BTreeMap<String, Vec<String>>,
    r: &SubnetRules<'_>,
) -> Result<Vec<String>, String> {
    if !ids.is_empty() {
        let found: Vec<&SubnetInfo> = subnets.iter().filter(|s| ids.contains(&s.id)).collect();
        if found.len() != ids.len() {
            let f: Vec<&str> = found.iter().map(|s| s.id.as_str()).collect();
            return Err(format!(
                "couldn't find all subnets, want: [{}], found: [{}]",
                ids.join(" "),
                f.join(" ")
            ));
        }
        return validate_explicit(found, r);
    }
    let matching: Vec<&SubnetInfo> = subnets
        .iter()
        .filter(|s| {
            tags.iter()
                .all(|(k, vs)| s.tags.get(k).is_some_and(|v| vs.contains(v)))
        })
        .collect();
    choose_per_az(&matching, r)
}

fn validate_explicit(
    mut chosen: Vec<&SubnetInfo>,
    r: &SubnetRules<'_>,
) -> Result<Vec<String>, String> {
    if chosen.is_empty() {
        return Err("unable to resolve at least one subnet".into());
    }
    let mut by_az: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in &chosen {
        by_az.entry(&s.availability_zone).or_default().push(&s.id);
    }
    if let Some((az, ids)) = by_az.iter().find(|(_, v)| v.len() > 1) {
        return Err(format!(
            "multiple subnets in same Availability Zone {az}: [{}]",
            ids.join(" ")
        ));
    }
    validate_locale_and_count(&chosen, r)?;
    if r.ip_address_type.is_dual_stack() {
        let missing: Vec<&str> = chosen
            .iter()
            .filter(|s| s.ipv6_cidrs.is_empty())
            .map(|s| s.id.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "subnets [{}] do not have an associated IPv6 CIDR block, which is required for {} load balancers",
                missing.join(" "),
                ip_type_str(r.ip_address_type)
            ));
        }
    }
    chosen.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(chosen.iter().map(|s| s.id.clone()).collect())
}

#[cfg(test)]
#[path = "subnets_tests.rs"]
mod tests;
