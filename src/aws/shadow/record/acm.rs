//! ACM and Route 53 through the recorder: reads forwarded; certificate requests, tags and
//! deletes and DNS record changes recorded, never sent. A certificate the recorder pretended to
//! request is described from what was recorded, and as issued, with made-up validation records:
//! so a dry run shows every write the deploy makes once ACM has issued it (its validation
//! records, the listener that serves it), not only the request.

use async_trait::async_trait;

use super::*;
use crate::aws::acm::{
    CertificateDetail, CertificateQuery, CertificateRequest, CertificateSummary, DomainValidation,
    ValidationRecord,
};
use crate::aws::route53::{HostedZone, RecordChange};

/// The real ACM and Route 53 clients behind the recorder, and the certificates it pretended to
/// request, by placeholder ARN.
#[derive(Default)]
pub(super) struct CertSide {
    acm: Option<Arc<dyn Acm>>,
    route53: Option<Arc<dyn Route53>>,
    pretended: Mutex<BTreeMap<String, CertificateRequest>>,
}

impl Recorder {
    /// The real ACM and Route 53 clients reads go to.
    pub fn with_certificates(mut self, acm: Arc<dyn Acm>, route53: Arc<dyn Route53>) -> Self {
        self.certs.acm = Some(acm);
        self.certs.route53 = Some(route53);
        self
    }

    fn real_acm(&self) -> Result<&Arc<dyn Acm>> {
        self.certs
            .acm
            .as_ref()
            .ok_or_else(|| AwsError::Config("no ACM client behind the recorder".into()))
    }

    fn real_route53(&self) -> Result<&Arc<dyn Route53>> {
        self.certs
            .route53
            .as_ref()
            .ok_or_else(|| AwsError::Config("no Route 53 client behind the recorder".into()))
    }

    fn pretended(&self, arn: &str) -> Option<CertificateRequest> {
        self.certs.pretended.lock().unwrap().get(arn).cloned()
    }
}

