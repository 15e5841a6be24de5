//! One target group per Service port: target type, port (NodePort or pod port), IP address
//! type, health check, attributes, tags and upstream's hashed name
//! (`model_build_target_group.go`); the same for each port of a backend Service a weighted
//! action names, built once per resource id as upstream memoises them.

use k8s_openapi::api::core::v1::ServicePort;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::annotations::sfx;
use super::load_balancer::LbFacts;
use super::task::Task;
use super::{health_check, tg_attributes, tgb};
use crate::model::error::Fail;
use crate::model::naming::{self, ServiceTargetGroupNameInputs};
use crate::model::types::*;

/// `aws-load-balancer-nlb-target-type` (else `--default-target-type`); `nlb-ip` or `ip` ⇒ ip,
/// anything else ⇒ instance, which needs a node port.
fn target_type(t: &Task<'_>, p: &ServicePort) -> Result<TargetType, Fail> {
    let raw =
        t.a.string(sfx::TARGET_TYPE)
            .unwrap_or(t.cfg.default_target_type.as_str());
    if raw == "ip" && !t.cfg.gate("EnableIPTargetType") {
        return Err(Fail::msg(format!(
            "unsupported targetType: {raw} when EnableIPTargetType is false"
        )));
    }
    if t.a.string(sfx::LB_TYPE) == Some("nlb-ip") || raw == "ip" {
        return Ok(TargetType::Ip);
    }
    let spec = t.svc.spec.as_ref();
    let svc_type = spec.and_then(|s| s.type_.as_deref()).unwrap_or("ClusterIP");
    if svc_type == "ClusterIP" {
        return Err(Fail::msg(format!(
            "unsupported service type \"{svc_type}\" for load balancer target type \"{raw}\""
        )));
    }
    let allocate = spec.and_then(|s| s.allocate_load_balancer_node_ports);
    if p.node_port.unwrap_or(0) == 0 && allocate == Some(false) {
        return Err(Fail::msg(
            "unable to support instance target type with an unallocated NodePort",
        ));
    }
    Ok(TargetType::Instance)
}

/// Instance ⇒ node port; ip ⇒ numeric target port, `1` for a named one (not in the data path).
fn port(tt: TargetType, p: &ServicePort) -> i32 {
    match (tt, &p.target_port) {
        (TargetType::Instance, _) => p.node_port.unwrap_or(0),
        (TargetType::Ip, Some(IntOrString::Int(n))) => *n,
        // The API server defaults targetPort to port.
        (TargetType::Ip, None) => p.port,
        (TargetType::Ip, Some(IntOrString::String(_))) => 1,
    }
}

/// `ipv6` when any of `spec.ipFamilies` is IPv6, which needs a dualstack NLB.
fn ip_address_type(t: &Task<'_>, lb_ip: IpAddressType) -> Result<&'static str, Fail> {
    let ipv6 = t
        .svc
        .spec
        .as_ref()
        .and_then(|s| s.ip_families.as_ref())
        .is_some_and(|f| f.iter().any(|x| x == "IPv6"));
    match (ipv6, lb_ip) {
        (false, _) => Ok("ipv4"),
        (true, IpAddressType::DualStack) => Ok("ipv6"),
        (true, _) => Err(Fail::msg(
            "unsupported IPv6 configuration, lb not dual-stack",
        )),
    }
}

/// Resource id of the target group of port `p` of `t`'s Service: `<ns>/<name>:<port>`.
fn resource_id(t: &Task<'_>, p: &ServicePort) -> String {
    format!("{}:{}", t.key(), p.port)
}

/// The id of the target group of port `p` of `t`'s Service, added with its binding to `stack`
/// unless a target group of that id is there already (upstream builds each resource id once
/// per Service: a backend named twice, or the Service naming itself, shares it, whatever
/// protocol the second use would give it). `base_uid` is the UID of the Service owning the NLB
/// when `t` is a weighted backend's view (it is hashed into the name, so two NLBs sharing a
/// backend get target groups of their own).
pub(super) fn ensure(
    t: &Task<'_>,
    p: &ServicePort,
    protocol: Protocol,
    facts: &LbFacts,
    base_uid: Option<&str>,
    stack: &mut Stack,
    warnings: &mut Vec<Warning>,
) -> Result<String, Fail> {
    let id = resource_id(t, p);
    if !stack.target_groups.iter().any(|g| g.id == id) {
        let (tg, binding) = build(t, p, protocol, facts, base_uid, warnings)?;
        stack.target_groups.push(tg);
        stack.target_group_bindings.push(binding);
    }
    Ok(id)
}

/// The target group of Service port `p` and its TargetGroupBinding.
fn build(
    t: &Task<'_>,
    p: &ServicePort,
    protocol: Protocol,
    facts: &LbFacts,
    base_uid: Option<&str>,
    warnings: &mut Vec<Warning>,
) -> Result<(TargetGroup, TargetGroupBindingResource), Fail> {
    let id = resource_id(t, p);
    let tt = target_type(t, p)?;
    let (hc, hc_port) = health_check::build(t, tt)?;
    let attributes = tg_attributes::build(t, p.port)?;
    let tg_port = port(tt, p);
    let name = naming::service_target_group_name(&ServiceTargetGroupNameInputs {
        cluster: &t.cfg.cluster_name,
        base_service_uid: base_uid,
        service_namespace: t.namespace,
        service_name: t.name,
        service_uid: t.uid,
        target_port: tg_port,
        service_port: p.port,
        target_type: tt,
        protocol,
        health_check_protocol: hc.protocol,
        health_check_interval: hc.interval_seconds,
    });
    let ip_type = ip_address_type(t, facts.ip)?;
    let preserve = tg_attributes::preserves_client_ip(&attributes, tt);
    if tg_port == 0 {
        return Err(Fail::msg(match tt {
            TargetType::Ip => "TargetGroup port is empty. Are you using the correct service type?",
            TargetType::Instance => "TargetGroup port is empty. When using Instance targets, your service be must of type 'NodePort' or 'LoadBalancer'",
        }));
    }
    let tg = TargetGroup {
        id: id.clone(),
        name,
        target_type: tt,
        port: tg_port,
        protocol,
        protocol_version: None,
        ip_address_type: ip_type.into(),
        health_check: hc,
        target_control_port: None,
        attributes,
        tags: t.tags.resource_tags(&id, t.annotation_tags()?),
        service_uid: t.uid.to_string(),
    };
    let binding = tgb::build(t, p, &tg, &hc_port, preserve, facts, warnings)?;
    Ok((tg, binding))
}
