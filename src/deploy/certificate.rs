//! ACM certificates the controller creates for Ingresses (`create-acm-cert`, gate
//! `EnableCertificateManagement`), as upstream's `pkg/deploy/acm`: the stack's certificates are
//! found in ACM by their tags (cluster and stack, legacy cluster key accepted) among every
//! certificate of the account, paired with the model's by the `ingress.k8s.aws/resource` tag,
//! requested when missing (or when their names, or a private one's CA, changed), and deleted with
//! the stack after the listeners that used them. Amazon-issued ones are validated by DNS: every
//! name's hosted zone is looked up before anything is requested (a name without a zone stops the
//! deploy before any write), and ACM's validation records are written into Route 53 after the
//! request and removed with the certificate (unless another certificate of the account still
//! names that domain and so validates with the same record).
//!
//! Waiting differs from upstream on purpose: upstream blocks its reconcile up to 30 minutes per
//! certificate. Here a deploy that has just requested a certificate waits at most
//! [`CertificateTiming::issue_wait`] (30 s) for ACM to issue it (a private CA takes seconds),
//! then stops with [`Error::NotReady`]: the reconciler queues the group again after
//! [`CertificateTiming::requeue`] (30 s), without a Warning, and each later pass looks once and
//! stops again until ACM has issued it. Nothing else of the stack is written meanwhile (the
//! certificate step comes before every other call). A certificate still
//! not issued [`CertificateTiming::reissue_after`] (30 min, upstream's patience) after its
//! request is deleted and requested anew, as upstream's reissue does.
//!
//! A certificate without our cluster and stack tags is never touched.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use super::error::{Context, Error, Result};
use super::resolve::Resolved;
use super::tags::{self, TagCache, TAG_CACHE_MAX_ENTRIES};
use super::Deployer;
use crate::aws::acm::{
    Acm, CertificateDetail, CertificateQuery, CertificateRequest, CertificateSummary,
    KEY_ALGORITHMS,
};
use crate::aws::route53::{zone_for, HostedZone, RecordAction, RecordChange, Route53};
use crate::aws::{AwsError, Tags};
use crate::model::{self, CertificateType, Stack, StackKind};

/// TTL of the validation records written into Route 53 (upstream's).
pub const VALIDATION_RECORD_TTL: i64 = 60;
/// ACM's status of a certificate that can be served.
const ISSUED: &str = "ISSUED";
/// ACM's status while DNS validation is under way.
const PENDING: &str = "PENDING_VALIDATION";

/// How long the certificate step waits, and how long it trusts what it read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CertificateTiming {
    /// How long ACM may take to describe the validation records after a request, and how often
    /// it is asked meanwhile (upstream's 30 s and 5 s).
    pub records_wait: Duration,
    pub records_interval: Duration,
    /// How long a deploy that has just requested a certificate waits for it to be issued, and
    /// how often it asks meanwhile.
    pub issue_wait: Duration,
    pub issue_interval: Duration,
    /// When a deploy whose certificate is still pending is queued again.
    pub requeue: Duration,
    /// A certificate still not issued this long after its request is requested anew.
    pub reissue_after: Duration,
    /// How long ListTagsForCertificate answers are trusted (upstream's 1 minute).
    pub tags_ttl: Duration,
    /// How long the account's hosted zones are trusted (upstream's 5 minutes); a name without
    /// a zone reads them again first.
    pub zones_ttl: Duration,
}

impl Default for CertificateTiming {
    fn default() -> Self {
        Self {
            records_wait: Duration::from_secs(30),
            records_interval: Duration::from_secs(5),
            issue_wait: Duration::from_secs(30),
            issue_interval: Duration::from_secs(5),
            requeue: Duration::from_secs(30),
            reissue_after: Duration::from_secs(30 * 60),
            tags_ttl: Duration::from_secs(60),
            zones_ttl: Duration::from_secs(5 * 60),
        }
    }
}

