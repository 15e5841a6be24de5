//! Controller-managed webhook certificate: a Secret holds the CA and serving pair, both webhook
//! configurations carry the CA in `caBundle`, and the pair is renewed ahead of expiry.
//!
//! Order matters and is why upstream users see x509 errors: the bundle must trust a CA before any
//! replica serves a certificate from it. So: write the Secret, patch every `caBundle` (old and
//! new CA side by side while a CA changes), and only then hand the files to the TLS server, which
//! reloads them without a restart. A restart finds the Secret and reuses it.

use crate::webhook::tls::ReloadingCert;
use anyhow::Context;
use base64::Engine;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::ByteString;
use kube::api::{Api, PostParams};
use kube::Client;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use time::OffsetDateTime;
use webhook_certs::{generate_ca, issue_serving, Ca, ServingSpec, DEFAULT_CA_DAYS};

/// Settings for the managed certificate.
#[derive(Clone, Debug)]
pub struct CertManagerConfig {
    pub namespace: String,
    pub secret_name: String,
    pub service_name: String,
    /// Name of both the Mutating and the Validating webhook configuration.
    pub webhook_config_name: String,
    /// Cluster DNS domain for the certificate's fourth name.
    pub dns_domain: String,
    pub serving_days: u32,
    /// Renew when less than this is left (serving certificate and CA alike).
    pub renew_before: Duration,
    pub check_interval: Duration,
    /// Time the API servers get to see a new caBundle before a new CA is served.
    pub bundle_propagation: Duration,
}

/// The material kept in the Secret (upstream's keys plus `ca.key`, needed to renew under one CA).
#[derive(Clone, Debug, PartialEq)]
struct Material {
    ca: Ca,
    cert_pem: String,
    key_pem: String,
}

fn get(data: &BTreeMap<String, ByteString>, key: &str) -> Option<String> {
    data.get(key)
        .and_then(|b| String::from_utf8(b.0.clone()).ok())
        .filter(|s| !s.is_empty())
}

impl Material {
    fn from_secret(secret: &Secret) -> Option<Material> {
        let data = secret.data.as_ref()?;
        Some(Material {
            ca: Ca {
                cert_pem: get(data, "ca.crt")?,
                key_pem: get(data, "ca.key")?,
            },
            cert_pem: get(data, "tls.crt")?,
            key_pem: get(data, "tls.key")?,
        })
    }

    fn to_data(&self) -> BTreeMap<String, ByteString> {
        [
            ("ca.crt", &self.ca.cert_pem),
            ("ca.key", &self.ca.key_pem),
            ("tls.crt", &self.cert_pem),
            ("tls.key", &self.key_pem),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
        .collect()
    }
}

/// Expiry of the first certificate in a PEM string.
fn not_after(pem: &str) -> Option<OffsetDateTime> {
    use rustls::pki_types::pem::PemObject;
    let der = rustls::pki_types::CertificateDer::from_pem_slice(pem.as_bytes()).ok()?;
    let (_, cert) = x509_parser::parse_x509_certificate(&der).ok()?;
    OffsetDateTime::from_unix_timestamp(cert.validity().not_after.timestamp()).ok()
}

fn due(pem: &str, renew_before: Duration, now: OffsetDateTime) -> bool {
    match not_after(pem) {
        Some(end) => {
            end - now < time::Duration::try_from(renew_before).unwrap_or(time::Duration::MAX)
        }
        None => true,
    }
}

/// Manages the certificate for the life of the process.
pub struct CertManager {
    client: Client,
    cfg: CertManagerConfig,
    /// CA certificates the bundle must still trust (the current one first).
    trusted: Vec<String>,
    current: Option<Material>,
    /// Where the served pair goes (served from memory: no writable files needed).
    sink: Arc<ReloadingCert>,
}

impl CertManager {
    pub fn new(client: Client, cfg: CertManagerConfig, sink: Arc<ReloadingCert>) -> Self {
        CertManager {
            client,
            cfg,
            trusted: Vec::new(),
            current: None,
            sink,
        }
    }

    fn spec(&self) -> ServingSpec {
        let mut spec = ServingSpec::new(&self.cfg.service_name, &self.cfg.namespace);
        spec.days = self.cfg.serving_days;
        spec.dns_domain = self.cfg.dns_domain.clone();
        spec
    }

