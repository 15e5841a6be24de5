use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::registry::Registry;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::controller::metrics::ControllerMetrics;

/// The smallest whole controller on the skeleton: its key source, its reconcile, its term.
mod minimal {
    use super::*;

    pub struct Names {
        pub names: Vec<String>,
        pub queue: QueueSlot<String>,
    }

    impl Source<String> for Names {
        fn slot(&self) -> &QueueSlot<String> {
            &self.queue
        }
        fn resync_all(&self) {
            self.queue
                .add_all(self.names.iter().cloned(), Priority::Low)
        }
    }

    pub async fn reconcile(seen: Arc<Mutex<Vec<String>>>, name: String) -> Result<Next, String> {
        seen.lock().unwrap().push(name);
        Ok(Next::Done)
    }

    pub async fn term(names: &Names, metrics: &ControllerMetrics, seen: Arc<Mutex<Vec<String>>>) {
        let shutdown = CancellationToken::new();
        Controller::new(metrics, "minimal")
            .run(names, async {}, &shutdown, seen, reconcile)
            .await
    }
}

fn names(keys: &[&str]) -> minimal::Names {
    minimal::Names {
        names: keys.iter().map(|k| k.to_string()).collect(),
        queue: QueueSlot::default(),
    }
}

/// The value of the sample line that starts with `series`.
fn value(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// Runs `term` for `long`, then drops it (as a lost Lease does).
async fn for_a_while(long: Duration, term: impl std::future::Future<Output = ()>) {
    let _ = tokio::time::timeout(long, term).await;
}

#[tokio::test]
async fn a_minimal_controller_reconciles_every_key_once_and_is_reported() {
    let mut registry = Registry::default();
    let metrics = ControllerMetrics::register(&mut registry);
    let source = names(&["a", "ns/b"]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    for_a_while(
        Duration::from_millis(200),
        minimal::term(&source, &metrics, seen.clone()),
    )
    .await;
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, ["a", "ns/b"]);
    assert!(
        source.slot().get().is_none(),
        "the term's end detached its queue"
    );
    let out = crate::metrics::render_text(&registry).unwrap();
    for (series, want) in [
        (
            r#"controller_runtime_reconcile_total{controller="minimal",result="success"}"#,
            2.0,
        ),
        (
            r#"controller_runtime_max_concurrent_reconciles{controller="minimal"}"#,
            1.0,
        ),
        (
            r#"workqueue_adds_total{name="minimal",controller="minimal"}"#,
            2.0,
        ),
    ] {
        assert_eq!(value(&out, series), Some(want), "{series} in\n{out}");
    }
}

#[derive(Default)]
struct Tries {
    bad: AtomicUsize,
    good: AtomicUsize,
    soft: AtomicUsize,
}

async fn mixed(tries: Arc<Tries>, key: String) -> Result<Next, &'static str> {
    match key.as_str() {
        "bad" => {
            tries.bad.fetch_add(1, Ordering::SeqCst);
            Err("boom")
        }
        "soft" => {
            tries.soft.fetch_add(1, Ordering::SeqCst);
            Ok(Next::Backoff)
        }
        _ => {
            tries.good.fetch_add(1, Ordering::SeqCst);
            Ok(Next::After(Duration::from_secs(3600)))
        }
    }
}

