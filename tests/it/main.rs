//! Integration tests: one binary, one module per area.

mod aws;
mod deploy;
mod model;
mod process;
mod support;
mod webhook_server;
