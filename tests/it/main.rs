//! Integration tests: one binary, one module per area.

mod aws;
mod model;
mod process;
mod support;
mod tgb;
mod webhook_server;
