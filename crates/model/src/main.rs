//! `albc-model plan`: the controller's `plan` (same flags, same output) in a binary that builds in
//! minutes, without the AWS SDK — the first command to run on a fresh clone.

use std::process::ExitCode;

use albc_model::plan::PlanArgs;
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "albc-model",
    version,
    about = "The AWS Load Balancer Controller's model, offline (no cluster, no AWS)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    // Boxed: it carries the controller's whole flag set.
    /// Print, per Ingress group, the AWS stack a set of manifests would produce (offline).
    #[command(after_help = albc_model::plan::EXIT_STATUS_HELP)]
    Plan(Box<PlanArgs>),
}

fn main() -> ExitCode {
    let Command::Plan(args) = Cli::parse().command;
    // The controller binary's `plan` runs the same function: same output, same exit status.
    albc_model::plan::command(*args)
}