/// The names a request covers: the domain name first, then the others once each.
fn names(req: &CertificateRequest) -> Vec<String> {
    let mut out = vec![req.domain_name.clone()];
    for n in &req.subject_alternative_names {
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
    out
}

#[async_trait]
impl Acm for Recorder {
    async fn list_certificates(&self, q: &CertificateQuery) -> Result<Vec<CertificateSummary>> {
        self.real_acm()?.list_certificates(q).await
    }
    async fn describe_certificate(&self, arn: &str) -> Result<CertificateDetail> {
        let Some(req) = self.pretended(arn) else {
            return self.real_acm()?.describe_certificate(arn).await;
        };
        let names = names(&req);
        let private = req.certificate_authority_arn.is_some();
        let dns = !private && req.validation_method.as_deref() == Some("DNS");
        let domain_validation = match dns {
            true => names
                .iter()
                .map(|n| {
                    let base = n.strip_prefix("*.").unwrap_or(n);
                    DomainValidation {
                        domain_name: n.clone(),
                        validation_method: "DNS".into(),
                        resource_record: Some(ValidationRecord {
                            name: format!("_{PENDING}validation.{base}."),
                            record_type: "CNAME".into(),
                            value: format!("_{PENDING}validation.acm-validations.aws."),
                        }),
                    }
                })
                .collect(),
            false => Vec::new(),
        };
        Ok(CertificateDetail {
            arn: arn.to_string(),
            domain_name: req.domain_name.clone(),
            subject_alternative_names: names,
            status: "ISSUED".into(),
            cert_type: if private { "PRIVATE" } else { "AMAZON_ISSUED" }.into(),
            certificate_authority_arn: req.certificate_authority_arn.clone(),
            created_at: None,
            failure_reason: None,
            domain_validation,
        })
    }
    async fn list_tags_for_certificate(&self, arn: &str) -> Result<Tags> {
        match self.pretended(arn) {
            Some(req) => Ok(req.tags),
            None => self.real_acm()?.list_tags_for_certificate(arn).await,
        }
    }
    async fn request_certificate(&self, req: &CertificateRequest) -> Result<String> {
        let arn = self.placeholder("arn:aws:acm:::certificate/");
        let mut changes = created(&[
            ("domainName", &req.domain_name),
            ("subjectAlternativeNames", &req.subject_alternative_names),
        ]);
        if let Some(ca) = &req.certificate_authority_arn {
            changes.extend(created(&[("certificateAuthorityArn", ca)]));
        }
        if let Some(m) = &req.validation_method {
            changes.extend(created(&[("validationMethod", m)]));
        }
        changes.extend(created(&[("tags", &req.tags.iter().collect::<Vec<_>>())]));
        self.record("acm", "RequestCertificate", &arn, changes);
        self.certs
            .pretended
            .lock()
            .unwrap()
            .insert(arn.clone(), req.clone());
        Ok(arn)
    }
    async fn delete_certificate(&self, arn: &str) -> Result<()> {
        self.record("acm", "DeleteCertificate", arn, vec![]);
        Ok(())
    }
    async fn add_tags_to_certificate(&self, arn: &str, tags: &Tags) -> Result<()> {
        let changes = tags
            .iter()
            .map(|(k, v)| Change {
                field: format!("tags.{k}"),
                before: None,
                after: Some(v.clone()),
            })
            .collect();
        self.record("acm", "AddTagsToCertificate", arn, changes);
        Ok(())
    }
}

#[async_trait]
impl Route53 for Recorder {
    async fn list_hosted_zones(&self) -> Result<Vec<HostedZone>> {
        self.real_route53()?.list_hosted_zones().await
    }
    async fn change_resource_record_sets(
        &self,
        zone_id: &str,
        changes: &[RecordChange],
    ) -> Result<()> {
        let record = |c: &RecordChange| format!("{} {} {}", c.record_type, c.ttl, c.value);
        let changes = changes
            .iter()
            .map(|c| {
                let field = format!("{} {}", c.name, c.record_type);
                match c.action {
                    crate::aws::route53::RecordAction::Create => Change {
                        field,
                        before: None,
                        after: Some(record(c)),
                    },
                    crate::aws::route53::RecordAction::Delete => Change {
                        field,
                        before: Some(record(c)),
                        after: None,
                    },
                }
            })
            .collect();
        self.record("route53", "ChangeResourceRecordSets", zone_id, changes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aws::fake::{FakeAcm, FakeAws, FakeRoute53};
    use crate::aws::route53::RecordAction;

    /// A dry run requests nothing: the request, the validation record and the delete are
    /// recorded (a placeholder ARN, described as issued with a made-up record, its tags as
    /// requested), and the real ACM and Route 53 are not written to.
    #[tokio::test]
    async fn certificate_writes_are_recorded_not_sent() {
        let elb = Arc::new(FakeAws::new());
        let acm = Arc::new(FakeAcm::new());
        let dns = Arc::new(FakeRoute53::new());
        let zone = dns.add_zone("example.com");
        let r = Recorder::new(elb.clone(), elb).with_certificates(acm.clone(), dns.clone());
        let req = CertificateRequest {
            domain_name: "a.example.com".into(),
            subject_alternative_names: vec!["a.example.com".into()],
            validation_method: Some("DNS".into()),
            tags: Tags::from([("k".to_string(), "v".to_string())]),
            ..Default::default()
        };
        let arn = Acm::request_certificate(&r, &req).await.unwrap();
        assert!(is_placeholder(&arn), "{arn}");
        let d = Acm::describe_certificate(&r, &arn).await.unwrap();
        assert_eq!(d.status, "ISSUED");
        assert_eq!(d.subject_alternative_names, ["a.example.com"]);
        let rec = d.domain_validation[0].resource_record.clone().unwrap();
        let change = RecordChange {
            action: RecordAction::Create,
            name: rec.name,
            record_type: rec.record_type,
            ttl: 60,
            value: rec.value,
        };
        Route53::change_resource_record_sets(&r, &zone, &[change])
            .await
            .unwrap();
        Acm::delete_certificate(&r, "arn:aws:acm:us-west-2:1:certificate/real")
            .await
            .unwrap();
        let tags = Acm::list_tags_for_certificate(&r, &arn).await.unwrap();
        assert_eq!(tags["k"], "v");
        let calls: Vec<String> = r.take().into_iter().map(|w| w.call).collect();
        assert_eq!(
            calls,
            [
                "acm:RequestCertificate",
                "route53:ChangeResourceRecordSets",
                "acm:DeleteCertificate"
            ]
        );
        assert!(acm.calls().is_empty(), "{:?}", acm.calls());
        assert!(dns.calls().is_empty(), "{:?}", dns.calls());
        assert!(dns.records(&zone).is_empty());
        // Reads of real certificates go to the real ACM.
        assert!(Acm::list_certificates(&r, &CertificateQuery::default())
            .await
            .unwrap()
            .is_empty());
        assert_eq!(acm.calls(), ["ListCertificates"]);
    }
}
