//! Replays upstream's `webhooks/aga/globalaccelerator_validator_test.go` (37 cases): the
//! create/update table through the handler (message and metric label), and the overlap,
//! range and duplicate-endpoint tables on the checks.

use serde_json::json;

use super::*;
use crate::webhook::test_support::{denial, req};

const OVERLAP_TCP: &str = "overlapping port ranges detected for protocol TCP, which is not allowed";

fn spec(v: Value) -> GlobalAcceleratorSpec {
    serde_json::from_value(v).expect("a GlobalAccelerator spec")
}

fn object(spec: Value) -> Value {
    json!({"apiVersion": "aga.k8s.aws/v1beta1", "kind": "GlobalAccelerator",
           "metadata": {"name": "ga", "namespace": "default"}, "spec": spec})
}

fn tcp(ranges: &[(i32, i32)]) -> Value {
    listener("TCP", ranges)
}

fn udp(ranges: &[(i32, i32)]) -> Value {
    listener("UDP", ranges)
}

fn listener(protocol: &str, ranges: &[(i32, i32)]) -> Value {
    let ranges: Vec<Value> = ranges
        .iter()
        .map(|(from, to)| json!({"fromPort": from, "toPort": to}))
        .collect();
    json!({"protocol": protocol, "portRanges": ranges, "clientAffinity": "NONE"})
}

#[tokio::test]
async fn validate_create_and_update_table() {
    let cases: Vec<(&str, Value, Option<&str>)> = vec![
        ("valid global accelerator with no listeners", json!({}), None),
        (
            "valid global accelerator with single listener",
            json!({"listeners": [tcp(&[(80, 80)])]}),
            None,
        ),
        (
            "invalid global accelerator with single listener and overlapping ranges between listeners",
            json!({"listeners": [tcp(&[(80, 8080), (443, 443)])]}),
            Some(OVERLAP_TCP),
        ),
        (
            "valid global accelerator with multiple listeners with different protocols and non-overlapping ranges",
            json!({"listeners": [tcp(&[(80, 80)]), udp(&[(443, 443)])]}),
            None,
        ),
        (
            "valid global accelerator with  with multiple listeners with different protocols and overlapping port ranges",
            json!({"listeners": [tcp(&[(80, 90)]), udp(&[(80, 90)])]}),
            None,
        ),
        (
            "valid global accelerator with single listener having multiple non-overlapping port ranges",
            json!({"listeners": [tcp(&[(80, 80), (443, 443), (8080, 8090)])]}),
            None,
        ),
        (
            "valid global accelerator with multiple listeners having multiple non-overlapping port ranges",
            json!({"listeners": [tcp(&[(80, 80), (443, 443)]), udp(&[(53, 53), (123, 123)])]}),
            None,
        ),
        (
            "valid global accelerator with multiple listeners having multiple port ranges of the same protocol but no overlap",
            json!({"listeners": [tcp(&[(80, 80), (443, 443)]), tcp(&[(8080, 8080), (8443, 8443)])]}),
            None,
        ),
        (
            "invalid global accelerator with multiple listeners having multiple port ranges with partial overlap",
            json!({"listeners": [tcp(&[(80, 80), (443, 443), (8000, 9000)]),
                                 tcp(&[(1000, 2000), (8500, 8600)])]}),
            Some(OVERLAP_TCP),
        ),
        (
            "invalid global accelerator with wide port range overlapping with specific port",
            json!({"listeners": [tcp(&[(1000, 2000)]), tcp(&[(1500, 1500)])]}),
            Some(OVERLAP_TCP),
        ),
        (
            "valid global accelerator with touching but not overlapping port ranges",
            json!({"listeners": [tcp(&[(1000, 2000)]), tcp(&[(2001, 3000)])]}),
            None,
        ),
        (
            "invalid global accelerator with single listener having overlapping port ranges",
            json!({"listeners": [tcp(&[(1000, 2000), (1500, 2500)])]}),
            Some(OVERLAP_TCP),
        ),
        (
            "invalid global accelerator with single listener and overlapping port ranges within listener",
            json!({"listeners": [tcp(&[(80, 8080), (443, 443), (1000, 2000)])]}),
            Some(OVERLAP_TCP),
        ),
    ];
    for (case, s, want) in cases {
        for op in [Operation::Create, Operation::Update] {
            let old = matches!(op, Operation::Update).then(|| object(json!({})));
            let got = GlobalAcceleratorValidator
                .admit(&req(op, object(s.clone()), old))
                .await;
            match want {
                None => assert_eq!(got, Decision::Allow, "{case} ({op:?})"),
                Some(message) => assert_eq!(
                    denial(&got),
                    (CHECK_OVERLAPPING_PORT_RANGES, message),
                    "{case} ({op:?})"
                ),
            }
        }
    }
}

