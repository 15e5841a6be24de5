//! Controller-managed webhook certificate: a Secret holds the CA and serving pair, both webhook
//! configurations carry the CA in `caBundle`, and the pair is renewed ahead of expiry.
//!
//! Order matters and is why upstream users see x509 errors: the bundle must trust a CA before any
//! replica serves a certificate from it. So: write the Secret, patch every `caBundle` (old and
//! new CA side by side while a CA changes), and only then hand the files to the TLS server, which
//! reloads them without a restart. A restart finds the Secret and reuses it. Both configurations
//! are watched: a bundle wiped or replaced (`kubectl replace`, a chart upgrade) is restored at once.
//!
//! Switching from upstream: upstream's chart leaves a Secret of the same name with no `ca.key`
//! while its pods still serve that pair. It is adopted as it is (served, its CA kept trusted)
//! until it is due, so old and new pods serve certificates one bundle trusts; only a renewal
//! needs a CA key, and then a new CA joins the bundle before it is served, as in any rotation.
//! The Secret carries the Helm ownership of the webhook configurations, so `helm upgrade` (ours or
//! upstream's chart, which renders a Secret of that name) adopts it instead of refusing it.

use super::ca_bundle::{Configs, Mode};
use super::tls::ReloadingCert;
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
    ca_cert_pem: String,
    /// Absent in a Secret upstream's chart rendered: that pair is served until it is due.
    ca_key_pem: Option<String>,
    cert_pem: String,
    key_pem: String,
}

/// Metadata keys by which Helm decides a live object belongs to a release.
const HELM_OWNERSHIP_ANNOTATIONS: [&str; 2] = [
    "meta.helm.sh/release-name",
    "meta.helm.sh/release-namespace",
];
const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";

fn get(data: &BTreeMap<String, ByteString>, key: &str) -> Option<String> {
    data.get(key)
        .and_then(|b| String::from_utf8(b.0.clone()).ok())
        .filter(|s| !s.is_empty())
}

impl Material {
    fn from_secret(secret: &Secret) -> Option<Material> {
        let data = secret.data.as_ref()?;
        Some(Material {
            ca_cert_pem: get(data, "ca.crt")?,
            ca_key_pem: get(data, "ca.key"),
            cert_pem: get(data, "tls.crt")?,
            key_pem: get(data, "tls.key")?,
        })
    }

    fn issued(b: webhook_certs::Bundle) -> Material {
        Material {
            ca_cert_pem: b.ca.cert_pem,
            ca_key_pem: Some(b.ca.key_pem),
            cert_pem: b.cert_pem,
            key_pem: b.key_pem,
        }
    }

    /// The CA to renew the serving pair under: ours while it has time left, else a new one.
    fn renewal_ca(&self, renew_before: Duration, now: OffsetDateTime) -> Option<Ca> {
        let key_pem = self.ca_key_pem.clone()?;
        (!due(&self.ca_cert_pem, renew_before, now)).then(|| Ca {
            cert_pem: self.ca_cert_pem.clone(),
            key_pem,
        })
    }

    fn to_data(&self) -> BTreeMap<String, ByteString> {
        [
            ("ca.crt", Some(&self.ca_cert_pem)),
            ("ca.key", self.ca_key_pem.as_ref()),
            ("tls.crt", Some(&self.cert_pem)),
            ("tls.key", Some(&self.key_pem)),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_string(), ByteString(v?.as_bytes().to_vec()))))
        .collect()
    }
}

/// Whether a serving certificate names the host the API server calls the webhook Service by
/// (`<service>.<namespace>.svc`): a pair adopted from another release or namespace would fail
/// verification. Upstream's chart names three hosts, ours four; only this one is verified.
fn covers(cert_pem: &str, host: &str) -> bool {
    use rustls::pki_types::pem::PemObject;
    let Ok(der) = rustls::pki_types::CertificateDer::from_pem_slice(cert_pem.as_bytes()) else {
        return false;
    };
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(&der) else {
        return false;
    };
    let Ok(Some(san)) = cert.subject_alternative_name() else {
        return false;
    };
    let dns: Vec<&str> = san
        .value
        .general_names
        .iter()
        .filter_map(|n| match n {
            x509_parser::extensions::GeneralName::DNSName(d) => Some(*d),
            _ => None,
        })
        .collect();
    dns.contains(&host)
}

