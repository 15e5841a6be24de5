//! The binary's command line: the controller's flag groups (from `albc_model::args`, shared with
//! the SDK-free `albc-model plan`) and the subcommands that need this crate (`certs`, `diff`,
//! `migrate`, `version`).

use clap::{Parser, Subcommand};

pub use albc_model::args::*;

// `config` validates `--webhook-cert-validity-days` without the certificate library.
const _: () = assert!(albc_model::config::MAX_SERVING_DAYS == webhook_certs::MAX_SERVING_DAYS);

#[derive(Debug, Parser)]
#[command(
    name = "aws-load-balancer-controller",
    version = crate::build_info::LONG_VERSION,
    about = "Drop-in Rust replacement for the Kubernetes AWS Load Balancer Controller",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub controller: ControllerArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Webhook certificate tooling.
    #[command(subcommand)]
    Certs(CertsCommand),
    // Boxed: it carries the controller's whole flag set.
    /// Print, per Ingress group, the AWS stack a set of manifests would produce (offline).
    #[command(after_help = crate::plan::EXIT_STATUS_HELP)]
    Plan(Box<crate::plan::PlanArgs>),
    /// Print the AWS and Kubernetes writes a reconcile would make now, without making them.
    Diff(Box<crate::diff::DiffArgs>),
    /// Translate Ingresses to Gateway API objects (upstream's lbc-migrate); --verify routes
    /// every derived request through both ALB stacks; --console serves the migration console.
    #[command(after_help = crate::migrate::EXIT_STATUS_HELP)]
    Migrate(Box<crate::migrate::MigrateArgs>),
    /// Print the version, commit and build date (as --version).
    Version,
}

#[derive(Debug, Subcommand)]
pub enum CertsCommand {
    /// Write ca.crt, tls.crt and tls.key for the webhook Service.
    Generate(crate::certs::generate::CertsGenerateArgs),
}

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;