impl CertificateTiming {
    /// Nothing waited for (`diff`, whose pretended certificates are issued at once): one look
    /// at each certificate, then the deploy stops if one is pending.
    pub fn no_wait() -> Self {
        Self {
            records_wait: Duration::ZERO,
            records_interval: Duration::from_millis(1),
            issue_wait: Duration::ZERO,
            issue_interval: Duration::from_millis(1),
            ..Self::default()
        }
    }
}

/// The ACM and Route 53 clients of the certificate step, with its caches. Share one per
/// controller (`Arc`): the caches are in it.
pub struct Certificates {
    acm: Arc<dyn Acm>,
    route53: Arc<dyn Route53>,
    timing: CertificateTiming,
    tags: TagCache,
    zones: tokio::sync::Mutex<Option<(tokio::time::Instant, Vec<HostedZone>)>>,
}

impl std::fmt::Debug for Certificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Certificates")
            .field("timing", &self.timing)
            .finish_non_exhaustive()
    }
}

impl Certificates {
    pub fn new(acm: Arc<dyn Acm>, route53: Arc<dyn Route53>) -> Self {
        let timing = CertificateTiming::default();
        Self {
            acm,
            route53,
            tags: TagCache::new(timing.tags_ttl, TAG_CACHE_MAX_ENTRIES),
            timing,
            zones: tokio::sync::Mutex::new(None),
        }
    }

    pub fn with_timing(mut self, timing: CertificateTiming) -> Self {
        self.tags = TagCache::new(timing.tags_ttl, TAG_CACHE_MAX_ENTRIES);
        self.timing = timing;
        self
    }

    pub fn timing(&self) -> CertificateTiming {
        self.timing
    }

    /// The account's hosted zones, from the cache unless `fresh`.
    async fn zones(&self, fresh: bool) -> Result<Vec<HostedZone>> {
        let mut cached = self.zones.lock().await;
        if let Some((at, zones)) = &*cached {
            if !fresh && at.elapsed() < self.timing.zones_ttl {
                return Ok(zones.clone());
            }
        }
        let zones = self
            .route53
            .list_hosted_zones()
            .await
            .ctx(|| "list Route 53 hosted zones".into())?;
        *cached = Some((tokio::time::Instant::now(), zones.clone()));
        Ok(zones)
    }

    /// The zone of `domain`; the zones are read again once before a domain is found to have
    /// none (one may have been added since they were cached).
    async fn zone_of(&self, domain: &str) -> Result<Option<HostedZone>> {
        if let Some(z) = zone_for(&self.zones(false).await?, domain) {
            return Ok(Some(z.clone()));
        }
        Ok(zone_for(&self.zones(true).await?, domain).cloned())
    }

    /// A certificate's tags, from the cache or ListTagsForCertificate; `None`: it is gone.
    async fn tags_of(&self, arn: &str) -> Result<Option<Tags>> {
        if let Some(t) = self.tags.get(arn) {
            return Ok(Some(t));
        }
        match self.acm.list_tags_for_certificate(arn).await {
            Ok(t) => {
                self.tags.put(arn, t.clone());
                Ok(Some(t))
            }
            Err(e) if e.is_not_found() => Ok(None),
            Err(source) => Err(Error::Aws {
                what: format!("list tags of certificate {arn}"),
                source,
            }),
        }
    }

