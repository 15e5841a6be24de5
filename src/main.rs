//! Entry point: parse flags, then hand over to the subcommand or the controller.

use aws_load_balancer_controller::cli::{CertsCommand, Cli, Command};
use aws_load_balancer_controller::{app, build_info, certs, config::Config, telemetry};
use clap::Parser;
use std::process::ExitCode;

mod nofile;

fn main() -> ExitCode {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let cli = Cli::parse();
    if let Some(Command::Diff(args)) = cli.command {
        // 0 no writes, 2 writes pending (with --exit-code), 1 error.
        return match aws_load_balancer_controller::diff::run(*args, &mut std::io::stdout().lock()) {
            Ok(code) => ExitCode::from(code),
            Err(error) => {
                eprintln!("error: {error:#}");
                ExitCode::FAILURE
            }
        };
    }
    if let Some(Command::Migrate(args)) = &cli.command {
        // 0 migrated, 1 error (upstream's `Error: ...`), 2 --verify found differences.
        let status = aws_load_balancer_controller::migrate::run_command(
            args,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        );
        return ExitCode::from(status);
    }
    if let Some(Command::Plan(args)) = cli.command {
        // 0 every object planned, 1 one failed its model build or plan failed (as albc-model plan).
        return aws_load_balancer_controller::plan::command(*args);
    }
    let result = match cli.command {
        Some(Command::Certs(CertsCommand::Generate(args))) => certs::generate::run(&args),
        Some(Command::Version) => {
            println!("{}", build_info::version_line());
            Ok(())
        }
        Some(Command::Plan(_)) | Some(Command::Diff(_)) | Some(Command::Migrate(_)) => {
            unreachable!("handled above")
        }
        None => run_controller(&cli.controller),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.is::<Logged>() => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

// jemalloc, configured at build time (`.cargo/config.toml`): under glibc's malloc the freed
// memory of a large first list (13,000 Pods) stays in per-thread arenas, which only a restart
// with GLIBC_TUNABLES could prevent. Figures in docs/performance.md. Feature `heap-profile`
// keeps the system allocator, the one heaptrack intercepts (jemalloc's calls are invisible to it).
#[cfg(all(not(target_env = "msvc"), not(feature = "heap-profile")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn run_controller(args: &aws_load_balancer_controller::cli::ControllerArgs) -> anyhow::Result<()> {
    let cfg = Config::from_args(args)?;
    telemetry::init(cfg.log_level, cfg.log_format);
    match nofile::raise_soft_limit() {
        Some((before, after)) if after > before => {
            tracing::info!(from = before, to = after, "raised the open-file soft limit")
        }
        Some(_) => {}
        None => tracing::warn!("cannot raise the open-file soft limit"),
    }
    let result = app::runtime()
        .map_err(anyhow::Error::from)
        .and_then(|rt| rt.block_on(app::run(cfg)));
    if let Err(error) = &result {
        // Logged like every other line (JSON by default), as upstream's last words are; main
        // then only sets the exit code.
        tracing::error!(error = format!("{error:#}"), "problem running manager");
        return Err(Logged.into());
    }
    result
}

/// An error already written to the log.
#[derive(Debug)]
struct Logged;

impl std::fmt::Display for Logged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("logged")
    }
}

impl std::error::Error for Logged {}
