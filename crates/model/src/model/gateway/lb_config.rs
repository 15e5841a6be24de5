//! The LoadBalancerConfiguration a Gateway's stack is built from (upstream's
//! `lb_config_merger.go`): the GatewayClass's and the Gateway's merged field-wise, their default
//! TargetGroupConfigurations resolved and merged (`config_resolver.go`) and the fields one load
//! balancer kind reads.

use std::collections::BTreeMap;

use super::listeners::LbKind;
use super::tg_props::merge_props;
use super::GatewayInputs;
use crate::crd::gateway::load_balancer_configuration::{
    LoadBalancerConfigurationSpec, MergingMode,
};
use crate::crd::gateway::{LoadBalancerConfiguration, TargetGroupConfiguration};
use crate::model::types::Warning;

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
    // Per protocol:port as upstream's merger: the high side's last entry, else the low side's
    // first (the CRD allows duplicates).
    let mut listeners: BTreeMap<String, _> = BTreeMap::new();
    for l in out.listener_configurations.iter().flatten() {
        listeners
            .entry(l.protocol_port.clone())
            .or_insert_with(|| l.clone());
    }
    for l in high.listener_configurations.iter().flatten() {
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

/// The TargetGroupConfiguration `lbc`'s `defaultTargetGroupConfiguration` names, in `lbc`'s
/// namespace; a default must not target anything (upstream's `lookUpDefaultTGCByName`).
fn lookup_default<'a>(
    configs: &'a [TargetGroupConfiguration],
    lbc: &LoadBalancerConfiguration,
) -> Result<Option<&'a TargetGroupConfiguration>, String> {
    let Some(r) = &lbc.spec.default_target_group_configuration else {
        return Ok(None);
    };
    let ns = lbc.metadata.namespace.as_deref().unwrap_or("default");
    let tgc = configs
        .iter()
        .find(|c| {
            c.metadata.namespace.as_deref().unwrap_or("default") == ns
                && c.metadata.name.as_deref() == Some(r.name.as_str())
        })
        .ok_or_else(|| {
            format!(
                "targetgroupconfigurations.gateway.k8s.aws \"{}\" not found",
                r.name
            )
        })?;
    if tgc.spec.target_reference.is_some() {
        return Err(format!(
            "TargetGroupConfiguration \"{}\" in namespace \"{ns}\" has targetReference set and cannot be used as a defaultTargetGroupConfiguration — a default TGC must not have targetReference",
            r.name
        ));
    }
    Ok(Some(tgc))
}

/// The default TargetGroupConfiguration of the Gateway's Service backends (upstream's
/// `resolveAndMergeDefaultTGCs`): the class's and the Gateway's defaults, each from its
/// LoadBalancerConfiguration's namespace; with both, the preferred one (class's unless its
/// `mergingMode` is `prefer-gateway`) keeps its route configurations and its default
/// configuration wins field-wise over the other's.
pub fn default_target_group_config(
    inputs: &GatewayInputs<'_>,
) -> Result<Option<TargetGroupConfiguration>, String> {
    let class = match inputs.class_config {
        Some(lbc) => lookup_default(inputs.tg_configs, lbc).map_err(|e| {
            format!("failed to resolve default TargetGroupConfiguration for GatewayClass LBC: {e}")
        })?,
        None => None,
    };
    let gateway = match inputs.gateway_config {
        Some(lbc) => lookup_default(inputs.tg_configs, lbc).map_err(|e| {
            format!(
                "failed to resolve default TargetGroupConfiguration {:?} referenced by Gateway LoadBalancerConfiguration {:?} in namespace {:?}: {e}",
                lbc.spec.default_target_group_configuration.as_ref().map(|r| r.name.as_str()).unwrap_or_default(),
                lbc.metadata.name.as_deref().unwrap_or_default(),
                lbc.metadata.namespace.as_deref().unwrap_or("default"),
            )
        })?,
        None => None,
    };
    let prefer_gateway = inputs
        .class_config
        .and_then(|c| c.spec.merging_mode)
        .is_some_and(|m| m == MergingMode::PreferGateway);
    let (high, low) = match (class, gateway) {
        (None, None) => return Ok(None),
        (Some(one), None) | (None, Some(one)) => return Ok(Some(one.clone())),
        (Some(c), Some(g)) if prefer_gateway => (g, c),
        (Some(c), Some(g)) => (c, g),
    };
    let mut merged = high.clone();
    merged.spec.default_configuration = low.spec.default_configuration.clone();
    merge_props(
        &mut merged.spec.default_configuration,
        &high.spec.default_configuration,
    );
    Ok(Some(merged))
}

/// The load balancer fields only one kind reads (upstream's `addL7Fields` / `addL4Fields`).
pub(super) struct PerKind {
    pub customer_owned_ipv4_pool: Option<String>,
    pub ipv4_ipam_pool_id: Option<String>,
    pub private_link: Option<String>,
}

/// The fields `lb` reads; one set for the other kind is a Warning naming it (upstream ignores
/// it without a word).
pub(super) fn per_kind(
    lbc: &LoadBalancerConfigurationSpec,
    lb: LbKind,
    warnings: &mut Vec<Warning>,
) -> PerKind {
    let private_link = &lbc.enforce_security_group_inbound_rules_on_private_link_traffic;
    let (kept, ignored, made, only) = match lb {
        LbKind::Alb => (
            PerKind {
                customer_owned_ipv4_pool: lbc.customer_owned_ipv4_pool.clone(),
                ipv4_ipam_pool_id: lbc.ipv4_ipam_pool_id.clone(),
                private_link: None,
            },
            vec![(
                "enforceSecurityGroupInboundRulesOnPrivateLinkTraffic",
                private_link.is_some(),
            )],
            "Application",
            "Network",
        ),
        LbKind::Nlb => (
            PerKind {
                customer_owned_ipv4_pool: None,
                ipv4_ipam_pool_id: None,
                private_link: private_link.clone(),
            },
            vec![
                (
                    "customerOwnedIpv4Pool",
                    lbc.customer_owned_ipv4_pool.is_some(),
                ),
                ("ipv4IPAMPoolId", lbc.ipv4_ipam_pool_id.is_some()),
            ],
            "Network",
            "Application",
        ),
    };
    for (field, _) in ignored.iter().filter(|(_, set)| *set) {
        warnings.push(Warning {
            ingress: None,
            annotation: None,
            message: format!("LoadBalancerConfiguration field {field} applies to {only} Load Balancers only; this {made} Load Balancer is made without it"),
        });
    }
    kept
}