#[test]
fn overlapping_port_ranges_table() {
    let cases: Vec<(&str, Value, bool)> = vec![
        ("no listeners", json!({}), false),
        (
            "single listener",
            json!({"listeners": [tcp(&[(80, 80)])]}),
            false,
        ),
        (
            "two listeners with different protocols - no overlap",
            json!({"listeners": [tcp(&[(80, 80)]), udp(&[(80, 80)])]}),
            false,
        ),
        (
            "two TCP listeners with non-overlapping port ranges",
            json!({"listeners": [tcp(&[(80, 80)]), tcp(&[(443, 443)])]}),
            false,
        ),
        (
            "two TCP listeners with directly overlapping port ranges",
            json!({"listeners": [tcp(&[(80, 80)]), tcp(&[(80, 80)])]}),
            true,
        ),
        (
            "overlapping port ranges with nil protocol should be skipped",
            json!({"listeners": [{"portRanges": [{"fromPort": 80, "toPort": 80}]},
                                 tcp(&[(80, 80)])]}),
            false,
        ),
        (
            "multiple port ranges with partial overlap",
            json!({"listeners": [tcp(&[(80, 100), (200, 300)]), tcp(&[(90, 150), (400, 500)])]}),
            true,
        ),
        (
            "port ranges with second range overlapping first",
            json!({"listeners": [tcp(&[(200, 300)]), tcp(&[(250, 350)])]}),
            true,
        ),
        (
            "port ranges with edge case - touching but not overlapping",
            json!({"listeners": [tcp(&[(100, 200)]), tcp(&[(201, 300)])]}),
            false,
        ),
        (
            "example from task description",
            json!({"listeners": [tcp(&[(80, 80), (443, 443)]), tcp(&[(80, 78), (443, 443)])]}),
            true,
        ),
        (
            "single listener with multiple non-overlapping port ranges",
            json!({"listeners": [tcp(&[(80, 80), (443, 443), (8080, 8090)])]}),
            false,
        ),
        (
            "single listener with overlapping port ranges",
            json!({"listeners": [tcp(&[(80, 100), (90, 120)])]}),
            true,
        ),
    ];
    for (case, s, overlaps) in cases {
        let got = check_for_overlapping_port_ranges(&spec(s));
        if overlaps {
            assert_eq!(got, Err(OVERLAP_TCP.to_string()), "{case}");
        } else {
            assert_eq!(got, Ok(()), "{case}");
        }
    }
    // UDP overlaps name UDP; with both, TCP is reported.
    let udp_only = spec(json!({"listeners": [udp(&[(53, 60)]), udp(&[(60, 70)])]}));
    assert_eq!(
        check_for_overlapping_port_ranges(&udp_only),
        Err("overlapping port ranges detected for protocol UDP, which is not allowed".into())
    );
    let both = spec(json!({"listeners": [udp(&[(53, 60), (60, 70)]), tcp(&[(1, 5), (5, 9)])]}));
    assert_eq!(
        check_for_overlapping_port_ranges(&both),
        Err(OVERLAP_TCP.into())
    );
}

#[test]
fn port_ranges_overlap_table() {
    let r = |from_port, to_port| PortRange { from_port, to_port };
    for (case, a, b, want) in [
        ("exactly matching ranges", r(80, 80), r(80, 80), true),
        (
            "completely non-overlapping ranges",
            r(80, 90),
            r(100, 110),
            false,
        ),
        (
            "A partially overlaps B (lower)",
            r(80, 100),
            r(90, 110),
            true,
        ),
        (
            "A partially overlaps B (higher)",
            r(90, 110),
            r(80, 100),
            true,
        ),
        ("A completely contains B", r(80, 120), r(90, 110), true),
        ("B completely contains A", r(90, 110), r(80, 120), true),
        (
            "Adjacent ranges (not overlapping)",
            r(80, 90),
            r(91, 100),
            false,
        ),
        (
            "Touching ranges (should be considered overlap)",
            r(80, 90),
            r(90, 100),
            true,
        ),
    ] {
        assert_eq!(port_ranges_overlap(&a, &b), want, "{case}");
    }
}

