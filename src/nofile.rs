//! Raises the soft open-file limit to the hard limit at start, as the Go runtime does (since Go
//! 1.19) for upstream's binary. Every webhook connection is a file descriptor: with the common
//! soft default of 1024, about a thousand idle clients would make `accept` fail and real
//! admission calls time out long before `--webhook-max-connections` is reached.

/// The soft limit before and after, or `None` where this is not supported or the call failed.
pub fn raise_soft_limit() -> Option<(u64, u64)> {
    let (before, _hard) = rlimit::getrlimit(rlimit::Resource::NOFILE).ok()?;
    // Asks for the maximum; the crate clamps it to the hard limit (and macOS's own cap).
    let after = rlimit::increase_nofile_limit(u64::MAX).ok()?;
    Some((before, after))
}
