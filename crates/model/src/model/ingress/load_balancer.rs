//! The load balancer of an Ingress group, from its agreed settings (`lb_settings`): name,
//! subnets (`lb_subnets`), security groups (`security_group`), attributes, capacity, IP pools,
//! tags, and the addons (WAF / WAFv2 / Shield) under the same "members must agree" rule.

use std::collections::{BTreeMap, BTreeSet};

use super::lb_settings::LbSettings;
use super::listener::PortConfig;
use super::{lb_subnets, security_group};
use crate::annotations::{self as ann, suffix, AnnotationMap};
use crate::model::agree::{ensure_same, go_list, go_set_map, group, member_err};
use crate::model::config::ModelConfig;
use crate::model::env::BuildEnv;
use crate::model::error::ModelError;
use crate::model::group::ClassifiedIngress;
use crate::model::naming;
use crate::model::tags::TagContext;
use crate::model::types::*;

/// Builds the load balancer and, when managed, its security groups into `stack`.
#[allow(clippy::too_many_arguments)]
pub fn build_load_balancer(
    s: &LbSettings,
    members: &[ClassifiedIngress<'_>],
    ports: &BTreeMap<i32, PortConfig>,
    cfg: &ModelConfig,
    tags: &TagContext<'_>,
    env: &BuildEnv,
    group_id: &GroupId,
    stack: &mut Stack,
) -> Result<LoadBalancer, ModelError> {
    let name = load_balancer_name(s, cfg, group_id)?;
    let subnets = lb_subnets::for_load_balancer(s, cfg, env)?;
    let (security_groups, sg_names) =
        security_group::for_load_balancer(s, ports, cfg, tags, group_id, stack)?;
    stack.addons = addons(members, cfg)?;
    let capacity = s.capacity.filter(|_| cfg.gate("LBCapacityReservation"));
    Ok(LoadBalancer {
        id: "LoadBalancer".into(),
        name,
        lb_type: "application".into(),
        scheme: s.scheme,
        ip_address_type: s.ip_address_type,
        subnets,
        security_groups,
        security_group_names_or_ids: sg_names,
        customer_owned_ipv4_pool: s.coip.clone(),
        ipv4_ipam_pool_id: s.ipam.clone(),
        minimum_capacity_units: capacity,
        attributes: s.attributes.clone(),
        tags: tags.resource_tags("LoadBalancer", s.user_tags.clone()),
        subnet_mappings: Vec::new(),
        enable_prefix_for_ipv6_source_nat: None,
        security_groups_inbound_rules_on_private_link: None,
    })
}

/// The explicit name (at most 32 characters) or upstream's generated one.
fn load_balancer_name(
    s: &LbSettings,
    cfg: &ModelConfig,
    group_id: &GroupId,
) -> Result<String, ModelError> {
    let names: Vec<String> = s.explicit_names.iter().cloned().collect();
    let chosen = ensure_same(names, |_, _, all| {
        format!("conflicting load balancer name: {}", go_set_map(all))
    })?;
    match chosen {
        None => Ok(naming::load_balancer_name(
            &cfg.cluster_name,
            group_id,
            s.scheme,
        )),
        Some(n) if n.len() > 32 => Err(group(
            "load balancer name cannot be longer than 32 characters".into(),
        )),
        Some(n) => Ok(n),
    }
}

/// WAF / WAFv2 / Shield: members that set one must agree; carried only when the feature is
/// enabled (`--enable-waf`, `--enable-wafv2`, `--enable-shield`), deployed after the load balancer.
pub fn addons(members: &[ClassifiedIngress<'_>], cfg: &ModelConfig) -> Result<Addons, ModelError> {
    let (mut arns, mut names, mut waf, mut shield) = (
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
    );
    // Empty values are no request (upstream acts on a present but empty ARN and disassociates,
    // against its docs; here it leaves the association alone like the other empty values).
    let given = |v: Option<String>| v.filter(|v| !v.is_empty());
    for m in members {
        let (a, p) = (m.annotations(), m.params.map(|p| &p.spec));
        arns.extend(given(class_or_annotation(
            p.map(|p| &p.wafv2_acl_arn),
            a,
            suffix::WAFV2_ACL_ARN,
        )));
        names.extend(given(class_or_annotation(
            p.map(|p| &p.wafv2_acl_name),
            a,
            suffix::WAFV2_ACL_NAME,
        )));
        // The deprecated `web-acl-id` counts only where `waf-acl-id` is absent.
        waf.extend(given(
            ann::string(a, suffix::WAF_ACL_ID)
                .or_else(|| ann::string(a, suffix::WEB_ACL_ID))
                .map(String::from),
        ));
        shield.extend(ann::bool(a, suffix::SHIELD_ADVANCED_PROTECTION).map_err(member_err(m))?);
    }
    let set_conflict = |what: &'static str| {
        move |_: &String, _: &String, all: &[String]| {
            format!("conflicting {what}: {}", go_list(all))
        }
    };
    // A name anywhere in the group beats every ARN (upstream looks at ARNs only without names).
    let name = ensure_same(names, set_conflict("WAFv2 WebACL names"))?;
    let arn = match name {
        Some(_) => None,
        None => ensure_same(arns, set_conflict("WAFv2 WebACL ARNs"))?,
    };
    let waf = ensure_same(waf, set_conflict("WAFClassic WebACL IDs"))?;
    let shield = ensure_same(shield, |_, _, _| {
        "conflicting enable shield advanced protection".into()
    })?;
    Ok(Addons {
        wafv2_acl_arn: arn.filter(|_| cfg.enable_wafv2),
        wafv2_acl_name: name.filter(|_| cfg.enable_wafv2),
        waf_regional_acl_id: waf.filter(|_| cfg.enable_waf),
        shield_advanced_protection: shield.filter(|_| cfg.enable_shield),
    })
}

/// A non-empty IngressClassParams value, else the annotation.
fn class_or_annotation(class: Option<&String>, a: &AnnotationMap, sfx: &str) -> Option<String> {
    match class.filter(|v| !v.is_empty()) {
        Some(v) => Some(v.clone()),
        None => ann::string(a, sfx).map(String::from),
    }
}

#[cfg(test)]
#[path = "load_balancer_tests.rs"]
mod tests;
