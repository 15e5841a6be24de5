//! Mutual TLS of HTTPS listeners: the `mutual-authentication` annotation per port, with
//! upstream's validation texts (trust stores are resolved by name in `deploy/mtls.rs`).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::annotations::{self as ann, suffix};
use crate::model::error::Fail;
use crate::model::types::MutualAuthentication;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MtlsInput {
    #[serde(default)]
    port: i32,
    #[serde(default)]
    mode: String,
    trust_store: Option<String>,
    ignore_client_certificate_expiry: Option<bool>,
    advertise_trust_store_ca_names: Option<String>,
}

/// Each port's mTLS setting from one Ingress's `mutual-authentication` annotation.
pub(super) fn mutual_authentication(
    annotations: &ann::AnnotationMap,
) -> Result<BTreeMap<i32, MutualAuthentication>, Fail> {
    let Some(raw) = ann::string(annotations, suffix::MUTUAL_AUTHENTICATION) else {
        return Ok(BTreeMap::new());
    };
    let at = ann::key(suffix::MUTUAL_AUTHENTICATION);
    let entries: Vec<MtlsInput> = ann::go_json::from_str(raw).map_err(|e| {
        Fail::at(&at, format!("failed to parse mutualAuthentication configuration from ingress annotation: `{raw}`: {e}"))
    })?;
    if entries.is_empty() {
        return Err(Fail::at(
            &at,
            format!("empty mutualAuthentication configuration from ingress annotation: `{raw}`"),
        ));
    }
    let mut out = BTreeMap::new();
    for e in entries {
        let (port, mode) = (e.port, e.mode.as_str());
        let ts = e.trust_store.clone().unwrap_or_default();
        let err = |m: String| Err(Fail::at(&at, m));
        if !(1..=65535).contains(&port) {
            return err(format!("listen port must be within [1, 65535]: {port}"));
        }
        if mode.is_empty() {
            return err(format!(
                "mutualAuthentication mode cannot be empty for port {port}"
            ));
        }
        if !["off", "passthrough", "verify"].contains(&mode) {
            return err(format!(
                "mutualAuthentication mode value must be among [off, passthrough, verify] for port {port} : {mode}"
            ));
        }
        if mode == "verify" && ts.is_empty() {
            return err(format!(
                "trustStore is required when mutualAuthentication mode is verify for port {port}"
            ));
        }
        if mode != "verify" && !ts.is_empty() {
            return err(format!(
                "Mutual Authentication mode {mode} does not support trustStore for port {port}"
            ));
        }
        if mode != "verify" && e.ignore_client_certificate_expiry.is_some() {
            return err(format!(
                "Mutual Authentication mode {mode} does not support ignoring client certificate expiry for port {port}"
            ));
        }
        if let Some(adv) = &e.advertise_trust_store_ca_names {
            if mode != "verify" {
                return err(format!(
                    "Mutual Authentication mode {mode} does not support advertiseTrustStoreCaNames for port {port}"
                ));
            }
            if adv != "on" && adv != "off" {
                return err(format!(
                    "advertiseTrustStoreCaNames only supports the values \"on\" and \"off\" got value {adv} for port {port}"
                ));
            }
        }
        let ignore = if mode == "verify" {
            Some(e.ignore_client_certificate_expiry.unwrap_or(false))
        } else {
            None
        };
        out.insert(
            port,
            MutualAuthentication {
                mode: e.mode,
                trust_store: Some(ts),
                ignore_client_certificate_expiry: ignore,
                advertise_trust_store_ca_names: e.advertise_trust_store_ca_names,
            },
        );
    }
    Ok(out)
}
