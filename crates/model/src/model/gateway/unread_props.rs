//! Warnings for TargetGroupConfiguration fields a built target group did not take (upstream
//! accepts and ignores them): `ipAddressType` (the Service's IP families decide),
//! `protocolVersion` where the version is fixed, health-check matcher codes and path of another
//! kind of check, and `nodeSelector` on `ip` targets. Judged against the target group as built,
//! so a field whose value was used anyway says nothing.

use crate::crd::gateway::target_group_configuration::{
    TargetGroupProps, TgIpAddressType, TgProtocolVersion,
};
use crate::model::types::{
    Protocol, ProtocolVersion, TargetGroup, TargetGroupBindingResource, TargetType, Warning,
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
        if set && !tg.health_check.matcher.contains_key(key) {
            out.push((field, health_check_kind(tg)));
        }
    }
    let path = hc.is_some_and(|h| h.health_check_path.is_some());
    if path && tg.health_check.protocol == Protocol::Tcp {
        out.push(("healthCheckConfig.healthCheckPath", health_check_kind(tg)));
    }
    if props.node_selector.is_some() && tg.target_type == TargetType::Ip {
        out.push(("nodeSelector", "ip targets are pods, not nodes".to_string()));
    }
    out
}

/// What kind of health check `tg` has, as the reason a field of another kind is unused.
fn health_check_kind(tg: &TargetGroup) -> String {
    if tg.health_check.protocol == Protocol::Tcp {
        "the target group's health check is TCP".into()
    } else if tg.protocol_version == Some(ProtocolVersion::GRPC) {
        "the target group is GRPC, its health check matches grpcCode".into()
    } else {
        "the target group is not GRPC, its health check matches httpCode".into()
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
        if !warnings.iter().any(|w| w.message == message) {
            warnings.push(Warning {
                ingress: None,
                annotation: Some(field.into()),
                message,
            });
        }
    }
}
