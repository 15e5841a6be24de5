//! The load balancer's subnets: which ones (resolved ids, names, IngressClassParams selector,
//! or discovery with the reachability fallback) and, for NLBs, the subnet mappings with their
//! EIP / private IPv4 / IPv6 addresses and source-NAT prefixes.

use std::collections::BTreeSet;

use super::error::{Context, Error, Result};
use super::Deployer;
use crate::aws::{self, Ec2Query, SubnetMapping};
use crate::model::subnets::{self as msub, SubnetInfo, SubnetRules};
use crate::model::{self, Subnets};

/// Subnet ids of a described load balancer, sorted.
pub fn subnets_of(lb: &aws::LoadBalancer) -> Vec<String> {
    let mut v: Vec<String> = lb
        .availability_zones
        .iter()
        .map(|z| z.subnet_id.clone())
        .collect();
    v.sort();
    v
}

pub(crate) fn same_set(a: &[String], b: &[String]) -> bool {
    a.iter().collect::<BTreeSet<_>>() == b.iter().collect::<BTreeSet<_>>()
}

/// The model's view of an AWS subnet (reachability unknown until route tables are read).
pub fn subnet_info(s: &aws::Subnet) -> SubnetInfo {
    SubnetInfo {
        id: s.id.clone(),
        vpc_id: s.vpc_id.clone(),
        availability_zone: s.availability_zone.clone(),
        zone_type: if s.outpost_arn.is_some() {
            "outpost".into()
        } else {
            "availability-zone".into()
        },
        available_ips: s.available_ip_address_count,
        tags: s.tags.clone(),
        ipv6_cidrs: s.ipv6_cidr_blocks.clone(),
        cidr_block: s.cidr_block.clone(),
        public: None,
    }
}

/// Marks subnets public when their route table (explicit, else the VPC's main one) has a
/// route to an internet gateway.
pub fn mark_reachability(subnets: &mut [SubnetInfo], tables: &[aws::RouteTable]) {
    let has_igw = |t: &aws::RouteTable| {
        t.routes.iter().any(|r| {
            r.gateway_id
                .as_deref()
                .is_some_and(|g| g.starts_with("igw-"))
        })
    };
    let main = tables.iter().find(|t| t.main);
    for s in subnets {
        let table = tables
            .iter()
            .find(|t| t.subnet_ids.contains(&s.id))
            .or(main);
        s.public = Some(table.is_some_and(has_igw));
    }
}

pub(crate) fn is_network(want: &model::LoadBalancer) -> bool {
    want.lb_type == "network"
}

/// `EnablePrefixForIpv6SourceNat` to send: NLBs only, and only for dualstack ones (the
/// setting means nothing to an IPv4 NLB and AWS has no value to compare it with there).
pub(crate) fn prefix_nat(want: &model::LoadBalancer) -> Option<String> {
    want.enable_prefix_for_ipv6_source_nat
        .clone()
        .filter(|_| is_network(want) && want.ip_address_type.is_dual_stack())
}

/// One mapping per subnet: the model's (EIP, private IPv4 / IPv6 address, source-NAT prefix)
/// where it has one for that subnet, else the bare subnet.
pub fn subnet_mappings(want: &model::LoadBalancer, subnets: &[String]) -> Vec<SubnetMapping> {
    want.subnet_mappings_for(subnets)
}

