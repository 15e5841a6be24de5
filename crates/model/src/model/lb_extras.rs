//! Group-wide settings attached to listeners and addons: WAF / WAFv2 / Shield (carried; refused
//! per member until deployed, see `not_deployed`), the SSL-redirect port and per-listener attributes, with upstream's conflicts.

use std::collections::{BTreeMap, BTreeSet};

use super::config::ModelConfig;
use super::error::ModelError;
use super::group::ClassifiedIngress;
use super::lb::{go_set, group, ignore, member_err};
use super::listen::PortConfig;
use super::types::*;
use crate::annotations::{self as ann, suffix};

pub fn addons(members: &[ClassifiedIngress<'_>], cfg: &ModelConfig) -> Result<Addons, ModelError> {
    let (mut arns, mut names, mut waf, mut shield) = (
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
    );
    for m in members {
        let a = m.annotations();
        let p = m.params.map(|p| &p.spec);
        match p.filter(|p| !p.wafv2_acl_arn.is_empty()) {
            Some(p) => ignore(arns.insert(p.wafv2_acl_arn.clone())),
            None => {
                ignore(ann::string(a, suffix::WAFV2_ACL_ARN).map(|v| arns.insert(v.to_string())))
            }
        }
        match p.filter(|p| !p.wafv2_acl_name.is_empty()) {
            Some(p) => ignore(names.insert(p.wafv2_acl_name.clone())),
            None => {
                ignore(ann::string(a, suffix::WAFV2_ACL_NAME).map(|v| names.insert(v.to_string())))
            }
        }
        if let Some(v) =
            ann::string(a, suffix::WAF_ACL_ID).or_else(|| ann::string(a, suffix::WEB_ACL_ID))
        {
            waf.insert(v.to_string());
        }
        if let Some(v) = ann::bool(a, suffix::SHIELD_ADVANCED_PROTECTION).map_err(member_err(m))? {
            shield.insert(v);
        }
    }
    if arns.len() > 1 {
        return Err(group(format!(
            "conflicting WAFv2 WebACL ARNs: {}",
            go_set(&arns)
        )));
    }
    if names.len() > 1 {
        return Err(group(format!(
            "conflicting WAFv2 WebACL names: {}",
            go_set(&names)
        )));
    }
    if waf.len() > 1 {
        return Err(group(format!(
            "conflicting WAFClassic WebACL IDs: {}",
            go_set(&waf)
        )));
    }
    if shield.len() > 1 {
        return Err(group(
            "conflicting enable shield advanced protection".into(),
        ));
    }
    let out = Addons {
        wafv2_acl_arn: arns.into_iter().next().filter(|_| cfg.enable_wafv2),
        wafv2_acl_name: names.into_iter().next().filter(|_| cfg.enable_wafv2),
        waf_regional_acl_id: waf.into_iter().next().filter(|_| cfg.enable_waf),
        shield_advanced_protection: shield.into_iter().next().filter(|_| cfg.enable_shield),
    };
    Ok(out)
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
                Ok(v) => ignore(set.insert(v)),
                Err(_) => return Ok(None),
            }
            continue;
        }
        if let Some(v) = ann::int32(m.annotations(), suffix::SSL_REDIRECT).map_err(member_err(m))? {
            set.insert(v);
        }
    }
    match set.len() {
        0 => Ok(None),
        1 => {
            let p = set.into_iter().next().unwrap_or_default();
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
        _ => Err(group(format!(
            "conflicting sslRedirect port: [{}]",
            set.iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        ))),
    }
}

/// `listener-attributes.<PROTO>-<port>` merged across members; class values settle conflicts.
pub fn listener_attributes(
    members: &[ClassifiedIngress<'_>],
    protocol: Protocol,
    port: i32,
) -> Result<BTreeMap<String, String>, ModelError> {
    let class: BTreeMap<String, String> = members
        .first()
        .and_then(|m| m.params)
        .and_then(|p| {
            p.spec.listeners.iter().find(|l| {
                l.port == Some(port)
                    && matches!(
                        (l.protocol, protocol),
                        (
                            Some(crate::crd::ingress_class_params::ListenerProtocol::Http),
                            Protocol::Http
                        ) | (
                            Some(crate::crd::ingress_class_params::ListenerProtocol::Https),
                            Protocol::Https
                        )
                    )
            })
        })
        .map(|l| {
            l.listener_attributes
                .iter()
                .map(|a| (a.key.clone(), a.value.clone()))
                .collect()
        })
        .unwrap_or_default();
    let sfx = format!(
        "{}.{}-{port}",
        suffix::LISTENER_ATTRIBUTES_PREFIX,
        protocol.as_str()
    );
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for m in members {
        for (k, v) in ann::string_map(m.annotations(), &sfx)
            .map_err(member_err(m))?
            .unwrap_or_default()
        {
            if let Some(existing) = out.get(&k) {
                if *existing != v && !class.contains_key(&k) {
                    return Err(group(format!(
                        "conflicting listener attributes {k}: {existing} | {v} for ingress {}",
                        m.key()
                    )));
                }
            }
            out.insert(k, v);
        }
    }
    out.extend(class);
    Ok(out)
}