    /// A certificate as DescribeCertificate tells it; `None`: it is gone.
    async fn describe(&self, arn: &str) -> Result<Option<CertificateDetail>> {
        match self.acm.describe_certificate(arn).await {
            Ok(d) => Ok(Some(d)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(source) => Err(Error::Aws {
                what: format!("describe certificate {arn}"),
                source,
            }),
        }
    }

    /// Every certificate of the account, and those of the stack `stack_id` (upstream's tag
    /// filters: cluster, or legacy cluster, and stack).
    async fn find(
        &self,
        cluster: &str,
        stack_id: &str,
    ) -> Result<(Vec<OwnedCertificate>, Vec<CertificateSummary>)> {
        // Every key type: a certificate of another key algorithm still names its domain.
        let q = CertificateQuery {
            statuses: Vec::new(),
            key_types: KEY_ALGORITHMS.iter().map(|k| k.to_string()).collect(),
        };
        let all = self
            .acm
            .list_certificates(&q)
            .await
            .ctx(|| "list ACM certificates".into())?;
        let mut owned = Vec::new();
        for c in &all {
            let Some(found) = self.tags_of(&c.arn).await? else {
                continue;
            };
            if !tags::is_owned(&found, cluster, StackKind::Ingress, stack_id) {
                continue;
            }
            let Some(id) = tags::resource_id(&found, StackKind::Ingress).map(String::from) else {
                return Err(Error::Invalid(format!(
                    "unexpected certificate with no resourceID: {}",
                    c.arn
                )));
            };
            let Some(detail) = self.describe(&c.arn).await? else {
                continue;
            };
            owned.push(OwnedCertificate {
                arn: c.arn.clone(),
                resource_id: id,
                tags: found,
                detail,
            });
        }
        Ok((owned, all))
    }
}

/// One certificate of the stack found in ACM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedCertificate {
    pub arn: String,
    /// Its `ingress.k8s.aws/resource` tag: the model certificate it is for.
    pub resource_id: String,
    pub tags: Tags,
    pub detail: CertificateDetail,
}

/// How the stack's certificates pair with those found in ACM (upstream's
/// `matchResAndSDKCertificates`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pairing<'m> {
    /// A model certificate and the certificate in ACM that serves it.
    pub matched: Vec<(&'m model::Certificate, OwnedCertificate)>,
    /// Model certificates to request.
    pub create: Vec<&'m model::Certificate>,
    /// Certificates of the stack no model certificate keeps: deleted after the listeners.
    pub leftovers: Vec<OwnedCertificate>,
}

/// Upstream's test, and a private CA's: a certificate whose names are not the model's (as a
/// set) is replaced, and so is a private one issued by another CA (so a new `--default-pca-arn`
/// reissues them, as upstream's docs promise). The type and the domain name are in the resource
/// id: a change there is another certificate.
pub fn requires_replacement(have: &CertificateDetail, want: &model::Certificate) -> bool {
    let have_names: BTreeSet<&String> = have.subject_alternative_names.iter().collect();
    let want_names: BTreeSet<&String> = want.subject_alternative_names.iter().collect();
    if have_names != want_names {
        return true;
    }
    want.cert_type == CertificateType::Private
        && have.certificate_authority_arn != want.certificate_authority_arn
}

/// Pairs by resource id. Several fitting one model certificate (a request repeated after a
/// crash): the issued one, else the oldest, serves and the others go.
pub fn pair(want: &[model::Certificate], owned: Vec<OwnedCertificate>) -> Pairing<'_> {
    let mut by_id: BTreeMap<String, Vec<OwnedCertificate>> = BTreeMap::new();
    for o in owned {
        by_id.entry(o.resource_id.clone()).or_default().push(o);
    }
    let mut out = Pairing::default();
    for w in want {
        let found = by_id.remove(&w.id).unwrap_or_default();
        let (mut fit, misfit): (Vec<_>, Vec<_>) = found
            .into_iter()
            .partition(|o| !requires_replacement(&o.detail, w));
        out.leftovers.extend(misfit);
        fit.sort_by_key(|o| {
            let not_issued = o.detail.status != ISSUED;
            (
                not_issued,
                o.detail.created_at.unwrap_or(i64::MAX),
                o.arn.clone(),
            )
        });
        let mut fit = fit.into_iter();
        match fit.next() {
            Some(o) => out.matched.push((w, o)),
            None => out.create.push(w),
        }
        out.leftovers.extend(fit);
    }
    out.leftovers.extend(by_id.into_values().flatten());
    out
}

/// What the certificate step leaves to the cleanup, which runs after the listeners.
#[derive(Debug, Default)]
pub(super) struct CertificateLeftovers {
    pub certificates: Vec<OwnedCertificate>,
    /// Domains (without a leading `*.`) another certificate of the account still names: their
    /// validation records stay.
    pub domains_in_use: BTreeSet<String>,
}

