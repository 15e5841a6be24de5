//! TargetGroupBinding rules of an NLB without security groups, from CIDR blocks (upstream's
//! `buildTargetGroupBindingNetworkingLegacy` for Services and `nlbNoSecurityGroups` for
//! Gateways): traffic from the NLB subnets' CIDRs, or with preserved client IPs from the
//! source ranges (default everywhere, or the VPC for an internal NLB); plus a health-check
//! rule from the subnets when the health check cannot ride on the traffic rule.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::subnets::SubnetInfo;
use super::types::{CidrNetworkingRule, LoadBalancerScheme, Protocol};
use crate::crd::target_group_binding::{NetworkingPort, NetworkingProtocol};

/// Why the rules cannot be computed offline (no subnets / VPC CIDRs at hand).
pub const NEEDS_AWS: &str = "node security-group rules of an NLB without security groups come from its subnets' (and VPC's) CIDR blocks, which are resolved when the subnets are known";

/// The load balancer's side: its subnets and scheme, the user's source ranges, the VPC.
pub struct Sources<'a> {
    /// The NLB's subnets; None while unknown.
    pub subnets: Option<&'a [SubnetInfo]>,
    pub scheme: LoadBalancerScheme,
    pub source_ranges: &'a [String],
    pub vpc_cidrs: Option<&'a [String]>,
}

/// The target group's side.
pub struct Target<'a> {
    pub protocol: Protocol,
    pub ipv6: bool,
    /// Targets see client IPs (UDP-ish target groups always do).
    pub preserve: bool,
    pub port: &'a IntOrString,
    pub health_check_port: &'a IntOrString,
    /// Protocols whose health check always gets its own rule: upstream's Service builder
    /// exempts only UDP, its Gateway builder every UDP-carrying protocol.
    pub hc_rule_always: fn(Protocol) -> bool,
}

fn port_rule(proto: NetworkingProtocol, port: &IntOrString) -> NetworkingPort {
    NetworkingPort {
        protocol: Some(proto),
        port: Some(port.clone()),
    }
}

/// Go's `IntOrString.IntValue()`: a string that is not a number counts as 0.
fn int_value(p: &IntOrString) -> i32 {
    match p {
        IntOrString::Int(n) => *n,
        IntOrString::String(s) => s.parse().unwrap_or(0),
    }
}