/// The Helm ownership (annotations and managed-by label) `source` has and `secret` lacks, to be
/// copied onto the Secret; empty when there is nothing to copy.
fn missing_ownership(
    source: &kube::api::ObjectMeta,
    secret: &kube::api::ObjectMeta,
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let pick = |from: &Option<BTreeMap<String, String>>,
                to: &Option<BTreeMap<String, String>>,
                keys: &[&str]| {
        keys.iter()
            .filter_map(|k| {
                let v = from.as_ref()?.get(*k)?;
                (to.as_ref().and_then(|t| t.get(*k)) != Some(v)).then(|| (k.to_string(), v.clone()))
            })
            .collect::<BTreeMap<_, _>>()
    };
    let annotations = pick(
        &source.annotations,
        &secret.annotations,
        &HELM_OWNERSHIP_ANNOTATIONS,
    );
    // The label alone means nothing to Helm: copy it only with the release annotations.
    let has_release = source.annotations.as_ref().is_some_and(|a| {
        HELM_OWNERSHIP_ANNOTATIONS
            .iter()
            .all(|k| a.contains_key(*k))
    });
    let labels = if has_release {
        pick(&source.labels, &secret.labels, &[MANAGED_BY_LABEL])
    } else {
        BTreeMap::new()
    };
    (annotations, labels)
}

fn due(pem: &str, renew_before: Duration, now: OffsetDateTime) -> bool {
    match super::ca_bundle::validity(pem) {
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
        let host = format!("{}.{}.svc", self.cfg.service_name, self.cfg.namespace);
        let (material, changed) = match stored {
            // Kept (ours, or upstream's pair without a CA key) while neither is due.
            Some(m)
                if !due(&m.cert_pem, self.cfg.renew_before, now)
                    && !due(&m.ca_cert_pem, self.cfg.renew_before, now)
                    && covers(&m.cert_pem, &host) =>
            {
                (m, false)
            }
            Some(m) => {
                // Keep our CA while it has time left; a new CA when it is due or not ours.
                let ca = match m.renewal_ca(self.cfg.renew_before, now) {
                    Some(ca) => ca,
                    None => generate_ca(DEFAULT_CA_DAYS, now)?,
                };
                (
                    Material::issued(issue_serving(&ca, &self.spec(), now)?),
                    true,
                )
            }
            None => {
                let ca = generate_ca(DEFAULT_CA_DAYS, now)?;
                (
                    Material::issued(issue_serving(&ca, &self.spec(), now)?),
                    true,
                )
            }
        };
        // The configurations' ownership is read only when the Secret is written or lacks any
        // (a Secret already owned by a release needs no extra GET on every check).
        let has_ownership = existing.as_ref().is_some_and(|e| {
            let a = e.metadata.annotations.as_ref();
            HELM_OWNERSHIP_ANNOTATIONS
                .iter()
                .all(|k| a.is_some_and(|a| a.contains_key(*k)))
        });
        let ownership = if changed || !has_ownership {
            self.configs.owner_metadata().await
        } else {
            Default::default()
        };
        let unowned = existing.as_ref().is_some_and(|e| {
            let (a, l) = missing_ownership(&ownership, &e.metadata);
            !(a.is_empty() && l.is_empty())
        });
        let material = if changed || unowned {
            self.store(&secrets, existing, material, &ownership).await?
        } else {
            material
        };

        // Trust the new CA alongside the ones still in use before anyone serves it.
        let ca_changed = self
            .trusted
            .first()
            .is_none_or(|c| *c != material.ca_cert_pem);
        if ca_changed {
            let previous = self.current.as_ref().map(|m| m.ca_cert_pem.clone());
            self.trusted = std::iter::once(material.ca_cert_pem.clone())
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

    /// Creates or updates the Secret (with the webhook configurations' Helm ownership); on a
    /// conflict another replica won, so adopt what it wrote.
    async fn store(
        &self,
        secrets: &Api<Secret>,
        existing: Option<Secret>,
        m: Material,
        ownership: &kube::api::ObjectMeta,
    ) -> anyhow::Result<Material> {
        let mut secret = existing.clone().unwrap_or_default();
        secret.metadata.name = Some(self.cfg.secret_name.clone());
        secret.metadata.namespace = Some(self.cfg.namespace.clone());
        let (annotations, labels) = missing_ownership(ownership, &secret.metadata);
        secret
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .extend(annotations);
        secret
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .extend(labels);
        // The type is immutable: an adopted Secret keeps the one it has.
        if secret.type_.is_none() {
            secret.type_ = Some("kubernetes.io/tls".into());
        }
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
