//! The in-flight body budget. Admission bodies sit in memory while they are read and decoded,
//! so their total is capped (`--webhook-max-inflight-body-bytes`): a request that would exceed
//! it is shed with 429 before a byte of its body is read, and memory stays flat under a flood.
//!
//! Part of the budget is kept for small requests, so a flood of large bodies cannot starve the
//! ordinary pod and service admissions the cluster depends on.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `--webhook-max-inflight-body-bytes` default (defined with the flags).
pub use crate::args::DEFAULT_MAX_INFLIGHT_BODY_BYTES;
/// Bodies up to this size count as small and may use the reserve.
pub const SMALL_BODY_BYTES: usize = 256 * 1024;
/// Accounting unit: permits are KiB so that large budgets fit a semaphore's permit count.
const UNIT: usize = 1024;

/// Shared by every admission route of one server.
///
/// Nothing ever waits for room (a request that does not fit is shed), so the budget is one
/// atomic count of free units rather than a semaphore, whose release takes a lock (#24).
#[derive(Debug)]
pub struct BodyBudget {
    /// Units free right now.
    free: AtomicUsize,
    /// Units only small bodies may take.
    reserve: usize,
    /// Units a large body may take at most (the budget minus the reserve).
    large_max: usize,
}

/// Held while a body is in memory; returns its share on drop.
#[derive(Debug)]
pub struct Taken<'a> {
    budget: &'a BodyBudget,
    units: usize,
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        self.budget.free.fetch_add(self.units, Ordering::AcqRel);
    }
}

impl BodyBudget {
    pub fn new(max_bytes: usize) -> Self {
        let total = max_bytes.div_ceil(UNIT).max(1);
        let reserve = (total / 8).min(4 * 1024 * 1024 / UNIT);
        BodyBudget {
            free: AtomicUsize::new(total),
            reserve,
            large_max: (total - reserve).max(1),
        }
    }

    /// Takes room for a body of `bytes`, or `None` when the budget cannot hold it right now.
    pub fn try_take(&self, bytes: usize) -> Option<Taken<'_>> {
        let units = bytes.div_ceil(UNIT).max(1);
        let (units, needed) = if bytes > SMALL_BODY_BYTES {
            // A large body leaves the reserve untouched; one larger than the whole budget
            // still gets through alone rather than never.
            let units = units.min(self.large_max);
            (units, units + self.reserve)
        } else {
            (units, units)
        };
        self.free
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |free| {
                (free >= needed).then(|| free - units)
            })
            .ok()
            .map(|_| Taken {
                budget: self,
                units,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_bodies_leave_the_reserve_to_small_ones() {
        let budget = BodyBudget::new(32 * 1024 * 1024);
        let big = 3 * 1024 * 1024;
        let held: Vec<Taken> = std::iter::from_fn(|| budget.try_take(big))
            .take(100)
            .collect();
        // 28 MiB is open to large bodies: nine of 3 MiB, then they are shed.
        assert_eq!(held.len(), 9);
        let small: Vec<Taken> = (0..100).map_while(|_| budget.try_take(20 * 1024)).collect();
        assert!(
            small.len() >= 100,
            "small admissions still fit: {}",
            small.len()
        );
        drop(held);
        assert!(budget.try_take(big).is_some(), "freed on drop");
    }

    #[test]
    fn a_body_larger_than_the_budget_still_passes_alone() {
        let budget = BodyBudget::new(1024 * 1024);
        let first = budget.try_take(3 * 1024 * 1024);
        assert!(first.is_some());
        assert!(budget.try_take(3 * 1024 * 1024).is_none());
        drop(first);
        assert!(budget.try_take(3 * 1024 * 1024).is_some());
    }
}
