//! albc-model: the controller's pure half, with no AWS SDK, HTTP server or Kubernetes client —
//! annotations, CRD types, flags and their validation, the desired-state model, `plan` and the
//! translation half of `migrate`.
//! The controller crate re-exports these modules under the same names.
#![forbid(unsafe_code)]

pub mod annotations;
pub mod args;
pub mod config;
pub mod crd;
// Builders of test objects (`Gateway::test("ns", "gw").alb()...`): this crate's tests and,
// with the `test-fixtures` feature, the controller's (`tests/it`).
#[cfg(any(test, feature = "test-fixtures"))]
#[doc(hidden)]
pub mod fixtures;
pub mod goflags;
pub mod migrate;
pub mod model;
pub mod plan;
