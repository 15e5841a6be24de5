//! The Resource Groups Tagging API for the fake: `GetResources` over the fake's ELBv2 tags,
//! load balancers and target groups only (the two resource types the deployer asks for), plus
//! the stale entries a test seeds to show the index's lag behind deletions.

use async_trait::async_trait;

use super::FakeAws;
use crate::aws::error::{AwsError, Result};
use crate::aws::tagging::{
    ResourceTagging, TaggedResource, RESOURCE_TYPE_LOAD_BALANCER, RESOURCE_TYPE_TARGET_GROUP,
};
use crate::aws::types::{Service, Tags};

/// The resource type of an ELBv2 ARN (`...:loadbalancer/app/...` → load balancer).
fn resource_type(arn: &str) -> Option<&'static str> {
    if arn.contains(":loadbalancer/") {
        Some(RESOURCE_TYPE_LOAD_BALANCER)
    } else if arn.contains(":targetgroup/") {
        Some(RESOURCE_TYPE_TARGET_GROUP)
    } else {
        None
    }
}

#[async_trait]
impl ResourceTagging for FakeAws {
    async fn get_resources(
        &self,
        resource_type_filter: &str,
        tags: &Tags,
    ) -> Result<Vec<TaggedResource>> {
        self.run(Service::Tagging, "GetResources", |st| {
            if resource_type_filter != RESOURCE_TYPE_LOAD_BALANCER
                && resource_type_filter != RESOURCE_TYPE_TARGET_GROUP
            {
                return Err(AwsError::validation(format!(
                    "the fake lists {RESOURCE_TYPE_LOAD_BALANCER} and {RESOURCE_TYPE_TARGET_GROUP} only, not {resource_type_filter}"
                )));
            }
            let live = st
                .elb_tags
                .iter()
                .filter(|(arn, _)| st.lbs.contains_key(*arn) || st.tgs.contains_key(*arn));
            // As AWS: untagged resources are not listed; every filter must match.
            Ok(live
                .chain(st.tagging_stale.iter())
                .filter(|(arn, t)| {
                    resource_type(arn) == Some(resource_type_filter)
                        && !t.is_empty()
                        && tags.iter().all(|(k, v)| t.get(k) == Some(v))
                })
                .map(|(arn, t)| TaggedResource {
                    arn: arn.clone(),
                    tags: t.clone(),
                })
                .collect())
        })
        .await
    }
}
