//! The driver's contract: one `reset` per completed list (never half a list), then `apply` and
//! `delete` in order, to every registered index; sync status flips at the first list.

use std::sync::{Arc, Mutex};

use futures::stream;
use kube::runtime::watcher::{self, Event};

use super::*;

#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Index<String> for Log {
    fn apply(&self, obj: &Arc<String>) {
        self.0.lock().unwrap().push(format!("apply {obj}"));
    }
    fn delete(&self, obj: &Arc<String>) {
        self.0.lock().unwrap().push(format!("delete {obj}"));
    }
    fn reset(&self, objs: &[Arc<String>]) {
        let names: Vec<&str> = objs.iter().map(|o| o.as_str()).collect();
        self.0
            .lock()
            .unwrap()
            .push(format!("reset {}", names.join(",")));
    }
}

fn ok(ev: Event<String>) -> Result<Event<String>, watcher::Error> {
    Ok(ev)
}

#[tokio::test]
async fn one_reset_per_list_then_events_to_every_index_in_order() {
    let kind = Kind::<String>::new("things");
    let (a, b) = (Arc::new(Log::default()), Arc::new(Log::default()));
    kind.register(a.clone());
    kind.register(b.clone());
    let synced = kind.synced();
    assert!(!synced.is_synced());
    let events = stream::iter(vec![
        ok(Event::Init),
        ok(Event::InitApply("x".into())),
        ok(Event::InitApply("y".into())),
        ok(Event::InitDone),
        ok(Event::Apply("z".into())),
        ok(Event::Delete("x".into())),
        // A relist after the watch expired: again one reset, with only the new list.
        ok(Event::Init),
        ok(Event::InitApply("q".into())),
        ok(Event::InitDone),
    ]);
    drive(&kind, events).await;
    let want = ["reset x,y", "apply z", "delete x", "reset q"];
    assert_eq!(*a.0.lock().unwrap(), want);
    assert_eq!(*b.0.lock().unwrap(), want);
    assert!(synced.is_synced());
    synced.wait().await;
}

#[tokio::test]
async fn a_list_cut_short_is_never_seen() {
    let kind = Kind::<String>::new("things");
    let log = Arc::new(Log::default());
    kind.register(log.clone());
    let events = stream::iter(vec![ok(Event::Init), ok(Event::InitApply("x".into()))]);
    drive(&kind, events).await;
    assert!(log.0.lock().unwrap().is_empty());
    assert!(!kind.synced().is_synced());
}

/// Streams relists: stages names, and remembers each listed object weakly so a test can tell
/// whether the driver kept the full list alive.
#[derive(Default)]
struct Streaming {
    log: Mutex<Vec<String>>,
    staged: Mutex<Vec<String>>,
    seen: Mutex<Vec<std::sync::Weak<String>>>,
    alive_at_end: Mutex<Vec<usize>>,
}

impl Index<String> for Streaming {
    fn apply(&self, obj: &Arc<String>) {
        self.log.lock().unwrap().push(format!("apply {obj}"));
    }
    fn delete(&self, obj: &Arc<String>) {
        self.log.lock().unwrap().push(format!("delete {obj}"));
    }
    fn reset(&self, _: &[Arc<String>]) {
        panic!("a streaming index is never reset whole by the driver");
    }
    fn streams_relist(&self) -> bool {
        true
    }
    fn relist_begin(&self) {
        self.staged.lock().unwrap().clear();
    }
    fn relist_apply(&self, obj: &Arc<String>) {
        self.staged.lock().unwrap().push(obj.to_string());
        self.seen.lock().unwrap().push(Arc::downgrade(obj));
    }
    fn relist_end(&self) {
        let staged = std::mem::take(&mut *self.staged.lock().unwrap());
        self.log
            .lock()
            .unwrap()
            .push(format!("relisted {}", staged.join(",")));
        let alive = self
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|w| w.upgrade().is_some())
            .count();
        self.alive_at_end.lock().unwrap().push(alive);
    }
}

#[tokio::test]
async fn a_streaming_index_stages_each_list_and_the_driver_keeps_no_objects_for_it() {
    let kind = Kind::<String>::new("pods");
    let s = Arc::new(Streaming::default());
    kind.register(s.clone());
    let events = stream::iter(vec![
        ok(Event::Init),
        ok(Event::InitApply("x".into())),
        // Cut short: the list starts again and "x" is not part of it.
        ok(Event::Init),
        ok(Event::InitApply("y".into())),
        ok(Event::InitApply("z".into())),
        ok(Event::InitDone),
        ok(Event::Apply("w".into())),
    ]);
    drive(&kind, events).await;
    assert_eq!(*s.log.lock().unwrap(), ["relisted y,z", "apply w"]);
    // No listed object outlived its relist_apply: nothing held the whole list.
    assert_eq!(*s.alive_at_end.lock().unwrap(), [0]);
    assert!(kind.synced().is_synced());
}

