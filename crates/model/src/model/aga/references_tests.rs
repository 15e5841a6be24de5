//! Replays upstream's `pkg/aga/reference_tracker_test.go` (8 cases).

use serde_json::{json, Value};

use super::*;
use crate::crd::global_accelerator::GlobalAcceleratorEndpointType as T;
use crate::model::aga::endpoints::desired_endpoints;
use crate::model::aga::test_support::ga;

fn key(kind: T, namespace: &str, name: &str) -> ResourceKey {
    ResourceKey {
        kind,
        namespace: namespace.into(),
        name: name.into(),
    }
}

fn spec(endpoints: Value) -> Value {
    json!({"listeners": [{"endpointGroups": [{"endpoints": endpoints}]}]})
}

fn services(names: &[&str]) -> Value {
    Value::Array(
        names
            .iter()
            .map(|n| json!({"type": "Service", "name": n}))
            .collect(),
    )
}

/// Records `name`'s references in `tracker`, as the controller does on each reconcile.
fn track(tracker: &mut ReferenceTracker, name: &str, spec: Value) {
    let object = ga("test-ns", name, spec);
    tracker.update(&object.key(), &desired_endpoints(&object));
}

#[test]
fn new_tracker_is_empty() {
    let tracker = ReferenceTracker::new();
    assert_eq!(tracker.resource_count(), 0);
    assert_eq!(tracker.accelerator_count(), 0);
}

#[test]
fn update_table() {
    let arn =
        "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/test/1234567890";
    let cases = [
        (
            "GA with no endpoints",
            "ga-no-endpoints",
            json!({"listeners": []}),
            vec![],
        ),
        (
            "GA with service endpoints",
            "ga-service-endpoints",
            spec(services(&["service1", "service2"])),
            vec![
                key(T::Service, "test-ns", "service1"),
                key(T::Service, "test-ns", "service2"),
            ],
        ),
        (
            "GA with mixed endpoints",
            "ga-mixed-endpoints",
            spec(json!([
                {"type": "Service", "name": "service1"},
                {"type": "Ingress", "name": "ingress1", "namespace": "other-ns"},
                {"type": "EndpointID", "endpointID": arn}
            ])),
            vec![
                key(T::Service, "test-ns", "service1"),
                key(T::Ingress, "other-ns", "ingress1"),
                key(T::EndpointID, "", arn),
            ],
        ),
    ];
    for (case, name, spec, want) in cases {
        let mut tracker = ReferenceTracker::new();
        track(&mut tracker, name, spec);
        let mut got = tracker.references_of(&format!("test-ns/{name}"));
        got.sort();
        let mut want = want;
        want.sort();
        assert_eq!(got, want, "{case}");
        assert_eq!(tracker.resource_count(), want.len(), "{case}");
        for k in &want {
            assert_eq!(
                tracker.referencing(k),
                vec![("test-ns".to_string(), name.to_string())],
                "{case}"
            );
        }
    }
}

#[test]
fn stale_references_are_removed() {
    let mut tracker = ReferenceTracker::new();
    track(
        &mut tracker,
        "ga-test",
        spec(services(&["service1", "service2"])),
    );
    let (s1, s2, s3) = (
        key(T::Service, "test-ns", "service1"),
        key(T::Service, "test-ns", "service2"),
        key(T::Service, "test-ns", "service3"),
    );
    assert!(tracker.is_referenced(&s1));
    assert!(tracker.is_referenced(&s2));
    track(
        &mut tracker,
        "ga-test",
        spec(services(&["service1", "service3"])),
    );
    assert!(tracker.is_referenced(&s1));
    assert!(!tracker.is_referenced(&s2));
    assert!(tracker.is_referenced(&s3));
}

#[test]
fn removing_an_accelerator_keeps_what_others_reference() {
    let mut tracker = ReferenceTracker::new();
    track(
        &mut tracker,
        "ga1",
        spec(services(&["service1", "service2"])),
    );
    track(
        &mut tracker,
        "ga2",
        spec(services(&["service2", "service3"])),
    );
    let (s1, s2, s3) = (
        key(T::Service, "test-ns", "service1"),
        key(T::Service, "test-ns", "service2"),
        key(T::Service, "test-ns", "service3"),
    );
    assert!(tracker.is_referenced(&s1) && tracker.is_referenced(&s2) && tracker.is_referenced(&s3));
    tracker.remove("test-ns/ga1");
    assert!(!tracker.is_referenced(&s1));
    assert!(tracker.is_referenced(&s2));
    assert!(tracker.is_referenced(&s3));
    tracker.remove("test-ns/ga2");
    assert!(!tracker.is_referenced(&s1));
    assert!(!tracker.is_referenced(&s2));
    assert!(!tracker.is_referenced(&s3));
    assert_eq!(tracker.accelerator_count(), 0);
    assert_eq!(tracker.resource_count(), 0);
}

#[test]
fn referenced_and_unreferenced_resources() {
    let mut tracker = ReferenceTracker::new();
    track(&mut tracker, "ga-test", spec(services(&["service1"])));
    assert!(tracker.is_referenced(&key(T::Service, "test-ns", "service1")));
    assert!(!tracker.is_referenced(&key(T::Service, "test-ns", "non-existing-service")));
    // Same name, other kind: another resource.
    assert!(!tracker.is_referenced(&key(T::Ingress, "test-ns", "service1")));
}

#[test]
fn accelerators_for_a_resource() {
    let mut tracker = ReferenceTracker::new();
    track(&mut tracker, "ga1", spec(services(&["shared-service"])));
    track(&mut tracker, "ga2", spec(services(&["shared-service"])));
    assert_eq!(
        tracker.referencing(&key(T::Service, "test-ns", "shared-service")),
        vec![
            ("test-ns".to_string(), "ga1".to_string()),
            ("test-ns".to_string(), "ga2".to_string()),
        ]
    );
    assert!(tracker
        .referencing(&key(T::Service, "test-ns", "non-existing-service"))
        .is_empty());
}
