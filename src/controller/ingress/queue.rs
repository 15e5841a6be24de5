//! The work queue of group reconciles: each key is queued at most once, never processed by two
//! workers at the same time (a change seen during its reconcile queues it again afterwards), and
//! can be scheduled for later (error backoff, periodic resync) by one timer task.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::controller::metrics::{ControllerMetrics, Reconciles};

struct Inner<K> {
    ready: VecDeque<K>,
    queued: HashSet<K>,
    active: HashSet<K>,
    /// Keys added while active: queued again when their reconcile ends.
    dirty: HashSet<K>,
    /// Delayed keys by (deadline, sequence); `deadline_of` holds each key's earliest deadline.
    timers: BTreeMap<(Instant, u64), K>,
    deadline_of: HashMap<K, (Instant, u64)>,
    seq: u64,
    /// When each ready key entered the queue (`workqueue_queue_duration_seconds`).
    added_at: HashMap<K, Instant>,
}

/// A deduplicating, per-key serialised queue with delayed adds.
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
                ready: VecDeque::new(),
                queued: HashSet::new(),
                active: HashSet::new(),
                dirty: HashSet::new(),
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
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<K>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `key` now (no-op when already queued; deferred when being processed).
    pub fn add(&self, key: K) {
        let mut g = self.lock();
        if g.active.contains(&key) {
            g.dirty.insert(key);
            return;
        }
        if g.queued.insert(key.clone()) {
            g.added_at.insert(key.clone(), Instant::now());
            g.ready.push_back(key);
            let depth = g.ready.len();
            drop(g);
            self.metrics.added();
            self.metrics.set_depth(depth);
            self.ready_signal.notify_one();
        }
    }

    /// Queues `key` after `delay`, unless it is already due earlier.
    pub fn add_after(&self, key: K, delay: Duration) {
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
        g.timers.insert(slot, key.clone());
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
                if let Some(k) = g.ready.pop_front() {
                    g.queued.remove(&k);
                    g.active.insert(k.clone());
                    let waited = g
                        .added_at
                        .remove(&k)
                        .map(|t| t.elapsed())
                        .unwrap_or_default();
                    let depth = g.ready.len();
                    drop(g);
                    self.metrics.set_depth(depth);
                    if depth > 0 {
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
        if again {
            self.add(key.clone());
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
                    if let Some(k) = g.timers.remove(&slot) {
                        g.deadline_of.remove(&k);
                        due.push(k);
                    }
                }
                let next = g.timers.keys().next().map(|s| s.0);
                drop(g);
                for k in due {
                    self.add(k);
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
}
