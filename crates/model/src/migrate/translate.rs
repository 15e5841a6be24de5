//! The translation (`translate/translate.go`): per IngressGroup a Gateway and its
//! LoadBalancerConfiguration (annotations, then IngressClassParams over them), an ssl-redirect
//! route per HTTP listener, each member's routes and ListenerRuleConfigurations (tagged with
//! the member's tags and where it came from); then one TargetGroupConfiguration per Service
//! port, from every Ingress that uses it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};

use super::annotations::{get_string_map, ListenPort};
use super::gateway::build_gateway;
use super::group::{
    build_member_parent_refs, class_name, merge_group_lb_annotations, merge_group_listen_ports,
    partition_by_group, resolve_group_icps, resolve_group_ssl_redirect,
};
use super::httproute::{build_http_routes, build_ssl_redirect_route};
use super::icp::{apply_icp_spec_override, apply_ingress_class_params_to_lb_config};
use super::lb_config::build_load_balancer_config_resource;
use super::names::{
    gateway_name, group_gateway_name, group_lb_config_name, http_route_name, lb_config_name,
    section_name,
};
use super::objects::{HttpRoute, MigratedGateway};
use super::tg_config::{build_target_group_config_from_entries, TgcEntry};
use super::unsupported::{annotation_warnings, group_member_warnings, icp_warnings};
use super::{
    annotations_of, go_quote, key_of, warn_cross_namespace_group, InputResources, MigrateError,
    OutputResources, MIGRATION_TAG_KEY, PROTOCOL_HTTP,
};
use crate::annotations::{suffix, AnnotationMap};
use crate::crd::gateway::{LoadBalancerConfiguration, LoadBalancerConfigurationSpec};
use crate::crd::IngressClassParams;

/// Translates everything `input` holds (namespaces already defaulted).
pub fn translate(input: &InputResources) -> Result<OutputResources, MigrateError> {
    let mut out = OutputResources::new();
    let services = build_service_map(&input.services);
    let icp_by_class =
        build_ingress_class_params_map(&input.ingress_classes, &input.ingress_class_params);
    // What the translation cannot carry is said before anything else about it.
    for ing in &input.ingresses {
        out.warnings.extend(annotation_warnings(ing, &services));
    }
    let mut tgc_entries: BTreeMap<String, Vec<TgcEntry>> = BTreeMap::new();
    let mut notes = Vec::new();
    let mut warned_icps = std::collections::BTreeSet::new();
    for group in partition_by_group(&input.ingresses) {
        let (gw_name, lbc_name, lb_tag) = if group.is_explicit {
            (
                group_gateway_name(&group.name),
                group_lb_config_name(&group.name),
                format!("ingress-group/{}", group.name),
            )
        } else {
            (
                gateway_name(&group.namespace, &group.name),
                lb_config_name(&group.namespace, &group.name),
                format!("ingress/{}/{}", group.namespace, group.name),
            )
        };
        if group.cross_namespace {
            out.warnings.push(warn_cross_namespace_group(&group.name));
        }
        out.warnings.extend(group_member_warnings(&group.members));
        let in_group = |e: MigrateError, step: &str| {
            e.context(&format!(
                "error in {step} for group {}",
                go_quote(&group.name)
            ))
        };
        let merged = merge_group_lb_annotations(&group.members)
            .map_err(|e| in_group(e, "mergeGroupLBAnnotations"))?;
        let (all_ports, per_member_ports) = merge_group_listen_ports(&group.members)
            .map_err(|e| in_group(e, "mergeGroupListenPorts"))?;
        let icps = resolve_group_icps(&group.members, &icp_by_class);
        for icp in &icps {
            if warned_icps.insert(icp.metadata.name.clone().unwrap_or_default()) {
                out.warnings.extend(icp_warnings(icp));
            }
        }
        let ssl_redirect = resolve_group_ssl_redirect(&group.members, &icp_by_class)
            .map_err(|e| in_group(e, "resolveGroupSSLRedirect"))?;

        let lb_config = group_lb_config(
            (&lbc_name, &group.namespace, &group.name),
            &merged,
            &all_ports,
            &lb_tag,
            &icps,
            &mut notes,
        )?;
        if let Some(c) = &lb_config {
            out.load_balancer_configurations.push(c.clone());
        }
        let cross_ns_name = if group.cross_namespace {
            group.name.as_str()
        } else {
            ""
        };
        out.gateways.push(build_gateway(
            &gw_name,
            &group.namespace,
            lb_config.as_ref(),
            &all_ports,
            cross_ns_name,
        ));
        if let Some(port) = ssl_redirect {
            out.http_routes.extend(ssl_redirect_routes(
                &group.namespace,
                &group.name,
                &gw_name,
                &all_ports,
                port,
            ));
        }
        let mut hostnames = Vec::new();
        for ing in &group.members {
            let ns = ing.metadata.namespace.clone().unwrap_or_default();
            let name = ing.metadata.name.clone().unwrap_or_default();
            let member_ports = per_member_ports
                .get(&key_of(&ing.metadata))
                .cloned()
                .unwrap_or_default();
            let parent_refs = build_member_parent_refs(
                &gw_name,
                &group.namespace,
                &ns,
                &member_ports,
                ssl_redirect,
            );
            let annotations = annotations_of(&ing.metadata);
            let user_tags = resolve_member_user_tags(ing, &annotations, &icp_by_class);
            let built = build_http_routes(ing, &ns, &parent_refs, &services, &user_tags)?;
            for r in &built.routes {
                hostnames.extend(r.spec.hostnames.iter().cloned());
            }
            out.http_routes.extend(built.routes);
            out.warnings.extend(built.warnings);
            let member_tag = format!("ingress/{ns}/{name}");
            for mut lrc in built.listener_rule_configurations {
                let tags = lrc.spec.tags.get_or_insert_with(BTreeMap::new);
                for (k, v) in &user_tags {
                    tags.insert(k.clone(), v.clone());
                }
                tags.insert(MIGRATION_TAG_KEY.into(), member_tag.clone());
                out.listener_rule_configurations.push(lrc);
            }
            for svc_ref in built.service_refs {
                let tg_annotations = merge_tg_annotations(
                    &annotations,
                    &services,
                    &svc_ref.namespace,
                    &svc_ref.name,
                );
                tgc_entries
                    .entry(svc_ref.key())
                    .or_default()
                    .push(TgcEntry {
                        svc_ref,
                        annotations: tg_annotations,
                        migration_tag: member_tag.clone(),
                        route_name: http_route_name(&ns, &name),
                        icps: icps.iter().map(|i| (*i).clone()).collect(),
                    });
            }
        }
        hostnames.sort();
        hostnames.dedup();
        out.groups.push(MigratedGateway {
            group: group.name.clone(),
            explicit: group.is_explicit,
            namespace: group.namespace.clone(),
            gateway: gw_name.clone(),
            members: group.members.iter().map(|m| key_of(&m.metadata)).collect(),
            hostnames,
        });
    }
    for entries in tgc_entries.values() {
        if let Some(tgc) = build_target_group_config_from_entries(entries, &mut notes) {
            out.target_group_configurations.push(tgc);
        }
    }
    out.warnings.extend(notes);
    Ok(out)
}

