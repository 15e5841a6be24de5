//! In-memory ACM behind the [`Acm`] trait, for what moto does not emulate: ListCertificates
//! without a key-type filter returns only RSA_1024/RSA_2048 certificates (as AWS does), private
//! (CA-issued) certificates carry their CA ARN, and calls can be made to fail. Every request
//! goes through the [`Caller`] and is logged.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use async_trait::async_trait;

use super::lock;
use crate::aws::acm::{
    Acm, CertificateDetail, CertificateQuery, CertificateSummary, DEFAULT_KEY_ALGORITHMS,
};
use crate::aws::caller::Caller;
use crate::aws::error::{AwsError, Result};
use crate::aws::types::{Service, Tags};

/// One certificate of the fake account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeCertificate {
    pub domain_name: String,
    /// Besides the domain name (which ACM lists first).
    pub extra_names: Vec<String>,
    pub status: String,
    pub cert_type: String,
    pub key_algorithm: String,
    pub certificate_authority_arn: Option<String>,
    pub tags: Tags,
}

impl FakeCertificate {
    /// An imported, issued RSA_2048 certificate for `domain` and `extra_names`.
    pub fn imported(domain: &str, extra_names: &[&str]) -> Self {
        Self {
            domain_name: domain.into(),
            extra_names: extra_names.iter().map(|s| s.to_string()).collect(),
            status: "ISSUED".into(),
            cert_type: "IMPORTED".into(),
            key_algorithm: "RSA_2048".into(),
            certificate_authority_arn: None,
            tags: Tags::new(),
        }
    }

    pub fn status(mut self, status: &str) -> Self {
        self.status = status.into();
        self
    }

    pub fn key_algorithm(mut self, key: &str) -> Self {
        self.key_algorithm = key.into();
        self
    }

    /// Issued by the private CA `ca_arn` (type `PRIVATE`).
    pub fn private(mut self, ca_arn: &str) -> Self {
        self.cert_type = "PRIVATE".into();
        self.certificate_authority_arn = Some(ca_arn.into());
        self
    }

    pub fn tag(mut self, key: &str, value: &str) -> Self {
        self.tags.insert(key.into(), value.into());
        self
    }
}

/// The fake ACM of one account and region.
#[derive(Debug)]
pub struct FakeAcm {
    certs: Mutex<BTreeMap<String, FakeCertificate>>,
    log: Mutex<Vec<String>>,
    failures: Mutex<VecDeque<AwsError>>,
    next_id: Mutex<u64>,
    caller: Caller,
}

impl Default for FakeAcm {
    fn default() -> Self {
        Self::with_caller(Caller::default())
    }
}

impl FakeAcm {
    pub fn new() -> Self {
        Self::default()
    }

    /// A fake whose requests go through `caller` (limiter, retries, metrics).
    pub fn with_caller(caller: Caller) -> Self {
        Self {
            certs: Mutex::new(BTreeMap::new()),
            log: Mutex::new(Vec::new()),
            failures: Mutex::new(VecDeque::new()),
            next_id: Mutex::new(0),
            caller,
        }
    }

    /// Adds a certificate; returns its ARN.
    pub fn add(&self, cert: FakeCertificate) -> String {
        let mut n = lock(&self.next_id);
        *n += 1;
        let arn = format!(
            "arn:aws:acm:us-west-2:123456789012:certificate/{:08x}-0000-4000-8000-000000000000",
            *n
        );
        lock(&self.certs).insert(arn.clone(), cert);
        arn
    }

    /// Changes a certificate's status (`ISSUED`, `EXPIRED`, ...).
    pub fn set_status(&self, arn: &str, status: &str) {
        if let Some(c) = lock(&self.certs).get_mut(arn) {
            c.status = status.into();
        }
    }

    pub fn remove(&self, arn: &str) {
        lock(&self.certs).remove(arn);
    }

    /// Every request that reached the fake (retries included), in order.
    pub fn calls(&self) -> Vec<String> {
        lock(&self.log).clone()
    }

    /// How many requests named `op` reached the fake.
    pub fn count(&self, op: &str) -> usize {
        lock(&self.log).iter().filter(|o| *o == op).count()
    }

    pub fn clear_calls(&self) {
        lock(&self.log).clear();
    }

    /// The next request fails with `err` (queued: one per call of this).
    pub fn fail_next(&self, err: AwsError) {
        lock(&self.failures).push_back(err);
    }

    async fn run<T, F>(&self, op: &'static str, f: F) -> Result<T>
    where
        F: Fn(&BTreeMap<String, FakeCertificate>) -> Result<T> + Send + Sync,
        T: Send,
    {
        self.caller
            .call(Service::Acm, op, || self.attempt(op, &f))
            .await
    }

    async fn attempt<T, F>(&self, op: &'static str, f: &F) -> Result<T>
    where
        F: Fn(&BTreeMap<String, FakeCertificate>) -> Result<T> + Send + Sync,
    {
        lock(&self.log).push(op.to_string());
        let injected = lock(&self.failures).pop_front();
        match injected {
            Some(err) => Err(err),
            None => f(&lock(&self.certs)),
        }
    }
}

fn missing(arn: &str) -> AwsError {
    AwsError::from_code(
        "ResourceNotFoundException",
        format!("Could not find certificate {arn}."),
        Some(400),
    )
}

#[async_trait]
impl Acm for FakeAcm {
    async fn list_certificates(&self, q: &CertificateQuery) -> Result<Vec<CertificateSummary>> {
        self.run("ListCertificates", |certs| {
            let key_ok = |k: &String| match q.key_types.is_empty() {
                true => DEFAULT_KEY_ALGORITHMS.contains(&k.as_str()),
                false => q.key_types.contains(k),
            };
            Ok(certs
                .iter()
                .filter(|(_, c)| q.statuses.is_empty() || q.statuses.contains(&c.status))
                .filter(|(_, c)| key_ok(&c.key_algorithm))
                .map(|(arn, c)| CertificateSummary {
                    arn: arn.clone(),
                    domain_name: c.domain_name.clone(),
                    status: c.status.clone(),
                    key_algorithm: c.key_algorithm.clone(),
                })
                .collect())
        })
        .await
    }

    async fn describe_certificate(&self, arn: &str) -> Result<CertificateDetail> {
        self.run("DescribeCertificate", |certs| {
            let c = certs.get(arn).ok_or_else(|| missing(arn))?;
            let mut names = vec![c.domain_name.clone()];
            names.extend(c.extra_names.iter().cloned());
            Ok(CertificateDetail {
                arn: arn.to_string(),
                domain_name: c.domain_name.clone(),
                subject_alternative_names: names,
                status: c.status.clone(),
                cert_type: c.cert_type.clone(),
                certificate_authority_arn: c.certificate_authority_arn.clone(),
            })
        })
        .await
    }

    async fn list_tags_for_certificate(&self, arn: &str) -> Result<Tags> {
        self.run("ListTagsForCertificate", |certs| {
            Ok(certs.get(arn).ok_or_else(|| missing(arn))?.tags.clone())
        })
        .await
    }
}
