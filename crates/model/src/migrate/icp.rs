//! IngressClassParams over annotations (`translate/icp_overrides.go`): a group's
//! IngressClassParams are merged (two of them disagreeing on a field is an error) and the
//! result wins over what the annotations set, as the controller ranks them. The namespace
//! selector (cluster policy), the group (grouping) and the SSL redirect port (routes) are not
//! load balancer fields; certificates, SSL policy and listener attributes apply to the
//! listener configurations the merged spec already has, as upstream applies them.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::annotations::get_int32;
use super::{go_quote, MigrateError, PROTOCOL_HTTPS};
use crate::annotations::{self as ann, suffix, AnnotationMap};
use crate::crd::gateway::load_balancer_configuration::{
    MinimumLoadBalancerCapacity, SubnetConfiguration, WafV2Configuration,
};
use crate::crd::gateway::target_group_configuration::TargetGroupProps;
use crate::crd::gateway::{KeyValue, LoadBalancerConfigurationSpec};
use crate::crd::{IngressClassParams, IngressClassParamsSpec};

/// `value` as the other enum with the same serde name (IngressClassParams → CRD enums).
fn same_name<A: Serialize, B: DeserializeOwned>(value: &A) -> Option<B> {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| serde_json::from_value(v).ok())
}

/// The serde name of an enum value ("" when it has none).
fn name_of<A: Serialize>(value: &A) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

fn conflict(what: &str, a: &str, b: &str) -> MigrateError {
    MigrateError::Translate(format!(
        "conflicting IngressClassParams {what}: {} vs {}",
        go_quote(a),
        go_quote(b)
    ))
}

/// Applies one IngressClassParams to `spec`; a field an earlier IngressClassParams set to
/// another value is an error.
pub fn apply_ingress_class_params_to_lb_config(
    spec: &mut LoadBalancerConfigurationSpec,
    icp: &IngressClassParams,
) -> Result<(), MigrateError> {
    let p = &icp.spec;
    apply_identity(spec, p)?;
    apply_listener_tls(spec, p)?;
    apply_sources_tags_attributes(spec, p)?;
    apply_subnets(spec, p)?;
    apply_prefix_lists_and_waf(spec, p)?;
    apply_capacity_and_ipam(spec, p)?;
    apply_listener_attributes(spec, p)?;
    Ok(())
}

/// The load balancer's scheme, IP address type and name.
fn apply_identity(
    spec: &mut LoadBalancerConfigurationSpec,
    p: &IngressClassParamsSpec,
) -> Result<(), MigrateError> {
    if let Some(scheme) = &p.scheme {
        let new = same_name(scheme);
        if spec.scheme.is_some() && spec.scheme != new {
            return Err(conflict("scheme", &name_of(&spec.scheme), &name_of(scheme)));
        }
        spec.scheme = new;
    }
    if let Some(ip) = &p.ip_address_type {
        let new = same_name(ip);
        if spec.ip_address_type.is_some() && spec.ip_address_type != new {
            return Err(conflict(
                "ip-address-type",
                &name_of(&spec.ip_address_type),
                &name_of(ip),
            ));
        }
        spec.ip_address_type = new;
    }
    if !p.load_balancer_name.is_empty() {
        if let Some(existing) = &spec.load_balancer_name {
            if *existing != p.load_balancer_name {
                return Err(conflict(
                    "load-balancer-name",
                    existing,
                    &p.load_balancer_name,
                ));
            }
        }
        spec.load_balancer_name = Some(p.load_balancer_name.clone());
    }
    Ok(())
}

/// The HTTPS listeners' SSL policy and every listener's certificates.
fn apply_listener_tls(
    spec: &mut LoadBalancerConfigurationSpec,
    p: &IngressClassParamsSpec,
) -> Result<(), MigrateError> {
    if !p.ssl_policy.is_empty() {
        if let Some(lcs) = spec.listener_configurations.as_mut() {
            for lc in lcs.iter_mut() {
                if lc.protocol_port.starts_with(PROTOCOL_HTTPS) {
                    if let Some(existing) = &lc.ssl_policy {
                        if *existing != p.ssl_policy {
                            return Err(conflict("ssl-policy", existing, &p.ssl_policy));
                        }
                    }
                    lc.ssl_policy = Some(p.ssl_policy.clone());
                }
            }
        }
    }
    if !p.certificate_arn.is_empty() {
        if let Some(lcs) = spec.listener_configurations.as_mut() {
            for lc in lcs.iter_mut() {
                lc.default_certificate = Some(p.certificate_arn[0].clone());
                if p.certificate_arn.len() > 1 {
                    lc.certificates = p.certificate_arn[1..].to_vec();
                }
            }
        }
    }
    Ok(())
}

