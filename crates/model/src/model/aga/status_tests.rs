//! Replays upstream's `pkg/status/aga/status_updater_test.go` where it is pure (24 of 25 cases:
//! a nil accelerator status cannot be handed in here). Upstream's `areIPSetsEqual` cases are
//! replayed through the status they decide.

use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use super::*;
use crate::model::aga::test_support::ga;

const ARN: &str =
    "arn:aws:globalaccelerator::123456789012:accelerator/1234abcd-abcd-1234-abcd-1234abcdefgh";
const DNS: &str = "a1234567890abcdef.awsglobalaccelerator.com";

fn at(seconds: i64) -> Time {
    Time(Timestamp::from_second(seconds).unwrap())
}

fn object(generation: i64, status: serde_json::Value) -> GlobalAccelerator {
    let mut o = ga("default", "test-ga", json!({}));
    o.metadata.generation = Some(generation);
    o.status = Some(serde_json::from_value(status).unwrap());
    o
}

fn ipv4(addresses: &[&str]) -> DeployedIpSet {
    DeployedIpSet {
        ip_addresses: addresses.iter().map(|a| a.to_string()).collect(),
        ip_address_family: "IPv4".into(),
    }
}

fn outcome(status: &str) -> DeployOutcome {
    DeployOutcome {
        accelerator_arn: ARN.into(),
        dns_name: DNS.into(),
        dual_stack_dns_name: String::new(),
        ip_sets: vec![ipv4(&["192.0.2.250", "198.51.100.52"])],
        status: status.into(),
    }
}

fn cond(type_: &str, status: &str, reason: &str, message: &str, time: i64) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        last_transition_time: at(time),
        reason: reason.into(),
        message: message.into(),
        observed_generation: None,
    }
}

#[test]
fn deployed_accelerator_is_ready() {
    let got = status_after_deploy(
        &object(2, json!({"conditions": []})),
        &outcome("DEPLOYED"),
        &at(10),
    );
    assert!(got.changed);
    assert!(!got.requeue);
    let s = got.status;
    assert_eq!(s.observed_generation, Some(2));
    assert_eq!(s.accelerator_arn.as_deref(), Some(ARN));
    assert_eq!(s.dns_name.as_deref(), Some(DNS));
    assert_eq!(s.status.as_deref(), Some("DEPLOYED"));
    assert_eq!(
        s.conditions,
        vec![cond(
            "Ready",
            "True",
            "AcceleratorReady",
            "GlobalAccelerator is ready and available",
            10
        )]
    );
    assert_eq!(
        s.ip_sets,
        vec![IpSet {
            ip_addresses: Some(vec!["192.0.2.250".into(), "198.51.100.52".into()]),
            ip_address_family: Some("IPv4".into()),
        }]
    );
}

#[test]
fn in_progress_accelerator_is_unknown_and_requeued() {
    let got = status_after_deploy(&object(2, json!({})), &outcome("IN_PROGRESS"), &at(10));
    assert!(got.changed);
    assert!(got.requeue);
    assert_eq!(got.status.status.as_deref(), Some("IN_PROGRESS"));
    assert_eq!(got.status.observed_generation, Some(2));
    assert_eq!(
        got.status.conditions,
        vec![cond(
            "Ready",
            "Unknown",
            "AcceleratorProvisioning",
            "GlobalAccelerator is being provisioned",
            10
        )]
    );
}

#[test]
fn dual_stack_accelerator_gets_both_names_and_families() {
    let dual = DeployOutcome {
        dual_stack_dns_name: "a1234567890abcdef.dualstack.awsglobalaccelerator.com".into(),
        ip_sets: vec![
            ipv4(&["192.0.2.250", "198.51.100.52"]),
            DeployedIpSet {
                ip_addresses: vec!["2001:db8::1".into(), "2001:db8::2".into()],
                ip_address_family: "IPv6".into(),
            },
        ],
        ..outcome("DEPLOYED")
    };
    let got = status_after_deploy(&object(2, json!({})), &dual, &at(10)).status;
    assert_eq!(
        got.dual_stack_dns_name.as_deref(),
        Some("a1234567890abcdef.dualstack.awsglobalaccelerator.com")
    );
    let families: Vec<Option<&str>> = got
        .ip_sets
        .iter()
        .map(|s| s.ip_address_family.as_deref())
        .collect();
    assert_eq!(families, vec![Some("IPv4"), Some("IPv6")]);
    // Once single-stack again, the dual-stack name goes.
    let single = status_after_deploy(
        &GlobalAccelerator {
            status: Some(got),
            ..object(2, json!({}))
        },
        &outcome("DEPLOYED"),
        &at(20),
    );
    assert!(single.changed);
    assert_eq!(single.status.dual_stack_dns_name, None);
}

