//! TargetGroupConfigurations (`translate/tg_config.go`): a Service's target group settings from
//! the Ingress annotations with the Service's over them — as `defaultConfiguration` when one
//! Ingress uses the Service, one `routeConfigurations` entry per Ingress's HTTPRoute when
//! several do (each Ingress may set them differently).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::annotations::{get_bool, get_int32, get_string, get_string_map};
use super::icp::apply_ingress_class_params_to_tg_props;
use super::lb_config::dropped;
use super::names::tg_config_name;
use super::pre_routing::enum_value;
use super::service_ref::ServiceRef;
use super::MIGRATION_TAG_KEY;
use crate::annotations::{suffix, AnnotationMap};
use crate::crd::gateway::target_group_configuration::{
    HealthCheckConfiguration, HealthCheckMatcher, Reference, RouteConfiguration, RouteIdentifier,
    TargetGroupProps,
};
use crate::crd::gateway::{KeyValue, TargetGroupConfiguration, TargetGroupConfigurationSpec};
use crate::crd::IngressClassParams;

/// One Ingress's use of a Service port.
#[derive(Debug, Clone)]
pub struct TgcEntry {
    pub svc_ref: ServiceRef,
    /// The Ingress's annotations with the Service's over them.
    pub annotations: AnnotationMap,
    pub migration_tag: String,
    /// The Ingress's HTTPRoute.
    pub route_name: String,
    /// The IngressClassParams of the Ingress's group.
    pub icps: Vec<IngressClassParams>,
}

fn new_tgc(svc: &ServiceRef, spec: TargetGroupConfigurationSpec) -> TargetGroupConfiguration {
    let mut tgc = TargetGroupConfiguration::new(&tg_config_name(&svc.namespace, &svc.name), spec);
    tgc.metadata.namespace = Some(svc.namespace.clone());
    tgc
}

fn with_migration_tag(props: &mut TargetGroupProps, tag: &str) {
    if !tag.is_empty() {
        props
            .tags
            .get_or_insert_with(Default::default)
            .insert(MIGRATION_TAG_KEY.into(), tag.into());
    }
}

/// The configuration of one Service used by one Ingress; `None` when no annotation sets a
/// target group setting.
pub fn build_target_group_config(
    svc: &ServiceRef,
    annotations: &AnnotationMap,
    migration_tag: &str,
    notes: &mut Vec<String>,
) -> Option<TargetGroupConfiguration> {
    let mut props = build_target_group_props(annotations, &svc.name, svc.port, notes);
    if props.is_empty() {
        return None;
    }
    with_migration_tag(&mut props, migration_tag);
    Some(new_tgc(
        svc,
        TargetGroupConfigurationSpec {
            target_reference: Some(Reference {
                group: None,
                kind: None,
                name: svc.name.clone(),
            }),
            default_configuration: props,
            route_configurations: Vec::new(),
        },
    ))
}

/// The configuration of one Service port from every Ingress that uses it.
pub fn build_target_group_config_from_entries(
    entries: &[TgcEntry],
    notes: &mut Vec<String>,
) -> Option<TargetGroupConfiguration> {
    let first = entries.first()?;
    let svc = &first.svc_ref;
    if entries.len() == 1 {
        let mut tgc =
            build_target_group_config(svc, &first.annotations, &first.migration_tag, notes)?;
        for icp in &first.icps {
            apply_ingress_class_params_to_tg_props(&mut tgc.spec.default_configuration, icp);
        }
        return Some(tgc);
    }
    let mut route_configurations = Vec::new();
    for e in entries {
        let mut props = build_target_group_props(&e.annotations, &svc.name, svc.port, notes);
        for icp in &e.icps {
            apply_ingress_class_params_to_tg_props(&mut props, icp);
        }
        with_migration_tag(&mut props, &e.migration_tag);
        route_configurations.push(RouteConfiguration {
            route_identifier: RouteIdentifier {
                kind: "HTTPRoute".into(),
                namespace: svc.namespace.clone(),
                name: e.route_name.clone(),
            },
            target_group_props: props,
        });
    }
    Some(new_tgc(
        svc,
        TargetGroupConfigurationSpec {
            target_reference: Some(Reference {
                group: None,
                kind: None,
                name: svc.name.clone(),
            }),
            default_configuration: TargetGroupProps::default(),
            route_configurations,
        },
    ))
}

