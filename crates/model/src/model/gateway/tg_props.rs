//! Which TargetGroupConfiguration props a Gateway backend gets (upstream's
//! `targetgroupconfiguration` resolution): the configuration naming the Service (or Gateway)
//! in its namespace, its defaults with the best-matching route configuration merged over them,
//! over the Gateway's default configuration.

use std::collections::BTreeMap;

use super::routes::RouteView;
use crate::crd::gateway::target_group_configuration::{
    RouteConfiguration, TargetGroupConfiguration, TargetGroupProps,
};

/// The TargetGroupConfiguration props for (route, Service): the first configuration in the
/// Service's namespace whose `targetReference` names it, for the route.
pub fn props_for(
    configs: &[TargetGroupConfiguration],
    route: &RouteView<'_>,
    svc_namespace: &str,
    svc_name: &str,
) -> Option<TargetGroupProps> {
    let tgc = configs.iter().find(|c| {
        c.metadata.namespace.as_deref().unwrap_or("default") == svc_namespace
            && c.spec.target_reference.as_ref().is_some_and(|r| {
                r.name == svc_name
                    && r.kind.as_deref().unwrap_or("Service") == "Service"
                    && r.group.as_deref().unwrap_or("").is_empty()
            })
    })?;
    Some(route_props(tgc, route))
}

/// The TargetGroupConfiguration props for (route, Gateway backend): the first configuration in
/// the Gateway's namespace whose `targetReference` is kind `Gateway` with its name (upstream
/// compares kind and name only).
pub fn props_for_gateway(
    configs: &[TargetGroupConfiguration],
    route: &RouteView<'_>,
    gw_namespace: &str,
    gw_name: &str,
) -> Option<TargetGroupProps> {
    let tgc = configs.iter().find(|c| {
        c.metadata.namespace.as_deref().unwrap_or("default") == gw_namespace
            && c.spec
                .target_reference
                .as_ref()
                .is_some_and(|r| r.name == gw_name && r.kind.as_deref() == Some("Gateway"))
    })?;
    Some(route_props(tgc, route))
}

/// `tgc`'s defaults with its best route configuration for `route` merged over them.
pub fn route_props(tgc: &TargetGroupConfiguration, route: &RouteView<'_>) -> TargetGroupProps {
    let mut props = tgc.spec.default_configuration.clone();
    // Upstream's `mergeWithLongestMatch`: exact kind+namespace+name beats kind+namespace beats
    // kind alone; an identifier with a name matches only exactly (so never without a namespace);
    // among equal ranks the first entry wins.
    let mut best: Option<(u8, &RouteConfiguration)> = None;
    for rc in &tgc.spec.route_configurations {
        let id = &rc.route_identifier;
        let rank = if id.kind != route.kind.as_str() {
            continue;
        } else if !id.name.is_empty() {
            if id.namespace != route.namespace || id.name != route.name {
                continue;
            }
            3
        } else if id.namespace.is_empty() {
            1
        } else if id.namespace == route.namespace {
            2
        } else {
            continue;
        };
        if best.is_none_or(|(b, _)| rank > b) {
            best = Some((rank, rc));
        }
    }
    if let Some((_, rc)) = best {
        merge_props(&mut props, &rc.target_group_props);
    }
    props
}

/// The Service's props over the Gateway's default ones (upstream's `MergeProps`): each field
/// the Service's configuration sets wins, tags and attributes merge per key.
pub fn over_default(
    service: Option<TargetGroupProps>,
    default: Option<&TargetGroupProps>,
) -> Option<TargetGroupProps> {
    let Some(default) = default else {
        return service;
    };
    let mut props = default.clone();
    if let Some(s) = &service {
        merge_props(&mut props, s);
    }
    Some(props)
}

/// Field-wise: set fields of `over` win; tags and attributes merge per key.
pub(super) fn merge_props(base: &mut TargetGroupProps, over: &TargetGroupProps) {
    macro_rules! take {
        ($($f:ident),*) => { $( if over.$f.is_some() { base.$f = over.$f.clone(); } )* };
    }
    take!(
        target_group_name,
        ip_address_type,
        health_check_config,
        node_selector,
        target_type,
        protocol,
        protocol_version,
        target_control_port,
        enable_multi_cluster
    );
    let mut attrs: BTreeMap<String, String> = base
        .target_group_attributes
        .iter()
        .map(|a| (a.key.clone(), a.value.clone()))
        .collect();
    attrs.extend(
        over.target_group_attributes
            .iter()
            .map(|a| (a.key.clone(), a.value.clone())),
    );
    base.target_group_attributes = attrs
        .into_iter()
        .map(|(key, value)| crate::crd::gateway::KeyValue { key, value })
        .collect();
    if let Some(t) = &over.tags {
        base.tags
            .get_or_insert_with(BTreeMap::new)
            .extend(t.clone());
    }
}
