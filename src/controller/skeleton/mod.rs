//! One controller skeleton, in the shape of kube-rs controller-rs's
//! `Controller::new(..).run(reconcile, error_policy, ctx)`: everything the controllers under
//! `src/controller` share lives here once.
//!
//! - The queue and its `workqueue_*` / `controller_runtime_*` series ([`Queue`]), fed by the
//!   controller's watch triggers ([`Source`]) only while a term of leadership has attached it.
//! - A term of leadership ([`Controller::run`]): wait for the caches, attach the triggers, queue
//!   every key at low priority, run the workers and the timers until `shutdown`; the triggers are
//!   detached when the term ends, however it ends.
//! - Each pass (see `pass`): its log span ([`crate::telemetry::reconcile_span`]), the top-talkers
//!   count, the shadow-mode ledger scope ([`crate::aws::shadow::scope`]), panic recovery, the
//!   `Reconciler error` line, the per-key backoff, the requeue (the resync at low priority) and
//!   the pass's result in the metrics.
//! - A failed step as upstream reports it ([`Failed`]: event reason and `Failed <step> due to`
//!   note, [`Events::warned`](crate::controller::Events::warned)) and an object's API handle
//!   ([`api_of`]).
//!
//! A controller brings its key, its triggers, its context and its reconcile function; the
//! smallest whole controller is `tests::minimal` (its key source, its reconcile and its term):
//!
//! ```ignore
//! struct Names { names: Vec<String>, queue: QueueSlot<String> }
//!
//! impl Source<String> for Names {
//!     fn slot(&self) -> &QueueSlot<String> { &self.queue }
//!     fn resync_all(&self) { self.queue.add_all(self.names.iter().cloned(), Priority::Low) }
//! }
//!
//! async fn reconcile(ctx: Arc<Ctx>, name: String) -> Result<Option<Duration>, Error> {
//!     ctx.greet(&name).await?;
//!     Ok(None)
//! }
//!
//! Controller::new(&metrics, "names")
//!     .run(&names, async {}, &shutdown, ctx, reconcile)
//!     .await;
//! ```

mod failed;
mod pass;
pub mod queue;
#[cfg(test)]
mod tests;

use std::fmt::Display;
use std::future::Future;
use std::hash::Hash;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::core::NamespaceResourceScope;
use kube::{Api, Resource, ResourceExt};
use tokio_util::sync::CancellationToken;

use super::metrics::{ControllerMetrics, Reconciles};
use super::Backoff;
pub use failed::{reason, Failed};
pub use queue::{Priority, Queue};

/// A queue key, and the text the pass's log span, metrics and shadow scope name it by
/// (`namespace/name`, or a bare name).
pub trait QueueKey: Clone + Eq + Hash {
    fn id(&self) -> String;
}

impl QueueKey for String {
    fn id(&self) -> String {
        self.clone()
    }
}

/// What a successful pass asks for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Nothing until a watch event queues the key again.
    Done,
    /// Another pass after this long: the resync at low priority when it is the controller's
    /// resync period, else a requeue (a load balancer still provisioning, a health poll).
    After(Duration),
    /// Part of the work failed without failing the pass (counted as a requeue, not an error):
    /// again after the key's error backoff, which keeps growing.
    Backoff,
}

/// `Some(d)`: another pass after `d`.
impl From<Option<Duration>> for Next {
    fn from(after: Option<Duration>) -> Next {
        after.map_or(Next::Done, Next::After)
    }
}

/// Where a term attaches its queue: the controller's triggers queue keys only while attached.
pub struct QueueSlot<K>(Mutex<Option<Arc<Queue<K>>>>);

impl<K> Default for QueueSlot<K> {
    fn default() -> Self {
        QueueSlot(Mutex::new(None))
    }
}

impl<K> QueueSlot<K> {
    /// Starts (`Some`) or stops (`None`) queueing for a term of leadership.
    pub fn attach(&self, queue: Option<Arc<Queue<K>>>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = queue;
    }

    /// The attached queue, if a term is on.
    pub fn get(&self) -> Option<Arc<Queue<K>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl<K: Clone + Eq + Hash> QueueSlot<K> {
    /// Queues `key` at normal priority (a user's change), if a term is on.
    pub fn add(&self, key: K) {
        if let Some(q) = self.get() {
            q.add(key);
        }
    }

    /// Queues every key of `keys` at `priority`, if a term is on.
    pub fn add_all(&self, keys: impl IntoIterator<Item = K>, priority: Priority) {
        if let Some(q) = self.get() {
            for k in keys {
                q.add_with(k, priority);
            }
        }
    }
}

/// A controller's watch triggers: kept on every replica from process start, queueing keys only
/// while a term has attached its queue.
pub trait Source<K>: Send + Sync {
    /// Where the term's queue is attached.
    fn slot(&self) -> &QueueSlot<K>;

    /// A term's first pass: every key the controller handles, at low priority (users' changes
    /// made meanwhile go first).
    fn resync_all(&self);

