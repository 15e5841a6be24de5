//! Core `v1` and `events.k8s.io/v1` Events are two views of one table, as in kube-apiserver:
//! an Event written through either API is got, listed and watched through both, its fields
//! converted as kube-apiserver converts them.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Event as CoreEvent;
use k8s_openapi::api::events::v1::Event;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::ResourceExt;
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::{json, Value};
use std::time::Duration;

async fn server() -> TestApiServer {
    TestApiServer::start(Options::default())
        .await
        .expect("server starts")
}

/// A core Event as an old-style recorder (client-go's `record`) writes it.
fn core_event(name: &str, about: &str) -> CoreEvent {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "name": about, "namespace": "default"},
        "reason": "Started",
        "message": "Started container web",
        "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"},
        "count": 2,
        "firstTimestamp": "2024-01-01T00:00:00Z",
        "lastTimestamp": "2024-01-01T00:01:00Z"
    }))
    .unwrap()
}

/// An events.k8s.io Event as kube-runtime's recorder writes it.
fn new_event(name: &str, about: &str) -> Event {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "regarding": {"kind": "Ingress", "name": about, "namespace": "default"},
        "reason": "SuccessfullyReconciled",
        "note": "Successfully reconciled",
        "type": "Normal",
        "action": "Reconcile",
        "reportingController": "ingress",
        "reportingInstance": "pod-1",
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "series": {"count": 3, "lastObservedTime": "2024-01-01T00:02:00.000000Z"}
    }))
    .unwrap()
}

