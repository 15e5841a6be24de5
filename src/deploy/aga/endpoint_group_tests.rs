//! Upstream's endpoint_group_synthesizer_test.go and endpoint_group_manager_test.go replayed:
//! the pure tables on the functions, the AWS-calling ones on the fake.
//!
//! endpoint_group_synthesizer_test.go: matchResAndSDKEndpointGroups (6 cases),
//! getAllEndpointGroupsInListeners (5), detectConflictsWithSDKEndpointGroups (9),
//! resolveConflictsWithSDKEndpointGroups (4), detectConflictsWithSDKEndpointGroups_OwnListener
//! (4). endpoint_group_manager_test.go: isEndpointConfigurationDrifted (13),
//! arePortOverridesEqual (9), isSDKEndpointGroupSettingsDrifted (5), detectEndpointDrift (8),
//! ManageEndpoints (9). Three cases differ on purpose and say so where they are.

use std::sync::Arc;

use super::*;
use crate::aws::fake::{FakeAws, GaLimits};
use crate::aws::{AwsError, GlobalAccelerator};
use crate::deploy::aga::test_support::{self as ts};
use crate::model::aga::AgaProtocol;

fn want_group(id: &str, region: &str, overrides: &[(i32, i32)]) -> EndpointGroup {
    EndpointGroup {
        port_overrides: overrides.iter().map(|&(l, e)| po(l, e)).collect(),
        ..ts::group(id, region)
    }
}

fn have_group(arn: &str, region: &str, overrides: &[(i32, i32)]) -> DescribedEndpointGroup {
    DescribedEndpointGroup {
        arn: arn.into(),
        region: region.into(),
        traffic_dial_percentage: Some(100.0),
        port_overrides: overrides.iter().map(|&(l, e)| po(l, e)).collect(),
        endpoints: vec![],
    }
}

fn po(listener_port: i32, endpoint_port: i32) -> PortOverride {
    PortOverride {
        listener_port,
        endpoint_port,
    }
}

const EG: &str =
    "arn:aws:globalaccelerator::123456789012:endpointgroup/1234abcd-abcd-1234-abcd-1234abcdefgh/";

/// (name, model groups, AWS groups, pairs as (model id, region, ARN), unmatched model ids,
/// unmatched AWS regions).
type RegionCase = (
    &'static str,
    Vec<EndpointGroup>,
    Vec<DescribedEndpointGroup>,
    Vec<(String, String, String)>,
    Vec<String>,
    Vec<String>,
);

