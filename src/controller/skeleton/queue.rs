//! The work queue of every controller: each key is queued at most once, never processed by two
//! workers at the same time (a change seen during its reconcile queues it again afterwards), and
//! can be scheduled for later (error backoff, periodic resync) by one timer task.
//!
//! Two priorities, as controller-runtime's priority queue: what a term's first full list and the
//! periodic resync queue waits at [`Priority::Low`], so a user's change (a watch event after the
//! list, [`Priority::Normal`]) is reconciled ahead of a cold-start backlog; a key queued low that
//! is added again at normal moves up. Within a priority keys leave in the order they came.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::Hash;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::controller::metrics::{ControllerMetrics, Reconciles};

/// Urgency of a queued key (controller-runtime's `LowPriority` is -100, a watch event 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// A term's initial list and the periodic resync.
    Low,
    /// A change seen by a watch, a retry or a requested requeue.
    Normal,
}

impl Priority {
    /// The `priority` label of `workqueue_depth`, as controller-runtime writes it.
    fn label(self) -> &'static str {
        match self {
            Priority::Low => "-100",
            Priority::Normal => "0",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Order of the ready keys: higher priority first, then first come.
type Slot = (Reverse<Priority>, u64);

struct Inner<K> {
    ready: BTreeMap<Slot, K>,
    /// Each ready key's place in `ready`.
    queued: HashMap<K, Slot>,
    /// Ready keys per priority (`workqueue_depth{priority}`).
    depth: [usize; 2],
    active: HashSet<K>,
    /// Keys added while active, with the highest priority asked: queued again when their
    /// reconcile ends.
    dirty: HashMap<K, Priority>,
    /// Delayed keys by (deadline, sequence); `deadline_of` holds each key's earliest deadline.
    timers: BTreeMap<(Instant, u64), (K, Priority)>,
    deadline_of: HashMap<K, (Instant, u64)>,
    seq: u64,
    /// When each ready key entered the queue (`workqueue_queue_duration_seconds`).
    added_at: HashMap<K, Instant>,
}

/// A deduplicating, per-key serialised queue with two priorities and delayed adds.
pub struct Queue<K> {
    inner: Mutex<Inner<K>>,
    ready_signal: Notify,
    timer_signal: Notify,
    metrics: Reconciles,
}

impl<K: Clone + Eq + Hash> Default for Queue<K> {
    fn default() -> Self {
        Self {
            inner: Mutex::new(Inner {
                ready: BTreeMap::new(),
                queued: HashMap::new(),
                depth: [0; 2],
                active: HashSet::new(),
                dirty: HashMap::new(),
                timers: BTreeMap::new(),
                deadline_of: HashMap::new(),
                seq: 0,
                added_at: HashMap::new(),
            }),
            ready_signal: Notify::new(),
            timer_signal: Notify::new(),
            metrics: ControllerMetrics::default().controller(""),
        }
    }
}

impl<K: Clone + Eq + Hash> Queue<K> {
    /// Reports this queue's `workqueue_*` series (and its controller's) through `metrics`.
    pub fn with_metrics(mut self, metrics: Reconciles) -> Self {
        self.metrics = metrics;
        for p in [Priority::Low, Priority::Normal] {
            self.metrics.set_priority_depth(p.label(), 0);
        }
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<K>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn report(&self, depth: [usize; 2], changed: &[Priority]) {
        for p in changed {
            self.metrics.set_priority_depth(p.label(), depth[p.index()]);
        }
    }

    /// Queues `key` now at normal priority (see [`Queue::add_with`]).
    pub fn add(&self, key: K) {
        self.add_with(key, Priority::Normal);
    }

    /// Queues `key` now at `priority`: a no-op when it already waits at that priority or higher,
    /// a move up when it waits lower, deferred when it is being processed.
    pub fn add_with(&self, key: K, priority: Priority) {
        let mut g = self.lock();
        if g.active.contains(&key) {
            let p = g.dirty.entry(key).or_insert(priority);
            *p = (*p).max(priority);
            return;
        }
        let mut changed = vec![priority];
        match g.queued.get(&key).copied() {
            Some((Reverse(old), _)) if old >= priority => return,
            Some(old) => {
                // Moves up, behind the keys already waiting at the new priority.
                g.ready.remove(&old);
                g.depth[old.0 .0.index()] -= 1;
                changed.push(old.0 .0);
            }
            None => {
                g.added_at.insert(key.clone(), Instant::now());
                self.metrics.added();
            }
        }
        g.seq += 1;
        let slot = (Reverse(priority), g.seq);
        g.ready.insert(slot, key.clone());
        g.queued.insert(key, slot);
        g.depth[priority.index()] += 1;
        let depth = g.depth;
        drop(g);
        self.report(depth, &changed);
        self.ready_signal.notify_one();
    }

    /// Queues `key` at normal priority after `delay`, unless it is already due earlier.
    pub fn add_after(&self, key: K, delay: Duration) {
        self.add_after_with(key, delay, Priority::Normal);
    }

    /// Queues `key` at `priority` after `delay`, unless it is already due earlier.
    pub fn add_after_with(&self, key: K, delay: Duration, priority: Priority) {
        let at = Instant::now() + delay;
        let mut g = self.lock();
        if let Some((old, _)) = g.deadline_of.get(&key) {
            if *old <= at {
                return;
            }
        }
        if let Some(old) = g.deadline_of.remove(&key) {
            g.timers.remove(&old);
        }
        g.seq += 1;
        let slot = (at, g.seq);
        g.timers.insert(slot, (key.clone(), priority));
        g.deadline_of.insert(key, slot);
        drop(g);
        self.timer_signal.notify_one();
    }

    /// Waits for the next ready key and marks it active; call [`Queue::done`] afterwards.
    #[cfg(test)]
    pub async fn next(&self) -> K {
        self.next_timed().await.0
    }

    /// [`Queue::next`], also saying how long the key waited in the queue.
    pub async fn next_timed(&self) -> (K, Duration) {
        loop {
            let signal = self.ready_signal.notified();
            {
                let mut g = self.lock();
                if let Some((slot, k)) = g.ready.pop_first() {
                    g.queued.remove(&k);
                    g.depth[slot.0 .0.index()] -= 1;
                    g.active.insert(k.clone());
                    let waited = g
                        .added_at
                        .remove(&k)
                        .map(|t| t.elapsed())
                        .unwrap_or_default();
                    let (depth, left) = (g.depth, g.ready.len());
                    drop(g);
                    self.report(depth, &[slot.0 .0]);
                    if left > 0 {
                        // Pass the baton: another worker may take the next key.
                        self.ready_signal.notify_one();
                    }
                    return (k, waited);
                }
            }
            signal.await;
        }
    }

    /// Ends the processing of `key`; a change seen meanwhile queues it again.
    pub fn done(&self, key: &K) {
        let again = {
            let mut g = self.lock();
            g.active.remove(key);
            g.dirty.remove(key)
        };
        if let Some(priority) = again {
            self.add_with(key.clone(), priority);
        }
    }

    /// Moves due delayed keys to the ready queue, forever (run it next to the workers).
    pub async fn run_timers(&self) {
        loop {
            let signal = self.timer_signal.notified();
            let next = {
                let mut g = self.lock();
                let now = Instant::now();
                let mut due = Vec::new();
                while let Some((&slot, _)) = g.timers.iter().next() {
                    if slot.0 > now {
                        break;
                    }
                    if let Some((k, p)) = g.timers.remove(&slot) {
                        g.deadline_of.remove(&k);
                        due.push((k, p));
                    }
                }
                let next = g.timers.keys().next().map(|s| s.0);
                drop(g);
                for (k, p) in due {
                    self.add_with(k, p);
                }
                next
            };
            match next {
                Some(at) => {
                    tokio::select! {
                        _ = tokio::time::sleep_until(at) => {}
                        _ = signal => {}
                    }
                }
                None => signal.await,
            }
        }
    }

    /// Keys waiting now (ready, not delayed).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().ready.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn deduplicates_and_serialises_per_key() {
        let q: Queue<&str> = Queue::default();
        q.add("a");
        q.add("a");
        q.add("b");
        assert_eq!(q.len(), 2);
        let k = q.next().await;
        assert_eq!(k, "a");
        // Added while active: not handed out again until done.
        q.add("a");
        assert_eq!(q.next().await, "b");
        assert!(q.is_empty());
        q.done(&"a");
        assert_eq!(q.next().await, "a");
    }

    #[tokio::test]
    async fn delayed_adds_fire_at_the_earliest_deadline() {
        let ms = Duration::from_millis;
        let q: Arc<Queue<&str>> = Arc::new(Queue::default());
        let timers = tokio::spawn({
            let q = q.clone();
            async move { q.run_timers().await }
        });
        q.add_after("a", ms(200));
        q.add_after("a", ms(5000)); // later: ignored
        q.add_after("b", ms(50));
        tokio::time::sleep(ms(120)).await;
        assert_eq!(q.len(), 1);
        assert_eq!(q.next().await, "b");
        tokio::time::sleep(ms(150)).await;
        assert_eq!(q.next().await, "a");
        q.done(&"a");
        // An earlier deadline replaces a later one.
        q.add_after("c", ms(5000));
        q.add_after("c", ms(30));
        tokio::time::sleep(ms(100)).await;
        assert_eq!(q.next().await, "c");
        timers.abort();
    }

    #[tokio::test]
    async fn a_normal_add_moves_a_low_key_ahead_of_the_backlog() {
        let q: Queue<&str> = Queue::default();
        for k in ["a", "b", "c", "d"] {
            q.add_with(k, Priority::Low);
        }
        q.add_with("b", Priority::Low); // no-op: already waiting
        q.add("c"); // a user's change: jumps the low backlog
        q.add("e"); // a new key at normal: behind c, ahead of the backlog
        q.add_with("e", Priority::Low); // never lowers
        assert_eq!(q.len(), 5);
        let order = [
            q.next().await,
            q.next().await,
            q.next().await,
            q.next().await,
            q.next().await,
        ];
        assert_eq!(order, ["c", "e", "a", "b", "d"]);
    }

    #[tokio::test]
    async fn a_change_during_processing_requeues_at_the_highest_priority_asked() {
        let q: Queue<&str> = Queue::default();
        q.add_with("a", Priority::Low);
        assert_eq!(q.next().await, "a");
        q.add_with("b", Priority::Low);
        q.add_with("a", Priority::Low);
        q.add("a");
        q.done(&"a");
        assert_eq!(q.next().await, "a", "requeued at normal, ahead of b");
        assert_eq!(q.next().await, "b");
    }

    #[tokio::test]
    async fn depth_is_reported_per_priority() {
        let mut registry = prometheus_client::registry::Registry::default();
        let m = ControllerMetrics::register(&mut registry);
        let q: Queue<&str> = Queue::default().with_metrics(m.controller("ingress"));
        q.add_with("a", Priority::Low);
        q.add_with("b", Priority::Low);
        q.add("c");
        q.add("b");
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry).unwrap();
        for want in [
            r#"workqueue_depth{name="ingress",controller="ingress",priority="-100"} 1"#,
            r#"workqueue_depth{name="ingress",controller="ingress",priority="0"} 2"#,
        ] {
            assert!(out.contains(want), "no `{want}` in\n{out}");
        }
    }
}
