//! In-memory ACM behind the [`Acm`] trait, for what moto does not emulate: ListCertificates
//! without a key-type filter returns only RSA_1024/RSA_2048 certificates (as AWS does), private
//! (CA-issued) certificates carry their CA ARN, an Amazon-issued certificate is issued only once
//! its DNS validation records exist in Route 53 (moto issues after a timer whatever the DNS
//! says), a certificate a listener uses cannot be deleted (`ResourceInUseException`; moto
//! deletes it), and calls can be made to fail. Every request goes through the [`Caller`] and is
//! logged.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::lock;
use super::route53::FakeRoute53;
use super::FakeAws;
use crate::aws::acm::{
    Acm, CertificateDetail, CertificateQuery, CertificateRequest, CertificateSummary,
    DomainValidation, ValidationRecord, DEFAULT_KEY_ALGORITHMS,
};
use crate::aws::caller::Caller;
use crate::aws::error::{AwsError, Result};
use crate::aws::types::{Service, Tags};

/// ACM's quota of names per certificate (its default; AWS refuses more).
pub const SAN_QUOTA: usize = 10;

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
    /// Seconds since the epoch (requested certificates).
    pub created_at: Option<i64>,
    /// Amazon-issued: validated by DNS (its records described once ACM made them up).
    pub dns_validated: bool,
    /// Describes left before ACM has made up the validation records (as AWS takes a few
    /// seconds after the request).
    pub records_hidden_for: u32,
    /// What uses it besides the listeners of a linked [`FakeAws`] (load balancer ARNs).
    pub in_use_by: Vec<String>,
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
            created_at: None,
            dns_validated: false,
            records_hidden_for: 0,
            in_use_by: Vec::new(),
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

    /// The names it is valid for: the domain name first, then the others (once each).
    fn names(&self) -> Vec<String> {
        let mut names = vec![self.domain_name.clone()];
        for n in &self.extra_names {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        names
    }
}

/// The validation CNAME ACM makes up for `domain`: the same for `*.x` and `x` (one record
/// validates both), stable per account as ACM's are.
pub fn validation_record(domain: &str) -> ValidationRecord {
    let base = domain.strip_prefix("*.").unwrap_or(domain);
    let token: u32 = base.bytes().fold(2166136261u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(16777619)
    });
    ValidationRecord {
        name: format!("_{token:08x}.{base}."),
        record_type: "CNAME".into(),
        value: format!("_{token:08x}.validations.acm-fake.aws."),
    }
}

/// The fake ACM of one account and region.
#[derive(Debug)]
pub struct FakeAcm {
    certs: Mutex<BTreeMap<String, FakeCertificate>>,
    log: Mutex<Vec<String>>,
    failures: Mutex<VecDeque<AwsError>>,
    next_id: Mutex<u64>,
    /// Describes a newly requested certificate answers without validation records.
    records_hidden_for: Mutex<u32>,
    /// Where Amazon-issued certificates look for their validation records.
    dns: Mutex<Option<Arc<FakeRoute53>>>,
    /// Whose listeners count as using a certificate.
    listeners: Mutex<Option<Arc<FakeAws>>>,
    caller: Caller,
}

impl Default for FakeAcm {
    fn default() -> Self {
        Self::with_caller(Caller::default())
    }
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

impl FakeAcm {
    pub fn new() -> Self {
        Self::default()
    }

    /// A fake whose requests go through `caller` (limiter, retries, metrics, leader fence).
    pub fn with_caller(caller: Caller) -> Self {
        Self {
            certs: Mutex::new(BTreeMap::new()),
            log: Mutex::new(Vec::new()),
            failures: Mutex::new(VecDeque::new()),
            next_id: Mutex::new(0),
            records_hidden_for: Mutex::new(0),
            dns: Mutex::new(None),
            listeners: Mutex::new(None),
            caller,
        }
    }

    /// Amazon-issued certificates are issued once every validation record of theirs exists in
    /// `dns` (checked whenever one is read); without it they stay pending until
    /// [`FakeAcm::set_status`].
    pub fn validated_by(&self, dns: Arc<FakeRoute53>) {
        *lock(&self.dns) = Some(dns);
    }

