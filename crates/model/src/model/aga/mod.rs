//! Desired state of a GlobalAccelerator (`aga.k8s.aws/v1beta1`): an [`AgaStack`] as a pure
//! function of the object, the controller's settings ([`AgaConfig`]) and its loaded endpoints,
//! as upstream's `pkg/aga` builds it — names, tags, resource ids and messages upstream's, so an
//! accelerator upstream made is found and adopted.
//!
//! The controller's part, in order:
//! 1. [`desired_endpoints`] of the object (feed the [`ReferenceTracker`]);
//! 2. [`load_endpoints`] through an [`EndpointSource`] it implements over its caches and the
//!    load balancers it described (`DescribeLoadBalancers`, [`load_balancer_arn_by_dns`]); a
//!    fatal error stops the reconcile (reason `EndpointLoadFailed`);
//! 3. for [`listeners_to_describe`], the load balancer's listeners (`DescribeListeners`) on the
//!    loaded endpoint;
//! 4. [`build_aga_stack`], then deploy, then [`status_after_deploy`] (or
//!    [`status_after_failure`], [`status_while_deleting`]).
//!
//! One module per step: `endpoints` (references, keys, loaded endpoints and their errors),
//! `loader` and `dns` (endpoint → load balancer ARN), `discovery` (protocol and ports of an
//! endpoint), `ports`, `tags`, `accelerator`, `listener`, `endpoint_group`, `build` (all of them
//! in order), `references` (which accelerators name which objects) and `status`.

pub mod accelerator;
pub mod build;
pub mod config;
pub mod discovery;
pub mod dns;
pub mod endpoint_group;
pub mod endpoints;
pub mod listener;
pub mod loader;
pub mod ports;
pub mod references;
pub mod status;
pub mod tags;

pub use build::build_aga_stack;
pub use config::AgaConfig;
pub use discovery::listeners_to_describe;
pub use dns::{load_balancer_arn_by_dns, DescribedLoadBalancer};
pub use endpoints::{
    desired_endpoints, ElbListener, EndpointLoadError, EndpointReference, EndpointResource,
    LoadedEndpoint, LoadedEndpointStatus, ResourceKey,
};
pub use loader::{load_endpoint, load_endpoints, EndpointObjects, EndpointSource, Lookup};
pub use ports::controller_enabled;
pub use references::ReferenceTracker;
pub use status::{
    status_after_deploy, status_after_failure, status_while_deleting, DeployOutcome, DeployedIpSet,
    StatusChange,
};

// The stack types, also reachable here: `crate::model::aga` was their path through
// `model::types::*` before this module took the name.
pub use crate::model::types::aga::*;

#[cfg(test)]
mod test_support;
