//! `Acm` over aws-sdk-acm (requests through the [`Caller`]: throttle, retries, metrics under
//! the service ID `ACM`, and the leader fence before every write), and the construction of its
//! client from the `--aws-*` flags (the `acm` entry of `--aws-api-endpoints` sends it
//! elsewhere, e.g. to moto).

use std::sync::Arc;

use async_trait::async_trait;
use aws_config::retry::RetryConfig;
use aws_config::{BehaviorVersion, Region};
use aws_sdk_acm::types::{CertificateStatus, Filters, KeyAlgorithm, Tag, ValidationMethod};

use super::{non_empty, os, s, send};
use crate::aws::acm::{
    Acm, CertificateDetail, CertificateQuery, CertificateRequest, CertificateSummary,
    DomainValidation, ValidationRecord,
};
use crate::aws::caller::Caller;
use crate::aws::config::{endpoint_for, AwsConfig};
use crate::aws::error::{AwsError, Result};
use crate::aws::fence::Fence;
use crate::aws::metrics::AwsMetrics;
use crate::aws::types::{Service, Tags};

const SVC: Service = Service::Acm;

/// ACM over the AWS SDK.
#[derive(Debug, Clone)]
pub struct SdkAcm {
    client: aws_sdk_acm::Client,
    caller: Caller,
}

impl SdkAcm {
    pub fn new(client: aws_sdk_acm::Client, caller: Caller) -> Self {
        Self { client, caller }
    }
}

/// The ACM client of the controller in `region` (as resolved with the ELBv2/EC2 clients):
/// credentials from the default chain, SDK retries off (ours run in the caller), the endpoint
/// from `--aws-api-endpoints` when given. Its writes are not fenced: for readers (certificate
/// discovery, `diff`); the controller's is [`build_acm_fenced`].
pub async fn build_acm(cfg: &AwsConfig, region: &str, metrics: Option<AwsMetrics>) -> Arc<dyn Acm> {
    build_acm_fenced(cfg, region, metrics, Fence::default()).await
}

/// [`build_acm`] with every write (certificates created for Ingresses) gated by the leader's
/// `fence`.
pub async fn build_acm_fenced(
    cfg: &AwsConfig,
    region: &str,
    metrics: Option<AwsMetrics>,
    fence: Fence,
) -> Arc<dyn Acm> {
    let caller = Caller::from_flags(&cfg.api_throttle, cfg.max_retries, metrics).with_fence(fence);
    let sdk = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(region.to_string()))
        .retry_config(RetryConfig::disabled())
        .load()
        .await;
    let mut conf = aws_sdk_acm::config::Builder::from(&sdk);
    if let Some(url) = endpoint_for(&cfg.api_endpoints, SVC) {
        conf = conf.endpoint_url(url);
    }
    Arc::new(SdkAcm::new(
        aws_sdk_acm::Client::from_conf(conf.build()),
        caller,
    ))
}

fn filters(q: &CertificateQuery) -> Option<Filters> {
    if q.key_types.is_empty() {
        return None;
    }
    let key_types = q.key_types.iter().map(|k| KeyAlgorithm::from(k.as_str()));
    Some(
        Filters::builder()
            .set_key_types(Some(key_types.collect()))
            .build(),
    )
}

