//! `crdgen`: prints the CustomResourceDefinitions this controller owns as one multi-document YAML
//! stream. The chart's `crds/crds.yaml` and `config/crd/crds.yaml` are this output, committed; a
//! test fails when they drift from the Rust types.
//!
//! Usage: `cargo run -p albc-model --bin crdgen > config/crd/crds.yaml`

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    match albc_model::crd::crds_yaml() {
        Ok(yaml) => match std::io::stdout().lock().write_all(yaml.as_bytes()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("error: writing the CRDs: {error}");
                ExitCode::FAILURE
            }
        },
        Err(error) => {
            eprintln!("error: serialising the CRDs: {error}");
            ExitCode::FAILURE
        }
    }
}
