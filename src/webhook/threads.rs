//! The webhook server's threads: one current-thread tokio runtime per CPU, each on an OS thread
//! of its own, a connection placed on one of them for its whole life (in turn, as accepted).
//!
//! Why not the process's multi-thread runtime: there an admission crossed workers (the body's
//! arrival woke the idle worker, which then stole the connection task), paying a thread wake-up
//! and cache misses per request for a few microseconds of work, and every pod creation in the
//! cluster waits on admission. Why more than one thread: a flood of handshakes or of large bodies
//! must not queue the API server's small admissions behind it on a single CPU. Watches and
//! reconcilers stay on the process's runtime; the indexes the handlers read are shared, their
//! writers hold locks for map updates only.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Current-thread runtimes on threads of their own; see the module note.
pub struct ServerThreads {
    handles: Vec<Handle>,
    next: AtomicUsize,
    stop: CancellationToken,
    exited: Mutex<Vec<oneshot::Receiver<()>>>,
}

impl ServerThreads {
    /// One per CPU this process may use (cgroup quota and affinity included).
    pub fn default_count() -> usize {
        std::thread::available_parallelism().map_or(1, usize::from)
    }

    /// Starts `count` (at least one) threads named `name-<i>`.
    pub fn start(name: &str, count: usize) -> std::io::Result<ServerThreads> {
        let stop = CancellationToken::new();
        // Threads already started stop again if a later one cannot start.
        let started = stop.clone().drop_guard();
        let (mut handles, mut exited) = (Vec::new(), Vec::new());
        for i in 0..count.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            handles.push(runtime.handle().clone());
            let (done, gone) = oneshot::channel();
            exited.push(gone);
            let stop = stop.clone();
            std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                // As the process's workers: the TargetGroupBinding webhooks make AWS calls here.
                .stack_size(crate::thread_stack::WORKER_STACK_BYTES)
                .spawn(move || {
                    runtime.block_on(stop.cancelled());
                    // Tasks still running (a blocking decode) are not waited for beyond this.
                    runtime.shutdown_timeout(Duration::from_secs(1));
                    let _ = done.send(());
                })?;
        }
        started.disarm();
        Ok(ServerThreads {
            handles,
            next: AtomicUsize::new(0),
            stop,
            exited: Mutex::new(exited),
        })
    }

    pub fn count(&self) -> usize {
        self.handles.len()
    }

    /// Runs `task` on the next thread in turn; it stays there.
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.handles.len();
        drop(self.handles[i].spawn(task));
    }

    /// Stops the threads (dropping whatever still runs on them) and waits until they are gone.
    pub async fn stop(&self) {
        self.stop.cancel();
        let exited = std::mem::take(&mut *self.exited.lock().unwrap_or_else(|p| p.into_inner()));
        for gone in exited {
            let _ = gone.await;
        }
    }
}

impl Drop for ServerThreads {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
