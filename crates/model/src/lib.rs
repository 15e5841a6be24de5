//! albc-model: the controller's pure half, with no AWS SDK, HTTP server or Kubernetes client —
//! annotations, CRD types, flags and their validation, the desired-state model, `plan` and the
//! translation half of `migrate`.
//! The controller crate re-exports these modules under the same names.
#![forbid(unsafe_code)]

pub mod annotations;
pub mod args;
pub mod config;
pub mod crd;
pub mod goflags;
pub mod migrate;
pub mod model;
pub mod plan;