#[tokio::test]
async fn failing_keys_back_off_and_a_resync_waits_its_period() {
    let mut registry = Registry::default();
    let metrics = ControllerMetrics::register(&mut registry);
    let source = names(&["bad", "good", "soft"]);
    let tries = Arc::new(Tries::default());
    let shutdown = CancellationToken::new();
    let ctl = Controller::new(&metrics, "test")
        .backoff(Duration::from_millis(5), Duration::from_secs(1))
        .resync(Duration::from_secs(3600));
    let term = ctl.run(&source, async {}, &shutdown, tries.clone(), mixed);
    for_a_while(Duration::from_millis(300), term).await;
    assert_eq!(
        tries.good.load(Ordering::SeqCst),
        1,
        "resynced only after the sync period"
    );
    for (what, n) in [("bad", &tries.bad), ("soft", &tries.soft)] {
        let n = n.load(Ordering::SeqCst);
        assert!(n >= 3, "the {what} key is retried: {n}");
        assert!(
            n < 60,
            "with a growing backoff, not in a hot loop: {what} {n}"
        );
    }
    let out = crate::metrics::render_text(&registry).unwrap();
    let series = |result: &str| {
        format!(r#"controller_runtime_reconcile_total{{controller="test",result="{result}"}}"#)
    };
    assert_eq!(value(&out, &series("success")), Some(1.0), "{out}");
    let bad = tries.bad.load(Ordering::SeqCst) as f64;
    let soft = tries.soft.load(Ordering::SeqCst) as f64;
    assert_eq!(value(&out, &series("error")), Some(bad), "{out}");
    // A partial failure is a requeue: no `Reconciler error`, no retry counted.
    assert_eq!(value(&out, &series("requeue_after")), Some(soft), "{out}");
    let retries = r#"workqueue_retries_total{name="test",controller="test"}"#;
    assert_eq!(value(&out, retries), Some(bad), "{out}");
}

type Done = (AtomicUsize, Mutex<Vec<String>>);

async fn panics_once(done: Arc<Done>, key: String) -> Result<Next, String> {
    if key == "boom" && done.0.fetch_add(1, Ordering::SeqCst) == 0 {
        panic!("index out of range");
    }
    done.1.lock().unwrap().push(key);
    Ok(Next::Done)
}

#[tokio::test]
async fn a_pass_that_panics_is_counted_and_retried_and_the_worker_goes_on() {
    let mut registry = Registry::default();
    let metrics = ControllerMetrics::register(&mut registry);
    let source = names(&["boom", "next"]);
    let done = Arc::new((AtomicUsize::new(0), Mutex::new(Vec::<String>::new())));
    let shutdown = CancellationToken::new();
    // One worker: if the panic killed it, nothing after it would run.
    let ctl =
        Controller::new(&metrics, "test").backoff(Duration::from_millis(5), Duration::from_secs(1));
    let term = ctl.run(&source, async {}, &shutdown, done.clone(), panics_once);
    // Until both passed (the panic hook may take a while to print a backtrace).
    let both = async {
        while done.1.lock().unwrap().len() < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(20), async {
        tokio::select! {
            _ = term => {}
            _ = both => {}
        }
    })
    .await;
    let done = done.1.lock().unwrap().clone();
    assert!(done.contains(&"next".to_string()), "{done:?}");
    assert!(
        done.contains(&"boom".to_string()),
        "the key that panicked is retried (and now passes): {done:?}"
    );
    let out = crate::metrics::render_text(&registry).unwrap();
    for (series, want) in [
        (
            r#"controller_runtime_reconcile_panics_total{controller="test"}"#,
            1.0,
        ),
        (
            r#"controller_runtime_reconcile_errors_total{controller="test"}"#,
            1.0,
        ),
        (
            r#"controller_runtime_reconcile_total{controller="test",result="error"}"#,
            1.0,
        ),
        (
            r#"controller_runtime_reconcile_total{controller="test",result="success"}"#,
            2.0,
        ),
        (
            r#"controller_runtime_terminal_reconcile_errors_total{controller="test"}"#,
            0.0,
        ),
        (
            r#"workqueue_retries_total{name="test",controller="test"}"#,
            1.0,
        ),
        (
            r#"controller_runtime_active_workers{controller="test"}"#,
            0.0,
        ),
    ] {
        assert_eq!(value(&out, series), Some(want), "{series} in\n{out}");
    }
}

#[test]
fn failed_steps_read_as_upstreams_events() {
    let e = "AccessDenied: not allowed";
    assert_eq!(
        Failed::DEPLOY_MODEL.note(&e),
        "Failed deploy model due to AccessDenied: not allowed"
    );
    assert_eq!(Failed::DEPLOY_MODEL.reason(), "FailedDeployModel");
    assert_eq!(Failed::CLEANUP_STATUS.reason(), "FailedCleanupStatus");
    let cleanup = Failed::CLEANUP_STATUS.note(&e);
    assert_eq!(cleanup, format!("Failed update status due to {e}"));
    let gw = Failed::step(reason::FAILED_ADD_FINALIZER, "add gateway finalizer");
    assert_eq!(
        gw.note(&e),
        format!("Failed add gateway finalizer due to {e}")
    );
}

#[test]
fn an_optional_delay_is_a_next_pass() {
    assert_eq!(Next::from(None), Next::Done);
    let d = Duration::from_secs(2);
    assert_eq!(Next::from(Some(d)), Next::After(d));
}
