//! This build's identity, embedded by build.rs: upstream's `version.GitVersion`, `GitCommit` and
//! `BuildDate`, printed by `--version` and `version` and logged once at start.

/// The crate's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// 12 hex digits of the commit built, or "unknown" (built without `.git`).
pub const GIT_COMMIT: &str = env!("ALBC_GIT_COMMIT");
/// The commit's date (or `SOURCE_DATE_EPOCH`), `YYYY-MM-DDTHH:MM:SSZ`, or "unknown".
pub const BUILD_DATE: &str = env!("ALBC_BUILD_DATE");

/// What clap prints after the name for `--version`: `0.1.0 (commit <sha>, built <date>)`.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("ALBC_GIT_COMMIT"),
    ", built ",
    env!("ALBC_BUILD_DATE"),
    ")"
);

/// The line `--version` and `version` print.
pub fn version_line() -> String {
    format!("aws-load-balancer-controller {LONG_VERSION}")
}

/// Logs the build's identity at start with upstream's keys (its `"version"` line).
pub fn log() {
    tracing::info!(
        GitVersion = VERSION,
        GitCommit = GIT_COMMIT,
        BuildDate = BUILD_DATE,
        "version"
    );
}