#[tokio::test]
async fn with_a_whole_list_index_beside_it_both_see_the_same_list_in_registration_order() {
    let kind = Kind::<String>::new("things");
    let s = Arc::new(Streaming::default());
    let whole = Arc::new(Log::default());
    kind.register(s.clone());
    kind.register(whole.clone());
    let events = stream::iter(vec![
        ok(Event::Init),
        ok(Event::InitApply("x".into())),
        ok(Event::InitApply("y".into())),
        ok(Event::InitDone),
    ]);
    drive(&kind, events).await;
    assert_eq!(*s.log.lock().unwrap(), ["relisted x,y"]);
    assert_eq!(*whole.0.lock().unwrap(), ["reset x,y"]);
    // The whole-list index needed the objects, so they were kept until the list completed.
    assert_eq!(*s.alive_at_end.lock().unwrap(), [2]);
}

#[tokio::test]
#[should_panic(expected = "registered after its watch started")]
async fn registering_after_the_start_is_a_bug() {
    let kind = Kind::<String>::new("things");
    kind.register(Arc::new(Log::default()));
    drive(&kind, stream::iter(Vec::new())).await;
    kind.register(Arc::new(Log::default()));
}

#[test]
fn store_follows_resets_applies_and_deletes() {
    use k8s_openapi::api::core::v1::Namespace;
    let ns = |n: &str| {
        let mut o = Namespace::default();
        o.metadata.name = Some(n.into());
        Arc::new(o)
    };
    let store = Store::<Namespace>::default();
    assert!(!store.is_synced());
    store.reset(&[ns("a"), ns("b")]);
    assert!(store.is_synced());
    store.apply(&ns("c"));
    store.delete(&ns("a"));
    let mut names: Vec<String> = store
        .state()
        .iter()
        .map(|o| o.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["b", "c"]);
    assert!(store.get("", "b").is_some());
}

/// Every index sees an object as its kind trims it, in a list and in later events alike.
#[tokio::test]
async fn indexes_see_objects_trimmed() {
    let kind = Kind::<String>::new("things").with_trim(|s| s.truncate(1));
    let log = Arc::new(Log::default());
    kind.register(log.clone());
    let events = stream::iter(vec![
        ok(Event::Init),
        ok(Event::InitApply("xx".into())),
        ok(Event::InitDone),
        ok(Event::Apply("yy".into())),
        ok(Event::Delete("xx".into())),
    ]);
    drive(&kind, events).await;
    assert_eq!(*log.0.lock().unwrap(), ["reset x", "apply y", "delete x"]);
}

/// A refill asked for during a list is listed page by page between two events, each object
/// handed to the indexes at once and staged with the list in progress (its end must not drop
/// them), and its ticket is done once the last page is in.
#[tokio::test]
async fn a_refill_is_listed_page_by_page_between_events() {
    use futures::{FutureExt, StreamExt};
    let kind = Arc::new(Kind::<String>::new("things"));
    let s = Arc::new(Streaming::default());
    kind.register(s.clone());
    let refills = kind.refills();
    let lister: Lister<String> = Box::new(|r: &Refill, token: Option<String>| {
        let page: Page<String> = match token.as_deref() {
            None => (vec![format!("{}/a", r.namespace)], Some("next".to_string())),
            Some(_) => (vec![format!("{}/b", r.namespace)], None),
        };
        futures::future::ready(Ok::<_, kube::Error>(page)).boxed()
    });
    let (tx, rx) = futures::channel::mpsc::unbounded();
    tx.unbounded_send(Event::Init).unwrap();
    tx.unbounded_send(Event::InitApply("x".to_string()))
        .unwrap();
    let k = kind.clone();
    let driver = tokio::spawn(async move { drive_with(&*k, rx.map(ok), Some(lister)).await });
    while !s.staged.lock().unwrap().contains(&"x".to_string()) {
        tokio::task::yield_now().await;
    }
    let ticket = refills.request("ns", "", "").expect("the driver runs");
    refills.wait(ticket).await;
    assert_eq!(*s.log.lock().unwrap(), ["apply ns/a", "apply ns/b"]);
    tx.unbounded_send(Event::InitDone).unwrap();
    tx.unbounded_send(Event::Apply("y".to_string())).unwrap();
    drop(tx);
    driver.await.unwrap();
    assert_eq!(
        *s.log.lock().unwrap(),
        [
            "apply ns/a",
            "apply ns/b",
            "relisted x,ns/a,ns/b",
            "apply y"
        ]
    );
}

/// Without a lister (a kind whose indexes ask for no refills), no refill is ever made: one
/// asked for is not needed.
#[tokio::test]
async fn without_a_lister_no_refill_is_asked_for() {
    let kind = Kind::<String>::new("things");
    kind.register(Arc::new(Log::default()));
    drive(
        &kind,
        stream::iter(vec![ok(Event::Init), ok(Event::InitDone)]),
    )
    .await;
    assert_eq!(kind.refills().request("ns", "", ""), None);
}
