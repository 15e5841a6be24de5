//! NLB target-group attributes: `proxy_protocol_v2.enabled=false` always (so it is reset),
//! the Service-wide and port-specific `target-group-attributes`, then the proxy-protocol
//! annotations, which win (upstream's `buildTargetGroupAttributes`).

use std::collections::{BTreeMap, BTreeSet};

use super::annotations::{key, sfx};
use super::task::Task;
use crate::annotations::go_parse_bool;
use crate::model::error::Fail;
use crate::model::types::TargetType;

const PROXY_V2: &str = "proxy_protocol_v2.enabled";
const PRESERVE_CLIENT_IP: &str = "preserve_client_ip.enabled";

/// One attributes annotation; `preserve_client_ip.enabled` must be a Go bool.
fn parse(t: &Task<'_>, suffix: &str) -> Result<BTreeMap<String, String>, Fail> {
    let attrs = t.a.map(suffix)?.unwrap_or_default();
    if let Some(v) = attrs.get(PRESERVE_CLIENT_IP) {
        if go_parse_bool(v).is_none() {
            return Err(Fail::at(
                key(suffix),
                format!("failed to parse attribute {PRESERVE_CLIENT_IP}={v}: strconv.ParseBool: parsing {v:?}: invalid syntax"),
            ));
        }
    }
    Ok(attrs)
}

/// `aws-load-balancer-proxy-protocol-per-target-group: "80, 443"` as a port set.
fn proxy_protocol_ports(t: &Task<'_>) -> Result<Option<BTreeSet<String>>, Fail> {
    let Some(raw) = t.a.string(sfx::PROXY_PROTOCOL_PER_TG) else {
        return Ok(None);
    };
    let mut out = BTreeSet::new();
    for p in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if p.parse::<i64>().is_err() {
            return Err(Fail::at(
                key(sfx::PROXY_PROTOCOL_PER_TG),
                format!("invalid port number in proxy-protocol-per-target-group: {p}"),
            ));
        }
        out.insert(p.to_string());
    }
    Ok(Some(out))
}

/// The attributes of the target group of Service port `port`.
pub(super) fn build(t: &Task<'_>, port: i32) -> Result<BTreeMap<String, String>, Fail> {
    let mut attrs = BTreeMap::from([(PROXY_V2.to_string(), "false".to_string())]);
    attrs.extend(parse(t, sfx::TG_ATTRIBUTES)?);
    let specific = format!("{}.{port}", sfx::TG_ATTRIBUTES);
    // A port-specific empty value keeps the Service-wide one.
    attrs.extend(
        parse(t, &specific)?
            .into_iter()
            .filter(|(_, v)| !v.is_empty()),
    );
    if let Some(ports) = proxy_protocol_ports(t)? {
        let on = ports.contains(&port.to_string());
        attrs.insert(PROXY_V2.into(), on.to_string());
    }
    if let Some(v) = t.a.string(sfx::PROXY_PROTOCOL) {
        if v != "*" {
            return Err(Fail::at(
                key(sfx::PROXY_PROTOCOL),
                format!("invalid value {v} for Load Balancer proxy protocol v2 annotation, only value currently supported is *"),
            ));
        }
        attrs.insert(PROXY_V2.into(), "true".into());
    }
    if attrs.get(PROXY_V2).is_some_and(String::is_empty) {
        attrs.remove(PROXY_V2);
    }
    Ok(attrs)
}

/// Whether targets see the client's IP (`preserve_client_ip.enabled`, else on for instance
/// targets and off for ip targets); it decides the sources of legacy node rules.
pub(super) fn preserves_client_ip(attrs: &BTreeMap<String, String>, tt: TargetType) -> bool {
    match attrs.get(PRESERVE_CLIENT_IP).and_then(|v| go_parse_bool(v)) {
        Some(v) => v,
        None => tt == TargetType::Instance,
    }
}
