//! Target groups and their TargetGroupBindings for one (Ingress, Service, port): target type,
//! protocol and version, port (NodePort or target port), health checks with upstream defaults,
//! attributes and tags, Service annotations overriding the Ingress's, and TGB networking.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Service, ServicePort};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::annotations::{self as ann, suffix, AnnotationMap};
use crate::crd::tgb_shape;
use crate::model::cluster::key_of;
// Shared with the Service builder and `plan` (defined with the cluster objects); kept reachable.
pub use crate::model::cluster::{lookup_service_port, port_string, PLACEHOLDER_SERVICE_UID};
use crate::model::error::Fail;
use crate::model::group::ClassifiedIngress;
use crate::model::naming::{self, TargetGroupNameInputs};
use crate::model::tags::TagContext;
use crate::model::types::*;

/// What target-group building needs from the rest of the build.
pub struct TargetGroupContext<'a> {
    pub tags: &'a TagContext<'a>,
    pub group: &'a GroupId,
    pub lb_ip_address_type: IpAddressType,
    /// Source of TGB networking rules (backend SG, or the managed SG when that feature is off).
    pub networking_source: Option<Token>,
}

/// Resource id: `<ingNs>/<ingName>-<svcName>:<port>`.
pub fn resource_id(m: &ClassifiedIngress<'_>, svc_name: &str, port: &IntOrString) -> String {
    format!(
        "{}/{}-{}:{}",
        m.namespace(),
        m.name(),
        svc_name,
        port_string(port)
    )
}

fn target_type(
    a: &AnnotationMap,
    m: &ClassifiedIngress<'_>,
    ctx: &TargetGroupContext<'_>,
) -> Result<TargetType, Fail> {
    let cfg = ctx.tags.cfg;
    let mut raw = ann::string(a, suffix::TARGET_TYPE)
        .unwrap_or(cfg.default_target_type.as_str())
        .to_string();
    if let Some(t) = m.params.and_then(|p| p.spec.target_type) {
        raw = t.as_str().to_string();
    }
    match raw.as_str() {
        "instance" => Ok(TargetType::Instance),
        "ip" if cfg.gate("EnableIPTargetType") => Ok(TargetType::Ip),
        "ip" => Err(Fail::msg(format!(
            "unsupported targetType: {raw} when EnableIPTargetType is false"
        ))),
        _ => Err(Fail::at(
            ann::key(suffix::TARGET_TYPE),
            format!("unknown targetType: {raw}"),
        )),
    }
}

fn protocol(
    a: &AnnotationMap,
    sfx: &str,
    default: Protocol,
    err: impl Fn(&str) -> String,
) -> Result<Protocol, Fail> {
    match ann::string(a, sfx).unwrap_or(default.as_str()) {
        "HTTP" => Ok(Protocol::Http),
        "HTTPS" => Ok(Protocol::Https),
        other => Err(Fail::at(ann::key(sfx), err(other))),
    }
}

fn protocol_version(a: &AnnotationMap) -> Result<ProtocolVersion, Fail> {
    match ann::string(a, suffix::BACKEND_PROTOCOL_VERSION).unwrap_or("HTTP1") {
        "HTTP1" => Ok(ProtocolVersion::HTTP1),
        "HTTP2" => Ok(ProtocolVersion::HTTP2),
        "GRPC" => Ok(ProtocolVersion::GRPC),
        other => Err(Fail::at(
            ann::key(suffix::BACKEND_PROTOCOL_VERSION),
            format!("backend protocol version must be within [HTTP1, HTTP2, GRPC]: {other}"),
        )),
    }
}

fn health_check_port(a: &AnnotationMap, svc: &Service, tt: TargetType) -> Result<String, Fail> {
    let Some(raw) = ann::string(a, suffix::HEALTHCHECK_PORT) else {
        return Ok("traffic-port".into());
    };
    if raw == "traffic-port" || raw.parse::<i32>().is_ok() {
        return Ok(raw.to_string());
    }
    let at = ann::key(suffix::HEALTHCHECK_PORT);
    let sp = lookup_service_port(svc, &IntOrString::String(raw.to_string())).map_err(|e| {
        Fail::at(
            &at,
            format!("failed to resolve healthCheckPort: {}", e.message),
        )
    })?;
    match (tt, &sp.target_port) {
        (TargetType::Instance, _) => Ok(sp.node_port.unwrap_or(0).to_string()),
        (TargetType::Ip, Some(IntOrString::Int(p))) => Ok(p.to_string()),
        (TargetType::Ip, None) => Ok(sp.port.to_string()),
        _ => Err(Fail::at(&at, "cannot use named healthCheckPort for IP TargetType when service's targetPort is a named port")),
    }
}