#[async_trait]
impl Acm for SdkAcm {
    async fn list_certificates(&self, q: &CertificateQuery) -> Result<Vec<CertificateSummary>> {
        let statuses: Option<Vec<CertificateStatus>> = (!q.statuses.is_empty()).then(|| {
            q.statuses
                .iter()
                .map(|v| CertificateStatus::from(v.as_str()))
                .collect()
        });
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let page = send(&self.caller, SVC, "ListCertificates", || {
                self.client
                    .list_certificates()
                    .set_certificate_statuses(statuses.clone())
                    .set_includes(filters(q))
                    .set_next_token(token.clone())
                    .send()
            })
            .await?;
            out.extend(
                page.certificate_summary_list()
                    .iter()
                    .map(|c| CertificateSummary {
                        arn: s(c.certificate_arn()),
                        domain_name: s(c.domain_name()),
                        status: s(c.status().map(|v| v.as_str())),
                        key_algorithm: s(c.key_algorithm().map(|v| v.as_str())),
                        subject_alternative_names: c.subject_alternative_name_summaries().to_vec(),
                    }),
            );
            match page.next_token() {
                Some(t) if !t.is_empty() => token = Some(t.to_string()),
                _ => return Ok(out),
            }
        }
    }

    async fn describe_certificate(&self, arn: &str) -> Result<CertificateDetail> {
        let out = send(&self.caller, SVC, "DescribeCertificate", || {
            self.client
                .describe_certificate()
                .certificate_arn(arn)
                .send()
        })
        .await?;
        let Some(c) = out.certificate() else {
            return Ok(CertificateDetail {
                arn: arn.to_string(),
                ..Default::default()
            });
        };
        Ok(CertificateDetail {
            arn: s(c.certificate_arn()),
            domain_name: s(c.domain_name()),
            subject_alternative_names: c.subject_alternative_names().to_vec(),
            status: s(c.status().map(|v| v.as_str())),
            cert_type: s(c.r#type().map(|v| v.as_str())),
            certificate_authority_arn: os(c.certificate_authority_arn()),
            created_at: c.created_at().map(|t| t.secs()),
            failure_reason: c.failure_reason().map(|r| r.as_str().to_string()),
            domain_validation: c
                .domain_validation_options()
                .iter()
                .map(|v| DomainValidation {
                    domain_name: v.domain_name().to_string(),
                    validation_method: s(v.validation_method().map(|m| m.as_str())),
                    resource_record: v.resource_record().map(|r| ValidationRecord {
                        name: r.name().to_string(),
                        record_type: r.r#type().as_str().to_string(),
                        value: r.value().to_string(),
                    }),
                })
                .collect(),
        })
    }

    async fn list_tags_for_certificate(&self, arn: &str) -> Result<Tags> {
        let out = send(&self.caller, SVC, "ListTagsForCertificate", || {
            self.client
                .list_tags_for_certificate()
                .certificate_arn(arn)
                .send()
        })
        .await?;
        Ok(out
            .tags()
            .iter()
            .map(|t| (t.key().to_string(), s(t.value())))
            .collect())
    }

    async fn request_certificate(&self, req: &CertificateRequest) -> Result<String> {
        let tags = sdk_tags(&req.tags)?;
        let out = send(&self.caller, SVC, "RequestCertificate", || {
            self.client
                .request_certificate()
                .domain_name(&req.domain_name)
                .set_subject_alternative_names(non_empty(&req.subject_alternative_names))
                .set_validation_method(req.validation_method.as_deref().map(ValidationMethod::from))
                .set_certificate_authority_arn(req.certificate_authority_arn.clone())
                .set_key_algorithm(req.key_algorithm.as_deref().map(KeyAlgorithm::from))
                .set_tags(tags.clone())
                .send()
        })
        .await?;
        Ok(s(out.certificate_arn()))
    }

    async fn delete_certificate(&self, arn: &str) -> Result<()> {
        send(&self.caller, SVC, "DeleteCertificate", || {
            self.client.delete_certificate().certificate_arn(arn).send()
        })
        .await?;
        Ok(())
    }

    async fn add_tags_to_certificate(&self, arn: &str, tags: &Tags) -> Result<()> {
        let tags = sdk_tags(tags)?;
        send(&self.caller, SVC, "AddTagsToCertificate", || {
            self.client
                .add_tags_to_certificate()
                .certificate_arn(arn)
                .set_tags(tags.clone())
                .send()
        })
        .await?;
        Ok(())
    }
}

/// Tags as ACM takes them, sorted by key; `None` for none (the parameter is left out).
fn sdk_tags(tags: &Tags) -> Result<Option<Vec<Tag>>> {
    if tags.is_empty() {
        return Ok(None);
    }
    tags.iter()
        .map(|(k, v)| {
            Tag::builder()
                .key(k)
                .value(v)
                .build()
                .map_err(|e| AwsError::Validation {
                    code: "ConstructionFailure".into(),
                    message: e.to_string(),
                })
        })
        .collect::<Result<Vec<Tag>>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use crate::aws::acm::KEY_ALGORITHMS;

    /// Upstream passes every value of the SDK's key algorithm enum; ours is the same list.
    #[test]
    fn key_algorithms_are_every_sdk_value() {
        assert_eq!(
            KEY_ALGORITHMS.as_slice(),
            aws_sdk_acm::types::KeyAlgorithm::values()
        );
    }
}
