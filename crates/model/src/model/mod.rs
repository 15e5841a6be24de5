//! Desired state: Ingress groups → an ALB stack, LoadBalancer Services → an NLB stack
//! (`service`), and Gateways → an ALB stack (`gateway`), as pure functions of Kubernetes objects and the controller's configuration
//! (no network). The reconciler deploys `Stack`s, the webhooks
//! admit only what `build_stack` can build, and `plan` prints them offline.
//!
//! Entry points: [`load_groups`] (classification and grouping of all Ingresses) and
//! [`build_stack`] (one group → [`Stack`]). Names and tags are hash-for-hash upstream's.

pub mod action;
pub(crate) mod agree;
pub mod backend;
pub mod build;
pub mod config;
pub mod enhanced_backend;
pub mod error;
pub mod frontend_nlb;
pub mod gateway;
pub mod group;
pub mod ingress_class;
pub mod listener;
pub mod load_balancer;
pub mod mtls;
pub mod naming;
pub mod not_deployed;
pub mod oidc;
pub mod rule;
pub mod security_group;
pub mod service;
pub mod subnet_addresses;
pub mod subnets;
pub mod tags;
pub mod target_group;
pub mod tgb_cidrs;
pub mod types;
pub mod upstream_json;

#[cfg(test)]
mod golden_gateway;
#[cfg(test)]
mod golden_ingress;
#[cfg(test)]
mod json_keys_tests;

pub use build::{build_stack, BuildEnv};
pub use config::ModelConfig;
pub use error::ModelError;
pub use group::{load_groups, ClassifiedIngress, ClusterObjects, IngressGroup};
pub use subnets::SubnetInfo;
pub use types::*;

/// Former module names, kept so code written against them still builds.
pub use self::{listener as listen, load_balancer as lb, rule as rules};

/// Former home of the addons (now `load_balancer`) and SSL redirect / listener attributes
/// (now `listener`).
pub mod lb_extras {
    pub use super::listener::{listener_attributes, ssl_redirect_port};
    pub use super::load_balancer::addons;
}