fn int_or(a: &AnnotationMap, sfx: &str, default: i32) -> Result<i32, Fail> {
    Ok(ann::int32(a, sfx)?.unwrap_or(default))
}

/// Builds the target group and its TargetGroupBinding.
pub fn build(
    ctx: &TargetGroupContext<'_>,
    m: &ClassifiedIngress<'_>,
    svc: &Service,
    port: &IntOrString,
) -> Result<(TargetGroup, TargetGroupBindingResource), Fail> {
    let no_annotations = AnnotationMap::new();
    let svc_ann = svc.metadata.annotations.as_ref().unwrap_or(&no_annotations);
    let a = ann::merge_service_over_ingress(svc_ann, m.annotations());
    let svc_name = svc.metadata.name.clone().unwrap_or_default();
    let id = resource_id(m, &svc_name, port);
    let sp = lookup_service_port(svc, port)?;
    let tt = target_type(&a, m, ctx)?;
    let proto = protocol(&a, suffix::BACKEND_PROTOCOL, Protocol::Http, |v| {
        format!("backend protocol must be within [HTTP, HTTPS]: {v}")
    })?;
    let version = protocol_version(&a)?;
    let health_check = health_check(&a, svc, tt, proto, version)?;
    let attributes = ann::string_map(&a, suffix::TARGET_GROUP_ATTRIBUTES)?.unwrap_or_default();
    let user_tags = ctx
        .tags
        .backend_user_tags(m, svc_ann, &key_of(&svc.metadata))?;
    let ip_type = ip_address_type(svc, ctx)?;
    let tg_port = target_group_port(tt, sp);
    let control = target_control_port(&a, tt, &svc_name, port)?;
    let uid = svc.metadata.uid.clone();
    let uid = uid.unwrap_or_else(|| PLACEHOLDER_SERVICE_UID.to_string());
    let name = naming::target_group_name(&TargetGroupNameInputs {
        cluster: &ctx.tags.cfg.cluster_name,
        group: ctx.group,
        ingress_namespace: m.namespace(),
        ingress_name: m.name(),
        service_namespace: &service_namespace(svc),
        service_name: &svc_name,
        service_uid: &uid,
        service_port: &port_string(port),
        target_port: tg_port,
        target_type: tt,
        protocol: proto,
        protocol_version: version,
        target_control_port: control,
    });
    check_target_group_port(tg_port, tt)?;
    let node_selector = node_selector(&a, tt)?;
    let multi = ann::bool(m.annotations(), suffix::MULTI_CLUSTER_TARGET_GROUP)?.unwrap_or(false)
        || ann::bool(svc_ann, suffix::MULTI_CLUSTER_TARGET_GROUP)?.unwrap_or(false);
    let target_port = match tt {
        TargetType::Instance => IntOrString::Int(sp.node_port.unwrap_or(0)),
        TargetType::Ip => sp.target_port.clone().unwrap_or(IntOrString::Int(sp.port)),
    };
    let networking = networking_rules(ctx, target_port, &health_check.port, control);
    let tg = TargetGroup {
        id: id.clone(),
        name: name.clone(),
        target_type: tt,
        port: tg_port,
        protocol: proto,
        protocol_version: Some(version),
        ip_address_type: ip_type.into(),
        health_check,
        target_control_port: control,
        attributes,
        tags: ctx.tags.resource_tags(&id, user_tags),
        service_uid: uid,
    };
    let tgb = TargetGroupBindingResource {
        id: id.clone(),
        name,
        namespace: service_namespace(svc),
        labels: ctx.tags.stack_labels(),
        annotations: None,
        spec: TargetGroupBindingModelSpec {
            target_group_arn: Token::TargetGroupArn(id),
            target_type: tt,
            service_name: svc_name,
            service_port: port.clone(),
            networking,
            node_selector,
            ip_address_type: ip_type.into(),
            vpc_id: ctx.tags.cfg.vpc_id.clone(),
            multi_cluster_target_group: multi,
            target_group_protocol: proto,
            networking_from_cidrs: Vec::new(),
            networking_one_rule: false,
        },
    };
    Ok((tg, tgb))
}

fn service_namespace(svc: &Service) -> String {
    let ns = svc.metadata.namespace.clone();
    ns.unwrap_or_else(|| "default".into())
}

