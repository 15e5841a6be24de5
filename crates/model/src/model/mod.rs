//! Desired state: Ingress groups → an ALB stack (`ingress`), LoadBalancer Services → an NLB
//! stack (`service`), and Gateways → an ALB or NLB stack (`gateway`), as pure functions of
//! Kubernetes objects and the controller's configuration (no network). The reconciler deploys
//! `Stack`s, the webhooks admit only what `build_stack` can build, and `plan` prints them
//! offline.
//!
//! Entry points: [`load_groups`] (classification and grouping of all Ingresses) and
//! [`build_stack`] (one group → [`Stack`]). Names and tags are hash-for-hash upstream's.
//!
//! The modules stand in floors; each imports only from the floors below it (or from its own
//! floor without a circle):
//!
//! 1. the stack: `types` (the serialisable `Stack` and its parts, `action` among them);
//! 2. vocabulary: `error`, `config` (`ModelConfig`), `naming` (upstream's names and hashes),
//!    and `upstream_json` (the stack in upstream's marshalled shape);
//! 3. inputs: `cluster` (the objects read), `ingress_class` (which Ingresses are ours) and
//!    `group` (how they form groups);
//! 4. the build environment: `env` (facts from AWS), `tags`, `subnets` and `subnet_addresses`,
//!    `tgb_cidrs`, `backend_sg`, `oidc`, and `agree` (the members-must-agree rule);
//! 5. one builder per kind: `ingress`, `service`, `gateway`, and `aga` (GlobalAccelerators, a
//!    stack of their own);
//! 6. `build`: the entry points of every kind.

pub mod aga;
pub(crate) mod agree;
pub mod backend_sg;
pub mod build;
pub mod cluster;
pub mod config;
pub mod env;
pub mod error;
pub mod gateway;
pub mod group;
pub mod ingress;
pub mod ingress_class;
pub mod naming;
pub mod oidc;
pub mod service;
pub mod subnet_addresses;
pub mod subnets;
pub mod tags;
pub mod tgb_cidrs;
pub mod types;
pub mod upstream_json;

#[cfg(test)]
mod tests;

pub use build::{build_stack, BuildEnv};
pub use config::ModelConfig;
pub use error::ModelError;
pub use group::{load_groups, ClassifiedIngress, ClusterObjects, IngressGroup};
pub use subnets::SubnetInfo;
pub use types::*;

/// The Ingress builder's steps, at the paths they had before the builder got its folder.
pub use ingress::{
    backend, enhanced_backend, frontend_nlb, listener, load_balancer, mtls, not_deployed, rule,
    security_group, target_group,
};
pub use types::action;

/// Former module names, kept so code written against them still builds.
pub use self::{listener as listen, load_balancer as lb, rule as rules};

/// Former home of the addons (now `load_balancer`) and SSL redirect / listener attributes
/// (now `listener`).
pub mod lb_extras {
    pub use super::listener::{listener_attributes, ssl_redirect_port};
    pub use super::load_balancer::addons;
}
