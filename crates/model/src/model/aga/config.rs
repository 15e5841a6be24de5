//! What the GlobalAccelerator builder takes of the controller's configuration ([`AgaConfig`]),
//! below every build step.

use std::collections::BTreeMap;

use crate::model::config::ModelConfig;

/// What the GlobalAccelerator builder needs of the controller's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AgaConfig {
    /// `--cluster-name`.
    pub cluster_name: String,
    /// The region the controller runs in: default region of endpoint groups, part of generated
    /// names, and the `elbv2.k8s.aws/cluster-region` tag.
    pub region: String,
    /// `--default-tags`.
    pub default_tags: BTreeMap<String, String>,
    /// `--external-managed-tags`.
    pub external_managed_tags: Vec<String>,
    /// Gate `EnableDefaultTagsLowPriority`: the object's tags win over `--default-tags`.
    pub user_tags_over_default_tags: bool,
}

impl AgaConfig {
    /// From the model's configuration and the resolved region.
    pub fn new(cfg: &ModelConfig, region: &str) -> Self {
        AgaConfig {
            cluster_name: cfg.cluster_name.clone(),
            region: region.to_string(),
            default_tags: cfg.default_tags.clone(),
            external_managed_tags: cfg.external_managed_tags.clone(),
            user_tags_over_default_tags: cfg.gate("EnableDefaultTagsLowPriority"),
        }
    }
}
