//! aws-load-balancer-controller: a drop-in Rust replacement for the Kubernetes AWS Load Balancer Controller.
#![forbid(unsafe_code)]

pub mod annotations;
pub mod aws;
pub mod crd;
pub mod model;
pub mod plan;