/// (name, model groups with their listener ARNs, AWS groups, colliding endpoint ports).
type ConflictCase = (
    &'static str,
    Vec<(&'static str, EndpointGroup)>,
    Vec<DescribedEndpointGroup>,
    Vec<i32>,
);

/// (name, AWS endpoints, model endpoints, added ids, kept ids, removed ids, update required).
type DriftCase = (
    &'static str,
    Vec<EndpointDescription>,
    Vec<EndpointConfiguration>,
    Vec<String>,
    Vec<String>,
    Vec<String>,
    bool,
);

#[test]
fn groups_pair_by_region() {
    let read = |m: &GroupMatching, w: &[EndpointGroup], h: &[DescribedEndpointGroup]| {
        let mut pairs: Vec<(String, String, String)> = m
            .pairs
            .iter()
            .map(|&(a, b)| (w[a].id.clone(), h[b].region.clone(), h[b].arn.clone()))
            .collect();
        pairs.sort();
        let mut uw: Vec<String> = m.unmatched_want.iter().map(|&a| w[a].id.clone()).collect();
        uw.sort();
        let mut uh: Vec<String> = m
            .unmatched_have
            .iter()
            .map(|&b| h[b].region.clone())
            .collect();
        uh.sort();
        (pairs, uw, uh)
    };
    let p = |id: &str, region: &str, eg: &str| {
        (id.to_string(), region.to_string(), format!("{EG}{eg}"))
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let cases: Vec<RegionCase> = vec![
        ("empty lists", vec![], vec![], vec![], vec![], vec![]),
        (
            "single exact match by region",
            vec![ts::group("endpoint-group-1", "us-west-2")],
            vec![have_group(&format!("{EG}eg-1234"), "us-west-2", &[])],
            vec![p("endpoint-group-1", "us-west-2", "eg-1234")],
            vec![],
            vec![],
        ),
        (
            "multiple matches by region",
            vec![
                ts::group("endpoint-group-1", "us-west-2"),
                ts::group("endpoint-group-2", "us-east-1"),
            ],
            vec![
                have_group(&format!("{EG}eg-west"), "us-west-2", &[]),
                have_group(&format!("{EG}eg-east"), "us-east-1", &[]),
            ],
            vec![
                p("endpoint-group-1", "us-west-2", "eg-west"),
                p("endpoint-group-2", "us-east-1", "eg-east"),
            ],
            vec![],
            vec![],
        ),
        (
            "unmatched resource endpoint groups",
            vec![
                ts::group("endpoint-group-1", "us-west-2"),
                ts::group("endpoint-group-2", "eu-west-1"),
            ],
            vec![have_group(&format!("{EG}eg-west"), "us-west-2", &[])],
            vec![p("endpoint-group-1", "us-west-2", "eg-west")],
            s(&["endpoint-group-2"]),
            vec![],
        ),
        (
            "unmatched SDK endpoint groups",
            vec![ts::group("endpoint-group-1", "us-west-2")],
            vec![
                have_group(&format!("{EG}eg-west"), "us-west-2", &[]),
                have_group(&format!("{EG}eg-east"), "us-east-1", &[]),
            ],
            vec![p("endpoint-group-1", "us-west-2", "eg-west")],
            vec![],
            s(&["us-east-1"]),
        ),
        (
            "mixed matches and unmatches",
            vec![
                ts::group("endpoint-group-west", "us-west-2"),
                ts::group("endpoint-group-central", "us-central-1"),
            ],
            vec![
                have_group(&format!("{EG}eg-west"), "us-west-2", &[]),
                have_group(&format!("{EG}eg-east"), "us-east-1", &[]),
            ],
            vec![p("endpoint-group-west", "us-west-2", "eg-west")],
            s(&["endpoint-group-central"]),
            s(&["us-east-1"]),
        ),
    ];
    for (name, w, h, pairs, uw, uh) in cases {
        assert_eq!(
            read(&match_groups(&w, &h), w.as_slice(), h.as_slice()),
            (pairs, uw, uh),
            "{name}"
        );
    }
}

const L1: &str = "arn:aws:globalaccelerator::123456789012:accelerator/1234abcd/listener/l-1";
const L2: &str = "arn:aws:globalaccelerator::123456789012:accelerator/1234abcd/listener/l-2";

fn conflict_ports(desired: &[(&str, EndpointGroup)], have: &[DescribedEndpointGroup]) -> Vec<i32> {
    let refs: Vec<(&str, &EndpointGroup)> = desired.iter().map(|(l, g)| (*l, g)).collect();
    detect_conflicts(&refs, have).into_keys().collect()
}

#[test]
fn conflicts_with_other_listeners_groups() {
    let sdk = "arn:aws:globalaccelerator::123456789012:endpointgroup/eg-sdk";
    let odd = "arn:aws:DIFFERENT:SERVICE:123456789012:endpoint-group/TEST_DIFFERENT_ARN/eg-sdk";
    let cases: Vec<ConflictCase> = vec![
        ("no endpoint groups", vec![], vec![], vec![]),
        (
            "no port overrides",
            vec![(L1, want_group("eg-1", "us-west-2", &[]))],
            vec![have_group(sdk, "us-east-1", &[])],
            vec![],
        ),
        (
            "no conflicts - different endpoint ports",
            vec![(L1, want_group("eg-1", "us-west-2", &[(80, 8080)]))],
            vec![have_group(sdk, "us-east-1", &[(443, 9090)])],
            vec![],
        ),
        (
            "no conflicts - same endpoint port but different regions",
            vec![(L1, want_group("eg-1", "us-west-2", &[(80, 8080)]))],
            vec![have_group(sdk, "us-east-1", &[(443, 8080)])],
            vec![],
        ),
        (
            "single conflict - same region",
            vec![(L1, want_group("eg-1", "us-west-2", &[(80, 8080)]))],
            vec![have_group(odd, "us-west-2", &[(443, 8080)])],
            vec![8080],
        ),
        (
            "multiple conflicts with same SDK group - same region",
            vec![(L1, want_group("eg-1", "us-west-2", &[(80, 8080), (443, 8443)]))],
            vec![have_group(odd, "us-west-2", &[(81, 8080), (444, 8443)])],
            vec![8080, 8443],
        ),
        (
            "multiple conflicts with same SDK group - different region (no conflict)",
            vec![(L1, want_group("eg-1", "us-west-2", &[(80, 8080), (443, 8443)]))],
            vec![have_group(sdk, "us-east-1", &[(81, 8080), (444, 8443)])],
            vec![],
        ),
        (
            "multiple conflicts with different SDK groups - same regions",
            vec![
                (L1, want_group("eg-1", "us-west-2", &[(80, 8080), (443, 8443)])),
                (L2, want_group("eg-2", "eu-west-1", &[(81, 9090)])),
            ],
            vec![
                have_group("arn:aws:globalaccelerator::123456789012:endpointgroup/TEST_DIFFERENT_ARN_1/eg-sdk-1", "us-west-2", &[(82, 8080)]),
                have_group("arn:aws:globalaccelerator::123456789012:endpointgroup/TEST_DIFFERENT_ARN_2/eg-sdk-2", "eu-west-1", &[(83, 9090)]),
            ],
            vec![8080, 9090],
        ),
        (
            "multiple conflicts with different SDK groups - different regions (no conflicts)",
            vec![
                (L1, want_group("eg-1", "us-west-2", &[(80, 8080)])),
                (L2, want_group("eg-2", "eu-west-1", &[(81, 9090)])),
            ],
            vec![
                have_group("arn:aws:globalaccelerator::123456789012:endpointgroup/eg-sdk-1", "us-east-1", &[(82, 8080)]),
                have_group("arn:aws:globalaccelerator::123456789012:endpointgroup/eg-sdk-2", "ap-southeast-1", &[(83, 9090)]),
            ],
            vec![],
        ),
    ];
    for (name, desired, have, ports) in cases {
        assert_eq!(conflict_ports(&desired, &have), ports, "{name}");
    }
}

#[test]
fn no_conflict_with_the_listener_itself() {
    let l2 = "arn:aws:globalaccelerator::123456789012:accelerator/5678efgh/listener/l-2";
    let g1 = "arn:aws:globalaccelerator::123456789012:accelerator/1234abcd/listener/l-1/endpoint-group/eg-1";
    let g2 = "arn:aws:globalaccelerator::123456789012:accelerator/5678efgh/listener/l-2/endpoint-group/eg-2";
    let g3 = "arn:aws:globalaccelerator::123456789012:accelerator/9012ijkl/listener/l-3/endpoint-group/eg-3";
    let cases: Vec<ConflictCase> = vec![
        (
            "no conflict with own listener - same endpoint port in same region",
            vec![(L1, want_group("eg-1", "us-west-2", &[(80, 8080)]))],
            vec![have_group(g1, "us-west-2", &[(81, 8080)])],
            vec![],
        ),
        (
            "conflict with external listener - same endpoint port in same region",
            vec![(L1, want_group("eg-1", "us-west-2", &[(80, 8080)]))],
            vec![have_group(g2, "us-west-2", &[(81, 8080)])],
            vec![8080],
        ),
        (
            "multiple listeners in different regions - no conflicts",
            vec![
                (L1, want_group("eg-1", "us-west-2", &[(80, 8080)])),
                (l2, want_group("eg-2", "eu-west-1", &[(443, 8080)])),
            ],
            vec![
                have_group(g1, "us-east-1", &[(81, 8080)]),
                have_group(g3, "eu-central-1", &[(82, 8080)]),
            ],
            vec![],
        ),
        (
            "complex scenario - multiple listeners, regions, with own and external conflicts",
            vec![
                (
                    L1,
                    want_group("eg-west-1", "us-west-2", &[(80, 8080), (443, 8443)]),
                ),
                (l2, want_group("eg-eu-1", "eu-west-1", &[(80, 9090)])),
            ],
            vec![
                have_group(g1, "us-west-2", &[(81, 8080), (444, 8443)]),
                have_group(g2, "eu-west-1", &[(82, 9090)]),
                have_group(g3, "us-west-2", &[(83, 8080)]),
            ],
            vec![8080],
        ),
    ];
    for (name, desired, have, ports) in cases {
        let refs: Vec<(&str, &EndpointGroup)> = desired.iter().map(|(l, g)| (*l, g)).collect();
        let conflicts = detect_conflicts(&refs, &have);
        assert_eq!(
            conflicts.keys().copied().collect::<Vec<_>>(),
            ports,
            "{name}"
        );
        // Never a group of the listener the model group sits on.
        for arns in conflicts.values() {
            for a in arns {
                assert!(!a.starts_with(&format!("{L1}/")), "{name}: {a}");
            }
        }
    }
}

fn ec(id: &str, weight: Option<i32>, cip: Option<bool>) -> EndpointConfiguration {
    EndpointConfiguration {
        endpoint_id: id.into(),
        weight,
        client_ip_preservation_enabled: cip,
    }
}

fn ed(id: &str, weight: Option<i32>, cip: Option<bool>) -> EndpointDescription {
    EndpointDescription {
        endpoint_id: id.into(),
        weight,
        client_ip_preservation_enabled: cip,
        health_state: None,
    }
}

#[test]
fn endpoint_configuration_drift() {
    let e = "endpoint-1";
    for (name, w, h, drift) in [
        (
            "no drift - both weight and client IP preservation nil",
            ec(e, None, None),
            ed(e, None, None),
            false,
        ),
        (
            "weight drift - desired nil, existing not nil",
            ec(e, None, None),
            ed(e, Some(100), None),
            true,
        ),
        (
            "weight drift - desired not nil, existing nil",
            ec(e, Some(100), None),
            ed(e, None, None),
            true,
        ),
        (
            "weight drift - both not nil but different values",
            ec(e, Some(80), None),
            ed(e, Some(100), None),
            true,
        ),
        (
            "no weight drift - both not nil with same values",
            ec(e, Some(100), None),
            ed(e, Some(100), None),
            false,
        ),
        // Upstream: drift. Ours: none. A preservation the model leaves out is not sent, so it
        // cannot change what AWS has; calling it drift would update the group on every deploy.
        (
            "client IP preservation drift - desired nil, existing not nil",
            ec(e, None, None),
            ed(e, None, Some(true)),
            false,
        ),
        (
            "client IP preservation drift - desired not nil, existing nil",
            ec(e, None, Some(true)),
            ed(e, None, None),
            true,
        ),
        (
            "client IP preservation drift - both not nil but different values (true vs false)",
            ec(e, None, Some(true)),
            ed(e, None, Some(false)),
            true,
        ),
        (
            "client IP preservation drift - both not nil but different values (false vs true)",
            ec(e, None, Some(false)),
            ed(e, None, Some(true)),
            true,
        ),
        (
            "no client IP preservation drift - both not nil with same values (both true)",
            ec(e, None, Some(true)),
            ed(e, None, Some(true)),
            false,
        ),
        (
            "no client IP preservation drift - both not nil with same values (both false)",
            ec(e, None, Some(false)),
            ed(e, None, Some(false)),
            false,
        ),
        (
            "drift in both weight and client IP preservation",
            ec(e, Some(80), Some(true)),
            ed(e, Some(100), Some(false)),
            true,
        ),
        (
            "no drift - both weight and client IP preservation have same non-nil values",
            ec(e, Some(100), Some(true)),
            ed(e, Some(100), Some(true)),
            false,
        ),
    ] {
        assert_eq!(endpoint_drifted(&w, &h), drift, "{name}");
    }
    // A weight left out is AWS's 128 on both sides.
    assert!(!endpoint_drifted(
        &ec(e, None, None),
        &ed(e, Some(DEFAULT_WEIGHT), Some(true))
    ));
}

#[test]
fn port_override_equality() {
    let v = |p: &[(i32, i32)]| p.iter().map(|&(l, e)| po(l, e)).collect::<Vec<_>>();
    for (name, a, b, equal) in [
        ("both nil - equal", v(&[]), v(&[]), true),
        ("one empty one nil - equal", v(&[]), v(&[]), true),
        ("both empty - equal", v(&[]), v(&[]), true),
        (
            "model empty, sdk not empty - not equal",
            v(&[]),
            v(&[(80, 8080)]),
            false,
        ),
        (
            "model not empty, sdk empty - not equal",
            v(&[(80, 8080)]),
            v(&[]),
            false,
        ),
        (
            "different lengths - not equal",
            v(&[(80, 8080)]),
            v(&[(80, 8080), (443, 8443)]),
            false,
        ),
        (
            "same length but different values - not equal",
            v(&[(80, 8080)]),
            v(&[(80, 9090)]),
            false,
        ),
        (
            "same values, same order - equal",
            v(&[(80, 8080), (443, 8443)]),
            v(&[(80, 8080), (443, 8443)]),
            true,
        ),
        (
            "same values, different order - equal (order doesn't matter)",
            v(&[(443, 8443), (80, 8080)]),
            v(&[(80, 8080), (443, 8443)]),
            true,
        ),
    ] {
        assert_eq!(port_overrides_equal(&a, &b), equal, "{name}");
    }
}

#[test]
fn endpoint_group_settings_drift() {
    let g = |dial: Option<i32>, o: &[(i32, i32)]| EndpointGroup {
        traffic_dial_percentage: dial,
        ..want_group("eg", "us-west-2", o)
    };
    let h = |dial: f32, o: &[(i32, i32)]| DescribedEndpointGroup {
        traffic_dial_percentage: Some(dial),
        ..have_group("arn", "us-west-2", o)
    };
    for (name, w, have, drift) in [
        (
            "no drift - all values match",
            g(Some(100), &[(80, 8080)]),
            h(100.0, &[(80, 8080)]),
            false,
        ),
        (
            "traffic dial percentage differs",
            g(Some(50), &[(80, 8080)]),
            h(100.0, &[(80, 8080)]),
            true,
        ),
        (
            "traffic dial percentage small difference within epsilon - no drift",
            g(Some(100), &[(80, 8080)]),
            h(100.0005, &[(80, 8080)]),
            false,
        ),
        (
            "port overrides differ",
            g(Some(100), &[(80, 8080)]),
            h(100.0, &[(80, 9090)]),
            true,
        ),
        // Upstream: drift. Ours: none; a traffic dial the model leaves out is not sent, so an
        // update could not change AWS's.
        (
            "model has no traffic dial percentage, sdk does - drift",
            g(None, &[(80, 8080)]),
            h(100.0, &[(80, 8080)]),
            false,
        ),
    ] {
        assert_eq!(group_settings_drifted(&w, &have), drift, "{name}");
    }
}

#[test]
fn endpoint_drift_detection() {
    let ids = |v: &[EndpointConfiguration]| {
        let mut ids: Vec<String> = v.iter().map(|e| e.endpoint_id.clone()).collect();
        ids.sort();
        ids
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let cases: Vec<DriftCase> = vec![
        (
            "no endpoints - empty lists",
            vec![],
            vec![],
            vec![],
            vec![],
            vec![],
            false,
        ),
        (
            "add new endpoint - no existing endpoints",
            vec![],
            vec![ec("endpoint-1", Some(100), None)],
            s(&["endpoint-1"]),
            vec![],
            vec![],
            false,
        ),
        (
            "remove endpoint - no desired endpoints",
            vec![ed("endpoint-1", None, None)],
            vec![],
            vec![],
            vec![],
            s(&["endpoint-1"]),
            false,
        ),
        (
            "no change - same endpoints with same configuration",
            vec![ed("endpoint-1", Some(100), Some(true))],
            vec![ec("endpoint-1", Some(100), Some(true))],
            vec![],
            s(&["endpoint-1"]),
            vec![],
            false,
        ),
        (
            "update endpoint - weight drift",
            vec![ed("endpoint-1", Some(80), Some(true))],
            vec![ec("endpoint-1", Some(100), Some(true))],
            vec![],
            s(&["endpoint-1"]),
            vec![],
            true,
        ),
        (
            "update endpoint - client IP preservation drift",
            vec![ed("endpoint-1", Some(100), Some(false))],
            vec![ec("endpoint-1", Some(100), Some(true))],
            vec![],
            s(&["endpoint-1"]),
            vec![],
            true,
        ),
        (
            "multiple actions - add, update, remove endpoints",
            vec![
                ed("endpoint-1", Some(80), None),
                ed("endpoint-2", Some(100), Some(false)),
                ed("endpoint-to-remove", Some(50), None),
            ],
            vec![
                ec("endpoint-1", Some(100), None),
                ec("endpoint-2", Some(100), Some(false)),
                ec("endpoint-new", Some(100), None),
            ],
            s(&["endpoint-new"]),
            s(&["endpoint-1", "endpoint-2"]),
            s(&["endpoint-to-remove"]),
            true,
        ),
        // Upstream's "nil endpoint ID in existing endpoints": the SDK conversion drops an
        // endpoint without id (sdk::global_accelerator::convert), so only endpoint-2 arrives.
        (
            "nil endpoint ID in existing endpoints",
            vec![ed("endpoint-2", Some(100), None)],
            vec![ec("endpoint-2", Some(100), None)],
            vec![],
            s(&["endpoint-2"]),
            vec![],
            false,
        ),
    ];
    for (name, have, want, add, keep, remove, update) in cases {
        let c = endpoint_changes(&have, &want);
        assert_eq!(ids(c.add.as_slice()), add, "{name}: add");
        assert_eq!(ids(c.keep.as_slice()), keep, "{name}: keep");
        assert_eq!(c.remove, remove, "{name}: remove");
        assert_eq!(c.update_required, update, "{name}: update required");
    }
}

// ---------------------------------------------------------------- on the fake

/// An accelerator with one TCP listener on `ranges`; the fake and the listener's ARN.
async fn listener_on_fake(ranges: &[(i32, i32)]) -> (Arc<FakeAws>, String) {
    let fake = Arc::new(FakeAws::new());
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let acc = ts::accelerator(ga).await;
    let l = ga
        .create_listener(&acc, &ts::listener("l", AgaProtocol::Tcp, ranges))
        .await
        .unwrap();
    (fake, l.arn)
}

fn boom() -> AwsError {
    AwsError::from_code("InternalServiceErrorException", "API error", Some(500))
}

#[tokio::test]
async fn endpoint_groups_of_listeners() {
    let fake = Arc::new(FakeAws::new());
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let acc = ts::accelerator(ga).await;
    let l1 = ga
        .create_listener(&acc, &ts::listener("l1", AgaProtocol::Tcp, &[(80, 80)]))
        .await
        .unwrap()
        .arn;
    let l2 = ga
        .create_listener(&acc, &ts::listener("l2", AgaProtocol::Tcp, &[(443, 443)]))
        .await
        .unwrap()
        .arn;
    let flat = |m: BTreeMap<String, Vec<DescribedEndpointGroup>>, order: &[&str]| -> Vec<String> {
        order
            .iter()
            .flat_map(|l| m[*l].iter().map(|g| g.region.clone()))
            .collect()
    };
    // "empty listener ARNs list".
    assert!(list_groups_of(ga, &[]).await.unwrap().is_empty());
    let (one, both) = ([l1.as_str()], [l1.as_str(), l2.as_str()]);
    // "single listener with no endpoint groups".
    assert_eq!(
        flat(list_groups_of(ga, &one).await.unwrap(), &one[..]),
        Vec::<String>::new()
    );
    // "single listener with one endpoint group".
    ga.create_endpoint_group(&l1, &ts::group("eg1", "us-west-2"))
        .await
        .unwrap();
    assert_eq!(
        flat(list_groups_of(ga, &one).await.unwrap(), &one[..]),
        vec!["us-west-2"]
    );
    // "multiple listeners with endpoint groups".
    ga.create_endpoint_group(&l2, &ts::group("eg2", "eu-west-1"))
        .await
        .unwrap();
    ga.create_endpoint_group(&l2, &ts::group("eg3", "ap-southeast-1"))
        .await
        .unwrap();
    let mut got = flat(list_groups_of(ga, &both).await.unwrap(), &both[..]);
    assert_eq!(got[0], "us-west-2", "the first listener's first");
    got.sort();
    assert_eq!(got, vec!["ap-southeast-1", "eu-west-1", "us-west-2"]);
    // "error retrieving endpoint groups".
    fake.fail_nth_call(1, boom());
    assert!(list_groups_of(ga, &one).await.is_err());
}

#[tokio::test]
async fn colliding_port_overrides_are_dropped() {
    // "no conflicts": nothing sent.
    let (fake, listener) = listener_on_fake(&[(80, 81), (443, 444)]).await;
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let opts = ts::options();
    let mut ctx = ts::ctx(ga, &opts);
    let mut groups = BTreeMap::new();
    resolve_conflicts(&mut ctx, &BTreeMap::new(), &mut groups)
        .await
        .unwrap();
    assert_eq!(fake.count("UpdateEndpointGroup"), 0, "no conflicts");

    // "single conflict with one group" and "multiple conflicts with different groups".
    let g1 = ga
        .create_endpoint_group(&listener, &ts::group("g1", "us-east-1"))
        .await
        .unwrap()
        .arn;
    let g2 = ga
        .create_endpoint_group(&listener, &ts::group("g2", "eu-west-1"))
        .await
        .unwrap()
        .arn;
    fake.seed_ga_port_overrides(&g1, vec![po(80, 8080), po(443, 8443)]);
    fake.seed_ga_port_overrides(&g2, vec![po(81, 9090), po(444, 9443)]);
    let mut groups = BTreeMap::from([(listener.clone(), fake.ga_endpoint_groups_of(&listener))]);
    let conflicts = BTreeMap::from([(8080, vec![g1.clone()])]);
    resolve_conflicts(&mut ctx, &conflicts, &mut groups)
        .await
        .unwrap();
    let held = |arn: &str| {
        fake.ga_endpoint_groups_of(&listener)
            .into_iter()
            .find(|g| g.arn == arn)
            .unwrap()
            .port_overrides
    };
    assert_eq!(held(g1.as_str()), vec![po(443, 8443)], "single conflict");
    assert_eq!(fake.count("UpdateEndpointGroup"), 1);
    fake.seed_ga_port_overrides(&g1, vec![po(80, 8080), po(443, 8443)]);
    let mut groups = BTreeMap::from([(listener.clone(), fake.ga_endpoint_groups_of(&listener))]);
    let conflicts = BTreeMap::from([(8080, vec![g1.clone()]), (9090, vec![g2.clone()])]);
    resolve_conflicts(&mut ctx, &conflicts, &mut groups)
        .await
        .unwrap();
    assert_eq!(
        held(g1.as_str()),
        vec![po(443, 8443)],
        "multiple: first group"
    );
    assert_eq!(
        held(g2.as_str()),
        vec![po(444, 9443)],
        "multiple: second group"
    );
    assert_eq!(fake.count("UpdateEndpointGroup"), 3);
    // The groups handed on match.
    let local: Vec<Vec<PortOverride>> = groups[&listener]
        .iter()
        .map(|g| g.port_overrides.clone())
        .collect();
    assert!(local.contains(&vec![po(443, 8443)]) && local.contains(&vec![po(444, 9443)]));

    // "error during update".
    fake.seed_ga_port_overrides(&g1, vec![po(80, 8080)]);
    let mut groups = BTreeMap::from([(listener.clone(), fake.ga_endpoint_groups_of(&listener))]);
    fake.fail_nth_call(1, boom());
    let conflicts = BTreeMap::from([(8080, vec![g1.clone()])]);
    assert!(resolve_conflicts(&mut ctx, &conflicts, &mut groups)
        .await
        .is_err());
}

const LB: &str = "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/";

fn lb(name: &str) -> String {
    format!("{LB}{name}")
}

/// One ManageEndpoints case: the group's endpoints, the wanted ones, a failure injected at the
/// given call (1 = the first the step makes), the calls expected, and the endpoints after.
struct ManageCase {
    name: &'static str,
    current: Vec<(String, Option<i32>, Option<bool>)>,
    want: Vec<EndpointConfiguration>,
    fail_at: Option<u64>,
    endpoint_quota: usize,
    calls: Vec<&'static str>,
    error: bool,
    after: Vec<String>,
}

async fn run_manage(case: ManageCase) {
    let (fake, listener) = listener_on_fake(&[(80, 80)]).await;
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let group = EndpointGroup {
        endpoint_configurations: case
            .current
            .iter()
            .map(|(id, w, c)| ec(id, *w, *c))
            .collect(),
        ..ts::group("g", "eu-west-1")
    };
    let g = ga.create_endpoint_group(&listener, &group).await.unwrap();
    fake.set_ga_limits(GaLimits {
        endpoints_per_group: case.endpoint_quota,
        ..GaLimits::default()
    });
    fake.clear_calls();
    if let Some(n) = case.fail_at {
        fake.fail_nth_call(n, boom());
    }
    let opts = ts::options();
    let mut ctx = ts::ctx(ga, &opts);
    let res = manage_endpoints(&mut ctx, &g.arn, &case.want, &g.endpoints).await;
    assert_eq!(res.is_err(), case.error, "{}: {res:?}", case.name);
    let calls: Vec<String> = fake.calls().into_iter().map(|(_, op)| op).collect();
    assert_eq!(calls, case.calls, "{}", case.name);
    let mut after: Vec<String> = fake.ga_endpoint_groups_of(&listener)[0]
        .endpoints
        .iter()
        .map(|e| e.endpoint_id.clone())
        .collect();
    after.sort();
    assert_eq!(after, case.after, "{}", case.name);
}

#[tokio::test]
async fn endpoints_managed_as_upstream_does() {
    let cur = |ids: &[&str]| ids.iter().map(|i| (lb(i), None, None)).collect::<Vec<_>>();
    let want = |ids: &[&str]| {
        ids.iter()
            .map(|i| ec(&lb(i), Some(100), None))
            .collect::<Vec<_>>()
    };
    let sorted = |ids: &[&str]| {
        let mut v: Vec<String> = ids.iter().map(|i| lb(i)).collect();
        v.sort();
        v
    };
    let flip_flop = || ManageCase {
        name: "limit exceeded - flip-flop pattern",
        current: cur(&["existing-lb1/1111111111", "existing-lb2/2222222222"]),
        want: want(&["new-lb1/3333333333", "new-lb2/4444444444"]),
        fail_at: None,
        endpoint_quota: 3,
        calls: vec!["AddEndpoints", "RemoveEndpoints", "AddEndpoints"],
        error: false,
        after: sorted(&["new-lb1/3333333333", "new-lb2/4444444444"]),
    };
    let cases = vec![
        flip_flop(),
        ManageCase {
            name: "endpoint property drift - update endpoint-group API call",
            current: vec![(lb("existing-lb/1111111111"), Some(80), Some(false))],
            want: want(&["existing-lb/1111111111"]),
            fail_at: None,
            endpoint_quota: 10,
            calls: vec!["UpdateEndpointGroup"],
            error: false,
            after: sorted(&["existing-lb/1111111111"]),
        },
        ManageCase {
            name: "endpoints to remove only",
            current: cur(&["my-lb/1234567890", "my-lb2/0987654321"]),
            want: vec![],
            fail_at: None,
            endpoint_quota: 10,
            calls: vec!["RemoveEndpoints"],
            error: false,
            after: vec![],
        },
        ManageCase {
            name: "both add and remove endpoints",
            current: cur(&["my-lb/1234567890"]),
            want: want(&["my-lb2/0987654321"]),
            fail_at: None,
            endpoint_quota: 10,
            calls: vec!["AddEndpoints", "RemoveEndpoints"],
            error: false,
            after: sorted(&["my-lb2/0987654321"]),
        },
        ManageCase {
            name: "add endpoints error",
            current: vec![],
            want: want(&["my-lb/1234567890"]),
            fail_at: Some(1),
            endpoint_quota: 10,
            calls: vec!["AddEndpoints"],
            error: true,
            after: vec![],
        },
        ManageCase {
            name: "remove endpoints error",
            current: cur(&["my-lb/1234567890"]),
            want: vec![],
            fail_at: Some(1),
            endpoint_quota: 10,
            calls: vec!["RemoveEndpoints"],
            error: true,
            after: sorted(&["my-lb/1234567890"]),
        },
        ManageCase {
            name: "add and remove with remove error",
            current: cur(&["my-lb/1234567890"]),
            want: want(&["my-lb2/0987654321"]),
            fail_at: Some(2),
            endpoint_quota: 10,
            calls: vec!["AddEndpoints", "RemoveEndpoints"],
            error: true,
            after: sorted(&["my-lb/1234567890", "my-lb2/0987654321"]),
        },
        // Upstream drops the endpoint whose load failed before the call: only the loaded one
        // is wanted.
        ManageCase {
            name: "endpoint with failed status",
            current: vec![],
            want: want(&["my-lb2/0987654321"]),
            fail_at: None,
            endpoint_quota: 10,
            calls: vec!["AddEndpoints"],
            error: false,
            after: sorted(&["my-lb2/0987654321"]),
        },
        flip_flop(),
    ];
    for case in cases {
        run_manage(case).await;
    }
}
