//! One watch per Kubernetes kind for the whole process, its events fanned out to every index
//! that needs them (webhook indexes, controller caches and queues), in the manner of Linkerd's
//! `IndexList`. The driver that runs a watch and feeds an index list lives here too.

use std::sync::Arc;

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
}
