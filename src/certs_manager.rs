//! Controller-managed webhook certificate: a Secret holds the CA and serving pair, both webhook
//! configurations carry the CA in `caBundle`, and the pair is renewed ahead of expiry.
//!
//! Order matters and is why upstream users see x509 errors: the bundle must trust a CA before any
//! replica serves a certificate from it. So: write the Secret, patch every `caBundle` (old and
//! new CA side by side while a CA changes), and only then hand the files to the TLS server, which
//! reloads them without a restart. A restart finds the Secret and reuses it. Both configurations
//! are watched: a bundle wiped or replaced (`kubectl replace`, a chart upgrade) is restored at once.

use crate::ca_bundle::{Configs, Mode};
use crate::webhook::tls::ReloadingCert;
use anyhow::Context;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::ByteString;
use kube::api::{Api, PostParams};
use kube::Client;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
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

fn due(pem: &str, renew_before: Duration, now: OffsetDateTime) -> bool {
    match crate::ca_bundle::validity(pem) {
        Some((_, end)) => {
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
    /// When `trusted[0]` was adopted: older CAs are retired a check interval plus the
    /// propagation delay later, once every replica has had a check to adopt it too.
    adopted: Instant,
    current: Option<Material>,
    configs: Configs,
    /// Where the served pair goes (served from memory: no writable files needed).
    sink: Arc<ReloadingCert>,
}

impl CertManager {
    pub fn new(client: Client, cfg: CertManagerConfig, sink: Arc<ReloadingCert>) -> Self {
        let configs = Configs::new(client.clone(), &cfg.webhook_config_name);
        CertManager {
            client,
            cfg,
            trusted: Vec::new(),
            adopted: Instant::now(),
            current: None,
            configs,
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
            self.adopted = Instant::now();
            self.configs.ensure(&self.trusted, Mode::Add).await?;
            if self.current.is_some() {
                tokio::time::sleep(self.cfg.bundle_propagation).await;
            }
        } else if self.adopted.elapsed() >= self.cfg.check_interval + self.cfg.bundle_propagation {
            // Every replica has had a full check to adopt the current CA: older ones go.
            self.trusted.truncate(1);
            self.configs.ensure(&self.trusted, Mode::Retire).await?;
        } else {
            self.configs.ensure(&self.trusted, Mode::Add).await?;
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

    /// Keeps the certificate fresh and the bundles intact until the future is dropped.
    pub async fn run(mut self) {
        let mut changes = std::pin::pin!(self.configs.changes());
        let mut next_check = tokio::time::Instant::now() + self.cfg.check_interval;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(next_check) => {
                    next_check = tokio::time::Instant::now() + self.cfg.check_interval;
                    if let Err(error) = self.ensure().await {
                        tracing::warn!(error = %format!("{error:#}"), "webhook certificate check failed; retrying");
                    }
                }
                Some(()) = changes.next() => self.heal().await,
            }
        }
    }

    /// Restores the bundles after a change to a configuration; a failure is retried soon.
    async fn heal(&mut self) {
        if self.trusted.is_empty() {
            return;
        }
        match self.configs.ensure(&self.trusted, Mode::Add).await {
            Ok(true) => tracing::info!(
                configuration = %self.cfg.webhook_config_name,
                "restored the webhook caBundle"
            ),
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(error = %format!("{error:#}"), "cannot restore the webhook caBundle; retrying");
                tokio::time::sleep(Duration::from_millis(500)).await;
                if let Err(error) = self.configs.ensure(&self.trusted, Mode::Add).await {
                    tracing::warn!(error = %format!("{error:#}"), "cannot restore the webhook caBundle");
                }
            }
        }
    }
}
