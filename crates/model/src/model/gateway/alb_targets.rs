//! The `alb`-type target group of a `Gateway` backend of an NLB route (upstream's
//! `buildTargetGroupFromGateway`): its one target is the other Gateway's ALB on the backendRef
//! port, registered by the deployer after the listeners (as for an Ingress's frontend NLB); no
//! TargetGroupBinding. Protocol as for Service backends of NLB routes; health check HTTP on the
//! traffic port, `/`, `200-399`, 15/5/3/3 unless the Gateway's TargetGroupConfiguration says
//! otherwise; always IPv4. Name and id are hash-identical to upstream's, the target Gateway
//! standing where a Service would.

use std::collections::BTreeMap;

use super::backends::GatewayBackend;
use super::names::{alb_target_group_name, target_group_id, TargetGroupNameInputs};
use super::routes::RouteView;
use super::target_groups::{l4_protocol, TgContext};
use crate::crd::gateway::target_group_configuration::{HealthCheckProtocol, TargetGroupProps};
use crate::model::types::*;

/// Upstream's `traffic-port` health-check port.
const TRAFFIC_PORT: &str = "traffic-port";

/// The `alb`-type target group of Gateway backend `gw` of `route` on a listener of
/// `listener_protocol`.
pub fn gateway_target_group(
    ctx: &TgContext<'_>,
    route: &RouteView<'_>,
    listener_protocol: Protocol,
    gw: &GatewayBackend,
    props: Option<&TargetGroupProps>,
) -> Result<AlbTargetGroup, String> {
    let cfg = ctx.tags.cfg;
    let protocol = l4_protocol(listener_protocol, props, route)?;
    if props.and_then(|p| p.target_control_port).is_some() {
        return Err(match protocol {
            Protocol::Http | Protocol::Https => {
                "target control port is not supported for ALB target target group".into()
            }
            other => format!(
                "target control port is only supported for HTTP and HTTPS protocols, got: {}",
                other.as_str()
            ),
        });
    }
    let port = gw.port.to_string();
    let inputs = TargetGroupNameInputs {
        cluster: &cfg.cluster_name,
        gateway_namespace: ctx.gateway_namespace,
        gateway_name: ctx.gateway_name,
        route_namespace: &route.namespace,
        route_name: &route.name,
        route_kind: route.kind.as_str(),
        service_namespace: &gw.namespace,
        service_name: &gw.name,
        port: &port,
        // Not read by `alb_target_group_name`, which hashes `alb`.
        target_type: TargetType::Ip,
        protocol,
        protocol_version: None,
        target_control_port: None,
    };
    let id = target_group_id(&inputs, &port);
    let name = props
        .and_then(|p| p.target_group_name.clone())
        .unwrap_or_else(|| alb_target_group_name(&inputs));
    let user_tags = props.and_then(|p| p.tags.clone()).unwrap_or_default();
    if let Some(k) = user_tags
        .keys()
        .find(|k| cfg.external_managed_tags.contains(k))
    {
        return Err(format!("external managed tag key {k} cannot be specified"));
    }
    let attributes: BTreeMap<String, String> = props
        .map(|p| {
            p.target_group_attributes
                .iter()
                .map(|a| (a.key.clone(), a.value.clone()))
                .collect()
        })
        .unwrap_or_default();
    Ok(AlbTargetGroup {
        tags: ctx.tags.resource_tags(&id, user_tags),
        id,
        name,
        port: gw.port,
        protocol,
        ip_address_type: "ipv4".into(),
        health_check: health_check(props, gw.port),
        target_port: gw.port,
        target_arn: Some(gw.alb_arn.clone()),
        attributes,
    })
}

/// ALB targets take HTTP(S) health checks only, so HTTP is the default; a configured port
/// other than `traffic-port` means the backendRef port (upstream reads no number from it).
fn health_check(props: Option<&TargetGroupProps>, port: i32) -> HealthCheck {
    let hc = props.and_then(|p| p.health_check_config.as_ref());
    let protocol = match hc.and_then(|h| h.health_check_protocol) {
        None | Some(HealthCheckProtocol::Http) => Protocol::Http,
        Some(HealthCheckProtocol::Https) => Protocol::Https,
        Some(HealthCheckProtocol::Tcp) => Protocol::Tcp,
    };
    let (path, matcher) = if protocol == Protocol::Tcp {
        (String::new(), BTreeMap::new())
    } else {
        let code = hc
            .and_then(|h| h.matcher.as_ref())
            .and_then(|m| m.http_code.clone())
            .unwrap_or_else(|| "200-399".into());
        (
            hc.and_then(|h| h.health_check_path.clone())
                .unwrap_or_else(|| "/".into()),
            BTreeMap::from([("httpCode".to_string(), code)]),
        )
    };
    let hc_port = match hc.and_then(|h| h.health_check_port.as_deref()) {
        None | Some(TRAFFIC_PORT) => TRAFFIC_PORT.to_string(),
        Some(_) => port.to_string(),
    };
    HealthCheck {
        port: hc_port,
        protocol,
        path,
        matcher,
        interval_seconds: hc.and_then(|h| h.health_check_interval).unwrap_or(15),
        timeout_seconds: hc.and_then(|h| h.health_check_timeout).unwrap_or(5),
        healthy_threshold_count: hc.and_then(|h| h.healthy_threshold_count).unwrap_or(3),
        unhealthy_threshold_count: hc.and_then(|h| h.unhealthy_threshold_count).unwrap_or(3),
    }
}