/// A name as its validation record covers it: `*.x` and `x` share one.
fn validation_domain(name: &str) -> String {
    name.strip_prefix("*.").unwrap_or(name).to_string()
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

impl Deployer {
    /// The certificate step (see the module docs): every model certificate requested or found,
    /// its ARN in `res`; what the cleanup deletes is returned. Stops with [`Error::NotReady`]
    /// while one is pending validation.
    pub(super) async fn sync_certificates(
        &self,
        stack: &Stack,
        res: &mut Resolved,
    ) -> Result<CertificateLeftovers> {
        let Some(certs) = self.certificates.clone() else {
            if let Some(c) = stack.certificates.first() {
                return Err(Error::Unsupported(format!(
                    "ACM certificate {} of ingress {} (create-acm-cert): the deployer has no ACM and Route 53 clients",
                    c.id, c.ingress
                )));
            }
            return Ok(CertificateLeftovers::default());
        };
        // Only Ingress stacks have certificates (and tags `ingress.k8s.aws/*`).
        if stack.kind != StackKind::Ingress {
            return Ok(CertificateLeftovers::default());
        }
        let (owned, all) = certs.find(&self.cluster, &stack.stack_id).await?;
        let mut pairing = pair(&stack.certificates, owned);
        let now = now_secs();
        let reissue = certs.timing.reissue_after.as_secs() as i64;
        // Not issued long after its request: requested anew (the old one serves nothing yet).
        let mut stale = Vec::new();
        let mut matched = Vec::new();
        for (w, o) in std::mem::take(&mut pairing.matched) {
            let old = o.detail.created_at.is_some_and(|at| at + reissue < now);
            if o.detail.status != ISSUED && old {
                tracing::info!(certificate_arn = %o.arn, status = %o.detail.status, resource_id = %w.id, "certificate not issued in time: requesting it anew");
                stale.push(o);
                pairing.create.push(w);
            } else {
                matched.push((w, o));
            }
        }
        // Names still named by a certificate that stays: the stack's own, and every other of
        // the account.
        let going: BTreeSet<&str> = pairing
            .leftovers
            .iter()
            .chain(&stale)
            .map(|o| o.arn.as_str())
            .collect();
        let mut domains_in_use: BTreeSet<String> = stack
            .certificates
            .iter()
            .flat_map(|c| &c.subject_alternative_names)
            .map(|n| validation_domain(n))
            .collect();
        for c in all.iter().filter(|c| !going.contains(c.arn.as_str())) {
            domains_in_use.insert(validation_domain(&c.domain_name));
            domains_in_use.extend(
                c.subject_alternative_names
                    .iter()
                    .map(|n| validation_domain(n)),
            );
        }
        // Every zone looked up before the first write of the step.
        let mut zones: BTreeMap<String, HostedZone> = BTreeMap::new();
        for w in pairing.create.iter().copied() {
            if w.cert_type != CertificateType::AmazonIssued {
                continue;
            }
            for host in std::iter::once(&w.domain_name).chain(&w.subject_alternative_names) {
                if zones.contains_key(host) {
                    continue;
                }
                match certs.zone_of(host).await? {
                    Some(z) => {
                        zones.insert(host.clone(), z);
                    }
                    None => {
                        return Err(Error::Invalid(format!(
                            "pre-check failed for domain {host:?}: no hosted zone found for validation records"
                        )))
                    }
                }
            }
        }
        for o in &stale {
            self.delete_certificate(&certs, o, &domains_in_use).await?;
        }
        let mut pending: Vec<(&model::Certificate, String)> = Vec::new();
        for w in pairing.create.iter().copied() {
            let arn = self.request_certificate(&certs, w, &zones).await?;
            res.certificate_arns.insert(w.id.clone(), arn.clone());
            pending.push((w, arn));
        }
        for (w, o) in &matched {
            self.sync_certificate_tags(&certs, w, o).await?;
            res.certificate_arns.insert(w.id.clone(), o.arn.clone());
            if o.detail.status != ISSUED {
                pending.push((*w, o.arn.clone()));
            }
        }
        // Only a certificate just requested is waited for (a private CA issues in seconds); one
        // requested by an earlier pass is looked at once, so a pending group does not hold a
        // worker on every requeue.
        let wait = if pairing.create.is_empty() {
            Duration::ZERO
        } else {
            certs.timing.issue_wait
        };
        self.wait_issued(&certs, pending, wait).await?;
        Ok(CertificateLeftovers {
            certificates: pairing.leftovers,
            domains_in_use,
        })
    }

    /// Requests one certificate and, Amazon-issued, writes its validation records into the
    /// zones found by the pre-check; returns its ARN.
    async fn request_certificate(
        &self,
        certs: &Certificates,
        w: &model::Certificate,
        zones: &BTreeMap<String, HostedZone>,
    ) -> Result<String> {
        let private = w.cert_type == CertificateType::Private;
        let req = CertificateRequest {
            domain_name: w.domain_name.clone(),
            subject_alternative_names: w.subject_alternative_names.clone(),
            validation_method: Some(w.validation_method.clone()).filter(|m| !m.is_empty()),
            certificate_authority_arn: w.certificate_authority_arn.clone().filter(|_| private),
            key_algorithm: w.key_algorithm.clone(),
            tags: w.tags.clone(),
        };
        tracing::info!(resource_id = %w.id, ingress = %w.ingress, "requesting certificate");
        let arn =
            match certs.acm.request_certificate(&req).await {
                Ok(arn) => arn,
                Err(source @ AwsError::LimitExceeded { .. }) => return Err(Error::Aws {
                    what:
                        "ACM certificate request failed: too many Subject Alternative Names (SANs)"
                            .into(),
                    source,
                }),
                Err(source) => {
                    return Err(Error::Aws {
                        what: format!("request certificate {} for ingress {}", w.id, w.ingress),
                        source,
                    })
                }
            };
        certs.tags.put(&arn, req.tags.clone());
        tracing::info!(resource_id = %w.id, certificate_arn = %arn, "requested certificate");
        if w.cert_type == CertificateType::AmazonIssued {
            self.create_validation_records(certs, &arn, zones).await?;
        }
        Ok(arn)
    }

    /// Describes a new certificate until ACM has made up every DNS validation record (a few
    /// seconds after the request), then writes each record once into its zone. A record that
    /// exists already (another certificate validates the same name) is left as it is.
    async fn create_validation_records(
        &self,
        certs: &Certificates,
        arn: &str,
        zones: &BTreeMap<String, HostedZone>,
    ) -> Result<()> {
        let t = certs.timing;
        let deadline = tokio::time::Instant::now() + t.records_wait;
        let detail = loop {
            let d = certs.describe(arn).await?.ok_or_else(|| {
                Error::Invalid(format!("certificate {arn} disappeared after its request"))
            })?;
            let ready = !d.domain_validation.is_empty()
                && d.domain_validation
                    .iter()
                    .filter(|v| v.validation_method == model::VALIDATION_METHOD_DNS)
                    .all(|v| v.resource_record.is_some());
            if ready {
                break d;
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::Invalid(format!(
                    "failed to find validation records for AMAZON_ISSUED certificate {arn}: no validation records found"
                )));
            }
            tokio::time::sleep(t.records_interval).await;
        };
        let mut written = BTreeSet::new();
        for v in &detail.domain_validation {
            let Some(r) = v
                .resource_record
                .as_ref()
                .filter(|_| v.validation_method == model::VALIDATION_METHOD_DNS)
            else {
                continue;
            };
            let zone = match zones.get(&v.domain_name) {
                Some(z) => z.clone(),
                None => certs.zone_of(&v.domain_name).await?.ok_or_else(|| {
                    Error::Invalid(format!(
                        "no hosted zone found for validation records of {:?}",
                        v.domain_name
                    ))
                })?,
            };
            if !written.insert((zone.id.clone(), r.clone())) {
                continue;
            }
            let change = RecordChange {
                action: RecordAction::Create,
                name: r.name.clone(),
                record_type: r.record_type.clone(),
                ttl: VALIDATION_RECORD_TTL,
                value: r.value.clone(),
            };
            match certs
                .route53
                .change_resource_record_sets(&zone.id, std::slice::from_ref(&change))
                .await
            {
                Ok(()) => {
                    tracing::info!(certificate_arn = %arn, record = %r.name, "created validation record")
                }
                Err(e) if e.message().contains("already exists") => {
                    tracing::info!(certificate_arn = %arn, record = %r.name, "validation record already exists, skipping creation")
                }
                Err(source) => {
                    return Err(Error::Aws {
                        what: format!("create validation record {} of certificate {arn}", r.name),
                        source,
                    })
                }
            }
        }
        Ok(())
    }

    /// Tags added or changed on the model reach a certificate in ACM; removed keys stay
    /// (upstream's IAM policy grants no RemoveTagsFromCertificate).
    async fn sync_certificate_tags(
        &self,
        certs: &Certificates,
        w: &model::Certificate,
        o: &OwnedCertificate,
    ) -> Result<()> {
        let add = tags::diff(&w.tags, &o.tags, &self.tag_policy()).add;
        if add.is_empty() {
            return Ok(());
        }
        certs
            .acm
            .add_tags_to_certificate(&o.arn, &add)
            .await
            .ctx(|| format!("add tags to certificate {}", o.arn))?;
        let mut now = o.tags.clone();
        now.extend(add);
        certs.tags.put(&o.arn, now);
        Ok(())
    }

    /// Waits (at most `wait` in all) for the `pending` certificates to be issued. One that
    /// failed is an error naming its status; one still validating stops the deploy with
    /// [`Error::NotReady`].
    async fn wait_issued(
        &self,
        certs: &Certificates,
        mut pending: Vec<(&model::Certificate, String)>,
        wait: Duration,
    ) -> Result<()> {
        let t = certs.timing;
        let deadline = tokio::time::Instant::now() + wait;
        let mut last: Vec<(String, String, String)> = Vec::new();
        loop {
            last.clear();
            let mut still = Vec::new();
            for (w, arn) in pending {
                let d = certs.describe(&arn).await?.ok_or_else(|| {
                    Error::Invalid(format!(
                        "certificate {arn} of ingress {} is gone",
                        w.ingress
                    ))
                })?;
                if d.status == ISSUED {
                    continue;
                }
                if d.status != PENDING {
                    let why = d
                        .failure_reason
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default();
                    return Err(Error::Invalid(format!(
                        "ACM certificate {arn} of ingress {} is {}{why}; it is requested anew {} min after its request",
                        w.ingress,
                        d.status,
                        t.reissue_after.as_secs() / 60
                    )));
                }
                last.push((arn.clone(), w.ingress.clone(), w.domain_name.clone()));
                still.push((w, arn));
            }
            if still.is_empty() {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                let (arn, ingress, domain) = &last[0];
                return Err(Error::NotReady {
                    reason: format!(
                        "ACM certificate {arn} ({domain}) of ingress {ingress} is pending validation ({} of the stack's certificates pending)",
                        last.len()
                    ),
                    retry_after: t.requeue,
                });
            }
            tokio::time::sleep(t.issue_interval).await;
            pending = still;
        }
    }

    /// Deletes a certificate of the stack: its validation records first (those of domains no
    /// other certificate names), then the certificate, retried while a load balancer still
    /// holds it.
    async fn delete_certificate(
        &self,
        certs: &Certificates,
        o: &OwnedCertificate,
        domains_in_use: &BTreeSet<String>,
    ) -> Result<()> {
        if o.detail.cert_type == CertificateType::AmazonIssued.as_str() {
            self.delete_validation_records(certs, o, domains_in_use)
                .await?;
        }
        tracing::info!(certificate_arn = %o.arn, "deleting certificate");
        let deadline = tokio::time::Instant::now() + self.delete_timeout;
        loop {
            match certs.acm.delete_certificate(&o.arn).await {
                Ok(()) => break,
                Err(e) if e.is_not_found() => break,
                Err(source @ AwsError::InUse { .. }) => {
                    if tokio::time::Instant::now() >= deadline {
                        return Err(Error::DeleteTimeout {
                            what: format!(
                                "certificate {} (waited for the load balancer to release it)",
                                o.arn
                            ),
                            source,
                        });
                    }
                    tokio::time::sleep(self.delete_interval).await;
                }
                Err(source) => {
                    return Err(Error::Aws {
                        what: format!("delete certificate {}", o.arn),
                        source,
                    })
                }
            }
        }
        certs.tags.forget(&o.arn);
        tracing::info!(certificate_arn = %o.arn, "deleted certificate");
        Ok(())
    }

    async fn delete_validation_records(
        &self,
        certs: &Certificates,
        o: &OwnedCertificate,
        domains_in_use: &BTreeSet<String>,
    ) -> Result<()> {
        let mut deleted = BTreeSet::new();
        for v in &o.detail.domain_validation {
            let Some(r) = v
                .resource_record
                .as_ref()
                .filter(|_| v.validation_method == model::VALIDATION_METHOD_DNS)
            else {
                continue;
            };
            if domains_in_use.contains(&validation_domain(&v.domain_name)) {
                tracing::info!(certificate_arn = %o.arn, record = %r.name, "validation record still validates another certificate, keeping it");
                continue;
            }
            let Some(zone) = certs.zone_of(&v.domain_name).await? else {
                tracing::info!(domain = %v.domain_name, "no hosted zone found for domain, skipping validation record cleanup");
                continue;
            };
            if !deleted.insert((zone.id.clone(), r.clone())) {
                continue;
            }
            let change = RecordChange {
                action: RecordAction::Delete,
                name: r.name.clone(),
                record_type: r.record_type.clone(),
                ttl: VALIDATION_RECORD_TTL,
                value: r.value.clone(),
            };
            match certs
                .route53
                .change_resource_record_sets(&zone.id, std::slice::from_ref(&change))
                .await
            {
                Ok(()) => {}
                Err(e) if e.message().contains("not found") => {
                    tracing::info!(record = %r.name, "validation record no longer found, ignoring")
                }
                Err(e) if e.message().contains("do not match the current values") => {
                    tracing::info!(record = %r.name, "validation record reused for another certificate, ignoring")
                }
                Err(source) => {
                    return Err(Error::Aws {
                        what: format!(
                            "delete validation record {} of certificate {}",
                            r.name, o.arn
                        ),
                        source,
                    })
                }
            }
        }
        Ok(())
    }

    /// The cleanup's share (after the listeners and load balancers): the stack's certificates
    /// no model certificate keeps.
    pub(super) async fn delete_certificates(&self, left: &CertificateLeftovers) -> Result<()> {
        let Some(certs) = self.certificates.clone() else {
            return Ok(());
        };
        for o in &left.certificates {
            self.delete_certificate(&certs, o, &left.domains_in_use)
                .await?;
        }
        Ok(())
    }
}

/// The stack's listeners with each member's created certificate resolved to its ARN and the
/// members' certificates merged in upstream's order. A listener whose members' certificates are
/// still to be discovered is left as it is, for [`super::listener::resolve`] to refuse.
pub(super) fn listeners_with_certificates(
    stack: &Stack,
    res: &Resolved,
) -> Result<Vec<model::Listener>> {
    stack
        .listeners
        .iter()
        .map(|l| {
            if l.certificate_discovery.is_empty() {
                return Ok(l.clone());
            }
            let Some(tokens) = stack.listener_certificate_tokens(l) else {
                return Ok(l.clone());
            };
            let certificates = tokens
                .iter()
                .map(|t| res.token(t))
                .collect::<Result<Vec<String>>>()?;
            Ok(model::Listener {
                certificates,
                certificate_discovery: Vec::new(),
                ..l.clone()
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "certificate_tests.rs"]
mod tests;
