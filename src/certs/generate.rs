//! `aws-load-balancer-controller certs generate`: writes ca.crt, tls.crt and tls.key.

use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::Path;
use webhook_certs::{generate, ServingSpec, DEFAULT_CA_DAYS};

/// The flags of `certs generate` (the subcommand is in `cli`, as `plan`'s and `diff`'s are).
#[derive(Debug, Args)]
pub struct CertsGenerateArgs {
    /// Webhook Service name.
    #[arg(long)]
    pub service: String,
    /// Webhook Service namespace.
    #[arg(long)]
    pub namespace: String,
    /// Output directory (created if missing).
    #[arg(long)]
    pub out: std::path::PathBuf,
    /// Serving certificate validity in days (at most 365).
    #[arg(long, default_value_t = webhook_certs::DEFAULT_SERVING_DAYS)]
    pub days: u32,
    /// Cluster DNS domain.
    #[arg(long, default_value = "cluster.local")]
    pub dns_domain: String,
    /// Extra SANs (host names or IPs), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub extra_san: Vec<String>,
}

fn write_file(dir: &Path, name: &str, contents: &str, private: bool) -> anyhow::Result<()> {
    let path = dir.join(name);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts
        .open(&path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    f.write_all(contents.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Generates a CA and serving certificate into `args.out`.
pub fn run(args: &CertsGenerateArgs) -> anyhow::Result<()> {
    let mut spec = ServingSpec::new(&args.service, &args.namespace);
    spec.days = args.days;
    spec.dns_domain = args.dns_domain.clone();
    spec.extra_sans = args.extra_san.clone();
    let bundle = generate(&spec, DEFAULT_CA_DAYS).context("cannot generate certificates")?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    write_file(&args.out, "ca.crt", &bundle.ca.cert_pem, false)?;
    write_file(&args.out, "tls.crt", &bundle.cert_pem, false)?;
    write_file(&args.out, "tls.key", &bundle.key_pem, true)?;
    eprintln!(
        "wrote ca.crt, tls.crt, tls.key to {} for {} (valid {} days)",
        args.out.display(),
        spec.dns_names().join(", "),
        spec.days
    );
    Ok(())
}
