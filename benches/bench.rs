//! The project's single benchmark target; one module per area, selected by the first free
//! argument (`cargo bench --bench bench -- <area>`), all areas when none is given.

mod bench {
    pub mod model;
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wants = |area: &str| filter.as_deref().is_none_or(|f| area.contains(f));
    if wants("model") {
        bench::model::run();
    }
}
