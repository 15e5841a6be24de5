//! Tags of the accelerator: the object's `tags` with `--default-tags` (upstream's `tag_helper.go`
//! over `shared_utils.TagHelper`), then the tracking tags upstream's deployer adds (tracking
//! provider with prefix `aga.k8s.aws` and the cluster region), which win over both. The tracking
//! tags are how an accelerator made by upstream is found and adopted.

use std::collections::BTreeMap;

use super::config::AgaConfig;
use crate::crd::global_accelerator::GlobalAccelerator;
use crate::model::types::aga::RESOURCE_ID_ACCELERATOR;
use crate::model::types::TAG_CLUSTER;

type Tags = BTreeMap<String, String>;

/// Tracking tag prefix of GlobalAccelerator stacks.
pub const AGA_TAG_PREFIX: &str = "aga.k8s.aws";
/// `namespace/name` of the GlobalAccelerator object.
pub const TAG_AGA_STACK: &str = "aga.k8s.aws/stack";
/// The model resource id (`GlobalAccelerator` for the accelerator).
pub const TAG_AGA_RESOURCE: &str = "aga.k8s.aws/resource";
/// The cluster's region, on GlobalAccelerator resources only.
pub const TAG_CLUSTER_REGION: &str = "elbv2.k8s.aws/cluster-region";

/// The object's tags merged with `--default-tags`: defaults win unless
/// `EnableDefaultTagsLowPriority` is on; a key of `--external-managed-tags` in the object's tags
/// is refused with upstream's text (the first such key in key order).
pub fn user_tags(cfg: &AgaConfig, ga: &GlobalAccelerator) -> Result<Tags, String> {
    let own = ga.spec.tags.clone().unwrap_or_default();
    if let Some(key) = own.keys().find(|k| cfg.external_managed_tags.contains(*k)) {
        return Err(format!(
            "external managed tag key {key} cannot be specified"
        ));
    }
    let (mut tags, over) = if cfg.user_tags_over_default_tags {
        (cfg.default_tags.clone(), own)
    } else {
        (own, cfg.default_tags.clone())
    };
    tags.extend(over);
    Ok(tags)
}

/// `elbv2.k8s.aws/cluster`, `aga.k8s.aws/stack`, `aga.k8s.aws/resource` and, when the region is
/// known, `elbv2.k8s.aws/cluster-region`.
pub fn tracking_tags(cfg: &AgaConfig, ga: &GlobalAccelerator) -> Tags {
    let mut tags = BTreeMap::from([
        (TAG_CLUSTER.to_string(), cfg.cluster_name.clone()),
        (TAG_AGA_STACK.to_string(), ga.key()),
        (
            TAG_AGA_RESOURCE.to_string(),
            RESOURCE_ID_ACCELERATOR.to_string(),
        ),
    ]);
    if !cfg.region.is_empty() {
        tags.insert(TAG_CLUSTER_REGION.to_string(), cfg.region.clone());
    }
    tags
}

/// Every tag of the accelerator: [`user_tags`] under [`tracking_tags`].
pub fn accelerator_tags(cfg: &AgaConfig, ga: &GlobalAccelerator) -> Result<Tags, String> {
    let mut tags = user_tags(cfg, ga)?;
    tags.extend(tracking_tags(cfg, ga));
    Ok(tags)
}

#[cfg(test)]
#[path = "tags_tests.rs"]
mod tests;
