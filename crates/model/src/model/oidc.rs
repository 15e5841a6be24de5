//! OIDC authentication's client credentials: read from the Secret `auth-idp-oidc` names (in the
//! Ingress's namespace) while building the model, with upstream's keys, trimming and errors, so
//! a missing Secret or key fails the build before any AWS call. The Secrets are an input like
//! Services; the controller watches exactly the ones [`secret_refs`] names.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::cluster::ClusterObjects;
use super::error::Fail;
use super::types::{AuthenticateOidcConfig, Redacted};
use crate::annotations::{self as ann, suffix, AnnotationMap};

/// Upstream's key of the client id.
pub const KEY_CLIENT_ID: &str = "clientID";
/// The key the legacy AWS ALB Ingress Controller read; accepted when `clientID` is absent.
pub const KEY_CLIENT_ID_LEGACY: &str = "clientId";
/// Upstream's key of the client secret.
pub const KEY_CLIENT_SECRET: &str = "clientSecret";
/// Every key the model reads from a Secret (what a cache of Secrets needs to keep).
pub const KEYS: [&str; 3] = [KEY_CLIENT_ID, KEY_CLIENT_ID_LEGACY, KEY_CLIENT_SECRET];

/// A key's value: `stringData` (as the API server merges it over `data`) or `data`.
fn value<'s>(secret: &'s Secret, key: &str) -> Option<std::borrow::Cow<'s, str>> {
    if let Some(v) = secret.string_data.as_ref().and_then(|m| m.get(key)) {
        return Some(std::borrow::Cow::Borrowed(v.as_str()));
    }
    let bytes = secret.data.as_ref()?.get(key)?;
    Some(String::from_utf8_lossy(&bytes.0))
}

/// `config` with the client id and secret from its Secret (`config.secret`, `ns/name`).
pub fn resolve(
    config: &AuthenticateOidcConfig,
    objs: &ClusterObjects,
) -> Result<AuthenticateOidcConfig, Fail> {
    let (ns, name) = config
        .secret
        .split_once('/')
        .unwrap_or(("default", config.secret.as_str()));
    // Upstream returns the API server's NotFound error as it is.
    let secret = objs
        .secret(ns, name)
        .ok_or_else(|| Fail::msg(format!("secrets \"{name}\" not found")))?;
    let missing = |what: &str| Fail::msg(format!("missing {what}, secret: {ns}/{name}"));
    let id = value(secret, KEY_CLIENT_ID)
        .or_else(|| value(secret, KEY_CLIENT_ID_LEGACY))
        .ok_or_else(|| missing(KEY_CLIENT_ID))?;
    let client_secret =
        value(secret, KEY_CLIENT_SECRET).ok_or_else(|| missing(KEY_CLIENT_SECRET))?;
    let mut out = config.clone();
    out.client_id = Redacted::new(id.trim_end());
    out.client_secret = Redacted::new(client_secret.trim_end_matches(char::is_control));
    Ok(out)
}

/// The client id and secret of Secret `ns/name` (`None`: not found), with upstream's keys,
/// trimming and errors (Gateway rules: ListenerRuleConfiguration `authenticateOIDCConfig`).
pub fn credentials(
    secret: Option<&Secret>,
    ns: &str,
    name: &str,
) -> Result<(Redacted, Redacted), String> {
    let secret = secret.ok_or_else(|| format!("secrets \"{name}\" not found"))?;
    let missing = |what: &str| format!("missing {what}, secret: {ns}/{name}");
    let id = value(secret, KEY_CLIENT_ID)
        .or_else(|| value(secret, KEY_CLIENT_ID_LEGACY))
        .ok_or_else(|| missing(KEY_CLIENT_ID))?;
    let client_secret =
        value(secret, KEY_CLIENT_SECRET).ok_or_else(|| missing(KEY_CLIENT_SECRET))?;
    Ok((
        Redacted::new(id.trim_end()),
        Redacted::new(client_secret.trim_end_matches(char::is_control)),
    ))
}

/// The Secret name an object's `auth-idp-oidc` annotation names, if it parses (Ingress or
/// Service; the Secret is looked up in the Ingress's namespace).
pub fn secret_name(annotations: Option<&AnnotationMap>) -> Option<String> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Oidc {
        #[serde(default)]
        secret_name: String,
    }
    let o: Oidc = ann::json(annotations?, suffix::AUTH_IDP_OIDC).ok()??;
    (!o.secret_name.is_empty()).then_some(o.secret_name)
}

fn only<V: Clone>(m: &Option<BTreeMap<String, V>>) -> Option<BTreeMap<String, V>> {
    let kept: BTreeMap<String, V> = m
        .as_ref()?
        .iter()
        .filter(|(k, _)| KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!kept.is_empty()).then_some(kept)
}

/// Only the keys the model reads of a Secret (what a controller keeps in memory).
pub fn needed_part(secret: &Secret) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: secret.metadata.name.clone(),
            namespace: secret.metadata.namespace.clone(),
            resource_version: secret.metadata.resource_version.clone(),
            ..Default::default()
        },
        data: only(&secret.data),
        string_data: only(&secret.string_data),
        ..Default::default()
    }
}

/// Every `ns/name` Secret the objects' `auth-idp-oidc` annotations name (Ingresses and
/// Services alike, each in its own namespace).
pub fn secret_refs<'a>(
    metas: impl IntoIterator<Item = &'a ObjectMeta>,
) -> BTreeSet<(String, String)> {
    metas
        .into_iter()
        .filter_map(|m| {
            let name = secret_name(m.annotations.as_ref())?;
            let ns = m.namespace.clone().unwrap_or_else(|| "default".into());
            Some((ns, name))
        })
        .collect()
}

#[cfg(test)]
#[path = "oidc_tests.rs"]
mod tests;