#[test]
fn status_in_sync_is_not_patched() {
    let synced = object(
        2,
        json!({
            "observedGeneration": 2, "acceleratorARN": ARN, "dnsName": DNS, "status": "DEPLOYED",
            "conditions": [{"type": "Ready", "status": "True", "reason": "AcceleratorReady",
                            "message": "GlobalAccelerator is ready and available",
                            "lastTransitionTime": "1970-01-01T00:00:05Z"}],
            "ipSets": [{"ipAddressFamily": "IPv4", "ipAddresses": ["192.0.2.250", "198.51.100.52"]}]
        }),
    );
    let got = status_after_deploy(&synced, &outcome("DEPLOYED"), &at(10));
    assert!(!got.changed);
    assert!(!got.requeue);
    assert_eq!(got.status.observed_generation, Some(2));
    // The unchanged condition keeps its transition time.
    assert_eq!(got.status.conditions[0].last_transition_time, at(5));
    assert_eq!(Some(got.status), synced.status);
}

#[test]
fn failure_sets_ready_false_with_the_reason() {
    // Upstream's three UpdateStatusFailure cases.
    let fresh = status_after_failure(
        &object(3, json!({"conditions": []})),
        "ProvisioningFailed",
        &at(10),
    );
    assert!(fresh.changed);
    assert_eq!(fresh.status.observed_generation, Some(3));
    assert_eq!(
        fresh.status.conditions,
        vec![cond(
            "Ready",
            "False",
            "ProvisioningFailed",
            MESSAGE_FAILED,
            10
        )]
    );
    let existing = object(
        3,
        json!({"observedGeneration": 2, "conditions": [
            {"type": "Ready", "status": "False", "reason": "OldError", "message": "Old error message",
             "lastTransitionTime": "1970-01-01T00:00:05Z"}]}),
    );
    let updated = status_after_failure(&existing, "NewError", &at(10));
    assert!(updated.changed);
    assert_eq!(updated.status.observed_generation, Some(3));
    assert_eq!(
        updated.status.conditions,
        vec![cond("Ready", "False", "NewError", MESSAGE_FAILED, 10)]
    );
    let same = object(
        3,
        json!({"observedGeneration": 3, "conditions": [
            {"type": "Ready", "status": "False", "reason": "SameError", "message": MESSAGE_FAILED,
             "lastTransitionTime": "1970-01-01T00:00:05Z"}]}),
    );
    let unchanged = status_after_failure(&same, "SameError", &at(10));
    assert!(!unchanged.changed);
    assert_eq!(Some(unchanged.status), same.status);
}

#[test]
fn deletion_waits_for_the_accelerator_to_be_disabled() {
    let deployed = object(
        4,
        json!({"observedGeneration": 3, "status": "DEPLOYED", "conditions": [
            {"type": "Ready", "status": "True", "reason": "AcceleratorReady",
             "message": "GlobalAccelerator is ready and available",
             "lastTransitionTime": "1970-01-01T00:00:05Z"}]}),
    );
    let got = status_while_deleting(&deployed, &at(10));
    assert!(got.changed);
    assert_eq!(got.status.observed_generation, Some(4));
    assert_eq!(got.status.status.as_deref(), Some("DELETING"));
    assert_eq!(
        got.status.conditions,
        vec![
            cond(
                "Ready",
                "False",
                "AcceleratorDeleting",
                "GlobalAccelerator is being deleted",
                10
            ),
            cond(
                "AcceleratorDisabling",
                "True",
                "AcceleratorDisabling",
                "Waiting for accelerator to be disabled before deletion",
                10
            ),
        ]
    );
    // A second pass changes nothing.
    let again = status_while_deleting(
        &GlobalAccelerator {
            status: Some(got.status.clone()),
            ..deployed
        },
        &at(20),
    );
    assert!(!again.changed);
    assert_eq!(again.status, got.status);
}

