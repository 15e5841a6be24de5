//! Benchmarks, one module per area under `benches/bench/`: `cargo bench --bench bench -- <area>`
//! (no area = all but `admission` and `reads`, which run only when named). Figures are printed;
//! they are reported in issue notes, never asserted.
//!
//! Areas: `admission`, `admission-index`, `webhook`, `aws`, `model`, `tgb`, `gates`,
//! `tgb-process` (`TGB_PROCESS_SIZE=13k|300k`), `targets`, `deploy`, `diff`, `ingress`
//! (`INGRESS_BENCH_SIZE=1000|5000`), `service`, `reads`. `tgb-process` and `targets` run the
//! controller binary of the same profile (or `$ALBC_BIN`) against moto_server.

#[path = "bench/admission.rs"]
mod admission;
#[path = "bench/admission_client.rs"]
mod admission_client;
#[path = "bench/admission_index.rs"]
mod admission_index;
#[path = "bench/aws.rs"]
mod aws;
#[path = "bench/deploy.rs"]
mod deploy;
#[path = "bench/diff.rs"]
mod diff;
#[path = "bench/fixtures.rs"]
mod fixtures;
#[path = "bench/gates.rs"]
mod gates;
#[path = "bench/ingress.rs"]
mod ingress;
#[path = "bench/model.rs"]
mod model;
#[path = "../tests/it/support/moto.rs"]
mod moto;
#[path = "bench/process.rs"]
mod process;
#[path = "bench/reads.rs"]
mod reads;
#[path = "bench/report.rs"]
mod report;
#[path = "bench/service.rs"]
mod service;
#[path = "bench/targets.rs"]
mod targets;
#[path = "bench/tgb.rs"]
mod tgb;
#[path = "bench/tgb_process.rs"]
mod tgb_process;
#[path = "bench/webhook.rs"]
mod webhook;

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wanted = |area: &str| filter.as_deref().is_none_or(|f| area == f);
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    // Only when asked for: it installs the binary's info-level log subscriber for the process.
    if filter.as_deref() == Some("admission") {
        admission::run();
    }
    if wanted("admission-index") {
        admission_index::run();
    }
    if wanted("webhook") {
        webhook::run();
    }
    if wanted("aws") {
        aws::run();
    }
    if wanted("model") {
        model::run();
    }
    if wanted("tgb") {
        tgb::run();
    }
    if wanted("gates") {
        gates::run();
    }
    if wanted("tgb-process") {
        tgb_process::run();
    }
    if wanted("targets") {
        targets::run();
    }
    if wanted("deploy") {
        deploy::run();
    }
    if wanted("diff") {
        diff::run();
    }
    if wanted("ingress") {
        ingress::run();
    }
    if wanted("service") {
        service::run();
    }
    // Only when asked for: about half an hour (the whole cluster's cold start, then every
    // controller's passes).
    if filter.as_deref() == Some("reads") {
        reads::run();
    }
}
