//! One listener per Service port: protocol (TCP / UDP, TCP_UDP merging, TLS via `ssl-cert` +
//! `ssl-ports`, QUIC), certificates, SSL policy, ALPN, listener attributes and the forward
//! action to the port's target group, or the weighted forward of its `actions.*` annotation
//! (upstream's `model_build_listener.go`).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::ServicePort;

use super::annotations::{key, sfx};
use super::load_balancer::LbFacts;
use super::task::Task;
use super::weighted;
use crate::model::error::Fail;
use crate::model::types::*;

/// Service-wide listener settings.
struct ListenerConfig {
    certificates: Vec<String>,
    tls_ports: BTreeSet<String>,
    quic_ports: BTreeSet<String>,
    tcp_udp_ports: BTreeSet<i32>,
    ssl_policy: String,
    backend_protocol: String,
}

const ALPN_POLICIES: [&str; 5] = [
    "None",
    "HTTP1Only",
    "HTTP2Only",
    "HTTP2Optional",
    "HTTP2Preferred",
];

fn port_protocol(p: &ServicePort) -> &str {
    p.protocol.as_deref().unwrap_or("TCP")
}

/// `aws-load-balancer-enable-tcp-udp-listener`, else gate EnableTCPUDPListener.
fn tcp_udp_enabled(t: &Task<'_>) -> Result<bool, Fail> {
    Ok(t.a
        .bool(sfx::TCP_UDP_LISTENER)?
        .unwrap_or_else(|| t.cfg.gate("EnableTCPUDPListener")))
}

/// `ssl-ports` entries must each name a port (by name or number).
fn tls_ports(t: &Task<'_>) -> Result<BTreeSet<String>, Fail> {
    let raw = t.a.list(sfx::SSL_PORTS).unwrap_or_default();
    let unused: Vec<&String> = raw
        .iter()
        .filter(|r| {
            !t.ports()
                .iter()
                .any(|p| p.name.as_deref() == Some(r.as_str()) || p.port.to_string() == **r)
        })
        .collect();
    if !unused.is_empty() {
        let list: Vec<&str> = unused.iter().map(|s| s.as_str()).collect();
        return Err(Fail::at(
            key(sfx::SSL_PORTS),
            format!("Unused port in ssl-ports annotation [{}]", list.join(" ")),
        ));
    }
    Ok(raw.into_iter().collect())
}

fn config(t: &Task<'_>, tcp_udp_ports: BTreeSet<i32>) -> Result<ListenerConfig, Fail> {
    Ok(ListenerConfig {
        certificates: t.a.list(sfx::SSL_CERT).unwrap_or_default(),
        tls_ports: tls_ports(t)?,
        quic_ports: t
            .a
            .list(sfx::QUIC_PORTS)
            .unwrap_or_default()
            .into_iter()
            .collect(),
        tcp_udp_ports,
        ssl_policy: t
            .a
            .string(sfx::SSL_POLICY)
            .unwrap_or(&t.cfg.default_ssl_policy)
            .to_string(),
        backend_protocol: t.a.string(sfx::BACKEND_PROTOCOL).unwrap_or("").to_string(),
    })
}

/// Two entries on one port must be one TCP and one UDP to merge into TCP_UDP.
fn validate_merge(ports: &[&ServicePort]) -> Result<(), Fail> {
    if ports.len() != 2 {
        let list: Vec<String> = ports
            .iter()
            .map(|p| format!("{}/{}", p.port, port_protocol(p)))
            .collect();
        return Err(Fail::msg(format!(
            "can only merge two ports, not {} ({})",
            ports.len(),
            list.join(" ")
        )));
    }
    for p in ports {
        if !matches!(port_protocol(p), "TCP" | "UDP") {
            return Err(Fail::msg(format!(
                "unsupported protocol for merging: {}",
                port_protocol(p)
            )));
        }
    }
    if port_protocol(ports[0]) == port_protocol(ports[1]) {
        return Err(Fail::msg(format!(
            "protocols can't match for merging: {}",
            port_protocol(ports[0])
        )));
    }
    Ok(())
}

fn parse_protocol(raw: &str) -> Result<Protocol, Fail> {
    match raw {
        "TCP" => Ok(Protocol::Tcp),
        "UDP" => Ok(Protocol::Udp),
        other => Err(Fail::msg(format!(
            "unsupported listener protocol {other} for Network Load Balancers"
        ))),
    }
}

/// (listener protocol, target group protocol) of one port.
fn protocols(cfg: &ListenerConfig, p: &ServicePort) -> Result<(Protocol, Protocol), Fail> {
    let base = if cfg.tcp_udp_ports.contains(&p.port) {
        Protocol::TcpUdp
    } else {
        parse_protocol(port_protocol(p))?
    };
    let (mut listener, mut tg) = (base, base);
    let named = |set: &BTreeSet<String>| {
        p.name.as_ref().is_some_and(|n| set.contains(n)) || set.contains(&p.port.to_string())
    };
    if !matches!(base, Protocol::Udp | Protocol::TcpUdp)
        && !cfg.certificates.is_empty()
        && (cfg.tls_ports.is_empty() || named(&cfg.tls_ports))
    {
        if cfg.backend_protocol == "ssl" {
            tg = Protocol::Tls;
        }
        listener = Protocol::Tls;
    }
    if named(&cfg.quic_ports) {
        (listener, tg) = match listener {
            Protocol::Udp => (Protocol::Quic, Protocol::Quic),
            Protocol::TcpUdp => (Protocol::TcpQuic, Protocol::TcpQuic),
            other => {
                return Err(Fail::at(
                    key(sfx::QUIC_PORTS),
                    format!("Unsupported QUIC upgrade for protocol {}", other.as_str()),
                ))
            }
        };
    }
    Ok((listener, tg))
}

