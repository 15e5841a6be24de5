//! Refills: objects an index chose not to keep (it keeps only the ones some consumer reads,
//! e.g. the pods behind a TargetGroupBinding) that became wanted, listed again by namespace and
//! label or field selector, a page at a time, and handed to every index of the kind as if the
//! watch had delivered them.
//!
//! The kind's driver runs a refill between two watch events, the watch paused meanwhile: the
//! list it issues is at least as new as every event already applied, so it cannot bring back
//! an object whose deletion was applied; events still queued behind it are older or newer
//! versions that the watch then applies in order, ending on the latest, as after any relist.
//! A refill asked for before the driver started is not needed (its first list reads every
//! object with the scope as it is then) and is not made.

use std::collections::VecDeque;
use std::sync::Mutex;

/// One refill: the objects of `namespace` that the label selector `labels` and the field
/// selector `fields` match (either empty: no condition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refill {
    pub ticket: u64,
    pub namespace: String,
    pub labels: String,
    pub fields: String,
}

#[derive(Debug, Default)]
struct State {
    /// The driver has started: refills are made from now on.
    running: bool,
    last: u64,
    queue: VecDeque<Refill>,
}

/// The refills asked of one kind, made in order by its driver. Shared with the indexes that
/// ask (through [`super::Kind::refills`]).
#[derive(Debug)]
pub struct Refills {
    state: Mutex<State>,
    wake: tokio::sync::Notify,
    /// The last ticket made (tickets are made in order).
    done: tokio::sync::watch::Sender<u64>,
}

impl Default for Refills {
    fn default() -> Self {
        Self {
            state: Mutex::default(),
            wake: tokio::sync::Notify::new(),
            done: tokio::sync::watch::Sender::new(0),
        }
    }
}

impl Refills {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Asks for the objects of `namespace` that the label selector `labels` and the field
    /// selector `fields` match (either empty: no condition). Returns the ticket to
    /// [`wait`](Refills::wait) on, or `None` when no refill is needed because the watch has not
    /// started. The same refill asked again while it waits is one refill.
    pub fn request(&self, namespace: &str, labels: &str, fields: &str) -> Option<u64> {
        let ticket = {
            let mut st = self.lock();
            if !st.running {
                return None;
            }
            let queued = st
                .queue
                .iter()
                .find(|r| r.namespace == namespace && r.labels == labels && r.fields == fields);
            if let Some(r) = queued {
                return Some(r.ticket);
            }
            st.last += 1;
            let ticket = st.last;
            st.queue.push_back(Refill {
                ticket,
                namespace: namespace.to_string(),
                labels: labels.to_string(),
                fields: fields.to_string(),
            });
            ticket
        };
        self.wake.notify_one();
        Some(ticket)
    }

    /// Whether refill `ticket` has been made.
    pub fn is_done(&self, ticket: u64) -> bool {
        *self.done.borrow() >= ticket
    }

    /// Returns once refill `ticket` has been made.
    pub async fn wait(&self, ticket: u64) {
        let mut rx = self.done.subscribe();
        let _ = rx.wait_for(|d| *d >= ticket).await;
    }

    /// The driver starts: refills asked from now on are made. (These four are the driver's;
    /// tests of the indexes that ask play the driver with them.)
    pub(crate) fn start(&self) {
        self.lock().running = true;
    }

    pub(crate) fn pop(&self) -> Option<Refill> {
        self.lock().queue.pop_front()
    }

    /// The next refill to make, once there is one.
    pub(crate) async fn next(&self) -> Refill {
        loop {
            if let Some(r) = self.pop() {
                return r;
            }
            self.wake.notified().await;
        }
    }

    /// Refill `ticket` was made (or given up on: see the driver).
    pub(crate) fn finish(&self, ticket: u64) {
        self.done.send_if_modified(|d| {
            let newer = ticket > *d;
            if newer {
                *d = ticket;
            }
            newer
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn refills_are_made_once_running_in_order_and_once_each() {
        let r = Refills::default();
        assert_eq!(
            r.request("ns", "app=web", ""),
            None,
            "not running: not needed"
        );
        assert!(r.pop().is_none());
        r.start();
        let a = r.request("ns", "app=web", "").unwrap();
        assert_eq!(
            r.request("ns", "app=web", ""),
            Some(a),
            "asked again while queued"
        );
        let b = r.request("ns", "", "metadata.name=p").unwrap();
        assert!(b > a);
        assert!(!r.is_done(a));
        let first = r.next().await;
        assert_eq!((first.ticket, first.labels.as_str()), (a, "app=web"));
        r.finish(a);
        assert!(r.is_done(a) && !r.is_done(b));
        r.wait(a).await;
        let second = r.next().await;
        assert_eq!(
            (second.ticket, second.fields.as_str()),
            (b, "metadata.name=p")
        );
        r.finish(b);
        r.wait(b).await;
        let c = r.request("ns", "app=web", "").unwrap();
        assert!(c > b, "a refill made is asked anew");
    }
}
