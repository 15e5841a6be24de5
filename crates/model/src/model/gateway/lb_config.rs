//! The LoadBalancerConfiguration a Gateway's stack is built from (upstream's
//! `lb_config_merger.go`): the GatewayClass's and the Gateway's merged field-wise, and the fields
//! this build cannot act on yet refused by name.

use std::collections::BTreeMap;

use super::GatewayInputs;
use crate::crd::gateway::load_balancer_configuration::{
    LoadBalancerConfigurationSpec, MergingMode,
};

/// The class's and the Gateway's LoadBalancerConfiguration merged field-wise: the class's wins
/// unless its `mergingMode` is `prefer-gateway`; tags and attributes merge per key.
pub fn merged_config(inputs: &GatewayInputs<'_>) -> LoadBalancerConfigurationSpec {
    let class = inputs.class_config.map(|c| c.spec.clone());
    let gateway = inputs.gateway_config.map(|c| c.spec.clone());
    let (low, high) = match (class, gateway) {
        (None, None) => return LoadBalancerConfigurationSpec::default(),
        (Some(c), None) => return c,
        (None, Some(g)) => return g,
        (Some(c), Some(g)) => match c.merging_mode.unwrap_or_default() {
            MergingMode::PreferGateway => (c, g),
            MergingMode::PreferGatewayClass => (g, c),
        },
    };
    let mut out = low;
    macro_rules! take {
        ($($f:ident),*) => { $( if high.$f.is_some() { out.$f = high.$f.clone(); } )* };
    }
    take!(
        load_balancer_name,
        scheme,
        ip_address_type,
        enforce_security_group_inbound_rules_on_private_link_traffic,
        customer_owned_ipv4_pool,
        ipv4_ipam_pool_id,
        load_balancer_subnets,
        load_balancer_subnets_selector,
        disable_security_group,
        security_groups,
        security_group_prefixes,
        source_ranges,
        enable_icmp,
        manage_backend_security_group_rules,
        waf_v2,
        shield_configuration,
        default_target_group_configuration
    );
    if let Some(t) = &high.tags {
        out.tags.get_or_insert_with(BTreeMap::new).extend(t.clone());
    }
    let mut attrs: BTreeMap<String, String> = out
        .load_balancer_attributes
        .iter()
        .map(|a| (a.key.clone(), a.value.clone()))
        .collect();
    attrs.extend(
        high.load_balancer_attributes
            .iter()
            .map(|a| (a.key.clone(), a.value.clone())),
    );
    out.load_balancer_attributes = attrs
        .into_iter()
        .map(|(key, value)| crate::crd::gateway::KeyValue { key, value })
        .collect();
    let mut listeners: BTreeMap<String, _> = BTreeMap::new();
    for l in out
        .listener_configurations
        .iter()
        .flatten()
        .chain(high.listener_configurations.iter().flatten())
    {
        listeners.insert(l.protocol_port.clone(), l.clone());
    }
    out.listener_configurations =
        (!listeners.is_empty()).then(|| listeners.into_values().collect());
    // Upstream's merger drops the capacity reservation whenever both sides exist, and does not
    // carry the merging mode (it only steers this merge).
    out.minimum_load_balancer_capacity = None;
    out.merging_mode = None;
    out
}

/// Refuses what this build cannot act on yet, with a Gateway error naming it, instead of
/// building a stack without it.
pub(super) fn check_supported(lbc: &LoadBalancerConfigurationSpec) -> Result<(), String> {
    let unsupported = [
        ("securityGroups", lbc.security_groups.is_some()),
        (
            "loadBalancerSubnetsSelector",
            lbc.load_balancer_subnets_selector.is_some(),
        ),
        (
            "defaultTargetGroupConfiguration",
            lbc.default_target_group_configuration.is_some(),
        ),
        (
            "customerOwnedIpv4Pool",
            lbc.customer_owned_ipv4_pool.is_some(),
        ),
        ("ipv4IPAMPoolId", lbc.ipv4_ipam_pool_id.is_some()),
    ];
    if let Some((field, _)) = unsupported.iter().find(|(_, set)| *set) {
        return Err(format!(
            "LoadBalancerConfiguration field {field} is not supported by this build yet"
        ));
    }
    Ok(())
}
