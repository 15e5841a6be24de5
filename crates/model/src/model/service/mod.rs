//! Desired state of the Service half: one LoadBalancer Service → one NLB `Stack`, as a pure
//! function of the Service, the controller's configuration and a few optional AWS facts
//! (`ServiceEnv`). Names and hashes are upstream's (`pkg/service`), so a cluster switches from
//! upstream without recreating anything; every invalid annotation value fails here with
//! upstream's message, before any AWS call.
//!
//! Entry points: [`is_service_supported`] (which Services) and [`build_service_stack`].

pub mod annotations;
mod build;
mod env;
mod health_check;
mod listeners;
mod load_balancer;
pub mod mutator;
pub mod qualify;
mod security_groups;
mod subnet_mappings;
mod subnets;
mod target_groups;
mod task;
mod tg_attributes;
mod tgb;
mod weighted;
mod weighted_input;

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;

use k8s_openapi::api::core::v1::Service;

// Facts about an existing NLB, shared with the Gateway builder; kept reachable here.
pub use crate::model::env::{ExistingNlb, RefusedGroupsChange};
pub use build::{build_service_stack, SERVICE_DELETION_PROTECTED};
pub use env::ServiceEnv;
pub use qualify::{is_pending_finalization, is_service_supported, SERVICE_FINALIZER};
pub use weighted_input::weighted_backend_names;

/// `ns/name` of a Service.
pub fn service_key(svc: &Service) -> String {
    crate::model::cluster::key_of(&svc.metadata)
}
