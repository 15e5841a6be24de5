//! Listener configuration: each member's `listen-ports` (defaults, certificates, ssl-policy,
//! inbound CIDRs / prefix lists, mTLS), the per-port merge across a group, the SSL-redirect port
//! and per-listener attributes, with upstream's conflict errors.

use std::collections::{BTreeMap, BTreeSet};

pub(super) use super::mtls::mutual_authentication;
use crate::annotations::{self as ann, suffix};
use crate::crd::ingress_class_params::ListenerProtocol;
use crate::model::agree::{ensure_same, go_list, group, member_err, merge_key, FirstSetter};
use crate::model::error::{Fail, ModelError};
use crate::model::group::ClassifiedIngress;
use crate::model::types::{
    merge_member_certificates, MemberCertificates, MutualAuthentication, Protocol,
};

/// One member's view of a listener port, or the merged view of the group.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PortConfig {
    pub protocol: Option<Protocol>,
    pub cidr_v4: Vec<String>,
    pub cidr_v6: Vec<String>,
    pub prefix_lists: Vec<String>,
    pub ssl_policy: Option<String>,
    /// Explicit certificate ARNs (IngressClassParams or annotation).
    pub certificates: Vec<String>,
    /// HTTPS without explicit certificates: hosts whose certificates ACM discovery must find.
    pub discovery_hosts: Option<BTreeSet<String>>,
    /// Merged view, when a member needs discovery or a created certificate: each member's
    /// certificates or hosts (a member with a created certificate has neither).
    pub certificate_discovery: Vec<MemberCertificates>,
    /// HTTPS: the ids of the certificates the controller creates (`create-acm-cert`) for the
    /// member (one at most), or for the members in group order in the merged view.
    pub created_certificates: Vec<String>,
    pub mtls: Option<MutualAuthentication>,
}

/// `listen-ports` of one Ingress: default `[{"HTTP":80}]`, or `[{"HTTPS":443}]` with explicit certs.
pub fn listen_ports(
    annotations: &ann::AnnotationMap,
    prefer_tls: bool,
) -> Result<BTreeMap<i32, Protocol>, Fail> {
    let Some(raw) = ann::string(annotations, suffix::LISTEN_PORTS) else {
        return Ok(if prefer_tls {
            BTreeMap::from([(443, Protocol::Https)])
        } else {
            BTreeMap::from([(80, Protocol::Http)])
        });
    };
    let at = ann::key(suffix::LISTEN_PORTS);
    let entries: Vec<BTreeMap<String, i64>> = ann::go_json::from_str(raw).map_err(|e| {
        Fail::at(
            &at,
            format!("failed to parse listen-ports configuration: `{raw}`: {e}"),
        )
    })?;
    if entries.is_empty() {
        return Err(Fail::at(
            &at,
            format!("empty listen-ports configuration: `{raw}`"),
        ));
    }
    let mut out = BTreeMap::new();
    for entry in entries {
        for (protocol, port) in entry {
            if !(1..=65535).contains(&port) {
                return Err(Fail::at(
                    &at,
                    format!("listen port must be within [1, 65535]: {port}"),
                ));
            }
            let p = match protocol.as_str() {
                "HTTP" => Protocol::Http,
                "HTTPS" => Protocol::Https,
                other => {
                    return Err(Fail::at(
                        &at,
                        format!("listen protocol must be within [HTTP, HTTPS]: {other}"),
                    ))
                }
            };
            out.insert(port as i32, p);
        }
    }
    Ok(out)
}