    /// A certificate a listener of `elb` uses cannot be deleted, as on AWS.
    pub fn used_by_listeners_of(&self, elb: Arc<FakeAws>) {
        *lock(&self.listeners) = Some(elb);
    }

    /// The next certificates requested answer `describes` DescribeCertificate calls without
    /// their validation records.
    pub fn hide_records_for(&self, describes: u32) {
        *lock(&self.records_hidden_for) = describes;
    }

    /// Adds a certificate; returns its ARN.
    pub fn add(&self, cert: FakeCertificate) -> String {
        let arn = self.next_arn();
        lock(&self.certs).insert(arn.clone(), cert);
        arn
    }

    fn next_arn(&self) -> String {
        let mut n = lock(&self.next_id);
        *n += 1;
        format!(
            "arn:aws:acm:us-west-2:123456789012:certificate/{:08x}-0000-4000-8000-000000000000",
            *n
        )
    }

    /// Changes a certificate's status (`ISSUED`, `EXPIRED`, ...).
    pub fn set_status(&self, arn: &str, status: &str) {
        if let Some(c) = lock(&self.certs).get_mut(arn) {
            c.status = status.into();
        }
    }

    /// Makes a certificate look requested `secs_ago` seconds ago.
    pub fn set_created_at(&self, arn: &str, secs_ago: i64) {
        if let Some(c) = lock(&self.certs).get_mut(arn) {
            c.created_at = Some(now_secs() - secs_ago);
        }
    }

    /// Marks a certificate used (or not) by something besides the linked listeners.
    pub fn set_in_use_by(&self, arn: &str, by: &[&str]) {
        if let Some(c) = lock(&self.certs).get_mut(arn) {
            c.in_use_by = by.iter().map(|s| s.to_string()).collect();
        }
    }

    pub fn remove(&self, arn: &str) {
        lock(&self.certs).remove(arn);
    }

    /// Every certificate of the account, by ARN.
    pub fn certificates(&self) -> BTreeMap<String, FakeCertificate> {
        lock(&self.certs).clone()
    }

    /// Every request that reached the fake (retries included), in order.
    pub fn calls(&self) -> Vec<String> {
        lock(&self.log).clone()
    }

    /// How many requests named `op` reached the fake.
    pub fn count(&self, op: &str) -> usize {
        lock(&self.log).iter().filter(|o| *o == op).count()
    }

