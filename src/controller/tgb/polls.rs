//! When to poll target health again for a binding whose readiness gates wait: each poll waits
//! as long again as the targets have already waited, plus a sub-second first step, up to
//! `--targetgroupbinding-requeue-duration`. Measured from the last registration, so the
//! reconciles that watch events set off in between (each a poll in its own right) never push
//! the schedule out.
//!
//! After a registration the polls fall at `first`, 3×, 7×, 15× `first`, … (`first` 500 ms:
//! 0.5, 1.5, 3.5, 7.5 s, then every 15 s). A target reported healthy `h` seconds after its
//! registration is seen by `2h + first` at the latest. That is as many DescribeTargetHealth
//! calls as the schedule it replaced (1, 3, 7, 15 s, then every 15 s): four in the first 15 s,
//! where upstream makes one per 15 s throughout (and so held every gated rollout wave back up
//! to 15 s after its targets were healthy).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// First poll after a registration. AWS reports a target healthy after at least one health
/// check interval (≥ 5 s), so the polls before that cost one call per doubling and no more.
pub const FIRST_POLL: Duration = Duration::from_millis(500);

/// Per-binding poll anchors: since when its gates have waited (its last registration, or the
/// first reconcile that found a gate waiting).
pub struct Polls {
    first: Duration,
    cap: Duration,
    since: Mutex<HashMap<String, Instant>>,
}

impl Polls {
    /// `cap`: the requeue period (also bounds the first step, for tests that shorten it).
    pub fn new(first: Duration, cap: Duration) -> Self {
        Self {
            first: first.min(cap),
            cap,
            since: Mutex::new(HashMap::new()),
        }
    }

    /// A reconcile of `key` at `now` found some gate waiting; `registered`: it registered or
    /// deregistered targets (their health starts over). Returns when to poll next.
    pub fn waiting(&self, key: &str, registered: bool, now: Instant) -> Duration {
        let mut since = self.since.lock().unwrap_or_else(|p| p.into_inner());
        let anchor = match since.get_mut(key) {
            Some(at) if !registered => *at,
            Some(at) => {
                *at = now;
                now
            }
            None => *since.entry(key.to_string()).or_insert(now),
        };
        (now.saturating_duration_since(anchor) + self.first).min(self.cap)
    }

    /// Every gate of `key` is True (or it has none): no polls until something changes.
    pub fn settled(&self, key: &str) {
        self.since
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn polls_fall_at_1_3_7_15_times_the_first_step_then_every_requeue_period() {
        let p = Polls::new(FIRST_POLL, Duration::from_secs(15));
        let t0 = Instant::now();
        let mut at = t0;
        let mut times = Vec::new();
        let mut delay = p.waiting("ns/b", true, at);
        for _ in 0..7 {
            at += delay;
            times.push((at - t0).as_millis());
            delay = p.waiting("ns/b", false, at);
        }
        assert_eq!(
            times,
            vec![500, 1_500, 3_500, 7_500, 15_500, 30_500, 45_500]
        );
    }

    /// Watch events between polls reconcile (and so describe) too; with a per-reconcile
    /// doubling they pushed the next poll out (a target healthy after 1 s waited until 4 s+).
    #[test]
    fn reconciles_between_polls_do_not_push_the_schedule_out() {
        let p = Polls::new(FIRST_POLL, Duration::from_secs(15));
        let t0 = Instant::now();
        p.waiting("ns/b", true, t0);
        for n in 1..5 {
            p.waiting("ns/b", false, t0 + ms(20 * n));
        }
        assert_eq!(p.waiting("ns/b", false, t0 + ms(500)), ms(1_000));
    }

    #[test]
    fn a_registration_restarts_the_schedule_and_settling_forgets_it() {
        let p = Polls::new(FIRST_POLL, Duration::from_secs(15));
        let t0 = Instant::now();
        p.waiting("ns/b", true, t0);
        assert_eq!(p.waiting("ns/b", false, t0 + ms(7_000)), ms(7_500));
        assert_eq!(p.waiting("ns/b", true, t0 + ms(8_000)), FIRST_POLL);
        assert_eq!(p.waiting("ns/other", false, t0 + ms(8_000)), FIRST_POLL);
        p.settled("ns/b");
        assert_eq!(p.waiting("ns/b", false, t0 + ms(20_000)), FIRST_POLL);
    }

    #[test]
    fn a_requeue_period_shorter_than_the_first_step_bounds_every_poll() {
        let p = Polls::new(FIRST_POLL, ms(200));
        let t0 = Instant::now();
        assert_eq!(p.waiting("ns/b", true, t0), ms(200));
        assert_eq!(p.waiting("ns/b", false, t0 + ms(5_000)), ms(200));
    }
}
