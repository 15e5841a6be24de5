//! The node rules of a Gateway's TargetGroupBinding when security groups front its load
//! balancer (upstream's Gateway `standardBuilder`): from the backend (or managed) group, the
//! traffic port over UDP for UDP-carrying target groups else TCP, then the health-check port
//! over TCP (always for UDP-carrying groups, else only when it is another number), then the
//! target control port; `--disable-restricted-sg-rules` opens every TCP port instead (and every
//! UDP port for UDP-carrying groups).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::crd::target_group_binding::NetworkingProtocol;
use crate::model::types::{NetworkingRule, Protocol, Token};

fn rule(source: &Token, protocol: NetworkingProtocol, port: Option<IntOrString>) -> NetworkingRule {
    NetworkingRule {
        from_security_group: source.clone(),
        port,
        protocol: Some(protocol),
    }
}

/// The rules for a target group of `protocol` reached on `target_port`, health-checked on
/// `hc_port` (a number, or `traffic-port`), with an optional target control port.
pub(super) fn rules(
    source: &Token,
    disable_restricted: bool,
    protocol: Protocol,
    target_port: &IntOrString,
    hc_port: &IntOrString,
    control: Option<i32>,
) -> Vec<NetworkingRule> {
    use NetworkingProtocol::{Tcp, Udp};
    let udp = protocol.carries_udp();
    if disable_restricted {
        let mut out = vec![rule(source, Tcp, None)];
        if udp {
            out.push(rule(source, Udp, None));
        }
        return out;
    }
    let traffic = if udp { Udp } else { Tcp };
    let mut out = vec![rule(source, traffic, Some(target_port.clone()))];
    // Upstream compares with the traffic port's integer value (0 for a named port).
    let target_n = match target_port {
        IntOrString::Int(p) => *p,
        IntOrString::String(_) => 0,
    };
    let distinct_hc = matches!(hc_port, IntOrString::Int(n) if *n != target_n);
    if udp || distinct_hc {
        let port = match hc_port {
            IntOrString::Int(_) => hc_port.clone(),
            IntOrString::String(_) => target_port.clone(),
        };
        out.push(rule(source, Tcp, Some(port)));
    }
    if let Some(c) = control {
        out.push(rule(source, Tcp, Some(IntOrString::Int(c))));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use NetworkingProtocol::{Tcp, Udp};

    fn shape(rules: &[NetworkingRule]) -> Vec<(NetworkingProtocol, Option<IntOrString>)> {
        assert!(rules
            .iter()
            .all(|r| r.from_security_group == Token::BackendSecurityGroupId));
        rules
            .iter()
            .map(|r| (r.protocol.unwrap(), r.port.clone()))
            .collect()
    }

    #[test]
    fn node_rules_follow_upstreams_gateway_builder() {
        let src = Token::BackendSecurityGroupId;
        let (p, tp) = (
            IntOrString::Int(30080),
            IntOrString::String("traffic-port".into()),
        );
        let n = |v| Some(IntOrString::Int(v));
        // TCP on the traffic port only; a health check there adds nothing.
        let r = rules(&src, false, Protocol::Tcp, &p, &tp, None);
        assert_eq!(shape(&r), vec![(Tcp, n(30080))]);
        let r = rules(
            &src,
            false,
            Protocol::Http,
            &p,
            &IntOrString::Int(30080),
            None,
        );
        assert_eq!(shape(&r), vec![(Tcp, n(30080))], "no duplicate rule");
        // Another health-check port and a target control port get their TCP rules.
        let r = rules(
            &src,
            false,
            Protocol::Http,
            &p,
            &IntOrString::Int(8081),
            Some(9000),
        );
        assert_eq!(
            shape(&r),
            vec![(Tcp, n(30080)), (Tcp, n(8081)), (Tcp, n(9000))]
        );
        // UDP traffic goes over UDP; its TCP health check on the traffic port is let in.
        let r = rules(&src, false, Protocol::Udp, &p, &tp, None);
        assert_eq!(shape(&r), vec![(Udp, n(30080)), (Tcp, n(30080))]);
        let r = rules(
            &src,
            false,
            Protocol::TcpUdp,
            &p,
            &IntOrString::Int(8081),
            None,
        );
        assert_eq!(shape(&r), vec![(Udp, n(30080)), (Tcp, n(8081))]);
        // `--disable-restricted-sg-rules`: every port, UDP too for UDP-carrying groups.
        let r = rules(
            &src,
            true,
            Protocol::Http,
            &p,
            &IntOrString::Int(8081),
            Some(9000),
        );
        assert_eq!(shape(&r), vec![(Tcp, None)]);
        let r = rules(&src, true, Protocol::Udp, &p, &tp, None);
        assert_eq!(shape(&r), vec![(Tcp, None), (Udp, None)]);
    }
}