#[tokio::test]
async fn duplicate_endpoints_table() {
    let group =
        |endpoints: Value| json!({"listeners": [{"endpointGroups": [{"endpoints": endpoints}]}]});
    let cases: Vec<(&str, Value, Option<&str>)> = vec![
        (
            "valid - unique endpoints",
            group(json!([{"type": "Ingress", "name": "test-endpoint-1"},
                         {"type": "Ingress", "name": "test-endpoint-2"}])),
            None,
        ),
        (
            "invalid - duplicate endpoints",
            group(json!([{"type": "Ingress", "name": "test-endpoint-1"},
                         {"type": "Ingress", "name": "test-endpoint-1"}])),
            Some("duplicate endpoint detected in listener[0].endpointGroups[0]: Ingress/ns1/test-endpoint-1"),
        ),
        (
            "valid - same name different namespaces",
            group(json!([{"type": "Ingress", "name": "test-endpoint-1", "namespace": "ns1"},
                         {"type": "Ingress", "name": "test-endpoint-2", "namespace": "ns2"}])),
            None,
        ),
        (
            "valid - same name different endpoints types",
            group(json!([{"type": "Service", "name": "test-endpoint-1"},
                         {"type": "Ingress", "name": "test-endpoint-1"},
                         {"type": "Gateway", "name": "test-endpoint-2"}])),
            None,
        ),
    ];
    for (case, s, want) in cases {
        assert_eq!(
            check_for_duplicate_endpoints(&spec(s.clone()), "ns1"),
            want.map_or(Ok(()), |m| Err(m.to_string())),
            "{case}"
        );
        // Through the handler, with the object's namespace and upstream's metric label.
        let mut o = object(s);
        o["metadata"]["namespace"] = "ns1".into();
        let got = GlobalAcceleratorValidator
            .admit(&req(Operation::Create, o, None))
            .await;
        match want {
            None => assert_eq!(got, Decision::Allow, "{case}"),
            Some(m) => assert_eq!(denial(&got), (CHECK_DUPLICATE_ENDPOINTS, m), "{case}"),
        }
    }
    // The same endpoint in two groups is no duplicate; the explicit default namespace is.
    let two_groups = spec(json!({"listeners": [{"endpointGroups": [
        {"endpoints": [{"type": "Service", "name": "a"}]},
        {"endpoints": [{"type": "Service", "name": "a"}]}
    ]}]}));
    assert_eq!(check_for_duplicate_endpoints(&two_groups, "ns1"), Ok(()));
    let spelled_out = spec(group(json!([
        {"type": "Service", "name": "a"},
        {"type": "Service", "name": "a", "namespace": "ns1"},
    ])));
    assert_eq!(
        check_for_duplicate_endpoints(&spelled_out, "ns1"),
        Err("duplicate endpoint detected in listener[0].endpointGroups[0]: Service/ns1/a".into())
    );
    let ids = spec(group(json!([
        {"type": "EndpointID", "endpointID": "arn:1"},
        {"type": "EndpointID", "endpointID": "arn:1"}
    ])));
    assert_eq!(
        check_for_duplicate_endpoints(&ids, "ns1"),
        Err(
            "duplicate endpoint detected in listener[0].endpointGroups[0]: EndpointID/arn:1".into()
        )
    );
}

#[tokio::test]
async fn other_operations_and_spec_less_objects_are_allowed_and_garbage_is_an_error() {
    let overlapping = object(json!({"listeners": [tcp(&[(80, 80)]), tcp(&[(80, 80)])]}));
    let delete = GlobalAcceleratorValidator
        .admit(&req(Operation::Delete, overlapping, None))
        .await;
    assert_eq!(delete, Decision::Allow);
    let mut bare = object(json!({}));
    bare.as_object_mut().unwrap().remove("spec");
    assert_eq!(
        GlobalAcceleratorValidator
            .admit(&req(Operation::Create, bare, None))
            .await,
        Decision::Allow
    );
    let garbage = object(json!({"listeners": "not a list"}));
    let got = GlobalAcceleratorValidator
        .admit(&req(Operation::Create, garbage, None))
        .await;
    assert!(
        matches!(&got, Decision::Errored { category, message }
            if category == "decode" && message.starts_with("cannot decode GlobalAccelerator: ")),
        "{got:?}"
    );
}
