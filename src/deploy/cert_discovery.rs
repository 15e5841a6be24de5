//! ACM certificate discovery, as upstream's `pkg/certs/cert_discovery.go`: the issued
//! certificates of the account (every key type) and the names each is valid for, matched
//! against an Ingress's (or a Gateway listener's) hosts (`*.rest` covers exactly one more label; otherwise exact,
//! case-sensitive). Every matching certificate of every host is used; a host without one fails
//! with upstream's `no certificate found for host: <host>`.
//!
//! Caches as upstream: the certificate list 1 minute (one entry), each certificate's names
//! 5 minutes when imported and 10 hours when Amazon-issued or private (other types uncached).
//! Loads are serialised, so concurrent reconciles share one ListCertificates.
//! `--allowed-certificate-authority-arns` keeps only certificates of those private CAs; with the
//! gate `EnableCertificateManagement` certificates carrying the controller's stack tag keys are
//! never discovered.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::error::{Error, Result};
use super::Deployer;
use crate::aws::acm::{Acm, CertificateQuery, KEY_ALGORITHMS};
use crate::aws::AwsError;
use crate::model::tags::{TAG_CLUSTER, TAG_STACK};
use crate::model::{self, Stack, StackKind};

/// How long discovery trusts what ACM said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheTtls {
    /// The list of issued certificates.
    pub certificate_list: Duration,
    /// The names of an imported certificate.
    pub imported: Duration,
    /// The names of an Amazon-issued or private certificate (they never change).
    pub issued: Duration,
}

impl Default for CacheTtls {
    /// Upstream's: 1 minute, 5 minutes, 10 hours.
    fn default() -> Self {
        Self {
            certificate_list: Duration::from_secs(60),
            imported: Duration::from_secs(5 * 60),
            issued: Duration::from_secs(10 * 3600),
        }
    }
}

/// Why discovery found no certificates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscoveryError {
    #[error("no certificate found for host: {0}")]
    NoCertificate(String),
    #[error("{0}")]
    Aws(#[from] AwsError),
}

#[derive(Debug, Default)]
struct Cache {
    arns: Option<(Instant, Vec<String>)>,
    /// Names per certificate ARN, with their expiry.
    names: HashMap<String, (Instant, BTreeSet<String>)>,
}

/// Finds the ACM certificates of hosts. Share one per controller (`Arc`): the cache is in it.
pub struct CertDiscovery {
    acm: Arc<dyn Acm>,
    allowed_ca_arns: Vec<String>,
    exclude_managed: bool,
    ttls: CacheTtls,
    cache: tokio::sync::Mutex<Cache>,
}

impl std::fmt::Debug for CertDiscovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertDiscovery")
            .field("allowed_ca_arns", &self.allowed_ca_arns)
            .field("exclude_managed", &self.exclude_managed)
            .field("ttls", &self.ttls)
            .finish_non_exhaustive()
    }
}

/// Upstream's host match: `*.rest` matches a host with as many labels whose labels after the
/// first equal `rest`'s; anything else only itself.
pub fn domain_matches_host(domain: &str, host: &str) -> bool {
    if domain.starts_with("*.") {
        let d: Vec<&str> = domain.split('.').collect();
        let h: Vec<&str> = host.split('.').collect();
        return d.len() == h.len() && d[1..] == h[1..];
    }
    domain == host
}

impl CertDiscovery {
    pub fn new(acm: Arc<dyn Acm>) -> Self {
        Self {
            acm,
            allowed_ca_arns: Vec::new(),
            exclude_managed: false,
            ttls: CacheTtls::default(),
            cache: tokio::sync::Mutex::new(Cache::default()),
        }
    }

    /// `--allowed-certificate-authority-arns`: when not empty, only certificates issued by one
    /// of these private CAs are used (imported and Amazon-issued ones have no CA).
    pub fn with_allowed_ca_arns(mut self, arns: Vec<String>) -> Self {
        self.allowed_ca_arns = arns;
        self
    }

    /// Gate `EnableCertificateManagement`: certificates tagged with the controller's cluster and
    /// stack tag keys (ones it created) are left out, as upstream does.
    pub fn with_managed_excluded(mut self, on: bool) -> Self {
        self.exclude_managed = on;
        self
    }

