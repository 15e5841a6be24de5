//! `aws-load-balancer-controller certs generate`: writes ca.crt, tls.crt and tls.key.

use crate::args::CertsGenerateArgs;
use anyhow::Context;
use std::io::Write;
use std::path::Path;
use webhook_certs::{generate, ServingSpec, DEFAULT_CA_DAYS};

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
