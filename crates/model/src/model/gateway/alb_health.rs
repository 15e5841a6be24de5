//! ALB Gateway target group protocol version and health check (upstream's
//! `buildTargetGroupProtocolVersion` and health-check defaults of `model_build_target_group.go`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ServicePort;

use super::routes::{RouteKind, RouteView};
use crate::crd::gateway::target_group_configuration::{
    HealthCheckProtocol, TargetGroupProps, TgProtocolVersion,
};
use crate::model::types::*;

/// HTTP listener ⇒ HTTP1; HTTPS ⇒ configured, GRPC for GRPCRoutes, HTTP2 for `kubernetes.io/h2c`
/// Service ports, else HTTP1.
pub(super) fn protocol_version(
    listener: Protocol,
    props: Option<&TargetGroupProps>,
    route: &RouteView<'_>,
    sp: &ServicePort,
) -> ProtocolVersion {
    if listener != Protocol::Https {
        return ProtocolVersion::HTTP1;
    }
    match props.and_then(|p| p.protocol_version) {
        Some(TgProtocolVersion::Http1) => return ProtocolVersion::HTTP1,
        Some(TgProtocolVersion::Http2) => return ProtocolVersion::HTTP2,
        Some(TgProtocolVersion::Grpc) => return ProtocolVersion::GRPC,
        None => {}
    }
    if route.kind == RouteKind::Grpc {
        return ProtocolVersion::GRPC;
    }
    if sp.app_protocol.as_deref() == Some("kubernetes.io/h2c") {
        return ProtocolVersion::HTTP2;
    }
    ProtocolVersion::HTTP1
}

/// Gateway defaults: traffic port, the TG protocol, `/` (GRPC `/AWS.ALB/healthcheck`),
/// `200-399` (GRPC `12`), 15 s interval, 5 s timeout, 3 healthy, 3 unhealthy.
pub(super) fn health_check(
    props: Option<&TargetGroupProps>,
    protocol: Protocol,
    version: ProtocolVersion,
) -> HealthCheck {
    let hc = props.and_then(|p| p.health_check_config.as_ref());
    let hc_protocol = match hc.and_then(|h| h.health_check_protocol) {
        None => protocol,
        Some(HealthCheckProtocol::Tcp) => Protocol::Tcp,
        Some(HealthCheckProtocol::Https) => Protocol::Https,
        Some(HealthCheckProtocol::Http) => Protocol::Http,
    };
    let grpc = version == ProtocolVersion::GRPC;
    let (path, matcher) = if hc_protocol == Protocol::Tcp {
        (String::new(), BTreeMap::new())
    } else {
        let path = hc
            .and_then(|h| h.health_check_path.clone())
            .unwrap_or_else(|| if grpc { "/AWS.ALB/healthcheck" } else { "/" }.into());
        let m = hc.and_then(|h| h.matcher.as_ref());
        let matcher = if grpc {
            let code = m
                .and_then(|m| m.grpc_code.clone())
                .unwrap_or_else(|| "12".into());
            BTreeMap::from([("grpcCode".to_string(), code)])
        } else {
            let code = m
                .and_then(|m| m.http_code.clone())
                .unwrap_or_else(|| "200-399".into());
            BTreeMap::from([("httpCode".to_string(), code)])
        };
        (path, matcher)
    };
    HealthCheck {
        port: hc
            .and_then(|h| h.health_check_port.clone())
            .unwrap_or_else(|| "traffic-port".into()),
        protocol: hc_protocol,
        path,
        matcher,
        interval_seconds: hc.and_then(|h| h.health_check_interval).unwrap_or(15),
        timeout_seconds: hc.and_then(|h| h.health_check_timeout).unwrap_or(5),
        healthy_threshold_count: hc.and_then(|h| h.healthy_threshold_count).unwrap_or(3),
        unhealthy_threshold_count: hc.and_then(|h| h.unhealthy_threshold_count).unwrap_or(3),
    }
}