    /// One pass: adopt or create the Secret, renew what is due, patch bundles, write files.
    pub async fn ensure(&mut self) -> anyhow::Result<()> {
        let secrets: Api<Secret> = Api::namespaced(self.client.clone(), &self.cfg.namespace);
        let existing = secrets
            .get_opt(&self.cfg.secret_name)
            .await
            .context("reading the webhook certificate Secret")?;
        let now = OffsetDateTime::now_utc();
        let stored = existing.as_ref().and_then(Material::from_secret);
        let (material, changed) = match stored {
            Some(m)
                if !due(&m.cert_pem, self.cfg.renew_before, now)
                    && !due(&m.ca.cert_pem, self.cfg.renew_before, now) =>
            {
                (m, false)
            }
            Some(m) => {
                // Keep the CA while it has time left; a new CA only when it is due itself.
                let ca = if due(&m.ca.cert_pem, self.cfg.renew_before, now) {
                    generate_ca(DEFAULT_CA_DAYS, now)?
                } else {
                    m.ca.clone()
                };
                let b = issue_serving(&ca, &self.spec(), now)?;
                (
                    Material {
                        ca: b.ca,
                        cert_pem: b.cert_pem,
                        key_pem: b.key_pem,
                    },
                    true,
                )
            }
            None => {
                let b = issue_serving(&generate_ca(DEFAULT_CA_DAYS, now)?, &self.spec(), now)?;
                (
                    Material {
                        ca: b.ca,
                        cert_pem: b.cert_pem,
                        key_pem: b.key_pem,
                    },
                    true,
                )
            }
        };
        let material = if changed {
            self.store(&secrets, existing, material).await?
        } else {
            material
        };

        // Trust the new CA alongside the ones still in use before anyone serves it.
        let ca_changed = self
            .trusted
            .first()
            .is_none_or(|c| *c != material.ca.cert_pem);
        if ca_changed {
            let previous = self.current.as_ref().map(|m| m.ca.cert_pem.clone());
            self.trusted = std::iter::once(material.ca.cert_pem.clone())
                .chain(previous)
                .collect();
            self.patch_bundles().await?;
            if self.current.is_some() {
                tokio::time::sleep(self.cfg.bundle_propagation).await;
            }
        } else if self.trusted.len() > 1 && self.current.as_ref() == Some(&material) {
            // The previous CA has been out of service for a full check interval: drop it.
            self.trusted.truncate(1);
            self.patch_bundles().await?;
        }
        if self.current.as_ref() != Some(&material) {
            self.sink.set_pem(&material.cert_pem, &material.key_pem)?;
            tracing::info!(secret = %self.cfg.secret_name, "webhook certificate in place");
            self.current = Some(material);
        }
        Ok(())
    }

    /// Creates or updates the Secret; on a conflict another replica won, so adopt what it wrote.
    async fn store(
        &self,
        secrets: &Api<Secret>,
        existing: Option<Secret>,
        m: Material,
    ) -> anyhow::Result<Material> {
        let mut secret = existing.clone().unwrap_or_default();
        secret.metadata.name = Some(self.cfg.secret_name.clone());
        secret.metadata.namespace = Some(self.cfg.namespace.clone());
        secret.type_ = Some("kubernetes.io/tls".into());
        secret.data = Some(m.to_data());
        let result = match existing {
            None => secrets.create(&PostParams::default(), &secret).await,
            Some(_) => {
                secrets
                    .replace(&self.cfg.secret_name, &PostParams::default(), &secret)
                    .await
            }
        };
        match result {
            Ok(_) => Ok(m),
            Err(kube::Error::Api(e)) if e.code == 409 => {
                let theirs = secrets.get(&self.cfg.secret_name).await?;
                Material::from_secret(&theirs).context(
                    "the webhook certificate Secret written by another replica is incomplete",
                )
            }
            Err(e) => Err(e).context("writing the webhook certificate Secret"),
        }
    }

    async fn patch_bundles(&self) -> anyhow::Result<()> {
        let bundle = base64::engine::general_purpose::STANDARD.encode(self.trusted.join(""));
        let name = &self.cfg.webhook_config_name;
        let mutating: Api<MutatingWebhookConfiguration> = Api::all(self.client.clone());
        let validating: Api<ValidatingWebhookConfiguration> = Api::all(self.client.clone());
        let value = serde_json::Value::String(bundle);
        for api in [
            ConfigApi::Mutating(mutating),
            ConfigApi::Validating(validating),
        ] {
            api.set_bundle(name, &value).await?;
        }
        Ok(())
    }

    /// Keeps the certificate fresh until the future is dropped.
    pub async fn run(mut self) {
        loop {
            tokio::time::sleep(self.cfg.check_interval).await;
            if let Err(error) = self.ensure().await {
                tracing::warn!(error = %format!("{error:#}"), "webhook certificate check failed; retrying");
            }
        }
    }
}

enum ConfigApi {
    Mutating(Api<MutatingWebhookConfiguration>),
    Validating(Api<ValidatingWebhookConfiguration>),
}

impl ConfigApi {
    /// Sets `caBundle` on every webhook of the configuration `name` (missing configuration: skip).
    async fn set_bundle(&self, name: &str, bundle: &serde_json::Value) -> anyhow::Result<()> {
        let raw = match self {
            ConfigApi::Mutating(api) => api
                .get_opt(name)
                .await?
                .map(|c| serde_json::to_value(c).unwrap_or_default()),
            ConfigApi::Validating(api) => api
                .get_opt(name)
                .await?
                .map(|c| serde_json::to_value(c).unwrap_or_default()),
        };
        let Some(raw) = raw else {
            tracing::warn!(
                configuration = name,
                "webhook configuration not found; caBundle not patched"
            );
            return Ok(());
        };
        let count = raw
            .get("webhooks")
            .and_then(|w| w.as_array())
            .map_or(0, Vec::len);
        let mut ops = vec![
            serde_json::json!({"op": "test", "path": "/metadata/resourceVersion", "value": raw.pointer("/metadata/resourceVersion")}),
        ];
        ops.extend((0..count).map(|i| serde_json::json!({"op": "add", "path": format!("/webhooks/{i}/clientConfig/caBundle"), "value": bundle})));
        let patch: json_patch::Patch = serde_json::from_value(serde_json::Value::Array(ops))?;
        let params = kube::api::PatchParams::default();
        match self {
            ConfigApi::Mutating(api) => api
                .patch(name, &params, &kube::api::Patch::Json::<()>(patch))
                .await
                .map(drop),
            ConfigApi::Validating(api) => api
                .patch(name, &params, &kube::api::Patch::Json::<()>(patch))
                .await
                .map(drop),
        }
        .with_context(|| format!("patching caBundle of {name}"))
    }
}
