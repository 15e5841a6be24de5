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
