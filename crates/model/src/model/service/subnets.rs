//! Which subnets the NLB uses: `aws-load-balancer-subnets`, else the existing NLB's when the
//! scheme is unchanged, else discovery; resolved when the VPC's subnets are known.

use super::annotations::{key, sfx};
use super::task::Task;
use crate::model::error::Fail;
use crate::model::subnets::{self, SubnetInfo, SubnetRules};
use crate::model::types::{IpAddressType, LoadBalancerScheme, Subnets};

/// The LB's subnets: resolved `SubnetInfo`s when the VPC's subnets are known.
pub(super) struct ChosenSubnets {
    pub subnets: Subnets,
    pub resolved: Option<Vec<SubnetInfo>>,
}

fn rules<'a>(t: &'a Task<'_>, scheme: LoadBalancerScheme, ip: IpAddressType) -> SubnetRules<'a> {
    SubnetRules {
        cluster_name: &t.cfg.cluster_name,
        scheme,
        ip_address_type: ip,
        cluster_tag_check: t.cfg.gate("SubnetsClusterTagCheck"),
        // NLBs need one subnet, not two.
        alb_single_subnet: true,
        discover_by_reachability: t.cfg.gate("SubnetDiscoveryByReachability"),
    }
}

/// `aws-load-balancer-subnets`, else the existing NLB's subnets when the scheme is unchanged,
/// else discovery.
pub(super) fn subnets(
    t: &Task<'_>,
    scheme: LoadBalancerScheme,
    ip: IpAddressType,
) -> Result<ChosenSubnets, Fail> {
    let r = rules(t, scheme, ip);
    let explicit = t.a.list(sfx::SUBNETS).or_else(|| {
        t.env
            .existing_load_balancer
            .as_ref()
            .filter(|lb| lb.scheme == scheme)
            .map(|lb| lb.subnet_ids.clone())
    });
    let Some(all) = &t.env.subnets else {
        return Ok(ChosenSubnets {
            subnets: match explicit {
                Some(list) => Subnets::NamesOrIds(list),
                None => Subnets::Discover(r.criteria()),
            },
            resolved: None,
        });
    };
    let ids = match &explicit {
        Some(list) => subnets::resolve_names_or_ids(all, list, &r),
        None => subnets::discover(all, &r),
    };
    let ids = ids.map_err(|e| match explicit {
        Some(_) => Fail::at(key(sfx::SUBNETS), e),
        None => Fail::msg(e),
    })?;
    let resolved = ids
        .iter()
        .filter_map(|id| all.iter().find(|s| &s.id == id).cloned())
        .collect();
    Ok(ChosenSubnets {
        subnets: Subnets::Resolved(ids),
        resolved: Some(resolved),
    })
}
