//! glibc's malloc settings for a long-running controller, applied by restarting the process
//! image once with `GLIBC_TUNABLES` (the only way without unsafe code: glibc reads tunables
//! when the program loads). Same pid, same arguments; a user's own tunables win.
//!
//! Why: by default glibc raises its mmap threshold to the size of every large block freed
//! (up to 32 MiB), so after the first list of 13,000 Pods (list pages, staging tables) every
//! later buffer below that size lands in a thread arena, and what is freed there is seldom
//! returned; each thread that allocates also gets an arena of its own. Measured with
//! `cargo bench --profile perf --bench bench -- tgb-process`: a fixed 128 KiB threshold and
//! two arenas (the runtime's two workers share one with the main thread's) hold the steady
//! RSS ~5 MiB lower, with the same heap.

use std::ffi::{OsStr, OsString};

/// The environment variable glibc reads its tunables from.
pub const ENV: &str = "GLIBC_TUNABLES";
/// Set on the restart, so it happens at most once whatever the loader leaves of [`ENV`]
/// (glibc 2.36 cuts the value at its first `:` in the process's own environment).
pub const RESTARTED: &str = "AWS_LBC_MALLOC_TUNED";
/// Ours: a fixed mmap threshold (glibc's default value, no longer moved by frees) and at most
/// two malloc arenas.
pub const TUNABLES: &str = "glibc.malloc.mmap_threshold=131072:glibc.malloc.arena_max=2";

/// The `GLIBC_TUNABLES` value to restart with, or `None` when the current one already sets
/// malloc's arenas or mmap threshold (ours after the restart, or the user's choice).
pub fn tuned(current: Option<&OsStr>) -> Option<OsString> {
    let current = current.map(|c| c.to_string_lossy().into_owned());
    match current.as_deref() {
        None | Some("") => Some(TUNABLES.into()),
        Some(c)
            if c.split(':').any(|t| {
                t.starts_with("glibc.malloc.arena_max=")
                    || t.starts_with("glibc.malloc.mmap_threshold=")
            }) =>
        {
            None
        }
        Some(c) => Some(format!("{TUNABLES}:{c}").into()),
    }
}

/// Restarts this process with [`tuned`] tunables where glibc is the C library and they are not
/// set yet. Call first thing, before any thread starts. Returns only when it did not restart
/// (not needed, not glibc, or the exec failed: the process then runs with glibc's defaults).
pub fn apply() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    restart();
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn restart() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os(RESTARTED).is_some() {
        return;
    }
    let Some(value) = tuned(std::env::var_os(ENV).as_deref()) else {
        return;
    };
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
    // Replaces the process image (same pid) and returns only on failure.
    let _ = std::process::Command::new(&exe)
        .arg0(arg0)
        .args(args)
        .env(ENV, value)
        .env(RESTARTED, "1")
        .exec();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ours_are_added_once_and_a_users_malloc_tunables_win() {
        assert_eq!(tuned(None), Some(TUNABLES.into()));
        assert_eq!(tuned(Some(OsStr::new(""))), Some(TUNABLES.into()));
        let other = "glibc.pthread.rseq=0";
        assert_eq!(
            tuned(Some(OsStr::new(other))),
            Some(format!("{TUNABLES}:{other}").into())
        );
        // After the restart (as set, or as glibc 2.36 leaves it): nothing more to do.
        assert_eq!(
            tuned(Some(OsStr::new("glibc.malloc.mmap_threshold=131072"))),
            None
        );
        assert_eq!(tuned(Some(OsStr::new(TUNABLES))), None);
        assert_eq!(
            tuned(Some(OsStr::new(&format!("{TUNABLES}:{other}")))),
            None
        );
        // The user's own choice of either is kept as it is.
        assert_eq!(tuned(Some(OsStr::new("glibc.malloc.arena_max=8"))), None);
        assert_eq!(
            tuned(Some(OsStr::new("glibc.malloc.mmap_threshold=65536"))),
            None
        );
    }
}