impl Deployer {
    /// The subnets the load balancer should have; `None` keeps the current ones.
    pub(crate) async fn desired_subnets(
        &self,
        want: &model::LoadBalancer,
        current: Option<&aws::LoadBalancer>,
    ) -> Result<Option<Vec<String>>> {
        let mut rules = SubnetRules {
            cluster_name: &self.cluster,
            scheme: want.scheme,
            ip_address_type: want.ip_address_type,
            cluster_tag_check: true,
            alb_single_subnet: false,
            discover_by_reachability: false,
        };
        if let Subnets::Resolved(ids) = &want.subnets {
            return Ok(Some(ids.clone()));
        }
        if let Subnets::Discover(c) = &want.subnets {
            if c.reuse_existing_subnets && current.is_some() {
                return Ok(None);
            }
            rules.cluster_tag_check = c.cluster_tag_check;
            rules.alb_single_subnet = c.min_subnets <= 1;
            rules.discover_by_reachability = c.fallback_by_reachability;
        }
        let q = Ec2Query::default().filter("vpc-id", [self.vpc_id.as_str()]);
        let list = self
            .ec2
            .describe_subnets(&q)
            .await
            .ctx(|| "describe subnets".into())?;
        let mut infos: Vec<SubnetInfo> = list.iter().map(subnet_info).collect();
        let chosen = match &want.subnets {
            Subnets::NamesOrIds(n) => msub::resolve_names_or_ids(&infos, n, &rules),
            Subnets::Selector { ids, tags } => msub::resolve_selector(&infos, ids, tags, &rules),
            _ => match msub::discover(&infos, &rules) {
                Err(_) if rules.discover_by_reachability => {
                    let tables = self
                        .ec2
                        .describe_route_tables(&q)
                        .await
                        .ctx(|| "describe route tables".into())?;
                    mark_reachability(&mut infos, &tables);
                    msub::discover(&infos, &rules)
                }
                other => other,
            },
        };
        chosen
            .map(Some)
            .map_err(|e| Error::Invalid(format!("couldn't auto-discover subnets: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(id: &str, subnets: &[&str], main: bool, igw: bool) -> aws::RouteTable {
        aws::RouteTable {
            id: id.into(),
            vpc_id: "vpc-1".into(),
            main,
            subnet_ids: subnets.iter().map(|s| s.to_string()).collect(),
            routes: vec![aws::Route {
                destination: Some("0.0.0.0/0".into()),
                gateway_id: Some(if igw { "igw-1" } else { "nat-1" }.into()),
            }],
        }
    }

    #[test]
    fn reachability_uses_explicit_then_main_table() {
        let mut s: Vec<SubnetInfo> = ["subnet-a", "subnet-b"]
            .iter()
            .map(|id| SubnetInfo {
                id: id.to_string(),
                ..Default::default()
            })
            .collect();
        mark_reachability(
            &mut s,
            &[
                table("rtb-1", &["subnet-a"], false, false),
                table("rtb-m", &[], true, true),
            ],
        );
        assert_eq!(s[0].public, Some(false));
        assert_eq!(s[1].public, Some(true));
    }

    fn nlb(ip: &str, nat: &str) -> model::LoadBalancer {
        serde_json::from_value(serde_json::json!({
            "id": "LoadBalancer", "name": "k8s-x", "type": "network",
            "scheme": "internet-facing", "ipAddressType": ip, "subnets": {"resolved": ["s-1", "s-2"]},
            "securityGroups": [], "attributes": {}, "tags": {},
            "subnetMappings": [{"subnetId": "s-2", "allocationId": "eipalloc-2",
                "sourceNatIpv6Prefix": "auto_assigned"}],
            "enablePrefixForIpv6SourceNat": nat
        }))
        .unwrap()
    }

    #[test]
    fn subnet_mappings_carry_the_models_addresses_per_subnet() {
        let want = nlb("dualstack", "on");
        let m = subnet_mappings(&want, &["s-1".into(), "s-2".into()]);
        assert_eq!(m[0], SubnetMapping::subnet("s-1"));
        assert_eq!(m[1].allocation_id.as_deref(), Some("eipalloc-2"));
        assert_eq!(
            m[1].source_nat_ipv6_prefix.as_deref(),
            Some("auto_assigned")
        );
    }

    #[test]
    fn source_nat_prefix_flag_is_sent_for_dualstack_nlbs_only() {
        assert_eq!(prefix_nat(&nlb("dualstack", "on")).as_deref(), Some("on"));
        assert_eq!(prefix_nat(&nlb("ipv4", "off")), None);
        let mut alb = nlb("dualstack", "on");
        alb.lb_type = "application".into();
        assert_eq!(prefix_nat(&alb), None);
    }
}
