//! Group-wide ("Exclusive") settings and the load balancer: scheme, IP address type, name,
//! subnets, security groups (managed + backend), attributes, capacity, IPAM, addons, SSL
//! redirect and listener attributes, with upstream's precedence and conflict errors.

use std::collections::{BTreeMap, BTreeSet};

use super::build::BuildEnv;
use super::config::ModelConfig;
use super::error::ModelError;
use super::group::ClassifiedIngress;
use super::listen::PortConfig;
use super::naming;
use super::subnets::{self, SubnetRules};
use super::tags::TagContext;
use super::types::*;
use crate::annotations::{self as ann, suffix};

pub(crate) fn member_err<'b>(
    m: &'b ClassifiedIngress<'_>,
) -> impl Fn(ann::AnnotationError) -> ModelError + 'b {
    move |e| super::error::Fail::from(e).on(&m.key())
}

/// Discards an insert's "was it new" result (sets here only collect values).
pub(crate) fn ignore<T>(_: T) {}

pub(crate) fn group(msg: String) -> ModelError {
    ModelError::Group(msg)
}

pub(crate) fn go_set(s: &BTreeSet<String>) -> String {
    format!("[{}]", s.iter().cloned().collect::<Vec<_>>().join(" "))
}

/// Values every member must agree on, collected once per build.
pub struct LbSettings {
    pub scheme: LoadBalancerScheme,
    pub ip_address_type: IpAddressType,
    pub explicit_names: BTreeSet<String>,
    pub subnets_from_params: Vec<crate::crd::ingress_class_params::SubnetSelector>,
    pub subnets_from_annotation: Vec<Vec<String>>,
    pub security_groups: Option<Vec<String>>,
    pub manage_backend_sg_rules: bool,
    pub coip: Option<String>,
    pub attributes: BTreeMap<String, String>,
    pub capacity: Option<i32>,
    pub ipam: Option<String>,
    pub user_tags: BTreeMap<String, String>,
}

