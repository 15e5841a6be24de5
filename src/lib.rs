//! aws-load-balancer-controller: a drop-in Rust replacement for the Kubernetes AWS Load Balancer Controller.
#![forbid(unsafe_code)]

// The pure half (annotations, CRD types, flags and their validation, the model, `plan`) lives in
// the SDK-free `albc-model` crate; re-exported under the names the rest of this crate uses.
pub use albc_model::{annotations, config, crd, goflags, model, plan};

pub mod app;
pub mod aws;
pub mod build_info;
pub mod certs;
pub mod cli;
pub mod controller;
pub mod deploy;
pub mod diff;
pub mod metrics;
pub mod migrate;
pub mod plain_server;
pub mod probes;
pub mod reconcilers;
pub mod telemetry;
pub mod thread_stack;
pub mod watch;
pub mod webhook;