    /// The requests that change something (not Describe*, Get*, List*).
    pub fn write_calls(&self) -> Vec<String> {
        self.calls()
            .into_iter()
            .filter(|op| crate::aws::fence::is_write(op))
            .collect()
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
        F: Fn(&mut BTreeMap<String, FakeCertificate>) -> Result<T> + Send + Sync,
        T: Send,
    {
        self.caller
            .call(Service::Acm, op, || self.attempt(op, &f))
            .await
    }

    async fn attempt<T, F>(&self, op: &'static str, f: &F) -> Result<T>
    where
        F: Fn(&mut BTreeMap<String, FakeCertificate>) -> Result<T> + Send + Sync,
    {
        lock(&self.log).push(op.to_string());
        let injected = lock(&self.failures).pop_front();
        if let Some(err) = injected {
            return Err(err);
        }
        let mut certs = lock(&self.certs);
        self.validate(&mut certs);
        f(&mut certs)
    }

    /// ACM's side of DNS validation: a pending Amazon-issued certificate whose every record is
    /// in Route 53 is issued.
    fn validate(&self, certs: &mut BTreeMap<String, FakeCertificate>) {
        let Some(dns) = lock(&self.dns).clone() else {
            return;
        };
        for c in certs.values_mut() {
            if !c.dns_validated || c.status != "PENDING_VALIDATION" || c.records_hidden_for > 0 {
                continue;
            }
            let all = c.names().iter().all(|n| {
                let r = validation_record(n);
                dns.has_record(&r.name, &r.record_type, &r.value)
            });
            if all {
                c.status = "ISSUED".into();
            }
        }
    }

    /// The load balancers (and others) that use `arn`.
    fn users(&self, arn: &str, c: &FakeCertificate) -> Vec<String> {
        let mut by = c.in_use_by.clone();
        if let Some(elb) = lock(&self.listeners).clone() {
            if elb.certificates_in_use().contains(arn) {
                by.push("a listener".into());
            }
        }
        by
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
                    subject_alternative_names: c.names(),
                })
                .collect())
        })
        .await
    }

    async fn describe_certificate(&self, arn: &str) -> Result<CertificateDetail> {
        self.run("DescribeCertificate", |certs| {
            let c = certs.get_mut(arn).ok_or_else(|| missing(arn))?;
            let records = c.records_hidden_for == 0;
            c.records_hidden_for = c.records_hidden_for.saturating_sub(1);
            let status = c.status.clone();
            let names = c.names();
            let domain_validation = match c.dns_validated {
                true => names
                    .iter()
                    .map(|n| DomainValidation {
                        domain_name: n.clone(),
                        validation_method: "DNS".into(),
                        resource_record: records.then(|| validation_record(n)),
                    })
                    .collect(),
                false => Vec::new(),
            };
            Ok(CertificateDetail {
                arn: arn.to_string(),
                domain_name: c.domain_name.clone(),
                subject_alternative_names: names,
                status,
                cert_type: c.cert_type.clone(),
                certificate_authority_arn: c.certificate_authority_arn.clone(),
                created_at: c.created_at,
                failure_reason: None,
                domain_validation,
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

    async fn request_certificate(&self, req: &CertificateRequest) -> Result<String> {
        let hidden = *lock(&self.records_hidden_for);
        let arn = self.next_arn();
        self.run("RequestCertificate", |certs| {
            if req.domain_name.is_empty() {
                return Err(AwsError::from_code(
                    "ValidationException",
                    "1 validation error detected: Value at 'domainName' failed to satisfy constraint: Member must have length greater than or equal to 1",
                    Some(400),
                ));
            }
            if req.subject_alternative_names.len() > SAN_QUOTA {
                return Err(AwsError::from_code(
                    "LimitExceededException",
                    "Cannot request a certificate with more than 10 domain names.",
                    Some(400),
                ));
            }
            let private = req.certificate_authority_arn.is_some();
            let extra = req
                .subject_alternative_names
                .iter()
                .filter(|n| **n != req.domain_name)
                .cloned()
                .collect();
            certs.insert(
                arn.clone(),
                FakeCertificate {
                    domain_name: req.domain_name.clone(),
                    extra_names: extra,
                    // A private CA issues at once; ACM validates the others by DNS first.
                    status: if private { "ISSUED" } else { "PENDING_VALIDATION" }.into(),
                    cert_type: if private { "PRIVATE" } else { "AMAZON_ISSUED" }.into(),
                    key_algorithm: req
                        .key_algorithm
                        .clone()
                        .unwrap_or_else(|| "RSA_2048".into()),
                    certificate_authority_arn: req.certificate_authority_arn.clone(),
                    tags: req.tags.clone(),
                    created_at: Some(now_secs()),
                    dns_validated: !private
                        && req.validation_method.as_deref().unwrap_or("EMAIL") == "DNS",
                    records_hidden_for: hidden,
                    in_use_by: Vec::new(),
                },
            );
            Ok(arn.clone())
        })
        .await
    }

    async fn delete_certificate(&self, arn: &str) -> Result<()> {
        let by = {
            let certs = lock(&self.certs);
            certs.get(arn).map(|c| self.users(arn, c))
        };
        self.run("DeleteCertificate", |certs| {
            if !certs.contains_key(arn) {
                return Err(missing(arn));
            }
            if let Some(by) = by.as_ref().filter(|b| !b.is_empty()) {
                return Err(AwsError::from_code(
                    "ResourceInUseException",
                    format!("Certificate {arn} in use by {}", by.join(", ")),
                    Some(400),
                ));
            }
            certs.remove(arn);
            Ok(())
        })
        .await
    }

    async fn add_tags_to_certificate(&self, arn: &str, tags: &Tags) -> Result<()> {
        self.run("AddTagsToCertificate", |certs| {
            let c = certs.get_mut(arn).ok_or_else(|| missing(arn))?;
            c.tags.extend(tags.clone());
            Ok(())
        })
        .await
    }
}
