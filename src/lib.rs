//! aws-load-balancer-controller: a drop-in Rust replacement for the Kubernetes AWS Load Balancer Controller.
#![forbid(unsafe_code)]

pub mod annotations;
pub mod app;
pub mod args;
pub mod aws;
pub mod ca_bundle;
pub mod certs_cmd;
pub mod certs_manager;
pub mod config;
pub mod controller;
pub mod crd;
pub mod deploy;
pub mod diff;
pub mod goflags;
pub mod metrics;
pub mod model;
pub mod plan;
pub mod reconcilers;
pub mod telemetry;
pub mod watch;
pub mod webhook;
