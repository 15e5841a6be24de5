//! `Route53` over aws-sdk-route53 (requests through the [`Caller`]: throttle, retries, metrics
//! under the service ID `Route 53`, the leader fence before every write), and its client built
//! from the `--aws-*` flags (`route53=` in `--aws-api-endpoints` sends it elsewhere, e.g. to
//! moto). Route 53 is global; the SDK signs for it whatever region the controller runs in.

use std::sync::Arc;

use async_trait::async_trait;
use aws_config::retry::RetryConfig;
use aws_config::{BehaviorVersion, Region};
use aws_sdk_route53::types::{
    Change, ChangeAction, ChangeBatch, ResourceRecord, ResourceRecordSet, RrType,
};

use super::send;
use crate::aws::caller::Caller;
use crate::aws::config::{endpoint_for, AwsConfig};
use crate::aws::error::{AwsError, Result};
use crate::aws::fence::Fence;
use crate::aws::metrics::AwsMetrics;
use crate::aws::route53::{HostedZone, RecordAction, RecordChange, Route53};
use crate::aws::types::Service;

const SVC: Service = Service::Route53;

/// Route 53 over the AWS SDK.
#[derive(Debug, Clone)]
pub struct SdkRoute53 {
    client: aws_sdk_route53::Client,
    caller: Caller,
}

impl SdkRoute53 {
    pub fn new(client: aws_sdk_route53::Client, caller: Caller) -> Self {
        Self { client, caller }
    }
}

/// The Route 53 client of the controller, built as the ACM one (credentials, retries in the
/// caller, `--aws-api-endpoints`), every write gated by `fence`.
pub async fn build_route53(
    cfg: &AwsConfig,
    region: &str,
    metrics: Option<AwsMetrics>,
    fence: Fence,
) -> Arc<dyn Route53> {
    let caller = Caller::from_flags(&cfg.api_throttle, cfg.max_retries, metrics).with_fence(fence);
    let sdk = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(region.to_string()))
        .retry_config(RetryConfig::disabled())
        .load()
        .await;
    let mut conf = aws_sdk_route53::config::Builder::from(&sdk);
    if let Some(url) = endpoint_for(&cfg.api_endpoints, SVC) {
        conf = conf.endpoint_url(url);
    }
    Arc::new(SdkRoute53::new(
        aws_sdk_route53::Client::from_conf(conf.build()),
        caller,
    ))
}

fn built<T>(
    r: std::result::Result<T, aws_smithy_types::error::operation::BuildError>,
) -> Result<T> {
    r.map_err(|e| AwsError::Validation {
        code: "ConstructionFailure".into(),
        message: e.to_string(),
    })
}

fn sdk_change(c: &RecordChange) -> Result<Change> {
    let record = built(ResourceRecord::builder().value(&c.value).build())?;
    let set = built(
        ResourceRecordSet::builder()
            .name(&c.name)
            .r#type(RrType::from(c.record_type.as_str()))
            .ttl(c.ttl)
            .resource_records(record)
            .build(),
    )?;
    let action = match c.action {
        RecordAction::Create => ChangeAction::Create,
        RecordAction::Delete => ChangeAction::Delete,
    };
    built(
        Change::builder()
            .action(action)
            .resource_record_set(set)
            .build(),
    )
}

#[async_trait]
impl Route53 for SdkRoute53 {
    async fn list_hosted_zones(&self) -> Result<Vec<HostedZone>> {
        let mut out = Vec::new();
        let mut marker: Option<String> = None;
        loop {
            let page = send(&self.caller, SVC, "ListHostedZones", || {
                self.client
                    .list_hosted_zones()
                    .set_marker(marker.clone())
                    .send()
            })
            .await?;
            out.extend(page.hosted_zones().iter().map(|z| HostedZone {
                id: z.id().to_string(),
                name: z.name().to_string(),
            }));
            match page.next_marker() {
                Some(m) if page.is_truncated() && !m.is_empty() => marker = Some(m.to_string()),
                _ => return Ok(out),
            }
        }
    }

    async fn change_resource_record_sets(
        &self,
        zone_id: &str,
        changes: &[RecordChange],
    ) -> Result<()> {
        let mut batch = ChangeBatch::builder();
        for c in changes {
            batch = batch.changes(sdk_change(c)?);
        }
        let batch = built(batch.build())?;
        send(&self.caller, SVC, "ChangeResourceRecordSets", || {
            self.client
                .change_resource_record_sets()
                .hosted_zone_id(zone_id)
                .change_batch(batch.clone())
                .send()
        })
        .await?;
        Ok(())
    }
}
