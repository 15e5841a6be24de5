//! Pure-function tests: target diffing, zones, the multi-cluster record and gate conditions.

use std::collections::BTreeSet;

use crate::aws::{TargetDescription, TargetHealth, TargetHealthDescription, TargetHealthState};
use crate::controller::tgb::gates::*;
use crate::controller::tgb::info::GateCondition;
use crate::controller::tgb::targets::*;

fn th(id: &str, port: u16, state: TargetHealthState) -> TargetHealthDescription {
    TargetHealthDescription {
        target: TargetDescription::new(id, port),
        health_check_port: None,
        health: TargetHealth {
            state,
            reason: None,
            description: None,
        },
    }
}

#[test]
fn diff_registers_missing_and_deregisters_unwanted_ignoring_draining() {
    let wanted = vec![
        TargetDescription::new("10.0.0.1", 80),
        TargetDescription::new("10.0.0.2", 80),
        TargetDescription::new("10.0.0.3", 80),
    ];
    let current = vec![
        th("10.0.0.1", 80, TargetHealthState::Healthy),
        th("10.0.0.2", 80, TargetHealthState::Draining),
        th("10.0.0.9", 80, TargetHealthState::Healthy),
        th("10.0.0.8", 80, TargetHealthState::UnhealthyDraining),
        th("10.0.0.1", 81, TargetHealthState::Unhealthy),
    ];
    let d = diff_targets(&wanted, &current, None);
    let ids = |v: &[TargetDescription]| {
        v.iter()
            .map(|t| target_key(&t.id, t.port))
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&d.register), vec!["10.0.0.2:80", "10.0.0.3:80"]);
    assert_eq!(ids(&d.deregister), vec!["10.0.0.1:81", "10.0.0.9:80"]);

    // Multi-cluster: nothing before the first record, then only recorded targets.
    let d = diff_targets(&wanted, &current, Some(None));
    assert!(d.deregister.is_empty());
    let rec: BTreeSet<String> = ["10.0.0.9:80".to_string()].into();
    let d = diff_targets(&wanted, &current, Some(Some(&rec)));
    assert_eq!(ids(&d.deregister), vec!["10.0.0.9:80"]);
    assert!(diff_targets(
        &[TargetDescription::new("10.0.0.1", 80)],
        &current[..1],
        None
    )
    .is_empty());
}

#[test]
fn zone_all_only_outside_the_vpc_and_csv_round_trip() {
    let cidrs = vec!["10.0.0.0/16".parse().unwrap(), "fd00::/56".parse().unwrap()];
    assert_eq!(availability_zone_for("10.0.3.4", &cidrs), None);
    assert_eq!(availability_zone_for("fd00::5", &cidrs), None);
    assert_eq!(
        availability_zone_for("192.168.1.1", &cidrs).as_deref(),
        Some("all")
    );
    assert_eq!(availability_zone_for("192.168.1.1", &[]), None);
    let set: BTreeSet<String> = ["10.0.0.2:80".into(), "10.0.0.1:80".into()].into();
    assert_eq!(tracked_to_csv(&set), "10.0.0.1:80,10.0.0.2:80");
    assert_eq!(tracked_from_csv("10.0.0.1:80, 10.0.0.2:80,"), set);
}

fn health(state: TargetHealthState, reason: &str, desc: &str) -> TargetHealth {
    TargetHealth {
        state,
        reason: Some(reason.into()),
        description: Some(desc.into()),
    }
}