fn code(e: kube::Error) -> u16 {
    match e {
        kube::Error::Api(s) => s.code,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_event_written_through_either_api_is_read_through_both() {
    let s = server().await;
    let core: Api<CoreEvent> = Api::default_namespaced(s.client());
    let events: Api<Event> = Api::default_namespaced(s.client());
    let pp = PostParams::default();

    // core → events.k8s.io
    let created = core
        .create(&pp, &core_event("started", "web-0"))
        .await
        .unwrap();
    let seen = events.get("started").await.unwrap();
    assert_eq!(seen.metadata.uid, created.metadata.uid);
    assert_eq!(seen.resource_version(), created.resource_version());
    let seen = serde_json::to_value(&seen).unwrap();
    for (field, want) in [
        ("/apiVersion", json!("events.k8s.io/v1")),
        ("/regarding/name", json!("web-0")),
        ("/regarding/kind", json!("Pod")),
        ("/reason", json!("Started")),
        ("/note", json!("Started container web")),
        ("/type", json!("Normal")),
        ("/deprecatedSource/component", json!("kubelet")),
        ("/deprecatedSource/host", json!("node-1")),
        ("/deprecatedCount", json!(2)),
        ("/deprecatedFirstTimestamp", json!("2024-01-01T00:00:00Z")),
        ("/deprecatedLastTimestamp", json!("2024-01-01T00:01:00Z")),
    ] {
        assert_eq!(seen.pointer(field), Some(&want), "{field} in {seen}");
    }
    assert_eq!(seen.get("involvedObject"), None, "{seen}");

    // events.k8s.io → core
    events
        .create(&pp, &new_event("reconciled", "app"))
        .await
        .unwrap();
    let seen = serde_json::to_value(core.get("reconciled").await.unwrap()).unwrap();
    for (field, want) in [
        ("/apiVersion", json!("v1")),
        ("/involvedObject/name", json!("app")),
        ("/involvedObject/kind", json!("Ingress")),
        ("/reason", json!("SuccessfullyReconciled")),
        ("/message", json!("Successfully reconciled")),
        ("/type", json!("Normal")),
        ("/action", json!("Reconcile")),
        ("/reportingComponent", json!("ingress")),
        ("/reportingInstance", json!("pod-1")),
        ("/eventTime", json!("2024-01-01T00:00:00.000000Z")),
        ("/series/count", json!(3)),
    ] {
        assert_eq!(seen.pointer(field), Some(&want), "{field} in {seen}");
    }
    assert_eq!(seen.get("note"), None, "{seen}");

    // One table: each list has both, once.
    let names = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let lp = ListParams::default();
    let via_core = core.list(&lp).await.unwrap();
    let via_events = events.list(&lp).await.unwrap();
    assert_eq!(
        names(via_core.items.iter().map(|e| e.name_any()).collect()),
        ["reconciled", "started"]
    );
    assert_eq!(
        names(via_events.items.iter().map(|e| e.name_any()).collect()),
        ["reconciled", "started"]
    );
    // Field selectors use the fields of the API asked.
    let about_app = events
        .list(&ListParams::default().fields("regarding.name=app"))
        .await
        .unwrap();
    assert_eq!(about_app.items.len(), 1);
    let about_web = core
        .list(&ListParams::default().fields("involvedObject.name=web-0"))
        .await
        .unwrap();
    assert_eq!(about_web.items.len(), 1);

    // kube-runtime's recorder counts a repeat with a merge patch of the series.
    let patch = json!({"series": {"count": 4, "lastObservedTime": "2024-01-01T00:03:00.000000Z"}, "note": "again"});
    events
        .patch("reconciled", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let again = core.get("reconciled").await.unwrap();
    assert_eq!(again.message.as_deref(), Some("again"));
    assert_eq!(again.series.and_then(|s| s.count), Some(4));

    // A name is taken in both APIs; a delete through one is seen through the other.
    assert_eq!(
        code(
            events
                .create(&pp, &new_event("started", "x"))
                .await
                .unwrap_err()
        ),
        409
    );
    core.delete("reconciled", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(code(events.get("reconciled").await.unwrap_err()), 404);
    events
        .delete("started", &DeleteParams::default())
        .await
        .unwrap();
    assert!(core.list(&lp).await.unwrap().items.is_empty());
    s.stop().await;
}

/// The next watch event but bookmarks, within a few seconds.
async fn next<K, S>(stream: &mut S) -> WatchEvent<K>
where
    S: futures::Stream<Item = kube::Result<WatchEvent<K>>> + Unpin,
{
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(5), stream.try_next())
            .await
            .expect("a watch event in time")
            .expect("a watch event, not an error")
            .expect("the watch stays open");
        if !matches!(ev, WatchEvent::Bookmark(_)) {
            return ev;
        }
    }
}

#[tokio::test]
async fn watches_of_either_api_see_writes_through_the_other() {
    let s = server().await;
    let core: Api<CoreEvent> = Api::default_namespaced(s.client());
    let events: Api<Event> = Api::default_namespaced(s.client());
    let pp = PostParams::default();
    let from = s.resource_version().to_string();
    let mut core_watch = core
        .watch(&WatchParams::default(), &from)
        .await
        .unwrap()
        .boxed();
    let mut events_watch = events
        .watch(&WatchParams::default(), &from)
        .await
        .unwrap()
        .boxed();
    // Selectors of each API's own fields.
    let mut about_app = events
        .watch(&WatchParams::default().fields("regarding.name=app"), &from)
        .await
        .unwrap()
        .boxed();
    let mut core_about_app = core
        .watch(
            &WatchParams::default().fields("involvedObject.name=app"),
            &from,
        )
        .await
        .unwrap()
        .boxed();

    core.create(&pp, &core_event("started", "web-0"))
        .await
        .unwrap();
    match next(&mut events_watch).await {
        WatchEvent::Added(e) => {
            assert_eq!(e.name_any(), "started");
            assert_eq!(e.note.as_deref(), Some("Started container web"));
            assert_eq!(e.regarding.and_then(|r| r.name).as_deref(), Some("web-0"));
        }
        other => panic!("expected ADDED, got {other:?}"),
    }
    assert!(
        matches!(next(&mut core_watch).await, WatchEvent::Added(e) if e.name_any() == "started")
    );

    events
        .create(&pp, &new_event("reconciled", "app"))
        .await
        .unwrap();
    match next(&mut core_watch).await {
        WatchEvent::Added(e) => {
            assert_eq!(e.name_any(), "reconciled");
            assert_eq!(e.message.as_deref(), Some("Successfully reconciled"));
            assert_eq!(e.involved_object.name.as_deref(), Some("app"));
            assert_eq!(e.reporting_component.as_deref(), Some("ingress"));
        }
        other => panic!("expected ADDED, got {other:?}"),
    }
    assert!(
        matches!(next(&mut events_watch).await, WatchEvent::Added(e) if e.name_any() == "reconciled")
    );
    // The selected watches saw only the Event about `app`, first.
    assert!(
        matches!(next(&mut about_app).await, WatchEvent::Added(e) if e.name_any() == "reconciled")
    );
    assert!(
        matches!(next(&mut core_about_app).await, WatchEvent::Added(e) if e.name_any() == "reconciled")
    );

    // A change through one API, and a delete through the other.
    let patch = json!({"message": "Started again"});
    core.patch("started", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    match next(&mut events_watch).await {
        WatchEvent::Modified(e) => assert_eq!(e.note.as_deref(), Some("Started again")),
        other => panic!("expected MODIFIED, got {other:?}"),
    }
    events
        .delete("reconciled", &DeleteParams::default())
        .await
        .unwrap();
    assert!(
        matches!(next(&mut core_watch).await, WatchEvent::Modified(e) if e.name_any() == "started")
    );
    match next(&mut core_watch).await {
        WatchEvent::Deleted(e) => assert_eq!(e.involved_object.name.as_deref(), Some("app")),
        other => panic!("expected DELETED, got {other:?}"),
    }
    assert!(
        matches!(next(&mut about_app).await, WatchEvent::Deleted(e) if e.name_any() == "reconciled")
    );

    // A watch from "now" starts with every Event, in its API's form.
    let mut fresh = events
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    match next(&mut fresh).await {
        WatchEvent::Added(e) => {
            let v = serde_json::to_value(&e).unwrap();
            assert_eq!(
                v.pointer("/note"),
                Some(&Value::from("Started again")),
                "{v}"
            );
            assert_eq!(v.pointer("/deprecatedCount"), Some(&Value::from(2)), "{v}");
        }
        other => panic!("expected ADDED, got {other:?}"),
    }
    s.stop().await;
}
