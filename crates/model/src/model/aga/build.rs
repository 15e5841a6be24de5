//! The whole GlobalAccelerator stack (upstream's `model_builder.go`): accelerator, then
//! listeners (with auto-discovery), then their endpoint groups, from the object, the
//! controller's settings and the loaded endpoints; nothing read from AWS or the API server here.

use super::accelerator::build_accelerator;
use super::config::AgaConfig;
use super::endpoint_group::build_endpoint_groups;
use super::endpoints::LoadedEndpoint;
use super::listener::build_listeners;
use crate::crd::global_accelerator::GlobalAccelerator;
use crate::model::error::ModelError;
use crate::model::types::aga::AgaStack;

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