/// `aws-load-balancer-alpn-policy`, TLS listeners only.
fn alpn_policy(t: &Task<'_>, listener: Protocol) -> Result<Option<String>, Fail> {
    if listener != Protocol::Tls {
        return Ok(None);
    }
    match t.a.string(sfx::ALPN_POLICY) {
        None => Ok(None),
        Some(v) if ALPN_POLICIES.contains(&v) => Ok(Some(v.to_string())),
        Some(v) => Err(Fail::at(
            key(sfx::ALPN_POLICY),
            format!("invalid ALPN policy {v}, policy must be one of [None, HTTP1Only, HTTP2Only, HTTP2Optional, HTTP2Preferred]"),
        )),
    }
}

/// `aws-load-balancer-listener-attributes.<PROTOCOL>-<port>`; AWS never gets them for TLS
/// listeners (upstream's deployer skips them), so there they are a warning, not a setting.
fn attributes(
    t: &Task<'_>,
    listener: Protocol,
    port: i32,
    warnings: &mut Vec<Warning>,
) -> Result<BTreeMap<String, String>, Fail> {
    let sfx_key = format!(
        "{}.{}-{port}",
        sfx::LISTENER_ATTRIBUTES_PREFIX,
        listener.as_str()
    );
    let attrs = t.a.map(&sfx_key)?.unwrap_or_default();
    if listener == Protocol::Tls && !attrs.is_empty() {
        warnings.push(Warning {
            ingress: None,
            annotation: Some(key(&sfx_key)),
            message: "listener attributes are not applied to TLS listeners".into(),
        });
        return Ok(BTreeMap::new());
    }
    Ok(attrs)
}

/// The ports that get listeners (spec order), grouped per port number when merging.
fn listener_ports<'p>(
    t: &'p Task<'_>,
    warnings: &mut Vec<Warning>,
) -> Result<(Vec<&'p ServicePort>, BTreeSet<i32>), Fail> {
    let mut by_port: BTreeMap<i32, Vec<&ServicePort>> = BTreeMap::new();
    for p in t.ports() {
        by_port.entry(p.port).or_default().push(p);
    }
    let merge = tcp_udp_enabled(t)?;
    let mut tcp_udp = BTreeSet::new();
    let mut out = Vec::new();
    for (port, entries) in &by_port {
        if entries.len() > 1 {
            if merge {
                validate_merge(entries)?;
                tcp_udp.insert(*port);
            } else {
                // Upstream keeps the first entry only; we say so instead of staying silent.
                warnings.push(Warning {
                    ingress: None,
                    annotation: None,
                    message: format!("port {port} is listed {} times; only its first entry ({}) gets a listener (enable TCP_UDP listeners with {} to merge TCP and UDP)", entries.len(), port_protocol(entries[0]), key(sfx::TCP_UDP_LISTENER)),
                });
            }
        }
        out.push(entries[0]);
    }
    Ok((out, tcp_udp))
}

/// Builds every listener with its target groups and TargetGroupBindings into `stack`.
pub(super) fn build_all(t: &Task<'_>, facts: &LbFacts, stack: &mut Stack) -> Result<(), Fail> {
    let mut warnings = Vec::new();
    let (ports, tcp_udp) = listener_ports(t, &mut warnings)?;
    let cfg = config(t, tcp_udp)?;
    let user_tags = t.annotation_tags()?;
    let mut used_actions = BTreeSet::new();
    let mut names = Vec::new();
    for p in ports {
        let (listener_proto, tg_proto) = protocols(&cfg, p)?;
        let action = weighted::default_action(
            t,
            facts,
            p,
            listener_proto,
            tg_proto,
            stack,
            &mut warnings,
            &mut used_actions,
        )?;
        let tls = listener_proto == Protocol::Tls;
        stack.listeners.push(Listener {
            id: p.port.to_string(),
            load_balancer_arn: Token::LoadBalancerArn,
            port: p.port,
            protocol: listener_proto,
            default_actions: vec![action],
            certificates: if tls {
                cfg.certificates.clone()
            } else {
                Vec::new()
            },
            certificate_discovery: Vec::new(),
            ssl_policy: tls.then(|| cfg.ssl_policy.clone()),
            mutual_authentication: None,
            alpn_policy: alpn_policy(t, listener_proto)?,
            attributes: attributes(t, listener_proto, p.port, &mut warnings)?,
            tags: t.tags.listener_tags(&p.port.to_string(), user_tags.clone()),
        });
        names.push(format!("{}-{}", listener_proto.as_str(), p.port));
    }
    warnings.extend(weighted::unread(t, &used_actions, &names));
    stack.warnings.extend(warnings);
    Ok(())
}