impl LbSettings {
    pub fn collect(
        members: &[ClassifiedIngress<'_>],
        cfg: &ModelConfig,
        tags: &TagContext<'_>,
    ) -> Result<LbSettings, ModelError> {
        let (mut schemes, mut ip_types, mut names) =
            (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
        let (mut sel, mut ann_subnets, mut sgs) = (
            Vec::new(),
            Vec::<Vec<String>>::new(),
            Vec::<Vec<String>>::new(),
        );
        let (mut manage, mut coips, mut ipams) =
            (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
        let mut attrs: BTreeMap<String, String> = BTreeMap::new();
        let mut capacity: BTreeMap<String, String> = BTreeMap::new();
        let class_attrs: BTreeMap<String, String> = members
            .first()
            .and_then(|m| m.params)
            .map(|p| {
                p.spec
                    .load_balancer_attributes
                    .iter()
                    .map(|a| (a.key.clone(), a.value.clone()))
                    .collect()
            })
            .unwrap_or_default();
        for m in members {
            let a = m.annotations();
            let p = m.params.map(|p| &p.spec);
            match p.and_then(|p| p.scheme) {
                Some(s) => ignore(
                    schemes.insert(
                        if s == crate::crd::ingress_class_params::LoadBalancerScheme::Internal {
                            "internal"
                        } else {
                            "internet-facing"
                        }
                        .to_string(),
                    ),
                ),
                None => {
                    ignore(ann::string(a, suffix::SCHEME).map(|s| schemes.insert(s.to_string())))
                }
            }
            match p.and_then(|p| p.ip_address_type) {
                Some(t) => ignore(
                    ip_types.insert(
                        serde_json::to_value(t)
                            .ok()
                            .and_then(|v| v.as_str().map(String::from))
                            .unwrap_or_default(),
                    ),
                ),
                None => ignore(
                    ann::string(a, suffix::IP_ADDRESS_TYPE).map(|s| ip_types.insert(s.to_string())),
                ),
            }
            match p.filter(|p| !p.load_balancer_name.is_empty()) {
                Some(p) => ignore(names.insert(p.load_balancer_name.clone())),
                None => ignore(
                    ann::string(a, suffix::LOAD_BALANCER_NAME).map(|s| names.insert(s.to_string())),
                ),
            }
            match p.and_then(|p| p.subnets.clone()) {
                Some(s) => sel.push(s),
                None => ann_subnets.extend(ann::string_list(a, suffix::SUBNETS)),
            }
            sgs.extend(ann::string_list(a, suffix::SECURITY_GROUPS));
            if let Some(v) = ann::bool(a, suffix::MANAGE_BACKEND_SG_RULES).map_err(member_err(m))? {
                manage.insert(v);
            }
            if let Some(c) = ann::string(a, suffix::CUSTOMER_OWNED_IPV4_POOL) {
                if c.is_empty() {
                    return Err(group(format!("cannot use empty value for customer-owned-ipv4-pool annotation, ingress: {}", m.key())));
                }
                coips.insert(c.to_string());
            }
            for (k, v) in ann::string_map(a, suffix::LOAD_BALANCER_ATTRIBUTES)
                .map_err(member_err(m))?
                .unwrap_or_default()
            {
                if let Some(existing) = attrs.get(&k) {
                    if *existing != v && !class_attrs.contains_key(&k) {
                        return Err(group(format!(
                            "conflicting load balancer attributes {k}: {existing} | {v}"
                        )));
                    }
                }
                attrs.insert(k, v);
            }
            match p.and_then(|p| p.minimum_load_balancer_capacity.as_ref()) {
                Some(c) => {
                    ignore(capacity.insert("CapacityUnits".into(), c.capacity_units.to_string()))
                }
                None => {
                    for (k, v) in ann::string_map(a, suffix::MINIMUM_LOAD_BALANCER_CAPACITY)
                        .map_err(member_err(m))?
                        .unwrap_or_default()
                    {
                        if k != "CapacityUnits" {
                            return Err(group(format!(
                                "invalid key to set the capacity: {k}, Expected key: CapacityUnits"
                            )));
                        }
                        if let Some(existing) = capacity.get(&k).filter(|e| **e != v) {
                            return Err(group(format!(
                                "conflicting capacity reservation {k}: {existing} | {v}"
                            )));
                        }
                        capacity.insert(k, v);
                    }
                }
            }
            match p
                .and_then(|p| p.ipam_configuration.as_ref())
                .and_then(|i| i.ipv4_ipam_pool_id.clone())
            {
                Some(id) => ignore(ipams.insert(id)),
                None => ignore(
                    // Upstream treats an empty annotation as absent.
                    ann::string(a, suffix::IPAM_IPV4_POOL_ID)
                        .filter(|s| !s.is_empty())
                        .map(|s| ipams.insert(s.to_string())),
                ),
            }
            if !cfg.model_undeployed {
                super::not_deployed::member_features(m, cfg).map_err(|f| f.on(&m.key()))?;
            }
        }
        attrs.extend(class_attrs);
        let scheme = match schemes.len() {
            0 => cfg.default_scheme,
            1 => match schemes.iter().next().map(String::as_str) {
                Some("internal") => LoadBalancerScheme::Internal,
                Some("internet-facing") => LoadBalancerScheme::InternetFacing,
                other => return Err(group(format!("unknown scheme: {}", other.unwrap_or("")))),
            },
            _ => {
                return Err(group(format!(
                    "conflicting scheme: map[{}]",
                    schemes
                        .iter()
                        .map(|s| format!("{s}:{{}}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                )))
            }
        };
        let ip_address_type = match ip_types.len() {
            0 => IpAddressType::Ipv4,
            1 => match ip_types.iter().next().map(String::as_str) {
                Some("ipv4") => IpAddressType::Ipv4,
                Some("dualstack") => IpAddressType::DualStack,
                Some("dualstack-without-public-ipv4") => IpAddressType::DualStackWithoutPublicIpv4,
                other => {
                    return Err(group(format!(
                        "unknown IPAddressType: {}",
                        other.unwrap_or("")
                    )))
                }
            },
            _ => {
                return Err(group(format!(
                    "conflicting IPAddressType: {}",
                    go_set(&ip_types)
                )))
            }
        };
        if let Some(first) = sgs.first() {
            if let Some(other) = sgs.iter().find(|s| *s != first) {
                return Err(group(format!(
                    "conflicting securityGroups: [{}] | [{}]",
                    first.join(" "),
                    other.join(" ")
                )));
            }
        }
        if manage.len() > 1 {
            return Err(group(
                "conflicting manage backend security group rules settings".into(),
            ));
        }
        if coips.len() > 1 {
            return Err(group(format!(
                "conflicting CustomerOwnedIPv4Pool: {}",
                go_set(&coips)
            )));
        }
        if ipams.len() > 1 {
            let v: Vec<&String> = ipams.iter().collect();
            return Err(group(format!(
                "conflicting ipv4 ipam pools {}: {}",
                v[0], v[1]
            )));
        }
        let capacity = match capacity.get("CapacityUnits") {
            Some(v) => Some(
                v.parse::<i32>()
                    .map_err(|_| group(format!("invalid CapacityUnits value: {v}")))?,
            ),
            None => None,
        };
        let user_tags = tags
            .group_user_tags(members)
            .map_err(|(k, f)| f.on(&k))?
            .map_err(group)?;
        Ok(LbSettings {
            scheme,
            ip_address_type,
            explicit_names: names,
            subnets_from_params: sel,
            subnets_from_annotation: ann_subnets,
            security_groups: sgs.into_iter().next(),
            manage_backend_sg_rules: manage
                .into_iter()
                .next()
                .unwrap_or(cfg.enable_manage_backend_sg_rules),
            coip: coips.into_iter().next(),
            attributes: attrs,
            capacity,
            ipam: ipams.into_iter().next(),
            user_tags,
        })
    }
}

fn ensure_same<T: PartialEq + Clone>(
    values: &[T],
    msg: impl Fn(&T, &T) -> String,
) -> Result<Option<T>, ModelError> {
    let Some(first) = values.first() else {
        return Ok(None);
    };
    if let Some(other) = values.iter().find(|v| *v != first) {
        return Err(group(msg(first, other)));
    }
    Ok(Some(first.clone()))
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
    let name = match s.explicit_names.len() {
        0 => naming::load_balancer_name(&cfg.cluster_name, group_id, s.scheme),
        1 => {
            let n = s.explicit_names.iter().next().cloned().unwrap_or_default();
            if n.len() > 32 {
                return Err(group(
                    "load balancer name cannot be longer than 32 characters".into(),
                ));
            }
            n
        }
        _ => {
            let items: Vec<String> = s
                .explicit_names
                .iter()
                .map(|n| format!("{n}:{{}}"))
                .collect();
            return Err(group(format!(
                "conflicting load balancer name: map[{}]",
                items.join(" ")
            )));
        }
    };
    let rules = SubnetRules {
        cluster_name: &cfg.cluster_name,
        scheme: s.scheme,
        ip_address_type: s.ip_address_type,
        cluster_tag_check: cfg.gate("SubnetsClusterTagCheck"),
        alb_single_subnet: cfg.gate("ALBSingleSubnet"),
        discover_by_reachability: cfg.gate("SubnetDiscoveryByReachability"),
    };
    let subnets = if !s.subnets_from_params.is_empty() {
        if !s.subnets_from_annotation.is_empty() {
            return Err(group(
                "conflicting subnet specifications: IngressClassParams versus annotation".into(),
            ));
        }
        let chosen = ensure_same(&s.subnets_from_params, |_, _| {
            "conflicting IngressClassParams subnet specifications".into()
        })?
        .unwrap_or_default();
        match &env.subnets {
            Some(list) => Subnets::Resolved(
                subnets::resolve_selector(list, &chosen.ids, &chosen.tags, &rules)
                    .map_err(group)?,
            ),
            None => Subnets::Selector {
                ids: chosen.ids,
                tags: chosen.tags,
            },
        }
    } else if let Some(first) = s.subnets_from_annotation.first() {
        let sorted = |v: &Vec<String>| v.iter().cloned().collect::<BTreeSet<_>>();
        if let Some(other) = s
            .subnets_from_annotation
            .iter()
            .find(|v| sorted(v) != sorted(first))
        {
            return Err(group(format!(
                "conflicting subnets: [{}] | [{}]",
                first.join(" "),
                other.join(" ")
            )));
        }
        match &env.subnets {
            Some(list) => Subnets::Resolved(
                subnets::resolve_names_or_ids(list, first, &rules).map_err(group)?,
            ),
            None => Subnets::NamesOrIds(first.clone()),
        }
    } else {
        match (&env.existing_load_balancer, &env.subnets) {
            (Some((scheme, ids)), _) if *scheme == s.scheme => Subnets::Resolved(ids.clone()),
            (_, Some(list)) => Subnets::Resolved(
                subnets::discover(list, &rules)
                    .map_err(|e| group(format!("couldn't auto-discover subnets: {e}")))?,
            ),
            (_, None) => Subnets::Discover(rules.criteria()),
        }
    };
    let mut security_groups = Vec::new();
    let mut sg_names = Vec::new();
    let backend_sg = || shared_backend_sg(cfg);
    match &s.security_groups {
        None => {
            stack.managed_security_group = Some(managed_sg(
                ports,
                s.ip_address_type,
                cfg,
                tags,
                s.user_tags.clone(),
                group_id,
            ));
            security_groups.push(Token::ManagedSecurityGroupId);
            if cfg.enable_backend_sg {
                stack.backend_security_group = Some(backend_sg());
                security_groups.push(Token::BackendSecurityGroupId);
            }
        }
        Some(list) => {
            // Ids and `Name` tags alike are resolved (and checked) by the deployer, as upstream.
            sg_names.clone_from(list);
            if s.manage_backend_sg_rules {
                if !cfg.enable_backend_sg {
                    return Err(group("backendSG feature is required to manage worker node SG rules when frontendSG manually specified".into()));
                }
                stack.backend_security_group = Some(backend_sg());
                security_groups.push(Token::BackendSecurityGroupId);
            }
        }
    }
    stack.addons = super::lb_extras::addons(members, cfg)?;
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

/// The cluster's shared backend security group (`--backend-security-group` or auto-created).
pub fn shared_backend_sg(cfg: &ModelConfig) -> BackendSecurityGroup {
    BackendSecurityGroup {
        group_id: cfg.backend_sg_id.clone(),
        name: naming::backend_sg_name(&cfg.cluster_name),
        description: "[k8s] Shared Backend SecurityGroup for LoadBalancer".into(),
        tags: {
            let mut t = cfg.default_tags.clone();
            t.insert("elbv2.k8s.aws/cluster".into(), cfg.cluster_name.clone());
            t.insert("elbv2.k8s.aws/resource".into(), "backend-sg".into());
            t
        },
    }
}

fn managed_sg(
    ports: &BTreeMap<i32, PortConfig>,
    ip_type: IpAddressType,
    cfg: &ModelConfig,
    tags: &TagContext<'_>,
    user_tags: BTreeMap<String, String>,
    group_id: &GroupId,
) -> SecurityGroup {
    let mut ingress = Vec::new();
    for (port, c) in ports {
        let base = IpPermission {
            ip_protocol: "tcp".into(),
            from_port: *port,
            to_port: *port,
            cidr_ipv4: None,
            cidr_ipv6: None,
            prefix_list_id: None,
        };
        ingress.extend(c.cidr_v4.iter().map(|v| IpPermission {
            cidr_ipv4: Some(v.clone()),
            ..base.clone()
        }));
        if ip_type.is_dual_stack() {
            ingress.extend(c.cidr_v6.iter().map(|v| IpPermission {
                cidr_ipv6: Some(v.clone()),
                ..base.clone()
            }));
        }
        ingress.extend(c.prefix_lists.iter().map(|v| IpPermission {
            prefix_list_id: Some(v.clone()),
            ..base.clone()
        }));
    }
    SecurityGroup {
        id: "ManagedLBSecurityGroup".into(),
        name: naming::managed_sg_name(&cfg.cluster_name, group_id),
        description: "[k8s] Managed SecurityGroup for LoadBalancer".into(),
        ingress,
        tags: tags.resource_tags("ManagedLBSecurityGroup", user_tags),
    }
}