#[test]
fn update_condition_table() {
    let new = cond("TestType", "True", "TestReason", "Test message", 10);
    // "Add condition to nil slice" and "... to empty slice": both an empty list here.
    for case in ["Add condition to nil slice", "Add condition to empty slice"] {
        let mut conditions = vec![];
        assert!(update_condition(&mut conditions, new.clone()), "{case}");
        assert_eq!(conditions, vec![new.clone()], "{case}");
    }
    let mut conditions = vec![
        cond("TestType", "False", "OldReason", "Old message", 1),
        cond("OtherType", "True", "OtherReason", "Other message", 1),
    ];
    let replacement = cond("TestType", "True", "NewReason", "New message", 10);
    assert!(update_condition(&mut conditions, replacement.clone()));
    assert_eq!(
        conditions,
        vec![
            replacement,
            cond("OtherType", "True", "OtherReason", "Other message", 1)
        ]
    );
    let mut conditions = vec![cond("TestType", "True", "SameReason", "Same message", 1)];
    assert!(!update_condition(
        &mut conditions,
        cond("TestType", "True", "SameReason", "Same message", 10)
    ));
    assert_eq!(
        conditions,
        vec![cond("TestType", "True", "SameReason", "Same message", 1)]
    );
    let mut conditions = vec![cond(
        "ExistingType",
        "True",
        "ExistingReason",
        "Existing message",
        1,
    )];
    let added = cond("NewType", "True", "NewReason", "New message", 10);
    assert!(update_condition(&mut conditions, added.clone()));
    assert_eq!(
        conditions,
        vec![
            cond(
                "ExistingType",
                "True",
                "ExistingReason",
                "Existing message",
                1
            ),
            added
        ]
    );
}

#[test]
fn ip_sets_table() {
    // (case, recorded sets, reported sets, whether the status changes); the rest is in sync.
    let v4 = |a: &[&str]| json!({"ipAddressFamily": "IPv4", "ipAddresses": a});
    let reported_v6 = DeployedIpSet {
        ip_addresses: vec!["2001:db8::1".into(), "2001:db8::2".into()],
        ip_address_family: "IPv6".into(),
    };
    let one: &[&str] = &["192.0.2.1", "198.51.100.1"];
    let cases = [
        ("Equal IP sets", json!([v4(one)]), vec![ipv4(one)], false),
        (
            "Different IP addresses",
            json!([v4(one)]),
            vec![ipv4(&["192.0.2.2", "198.51.100.2"])],
            true,
        ),
        (
            "Different IP address family",
            json!([v4(one)]),
            vec![reported_v6.clone()],
            true,
        ),
        (
            "Different number of IP sets",
            json!([v4(one)]),
            vec![ipv4(one), reported_v6],
            true,
        ),
        // Nothing reported: nothing compared, the recorded sets stay (upstream likewise).
        ("Both empty", json!([]), vec![], false),
        ("Existing empty", json!([]), vec![ipv4(one)], true),
        ("New empty", json!([v4(one)]), vec![], false),
    ];
    for (case, recorded, reported, changes) in cases {
        let synced = object(
            2,
            json!({
                "observedGeneration": 2, "acceleratorARN": ARN, "dnsName": DNS, "status": "DEPLOYED",
                "conditions": [{"type": "Ready", "status": "True", "reason": "AcceleratorReady",
                                "message": "GlobalAccelerator is ready and available",
                                "lastTransitionTime": "1970-01-01T00:00:05Z"}],
                "ipSets": recorded
            }),
        );
        let report = DeployOutcome {
            ip_sets: reported,
            ..outcome("DEPLOYED")
        };
        let got = status_after_deploy(&synced, &report, &at(10));
        assert_eq!(got.changed, changes, "{case}");
        let recorded_count = synced.status.as_ref().unwrap().ip_sets.len();
        let want_count = if report.ip_sets.is_empty() {
            recorded_count
        } else {
            report.ip_sets.len()
        };
        assert_eq!(got.status.ip_sets.len(), want_count, "{case}");
    }
}

#[test]
fn only_deployed_counts_as_deployed() {
    for (case, status, want) in [
        ("Status deployed", STATUS_DEPLOYED, true),
        ("Status in progress", STATUS_IN_PROGRESS, false),
        ("Status empty", "", false),
        ("Status other", "OTHER", false),
    ] {
        assert_eq!(is_deployed(status), want, "{case}");
    }
}
