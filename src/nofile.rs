//! Raises the soft open-file limit to the hard limit at start, as the Go runtime does (since Go
//! 1.19) for upstream's binary. Every webhook connection is a file descriptor: with the common
//! soft default of 1024, about a thousand idle clients would make `accept` fail and real
//! admission calls time out long before `--webhook-max-connections` is reached.
//!
//! Lives in the binary, not the library (which forbids `unsafe`): two libc calls, nothing else.

/// The soft limit before and after, or `None` where this is not supported or the call failed.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
pub fn raise_soft_limit() -> Option<(u64, u64)> {
    #[repr(C)]
    struct RLimit {
        cur: u64,
        max: u64,
    }
    const RLIMIT_NOFILE: i32 = 7;
    extern "C" {
        fn getrlimit(resource: i32, rlim: *mut RLimit) -> i32;
        fn setrlimit(resource: i32, rlim: *const RLimit) -> i32;
    }
    let mut limit = RLimit { cur: 0, max: 0 };
    // SAFETY: `limit` is a valid, writable `struct rlimit` (two 64-bit words on 64-bit Linux).
    if unsafe { getrlimit(RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    let before = limit.cur;
    if limit.cur >= limit.max {
        return Some((before, before));
    }
    limit.cur = limit.max;
    // SAFETY: as above; raising the soft limit up to the hard one needs no privilege.
    if unsafe { setrlimit(RLIMIT_NOFILE, &limit) } != 0 {
        return None;
    }
    Some((before, limit.cur))
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
pub fn raise_soft_limit() -> Option<(u64, u64)> {
    None
}
