//! Gateway listeners: upstream's per-listener validation (`validateListeners`, first failure wins,
//! with its condition reasons and messages) and the load balancer listener each port becomes.

use std::collections::{BTreeMap, BTreeSet};

use gateway_api::apis::standard::gateways::{GatewayListeners, GatewayListenersTlsMode};

use super::routes::RouteKind;
use crate::crd::gateway::load_balancer_configuration::{
    ListenerConfiguration, LoadBalancerConfigurationSpec,
};
use crate::model::types::Protocol;

/// Which load balancer the Gateway's class asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LbKind {
    Alb,
    Nlb,
}

/// The outcome of validating one listener (the listener status conditions' reason/message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerValidation {
    pub valid: bool,
    pub reason: &'static str,
    pub message: String,
}

/// Route kinds a listener of this protocol accepts when `allowedRoutes.kinds` is empty.
pub fn default_route_kinds(protocol: &str) -> &'static [RouteKind] {
    match protocol {
        "TCP" => &[RouteKind::Tcp],
        "UDP" => &[RouteKind::Udp],
        "TLS" => &[RouteKind::Tls, RouteKind::Tcp],
        "HTTP" => &[RouteKind::Http],
        "HTTPS" => &[RouteKind::Http, RouteKind::Grpc],
        _ => &[],
    }
}

/// Route kinds the listener allows: `allowedRoutes.kinds`, else by protocol.
pub fn allowed_kinds(l: &GatewayListeners) -> Vec<String> {
    let listed: Vec<String> = l
        .allowed_routes
        .as_ref()
        .and_then(|a| a.kinds.as_ref())
        .map(|k| k.iter().map(|k| k.kind.clone()).collect())
        .unwrap_or_default();
    if listed.is_empty() {
        default_route_kinds(&l.protocol)
            .iter()
            .map(|k| k.as_str().to_string())
            .collect()
    } else {
        listed
    }
}

fn kinds_supported(l: &GatewayListeners, lb: LbKind) -> bool {
    let served: &[RouteKind] = match lb {
        LbKind::Alb => &[RouteKind::Http, RouteKind::Grpc],
        LbKind::Nlb => &[RouteKind::Tcp, RouteKind::Tls, RouteKind::Udp],
    };
    l.allowed_routes
        .as_ref()
        .and_then(|a| a.kinds.as_ref())
        .into_iter()
        .flatten()
        .all(|k| served.iter().any(|s| s.as_str() == k.kind))
}

/// Validates the Gateway's listeners in order, as upstream: kinds, port range, protocol for the
/// load balancer kind, protocol conflict on a port (TCP+UDP allowed), hostname conflict.
pub fn validate(
    listeners: &[GatewayListeners],
    lb: LbKind,
) -> BTreeMap<String, ListenerValidation> {
    validate_groups(&[listeners], lb).pop().unwrap_or_default()
}

/// Validates groups of listeners (the Gateway's, then each accepted ListenerSet's in
/// precedence order) as one list: a listener conflicting with one of an earlier group fails,
/// the earlier one keeps its port. One result map per group, by listener name.
pub fn validate_groups(
    groups: &[&[GatewayListeners]],
    lb: LbKind,
) -> Vec<BTreeMap<String, ListenerValidation>> {
    let mut port_protocol: BTreeMap<i32, &str> = BTreeMap::new();
    let mut port_hostnames: BTreeSet<(i32, &str)> = BTreeSet::new();
    let mut all = Vec::new();
    for listeners in groups {
        let mut out = BTreeMap::new();
        validate_into(
            listeners,
            lb,
            &mut port_protocol,
            &mut port_hostnames,
            &mut out,
        );
        all.push(out);
    }
    all
}

