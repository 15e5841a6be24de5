//! The `caBundle` of both webhook configurations under a managed certificate: what it must hold,
//! patching it, and watching it so a wiped or replaced bundle is restored within seconds.
//!
//! Replicas never fight over it: a replica only ever *adds* the CAs it needs, compared as sets,
//! and removes a CA only when it is expired or older than the CA the replica itself serves from
//! (so a replica that has not seen a rotation yet cannot drop the new CA, and a replica starting
//! in the middle of a rotation keeps both).

use anyhow::Context;
use base64::Engine;
use futures::{Stream, StreamExt};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::{watcher, WatchStreamExt};
use kube::Client;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use time::OffsetDateTime;

/// How a bundle is rewritten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Keep every valid CA already there, add ours.
    Add,
    /// Also drop CAs older than `trusted[0]`: the rotation has had time to reach every replica.
    Retire,
}

/// Validity of the first certificate in a PEM string.
pub fn validity(pem: &str) -> Option<(OffsetDateTime, OffsetDateTime)> {
    use rustls::pki_types::pem::PemObject;
    let der = rustls::pki_types::CertificateDer::from_pem_slice(pem.as_bytes()).ok()?;
    let (_, cert) = x509_parser::parse_x509_certificate(&der).ok()?;
    let v = cert.validity();
    Some((
        OffsetDateTime::from_unix_timestamp(v.not_before.timestamp()).ok()?,
        OffsetDateTime::from_unix_timestamp(v.not_after.timestamp()).ok()?,
    ))
}

/// The certificates of a decoded bundle, one PEM block each.
fn split(bundle: &str) -> Vec<String> {
    const END: &str = "-----END CERTIFICATE-----";
    bundle
        .split_inclusive(END)
        .map(str::trim)
        .filter(|b| b.ends_with(END))
        .map(|b| format!("{b}\n"))
        .collect()
}

fn normalize(pem: &str) -> String {
    format!("{}\n", pem.trim())
}

