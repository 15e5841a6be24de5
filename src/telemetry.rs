//! Logging: tracing-subscriber with upstream's `--log-level` (info|debug) and `--log-format` text|json.

use crate::config::LogFormat;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. `RUST_LOG`, when set, overrides `--log-level` for fine filters.
pub fn init(level: &str, format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        // Our own crate at the chosen level; dependencies stay at warn unless asked for.
        EnvFilter::new(format!("warn,aws_load_balancer_controller={level}"))
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
