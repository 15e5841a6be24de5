//! `aws-load-balancer-controller migrate`: upstream's `lbc-migrate` with its flags, messages and
//! output (the translation, the files and the checks live in `albc_model::migrate`), the
//! cluster read with kube's client (`cluster`), upstream's migration console (`--console`,
//! `--port`: `console`), and this build's additions: `--verify` (both ALB stacks built and every
//! derived request routed through each; the console shows its table too), the console over
//! files, and the cutover plan printed after the files.

pub mod cluster;
pub mod console;

use std::io::Write;

use albc_model::goflags::parse_bool;
use albc_model::migrate::options::DEFAULT_OUTPUT_DIR;
use albc_model::migrate::{
    cutover, reader, run, validate_flags, verify, warnings, InputResources, MigrateError,
    MigrateOptions,
};

/// Exit status: migrated (and, with `--verify`, every request routed alike).
pub const EXIT_OK: u8 = 0;
/// Exit status: an error (upstream's, printed after `Error: `).
pub const EXIT_ERROR: u8 = 1;
/// Exit status: `--verify` found requests routed differently, or a Gateway it could not compare.
pub const EXIT_DIFFERENCES: u8 = 2;
/// What `migrate --help` says of the exit status.
pub const EXIT_STATUS_HELP: &str = "Exit status: 0 migrated (with --verify: every derived request \
routed alike by both stacks); 1 an error; 2 --verify found requests routed differently or a Gateway \
it could not compare.";

/// The flags, upstream's names and defaults (`-f` and `--namespaces` take comma lists and repeat).
#[derive(clap::Args, Debug, Clone)]
pub struct MigrateArgs {
    /// Comma-separated input YAML/JSON file paths (e.g. -f file1.yaml,file2.yaml)
    #[arg(short = 'f', long = "file", value_delimiter = ',')]
    pub file: Vec<String>,
    /// Directory containing YAML/JSON files to read
    #[arg(long, default_value = "")]
    pub input_dir: String,
    /// Read resources from a live Kubernetes cluster
    #[arg(long, default_value = "false", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = parse_bool)]
    pub from_cluster: bool,
    /// Comma-separated namespaces to read from (e.g. --namespaces ns-a,ns-b; only with --from-cluster)
    #[arg(long, value_delimiter = ',')]
    pub namespaces: Vec<String>,
    /// Read from all namespaces (only with --from-cluster)
    #[arg(long, default_value = "false", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = parse_bool)]
    pub all_namespaces: bool,
    /// Name of a specific Ingress to migrate (requires exactly one --namespaces value; only with --from-cluster)
    #[arg(long, default_value = "")]
    pub ingress_name: String,
    /// Path to kubeconfig file (only with --from-cluster, defaults to $KUBECONFIG or ~/.kube/config)
    #[arg(long, default_value = "")]
    pub kubeconfig: String,
    /// Directory to write output manifests
    #[arg(long, default_value = DEFAULT_OUTPUT_DIR)]
    pub output_dir: String,
    /// Output format: yaml or json
    #[arg(long, default_value = "yaml")]
    pub output_format: String,
    /// Split output layout. Empty (default) writes one combined file; 'namespace' writes one file per namespace plus a gatewayclass file for cluster-scoped resources
    #[arg(long, default_value = "")]
    pub split: String,
    /// Add gateway.k8s.aws/dry-run annotation to generated Gateway manifests so LBC previews the generated AWS resources without creating them. Pass --dry-run=false to generate live Gateway manifests.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = parse_bool)]
    pub dry_run: bool,
    /// (this build) Build the ALB stack of each migrated Ingress group and of its generated
    /// Gateway with the builders `plan` uses, route every request derived from their rules
    /// through both, and report each answered differently, and each setting that differs.
    #[arg(long, default_value = "false", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = parse_bool)]
    pub verify: bool,
    /// Launch the migration console web UI to compare ingress and gateway dry-run models
    /// (this build: and route every derived request through both; with -f/--input-dir, the
    /// stacks built from the files)
    #[arg(long, default_value = "false", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = parse_bool)]
    pub console: bool,
    /// Local port for the console web server (only with --console) [default: 8080]
    #[arg(long)]
    pub port: Option<u16>,
}

impl MigrateArgs {
    /// The options upstream's command resolves.
    pub fn options(&self) -> MigrateOptions {
        MigrateOptions {
            files: self
                .file
                .iter()
                .filter(|f| !f.is_empty())
                .cloned()
                .collect(),
            input_dir: self.input_dir.clone(),
            from_cluster: self.from_cluster,
            namespaces: self
                .namespaces
                .iter()
                .filter(|n| !n.is_empty())
                .cloned()
                .collect(),
            all_namespaces: self.all_namespaces,
            kubeconfig: self.kubeconfig.clone(),
            ingress_name: self.ingress_name.clone(),
            output_dir: self.output_dir.clone(),
            output_format: self.output_format.clone(),
            split: self.split.clone(),
            dry_run: self.dry_run,
        }
    }
}

/// Runs `migrate`: files under `--output-dir`, upstream's messages and warnings on `err`, the
/// `--verify` report and the cutover plan on `out`; returns the exit status.
pub fn run_command(args: &MigrateArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match migrate(args, out, err) {
        Ok(status) => status,
        Err(e) => {
            let _ = writeln!(err, "Error: {e}");
            EXIT_ERROR
        }
    }
}

fn migrate(
    args: &MigrateArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, MigrateError> {
    if args.console {
        console::run_command(args, err)?;
        return Ok(EXIT_OK);
    }
    if args.port.is_some() {
        return Err(MigrateError::Flags(
            "--port can only be used with --console".into(),
        ));
    }
    let opts = args.options();
    validate_flags(&opts)?;
    let resources = read(&opts, err).map_err(|e| e.context("failed to read input resources"))?;
    let Some(migrated) = run::run(&opts, resources, err)? else {
        return Ok(EXIT_OK);
    };
    let mut status = EXIT_OK;
    if args.verify {
        let cfg = verify::default_model_config()?;
        let report = verify::verify(&migrated.input, &migrated.output, &cfg)?;
        let _ = write!(out, "{}", report.render());
        let _ = writeln!(out);
        if report.failed() {
            status = EXIT_DIFFERENCES;
        }
    }
    let plan = cutover::cutover_plan(
        &migrated.input,
        &migrated.output,
        &migrated.files,
        opts.dry_run,
    );
    let _ = write!(out, "{plan}");
    Ok(status)
}

/// The input: the cluster, or the files (with upstream's checks of what they lack).
fn read(opts: &MigrateOptions, err: &mut dyn Write) -> Result<InputResources, MigrateError> {
    if opts.from_cluster {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| MigrateError::Read(format!("starting the runtime: {e}")))?;
        return runtime.block_on(cluster::read_from_cluster(&cluster::ClusterReaderOptions {
            kubeconfig: opts.kubeconfig.clone(),
            namespaces: opts.namespaces.clone(),
            all_namespaces: opts.all_namespaces,
            ingress_name: opts.ingress_name.clone(),
        }));
    }
    let files = reader::input_files(opts)?;
    let resources = reader::read_files(&files, err)?;
    warnings::check_input_resources(&resources, err);
    Ok(resources)
}
