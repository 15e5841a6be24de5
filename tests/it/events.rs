//! The controllers' Events against the API test server: the first occurrence is created, a
//! repeat patches its series (count, last observed), another reason or object is an Event of
//! its own, and a series whose Event was deleted starts again with a new Event.

use k8s_openapi::api::core::v1::{Namespace, ObjectReference};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::json;

use aws_load_balancer_controller::controller::Events;

fn binding(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("elbv2.k8s.aws/v1beta1".into()),
        kind: Some("TargetGroupBinding".into()),
        name: Some(name.into()),
        namespace: Some("shop".into()),
        uid: Some(format!("uid-{name}")),
        ..Default::default()
    }
}

/// What a binding's every successful reconcile reports.
async fn reconciled(events: &Events, obj: &ObjectReference) {
    events
        .normal(
            obj,
            "SuccessfullyReconciled",
            "Successfully reconciled".into(),
        )
        .await;
}

#[tokio::test]
async fn repeats_patch_one_series_and_a_deleted_event_starts_a_new_one() {
    let server = TestApiServer::start(Options::default()).await.unwrap();
    let client = server.client();
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "shop"}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let events = Events::new(client.clone(), "targetGroupBinding");
    let api: Api<Event> = Api::namespaced(client.clone(), "shop");
    let list = || async { api.list(&ListParams::default()).await.unwrap().items };

    let a = binding("a");
    for _ in 0..3 {
        reconciled(&events, &a).await;
    }
    let got = list().await;
    assert_eq!(got.len(), 1, "{got:?}");
    let e = &got[0];
    assert_eq!(e.series.as_ref().map(|s| s.count), Some(3));
    assert_eq!(e.reason.as_deref(), Some("SuccessfullyReconciled"));
    assert_eq!(e.type_.as_deref(), Some("Normal"));
    assert_eq!(e.action.as_deref(), Some("Reconcile"));
    assert_eq!(e.note.as_deref(), Some("Successfully reconciled"));
    assert_eq!(
        e.reporting_controller.as_deref(),
        Some("targetGroupBinding")
    );
    assert_eq!(e.regarding.as_ref(), Some(&a));
    let (created, last) = (
        e.event_time.as_ref().unwrap().0,
        e.series.as_ref().unwrap().last_observed_time.0,
    );
    assert!(
        last >= created,
        "the series was last observed after the Event was made"
    );

    events
        .warning(&a, "FailedNetworkReconcile", "boom".into())
        .await;
    reconciled(&events, &binding("b")).await;
    assert_eq!(
        list().await.len(),
        3,
        "another reason, another object: Events of their own"
    );

    api.delete(
        e.metadata.name.as_deref().unwrap(),
        &DeleteParams::default(),
    )
    .await
    .unwrap();
    reconciled(&events, &a).await;
    let again: Vec<Event> = list()
        .await
        .into_iter()
        .filter(|e| e.regarding.as_ref() == Some(&a) && e.type_.as_deref() == Some("Normal"))
        .collect();
    assert_eq!(again.len(), 1, "{again:?}");
    assert!(
        again[0].series.is_none(),
        "a new Event, not a patch of the deleted one"
    );
}
