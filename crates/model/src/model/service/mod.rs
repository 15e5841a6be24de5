//! Desired state of the Service half: one LoadBalancer Service → one NLB `Stack`, as a pure
//! function of the Service, the controller's configuration and a few optional AWS facts
//! (`ServiceEnv`). Names and hashes are upstream's (`pkg/service`), so a cluster switches from
//! upstream without recreating anything; every invalid annotation value fails here with
//! upstream's message, before any AWS call.
//!
//! Entry points: [`is_service_supported`] (which Services) and [`build_service_stack`].

pub mod annotations;
mod build;
mod health_check;
mod listeners;
mod load_balancer;
pub mod mutator;
pub mod qualify;
mod security_groups;
mod subnet_mappings;
mod target_groups;
mod tg_attributes;
mod tgb;
mod weighted;

#[cfg(test)]
mod feature_tests;
#[cfg(test)]
mod golden_tests;
#[cfg(test)]
mod lb_tests;
#[cfg(test)]
mod test_support;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;

pub use build::{build_service_stack, SERVICE_DELETION_PROTECTED};
pub use qualify::{is_pending_finalization, is_service_supported, SERVICE_FINALIZER};
pub use weighted::weighted_backend_names;

use super::subnets::SubnetInfo;
use super::types::LoadBalancerScheme;

/// AWS facts that refine a Service's stack; all optional (`plan` has none of them).
#[derive(Debug, Clone, Default)]
pub struct ServiceEnv {
    /// Subnets of the VPC; without them the stack shows the discovery criteria and subnet
    /// mappings (EIPs, private addresses) wait for the deployer.
    pub subnets: Option<Vec<SubnetInfo>>,
    /// The NLB already tagged with this Service's stack, if any.
    pub existing_load_balancer: Option<ExistingNlb>,
    /// The VPC's associated CIDR blocks (IPv4 and IPv6): the default sources of node rules for
    /// an internal NLB without security groups.
    pub vpc_cidrs: Option<Vec<String>>,
    /// The Services of the Service's namespace its weighted `actions.*` annotations name
    /// ([`weighted_backend_names`]), by name, as the cluster shows them; a name the build uses
    /// but this map lacks fails as upstream's lookup does (`Service "<name>" not found`).
    pub backend_services: BTreeMap<String, Service>,
}

impl ServiceEnv {
    /// Fills `backend_services` with the Services `svc`'s weighted actions name, each looked up
    /// by `lookup(namespace, name)` (the controller's Service cache, or the manifests).
    pub fn with_backends_of<F>(mut self, svc: &Service, lookup: F) -> Self
    where
        F: Fn(&str, &str) -> Option<Service>,
    {
        let ns = svc.metadata.namespace.as_deref().unwrap_or("default");
        for name in weighted_backend_names(svc) {
            if let Some(found) = lookup(ns, &name) {
                self.backend_services.insert(name, found);
            }
        }
        self
    }
}

/// What the model needs to know about an existing NLB of the stack.
#[derive(Debug, Clone, PartialEq)]
pub struct ExistingNlb {
    pub scheme: LoadBalancerScheme,
    pub subnet_ids: Vec<String>,
    /// Its security groups; an NLB created without any can never get one.
    pub security_groups: Vec<String>,
}

/// A security-group change AWS refuses on an NLB that exists (the Service and Gateway models
/// both check it before any write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusedGroupsChange {
    /// Groups asked of an NLB created without any: AWS never adds one.
    AddToNone,
    /// No group asked of an NLB that has some: AWS never takes the last one off.
    RemoveAll,
}

impl ExistingNlb {
    /// The change AWS would refuse when the stack asks for groups (`wants_groups`) or none.
    pub fn refused_change(&self, wants_groups: bool) -> Option<RefusedGroupsChange> {
        match (self.security_groups.is_empty(), wants_groups) {
            (true, true) => Some(RefusedGroupsChange::AddToNone),
            (false, false) => Some(RefusedGroupsChange::RemoveAll),
            _ => None,
        }
    }
}

/// `ns/name` of a Service.
pub fn service_key(svc: &Service) -> String {
    super::group::key_of(&svc.metadata)
}
