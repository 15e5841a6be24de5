//! Target groups and TargetGroupBindings of an ALB Gateway (upstream's
//! `model_build_target_group.go`): one per (route, Service, port), never shared between routes,
//! with the Service's TargetGroupConfiguration, Gateway health-check defaults (15/5/3/3,
//! `200-399`) and upstream's names and ids.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Service, ServicePort};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::alb_health::{health_check, protocol_version};
use super::names::{target_group_id, target_group_name, TargetGroupNameInputs};
use super::routes::{RouteKind, RouteView};
use crate::crd::gateway::target_group_configuration::{
    HealthCheckProtocol, TargetGroupProps, TgProtocol, TgTargetType,
};
use crate::crd::tgb_shape;
use crate::model::types::*;

pub use super::backends::BackendProblem;
pub use super::tg_context::TgContext;

pub use super::tg_props::{over_default, props_for, props_for_gateway, route_props};

fn target_type(ctx: &TgContext<'_>, props: Option<&TargetGroupProps>) -> TargetType {
    match props.and_then(|p| p.target_type) {
        Some(TgTargetType::Ip) => TargetType::Ip,
        Some(TgTargetType::Instance) => TargetType::Instance,
        None => ctx.tags.cfg.default_target_type,
    }
}

/// What differs between ALB and NLB target groups, decided before the common part.
struct Shape {
    target_type: TargetType,
    protocol: Protocol,
    version: Option<ProtocolVersion>,
    health_check: HealthCheck,
}

