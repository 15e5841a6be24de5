//! The TargetGroupBinding of an NLB target group, shaped like upstream's
//! `buildTargetGroupBindingSpec` / `buildTargetGroupBindingNetworking`: service port by number,
//! node selector for instance targets, and one networking rule per port from the backend (or
//! managed) SG — the traffic port, then a distinct health-check port; for NLBs without
//! security groups, rules from CIDR blocks (`buildTargetGroupBindingNetworkingLegacy`).

use k8s_openapi::api::core::v1::ServicePort;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::annotations::sfx;
use super::build::{LbFacts, Task};
use super::security_groups;
use crate::crd::target_group_binding::{NetworkingPort, NetworkingProtocol};
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

/// Sources and ports of an NLB without security groups: the NLB subnets' CIDRs, or for
/// UDP-ish target groups and preserved client IPs the source ranges (default: everywhere, or
/// the VPC for an internal NLB); plus a health-check rule from the subnets when needed.
struct Legacy<'a> {
    facts: &'a LbFacts,
    tg: &'a TargetGroup,
    preserve: bool,
}

/// Why legacy rules cannot be computed offline (no subnets / VPC CIDRs at hand).
const LEGACY_NEEDS_AWS: &str = "node security-group rules of an NLB without security groups come from its subnets' (and VPC's) CIDR blocks, which are resolved when the subnets are known";

fn port_rule(proto: NetworkingProtocol, port: &IntOrString) -> NetworkingPort {
    NetworkingPort {
        protocol: Some(proto),
        port: Some(port.clone()),
    }
}

impl Legacy<'_> {
    fn v6(&self) -> bool {
        self.tg.ip_address_type == "ipv6"
    }

    fn subnet_cidrs(&self) -> Option<Vec<String>> {
        let subnets = self.facts.subnets.as_ref()?;
        Some(
            subnets
                .iter()
                .flat_map(|s| {
                    if self.v6() {
                        s.ipv6_cidrs.clone()
                    } else {
                        vec![s.cidr_block.clone()]
                    }
                })
                .collect(),
        )
    }

    /// Everywhere, or the VPC's CIDRs for an internal NLB.
    fn default_sources(&self, t: &Task<'_>) -> Option<Vec<String>> {
        if self.facts.scheme == LoadBalancerScheme::Internal {
            let vpc = t.env.vpc_cidrs.as_ref()?;
            return Some(
                vpc.iter()
                    .filter(|c| c.contains(':') == self.v6())
                    .cloned()
                    .collect(),
            );
        }
        Some(vec![
            if self.v6() { "::/0" } else { "0.0.0.0/0" }.to_string()
        ])
    }

    fn rules(
        &self,
        t: &Task<'_>,
        tg_port: &IntOrString,
        hc_port: &IntOrString,
    ) -> Option<Vec<CidrNetworkingRule>> {
        use NetworkingProtocol::{Tcp, Udp};
        let subnet_cidrs = self.subnet_cidrs()?;
        let udpish = self.tg.protocol.carries_udp();
        let (mut traffic, mut default_used) = (subnet_cidrs.clone(), false);
        if udpish || self.preserve {
            traffic = security_groups::source_ranges(t);
            if traffic.is_empty() {
                traffic = self.default_sources(t)?;
                default_used = true;
            }
        }
        let ports = match self.tg.protocol {
            Protocol::TcpUdp | Protocol::TcpQuic => {
                vec![port_rule(Tcp, tg_port), port_rule(Udp, tg_port)]
            }
            Protocol::Udp | Protocol::Quic => vec![port_rule(Udp, tg_port)],
            _ => vec![port_rule(Tcp, tg_port)],
        };
        let hc_is_traffic = match hc_port {
            IntOrString::String(s) => s == "traffic-port",
            IntOrString::Int(n) => *n == int_value(tg_port),
        };
        let skip_hc = self.tg.protocol != Protocol::Udp
            && hc_is_traffic
            && (!self.preserve
                || default_used
                || traffic.iter().any(|c| c == "0.0.0.0/0" || c == "::/0"));
        let mut out = vec![CidrNetworkingRule {
            from_cidrs: traffic,
            ports,
        }];
        if !skip_hc && !subnet_cidrs.is_empty() {
            let port = match hc_port {
                IntOrString::String(s) if s == "traffic-port" => tg_port,
                other => other,
            };
            out.push(CidrNetworkingRule {
                from_cidrs: subnet_cidrs,
                ports: vec![port_rule(Tcp, port)],
            });
        }
        Some(out)
    }
}

/// Go's `IntOrString.IntValue()`: a string that is not a number counts as 0.
fn int_value(p: &IntOrString) -> i32 {
    match p {
        IntOrString::Int(n) => *n,
        IntOrString::String(s) => s.parse().unwrap_or(0),
    }
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
            let legacy = Legacy {
                facts,
                tg,
                preserve,
            };
            match legacy.rules(t, &tg_port, hc_port) {
                Some(r) => networking_from_cidrs = r,
                None => warnings.push(Warning {
                    ingress: None,
                    annotation: None,
                    message: format!("{}: {LEGACY_NEEDS_AWS}", tg.id),
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
        TargetType::Instance => t.a.map(sfx::TARGET_NODE_LABELS)?.filter(|l| !l.is_empty()),
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