/// The target group settings the annotations make.
pub fn build_target_group_props(
    a: &AnnotationMap,
    service: &str,
    port: i32,
    notes: &mut Vec<String>,
) -> TargetGroupProps {
    let mut props = TargetGroupProps::default();
    let target_type = get_string(a, suffix::TARGET_TYPE);
    if !target_type.is_empty() {
        props.target_type = enum_value(&target_type);
        if props.target_type.is_none() {
            dropped(
                notes,
                suffix::TARGET_TYPE,
                &target_type,
                "TargetGroupConfiguration targetType",
            );
        }
    }
    let protocol = get_string(a, suffix::BACKEND_PROTOCOL);
    if !protocol.is_empty() {
        props.protocol = enum_value(&protocol);
        if props.protocol.is_none() {
            dropped(
                notes,
                suffix::BACKEND_PROTOCOL,
                &protocol,
                "TargetGroupConfiguration protocol",
            );
        }
    }
    let version = get_string(a, suffix::BACKEND_PROTOCOL_VERSION);
    if !version.is_empty() {
        props.protocol_version = enum_value(&version);
        if props.protocol_version.is_none() {
            dropped(
                notes,
                suffix::BACKEND_PROTOCOL_VERSION,
                &version,
                "TargetGroupConfiguration protocolVersion",
            );
        }
    }
    props.target_group_attributes = get_string_map(a, suffix::TARGET_GROUP_ATTRIBUTES)
        .into_iter()
        .map(|(key, value)| KeyValue { key, value })
        .collect();
    let labels = get_string_map(a, suffix::TARGET_NODE_LABELS);
    if !labels.is_empty() {
        props.node_selector = Some(LabelSelector {
            match_labels: Some(labels),
            match_expressions: None,
        });
    }
    if let Some(v) = get_bool(a, suffix::MULTI_CLUSTER_TARGET_GROUP) {
        props.enable_multi_cluster = Some(v);
    }
    let tags = get_string_map(a, suffix::TAGS);
    if !tags.is_empty() {
        props.tags = Some(tags);
    }
    if !service.is_empty() && port > 0 {
        let sfx = format!("{}.{service}.{port}", suffix::TARGET_CONTROL_PORT);
        if let Some(v) = get_int32(a, &sfx) {
            props.target_control_port = Some(v);
        }
    }
    props.health_check_config = build_health_check_config(a, notes);
    props
}

/// The `healthcheck-*` and `success-codes` annotations; `None` when none is set.
pub fn build_health_check_config(
    a: &AnnotationMap,
    notes: &mut Vec<String>,
) -> Option<HealthCheckConfiguration> {
    let mut hc = HealthCheckConfiguration::default();
    let mut any = false;
    let port = get_string(a, suffix::HEALTHCHECK_PORT);
    if !port.is_empty() {
        hc.health_check_port = Some(port);
        any = true;
    }
    let protocol = get_string(a, suffix::HEALTHCHECK_PROTOCOL);
    if !protocol.is_empty() {
        hc.health_check_protocol = enum_value(&protocol);
        if hc.health_check_protocol.is_none() {
            dropped(
                notes,
                suffix::HEALTHCHECK_PROTOCOL,
                &protocol,
                "TargetGroupConfiguration healthCheckProtocol",
            );
        }
        any = true;
    }
    let path = get_string(a, suffix::HEALTHCHECK_PATH);
    if !path.is_empty() {
        hc.health_check_path = Some(path);
        any = true;
    }
    for (sfx, field) in [
        (
            suffix::HEALTHCHECK_INTERVAL_SECONDS,
            &mut hc.health_check_interval,
        ),
        (
            suffix::HEALTHCHECK_TIMEOUT_SECONDS,
            &mut hc.health_check_timeout,
        ),
        (
            suffix::HEALTHY_THRESHOLD_COUNT,
            &mut hc.healthy_threshold_count,
        ),
        (
            suffix::UNHEALTHY_THRESHOLD_COUNT,
            &mut hc.unhealthy_threshold_count,
        ),
    ] {
        if let Some(v) = get_int32(a, sfx) {
            *field = Some(v);
            any = true;
        }
    }
    let codes = get_string(a, suffix::SUCCESS_CODES);
    if !codes.is_empty() {
        hc.matcher = Some(HealthCheckMatcher {
            http_code: Some(codes),
            grpc_code: None,
        });
        any = true;
    }
    any.then_some(hc)
}
