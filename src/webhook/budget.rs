//! The in-flight body budget. Admission bodies sit in memory while they are read and decoded,
//! so their total is capped (`--webhook-max-inflight-body-bytes`).
//!
//! A promise holds nothing: a body takes room only once its bytes start to arrive, never for a
//! Content-Length alone, so clients that declare megabytes and send nothing cannot shed anyone.
//! Once a body arrives it holds room for its declared size: charging piece by piece instead let
//! hundreds of half-read bodies split the budget so that none could finish. A body that came
//! whole with its head is already in memory and is never shed (it is counted all the same, so
//! others see the pressure). A body that will not fit is told so (429) before it is sent, when
//! the server has to wait for it.
//!
//! Two shares keep one party from starving the rest: part of the budget is kept for small
//! requests (the ordinary pod and service admissions the cluster depends on), and one peer
//! address may hold at most a quarter of the budget with bodies still arriving, so slow senders
//! from one address cannot shed the API server's admissions.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Mutex;

/// `--webhook-max-inflight-body-bytes` default (defined with the flags).
pub use albc_model::args::DEFAULT_MAX_INFLIGHT_BODY_BYTES;
/// Bodies up to this size count as small and may use the reserve.
pub const SMALL_BODY_BYTES: usize = 256 * 1024;
/// Accounting unit: the budget counts KiB.
const UNIT: usize = 1024;

/// Shared by every admission route of one server.
#[derive(Debug)]
pub struct BodyBudget {
    /// Units free right now; below zero when bodies that came whole overran it.
    free: AtomicIsize,
    /// The whole budget in units.
    total: isize,
    /// Units only small bodies may take.
    reserve: isize,
    /// Units one peer's arriving bodies may hold together.
    peer_max: usize,
    /// Units held per peer by bodies still arriving (bodies that came whole are not counted
    /// here, so the common path takes no lock).
    peers: Mutex<HashMap<IpAddr, usize>>,
}

/// One body's share; grows as bytes arrive and is returned on drop.
#[derive(Debug)]
pub struct Charge<'a> {
    budget: &'a BodyBudget,
    peer: IpAddr,
    /// Units taken from the budget.
    units: usize,
    /// Units of those also counted against the peer.
    peer_units: usize,
    /// Whether the body may use the reserve (its declared or actual size is small).
    small: bool,
}

impl Drop for Charge<'_> {
    fn drop(&mut self) {
        if self.units > 0 {
            self.budget
                .free
                .fetch_add(self.units as isize, Ordering::AcqRel);
        }
        if self.peer_units > 0 {
            let mut peers = self.budget.lock();
            if let Some(held) = peers.get_mut(&self.peer) {
                *held = held.saturating_sub(self.peer_units);
                if *held == 0 {
                    peers.remove(&self.peer);
                }
            }
        }
    }
}

fn units(bytes: usize) -> usize {
    bytes.div_ceil(UNIT)
}

impl BodyBudget {
    pub fn new(max_bytes: usize) -> Self {
        let total = units(max_bytes).max(1);
        let reserve = (total / 8).min(4 * 1024 * 1024 / UNIT);
        BodyBudget {
            free: AtomicIsize::new(total as isize),
            total: total as isize,
            reserve: reserve as isize,
            peer_max: (total / 4).max(1),
            peers: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, usize>> {
        self.peers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An empty share for a body from `peer` that says it will be `declared` bytes long (`None`:
    /// chunked, size unknown).
    pub fn charge(&self, peer: IpAddr, declared: Option<usize>) -> Charge<'_> {
        Charge {
            budget: self,
            peer,
            units: 0,
            peer_units: 0,
            small: declared.is_some_and(|n| n <= SMALL_BODY_BYTES),
        }
    }
}

impl Charge<'_> {
    /// Counts `bytes` in all of a body that came with its head: already in memory, never
    /// refused.
    pub fn whole(&mut self, bytes: usize) {
        let want = units(bytes).max(1).saturating_sub(self.units);
        self.budget.free.fetch_sub(want as isize, Ordering::AcqRel);
        self.units += want;
    }

    /// Whether a body of `bytes` in all would fit the budget and the peer's share right now
    /// (nothing is taken).
    pub fn fits(&self, bytes: usize) -> bool {
        let (want, needed) = self.wanted(bytes);
        want == 0
            || (self.budget.free.load(Ordering::Acquire) >= needed
                && self.peer_allows(&self.budget.lock(), want))
            || self.budget.free.load(Ordering::Acquire) == self.budget.total
    }

    /// Holds room for `bytes` of body in all; `false` when the budget or the peer's share cannot
    /// hold them (the body is then shed).
    pub fn grow_to(&mut self, bytes: usize) -> bool {
        let (want, needed) = self.wanted(bytes);
        if want == 0 {
            return true;
        }
        let budget = self.budget;
        let mut peers = budget.lock();
        if !self.peer_allows(&peers, want) {
            return false;
        }
        let taken = budget
            .free
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |free| {
                (free >= needed).then_some(free - want as isize)
            })
            .is_ok();
        if !taken {
            // A body larger than the whole budget still passes when nothing else is in
            // flight, rather than never.
            if budget.free.load(Ordering::Acquire) != budget.total {
                return false;
            }
            budget.free.fetch_sub(want as isize, Ordering::AcqRel);
        }
        *peers.entry(self.peer).or_default() += want;
        self.units += want;
        self.peer_units += want;
        true
    }

    /// Units to add for `bytes` in all, and the free units that requires (the reserve stays
    /// untouched by a large body).
    fn wanted(&self, bytes: usize) -> (usize, isize) {
        let want = units(bytes).saturating_sub(self.units);
        let small = self.small && bytes <= SMALL_BODY_BYTES;
        let needed = want as isize + if small { 0 } else { self.budget.reserve };
        (want, needed)
    }

    /// The share binds when the peer has other bodies arriving: one body alone may always
    /// grow to the maximum size.
    fn peer_allows(&self, peers: &HashMap<IpAddr, usize>, want: usize) -> bool {
        let of_peer = peers.get(&self.peer).copied().unwrap_or(0);
        of_peer + want <= self.budget.peer_max || of_peer <= self.peer_units
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2));
    const MIB: usize = 1024 * 1024;

