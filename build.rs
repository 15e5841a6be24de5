//! Embeds the build's identity, as upstream's `version.GitCommit` and `version.BuildDate`:
//! `ALBC_GIT_COMMIT` (12 hex digits of HEAD) and `ALBC_BUILD_DATE` (`YYYY-MM-DDTHH:MM:SSZ`, UTC).
//!
//! Reproducible: the date is `SOURCE_DATE_EPOCH` when set, else the commit's date, never the
//! clock. Either is "unknown" when it cannot be learnt (no `.git`, as in the Docker build
//! context, or no `git`); the build never fails for it. `ALBC_GIT_COMMIT` set in the environment
//! (the Dockerfile's build argument) wins over git.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=ALBC_GIT_COMMIT");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");

    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    // Only this repository's own .git: never a parent directory's repository.
    let git = root.join(".git").exists();
    if git {
        for path in git_rerun_paths(&root.join(".git")) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }

    let from_git = |args: &[&str]| if git { git_out(&root, args) } else { None };
    let commit = non_empty_env("ALBC_GIT_COMMIT")
        .or_else(|| from_git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_string());
    let epoch =
        non_empty_env("SOURCE_DATE_EPOCH").or_else(|| from_git(&["log", "-1", "--format=%ct"]));
    let date = epoch
        .and_then(|s| s.trim().parse::<i64>().ok())
        .map(rfc3339_utc)
        .unwrap_or_else(|| "unknown".to_string());

    println!("cargo:rustc-env=ALBC_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=ALBC_BUILD_DATE={date}");
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty() && !v.contains(char::is_whitespace))
}

fn git_out(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty() && !text.contains(char::is_whitespace))
        .then_some(text)
}

/// HEAD and the ref it points to (loose, or packed-refs), so a commit or checkout reruns this
/// script and nothing else does. `.git` is a directory, or a file `gitdir: <path>` in a worktree
/// (whose branch refs live in the common directory named by `<gitdir>/commondir`). Only existing
/// files are named: Cargo reruns the script on every build for a missing one.
fn git_rerun_paths(dot_git: &Path) -> Vec<PathBuf> {
    let Some(gitdir) = resolve_gitdir(dot_git) else {
        return Vec::new();
    };
    let common = std::fs::read_to_string(gitdir.join("commondir"))
        .map(|c| gitdir.join(c.trim()))
        .unwrap_or_else(|_| gitdir.clone());
    let head = gitdir.join("HEAD");
    let mut paths = vec![head.clone()];
    if let Ok(text) = std::fs::read_to_string(&head) {
        if let Some(reference) = text.trim().strip_prefix("ref:") {
            let reference = reference.trim();
            paths.push(gitdir.join(reference));
            paths.push(common.join(reference));
        }
    }
    paths.push(common.join("packed-refs"));
    paths.retain(|p| p.is_file());
    paths.dedup();
    paths
}

fn resolve_gitdir(dot_git: &Path) -> Option<PathBuf> {
    if dot_git.is_dir() {
        return Some(dot_git.to_path_buf());
    }
    let text = std::fs::read_to_string(dot_git).ok()?;
    let dir = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
    let dir = if dir.is_absolute() {
        dir
    } else {
        dot_git.parent()?.join(dir)
    };
    dir.is_dir().then_some(dir)
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (upstream's BuildDate format).
fn rfc3339_utc(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}
