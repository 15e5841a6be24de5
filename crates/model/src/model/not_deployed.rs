//! Inputs this build parses but does not deploy yet (WAF / WAFv2 / Shield, ACM
//! certificate discovery and creation, OIDC, listener
//! attributes, capacity reservation). Nothing is accepted and ignored: a member asking for one
//! fails to build with the annotation named, before any AWS call, so it keeps its last deployed
//! configuration (or the group waits) instead of being served without what it asked for.

use std::collections::BTreeMap;

use super::config::ModelConfig;
use super::error::Fail;
use super::group::ClassifiedIngress;
use super::listener::PortConfig;
use super::types::Protocol;
use crate::annotations::{self as ann, suffix};

/// The refusal for `what`, set by the annotation (or class field) `key`.
pub fn refuse(key: String, what: &str) -> Fail {
    // The key leads the message: the event a user sees carries only the message.
    let message = format!("{key}: {what} is not deployed by this build of the controller yet; refused before any AWS change rather than served without it");
    Fail::at(key, message)
}

/// Load-balancer level features of one member (its annotations and IngressClassParams).
pub fn member_features(m: &ClassifiedIngress<'_>, cfg: &ModelConfig) -> Result<(), Fail> {
    let a = m.annotations();
    let p = m.params.map(|p| &p.spec);
    let set = |sfx: &str| ann::string(a, sfx).is_some();
    let non_empty = |sfx: &str| ann::string(a, sfx).is_some_and(|v| !v.is_empty());
    if ann::bool(a, suffix::CREATE_ACM_CERT)?.unwrap_or(false)
        && cfg.gate("EnableCertificateManagement")
    {
        return Err(refuse(
            ann::key(suffix::CREATE_ACM_CERT),
            "ACM certificate creation",
        ));
    }
    if cfg.enable_wafv2 {
        if p.is_some_and(|p| !p.wafv2_acl_arn.is_empty() || !p.wafv2_acl_name.is_empty()) {
            return Err(refuse(
                "IngressClassParams spec.wafv2AclArn/wafv2AclName".into(),
                "a WAFv2 web ACL association",
            ));
        }
        // Upstream acts on a present but empty ARN (it disassociates); an empty name is ignored.
        for (sfx, present) in [
            (suffix::WAFV2_ACL_ARN, set(suffix::WAFV2_ACL_ARN)),
            (suffix::WAFV2_ACL_NAME, non_empty(suffix::WAFV2_ACL_NAME)),
        ] {
            if present {
                return Err(refuse(ann::key(sfx), "a WAFv2 web ACL association"));
            }
        }
    }
    if cfg.enable_waf {
        for sfx in [suffix::WAF_ACL_ID, suffix::WEB_ACL_ID] {
            if non_empty(sfx) {
                return Err(refuse(
                    ann::key(sfx),
                    "a WAF Classic (regional) web ACL association",
                ));
            }
        }
    }
    if cfg.enable_shield && ann::bool(a, suffix::SHIELD_ADVANCED_PROTECTION)?.is_some() {
        return Err(refuse(
            ann::key(suffix::SHIELD_ADVANCED_PROTECTION),
            "Shield Advanced protection",
        ));
    }
    Ok(())
}

/// Listener level features of one member's `listen-ports`.
pub fn listener_features(ports: &BTreeMap<i32, PortConfig>) -> Result<(), Fail> {
    for (port, c) in ports {
        if c.protocol == Some(Protocol::Https) && c.certificates.is_empty() {
            if let Some(hosts) = &c.discovery_hosts {
                let hosts: Vec<&str> = hosts.iter().map(String::as_str).collect();
                return Err(refuse(
                    ann::key(suffix::CERTIFICATE_ARN),
                    &format!("HTTPS listener {port} has no certificate-arn: ACM certificate discovery for hosts [{}]", hosts.join(" ")),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "not_deployed_tests.rs"]
mod tests;