#[test]
fn condition_for_each_health_state() {
    let h = TargetHealth {
        state: TargetHealthState::Healthy,
        reason: None,
        description: None,
    };
    assert_eq!(
        desired_condition(Some(&h), false),
        Desired {
            status: "True",
            reason: String::new(),
            message: String::new()
        }
    );
    for (state, reason) in [
        (TargetHealthState::Initial, "Elb.InitialHealthChecking"),
        (TargetHealthState::Unhealthy, "Target.Timeout"),
        (
            TargetHealthState::Draining,
            "Target.DeregistrationInProgress",
        ),
        (TargetHealthState::Unused, "Target.NotInUse"),
    ] {
        let d = desired_condition(Some(&health(state, reason, "why")), false);
        assert_eq!(
            (d.status, d.reason.as_str(), d.message.as_str()),
            ("False", reason, "why")
        );
    }
    let d = desired_condition(None, true);
    assert_eq!(
        (d.status, d.reason.as_str(), d.message.as_str()),
        (
            "False",
            "Elb.RegistrationInProgress",
            "Target registration is in progress"
        )
    );
    assert_eq!(desired_condition(None, false).status, "Unknown");
    assert_eq!(condition_type("web"), "target-health.elbv2.k8s.aws/web");
}

#[test]
fn transition_time_moves_only_when_status_flips_and_equal_means_no_write() {
    let t = "target-health.elbv2.k8s.aws/web";
    let initial = desired_condition(
        Some(&health(
            TargetHealthState::Initial,
            "Elb.InitialHealthChecking",
            "x",
        )),
        false,
    );
    let first = next_condition(t, None, &initial, "2026-01-01T00:00:00Z").unwrap();
    assert_eq!(
        first.last_transition_time.as_deref(),
        Some("2026-01-01T00:00:00Z")
    );
    assert_eq!(
        next_condition(t, Some(&first), &initial, "2026-01-01T00:00:05Z"),
        None
    );

    let unhealthy = desired_condition(
        Some(&health(TargetHealthState::Unhealthy, "Target.Timeout", "y")),
        false,
    );
    let second = next_condition(t, Some(&first), &unhealthy, "2026-01-01T00:00:05Z").unwrap();
    assert_eq!(second.last_transition_time, first.last_transition_time);
    assert_eq!(second.reason.as_deref(), Some("Target.Timeout"));

    let ok = desired_condition(
        Some(&TargetHealth {
            state: TargetHealthState::Healthy,
            reason: None,
            description: None,
        }),
        false,
    );
    let third = next_condition(t, Some(&second), &ok, "2026-01-01T00:00:09Z").unwrap();
    assert_eq!(
        third.last_transition_time.as_deref(),
        Some("2026-01-01T00:00:09Z")
    );
    assert_eq!(
        (third.reason.as_ref(), third.message.as_ref()),
        (None, None)
    );

    let patch = status_patch("uid-1", &third);
    assert_eq!(patch["metadata"]["uid"], "uid-1");
    let c = &patch["status"]["conditions"][0];
    assert_eq!(c["type"], t);
    assert_eq!(c["status"], "True");
    // Stale reason/message of the False state are removed, not left behind by the merge.
    assert!(c.get("reason").unwrap().is_null() && c.get("message").unwrap().is_null());
}

#[test]
fn ready_seconds_only_on_a_flip_to_true_between_the_two_transition_times() {
    let t = "target-health.elbv2.k8s.aws/web";
    let unhealthy = desired_condition(
        Some(&health(TargetHealthState::Unhealthy, "Target.Timeout", "y")),
        false,
    );
    let ok = desired_condition(
        Some(&TargetHealth {
            state: TargetHealthState::Healthy,
            reason: None,
            description: None,
        }),
        false,
    );
    let first = next_condition(t, None, &unhealthy, "2026-01-01T00:00:00Z").unwrap();
    assert_eq!(ready_flip_seconds(None, &first), None, "no previous state");
    let healthy = next_condition(t, Some(&first), &ok, "2026-01-01T00:01:30Z").unwrap();
    assert_eq!(ready_flip_seconds(Some(&first), &healthy), Some(90.0));
    // Already True: nothing flipped (a message change only).
    let again = GateCondition {
        message: Some("other".into()),
        ..healthy.clone()
    };
    assert_eq!(ready_flip_seconds(Some(&healthy), &again), None);
    // Flipping away from True is not a ready latency.
    let down = next_condition(t, Some(&healthy), &unhealthy, "2026-01-01T00:02:00Z").unwrap();
    assert_eq!(ready_flip_seconds(Some(&healthy), &down), None);
}