/// The group's LoadBalancerConfiguration: from its merged annotations, with its
/// IngressClassParams merged among themselves first (a conflict is an error), then over them.
fn group_lb_config(
    (lbc_name, namespace, group_name): (&str, &str, &str),
    merged: &AnnotationMap,
    all_ports: &[ListenPort],
    lb_tag: &str,
    icps: &[&IngressClassParams],
    notes: &mut Vec<String>,
) -> Result<Option<LoadBalancerConfiguration>, MigrateError> {
    let mut lb_config =
        build_load_balancer_config_resource(lbc_name, namespace, merged, all_ports, lb_tag, notes);
    if !icps.is_empty() {
        let lbc = lb_config.get_or_insert_with(|| {
            let mut c =
                LoadBalancerConfiguration::new(lbc_name, LoadBalancerConfigurationSpec::default());
            c.metadata.namespace = Some(namespace.to_string());
            c
        });
        let mut from_icps = LoadBalancerConfigurationSpec::default();
        for icp in icps {
            apply_ingress_class_params_to_lb_config(&mut from_icps, icp)
                .map_err(|e| e.context(&format!("group {}", go_quote(group_name))))?;
        }
        apply_icp_spec_override(&mut lbc.spec, &from_icps);
    }
    Ok(lb_config)
}

/// The routes that redirect each HTTP listener of the group to HTTPS `port`.
fn ssl_redirect_routes(
    namespace: &str,
    group_name: &str,
    gw_name: &str,
    all_ports: &[ListenPort],
    port: i32,
) -> Vec<HttpRoute> {
    all_ports
        .iter()
        .filter(|p| p.protocol.eq_ignore_ascii_case(PROTOCOL_HTTP))
        .map(|lp| {
            build_ssl_redirect_route(
                namespace,
                group_name,
                gw_name,
                &section_name(&lp.protocol, lp.port),
                port,
            )
        })
        .collect()
}

/// A member's tags: its `tags` annotation with its IngressClassParams' tags over it.
pub fn resolve_member_user_tags(
    ing: &Ingress,
    annotations: &AnnotationMap,
    icp_by_class: &BTreeMap<String, &IngressClassParams>,
) -> BTreeMap<String, String> {
    let mut tags = get_string_map(annotations, suffix::TAGS);
    if let Some(icp) = class_name(ing).and_then(|c| icp_by_class.get(&c).copied()) {
        for t in &icp.spec.tags {
            tags.insert(t.key.clone(), t.value.clone());
        }
    }
    tags
}

/// The Ingress's annotations with the Service's over them (a Service's target group
/// annotations win).
pub fn merge_tg_annotations(
    ingress: &AnnotationMap,
    services: &BTreeMap<String, Service>,
    namespace: &str,
    service: &str,
) -> AnnotationMap {
    let mut merged = ingress.clone();
    if let Some(svc) = services.get(&format!("{namespace}/{service}")) {
        for (k, v) in svc.metadata.annotations.iter().flatten() {
            merged.insert(k.clone(), v.clone());
        }
    }
    merged
}

/// `ns/name` → Service.
pub fn build_service_map(services: &[Service]) -> BTreeMap<String, Service> {
    services
        .iter()
        .map(|s| (key_of(&s.metadata), s.clone()))
        .collect()
}

/// IngressClass name → the IngressClassParams its `parameters` name.
pub fn build_ingress_class_params_map<'a>(
    classes: &[IngressClass],
    params: &'a [IngressClassParams],
) -> BTreeMap<String, &'a IngressClassParams> {
    let mut out = BTreeMap::new();
    for class in classes {
        let Some(p) = class.spec.as_ref().and_then(|s| s.parameters.as_ref()) else {
            continue;
        };
        if p.kind != "IngressClassParams" {
            continue;
        }
        if let Some(icp) = params
            .iter()
            .find(|i| i.metadata.name.as_deref() == Some(p.name.as_str()))
        {
            out.insert(class.metadata.name.clone().unwrap_or_default(), icp);
        }
    }
    out
}
