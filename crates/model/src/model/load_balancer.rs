//! The load balancer of an Ingress group: group-wide ("Exclusive") settings — scheme, IP address
//! type, name, subnets, security groups, attributes, capacity, IP pools, tags, addons (WAF /
//! WAFv2 / Shield) — one small function per setting, each under upstream's one "members must
//! agree" rule (`agree::ensure_same`), then the `LoadBalancer` itself.

use std::collections::{BTreeMap, BTreeSet};

use super::agree::{ensure_same, go_list, go_set_map, group, member_err, merge_key};
use super::build::BuildEnv;
use super::config::ModelConfig;
use super::error::ModelError;
use super::group::ClassifiedIngress;
use super::listener::PortConfig;
use super::naming;
use super::security_group;
use super::subnets;
use super::tags::TagContext;
use super::types::*;
use crate::annotations::{self as ann, suffix, AnnotationMap};
use crate::crd::ingress_class_params::{self as icp, IngressClassParamsSpec, SubnetSelector};

/// Values every member must agree on, collected once per build.
pub struct LbSettings {
    pub scheme: LoadBalancerScheme,
    pub ip_address_type: IpAddressType,
    pub explicit_names: BTreeSet<String>,
    pub subnets_from_params: Vec<SubnetSelector>,
    pub subnets_from_annotation: Vec<Vec<String>>,
    pub security_groups: Option<Vec<String>>,
    pub manage_backend_sg_rules: bool,
    pub coip: Option<String>,
    pub attributes: BTreeMap<String, String>,
    pub capacity: Option<i32>,
    pub ipam: Option<String>,
    pub user_tags: BTreeMap<String, String>,
}

/// What the members set, gathered in member order before the group must agree.
#[derive(Default)]
struct Gathered {
    schemes: BTreeSet<String>,
    ip_types: BTreeSet<String>,
    names: BTreeSet<String>,
    selectors: Vec<SubnetSelector>,
    subnet_lists: Vec<Vec<String>>,
    security_groups: Vec<Vec<String>>,
    manage: BTreeSet<bool>,
    coips: BTreeSet<String>,
    attributes: BTreeMap<String, String>,
    capacity: BTreeMap<String, String>,
    ipams: BTreeSet<String>,
}

impl LbSettings {
    pub fn collect(
        members: &[ClassifiedIngress<'_>],
        cfg: &ModelConfig,
        tags: &TagContext<'_>,
    ) -> Result<LbSettings, ModelError> {
        let class_attrs = class_attributes(members);
        let mut g = Gathered::default();
        for m in members {
            g.gather(m, &class_attrs)?;
            if !cfg.model_undeployed {
                super::not_deployed::member_features(m, cfg).map_err(|f| f.on(&m.key()))?;
            }
        }
        g.attributes.extend(class_attrs);
        let scheme = scheme(g.schemes, cfg.default_scheme)?;
        let ip_address_type = ip_address_type(g.ip_types)?;
        let security_groups = ensure_same(g.security_groups, |a, b, _| {
            format!(
                "conflicting securityGroups: {} | {}",
                go_list(a),
                go_list(b)
            )
        })?;
        let manage = ensure_same(g.manage, |_, _, _| {
            "conflicting manage backend security group rules settings".into()
        })?;
        let coip = ensure_same(g.coips, |_, _, all| {
            format!("conflicting CustomerOwnedIPv4Pool: {}", go_list(all))
        })?;
        let ipam = ensure_same(g.ipams, |a, b, _| {
            format!("conflicting ipv4 ipam pools {a}: {b}")
        })?;
        let capacity = capacity_units(&g.capacity)?;
        let user_tags = tags
            .group_user_tags(members)
            .map_err(|(k, f)| f.on(&k))?
            .map_err(group)?;
        Ok(LbSettings {
            scheme,
            ip_address_type,
            explicit_names: g.names,
            subnets_from_params: g.selectors,
            subnets_from_annotation: g.subnet_lists,
            security_groups,
            manage_backend_sg_rules: manage.unwrap_or(cfg.enable_manage_backend_sg_rules),
            coip,
            attributes: g.attributes,
            capacity,
            ipam,
            user_tags,
        })
    }
}

impl Gathered {
    /// One member's settings; the class's (IngressClassParams) value wins over its annotation.
    fn gather(
        &mut self,
        m: &ClassifiedIngress<'_>,
        class_attrs: &BTreeMap<String, String>,
    ) -> Result<(), ModelError> {
        let (a, p) = (m.annotations(), m.params.map(|p| &p.spec));
        self.schemes.extend(member_scheme(a, p));
        self.ip_types.extend(member_ip_address_type(a, p));
        self.names.extend(member_name(a, p));
        match p.and_then(|p| p.subnets.clone()) {
            Some(s) => self.selectors.push(s),
            None => self
                .subnet_lists
                .extend(ann::string_list(a, suffix::SUBNETS)),
        }
        self.security_groups
            .extend(ann::string_list(a, suffix::SECURITY_GROUPS));
        self.manage
            .extend(ann::bool(a, suffix::MANAGE_BACKEND_SG_RULES).map_err(member_err(m))?);
        self.coips.extend(member_coip(m)?);
        for kv in member_map(m, suffix::LOAD_BALANCER_ATTRIBUTES)? {
            merge_key(&mut self.attributes, kv, class_attrs, |k, a, b| {
                format!("conflicting load balancer attributes {k}: {a} | {b}")
            })
            .map_err(group)?;
        }
        self.gather_capacity(m, p)?;
        self.ipams.extend(member_ipam(a, p));
        Ok(())
    }