/// Health check: port, protocol (the backend's by default), path and matcher (gRPC or HTTP
/// defaults), interval, timeout and thresholds.
fn health_check(
    a: &AnnotationMap,
    svc: &Service,
    tt: TargetType,
    proto: Protocol,
    version: ProtocolVersion,
) -> Result<HealthCheck, Fail> {
    let port = health_check_port(a, svc, tt)?;
    let protocol = protocol(a, suffix::HEALTHCHECK_PROTOCOL, proto, |_| {
        "healthCheckProtocol must be within [HTTP, HTTPS]".to_string()
    })?;
    let grpc = version == ProtocolVersion::GRPC;
    let path = ann::string(a, suffix::HEALTHCHECK_PATH)
        .unwrap_or(if grpc { "/AWS.ALB/healthcheck" } else { "/" })
        .to_string();
    let codes = ann::string(a, suffix::SUCCESS_CODES)
        .unwrap_or(if grpc { "12" } else { "200" })
        .to_string();
    let matcher_key = if grpc { "grpcCode" } else { "httpCode" };
    Ok(HealthCheck {
        port,
        protocol,
        path,
        matcher: BTreeMap::from([(matcher_key.to_string(), codes)]),
        interval_seconds: int_or(a, suffix::HEALTHCHECK_INTERVAL_SECONDS, 15)?,
        timeout_seconds: int_or(a, suffix::HEALTHCHECK_TIMEOUT_SECONDS, 5)?,
        healthy_threshold_count: int_or(a, suffix::HEALTHY_THRESHOLD_COUNT, 2)?,
        unhealthy_threshold_count: int_or(a, suffix::UNHEALTHY_THRESHOLD_COUNT, 2)?,
    })
}

/// `ipv6` for an IPv6 Service (then the load balancer must be dual-stack), else `ipv4`.
fn ip_address_type(svc: &Service, ctx: &TargetGroupContext<'_>) -> Result<&'static str, Fail> {
    let families = svc.spec.as_ref().and_then(|s| s.ip_families.as_ref());
    let ipv6 = families.is_some_and(|f| f.iter().any(|x| x == "IPv6"));
    if ipv6 && !ctx.lb_ip_address_type.is_dual_stack() {
        return Err(Fail::msg(
            "unsupported IPv6 configuration, lb not dual-stack",
        ));
    }
    Ok(if ipv6 { "ipv6" } else { "ipv4" })
}

fn target_group_port(tt: TargetType, sp: &ServicePort) -> i32 {
    match (tt, &sp.target_port) {
        (TargetType::Instance, _) => sp.node_port.unwrap_or(0),
        (TargetType::Ip, Some(IntOrString::Int(p))) => *p,
        // Kubernetes defaults targetPort to port; a named targetPort is not in the data path.
        (TargetType::Ip, None) => sp.port,
        (TargetType::Ip, Some(IntOrString::String(_))) => 1,
    }
}

fn check_target_group_port(tg_port: i32, tt: TargetType) -> Result<(), Fail> {
    if tg_port != 0 {
        return Ok(());
    }
    Err(Fail::msg(if tt == TargetType::Ip {
        "TargetGroup port is empty. Are you using the correct service type?"
    } else {
        "TargetGroup port is empty. When using Instance targets, your service be must of type 'NodePort' or 'LoadBalancer'"
    }))
}

/// `target-control-port.<svc>.<port>`: IP targets only.
fn target_control_port(
    a: &AnnotationMap,
    tt: TargetType,
    svc_name: &str,
    port: &IntOrString,
) -> Result<Option<i32>, Fail> {
    let sfx = format!(
        "{}.{}.{}",
        suffix::TARGET_CONTROL_PORT,
        svc_name,
        port_string(port)
    );
    let control = ann::int32(a, &sfx)?;
    if tt == TargetType::Instance && control.is_some() {
        return Err(Fail::at(
            ann::key(&sfx),
            "target control port is not supported for instance target target group",
        ));
    }
    Ok(control)
}

/// `target-node-labels`: instance targets only; empty means none.
fn node_selector(a: &AnnotationMap, tt: TargetType) -> Result<Option<LabelSelector>, Fail> {
    Ok(match tt {
        TargetType::Instance => ann::string_map(a, suffix::TARGET_NODE_LABELS)?
            .filter(|l| !l.is_empty())
            .map(tgb_shape::labels_selector),
        TargetType::Ip => None,
    })
}

fn networking_rules(
    ctx: &TargetGroupContext<'_>,
    target_port: IntOrString,
    hc_port: &str,
    control: Option<i32>,
) -> Vec<NetworkingRule> {
    let Some(source) = &ctx.networking_source else {
        return Vec::new();
    };
    if ctx.tags.cfg.disable_restricted_sg_rules {
        return vec![NetworkingRule {
            from_security_group: source.clone(),
            port: None,
            protocol: None,
        }];
    }
    let mut ports = vec![target_port];
    if hc_port != "traffic-port" {
        ports.push(match hc_port.parse::<i32>() {
            Ok(p) => IntOrString::Int(p),
            Err(_) => IntOrString::String(hc_port.to_string()),
        });
    }
    ports.extend(control.map(IntOrString::Int));
    ports
        .into_iter()
        .map(|p| NetworkingRule {
            from_security_group: source.clone(),
            port: Some(p),
            protocol: None,
        })
        .collect()
}
