//! The Resource Groups Tagging API behind a narrow trait: `GetResources` only, which the deployer
//! calls under feature gate `EnableRGTAPI` to find a stack's load balancers and target groups by
//! their tags (upstream's RGT lookups) instead of listing every one of the VPC and reading its
//! tags. Implemented over the SDK (`sdk/tagging.rs`) and by the fake (`fake/tagging.rs`).

use async_trait::async_trait;

use super::error::Result;
use super::types::Tags;

/// `GetResources`' resource type of ELBv2 load balancers.
pub const RESOURCE_TYPE_LOAD_BALANCER: &str = "elasticloadbalancing:loadbalancer";
/// `GetResources`' resource type of ELBv2 target groups.
pub const RESOURCE_TYPE_TARGET_GROUP: &str = "elasticloadbalancing:targetgroup";

/// A resource as `GetResources` lists it: its ARN and all its tags.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaggedResource {
    pub arn: String,
    pub tags: Tags,
}

/// Resource Groups Tagging API.
#[async_trait]
pub trait ResourceTagging: Send + Sync + std::fmt::Debug {
    /// Every resource of `resource_type` carrying all of `tags` (each key with that value), all
    /// pages. The index lags behind AWS: a resource deleted a moment ago may still be listed.
    async fn get_resources(&self, resource_type: &str, tags: &Tags) -> Result<Vec<TaggedResource>>;
}
