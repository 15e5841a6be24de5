//! Integration tests: one binary, one module per area.

mod aws;
mod chaos;
mod chart;
mod deploy;
mod e2e_addons;
mod e2e_ca_bundle;
mod e2e_dry_run;
mod e2e_gateway;
mod e2e_ingress;
mod e2e_managed_cert;
mod e2e_metrics;
mod e2e_oidc;
mod e2e_pod_gates;
mod e2e_service;
mod e2e_tgb;
mod gateway_controller;
mod ingress;
mod leader;
mod process;
mod service_controller;
mod support;
mod takeover;
mod tgb;
mod watches;
mod webhook_server;
mod webhook_soak;
