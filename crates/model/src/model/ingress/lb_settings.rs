//! The group-wide ("Exclusive") settings of an Ingress group's load balancer — scheme, IP
//! address type, name, subnets, security groups, attributes, capacity, IP pools, user tags —
//! gathered member by member (the class's IngressClassParams over the annotations), then agreed
//! under upstream's one "members must agree" rule (`agree::ensure_same`), one small function per
//! setting. The load balancer, its subnets and its security groups are built from them.

use std::collections::{BTreeMap, BTreeSet};

use crate::annotations::{self as ann, suffix, AnnotationMap};
use crate::crd::ingress_class_params::{self as icp, IngressClassParamsSpec, SubnetSelector};
use crate::model::agree::{ensure_same, go_list, go_set_map, group, member_err, merge_key};
use crate::model::config::ModelConfig;
use crate::model::error::ModelError;
use crate::model::group::ClassifiedIngress;
use crate::model::tags::TagContext;
use crate::model::types::{IpAddressType, LoadBalancerScheme};

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