    fn gather_capacity(
        &mut self,
        m: &ClassifiedIngress<'_>,
        p: Option<&IngressClassParamsSpec>,
    ) -> Result<(), ModelError> {
        if let Some(c) = p.and_then(|p| p.minimum_load_balancer_capacity.as_ref()) {
            self.capacity
                .insert("CapacityUnits".into(), c.capacity_units.to_string());
            return Ok(());
        }
        for (k, v) in member_map(m, suffix::MINIMUM_LOAD_BALANCER_CAPACITY)? {
            if k != "CapacityUnits" {
                return Err(group(format!(
                    "invalid key to set the capacity: {k}, Expected key: CapacityUnits"
                )));
            }
            merge_key(&mut self.capacity, (k, v), &BTreeMap::new(), |k, a, b| {
                format!("conflicting capacity reservation {k}: {a} | {b}")
            })
            .map_err(group)?;
        }
        Ok(())
    }
}

/// A map-valued annotation of one member (absent = empty).
fn member_map(
    m: &ClassifiedIngress<'_>,
    sfx: &str,
) -> Result<BTreeMap<String, String>, ModelError> {
    Ok(ann::string_map(m.annotations(), sfx)
        .map_err(member_err(m))?
        .unwrap_or_default())
}

/// Load balancer attributes of the class (the first member's IngressClassParams).
fn class_attributes(members: &[ClassifiedIngress<'_>]) -> BTreeMap<String, String> {
    let Some(p) = members.first().and_then(|m| m.params) else {
        return BTreeMap::new();
    };
    let attrs = &p.spec.load_balancer_attributes;
    attrs
        .iter()
        .map(|a| (a.key.clone(), a.value.clone()))
        .collect()
}

fn member_scheme(a: &AnnotationMap, p: Option<&IngressClassParamsSpec>) -> Option<String> {
    match p.and_then(|p| p.scheme) {
        Some(icp::LoadBalancerScheme::Internal) => Some("internal".into()),
        Some(_) => Some("internet-facing".into()),
        None => ann::string(a, suffix::SCHEME).map(String::from),
    }
}

fn member_ip_address_type(a: &AnnotationMap, p: Option<&IngressClassParamsSpec>) -> Option<String> {
    match p.and_then(|p| p.ip_address_type) {
        Some(t) => Some(
            serde_json::to_value(t)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
        ),
        None => ann::string(a, suffix::IP_ADDRESS_TYPE).map(String::from),
    }
}

fn member_name(a: &AnnotationMap, p: Option<&IngressClassParamsSpec>) -> Option<String> {
    match p.filter(|p| !p.load_balancer_name.is_empty()) {
        Some(p) => Some(p.load_balancer_name.clone()),
        None => ann::string(a, suffix::LOAD_BALANCER_NAME).map(String::from),
    }
}

fn member_coip(m: &ClassifiedIngress<'_>) -> Result<Option<String>, ModelError> {
    match ann::string(m.annotations(), suffix::CUSTOMER_OWNED_IPV4_POOL) {
        Some("") => Err(group(format!(
            "cannot use empty value for customer-owned-ipv4-pool annotation, ingress: {}",
            m.key()
        ))),
        c => Ok(c.map(String::from)),
    }
}

fn member_ipam(a: &AnnotationMap, p: Option<&IngressClassParamsSpec>) -> Option<String> {
    match p
        .and_then(|p| p.ipam_configuration.as_ref())
        .and_then(|i| i.ipv4_ipam_pool_id.clone())
    {
        Some(id) => Some(id),
        // Upstream treats an empty annotation as absent.
        None => ann::string(a, suffix::IPAM_IPV4_POOL_ID)
            .filter(|s| !s.is_empty())
            .map(String::from),
    }
}

/// The scheme the members agree on (`default` when none sets one), with upstream's errors;
/// shared with the frontend NLB's `frontend-nlb-scheme`.
pub(super) fn scheme(
    schemes: BTreeSet<String>,
    default: LoadBalancerScheme,
) -> Result<LoadBalancerScheme, ModelError> {
    let chosen = ensure_same(schemes, |_, _, all| {
        format!("conflicting scheme: {}", go_set_map(all))
    })?;
    match chosen.as_deref() {
        None => Ok(default),
        Some("internal") => Ok(LoadBalancerScheme::Internal),
        Some("internet-facing") => Ok(LoadBalancerScheme::InternetFacing),
        Some(other) => Err(group(format!("unknown scheme: {other}"))),
    }
}

fn ip_address_type(types: BTreeSet<String>) -> Result<IpAddressType, ModelError> {
    let chosen = ensure_same(types, |_, _, all| {
        format!("conflicting IPAddressType: {}", go_list(all))
    })?;
    match chosen.as_deref() {
        None | Some("ipv4") => Ok(IpAddressType::Ipv4),
        Some("dualstack") => Ok(IpAddressType::DualStack),
        Some("dualstack-without-public-ipv4") => Ok(IpAddressType::DualStackWithoutPublicIpv4),
        Some(other) => Err(group(format!("unknown IPAddressType: {other}"))),
    }
}

fn capacity_units(capacity: &BTreeMap<String, String>) -> Result<Option<i32>, ModelError> {
    capacity
        .get("CapacityUnits")
        .map(|v| {
            v.parse::<i32>()
                .map_err(|_| group(format!("invalid CapacityUnits value: {v}")))
        })
        .transpose()
}

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
    let subnets = subnets::for_load_balancer(s, cfg, env)?;
    let (security_groups, sg_names) =
        security_group::for_load_balancer(s, ports, cfg, tags, group_id, stack)?;
    stack.addons = addons(members, cfg)?;
    // Refused per member until deployed (see `not_deployed`); carried for the model's shape.
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
