//! The settings of one run (`MigrateOptions`, `WriteOptions`) and upstream's refusals of flag
//! combinations (`cmd/lbc-migrate/main.go` `validateFlags`), word for word.

use super::{go_quote, MigrateError};

/// `--split` unset: one file.
pub const SPLIT_NONE: &str = "";
/// `--split namespace`: a file per namespace and one for the GatewayClass.
pub const SPLIT_NAMESPACE: &str = "namespace";
/// `--output-dir`'s default.
pub const DEFAULT_OUTPUT_DIR: &str = "./gateway-output";

/// The resolved flags of a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MigrateOptions {
    pub files: Vec<String>,
    pub input_dir: String,
    pub from_cluster: bool,
    pub namespaces: Vec<String>,
    pub all_namespaces: bool,
    pub kubeconfig: String,
    pub ingress_name: String,
    pub output_dir: String,
    pub output_format: String,
    pub split: String,
    /// Gateways carry `gateway.k8s.aws/dry-run: "true"`.
    pub dry_run: bool,
}

/// What the writer needs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WriteOptions {
    /// `yaml` or `json` (also the files' extension).
    pub format: String,
    /// [`SPLIT_NONE`] or [`SPLIT_NAMESPACE`].
    pub split: String,
}

fn refuse(message: impl Into<String>) -> Result<(), MigrateError> {
    Err(MigrateError::Flags(message.into()))
}

/// Upstream's checks, in upstream's order.
pub fn validate_flags(o: &MigrateOptions) -> Result<(), MigrateError> {
    let file_input = !o.files.is_empty() || !o.input_dir.is_empty();
    if !o.from_cluster && !file_input {
        return refuse("must specify at least one of: --file (-f), --input-dir, or --from-cluster");
    }
    if o.from_cluster && file_input {
        return refuse("--from-cluster cannot be used with --file or --input-dir");
    }
    if !o.from_cluster {
        if !o.namespaces.is_empty() {
            return refuse("--namespaces can only be used with --from-cluster");
        }
        if o.all_namespaces {
            return refuse("--all-namespaces can only be used with --from-cluster");
        }
        if !o.ingress_name.is_empty() {
            return refuse("--ingress-name can only be used with --from-cluster");
        }
        if !o.kubeconfig.is_empty() {
            return refuse("--kubeconfig can only be used with --from-cluster");
        }
    }
    if !o.namespaces.is_empty() && o.all_namespaces {
        return refuse("--namespaces and --all-namespaces are mutually exclusive");
    }
    if !o.ingress_name.is_empty() {
        if o.ingress_name.contains(',') {
            return refuse(format!(
                "--ingress-name accepts a single Ingress name, got {}",
                go_quote(&o.ingress_name)
            ));
        }
        if o.all_namespaces {
            return refuse("--ingress-name and --all-namespaces are mutually exclusive");
        }
        if o.namespaces.len() != 1 {
            return refuse("--ingress-name requires exactly one --namespaces value");
        }
    }
    if o.output_format != "yaml" && o.output_format != "json" {
        return refuse(format!(
            "--output-format must be yaml or json, got {}",
            go_quote(&o.output_format)
        ));
    }
    if o.split != SPLIT_NONE && o.split != SPLIT_NAMESPACE {
        return refuse(format!(
            "--split must be {} or {}, got {}",
            go_quote(SPLIT_NONE),
            go_quote(SPLIT_NAMESPACE),
            go_quote(&o.split)
        ));
    }
    Ok(())
}
