//! [`ResourceTagging`] over the AWS SDK, built next to the ELBv2/EC2 clients: the same region,
//! credentials chain, `Caller` settings (throttle, retries, metrics under the SDK service id
//! `Resource Groups Tagging API`) and leader fence, with an `--aws-api-endpoints` override
//! (`tagging=` or the service id).

use std::sync::Arc;

use async_trait::async_trait;
use aws_config::retry::RetryConfig;
use aws_config::{BehaviorVersion, Region};
use aws_sdk_resourcegroupstagging::types::{ResourceTagMapping, TagFilter};

use super::{all_pages, send};
use crate::aws::caller::Caller;
use crate::aws::config::{endpoint_for, AwsConfig};
use crate::aws::error::Result;
use crate::aws::fence::Fence;
use crate::aws::metrics::AwsMetrics;
use crate::aws::tagging::{ResourceTagging, TaggedResource};
use crate::aws::types::{Service, Tags};

#[derive(Debug, Clone)]
pub struct SdkTagging {
    client: aws_sdk_resourcegroupstagging::Client,
    caller: Caller,
}

/// The tagging client for `region` (as resolved with the ELBv2/EC2 clients). Built whatever the
/// gate says, as the add-on clients are; the controllers hand it to the deployer only under
/// `EnableRGTAPI`.
pub async fn build_tagging(
    cfg: &AwsConfig,
    region: &str,
    metrics: Option<AwsMetrics>,
    fence: Fence,
) -> Arc<dyn ResourceTagging> {
    let caller = Caller::from_flags(&cfg.api_throttle, cfg.max_retries, metrics).with_fence(fence);
    let sdk = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(region.to_string()))
        .retry_config(RetryConfig::disabled())
        .load()
        .await;
    let mut conf = aws_sdk_resourcegroupstagging::config::Builder::from(&sdk);
    if let Some(url) = endpoint_for(&cfg.api_endpoints, Service::Tagging) {
        conf = conf.endpoint_url(url);
    }
    Arc::new(SdkTagging {
        client: aws_sdk_resourcegroupstagging::Client::from_conf(conf.build()),
        caller,
    })
}

fn tagged(m: &ResourceTagMapping) -> Option<TaggedResource> {
    let tags: Tags = m
        .tags()
        .iter()
        .map(|t| (t.key().to_string(), t.value().to_string()))
        .collect();
    Some(TaggedResource {
        arn: m.resource_arn()?.to_string(),
        tags,
    })
}

#[async_trait]
impl ResourceTagging for SdkTagging {
    async fn get_resources(&self, resource_type: &str, tags: &Tags) -> Result<Vec<TaggedResource>> {
        let filters: Vec<TagFilter> = tags
            .iter()
            .map(|(k, v)| TagFilter::builder().key(k).values(v).build())
            .collect();
        let filters = &filters;
        all_pages(|token| async move {
            let out = send(&self.caller, Service::Tagging, "GetResources", || {
                self.client
                    .get_resources()
                    .set_tag_filters(Some(filters.clone()))
                    .resource_type_filters(resource_type)
                    .set_pagination_token(token.clone())
                    .send()
            })
            .await?;
            let items = out
                .resource_tag_mapping_list()
                .iter()
                .filter_map(tagged)
                .collect();
            Ok((items, out.pagination_token().map(str::to_string)))
        })
        .await
    }
}