/// Every listener port one Ingress asks for, with its settings; `created` is the id of the
/// certificate the controller creates for it (`create-acm-cert`), which counts as an explicit
/// certificate: HTTPS by default and nothing to discover.
pub fn member_ports(
    m: &ClassifiedIngress<'_>,
    created: Option<&str>,
) -> Result<BTreeMap<i32, PortConfig>, Fail> {
    let a = m.annotations();
    let params = m.params.map(|p| &p.spec);
    let certificates: Vec<String> = match params.filter(|p| !p.certificate_arn.is_empty()) {
        Some(p) => p.certificate_arn.clone(),
        None => ann::string_list(a, suffix::CERTIFICATE_ARN).unwrap_or_default(),
    };
    let ssl_policy = match params.filter(|p| !p.ssl_policy.is_empty()) {
        Some(p) => Some(p.ssl_policy.clone()),
        None => ann::string(a, suffix::SSL_POLICY).map(String::from),
    };
    let prefix_lists = match params {
        Some(p) if !p.prefix_lists_ids.is_empty() => p.prefix_lists_ids.clone(),
        Some(p) if !p.prefix_lists_ids_legacy.is_empty() => p.prefix_lists_ids_legacy.clone(),
        _ => ann::string_list(a, suffix::SECURITY_GROUP_PREFIX_LISTS).unwrap_or_default(),
    };
    let (raw_cidrs, from_params) = match params.filter(|p| !p.inbound_cidrs.is_empty()) {
        Some(p) => (p.inbound_cidrs.clone(), true),
        None => (
            ann::string_list(a, suffix::INBOUND_CIDRS).unwrap_or_default(),
            false,
        ),
    };
    let (mut cidr_v4, mut cidr_v6) = (Vec::new(), Vec::new());
    for cidr in raw_cidrs {
        if cidr.parse::<ipnet::IpNet>().is_err() {
            let e = format!("invalid CIDR address: {cidr}");
            return Err(if from_params {
                Fail::msg(format!(
                    "invalid CIDR in IngressClassParams InboundCIDR {cidr}: {e}"
                ))
            } else {
                Fail::at(
                    ann::key(suffix::INBOUND_CIDRS),
                    format!(
                        "invalid inbound-cidrs settings on Ingress: {}: {e}",
                        m.key()
                    ),
                )
            });
        }
        if cidr.contains(':') {
            cidr_v6.push(cidr)
        } else {
            cidr_v4.push(cidr)
        }
    }
    let mtls = mutual_authentication(a)?;
    let ports = listen_ports(a, !certificates.is_empty() || created.is_some())?;
    let has_https = ports.values().any(|p| *p == Protocol::Https);
    let discovery =
        (has_https && certificates.is_empty() && created.is_none()).then(|| tls_hosts(m));
    Ok(ports
        .into_iter()
        .map(|(port, protocol)| {
            let https = protocol == Protocol::Https;
            let cfg = PortConfig {
                protocol: Some(protocol),
                cidr_v4: cidr_v4.clone(),
                cidr_v6: cidr_v6.clone(),
                prefix_lists: prefix_lists.clone(),
                ssl_policy: if https { ssl_policy.clone() } else { None },
                certificates: if https {
                    certificates.clone()
                } else {
                    Vec::new()
                },
                discovery_hosts: if https { discovery.clone() } else { None },
                certificate_discovery: Vec::new(),
                created_certificates: match created {
                    Some(id) if https => vec![id.to_string()],
                    _ => Vec::new(),
                },
                mtls: if https {
                    mtls.get(&port).cloned()
                } else {
                    None
                },
            };
            (port, cfg)
        })
        .collect())
}

/// Hosts of rules and TLS sections (what ACM discovery would look up, and what a created
/// certificate is valid for).
pub(super) fn tls_hosts(m: &ClassifiedIngress<'_>) -> BTreeSet<String> {
    let spec = m.ingress.spec.as_ref();
    let rules = spec
        .and_then(|s| s.rules.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|r| r.host.clone());
    let tls = spec
        .and_then(|s| s.tls.as_ref())
        .into_iter()
        .flatten()
        .flat_map(|t| t.hosts.clone().unwrap_or_default());
    rules.chain(tls).filter(|h| !h.is_empty()).collect()
}

fn set(v: &[String]) -> BTreeSet<&String> {
    v.iter().collect()
}

/// Merges one port's configs from several members (in group order), upstream's rules.
pub fn merge(
    port: i32,
    cfgs: &[(String, &PortConfig)],
    default_ssl_policy: &str,
) -> Result<PortConfig, String> {
    let wrap = |e: String| format!("failed to merge listenPort config for port: {port}: {e}");
    let mut agreed = Agreed::default();
    for (key, c) in cfgs {
        agreed.offer(key, c).map_err(wrap)?;
    }
    let mut out = PortConfig {
        certificates: certificates(cfgs),
        certificate_discovery: certificate_discovery(cfgs),
        created_certificates: cfgs
            .iter()
            .flat_map(|(_, c)| c.created_certificates.iter().cloned())
            .collect(),
        ..PortConfig::default()
    };
    out.protocol = agreed.protocol.value().flatten();
    let (v4, v6) = agreed.cidrs.value().unwrap_or_default();
    out.cidr_v4 = set(&v4).into_iter().cloned().collect();
    out.cidr_v6 = set(&v6).into_iter().cloned().collect();
    let prefix_lists = agreed.prefix_lists.value().unwrap_or_default();
    out.prefix_lists = set(&prefix_lists).into_iter().cloned().collect();
    if out.cidr_v4.is_empty() && out.cidr_v6.is_empty() && out.prefix_lists.is_empty() {
        out.cidr_v4 = vec!["0.0.0.0/0".into()];
        out.cidr_v6 = vec!["::/0".into()];
    }
    out.ssl_policy = agreed.ssl_policy.value();
    if out.protocol == Some(Protocol::Https) && out.ssl_policy.is_none() {
        out.ssl_policy = Some(default_ssl_policy.to_string());
    }
    out.mtls = agreed.mtls.value();
    Ok(out)
}

