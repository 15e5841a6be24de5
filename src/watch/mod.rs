//! One watch per Kubernetes kind for the whole process, its events fanned out to every index
//! that needs them (webhook indexes, controller caches and queues), in the manner of Linkerd's
//! `IndexList`. The driver that runs a watch and feeds an index list lives here too.
//!
//! At process start every consumer registers its [`Index`] with the kind it reads in
//! [`Watches`]; then [`Watches::run`] starts one watcher per kind that has any index (one per
//! namespace under `--watch-namespace`), on every replica. A standby's controller indexes are
//! therefore warm when it takes the Lease. Secrets are the exception: only the ones consumers
//! name are watched, each on its own ([`Named`]), as upstream does.

mod count;
mod driver;
pub mod gateway;
mod named;
pub mod namespaces;
mod refill;
mod registry;
mod run;
mod store;
pub mod trim;

use std::sync::Arc;

pub use count::Count;
pub use driver::{drive, drive_with, Kind, Lister, Page, Synced};
pub use named::{Named, Ref, Wanted};
pub use refill::{Refill, Refills};
pub use registry::Watches;
pub use store::Store;

/// A consumer of one kind's watch events. Called from the kind's single driver task, in order;
/// implementations keep their own state behind interior mutability and never block.
pub trait Index<K>: Send + Sync {
    /// An object was created or changed.
    fn apply(&self, obj: &Arc<K>);
    /// An object was deleted (the last state the watch saw).
    fn delete(&self, obj: &Arc<K>);
    /// The watch (re)listed: exactly these objects exist now; anything else the index holds is
    /// gone. Called once per completed list, never with a half list.
    fn reset(&self, objs: &[Arc<K>]);

    /// Whether this index takes a relist one object at a time (`relist_begin`, `relist_apply`
    /// per object, `relist_end`) instead of whole through `reset`. An index that keeps only a
    /// small projection says yes, so a first list of 13,000 Pods is never held in memory as full
    /// objects. It must keep what it stages apart until `relist_end`, never showing half a list.
    fn streams_relist(&self) -> bool {
        false
    }
    /// A relist starts (again, if one was cut short): drop anything staged.
    fn relist_begin(&self) {}
    /// One object of the relist in progress.
    fn relist_apply(&self, _obj: &Arc<K>) {}
    /// The relist completed: what was staged is now everything that exists.
    fn relist_end(&self) {}
}

/// Several indexes fed by one watch, in registration order (so a cache registered before a
/// trigger is up to date when the trigger reads it).
pub struct IndexList<K> {
    indexes: Vec<Arc<dyn Index<K>>>,
}

impl<K> Default for IndexList<K> {
    fn default() -> Self {
        Self {
            indexes: Vec::new(),
        }
    }
}

impl<K> IndexList<K> {
    pub fn push(&mut self, index: Arc<dyn Index<K>>) {
        self.indexes.push(index);
    }

    pub fn len(&self) -> usize {
        self.indexes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.indexes.is_empty()
    }

    /// Whether some index needs the whole list at once (so the driver keeps it).
    pub fn needs_whole_list(&self) -> bool {
        self.indexes.iter().any(|i| !i.streams_relist())
    }

    fn streaming(&self) -> impl Iterator<Item = &Arc<dyn Index<K>>> {
        self.indexes.iter().filter(|i| i.streams_relist())
    }

    /// Completes a relist: in registration order, each streaming index swaps in what it staged
    /// and every other index gets `objs` (the whole list; empty when none needs it).
    pub fn finish_relist(&self, objs: &[Arc<K>]) {
        for i in &self.indexes {
            if i.streams_relist() {
                i.relist_end()
            } else {
                i.reset(objs)
            }
        }
    }
}

impl<K> Index<K> for IndexList<K> {
    fn apply(&self, obj: &Arc<K>) {
        self.indexes.iter().for_each(|i| i.apply(obj));
    }

    fn delete(&self, obj: &Arc<K>) {
        self.indexes.iter().for_each(|i| i.delete(obj));
    }

    fn reset(&self, objs: &[Arc<K>]) {
        self.indexes.iter().for_each(|i| i.reset(objs));
    }

    fn relist_begin(&self) {
        self.streaming().for_each(|i| i.relist_begin());
    }

    fn relist_apply(&self, obj: &Arc<K>) {
        self.streaming().for_each(|i| i.relist_apply(obj));
    }
}

/// The consumers of one watch (a kind's, or a kind's named watches): they register before the
/// watch starts, which then takes them all.
pub(crate) struct Consumers<K> {
    name: &'static str,
    indexes: std::sync::Mutex<IndexList<K>>,
    started: std::sync::atomic::AtomicBool,
}

impl<K> Consumers<K> {
    pub(crate) fn new(name: &'static str) -> Self {
        Self {
            name,
            indexes: std::sync::Mutex::new(IndexList::default()),
            started: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// Adds a consumer. Every consumer registers before the watch starts: one registering later
    /// would miss objects, so that is a bug and panics.
    pub(crate) fn register(&self, index: Arc<dyn Index<K>>) {
        use std::sync::atomic::Ordering;
        assert!(
            !self.started.load(Ordering::Acquire),
            "an index of {} registered after its watch started",
            self.name
        );
        self.indexes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(index);
    }

    /// Whether anything registered (nobody reading: nothing is watched).
    pub(crate) fn wanted(&self) -> bool {
        !self
            .indexes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }

    /// The watch starts: every consumer, and no more registrations.
    pub(crate) fn take(&self) -> IndexList<K> {
        self.started
            .store(true, std::sync::atomic::Ordering::Release);
        std::mem::take(&mut *self.indexes.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// An index made of closures, for consumers that only react to events (queue triggers).
pub struct OnEvent<F> {
    /// `(object, deleted)` for every apply and delete, and `(object, false)` for every object of
    /// a relist.
    pub f: F,
}

impl<K, F> Index<K> for OnEvent<F>
where
    F: Fn(&K, bool) + Send + Sync,
{
    fn apply(&self, obj: &Arc<K>) {
        (self.f)(obj, false)
    }

    fn delete(&self, obj: &Arc<K>) {
        (self.f)(obj, true)
    }

    fn reset(&self, objs: &[Arc<K>]) {
        objs.iter().for_each(|o| (self.f)(o, false))
    }
}

#[cfg(test)]
mod tests;
