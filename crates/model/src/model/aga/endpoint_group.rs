//! The endpoint groups step (upstream's `model_build_endpoint_group.go`): per listener, one group
//! per spec group (`EndpointGroup-<listener>-<group>`) with its region (the cluster's when
//! unset), traffic dial, checked port overrides and the endpoints that loaded; then the checks
//! across listeners (an override's endpoint port outside every listener's ranges, and used by
//! one listener only).

use std::collections::BTreeMap;

use super::endpoints::{endpoint_key, LoadedEndpoint, LoadedEndpointStatus};
use super::ports::is_port_in_ranges;
use crate::crd::global_accelerator::{GlobalAcceleratorEndpointGroup, GlobalAcceleratorListener};
use crate::model::types::aga::{
    AgaListener, EndpointConfiguration, EndpointGroup, PortOverride, PortRange,
};

/// The endpoint groups of each listener, in listener order; `configs` are the spec listeners
/// the listeners were built from (after auto-discovery).
pub fn build_endpoint_groups(
    cluster_region: &str,
    ga_namespace: &str,
    listeners: &[AgaListener],
    configs: &[GlobalAcceleratorListener],
    loaded: &[LoadedEndpoint],
) -> Result<Vec<Vec<EndpointGroup>>, String> {
    let mut all = Vec::with_capacity(listeners.len());
    for (i, (listener, config)) in listeners.iter().zip(configs).enumerate() {
        let mut groups = Vec::new();
        for (j, group) in config.endpoint_groups.iter().flatten().enumerate() {
            groups.push(EndpointGroup {
                id: format!("EndpointGroup-{i}-{j}"),
                region: endpoint_group_region(cluster_region, group)?,
                traffic_dial_percentage: group.traffic_dial_percentage,
                port_overrides: port_overrides(&listener.port_ranges, group)?,
                endpoint_configurations: endpoint_configurations(ga_namespace, group, loaded),
            });
        }
        all.push(groups);
    }
    let ranges: Vec<(&str, &[PortRange])> = listeners
        .iter()
        .map(|l| (l.id.as_str(), l.port_ranges.as_slice()))
        .collect();
    let overrides: Vec<(&str, &[PortOverride])> = listeners
        .iter()
        .zip(&all)
        .flat_map(|(l, groups)| {
            groups
                .iter()
                .map(move |g| (l.id.as_str(), g.port_overrides.as_slice()))
        })
        .collect();
    check_endpoint_ports_across_listeners(&overrides, &ranges)?;
    Ok(all)
}

/// The group's region, else the cluster's.
pub fn endpoint_group_region(
    cluster_region: &str,
    group: &GlobalAcceleratorEndpointGroup,
) -> Result<String, String> {
    match group.region.as_deref() {
        Some(region) if !region.is_empty() => Ok(region.to_string()),
        _ if !cluster_region.is_empty() => Ok(cluster_region.to_string()),
        _ => Err("region is required for endpoint group but neither specified in the endpoint group nor available from cluster configuration".into()),
    }
}

/// The group's port overrides, each listener port within the listener's ranges and no port used
/// twice in the group.
pub fn port_overrides(
    listener_ranges: &[PortRange],
    group: &GlobalAcceleratorEndpointGroup,
) -> Result<Vec<PortOverride>, String> {
    let overrides: Vec<PortOverride> = group
        .port_overrides
        .iter()
        .flatten()
        .map(|o| PortOverride {
            listener_port: o.listener_port,
            endpoint_port: o.endpoint_port,
        })
        .collect();
    for o in &overrides {
        if !is_port_in_ranges(o.listener_port, listener_ranges) {
            return Err(format!(
                "port override listener port {} is not within any listener port ranges - this will cause AWS Global Accelerator to reject the configuration",
                o.listener_port
            ));
        }
    }
    check_no_duplicate_ports(&overrides)?;
    Ok(overrides)
}

/// No listener port and no endpoint port twice among one group's overrides (upstream's
/// `validateNoDuplicatePorts`, same order of checks).
pub fn check_no_duplicate_ports(overrides: &[PortOverride]) -> Result<(), String> {
    let mut listener_ports = std::collections::BTreeSet::new();
    let mut endpoint_ports = std::collections::BTreeSet::new();
    for o in overrides {
        if !listener_ports.insert(o.listener_port) {
            return Err(format!(
                "duplicate listener port {} in port overrides: each listener port can only be used once in port overrides for an endpoint group",
                o.listener_port
            ));
        }
        if !endpoint_ports.insert(o.endpoint_port) {
            return Err(format!(
                "duplicate endpoint port {} in port overrides: each endpoint port can only be used once in port overrides for an endpoint group",
                o.endpoint_port
            ));
        }
    }
    Ok(())
}

/// An override's endpoint port must lie outside every listener's ranges (`listeners`: id and
/// ranges, in listener order; the first conflict is reported).
pub fn check_endpoint_port_outside_listeners(
    endpoint_port: i32,
    listeners: &[(&str, &[PortRange])],
) -> Result<(), String> {
    for (id, ranges) in listeners {
        if let Some(r) = ranges
            .iter()
            .find(|r| r.from_port <= endpoint_port && endpoint_port <= r.to_port)
        {
            return Err(format!(
                "endpoint port {endpoint_port} conflicts with listener {id} port range {}-{}: endpoint port cannot be included in any listener port range",
                r.from_port, r.to_port
            ));
        }
    }
    Ok(())
}

/// Every override of every group (`groups`: the group's listener id and its overrides) has its
/// endpoint port outside all listeners' ranges, and no endpoint port serves two listeners
/// (upstream's `validateEndpointPortOverridesCrossListeners`).
pub fn check_endpoint_ports_across_listeners(
    groups: &[(&str, &[PortOverride])],
    listeners: &[(&str, &[PortRange])],
) -> Result<(), String> {
    let mut used_by: BTreeMap<i32, &str> = BTreeMap::new();
    for (listener, overrides) in groups {
        for o in overrides.iter() {
            check_endpoint_port_outside_listeners(o.endpoint_port, listeners)?;
            if let Some(other) = used_by.get(&o.endpoint_port) {
                if other != listener {
                    return Err(format!(
                        "duplicate endpoint port {}: the same endpoint port cannot be used in port overrides from different listeners (used in {other} and {listener})",
                        o.endpoint_port
                    ));
                }
            }
            used_by.insert(o.endpoint_port, *listener);
        }
    }
    Ok(())
}

/// The group's endpoints that loaded, in spec order, with their load balancer ARN and weight;
/// the others are left out (the controller warns about them and retries).
pub fn endpoint_configurations(
    ga_namespace: &str,
    group: &GlobalAcceleratorEndpointGroup,
    loaded: &[LoadedEndpoint],
) -> Vec<EndpointConfiguration> {
    // As upstream's map: of two loaded endpoints with one key, the later counts.
    let by_key: BTreeMap<String, &LoadedEndpoint> = loaded.iter().map(|l| (l.key(), l)).collect();
    group
        .endpoints
        .iter()
        .flatten()
        .filter_map(|endpoint| {
            let found = by_key.get(&endpoint_key(endpoint, ga_namespace))?;
            (found.status == LoadedEndpointStatus::Loaded).then(|| EndpointConfiguration {
                endpoint_id: found.arn.clone(),
                weight: Some(found.weight),
                client_ip_preservation_enabled: endpoint.client_ip_preservation_enabled,
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "endpoint_group_tests.rs"]
mod tests;