/// The listen-port settings the members of one port must agree on.
#[derive(Default)]
struct Agreed {
    protocol: FirstSetter<Option<Protocol>>,
    cidrs: FirstSetter<(Vec<String>, Vec<String>)>,
    prefix_lists: FirstSetter<Vec<String>>,
    ssl_policy: FirstSetter<String>,
    mtls: FirstSetter<MutualAuthentication>,
}

impl Agreed {
    /// One member's settings, checked against the first member that set each.
    fn offer(&mut self, key: &str, c: &PortConfig) -> Result<(), String> {
        let name = |p: &Option<Protocol>| p.map(|p| p.as_str()).unwrap_or("");
        self.protocol
            .offer(key, c.protocol, PartialEq::eq, |by, a, b| {
                format!(
                    "conflicting protocol, {by}: {} | {key}: {}",
                    name(a),
                    name(b)
                )
            })?;
        if !c.cidr_v4.is_empty() || !c.cidr_v6.is_empty() {
            let cidrs = (c.cidr_v4.clone(), c.cidr_v6.clone());
            let same = |a: &(Vec<String>, Vec<String>), b: &(Vec<String>, Vec<String>)| {
                set(&a.0) == set(&b.0) && set(&a.1) == set(&b.1)
            };
            self.cidrs.offer(key, cidrs, same, |by, a, b| {
                let (a4, a6, b4, b6) = (set(&a.0), set(&a.1), set(&b.0), set(&b.1));
                let (a4, a6, b4, b6) = (go_list(a4), go_list(a6), go_list(b4), go_list(b6));
                format!("conflicting inbound-cidrs, {by}: {a4}, {a6} | {key}: {b4}, {b6}")
            })?;
        }
        if !c.prefix_lists.is_empty() {
            let same = |a: &Vec<String>, b: &Vec<String>| set(a) == set(b);
            self.prefix_lists
                .offer(key, c.prefix_lists.clone(), same, |by, a, b| {
                    let (a, b) = (go_list(set(a)), go_list(set(b)));
                    format!("conflicting inbound-prefix-lists, {by}: {a} | {key}: {b}")
                })?;
        }
        if let Some(p) = &c.ssl_policy {
            self.ssl_policy
                .offer(key, p.clone(), PartialEq::eq, |by, a, b| {
                    format!("conflicting sslPolicy, {by}: {a} | {key}: {b}")
                })?;
        }
        if let Some(m) = &c.mtls {
            self.mtls.offer(key, m.clone(), PartialEq::eq, |by, a, b| {
                format!(
                    "conflicting mTLS Attributes, {by}: {:?} | {key}: {b:?}",
                    Some(a)
                )
            })?;
        }
        Ok(())
    }
}

/// The members' explicit certificates merged (see [`merge_member_certificates`]).
fn certificates(cfgs: &[(String, &PortConfig)]) -> Vec<String> {
    let lists: Vec<&[String]> = cfgs
        .iter()
        .map(|(_, c)| c.certificates.as_slice())
        .collect();
    merge_member_certificates(&lists)
}

/// When a member needs discovery or a created certificate: every member's certificate source,
/// in group order.
fn certificate_discovery(cfgs: &[(String, &PortConfig)]) -> Vec<MemberCertificates> {
    if cfgs
        .iter()
        .all(|(_, c)| c.discovery_hosts.is_none() && c.created_certificates.is_empty())
    {
        return Vec::new();
    }
    cfgs.iter()
        .map(|(key, c)| MemberCertificates {
            ingress: key.clone(),
            certificates: c.certificates.clone(),
            discovery_hosts: c
                .discovery_hosts
                .as_ref()
                .map(|h| h.iter().cloned().collect()),
        })
        .collect()
}