    /// The Ingress controller's discovery as the flags set it
    /// (`--allowed-certificate-authority-arns`, gate `EnableCertificateManagement`).
    pub fn for_ingresses(cfg: &crate::config::Config, acm: Arc<dyn Acm>) -> Arc<Self> {
        Arc::new(
            Self::new(acm)
                .with_allowed_ca_arns(cfg.allowed_certificate_authority_arns.clone())
                .with_managed_excluded(cfg.gate("EnableCertificateManagement")),
        )
    }

    /// The Gateway controllers' discovery: upstream's own instance for them, with
    /// `--allowed-certificate-authority-arns` but never leaving out controller-created
    /// certificates (`EnableCertificateManagement` is an Ingress feature).
    pub fn for_gateways(cfg: &crate::config::Config, acm: Arc<dyn Acm>) -> Arc<Self> {
        Arc::new(
            Self::new(acm).with_allowed_ca_arns(cfg.allowed_certificate_authority_arns.clone()),
        )
    }

    pub fn with_cache_ttls(mut self, ttls: CacheTtls) -> Self {
        self.ttls = ttls;
        self
    }

    /// The sorted, distinct ARNs of every certificate valid for one of `hosts`; an error names
    /// the first host (in the order given) that has none.
    pub async fn discover(
        &self,
        hosts: &[String],
    ) -> std::result::Result<Vec<String>, DiscoveryError> {
        let names = self.load_names().await?;
        let mut out = BTreeSet::new();
        for host in hosts {
            let matching: Vec<&String> = names
                .iter()
                .filter(|(_, ns)| ns.iter().any(|d| domain_matches_host(d, host)))
                .map(|(arn, _)| arn)
                .collect();
            if matching.is_empty() {
                return Err(DiscoveryError::NoCertificate(host.clone()));
            }
            out.extend(matching.into_iter().cloned());
        }
        Ok(out.into_iter().collect())
    }

    /// Every usable certificate with its names (certificates without names left out).
    async fn load_names(&self) -> std::result::Result<Vec<(String, BTreeSet<String>)>, AwsError> {
        let mut cache = self.cache.lock().await;
        let now = Instant::now();
        cache.names.retain(|_, (until, _)| *until > now);
        let arns = match &cache.arns {
            Some((until, arns)) if *until > now => arns.clone(),
            _ => {
                let arns = self.list_arns().await?;
                cache.arns = Some((now + self.ttls.certificate_list, arns.clone()));
                arns
            }
        };
        let mut out = Vec::with_capacity(arns.len());
        for arn in arns {
            let names = match cache.names.get(&arn) {
                Some((_, names)) => names.clone(),
                None => {
                    let (names, ttl) = self.describe(&arn).await?;
                    if let Some(ttl) = ttl {
                        cache.names.insert(arn.clone(), (now + ttl, names.clone()));
                    }
                    names
                }
            };
            if !names.is_empty() {
                out.push((arn, names));
            }
        }
        Ok(out)
    }

    async fn list_arns(&self) -> std::result::Result<Vec<String>, AwsError> {
        let q = CertificateQuery {
            statuses: vec!["ISSUED".into()],
            key_types: KEY_ALGORITHMS.iter().map(|k| k.to_string()).collect(),
        };
        let mut arns = Vec::new();
        for c in self.acm.list_certificates(&q).await? {
            if self.exclude_managed {
                let tags = self.acm.list_tags_for_certificate(&c.arn).await?;
                if tags.contains_key(TAG_CLUSTER) && tags.contains_key(TAG_STACK) {
                    continue;
                }
            }
            arns.push(c.arn);
        }
        Ok(arns)
    }

    /// A certificate's names (none when its CA is not allowed) and how long to cache them.
    async fn describe(
        &self,
        arn: &str,
    ) -> std::result::Result<(BTreeSet<String>, Option<Duration>), AwsError> {
        let d = self.acm.describe_certificate(arn).await?;
        let allowed = self.allowed_ca_arns.is_empty()
            || d.certificate_authority_arn
                .as_ref()
                .is_some_and(|ca| self.allowed_ca_arns.contains(ca));
        let names = if allowed {
            d.subject_alternative_names.into_iter().collect()
        } else {
            BTreeSet::new()
        };
        let ttl = match d.cert_type.as_str() {
            "IMPORTED" => Some(self.ttls.imported),
            "AMAZON_ISSUED" | "PRIVATE" => Some(self.ttls.issued),
            _ => None,
        };
        Ok((names, ttl))
    }
}