/// Inbound CIDRs, tags and load-balancer attributes.
fn apply_sources_tags_attributes(
    spec: &mut LoadBalancerConfigurationSpec,
    p: &IngressClassParamsSpec,
) -> Result<(), MigrateError> {
    if !p.inbound_cidrs.is_empty() {
        if spec
            .source_ranges
            .as_ref()
            .is_some_and(|s| *s != p.inbound_cidrs)
        {
            return Err(MigrateError::Translate(
                "conflicting IngressClassParams inbound-cidrs".into(),
            ));
        }
        spec.source_ranges = Some(p.inbound_cidrs.clone());
    }
    if !p.tags.is_empty() {
        let mut tags = spec.tags.clone().unwrap_or_default();
        for t in &p.tags {
            if let Some(existing) = tags.get(&t.key) {
                if *existing != t.value {
                    return Err(MigrateError::Translate(format!(
                        "conflicting IngressClassParams tag {}: {} vs {}",
                        go_quote(&t.key),
                        go_quote(existing),
                        go_quote(&t.value)
                    )));
                }
            }
            tags.insert(t.key.clone(), t.value.clone());
        }
        spec.tags = Some(tags);
    }
    for a in &p.load_balancer_attributes {
        if let Some(existing) = spec
            .load_balancer_attributes
            .iter()
            .find(|e| e.key == a.key)
        {
            if existing.value != a.value {
                return Err(MigrateError::Translate(format!(
                    "conflicting IngressClassParams load-balancer-attribute {}: {} vs {}",
                    go_quote(&a.key),
                    go_quote(&existing.value),
                    go_quote(&a.value)
                )));
            }
            continue;
        }
        spec.load_balancer_attributes.push(KeyValue {
            key: a.key.clone(),
            value: a.value.clone(),
        });
    }
    Ok(())
}

/// Subnets, by id or by tag selector.
fn apply_subnets(
    spec: &mut LoadBalancerConfigurationSpec,
    p: &IngressClassParamsSpec,
) -> Result<(), MigrateError> {
    if let Some(subnets) = &p.subnets {
        if !subnets.ids.is_empty() {
            let configs: Vec<SubnetConfiguration> = subnets
                .ids
                .iter()
                .map(|id| SubnetConfiguration {
                    identifier: id.clone(),
                    ..Default::default()
                })
                .collect();
            if spec
                .load_balancer_subnets
                .as_ref()
                .is_some_and(|s| *s != configs)
            {
                return Err(MigrateError::Translate(
                    "conflicting IngressClassParams subnets".into(),
                ));
            }
            spec.load_balancer_subnets = Some(configs);
        } else if !subnets.tags.is_empty() {
            if spec
                .load_balancer_subnets_selector
                .as_ref()
                .is_some_and(|s| *s != subnets.tags)
            {
                return Err(MigrateError::Translate(
                    "conflicting IngressClassParams subnet selectors".into(),
                ));
            }
            spec.load_balancer_subnets_selector = Some(subnets.tags.clone());
        }
    }
    Ok(())
}

/// Security-group prefix lists and the WAFv2 ACL.
fn apply_prefix_lists_and_waf(
    spec: &mut LoadBalancerConfigurationSpec,
    p: &IngressClassParamsSpec,
) -> Result<(), MigrateError> {
    let prefix_lists = if !p.prefix_lists_ids.is_empty() {
        Some(&p.prefix_lists_ids)
    } else if !p.prefix_lists_ids_legacy.is_empty() {
        Some(&p.prefix_lists_ids_legacy)
    } else {
        None
    };
    if let Some(pl) = prefix_lists {
        if spec
            .security_group_prefixes
            .as_ref()
            .is_some_and(|s| s != pl)
        {
            return Err(MigrateError::Translate(
                "conflicting IngressClassParams prefix-lists".into(),
            ));
        }
        spec.security_group_prefixes = Some(pl.clone());
    }
    let acl = if !p.wafv2_acl_arn.is_empty() {
        Some(&p.wafv2_acl_arn)
    } else if !p.wafv2_acl_name.is_empty() {
        Some(&p.wafv2_acl_name)
    } else {
        None
    };
    if let Some(acl) = acl {
        if let Some(existing) = &spec.waf_v2 {
            if existing.web_acl != *acl {
                return Err(conflict("wafv2-acl", &existing.web_acl, acl));
            }
        }
        spec.waf_v2 = Some(WafV2Configuration {
            web_acl: acl.clone(),
        });
    }
    Ok(())
}

/// Minimum capacity and the IPv4 IPAM pool.
fn apply_capacity_and_ipam(
    spec: &mut LoadBalancerConfigurationSpec,
    p: &IngressClassParamsSpec,
) -> Result<(), MigrateError> {
    if let Some(cap) = &p.minimum_load_balancer_capacity {
        if let Some(existing) = &spec.minimum_load_balancer_capacity {
            if existing.capacity_units != cap.capacity_units {
                return Err(MigrateError::Translate(format!(
                    "conflicting IngressClassParams minimum-load-balancer-capacity: {} vs {}",
                    existing.capacity_units, cap.capacity_units
                )));
            }
        }
        spec.minimum_load_balancer_capacity = Some(MinimumLoadBalancerCapacity {
            capacity_units: cap.capacity_units,
        });
    }
    if let Some(pool) = p
        .ipam_configuration
        .as_ref()
        .and_then(|c| c.ipv4_ipam_pool_id.as_ref())
    {
        if let Some(existing) = &spec.ipv4_ipam_pool_id {
            if existing != pool {
                return Err(conflict("ipam-ipv4-pool-id", existing, pool));
            }
        }
        spec.ipv4_ipam_pool_id = Some(pool.clone());
    }
    Ok(())
}