/// An HTTPS listener without any certificate ARN whose members have no host to discover one
/// for can never be created (ELBv2 requires a certificate); upstream finds that out at
/// CreateListener, after the load balancer exists. Refused here, before any AWS call.
pub fn ensure_certificate_source(port: i32, merged: &PortConfig) -> Result<(), String> {
    let https = merged.protocol == Some(Protocol::Https);
    let no_hosts = merged
        .certificate_discovery
        .iter()
        .all(|m| m.discovery_hosts.as_ref().is_none_or(Vec::is_empty));
    let none_created = merged.created_certificates.is_empty();
    if https && merged.certificates.is_empty() && no_hosts && none_created {
        let members: Vec<&str> = merged
            .certificate_discovery
            .iter()
            .map(|m| m.ingress.as_str())
            .collect();
        return Err(format!(
            "HTTPS listener on port {port} has no certificate: no certificate-arn, and no host in the rules or tls of [{}] to discover one for in ACM",
            members.join(" ")
        ));
    }
    Ok(())
}

/// The HTTPS port HTTP listeners redirect to, if any; upstream's checks.
pub fn ssl_redirect_port(
    members: &[ClassifiedIngress<'_>],
    ports: &BTreeMap<i32, PortConfig>,
) -> Result<Option<i32>, ModelError> {
    let mut set = BTreeSet::new();
    for m in members {
        if let Some(p) = m.params.filter(|p| !p.spec.ssl_redirect_port.is_empty()) {
            // Upstream silently drops the whole redirect config when the class value is not a number.
            match p.spec.ssl_redirect_port.parse::<i32>() {
                Ok(v) => set.insert(v),
                Err(_) => return Ok(None),
            };
            continue;
        }
        set.extend(ann::int32(m.annotations(), suffix::SSL_REDIRECT).map_err(member_err(m))?);
    }
    let chosen = ensure_same(set, |_, _, all| {
        let all: Vec<String> = all.iter().map(|p| p.to_string()).collect();
        format!("conflicting sslRedirect port: [{}]", all.join(" "))
    })?;
    let Some(p) = chosen else { return Ok(None) };
    match ports.get(&p) {
        None => Err(group(format!(
            "listener does not exist for SSLRedirect port: {p}"
        ))),
        Some(c) if c.protocol != Some(Protocol::Https) => Err(group(format!(
            "listener protocol non-SSL for SSLRedirect port: {p}"
        ))),
        Some(_) => Ok(Some(p)),
    }
}

/// `listener-attributes.<PROTO>-<port>` merged across members; class values settle conflicts.
pub fn listener_attributes(
    members: &[ClassifiedIngress<'_>],
    protocol: Protocol,
    port: i32,
) -> Result<BTreeMap<String, String>, ModelError> {
    let class = class_listener_attributes(members, protocol, port);
    let sfx = format!(
        "{}.{}-{port}",
        suffix::LISTENER_ATTRIBUTES_PREFIX,
        protocol.as_str()
    );
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for m in members {
        for kv in ann::string_map(m.annotations(), &sfx)
            .map_err(member_err(m))?
            .unwrap_or_default()
        {
            merge_key(&mut out, kv, &class, |k, a, b| {
                format!(
                    "conflicting listener attributes {k}: {a} | {b} for ingress {}",
                    m.key()
                )
            })
            .map_err(group)?;
        }
    }
    out.extend(class);
    Ok(out)
}

/// The class's (first member's IngressClassParams) attributes of this listener.
fn class_listener_attributes(
    members: &[ClassifiedIngress<'_>],
    protocol: Protocol,
    port: i32,
) -> BTreeMap<String, String> {
    let same_protocol = |l: Option<ListenerProtocol>| {
        matches!(
            (l, protocol),
            (Some(ListenerProtocol::Http), Protocol::Http)
                | (Some(ListenerProtocol::Https), Protocol::Https)
        )
    };
    let Some(p) = members.first().and_then(|m| m.params) else {
        return BTreeMap::new();
    };
    let listener = p
        .spec
        .listeners
        .iter()
        .find(|l| l.port == Some(port) && same_protocol(l.protocol));
    listener
        .map(|l| {
            l.listener_attributes
                .iter()
                .map(|a| (a.key.clone(), a.value.clone()))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "listener_tests.rs"]
mod tests;
