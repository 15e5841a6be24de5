//! Integration tests: one binary, one module per area.

mod aws;
mod chart;
mod model;
mod process;
mod support;
mod webhook_server;