impl Deployer {
    /// `stack` with the certificates ACM discovery finds filled into its secure listeners
    /// (reads only; borrowed unchanged when no listener needs discovery). Ingress members are
    /// discovered in group order and the first host without a certificate fails the whole stack,
    /// as upstream fails the model build: `ingress: <ns/name>: no certificate found for host:
    /// <host>`; a Gateway's listeners in port order, with upstream's bare
    /// `no certificate found for host: <host>`. A listener one of whose members has a certificate
    /// the deploy creates (`create-acm-cert`) keeps its member list, the discovered ARNs filled
    /// in, until that certificate exists.
    pub async fn resolve_certificates<'s>(&self, stack: &'s Stack) -> Result<Cow<'s, Stack>> {
        let to_discover = stack
            .listeners
            .iter()
            .flat_map(|l| &l.certificate_discovery)
            .any(|m| m.discovery_hosts.is_some());
        if !to_discover {
            return Ok(Cow::Borrowed(stack));
        }
        let Some(discovery) = &self.cert_discovery else {
            return Err(Error::Unsupported(
                "certificate discovery through ACM: no ACM client is configured".into(),
            ));
        };
        // One discovery per member and host list: an Ingress has the same hosts on every
        // listener, a Gateway's listeners each have their own.
        type Wanted<'a> = (&'a str, &'a [String]);
        let mut order: Vec<Wanted<'_>> = Vec::new();
        for l in &stack.listeners {
            for m in &l.certificate_discovery {
                if let Some(hosts) = &m.discovery_hosts {
                    let w = (m.ingress.as_str(), hosts.as_slice());
                    if !order.contains(&w) {
                        order.push(w);
                    }
                }
            }
        }
        let rank = |ing: &str| stack.members.iter().position(|m| m == ing);
        order.sort_by_key(|(ing, _)| rank(ing).unwrap_or(usize::MAX));
        let ingress = stack.kind == StackKind::Ingress;
        let mut found: BTreeMap<Wanted<'_>, Vec<String>> = BTreeMap::new();
        for (ing, hosts) in order {
            let arns = match discovery.discover(hosts).await {
                Ok(arns) => arns,
                Err(DiscoveryError::NoCertificate(h)) if ingress => {
                    return Err(Error::Invalid(format!(
                        "ingress: {ing}: no certificate found for host: {h}"
                    )))
                }
                Err(e @ DiscoveryError::NoCertificate(_)) => {
                    return Err(Error::Invalid(e.to_string()))
                }
                Err(DiscoveryError::Aws(source)) => {
                    let what = if ingress {
                        format!("ingress: {ing}: discover ACM certificates")
                    } else {
                        format!("gateway {ing}: discover ACM certificates")
                    };
                    return Err(Error::Aws { what, source });
                }
            };
            found.insert((ing, hosts), arns);
        }
        let mut out = stack.clone();
        for l in &mut out.listeners {
            for m in &mut l.certificate_discovery {
                if let Some(hosts) = m.discovery_hosts.take() {
                    m.certificates = found
                        .get(&(m.ingress.as_str(), hosts.as_slice()))
                        .cloned()
                        .unwrap_or_default();
                }
            }
            // Merged now unless a member's certificate is yet to be created.
            let created = l
                .certificate_discovery
                .iter()
                .any(|m| stack.created_certificate(&m.ingress).is_some());
            if l.certificate_discovery.is_empty() || created {
                continue;
            }
            let lists: Vec<&[String]> = l
                .certificate_discovery
                .iter()
                .map(|m| m.certificates.as_slice())
                .collect();
            l.certificates = model::merge_member_certificates(&lists);
            l.certificate_discovery.clear();
        }
        Ok(Cow::Owned(out))
    }
}

#[cfg(test)]
#[path = "cert_discovery_tests.rs"]
mod tests;
