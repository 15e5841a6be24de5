//! The load balancer: found among the VPC's load balancers by stack tags, paired by resource
//! id, created or updated in place (security groups, subnets, IP address type, attributes,
//! tags). Scheme or type changes cannot be made in place: the old one is deleted (before the
//! create when the name is the same, otherwise in the cleanup phase) and a new one created.

use std::collections::BTreeSet;

use super::error::{Context, Error, Result};
use super::normalize::Resolved;
use super::resolve_security_groups;
use super::tags;
use super::target_group::attribute_changes;
use super::Deployer;
use crate::aws::{self, AwsError, Ec2Query, LoadBalancerQuery, SubnetMapping, Tags};
use crate::model::subnets::{self as msub, SubnetInfo, SubnetRules};
use crate::model::{self, IpAddressType, Subnets};

/// The load-balancer attribute a user sets to protect it; this controller never clears it.
pub const DELETION_PROTECTION: &str = "deletion_protection.enabled";

pub fn ip_type(t: IpAddressType) -> &'static str {
    match t {
        IpAddressType::Ipv4 => "ipv4",
        IpAddressType::DualStack => "dualstack",
        IpAddressType::DualStackWithoutPublicIpv4 => "dualstack-without-public-ipv4",
    }
}

/// AWS cannot change scheme or type of a load balancer.
pub fn needs_replacement(have: &aws::LoadBalancer, want: &model::LoadBalancer) -> bool {
    have.scheme != want.scheme.as_str() || have.lb_type != want.lb_type
}

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

fn same_set(a: &[String], b: &[String]) -> bool {
    a.iter().collect::<BTreeSet<_>>() == b.iter().collect::<BTreeSet<_>>()
}

