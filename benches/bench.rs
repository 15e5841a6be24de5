//! Benchmarks, one module per area: `cargo bench --bench bench -- <area>` (no area = all).
//! Figures are printed; they are reported in issue notes, never asserted.

mod bench {
    pub mod webhook;
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    if wanted("webhook") {
        bench::webhook::run();
    }
}