impl Sources<'_> {
    fn subnet_cidrs(&self, v6: bool) -> Option<Vec<String>> {
        Some(
            self.subnets?
                .iter()
                .flat_map(|s| {
                    if v6 {
                        s.ipv6_cidrs.clone()
                    } else {
                        vec![s.cidr_block.clone()]
                    }
                })
                .collect(),
        )
    }

    /// Everywhere, or the VPC's CIDRs for an internal NLB.
    fn default_sources(&self, v6: bool) -> Option<Vec<String>> {
        if self.scheme == LoadBalancerScheme::Internal {
            let vpc = self.vpc_cidrs?;
            return Some(
                vpc.iter()
                    .filter(|c| c.contains(':') == v6)
                    .cloned()
                    .collect(),
            );
        }
        Some(vec![if v6 { "::/0" } else { "0.0.0.0/0" }.to_string()])
    }

    /// The rules for target group `tg`; None while the subnets (or the VPC) are unknown.
    pub fn rules(&self, tg: &Target<'_>) -> Option<Vec<CidrNetworkingRule>> {
        use NetworkingProtocol::{Tcp, Udp};
        let subnet_cidrs = self.subnet_cidrs(tg.ipv6)?;
        let (mut traffic, mut default_used) = (subnet_cidrs.clone(), false);
        if tg.protocol.carries_udp() || tg.preserve {
            traffic = self.source_ranges.to_vec();
            if traffic.is_empty() {
                traffic = self.default_sources(tg.ipv6)?;
                default_used = true;
            }
        }
        let ports = match tg.protocol {
            Protocol::TcpUdp | Protocol::TcpQuic => {
                vec![port_rule(Tcp, tg.port), port_rule(Udp, tg.port)]
            }
            Protocol::Udp | Protocol::Quic => vec![port_rule(Udp, tg.port)],
            _ => vec![port_rule(Tcp, tg.port)],
        };
        let hc_is_traffic = match tg.health_check_port {
            IntOrString::String(s) => s == "traffic-port",
            IntOrString::Int(n) => *n == int_value(tg.port),
        };
        let skip_hc = !(tg.hc_rule_always)(tg.protocol)
            && hc_is_traffic
            && (!tg.preserve
                || default_used
                || traffic.iter().any(|c| c == "0.0.0.0/0" || c == "::/0"));
        let mut out = vec![CidrNetworkingRule {
            from_cidrs: traffic,
            ports,
        }];
        if !skip_hc && !subnet_cidrs.is_empty() {
            let port = match tg.health_check_port {
                IntOrString::String(s) if s == "traffic-port" => tg.port,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Upstream's `Test_Test_buildTargetGroupBindingNetworking_nlbZeroSg` (Gateway builder):
    /// subnet 192.168.1.0/24 (+ two IPv6 /64s), VPC 192.168.0.0/16 + 2600:1f14:f8c:2700::/56,
    /// instance targets on port 80, no source ranges.
    #[test]
    fn gateway_rules_match_upstreams_nlb_zero_sg_table() {
        let subnets = [SubnetInfo {
            id: "subnet-1".into(),
            cidr_block: "192.168.1.0/24".into(),
            ipv6_cidrs: vec![
                "2600:1f13:837:8500::/64".into(),
                "2600:1f13:837:8504::/64".into(),
            ],
            ..SubnetInfo::default()
        }];
        let vpc = [
            "192.168.0.0/16".to_string(),
            "2600:1f14:f8c:2700::/56".into(),
        ];
        let (p80, p85) = (IntOrString::Int(80), IntOrString::Int(85));
        type Want = Vec<(Vec<&'static str>, Vec<(NetworkingProtocol, i32)>)>;
        use LoadBalancerScheme::{Internal, InternetFacing};
        use NetworkingProtocol::{Tcp, Udp};
        let cases: Vec<(&str, LoadBalancerScheme, Protocol, bool, &IntOrString, Want)> = vec![
            (
                "tcp : instance : ipv4 : internal : hc port = traffic port",
                Internal,
                Protocol::Tcp,
                false,
                &p80,
                vec![(vec!["192.168.0.0/16"], vec![(Tcp, 80)])],
            ),
            (
                "tcp : instance : ipv4 : internet-facing : hc port = traffic port",
                InternetFacing,
                Protocol::Tcp,
                false,
                &p80,
                vec![(vec!["0.0.0.0/0"], vec![(Tcp, 80)])],
            ),
            (
                "tcp : instance : ipv4 : internal : hc port != traffic port",
                Internal,
                Protocol::Tcp,
                false,
                &p85,
                vec![
                    (vec!["192.168.0.0/16"], vec![(Tcp, 80)]),
                    (vec!["192.168.1.0/24"], vec![(Tcp, 85)]),
                ],
            ),
            (
                "tcp : instance : ipv4 : internet-facing : hc port != traffic port",
                InternetFacing,
                Protocol::Tcp,
                false,
                &p85,
                vec![
                    (vec!["0.0.0.0/0"], vec![(Tcp, 80)]),
                    (vec!["192.168.1.0/24"], vec![(Tcp, 85)]),
                ],
            ),
            (
                "udp : instance : ipv4 : internal : hc port = traffic port",
                Internal,
                Protocol::Udp,
                false,
                &p80,
                vec![
                    (vec!["192.168.0.0/16"], vec![(Udp, 80)]),
                    (vec!["192.168.1.0/24"], vec![(Tcp, 80)]),
                ],
            ),
            (
                "udp : instance : ipv4 : internet-facing : hc port = traffic port",
                InternetFacing,
                Protocol::Udp,
                false,
                &p80,
                vec![
                    (vec!["0.0.0.0/0"], vec![(Udp, 80)]),
                    (vec!["192.168.1.0/24"], vec![(Tcp, 80)]),
                ],
            ),
            (
                "tcp : instance : ipv6 : internal : hc port = traffic port",
                Internal,
                Protocol::Tcp,
                true,
                &p80,
                vec![(vec!["2600:1f14:f8c:2700::/56"], vec![(Tcp, 80)])],
            ),
            (
                "tcp : instance : ipv6 : internet-facing : hc port != traffic port",
                InternetFacing,
                Protocol::Tcp,
                true,
                &p85,
                vec![
                    (vec!["::/0"], vec![(Tcp, 80)]),
                    (
                        vec!["2600:1f13:837:8500::/64", "2600:1f13:837:8504::/64"],
                        vec![(Tcp, 85)],
                    ),
                ],
            ),
        ];
        /// One rule as the table writes it: its CIDRs and its (protocol, port) pairs.
        type Rule = (Vec<String>, Vec<(NetworkingProtocol, i32)>);
        for (name, scheme, protocol, ipv6, hc, want) in cases {
            let sources = Sources {
                subnets: Some(&subnets),
                scheme,
                source_ranges: &[],
                vpc_cidrs: Some(&vpc),
            };
            let got: Vec<Rule> = sources
                .rules(&Target {
                    protocol,
                    ipv6,
                    preserve: true,
                    port: &p80,
                    health_check_port: hc,
                    hc_rule_always: |p| p.carries_udp(),
                })
                .unwrap()
                .into_iter()
                .map(|r| {
                    let ports = r
                        .ports
                        .iter()
                        .map(|p| match (p.protocol, &p.port) {
                            (Some(proto), Some(IntOrString::Int(n))) => (proto, *n),
                            other => panic!("{name}: {other:?}"),
                        })
                        .collect();
                    (r.from_cidrs, ports)
                })
                .collect();
            let want: Vec<Rule> = want
                .into_iter()
                .map(|(c, p)| (c.into_iter().map(String::from).collect(), p))
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }
}