    /// Charges `n` bodies of `size` from `peer` (each declared `size`), keeping those that fit.
    fn fill(budget: &BodyBudget, peer: IpAddr, n: usize, size: usize) -> Vec<Charge<'_>> {
        (0..n)
            .filter_map(|_| {
                let mut c = budget.charge(peer, Some(size));
                c.grow_to(size).then_some(c)
            })
            .collect()
    }

    #[test]
    fn declared_bytes_hold_nothing_until_they_arrive() {
        let budget = BodyBudget::new(32 * MIB);
        // A thousand bodies that promise 3 MiB and have sent nothing.
        let promised: Vec<Charge> = (0..1000).map(|_| budget.charge(A, Some(3 * MIB))).collect();
        let from_b = fill(&budget, B, 7, MIB);
        assert_eq!(from_b.len(), 7, "promises took no room");
        drop(promised);
    }

    #[test]
    fn one_peer_holds_at_most_a_quarter_and_large_bodies_leave_the_reserve() {
        let budget = BodyBudget::new(32 * MIB);
        // Peer A: 8 MiB at most, in 3 MiB bodies: two of them (a third would pass 8 MiB).
        let a = fill(&budget, A, 10, 3 * MIB);
        assert_eq!(a.len(), 2);
        // Peer B still has its quarter, and small bodies from anyone still fit.
        let b = fill(&budget, B, 10, 2 * MIB);
        assert_eq!(b.len(), 4);
        // Small ones from A fill what is left of its quarter: (8 MiB - 6 MiB) / 20 KiB.
        let small = fill(&budget, A, 200, 20 * 1024);
        assert_eq!(small.len(), 102);
        drop((a, b, small));
        assert_eq!(
            budget.free.load(Ordering::Acquire),
            (32 * MIB / UNIT) as isize
        );
        assert!(budget.lock().is_empty(), "peer counts returned");
    }

    #[test]
    fn the_reserve_is_kept_for_small_bodies() {
        // 8 MiB: 1 MiB reserve, a peer share of 2 MiB.
        let budget = BodyBudget::new(8 * MIB);
        let peers: Vec<IpAddr> = (1..=8)
            .map(|i| IpAddr::V4(std::net::Ipv4Addr::new(10, 1, 0, i)))
            .collect();
        let big: Vec<Charge> = peers
            .iter()
            .flat_map(|p| fill(&budget, *p, 1, 2 * MIB))
            .collect();
        // 7 MiB are open to large bodies: three 2 MiB ones.
        assert_eq!(big.len(), 3);
        let small = fill(&budget, B, 100, 8 * 1024);
        assert!(
            small.len() >= 100,
            "small admissions fit the reserve: {}",
            small.len()
        );
    }

    #[test]
    fn a_body_that_came_whole_is_counted_never_refused() {
        let budget = BodyBudget::new(MIB);
        let mut whole = budget.charge(A, Some(3 * MIB));
        whole.whole(3 * MIB);
        // Over the budget now: an arriving body is shed until the whole one is answered.
        let mut arriving = budget.charge(B, Some(1024));
        assert!(!arriving.fits(1024));
        assert!(!arriving.grow_to(1024));
        drop(whole);
        assert!(arriving.fits(1024));
        assert!(arriving.grow_to(1024));
    }

    #[test]
    fn a_first_piece_larger_than_the_budget_passes_alone() {
        let budget = BodyBudget::new(MIB);
        let mut first = budget.charge(A, None);
        assert!(first.grow_to(2 * MIB));
        let mut second = budget.charge(B, None);
        assert!(!second.grow_to(2 * MIB));
        drop(first);
        assert!(second.grow_to(2 * MIB));
    }
}