/// The CAs one configuration's webhooks carry, decoded (unreadable entries are dropped).
fn live_cas(config: &Value) -> Vec<BTreeSet<String>> {
    let engine = base64::engine::general_purpose::STANDARD;
    config
        .get("webhooks")
        .and_then(Value::as_array)
        .map(|hooks| {
            hooks
                .iter()
                .map(|h| {
                    h.pointer("/clientConfig/caBundle")
                        .and_then(Value::as_str)
                        .and_then(|b| engine.decode(b).ok())
                        .and_then(|b| String::from_utf8(b).ok())
                        .map(|b| split(&b).into_iter().collect())
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The bundle a configuration should carry: `trusted` first, then every CA already present that
/// is still valid (and, when retiring, not older than `trusted[0]`).
pub fn desired(
    trusted: &[String],
    live: &[BTreeSet<String>],
    mode: Mode,
    now: OffsetDateTime,
) -> Vec<String> {
    let mut out: Vec<String> = trusted.iter().map(|c| normalize(c)).collect();
    let current_since = trusted.first().and_then(|c| validity(c)).map(|v| v.0);
    for ca in live.iter().flatten() {
        let Some((since, until)) = validity(ca) else {
            continue;
        };
        let superseded = mode == Mode::Retire && current_since.is_some_and(|c| since < c);
        if until > now && !superseded && !out.contains(ca) {
            out.push(ca.clone());
        }
    }
    out
}

/// Both configurations by name.
pub struct Configs {
    mutating: Api<MutatingWebhookConfiguration>,
    validating: Api<ValidatingWebhookConfiguration>,
    name: String,
}

impl Configs {
    pub fn new(client: Client, name: &str) -> Self {
        Configs {
            mutating: Api::all(client.clone()),
            validating: Api::all(client),
            name: name.to_string(),
        }
    }

    /// The mutating configuration's metadata (whose Helm ownership the Secret copies); empty
    /// when it cannot be read, so a missing configuration never blocks the certificate.
    pub async fn owner_metadata(&self) -> kube::api::ObjectMeta {
        match self.mutating.get_opt(&self.name).await {
            Ok(Some(c)) => c.metadata,
            Ok(None) => Default::default(),
            Err(error) => {
                tracing::warn!(error = %error, configuration = %self.name, "cannot read the webhook configuration's metadata");
                Default::default()
            }
        }
    }

    /// Brings both configurations to the bundle `trusted` needs; returns whether one was patched.
    pub async fn ensure(&self, trusted: &[String], mode: Mode) -> anyhow::Result<bool> {
        let m = self
            .mutating
            .get_opt(&self.name)
            .await?
            .map(serde_json::to_value)
            .transpose()?;
        let m = self.patch_one(true, m, trusted, mode).await?;
        let v = self
            .validating
            .get_opt(&self.name)
            .await?
            .map(serde_json::to_value)
            .transpose()?;
        let v = self.patch_one(false, v, trusted, mode).await?;
        Ok(m || v)
    }

    async fn patch_one(
        &self,
        mutating: bool,
        config: Option<Value>,
        trusted: &[String],
        mode: Mode,
    ) -> anyhow::Result<bool> {
        let name = &self.name;
        let Some(config) = config else {
            tracing::warn!(
                configuration = %name,
                "webhook configuration not found; caBundle not patched"
            );
            return Ok(false);
        };
        let live = live_cas(&config);
        let want = desired(trusted, &live, mode, OffsetDateTime::now_utc());
        let want_set: BTreeSet<String> = want.iter().cloned().collect();
        if live.iter().all(|cas| *cas == want_set) {
            return Ok(false);
        }
        let bundle = base64::engine::general_purpose::STANDARD.encode(want.concat());
        // The resourceVersion test makes this a compare-and-swap against concurrent edits.
        let mut ops = vec![json!({"op": "test", "path": "/metadata/resourceVersion",
            "value": config.pointer("/metadata/resourceVersion")})];
        ops.extend((0..live.len()).map(|i| {
            json!({"op": "add", "path": format!("/webhooks/{i}/clientConfig/caBundle"), "value": bundle})
        }));
        let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops))?;
        let params = PatchParams::default();
        let patch = Patch::Json::<()>(patch);
        if mutating {
            self.mutating.patch(name, &params, &patch).await.map(drop)
        } else {
            self.validating.patch(name, &params, &patch).await.map(drop)
        }
        .with_context(|| format!("patching caBundle of {name}"))?;
        Ok(true)
    }

    /// A stream that yields once per change seen on either configuration (retrying its watches
    /// with backoff); errors are logged, never ended on.
    pub fn changes(&self) -> impl Stream<Item = ()> + Send + 'static {
        let cfg = watcher::Config::default().fields(&format!("metadata.name={}", self.name));
        let m = watcher::watcher(self.mutating.clone(), cfg.clone())
            .default_backoff()
            .map(|e| e.map(drop));
        let v = watcher::watcher(self.validating.clone(), cfg)
            .default_backoff()
            .map(|e| e.map(drop));
        futures::stream::select(m, v).filter_map(|event| async move {
            match event {
                Ok(()) => Some(()),
                Err(error) => {
                    tracing::debug!(%error, "webhook configuration watch failed; retrying");
                    None
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use webhook_certs::generate_ca;

    #[test]
    fn add_keeps_valid_cas_and_retire_drops_older_ones() {
        let now = OffsetDateTime::now_utc();
        let old = generate_ca(30, now - time::Duration::days(2))
            .unwrap()
            .cert_pem;
        let new = generate_ca(30, now - time::Duration::days(1))
            .unwrap()
            .cert_pem;
        let newer = generate_ca(30, now).unwrap().cert_pem;
        let expired = generate_ca(1, now - time::Duration::days(5))
            .unwrap()
            .cert_pem;
        let live: Vec<BTreeSet<String>> = vec![[&old, &newer, &expired]
            .iter()
            .map(|c| normalize(c))
            .collect()];
        let trusted = vec![new.clone()];
        let added = desired(&trusted, &live, Mode::Add, now);
        assert_eq!(added.len(), 3, "new, old and newer; not the expired one");
        assert_eq!(added[0], normalize(&new));
        let retired = desired(&trusted, &live, Mode::Retire, now);
        // A CA newer than ours may be another replica's rotation: never dropped.
        assert_eq!(retired, vec![normalize(&new), normalize(&newer)]);
        assert_eq!(split(&format!("{old}{new}")).len(), 2);
    }
}
