//! Which subnets an Ingress group's load balancer uses: the class's selector, else the
//! `subnets` annotation (members agree, compared as sets), else the existing load balancer's
//! (same scheme), else discovery; resolved when the VPC's subnets are known.

use std::collections::BTreeSet;

use super::lb_settings::LbSettings;
use crate::model::agree::{ensure_same, go_list, group};
use crate::model::config::ModelConfig;
use crate::model::env::BuildEnv;
use crate::model::error::ModelError;
use crate::model::subnets::{discover, resolve_names_or_ids, resolve_selector, SubnetRules};
use crate::model::types::Subnets;

/// Subnets from the class's selector, else the annotation, else the existing load balancer's
/// (same scheme), else discovery; resolved when the VPC's subnets are known.
pub(super) fn for_load_balancer(
    s: &LbSettings,
    cfg: &ModelConfig,
    env: &BuildEnv,
) -> Result<Subnets, ModelError> {
    let rules = SubnetRules {
        cluster_name: &cfg.cluster_name,
        scheme: s.scheme,
        ip_address_type: s.ip_address_type,
        cluster_tag_check: cfg.gate("SubnetsClusterTagCheck"),
        alb_single_subnet: cfg.gate("ALBSingleSubnet"),
        discover_by_reachability: cfg.gate("SubnetDiscoveryByReachability"),
    };
    if !s.subnets_from_params.is_empty() {
        return subnets_from_params(s, &rules, env);
    }
    let listed = ensure_same(
        s.subnets_from_annotation.iter().cloned().map(Unordered),
        |a, b, _| format!("conflicting subnets: {} | {}", go_list(&a.0), go_list(&b.0)),
    )?;
    if let Some(Unordered(first)) = listed {
        return Ok(match &env.subnets {
            Some(list) => {
                Subnets::Resolved(resolve_names_or_ids(list, &first, &rules).map_err(group)?)
            }
            None => Subnets::NamesOrIds(first),
        });
    }
    Ok(match (&env.existing_load_balancer, &env.subnets) {
        (Some((scheme, ids)), _) if *scheme == s.scheme => Subnets::Resolved(ids.clone()),
        (_, Some(list)) => Subnets::Resolved(
            discover(list, &rules)
                .map_err(|e| group(format!("couldn't auto-discover subnets: {e}")))?,
        ),
        (_, None) => Subnets::Discover(rules.criteria()),
    })
}

fn subnets_from_params(
    s: &LbSettings,
    rules: &SubnetRules<'_>,
    env: &BuildEnv,
) -> Result<Subnets, ModelError> {
    if !s.subnets_from_annotation.is_empty() {
        return Err(group(
            "conflicting subnet specifications: IngressClassParams versus annotation".into(),
        ));
    }
    let chosen = ensure_same(s.subnets_from_params.iter().cloned(), |_, _, _| {
        "conflicting IngressClassParams subnet specifications".into()
    })?
    .unwrap_or_default();
    Ok(match &env.subnets {
        Some(list) => Subnets::Resolved(
            resolve_selector(list, &chosen.ids, &chosen.tags, rules).map_err(group)?,
        ),
        None => Subnets::Selector {
            ids: chosen.ids,
            tags: chosen.tags,
        },
    })
}

/// A subnet list compared as a set (upstream compares `sets.Set`), kept in the user's order.
#[derive(Clone)]
struct Unordered(Vec<String>);

impl PartialEq for Unordered {
    fn eq(&self, other: &Self) -> bool {
        fn set(v: &[String]) -> BTreeSet<&String> {
            v.iter().collect()
        }
        set(&self.0) == set(&other.0)
    }
}