fn validate_into<'a>(
    listeners: &'a [GatewayListeners],
    lb: LbKind,
    port_protocol: &mut BTreeMap<i32, &'a str>,
    port_hostnames: &mut BTreeSet<(i32, &'a str)>,
    out: &mut BTreeMap<String, ListenerValidation>,
) {
    for l in listeners {
        let protocol_ok = match lb {
            LbKind::Alb => matches!(l.protocol.as_str(), "HTTP" | "HTTPS"),
            LbKind::Nlb => matches!(l.protocol.as_str(), "TCP" | "UDP" | "TLS"),
        };
        let fail = |reason, message| ListenerValidation {
            valid: false,
            reason,
            message,
        };
        let result = if !kinds_supported(l, lb) {
            fail(
                "InvalidRouteKinds",
                format!("Invalid route kind for listener {}", l.name),
            )
        } else if !(1..=65535).contains(&l.port) {
            fail(
                "PortUnavailable",
                format!(
                    "Port {} is not available (listener name {})",
                    l.port, l.name
                ),
            )
        } else if !protocol_ok {
            fail(
                "UnsupportedProtocol",
                format!(
                    "Unsupported protocol {} for listener {}",
                    l.protocol, l.name
                ),
            )
        } else {
            let mut r = ListenerValidation {
                valid: true,
                reason: "Accepted",
                message: "Listener is accepted.".into(),
            };
            match port_protocol.get(&l.port) {
                Some(existing) if *existing != l.protocol => {
                    let tcp_udp = matches!(
                        (*existing, l.protocol.as_str()),
                        ("TCP", "UDP") | ("UDP", "TCP")
                    );
                    if !tcp_udp {
                        r = fail(
                            "ProtocolConflict",
                            format!("Protocol conflict for port {}", l.port),
                        );
                    }
                }
                Some(_) => {}
                None => {
                    port_protocol.insert(l.port, &l.protocol);
                }
            }
            if let Some(h) = &l.hostname {
                if !port_hostnames.insert((l.port, h.as_str())) {
                    r = fail(
                        "HostnameConflict",
                        format!("Hostname conflict for port {} with hostname {h}", l.port),
                    );
                }
            }
            r
        };
        out.insert(l.name.clone(), result);
    }
}

/// The load balancer listener protocol of a Gateway listener: TLS passthrough is plain TCP.
pub fn elb_protocol(l: &GatewayListeners) -> Option<Protocol> {
    Some(match l.protocol.as_str() {
        "HTTP" => Protocol::Http,
        "HTTPS" => Protocol::Https,
        "TCP" => Protocol::Tcp,
        "UDP" => Protocol::Udp,
        "TLS" => {
            let passthrough = l
                .tls
                .as_ref()
                .and_then(|t| t.mode.as_ref())
                .is_some_and(|m| *m == GatewayListenersTlsMode::Passthrough);
            if passthrough {
                Protocol::Tcp
            } else {
                Protocol::Tls
            }
        }
        _ => return None,
    })
}

/// The ListenerConfiguration of a port's `protocol:port`: the last entry for it wins, as in
/// upstream's per-port map (the CRD allows duplicates; `unread` warns of them).
pub fn listener_configuration(
    lbc: &LoadBalancerConfigurationSpec,
    protocol: Protocol,
    port: i32,
) -> Option<&ListenerConfiguration> {
    let key = format!("{}:{port}", protocol.as_str());
    lbc.listener_configurations
        .iter()
        .flatten()
        .rfind(|c| c.protocol_port.eq_ignore_ascii_case(&key))
}

/// The listener protocol after the ListenerConfiguration's `quicEnabled` upgrade (upstream's shared
/// `buildListenerSpec`, so ALB listeners refuse it too): UDP becomes QUIC, TCP_UDP becomes
/// TCP_QUIC, anything else fails the build.
pub fn quic_upgrade(
    protocol: Protocol,
    listener_cfg: Option<&ListenerConfiguration>,
) -> Result<Protocol, String> {
    if listener_cfg.and_then(|c| c.quic_enabled) != Some(true) {
        return Ok(protocol);
    }
    match protocol {
        Protocol::Udp => Ok(Protocol::Quic),
        Protocol::TcpUdp => Ok(Protocol::TcpQuic),
        other => Err(format!(
            "QUIC protocol upgrade not supported for protocol {}",
            other.as_str()
        )),
    }
}

/// The protocol of one port from the protocols of its listeners (upstream's `mergeProtocols`).
pub fn port_protocol(protocols: &[Protocol]) -> Result<Protocol, String> {
    let conflict = || {
        "invalid listeners on gateway, listeners with same ports cannot have different protocols"
            .to_string()
    };
    let mut merged = *protocols.first().ok_or_else(conflict)?;
    for p in &protocols[1..] {
        merged = match (merged, *p) {
            (a, b) if a == b => a,
            (Protocol::Tcp, Protocol::Udp)
            | (Protocol::Udp, Protocol::Tcp)
            | (Protocol::TcpUdp, Protocol::Tcp | Protocol::Udp) => Protocol::TcpUdp,
            _ => return Err(conflict()),
        };
    }
    Ok(merged)
}
