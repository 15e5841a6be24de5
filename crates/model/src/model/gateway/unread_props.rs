//! Warnings for TargetGroupConfiguration fields a built target group did not take (upstream
//! accepts and ignores them): `ipAddressType` (the Service's IP families decide),
//! `protocolVersion` where the version is fixed, health-check matcher codes and path of another
//! kind of check, and `nodeSelector` on `ip` targets; on a Gateway backend's `alb`-type target
//! group also the binding, target and port fields it has no use for. Judged against the target
//! group as built, so a field whose value was used anyway says nothing.

use super::backends::GatewayBackend;
use crate::crd::gateway::target_group_configuration::{
    TargetGroupProps, TgIpAddressType, TgProtocolVersion,
};
use crate::model::types::{
    AlbTargetGroup, HealthCheck, Protocol, ProtocolVersion, TargetGroup,
    TargetGroupBindingResource, TargetType, Warning,
};

/// Each ignored field of `props` on `tg`, with why (field path, reason).
fn ignored_fields(props: &TargetGroupProps, tg: &TargetGroup) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(ip) = props.ip_address_type {
        let wanted = match ip {
            TgIpAddressType::Ipv4 => "ipv4",
            TgIpAddressType::Ipv6 => "ipv6",
        };
        if wanted != tg.ip_address_type {
            out.push((
                "ipAddressType",
                format!(
                    "the target group is {} from the Service's ipFamilies",
                    tg.ip_address_type
                ),
            ));
        }
    }
    if let Some(v) = props.protocol_version {
        let wanted = match v {
            TgProtocolVersion::Http1 => ProtocolVersion::HTTP1,
            TgProtocolVersion::Http2 => ProtocolVersion::HTTP2,
            TgProtocolVersion::Grpc => ProtocolVersion::GRPC,
        };
        match tg.protocol_version {
            None => out.push((
                "protocolVersion",
                "Network Load Balancer target groups have no protocol version".into(),
            )),
            Some(built) if built != wanted => out.push((
                "protocolVersion",
                format!(
                    "only routes on HTTPS listeners choose a protocol version; this target group is {}",
                    built.as_str()
                ),
            )),
            Some(_) => {}
        }
    }
    let grpc = tg.protocol_version == Some(ProtocolVersion::GRPC);
    out.extend(health_check_fields(props, &tg.health_check, grpc));
    if props.node_selector.is_some() && tg.target_type == TargetType::Ip {
        out.push(("nodeSelector", "ip targets are pods, not nodes".to_string()));
    }
    out
}

/// Health-check fields of `props` the built check `built` does not take: matcher codes of the
/// other kind, a path on a TCP check.
fn health_check_fields(
    props: &TargetGroupProps,
    built: &HealthCheck,
    grpc: bool,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let hc = props.health_check_config.as_ref();
    let matcher = hc.and_then(|h| h.matcher.as_ref());
    for (field, key, set) in [
        (
            "healthCheckConfig.matcher.httpCode",
            "httpCode",
            matcher.is_some_and(|m| m.http_code.is_some()),
        ),
        (
            "healthCheckConfig.matcher.grpcCode",
            "grpcCode",
            matcher.is_some_and(|m| m.grpc_code.is_some()),
        ),
    ] {
        if set && !built.matcher.contains_key(key) {
            out.push((field, health_check_kind(built, grpc)));
        }
    }
    let path = hc.is_some_and(|h| h.health_check_path.is_some());
    if path && built.protocol == Protocol::Tcp {
        let why = health_check_kind(built, grpc);
        out.push(("healthCheckConfig.healthCheckPath", why));
    }
    out
}

/// What kind of health check `built` is, as the reason a field of another kind is unused.
fn health_check_kind(built: &HealthCheck, grpc: bool) -> String {
    if built.protocol == Protocol::Tcp {
        "the target group's health check is TCP".into()
    } else if grpc {
        "the target group is GRPC, its health check matches grpcCode".into()
    } else {
        "the target group is not GRPC, its health check matches httpCode".into()
    }
}

/// Fields of a Gateway backend's props its `alb`-type target group ignores (upstream's
/// `GatewayBackendConfig`): the one target is the other Gateway's ALB, over IPv4, without a
/// binding or a protocol version, health-checked on the traffic port or the backendRef port.
fn ignored_gateway_fields(
    props: &TargetGroupProps,
    tg: &AlbTargetGroup,
) -> Vec<(&'static str, String)> {
    const NO_BINDING: &str =
        "the one target is the other Gateway's ALB, with no TargetGroupBinding";
    let mut out = Vec::new();
    for (field, set) in [
        ("targetType", props.target_type.is_some()),
        ("nodeSelector", props.node_selector.is_some()),
        (
            "enableMultiCluster",
            props.enable_multi_cluster == Some(true),
        ),
    ] {
        if set {
            out.push((field, NO_BINDING.to_string()));
        }
    }
    if props.ip_address_type == Some(TgIpAddressType::Ipv6) {
        out.push((
            "ipAddressType",
            "a Gateway backend is reached over ipv4".into(),
        ));
    }
    if props.protocol_version.is_some() {
        out.push((
            "protocolVersion",
            "Network Load Balancer target groups have no protocol version".into(),
        ));
    }
    let backend_port = tg.target_port.to_string();
    let port = props
        .health_check_config
        .as_ref()
        .and_then(|h| h.health_check_port.as_deref());
    if let Some(p) = port.filter(|p| *p != "traffic-port" && *p != backend_port) {
        out.push((
            "healthCheckConfig.healthCheckPort",
            format!("a Gateway backend is health-checked on the traffic port or the backendRef port ({backend_port}), not {p}"),
        ));
    }
    out.extend(health_check_fields(props, &tg.health_check, false));
    out
}

fn push_once(warnings: &mut Vec<Warning>, field: &str, message: String) {
    if !warnings.iter().any(|w| w.message == message) {
        warnings.push(Warning {
            ingress: None,
            annotation: Some(field.into()),
            message,
        });
    }
}

/// Warnings for the fields of the Service backend's `props` that `tg` (bound by `tgb`) ignores;
/// each said once per target group.
pub(super) fn warn_ignored_target_group_props(
    props: Option<&TargetGroupProps>,
    tg: &TargetGroup,
    tgb: &TargetGroupBindingResource,
    warnings: &mut Vec<Warning>,
) {
    let Some(props) = props else { return };
    for (field, why) in ignored_fields(props, tg) {
        let message = format!(
            "TargetGroupConfiguration of Service {}/{}: {field} is ignored for target group {}: {why}",
            tgb.namespace, tgb.spec.service_name, tg.name
        );
        push_once(warnings, field, message);
    }
}

/// Warnings for the fields of a Gateway backend's `props` that its `alb`-type target group `tg`
/// ignores; each said once per target group.
pub(super) fn warn_ignored_gateway_target_props(
    props: Option<&TargetGroupProps>,
    tg: &AlbTargetGroup,
    gw: &GatewayBackend,
    warnings: &mut Vec<Warning>,
) {
    let Some(props) = props else { return };
    for (field, why) in ignored_gateway_fields(props, tg) {
        let message = format!(
            "TargetGroupConfiguration of Gateway {}/{}: {field} is ignored for target group {}: {why}",
            gw.namespace, gw.name, tg.name
        );
        push_once(warnings, field, message);
    }
}
