//! The TargetGroupBinding of an NLB target group, shaped like upstream's
//! `buildTargetGroupBindingSpec` / `buildTargetGroupBindingNetworking`: service port by number,
//! node selector for instance targets, and one networking rule per port from the backend (or
//! managed) SG — the traffic port, then a distinct health-check port; for NLBs without
//! security groups, rules from CIDR blocks (`buildTargetGroupBindingNetworkingLegacy`).

use k8s_openapi::api::core::v1::ServicePort;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::annotations::sfx;
use super::load_balancer::LbFacts;
use super::security_groups;
use super::task::Task;
use crate::crd::target_group_binding::NetworkingProtocol;
use crate::crd::tgb_shape;
use crate::model::error::Fail;
use crate::model::tgb_cidrs;
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
    preserve: bool,
    facts: &LbFacts,
    warnings: &mut Vec<Warning>,
) -> Result<TargetGroupBindingResource, Fail> {
    let tg_port = match tg.target_type {
        TargetType::Instance => IntOrString::Int(p.node_port.unwrap_or(0)),
        TargetType::Ip => p.target_port.clone().unwrap_or(IntOrString::Int(p.port)),
    };
    let mut networking = Vec::new();
    let mut networking_from_cidrs = Vec::new();
    if facts.sgs.without_sgs() {
        // Legacy NLBs: rules managed unless the annotation says false (default true here).
        if t.a.bool(sfx::MANAGE_SG_RULES)?.unwrap_or(true) {
            let sources = tgb_cidrs::Sources {
                subnets: facts.subnets.as_deref(),
                scheme: facts.scheme,
                source_ranges: &security_groups::source_ranges(t),
                vpc_cidrs: t.env.vpc_cidrs.as_deref(),
            };
            let target = tgb_cidrs::Target {
                protocol: tg.protocol,
                ipv6: tg.ip_address_type == "ipv6",
                preserve,
                port: &tg_port,
                health_check_port: hc_port,
                hc_rule_always: |p| p == Protocol::Udp,
            };
            match sources.rules(&target) {
                Some(r) => networking_from_cidrs = r,
                None => warnings.push(Warning {
                    ingress: None,
                    annotation: None,
                    message: format!("{}: {}", tg.id, tgb_cidrs::NEEDS_AWS),
                }),
            }
        }
    } else if let Some(src) = &facts.sgs.networking_source {
        networking = self::networking(
            src,
            t.cfg.disable_restricted_sg_rules,
            &tg_port,
            hc_port,
            tg.protocol,
        );
    }
    let node_selector = match tg.target_type {
        TargetType::Instance => {
            t.a.map(sfx::TARGET_NODE_LABELS)?
                .filter(|l| !l.is_empty())
                .map(tgb_shape::labels_selector)
        }
        TargetType::Ip => None,
    };
    Ok(TargetGroupBindingResource {
        id: tg.id.clone(),
        name: tg.name.clone(),
        namespace: t.namespace.to_string(),
        labels: t.tags.stack_labels(),
        annotations: None,
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
            networking_from_cidrs,
            networking_one_rule: true,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use NetworkingProtocol::{Tcp, Udp};

    // Upstream's buildTargetGroupBindingNetworking table (model_build_target_group_test.go).
    #[test]
    fn security_group_rules_match_upstream_table() {
        let p80 = IntOrString::Int(80);
        let p808 = IntOrString::Int(808);
        let traffic = IntOrString::String("traffic-port".into());
        type Want = Vec<(NetworkingProtocol, Option<i32>)>;
        let cases: Vec<(&str, &IntOrString, Protocol, bool, Want)> = vec![
            (
                "tcp, unrestricted",
                &traffic,
                Protocol::Tcp,
                true,
                vec![(Tcp, None)],
            ),
            (
                "udp, unrestricted",
                &traffic,
                Protocol::Udp,
                true,
                vec![(Tcp, None), (Udp, None)],
            ),
            ("tcp", &traffic, Protocol::Tcp, false, vec![(Tcp, Some(80))]),
            ("tls", &traffic, Protocol::Tls, false, vec![(Tcp, Some(80))]),
            (
                "udp",
                &traffic,
                Protocol::Udp,
                false,
                vec![(Udp, Some(80)), (Tcp, Some(80))],
            ),
            (
                "tcp, other hc",
                &p808,
                Protocol::Tcp,
                false,
                vec![(Tcp, Some(80)), (Tcp, Some(808))],
            ),
            (
                "udp, other hc",
                &p808,
                Protocol::Udp,
                false,
                vec![(Udp, Some(80)), (Tcp, Some(808))],
            ),
            (
                "tcp_udp, other hc",
                &p808,
                Protocol::TcpUdp,
                false,
                vec![(Udp, Some(80)), (Tcp, Some(80)), (Tcp, Some(808))],
            ),
        ];
        let sg = Token::Literal("sg-backend".into());
        for (name, hc, proto, unrestricted, want) in cases {
            let got: Want = networking(&sg, unrestricted, &p80, hc, proto)
                .into_iter()
                .map(|r| {
                    assert_eq!(r.from_security_group, sg);
                    let port = r.port.map(|p| match p {
                        IntOrString::Int(n) => n,
                        IntOrString::String(_) => -1,
                    });
                    (r.protocol.unwrap(), port)
                })
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }
}