    /// Starts (`Some`) or stops (`None`) queueing.
    fn attach(&self, queue: Option<Arc<Queue<K>>>) {
        self.slot().attach(queue)
    }
}

/// Detaches a term's queue when the term ends, however it ends.
struct Detach<'a, K, S: Source<K> + ?Sized>(&'a S, PhantomData<fn() -> K>);

impl<K, S: Source<K> + ?Sized> Drop for Detach<'_, K, S> {
    fn drop(&mut self) {
        self.0.attach(None);
    }
}

/// One controller: its name in the metrics and logs, its workers, backoff and resync.
pub struct Controller {
    rec: Reconciles,
    /// The `controller` key of the pass's log lines.
    log_as: String,
    /// What the `caches synced` line calls it.
    title: String,
    workers: usize,
    backoff: Backoff,
    resync: Option<Duration>,
    /// The kind in the pass's shadow-scope key (`ingress ns/name`); `None`: no scope.
    shadow: Option<&'static str>,
}

impl Controller {
    /// A controller reported as `name` (controller-runtime's controller and queue name), one
    /// worker, backoff 10 ms doubling up to 60 s, no resync and no shadow scope.
    pub fn new(metrics: &ControllerMetrics, name: &str) -> Self {
        Controller {
            rec: metrics.controller(name),
            log_as: name.to_string(),
            title: format!("{name} controller"),
            workers: 1,
            backoff: Backoff::new(Duration::from_millis(10), Duration::from_secs(60)),
            resync: None,
            shadow: None,
        }
    }

    /// Counts the passes per object in `awslbc_controller_top_talkers` under upstream's name.
    pub fn talkers(mut self, controller: &'static str) -> Self {
        self.rec = self.rec.talkers(controller);
        self
    }

    /// The `controller` key of the pass's log lines, when not the metrics name.
    pub fn logged_as(mut self, name: &str) -> Self {
        self.log_as = name.to_string();
        self
    }

    /// What the `caches synced` line calls the controller (`<name> controller` by default).
    pub fn titled(mut self, title: &str) -> Self {
        self.title = title.to_string();
        self
    }

    /// Keys reconciled at once (at least one).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = n.max(1);
        self
    }

    /// A failed key waits `base · 2^(failures-1)`, capped at `cap`.
    pub fn backoff(mut self, base: Duration, cap: Duration) -> Self {
        self.backoff = Backoff::new(base, cap);
        self
    }

    /// A pass asking to run again after exactly `period` is the resync (low priority, counted as
    /// a success): controller-runtime's SyncPeriod.
    pub fn resync(mut self, period: Duration) -> Self {
        self.resync = Some(period);
        self
    }

    /// Each pass is a shadow-mode ledger scope keyed `<kind> <key>`.
    pub fn shadowed(mut self, kind: &'static str) -> Self {
        self.shadow = Some(kind);
        self
    }

    /// The controller's metrics handles, for the stages its reconcile times.
    pub fn metrics(&self) -> Reconciles {
        self.rec.clone()
    }

    /// One term of leadership: once `synced` (the caches have listed; at once on a warm
    /// standby), queues every key of `source` and reconciles with `reconcile` until `shutdown`.
    /// Everything it starts lives inside this future: dropping it stops all work at once.
    pub async fn run<K, S, C, F, Fut, R, E>(
        self,
        source: &S,
        synced: impl Future<Output = ()>,
        shutdown: &CancellationToken,
        ctx: Arc<C>,
        reconcile: F,
    ) where
        K: QueueKey,
        S: Source<K> + ?Sized,
        F: Fn(Arc<C>, K) -> Fut,
        Fut: Future<Output = Result<R, E>>,
        R: Into<Next>,
        E: Display,
    {
        self.rec.start(self.workers);
        let queue: Arc<Queue<K>> = Arc::new(Queue::default().with_metrics(self.rec.clone()));
        let _detach = Detach(source, PhantomData);
        tokio::select! {
            _ = synced => {}
            _ = shutdown.cancelled() => return,
        }
        source.attach(Some(queue.clone()));
        source.resync_all();
        tracing::info!(controller = %self.log_as, "{} caches synced", self.title);
        let workers = futures::future::join_all(
            (0..self.workers).map(|_| self.work(&queue, &ctx, &reconcile)),
        );
        tokio::select! {
            _ = workers => {}
            _ = queue.run_timers() => {}
            _ = shutdown.cancelled() => {}
        }
    }
}

/// Waits until every kind of `synced` has listed.
pub async fn all_synced(synced: &[crate::watch::Synced]) {
    futures::future::join_all(synced.iter().map(|s| s.wait())).await;
}

/// The API of `obj`'s kind in `obj`'s namespace (`default` when unset).
pub fn api_of<K>(client: &kube::Client, obj: &K) -> Api<K>
where
    K: Resource<Scope = NamespaceResourceScope>,
    K::DynamicType: Default,
{
    let ns = obj.namespace().unwrap_or_else(|| "default".into());
    Api::namespaced(client.clone(), &ns)
}