fn subnet_info(s: &aws::Subnet) -> SubnetInfo {
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

/// Outcome of the load-balancer step.
#[derive(Debug, Default)]
pub(crate) struct LbOutcome {
    pub lb: Option<aws::LoadBalancer>,
    pub leftovers: Vec<String>,
}

impl Deployer {
    pub(crate) async fn find_owned_lbs(
        &self,
        stack_id: &str,
    ) -> Result<Vec<(aws::LoadBalancer, Tags)>> {
        let all = self
            .elbv2
            .describe_load_balancers(&LoadBalancerQuery::default())
            .await
            .ctx(|| "list load balancers".into())?;
        let in_vpc: Vec<aws::LoadBalancer> = all
            .into_iter()
            .filter(|l| l.vpc_id == self.vpc_id)
            .collect();
        let arns: Vec<String> = in_vpc.iter().map(|l| l.arn.clone()).collect();
        let mut tags = self.elb_tags(&arns).await?;
        Ok(in_vpc
            .into_iter()
            .filter_map(|l| {
                let t = tags.remove(&l.arn)?;
                tags::is_owned(&t, &self.cluster, stack_id).then_some((l, t))
            })
            .collect())
    }

    /// The subnets the load balancer should have; `None` keeps the current ones.
    async fn desired_subnets(
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

    async fn desired_sgs(&self, want: &model::LoadBalancer, r: &Resolved) -> Result<Vec<String>> {
        let mut ids = Vec::new();
        for t in &want.security_groups {
            ids.push(r.token(t)?);
        }
        if !want.security_group_names_or_ids.is_empty() {
            let given = &want.security_group_names_or_ids;
            ids.extend(resolve_security_groups(self.ec2.as_ref(), &self.vpc_id, given).await?);
        }
        Ok(ids)
    }

    pub(crate) async fn sync_load_balancer(
        &self,
        want: &model::LoadBalancer,
        mut existing: Vec<(aws::LoadBalancer, Tags)>,
        r: &Resolved,
    ) -> Result<LbOutcome> {
        let pos = existing.iter().position(|(l, t)| {
            tags::resource_id(t) == Some(want.id.as_str()) && !needs_replacement(l, want)
        });
        let current = pos.map(|i| existing.remove(i));
        let mut leftovers = Vec::new();
        for (l, _) in existing {
            // Same name: it must go before the new one can be created.
            if current.is_none() && l.name == want.name {
                self.delete_lb(&l.arn).await?;
            } else {
                leftovers.push(l.arn);
            }
        }
        let sgs = self.desired_sgs(want, r).await?;
        let subnets = self
            .desired_subnets(want, current.as_ref().map(|(l, _)| l))
            .await?;
        let lb = match current {
            Some((have, have_tags)) => {
                self.update_lb(want, &have, &have_tags, &sgs, subnets)
                    .await?;
                have
            }
            None => {
                let req = aws::CreateLoadBalancer {
                    name: want.name.clone(),
                    lb_type: want.lb_type.clone(),
                    scheme: want.scheme.as_str().into(),
                    ip_address_type: ip_type(want.ip_address_type).into(),
                    subnet_mappings: subnets
                        .unwrap_or_default()
                        .into_iter()
                        .map(SubnetMapping::subnet)
                        .collect(),
                    security_groups: sgs,
                    tags: want.tags.clone(),
                    customer_owned_ipv4_pool: want.customer_owned_ipv4_pool.clone(),
                    ipv4_ipam_pool_id: want.ipv4_ipam_pool_id.clone(),
                };
                let lb = self
                    .elbv2
                    .create_load_balancer(&req)
                    .await
                    .ctx(|| format!("create load balancer {}", want.name))?;
                self.tag_cache.put(&lb.arn, want.tags.clone());
                lb
            }
        };
        if !want.attributes.is_empty() {
            let have = self
                .elbv2
                .describe_load_balancer_attributes(&lb.arn)
                .await
                .ctx(|| format!("describe attributes of {}", lb.name))?;
            let change = attribute_changes(&want.attributes, &have);
            if !change.is_empty() {
                self.elbv2
                    .modify_load_balancer_attributes(&lb.arn, &change)
                    .await
                    .ctx(|| format!("modify attributes of {}", lb.name))?;
            }
        }
        Ok(LbOutcome {
            lb: Some(lb),
            leftovers,
        })
    }

    async fn update_lb(
        &self,
        want: &model::LoadBalancer,
        have: &aws::LoadBalancer,
        have_tags: &Tags,
        sgs: &[String],
        subnets: Option<Vec<String>>,
    ) -> Result<()> {
        let arn = &have.arn;
        super::ip_pools::log_coip_drift(want, have);
        self.remove_unwanted_ipam_pool(want, have).await?;
        if !same_set(sgs, &have.security_groups) {
            self.elbv2
                .set_security_groups(arn, sgs)
                .await
                .ctx(|| format!("set security groups of {}", have.name))?;
        }
        if let Some(s) = subnets {
            if !same_set(&s, &subnets_of(have)) {
                let m: Vec<SubnetMapping> = s.into_iter().map(SubnetMapping::subnet).collect();
                self.elbv2
                    .set_subnets(arn, &m)
                    .await
                    .ctx(|| format!("set subnets of {}", have.name))?;
            }
        }
        let ipt = ip_type(want.ip_address_type);
        if have.ip_address_type != ipt {
            self.elbv2
                .set_ip_address_type(arn, ipt)
                .await
                .ctx(|| format!("set IP address type of {}", have.name))?;
        }
        self.set_wanted_ipam_pool(want, have).await?;
        self.reconcile_elb_tags(arn, &want.tags, have_tags).await
    }

    /// Refuses (`DeletionProtected`) when a load balancer of the stack has deletion protection
    /// on, so that nothing of a protected stack (bindings, rules) is taken apart first.
    pub async fn check_deletable(&self, stack_id: &str) -> Result<()> {
        for (lb, _) in self.find_owned_lbs(stack_id).await? {
            let attrs = self
                .elbv2
                .describe_load_balancer_attributes(&lb.arn)
                .await
                .ctx(|| format!("describe attributes of {}", lb.name))?;
            if attrs.get(DELETION_PROTECTION).map(String::as_str) == Some("true") {
                return Err(Error::DeletionProtected {
                    name: lb.name,
                    arn: lb.arn,
                });
            }
        }
        Ok(())
    }

    /// Deletes a load balancer; gone counts as deleted. Its listeners and rules go with it.
    /// Deletion protection is the user's: it is never turned off here. A protected load
    /// balancer stays and the error names it, so the stack waits until the user lifts it.
    pub(crate) async fn delete_lb(&self, arn: &str) -> Result<()> {
        match self.elbv2.delete_load_balancer(arn).await {
            Ok(()) => {}
            Err(e) if e.is_not_found() => {}
            Err(AwsError::NotPermitted { .. }) => {
                return Err(Error::DeletionProtected {
                    name: name_of_arn(arn).to_string(),
                    arn: arn.to_string(),
                })
            }
            Err(source) => {
                return Err(Error::Aws {
                    what: format!("delete load balancer {arn}"),
                    source,
                })
            }
        }
        self.tag_cache.forget(arn);
        Ok(())
    }
}

/// The name inside a load-balancer ARN (`...:loadbalancer/app/<name>/<id>`); the ARN itself
/// when it has no such part.
pub fn name_of_arn(arn: &str) -> &str {
    arn.rsplit_once(":loadbalancer/")
        .and_then(|(_, rest)| rest.split('/').nth(1))
        .unwrap_or(arn)
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

    #[test]
    fn name_comes_out_of_the_arn() {
        let arn = "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/k8s-demo-app-0123456789/50dc6c495c0c9188";
        assert_eq!(name_of_arn(arn), "k8s-demo-app-0123456789");
        assert_eq!(name_of_arn("odd"), "odd");
    }

    #[test]
    fn scheme_or_type_change_needs_replacement() {
        let want: model::LoadBalancer = serde_json::from_value(serde_json::json!({
            "id": "LoadBalancer", "name": "k8s-x", "type": "application",
            "scheme": "internal", "ipAddressType": "ipv4", "subnets": {"resolved": []},
            "securityGroups": [], "attributes": {}, "tags": {}
        }))
        .unwrap();
        let mut have = aws::LoadBalancer {
            scheme: "internal".into(),
            lb_type: "application".into(),
            ..Default::default()
        };
        assert!(!needs_replacement(&have, &want));
        have.scheme = "internet-facing".into();
        assert!(needs_replacement(&have, &want));
        have.scheme = "internal".into();
        have.lb_type = "network".into();
        assert!(needs_replacement(&have, &want));
    }
}
