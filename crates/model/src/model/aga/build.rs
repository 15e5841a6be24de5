//! The whole GlobalAccelerator stack (upstream's `model_builder.go`): accelerator, then
//! listeners (with auto-discovery), then their endpoint groups, from the object, the
//! controller's settings and the loaded endpoints; nothing read from AWS or the API server here.

use std::collections::BTreeMap;

use super::accelerator::build_accelerator;
use super::endpoint_group::build_endpoint_groups;
use super::endpoints::LoadedEndpoint;
use super::listener::build_listeners;
use crate::crd::global_accelerator::GlobalAccelerator;
use crate::model::config::ModelConfig;
use crate::model::error::ModelError;
use crate::model::types::aga::AgaStack;

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

/// The stack of one GlobalAccelerator. `loaded` are its endpoints as
/// [`super::loader::load_endpoints`] returned them (after a fatal load error the controller stops
/// before building, as upstream); endpoints that did not load are left out of their groups.
///
/// Fails with upstream's text (the `Failed build model due to <text>` event, reason
/// `ModelBuildFailed` in status).
pub fn build_aga_stack(
    cfg: &AgaConfig,
    ga: &GlobalAccelerator,
    loaded: &[LoadedEndpoint],
) -> Result<AgaStack, ModelError> {
    let fail = |message: String| ModelError::GlobalAccelerator {
        accelerator: ga.key(),
        message,
    };
    let accelerator = build_accelerator(cfg, ga).map_err(fail)?;
    let (mut listeners, processed) = build_listeners(ga, loaded).map_err(fail)?;
    let groups = build_endpoint_groups(
        &cfg.region,
        ga.namespace_or_empty(),
        &listeners,
        &processed,
        loaded,
    )
    .map_err(fail)?;
    for (listener, groups) in listeners.iter_mut().zip(groups) {
        listener.endpoint_groups = groups;
    }
    listeners.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(AgaStack {
        id: ga.key(),
        accelerator,
        listeners,
    })
}

#[cfg(test)]
#[path = "build_tests.rs"]
mod tests;