fn protocol_name(p: TgProtocol) -> String {
    serde_json::to_value(p)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// The target group (and binding) of one Service backend of an ALB route.
pub fn alb_target_group(
    ctx: &TgContext<'_>,
    route: &RouteView<'_>,
    listener_protocol: Protocol,
    svc: &Service,
    sp: &ServicePort,
    props: Option<&TargetGroupProps>,
) -> Result<(TargetGroup, TargetGroupBindingResource), String> {
    let protocol = match props.and_then(|p| p.protocol) {
        None | Some(TgProtocol::Http) => Protocol::Http,
        Some(TgProtocol::Https) => Protocol::Https,
        Some(other) => {
            return Err(format!(
                "backend protocol must be within [HTTP, HTTPS]: {}",
                protocol_name(other)
            ));
        }
    };
    let version = protocol_version(listener_protocol, props, route, sp);
    let shape = Shape {
        target_type: target_type(ctx, props),
        protocol,
        version: Some(version),
        health_check: health_check(props, protocol, version),
    };
    finish(ctx, route, shape, svc, sp, props)
}

/// An NLB target group's protocol: the listener's TCP_UDP/QUIC/TCP_QUIC, else the configured
/// one, else by route kind.
pub(super) fn l4_protocol(
    listener_protocol: Protocol,
    props: Option<&TargetGroupProps>,
    route: &RouteView<'_>,
) -> Result<Protocol, String> {
    Ok(match (listener_protocol, props.and_then(|p| p.protocol)) {
        (Protocol::TcpUdp | Protocol::Quic | Protocol::TcpQuic, _) => listener_protocol,
        (_, Some(TgProtocol::Tcp)) => Protocol::Tcp,
        (_, Some(TgProtocol::Tls)) => Protocol::Tls,
        (_, Some(TgProtocol::Udp)) => Protocol::Udp,
        (_, Some(TgProtocol::TcpUdp)) => Protocol::TcpUdp,
        (_, Some(other)) => {
            return Err(format!(
                "backend protocol must be within [TCP, UDP, TCP_UDP, TLS, QUIC, TCP_QUIC]: {}",
                protocol_name(other)
            ))
        }
        (_, None) => match route.kind {
            RouteKind::Udp => Protocol::Udp,
            RouteKind::Tls => Protocol::Tls,
            _ => Protocol::Tcp,
        },
    })
}

/// The target group (and binding) of one Service backend of an NLB route: the listener's
/// TCP_UDP/QUIC protocol, else the configured one, else by route kind; TCP health checks
/// (HTTP `/healthz` on the health-check node port, 10/6/2/2, for instance targets of
/// `externalTrafficPolicy: Local` Services).
pub fn nlb_target_group(
    ctx: &TgContext<'_>,
    route: &RouteView<'_>,
    listener_protocol: Protocol,
    svc: &Service,
    sp: &ServicePort,
    props: Option<&TargetGroupProps>,
) -> Result<(TargetGroup, TargetGroupBindingResource), String> {
    let protocol = l4_protocol(listener_protocol, props, route)?;
    let tt = target_type(ctx, props);
    let local = tt == TargetType::Instance
        && svc
            .spec
            .as_ref()
            .and_then(|s| s.external_traffic_policy.as_deref())
            == Some("Local");
    let hc = props.and_then(|p| p.health_check_config.as_ref());
    let hc_protocol = match hc.and_then(|h| h.health_check_protocol) {
        None if local => Protocol::Http,
        None | Some(HealthCheckProtocol::Tcp) => Protocol::Tcp,
        Some(HealthCheckProtocol::Http) => Protocol::Http,
        Some(HealthCheckProtocol::Https) => Protocol::Https,
    };
    let (path, matcher) = if hc_protocol == Protocol::Tcp {
        (String::new(), BTreeMap::new())
    } else {
        let default_path = if local { "/healthz" } else { "/" };
        let code = hc
            .and_then(|h| h.matcher.as_ref())
            .and_then(|m| m.http_code.clone())
            .unwrap_or_else(|| "200-399".into());
        (
            hc.and_then(|h| h.health_check_path.clone())
                .unwrap_or_else(|| default_path.into()),
            BTreeMap::from([("httpCode".to_string(), code)]),
        )
    };
    let (interval, timeout, healthy, unhealthy) = if local { (10, 6, 2, 2) } else { (15, 5, 3, 3) };
    let port = match hc.and_then(|h| h.health_check_port.clone()) {
        Some(p) => p,
        None if local => svc
            .spec
            .as_ref()
            .and_then(|s| s.health_check_node_port)
            .unwrap_or(0)
            .to_string(),
        None => "traffic-port".into(),
    };
    let health_check = HealthCheck {
        port,
        protocol: hc_protocol,
        path,
        matcher,
        interval_seconds: hc.and_then(|h| h.health_check_interval).unwrap_or(interval),
        timeout_seconds: hc.and_then(|h| h.health_check_timeout).unwrap_or(timeout),
        healthy_threshold_count: hc
            .and_then(|h| h.healthy_threshold_count)
            .unwrap_or(healthy),
        unhealthy_threshold_count: hc
            .and_then(|h| h.unhealthy_threshold_count)
            .unwrap_or(unhealthy),
    };
    let shape = Shape {
        target_type: tt,
        protocol,
        version: None,
        health_check,
    };
    finish(ctx, route, shape, svc, sp, props)
}

/// A Service backend's target group: where it sends traffic, its id and its name.
struct Identity {
    svc_namespace: String,
    svc_name: String,
    /// The Service port's `targetPort` (its `port` when unset), as written.
    identifier: IntOrString,
    /// The node port (instance targets) or the target port (ip targets).
    port: i32,
    control: Option<i32>,
    id: String,
    name: String,
}

/// Upstream's port, target control port, resource id and name of the target group of `svc`'s
/// port `sp` (the configured name when given); a target group without a port is refused.
fn identity(
    ctx: &TgContext<'_>,
    route: &RouteView<'_>,
    shape: &Shape,
    svc: &Service,
    sp: &ServicePort,
    props: Option<&TargetGroupProps>,
) -> Result<Identity, String> {
    let target_type = shape.target_type;
    let svc_namespace = svc
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let svc_name = svc.metadata.name.clone().unwrap_or_default();
    let identifier = sp.target_port.clone().unwrap_or(IntOrString::Int(sp.port));
    let identifier_str = match &identifier {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    };
    let tg_port = match (target_type, &identifier) {
        (TargetType::Instance, _) => sp.node_port.unwrap_or(0),
        (TargetType::Ip, IntOrString::Int(p)) => *p,
        (TargetType::Ip, IntOrString::String(_)) => 1,
    };
    let control = target_control_port(props, shape.protocol, target_type)?;
    let hash_port = match target_type {
        TargetType::Instance => tg_port.to_string(),
        TargetType::Ip => identifier_str.clone(),
    };
    let inputs = TargetGroupNameInputs {
        cluster: &ctx.tags.cfg.cluster_name,
        gateway_namespace: ctx.gateway_namespace,
        gateway_name: ctx.gateway_name,
        route_namespace: &route.namespace,
        route_name: &route.name,
        route_kind: route.kind.as_str(),
        service_namespace: &svc_namespace,
        service_name: &svc_name,
        port: &hash_port,
        target_type,
        protocol: shape.protocol,
        protocol_version: shape.version,
        target_control_port: control,
    };
    let id = target_group_id(&inputs, &identifier_str);
    let name = props
        .and_then(|p| p.target_group_name.clone())
        .unwrap_or_else(|| target_group_name(&inputs));
    if tg_port == 0 {
        return Err(match target_type {
            TargetType::Ip => "TargetGroup port is empty. Are you using the correct service type?".into(),
            TargetType::Instance => "TargetGroup port is empty. When using Instance targets, your service must be of type 'NodePort' or 'LoadBalancer'".into(),
        });
    }
    Ok(Identity {
        svc_namespace,
        svc_name,
        identifier,
        port: tg_port,
        control,
        id,
        name,
    })
}

/// The binding's node rules: from the networking source (a security group), or from the CIDR
/// blocks of an NLB without security groups; `ports` are the target port and the health
/// check's.
fn node_rules(
    ctx: &TgContext<'_>,
    protocol: Protocol,
    target_type: TargetType,
    ipv6: bool,
    attributes: &BTreeMap<String, String>,
    (target_port, hc_port): (&IntOrString, &IntOrString),
    control: Option<i32>,
) -> (Vec<NetworkingRule>, Vec<CidrNetworkingRule>) {
    let from_cidrs = match &ctx.cidr_sources {
        Some(sources) => sources
            .rules(&crate::model::tgb_cidrs::Target {
                protocol,
                ipv6,
                preserve: preserves_client_ip(protocol, attributes, target_type),
                port: target_port,
                health_check_port: hc_port,
                hc_rule_always: |p| p.carries_udp(),
            })
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let from_source = match &ctx.networking_source {
        Some(source) => super::tgb_networking::rules(
            source,
            ctx.tags.cfg.disable_restricted_sg_rules,
            protocol,
            target_port,
            hc_port,
            control,
        ),
        None => Vec::new(),
    };
    (from_source, from_cidrs)
}

/// The target group and binding of `svc`'s port `sp` for `route`, once its `shape` is decided.
fn finish(
    ctx: &TgContext<'_>,
    route: &RouteView<'_>,
    shape: Shape,
    svc: &Service,
    sp: &ServicePort,
    props: Option<&TargetGroupProps>,
) -> Result<(TargetGroup, TargetGroupBindingResource), String> {
    let cfg = ctx.tags.cfg;
    let who = identity(ctx, route, &shape, svc, sp, props)?;
    let Shape {
        target_type,
        protocol,
        version,
        health_check,
    } = shape;
    let ipv6 = svc
        .spec
        .as_ref()
        .and_then(|s| s.ip_families.as_ref())
        .is_some_and(|f| f.iter().any(|f| f == "IPv6"));
    if ipv6 && !ctx.lb_ip_type.is_dual_stack() {
        return Err("unsupported IPv6 configuration, lb not dual-stack".into());
    }
    let ip_type = if ipv6 { "ipv6" } else { "ipv4" };
    let attributes: BTreeMap<String, String> = props
        .map(|p| {
            p.target_group_attributes
                .iter()
                .map(|a| (a.key.clone(), a.value.clone()))
                .collect()
        })
        .unwrap_or_default();
    let user_tags = props.and_then(|p| p.tags.clone()).unwrap_or_default();
    // Tags the user lets another tool manage cannot come from a TargetGroupConfiguration either.
    if let Some(k) = user_tags
        .keys()
        .find(|k| cfg.external_managed_tags.contains(k))
    {
        return Err(format!("external managed tag key {k} cannot be specified"));
    }
    let target_port = match target_type {
        TargetType::Instance => IntOrString::Int(who.port),
        TargetType::Ip => who.identifier.clone(),
    };
    let hc_port = match health_check.port.parse::<i32>() {
        Ok(p) => IntOrString::Int(p),
        Err(_) => IntOrString::String(health_check.port.clone()),
    };
    let ports = (&target_port, &hc_port);
    let (networking, networking_from_cidrs) = node_rules(
        ctx,
        protocol,
        target_type,
        ipv6,
        &attributes,
        ports,
        who.control,
    );
    let Identity {
        svc_namespace,
        svc_name,
        port,
        control,
        id,
        name,
        ..
    } = who;
    let tg = TargetGroup {
        id: id.clone(),
        name: name.clone(),
        target_type,
        port,
        protocol,
        protocol_version: version,
        ip_address_type: ip_type.into(),
        health_check,
        target_control_port: control,
        attributes,
        tags: ctx.tags.resource_tags(&id, user_tags),
        service_uid: svc.metadata.uid.clone().unwrap_or_default(),
    };
    let node_selector = match target_type {
        // Whole, as upstream copies it (`matchExpressions` too); an empty selector is still a
        // selector (all nodes), as upstream keeps it.
        TargetType::Instance => props
            .and_then(|p| p.node_selector.as_ref())
            .map(tgb_shape::canonical_selector),
        TargetType::Ip => None,
    };
    let tgb = TargetGroupBindingResource {
        id: id.clone(),
        name,
        namespace: svc_namespace,
        labels: ctx
            .infrastructure_labels
            .clone()
            .into_iter()
            .chain(ctx.tags.stack_labels())
            .collect(),
        annotations: Some(ctx.infrastructure_annotations.clone()),
        spec: TargetGroupBindingModelSpec {
            target_group_arn: Token::TargetGroupArn(id),
            target_type,
            service_name: svc_name,
            service_port: IntOrString::Int(sp.port),
            networking,
            node_selector,
            ip_address_type: ip_type.into(),
            vpc_id: cfg.vpc_id.clone(),
            multi_cluster_target_group: props.and_then(|p| p.enable_multi_cluster).unwrap_or(false),
            target_group_protocol: protocol,
            networking_from_cidrs,
            networking_one_rule: false,
        },
    };
    Ok((tg, tgb))
}

/// Whether targets see client IPs (upstream's Gateway `getPreserveClientIP`): always for
/// UDP-carrying protocols, else `preserve_client_ip.enabled` (unparseable = off), else on for
/// instance targets only.
fn preserves_client_ip(
    protocol: Protocol,
    attributes: &BTreeMap<String, String>,
    target_type: TargetType,
) -> bool {
    if protocol.carries_udp() {
        return true;
    }
    match attributes.get("preserve_client_ip.enabled") {
        Some(v) => crate::annotations::go_parse_bool(v).unwrap_or(false),
        None => target_type == TargetType::Instance,
    }
}

/// The TargetGroupConfiguration's `targetControlPort` of a Service target group, refused as
/// upstream's `buildTargetControlPort` does: only HTTP/HTTPS, never instance targets.
pub(super) fn target_control_port(
    props: Option<&TargetGroupProps>,
    protocol: Protocol,
    target_type: TargetType,
) -> Result<Option<i32>, String> {
    let Some(port) = props.and_then(|p| p.target_control_port) else {
        return Ok(None);
    };
    if !matches!(protocol, Protocol::Http | Protocol::Https) {
        return Err(format!(
            "target control port is only supported for HTTP and HTTPS protocols, got: {}",
            protocol.as_str()
        ));
    }
    if target_type == TargetType::Instance {
        return Err("target control port is not supported for instance target target group".into());
    }
    Ok(Some(port))
}
