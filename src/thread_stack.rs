//! The stack size of every thread that runs the controller's futures: the process's runtime
//! workers ([`crate::app::runtime`]) and the webhook server's threads
//! ([`crate::webhook::threads`]). One constant below both, so neither imports the other for it.

/// Deploy futures are deep (a stack's whole plan in one state machine); tokio's 2 MiB default
/// worker stack is too tight for them in unoptimised builds, and an overflow aborts the process.
pub const WORKER_STACK_BYTES: usize = 8 * 1024 * 1024;