/// The listeners' attributes, on the listener configurations with their protocol and port.
fn apply_listener_attributes(
    spec: &mut LoadBalancerConfigurationSpec,
    p: &IngressClassParamsSpec,
) -> Result<(), MigrateError> {
    if !p.listeners.is_empty() {
        if let Some(lcs) = spec.listener_configurations.as_mut() {
            for l in &p.listeners {
                let protocol = l.protocol.as_ref().map(name_of).unwrap_or_default();
                let key = format!("{protocol}:{}", l.port.unwrap_or(0));
                for lc in lcs.iter_mut().filter(|lc| lc.protocol_port == key) {
                    for attr in &l.listener_attributes {
                        let existing = lc
                            .listener_attributes
                            .iter()
                            .find(|e| e.key == attr.key)
                            .map(|e| e.value.clone());
                        match existing {
                            Some(existing) if existing != attr.value => {
                                return Err(MigrateError::Translate(format!(
                                    "conflicting IngressClassParams listener-attribute {} on {key}: {} vs {}",
                                    go_quote(&attr.key),
                                    go_quote(&existing),
                                    go_quote(&attr.value)
                                )))
                            }
                            Some(_) => {}
                            None => lc.listener_attributes.push(KeyValue {
                                key: attr.key.clone(),
                                value: attr.value.clone(),
                            }),
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// The merged IngressClassParams spec over the annotations' (IngressClassParams win).
pub fn apply_icp_spec_override(
    dst: &mut LoadBalancerConfigurationSpec,
    src: &LoadBalancerConfigurationSpec,
) {
    if src.scheme.is_some() {
        dst.scheme = src.scheme;
    }
    if src.ip_address_type.is_some() {
        dst.ip_address_type = src.ip_address_type;
    }
    if src.load_balancer_name.is_some() {
        dst.load_balancer_name = src.load_balancer_name.clone();
    }
    if src.source_ranges.is_some() {
        dst.source_ranges = src.source_ranges.clone();
    }
    if let Some(tags) = &src.tags {
        let merged = dst.tags.get_or_insert_with(Default::default);
        for (k, v) in tags {
            merged.insert(k.clone(), v.clone());
        }
    }
    if !src.load_balancer_attributes.is_empty() {
        dst.load_balancer_attributes = src.load_balancer_attributes.clone();
    }
    if src.load_balancer_subnets.is_some() {
        dst.load_balancer_subnets = src.load_balancer_subnets.clone();
    }
    if src.load_balancer_subnets_selector.is_some() {
        dst.load_balancer_subnets_selector = src.load_balancer_subnets_selector.clone();
    }
    if src.security_group_prefixes.is_some() {
        dst.security_group_prefixes = src.security_group_prefixes.clone();
    }
    if src.waf_v2.is_some() {
        dst.waf_v2 = src.waf_v2.clone();
    }
    if src.minimum_load_balancer_capacity.is_some() {
        dst.minimum_load_balancer_capacity = src.minimum_load_balancer_capacity.clone();
    }
    if src.ipv4_ipam_pool_id.is_some() {
        dst.ipv4_ipam_pool_id = src.ipv4_ipam_pool_id.clone();
    }
    if src.listener_configurations.is_some() {
        dst.listener_configurations = src.listener_configurations.clone();
    }
}

/// IngressClassParams' target type and tags over a target group's settings.
pub fn apply_ingress_class_params_to_tg_props(
    props: &mut TargetGroupProps,
    icp: &IngressClassParams,
) {
    if let Some(tt) = &icp.spec.target_type {
        props.target_type = same_name(tt);
    }
    if !icp.spec.tags.is_empty() {
        let tags = props.tags.get_or_insert_with(Default::default);
        for t in &icp.spec.tags {
            tags.insert(t.key.clone(), t.value.clone());
        }
    }
}

/// The SSL redirect port: the IngressClassParams' when it sets a valid one, else the
/// annotation's.
pub fn resolve_ssl_redirect_port(
    a: &AnnotationMap,
    icp: Option<&IngressClassParams>,
) -> Option<i32> {
    if let Some(icp) = icp.filter(|i| !i.spec.ssl_redirect_port.is_empty()) {
        if let Ok(p) = ann::go_parse_int(&icp.spec.ssl_redirect_port, 32) {
            return Some(p as i32);
        }
    }
    get_int32(a, suffix::SSL_REDIRECT)
}
