//! The TargetGroupBinding of an NLB target group, shaped like upstream's
//! `buildTargetGroupBindingSpec` / `buildTargetGroupBindingNetworking`: service port by number,
//! node selector for instance targets, and one networking rule per port from the backend (or
//! managed) SG — the traffic port, then a distinct health-check port.

use k8s_openapi::api::core::v1::ServicePort;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::annotations::{key, sfx};
use super::build::Task;
use super::security_groups::SgDecision;
use crate::crd::target_group_binding::NetworkingProtocol;
use crate::model::error::Fail;
use crate::model::types::*;

fn rule(source: &Token, proto: NetworkingProtocol, port: Option<IntOrString>) -> NetworkingRule {
    NetworkingRule {
        from_security_group: source.clone(),
        port,
        protocol: Some(proto),
    }
}

/// Node/pod ports the NLB must reach, by target-group protocol.
pub(super) fn networking(
    source: &Token,
    disable_restricted: bool,
    tg_port: &IntOrString,
    hc_port: &IntOrString,
    tg_protocol: Protocol,
) -> Vec<NetworkingRule> {
    use NetworkingProtocol::{Tcp, Udp};
    if disable_restricted {
        let mut out = vec![rule(source, Tcp, None)];
        if tg_protocol.carries_udp() {
            out.push(rule(source, Udp, None));
        }
        return out;
    }
    let traffic = Some(tg_port.clone());
    let hc_is_traffic = match hc_port {
        IntOrString::String(s) => s == "traffic-port",
        IntOrString::Int(n) => matches!(tg_port, IntOrString::Int(p) if p == n),
    };
    let mut out = Vec::new();
    match tg_protocol {
        Protocol::Udp | Protocol::Quic => {
            out.push(rule(source, Udp, traffic.clone()));
            if hc_is_traffic {
                out.push(rule(source, Tcp, traffic));
            }
        }
        Protocol::TcpUdp | Protocol::TcpQuic => {
            out.push(rule(source, Udp, traffic.clone()));
            out.push(rule(source, Tcp, traffic));
        }
        _ => out.push(rule(source, Tcp, traffic)),
    }
    if let IntOrString::Int(n) = hc_port {
        // Upstream compares with the traffic port's integer value (0 for a named port).
        let tg_n = match tg_port {
            IntOrString::Int(p) => *p,
            IntOrString::String(_) => 0,
        };
        if *n != tg_n {
            out.push(rule(source, Tcp, Some(hc_port.clone())));
        }
    }
    out
}

/// The binding of target group `tg` (Service port `p`).
pub(super) fn build(
    t: &Task<'_>,
    p: &ServicePort,
    tg: &TargetGroup,
    hc_port: &IntOrString,
    sgs: &SgDecision,
) -> Result<TargetGroupBindingResource, Fail> {
    if sgs.without_sgs() {
        return Err(Fail::at(
            key(sfx::DISABLE_NLB_SG),
            "network load balancers without security groups (aws-load-balancer-disable-nlb-sg, feature gate NLBSecurityGroup=false, or an existing NLB created without security groups) are not supported yet",
        ));
    }
    let tg_port = match tg.target_type {
        TargetType::Instance => IntOrString::Int(p.node_port.unwrap_or(0)),
        TargetType::Ip => p.target_port.clone().unwrap_or(IntOrString::Int(p.port)),
    };
    let networking = match &sgs.networking_source {
        Some(src) => networking(
            src,
            t.cfg.disable_restricted_sg_rules,
            &tg_port,
            hc_port,
            tg.protocol,
        ),
        None => Vec::new(),
    };
    let node_selector = match tg.target_type {
        TargetType::Instance => t.a.map(sfx::TARGET_NODE_LABELS)?.filter(|l| !l.is_empty()),
        TargetType::Ip => None,
    };
    Ok(TargetGroupBindingResource {
        id: tg.id.clone(),
        name: tg.name.clone(),
        namespace: t.namespace.to_string(),
        labels: t.tags.stack_labels(),
        spec: TargetGroupBindingModelSpec {
            target_group_arn: Token::TargetGroupArn(tg.id.clone()),
            target_type: tg.target_type,
            service_name: t.name.to_string(),
            service_port: IntOrString::Int(p.port),
            networking,
            node_selector,
            ip_address_type: tg.ip_address_type.clone(),
            vpc_id: t.cfg.vpc_id.clone(),
            multi_cluster_target_group: t.a.bool(sfx::MULTI_CLUSTER_TG)?.unwrap_or(false),
            target_group_protocol: tg.protocol,
        },
    })
}
