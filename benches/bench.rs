//! Benchmarks, one module per area under `benches/bench/`: `cargo bench --bench bench -- <area>`.

#[path = "bench/aws.rs"]
mod aws;

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wanted = |area: &str| filter.as_deref().is_none_or(|f| area.contains(f));
    if wanted("aws") {
        aws::run();
    }
}
