//! Upstream's listener_synthesizer_test.go and listener_manager_test.go replayed: the pure
//! tables on the functions, `ProcessEndpointGroupPortOverrides` on the fake (its groups seeded,
//! the fix run, what AWS holds afterwards compared).
//!
//! listener_synthesizer_test.go: hasPortRangeConflict (8 cases), generateResListenerKey (4),
//! calculateSimilarityScore (13), findExactMatches (6), findSimilarityMatches (7),
//! matchResAndSDKListeners (8), generateSDKListenerKey (4), processPortOverridesWithAllRules (7),
//! ProcessEndpointGroupPortOverrides (6). listener_manager_test.go: isSDKListenerSettingsDrifted
//! (5), arePortRangesEqual (7).
// Upstream's test tables, one tuple per case, as its Go tables are.
#![allow(clippy::type_complexity)]

use std::sync::Arc;

use super::*;
use crate::aws::fake::FakeAws;
use crate::aws::GlobalAccelerator;
use crate::deploy::aga::test_support::{self as ts, pr};
use crate::model::aga::{AgaProtocol, ClientAffinity};

use AgaProtocol::{Tcp, Udp};

fn want(id: &str, protocol: AgaProtocol, ranges: &[(i32, i32)]) -> AgaListener {
    ts::listener(id, protocol, ranges)
}

fn want_affinity(
    id: &str,
    protocol: AgaProtocol,
    ranges: &[(i32, i32)],
    affinity: ClientAffinity,
) -> AgaListener {
    AgaListener {
        client_affinity: Some(affinity),
        ..ts::listener(id, protocol, ranges)
    }
}

fn have(arn: &str, protocol: &str, ranges: &[(i32, i32)]) -> DescribedListener {
    DescribedListener {
        arn: arn.into(),
        protocol: protocol.into(),
        port_ranges: ranges.iter().map(|&(f, t)| pr(f, t)).collect(),
        client_affinity: String::new(),
    }
}

fn have_affinity(
    arn: &str,
    protocol: &str,
    ranges: &[(i32, i32)],
    affinity: &str,
) -> DescribedListener {
    DescribedListener {
        client_affinity: affinity.into(),
        ..have(arn, protocol, ranges)
    }
}

#[test]
fn port_range_conflicts() {
    for (name, w, h, conflict) in [
        (
            "different protocols - no conflict",
            want("l", Tcp, &[(80, 80)]),
            have("a", "UDP", &[(80, 80)]),
            false,
        ),
        (
            "same protocol, non-overlapping ports - no conflict",
            want("l", Tcp, &[(80, 80)]),
            have("a", "TCP", &[(443, 443)]),
            false,
        ),
        (
            "same protocol, same ports - conflict",
            want("l", Tcp, &[(80, 80)]),
            have("a", "TCP", &[(80, 80)]),
            true,
        ),
        (
            "same protocol, overlapping port ranges - conflict",
            want("l", Tcp, &[(80, 100)]),
            have("a", "TCP", &[(90, 110)]),
            true,
        ),
        (
            "same protocol, multiple port ranges with one overlap - conflict",
            want("l", Udp, &[(80, 80), (443, 443)]),
            have("a", "UDP", &[(443, 443), (8080, 8080)]),
            true,
        ),
        (
            "same protocol, adjacent port ranges - no conflict",
            want("l", Tcp, &[(80, 90)]),
            have("a", "TCP", &[(91, 100)]),
            false,
        ),
        (
            "same protocol, one port at edge of range - conflict",
            want("l", Tcp, &[(80, 90)]),
            have("a", "TCP", &[(90, 100)]),
            true,
        ),
        (
            "same protocol, complex multiple ranges with overlap - conflict",
            want("l", Tcp, &[(80, 80), (443, 443), (8000, 8010)]),
            have("a", "TCP", &[(22, 22), (5000, 5010), (8005, 8015)]),
            true,
        ),
    ] {
        assert_eq!(has_port_range_conflict(&w, &h), conflict, "{name}");
    }
}

#[test]
fn listener_keys() {
    // generateResListenerKey, then generateSDKListenerKey: the same four cases.
    let cases: [(&str, AgaProtocol, &[(i32, i32)], &str); 4] = [
        (
            "TCP listener with single port range",
            Tcp,
            &[(80, 80)],
            "TCP:80-80",
        ),
        (
            "UDP listener with multiple port ranges - ordered",
            Udp,
            &[(80, 80), (443, 443)],
            "UDP:80-80,443-443",
        ),
        (
            "TCP listener with multiple port ranges - unordered",
            Tcp,
            &[(443, 443), (80, 80)],
            "TCP:80-80,443-443",
        ),
        (
            "UDP listener with complex port ranges - unordered",
            Udp,
            &[(8000, 8100), (443, 443), (80, 80)],
            "UDP:80-80,443-443,8000-8100",
        ),
    ];
    for (name, protocol, ranges, key) in cases {
        assert_eq!(
            model_listener_key(&want("l", protocol, ranges)),
            key,
            "res: {name}"
        );
        let sdk = have(
            "arn:aws:globalaccelerator::123456789012:accelerator/1234abcd-abcd-1234-abcd-1234abcdefgh/listener/abcdef1234",
            protocol.as_str(),
            ranges,
        );
        assert_eq!(aws_listener_key(&sdk), key, "sdk: {name}");
    }
}

#[test]
fn similarity_scores() {
    use ClientAffinity::SourceIp;
    for (name, w, h, score) in [
        (
            "exact match - protocol, ports, and client affinity",
            want_affinity("l", Tcp, &[(80, 80), (443, 443)], SourceIp),
            have_affinity("a", "TCP", &[(80, 80), (443, 443)], "SOURCE_IP"),
            150,
        ),
        (
            "protocol match, complete port overlap, no client affinity",
            want("l", Tcp, &[(80, 80)]),
            have_affinity("a", "TCP", &[(80, 80)], "NONE"),
            140,
        ),
        (
            "protocol match, no port overlap",
            want("l", Tcp, &[(80, 80)]),
            have("a", "TCP", &[(443, 443)]),
            40,
        ),
        (
            "protocol mismatch, partial port overlap",
            want("l", Tcp, &[(80, 80), (443, 443)]),
            have("a", "UDP", &[(80, 80), (8080, 8080)]),
            33,
        ),
        (
            "protocol match, partial port overlap with ranges",
            want("l", Tcp, &[(80, 90)]),
            have("a", "TCP", &[(85, 95)]),
            77,
        ),
        (
            "protocol mismatch, no port overlap, client affinity match",
            want_affinity("l", Tcp, &[(80, 80)], SourceIp),
            have_affinity("a", "UDP", &[(443, 443)], "SOURCE_IP"),
            10,
        ),
        (
            "protocol match, complete port overlap, client affinity mismatch",
            want_affinity("l", Tcp, &[(80, 80)], SourceIp),
            have_affinity("a", "TCP", &[(80, 80)], "NONE"),
            140,
        ),
        (
            "complex case - protocol match, multiple port ranges with partial overlap",
            want("l", Tcp, &[(80, 80), (443, 443), (8000, 8010)]),
            have("a", "TCP", &[(443, 443), (8005, 8015), (9000, 9010)]),
            64,
        ),
        (
            "empty port ranges",
            want("l", Tcp, &[]),
            have("a", "TCP", &[]),
            40,
        ),
        (
            "large port ranges with partial overlap",
            want("l", Tcp, &[(1000, 2000)]),
            have("a", "TCP", &[(1500, 2500)]),
            73,
        ),
        (
            "nil and empty client affinity - no match bonus",
            want("l", Tcp, &[(80, 80)]),
            have("a", "TCP", &[(80, 80)]),
            140,
        ),
        (
            "protocol case sensitivity test (should still match)",
            want("l", Tcp, &[(80, 80)]),
            have("a", "TCP", &[(80, 80)]),
            140,
        ),
        (
            "different port ranges but same total ports",
            want("l", Udp, &[(80, 85)]),
            have("a", "UDP", &[(80, 80), (81, 85)]),
            140,
        ),
    ] {
        assert_eq!(similarity_score(&w, &h), score, "{name}");
    }
}

const L: &str = "arn:aws:globalaccelerator::123456789012:accelerator/acc123/listener/";

fn larn(s: &str) -> String {
    format!("{L}{s}")
}

/// The matching as upstream's tests read it: sorted (model id, AWS ARN) pairs, sorted unmatched
/// model ids and AWS ARNs.
fn read(
    m: &Matching,
    want: &[AgaListener],
    have: &[DescribedListener],
) -> (Vec<(String, String)>, Vec<String>, Vec<String>) {
    let mut pairs: Vec<(String, String)> = m
        .pairs
        .iter()
        .map(|&(w, h)| (want[w].id.clone(), have[h].arn.clone()))
        .collect();
    pairs.sort();
    let mut uw: Vec<String> = m
        .unmatched_want
        .iter()
        .map(|&w| want[w].id.clone())
        .collect();
    uw.sort();
    let mut uh: Vec<String> = m
        .unmatched_have
        .iter()
        .map(|&h| have[h].arn.clone())
        .collect();
    uh.sort();
    (pairs, uw, uh)
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = p.iter().map(|(w, h)| (w.to_string(), larn(h))).collect();
    v.sort();
    v
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn arns(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| larn(s)).collect()
}

type MatchCase = (
    &'static str,
    Vec<AgaListener>,
    Vec<DescribedListener>,
    Vec<(String, String)>,
    Vec<String>,
    Vec<String>,
);

#[test]
fn exact_matching() {
    let cases: Vec<MatchCase> = vec![
        ("empty lists", vec![], vec![], vec![], vec![], vec![]),
        (
            "one exact match",
            vec![want("tcp-80", Tcp, &[(80, 80)])],
            vec![have(&larn("list-tcp-80"), "TCP", &[(80, 80)])],
            pairs(&[("tcp-80", "list-tcp-80")]),
            vec![],
            vec![],
        ),
        (
            "one exact match among multiple listeners",
            vec![
                want("tcp-80", Tcp, &[(80, 80)]),
                want("tcp-443", Tcp, &[(443, 443)]),
            ],
            vec![
                have(&larn("list-tcp-80"), "TCP", &[(80, 80)]),
                have(&larn("list-udp-53"), "UDP", &[(53, 53)]),
            ],
            pairs(&[("tcp-80", "list-tcp-80")]),
            ids(&["tcp-443"]),
            arns(&["list-udp-53"]),
        ),
        (
            "multiple exact matches",
            vec![
                want("tcp-80", Tcp, &[(80, 80)]),
                want("udp-53", Udp, &[(53, 53)]),
            ],
            vec![
                have(&larn("list-tcp-80"), "TCP", &[(80, 80)]),
                have(&larn("list-udp-53"), "UDP", &[(53, 53)]),
            ],
            pairs(&[("tcp-80", "list-tcp-80"), ("udp-53", "list-udp-53")]),
            vec![],
            vec![],
        ),
        (
            "exact match with different port range ordering",
            vec![want("tcp-multi-port", Tcp, &[(443, 443), (80, 80)])],
            vec![have(
                &larn("list-tcp-multi"),
                "TCP",
                &[(80, 80), (443, 443)],
            )],
            pairs(&[("tcp-multi-port", "list-tcp-multi")]),
            vec![],
            vec![],
        ),
        (
            "no matches",
            vec![want("tcp-80", Tcp, &[(80, 80)])],
            vec![have(&larn("list-udp-80"), "UDP", &[(80, 80)])],
            vec![],
            ids(&["tcp-80"]),
            arns(&["list-udp-80"]),
        ),
    ];
    for (name, w, h, p, uw, uh) in cases {
        assert_eq!(read(&exact_matches(&w, &h), &w, &h), (p, uw, uh), "{name}");
    }
}

#[test]
fn similarity_matching() {
    let cases: Vec<MatchCase> = vec![
        ("empty lists", vec![], vec![], vec![], vec![], vec![]),
        (
            "empty resource listeners",
            vec![],
            vec![have(&larn("list123"), "TCP", &[(80, 80)])],
            vec![],
            vec![],
            arns(&["list123"]),
        ),
        (
            "empty sdk listeners",
            vec![want("listener-1", Tcp, &[(80, 80)])],
            vec![],
            vec![],
            ids(&["listener-1"]),
            vec![],
        ),
        (
            "one exact similarity match",
            vec![want("listener-1", Tcp, &[(80, 80)])],
            vec![have(&larn("list123"), "TCP", &[(80, 80)])],
            pairs(&[("listener-1", "list123")]),
            vec![],
            vec![],
        ),
        (
            "multiple listeners with some matches",
            vec![
                want("tcp-80", Tcp, &[(80, 80)]),
                want("tcp-443", Tcp, &[(443, 443)]),
                want("udp-53", Udp, &[(53, 53)]),
            ],
            vec![
                have(&larn("list-tcp-80"), "TCP", &[(80, 80)]),
                have(&larn("list-tcp-8080"), "TCP", &[(8080, 8080)]),
            ],
            pairs(&[("tcp-80", "list-tcp-80"), ("tcp-443", "list-tcp-8080")]),
            ids(&["udp-53"]),
            vec![],
        ),
        (
            "complex case with partial similarity matches - greedy algorithm test",
            vec![
                want("tcp-80-100", Tcp, &[(80, 100)]),
                want("tcp-443", Tcp, &[(443, 443)]),
            ],
            vec![
                have(&larn("list-tcp-90-110"), "TCP", &[(90, 110)]),
                have(&larn("list-tcp-440-450"), "TCP", &[(440, 450)]),
            ],
            pairs(&[
                ("tcp-80-100", "list-tcp-90-110"),
                ("tcp-443", "list-tcp-440-450"),
            ]),
            vec![],
            vec![],
        ),
        (
            "no matches below threshold",
            vec![want("tcp-80", Tcp, &[(80, 80)])],
            vec![have(&larn("list-udp-80"), "UDP", &[(8080, 8080)])],
            vec![],
            ids(&["tcp-80"]),
            arns(&["list-udp-80"]),
        ),
    ];
    for (name, w, h, p, uw, uh) in cases {
        assert_eq!(
            read(&similarity_matches(&w, &h), &w, &h),
            (p, uw, uh),
            "{name}"
        );
    }
}

#[test]
fn two_phase_matching() {
    let cases: Vec<MatchCase> = vec![
        ("empty lists", vec![], vec![], vec![], vec![], vec![]),
        (
            "empty resource listeners, multiple SDK listeners",
            vec![],
            vec![
                have(&larn("list-tcp-80"), "TCP", &[(80, 80)]),
                have(&larn("list-udp-53"), "UDP", &[(53, 53)]),
            ],
            vec![],
            vec![],
            arns(&["list-tcp-80", "list-udp-53"]),
        ),
        (
            "multiple resource listeners, empty SDK listeners",
            vec![
                want("tcp-80", Tcp, &[(80, 80)]),
                want("udp-53", Udp, &[(53, 53)]),
            ],
            vec![],
            vec![],
            ids(&["tcp-80", "udp-53"]),
            vec![],
        ),
        (
            "exact match - should be identified in first pass",
            vec![want("tcp-80", Tcp, &[(80, 80)])],
            vec![have(&larn("list-tcp-80"), "TCP", &[(80, 80)])],
            pairs(&[("tcp-80", "list-tcp-80")]),
            vec![],
            vec![],
        ),
        (
            "similarity match - should be identified in second pass",
            vec![want("tcp-80-90", Tcp, &[(80, 90)])],
            vec![have(&larn("list-tcp-85-95"), "TCP", &[(85, 95)])],
            pairs(&[("tcp-80-90", "list-tcp-85-95")]),
            vec![],
            vec![],
        ),
        (
            "mix of exact and similarity matches",
            vec![
                want("tcp-80", Tcp, &[(80, 80)]),
                want("tcp-443", Tcp, &[(443, 443)]),
                want("tcp-8080-8090", Tcp, &[(8080, 8090)]),
            ],
            vec![
                have(&larn("list-tcp-80"), "TCP", &[(80, 80)]),
                have(&larn("list-tcp-8085-8095"), "TCP", &[(8085, 8095)]),
            ],
            pairs(&[
                ("tcp-80", "list-tcp-80"),
                ("tcp-8080-8090", "list-tcp-8085-8095"),
            ]),
            ids(&["tcp-443"]),
            vec![],
        ),
        (
            "unmatched listeners - no similarities above threshold",
            vec![want("tcp-80", Tcp, &[(80, 80)])],
            vec![have(&larn("list-udp-53"), "UDP", &[(53, 53)])],
            vec![],
            ids(&["tcp-80"]),
            arns(&["list-udp-53"]),
        ),
        (
            "complex case with multiple matches of both types",
            vec![
                want("tcp-80", Tcp, &[(80, 80)]),
                want("udp-53", Udp, &[(53, 53)]),
                want("tcp-8080-8090", Tcp, &[(8080, 8090)]),
                want("tcp-443", Tcp, &[(443, 443)]),
            ],
            vec![
                have(&larn("list-tcp-80"), "TCP", &[(80, 80)]),
                have(&larn("list-udp-53"), "UDP", &[(53, 53)]),
                have(&larn("list-tcp-8085-8095"), "TCP", &[(8085, 8095)]),
            ],
            pairs(&[
                ("tcp-80", "list-tcp-80"),
                ("udp-53", "list-udp-53"),
                ("tcp-8080-8090", "list-tcp-8085-8095"),
            ]),
            ids(&["tcp-443"]),
            vec![],
        ),
    ];
    for (name, w, h, p, uw, uh) in cases {
        assert_eq!(
            read(&match_listeners(&w, &h), &w, &h),
            (p, uw, uh),
            "{name}"
        );
    }
}

fn po(listener_port: i32, endpoint_port: i32) -> PortOverride {
    PortOverride {
        listener_port,
        endpoint_port,
    }
}

fn ranges(r: &[(i32, i32)]) -> Vec<PortRange> {
    r.iter().map(|&(f, t)| pr(f, t)).collect()
}

#[test]
fn port_overrides_against_all_rules() {
    let all = ranges(&[(80, 90)]);
    let upd = ranges(&[(80, 85)]);
    let endpoint_ports =
        |v: &[PortOverride]| -> Vec<i32> { v.iter().map(|o| o.endpoint_port).collect() };
    let listener_ports =
        |v: &[PortOverride]| -> Vec<i32> { v.iter().map(|o| o.listener_port).collect() };

    // "empty port overrides".
    let (k, d) = split_port_overrides(&[], &all, &upd);
    assert!(k.is_empty() && d.is_empty());
    // "all port overrides valid".
    let (k, d) = split_port_overrides(&[po(80, 8080), po(81, 8081)], &all, &upd);
    assert_eq!((k.len(), d.len()), (2, 0));
    // "endpoint port overlaps with listener port range".
    let (k, d) = split_port_overrides(&[po(80, 85), po(81, 8081)], &all, &upd);
    assert_eq!((k.len(), endpoint_ports(&d[..])), (1, vec![85]));
    // "listener port outside updated range".
    let (k, d) = split_port_overrides(&[po(80, 8080), po(87, 8087)], &all, &upd);
    assert_eq!((k.len(), listener_ports(&d[..])), (1, vec![87]));
    // "multiple invalid conditions".
    let (k, d) = split_port_overrides(&[po(80, 8080), po(81, 85), po(87, 8087)], &all, &upd);
    assert_eq!((k.len(), d.len()), (1, 2));
    assert_eq!(d, vec![po(81, 85), po(87, 8087)]);
    // "no updated listener port ranges": only the endpoint-port rule applies.
    let (k, d) = split_port_overrides(&[po(80, 8080), po(81, 85)], &all, &[]);
    assert_eq!((k.len(), endpoint_ports(&d[..])), (1, vec![85]));
    // "multiple listener port ranges - endpoint port in one range".
    let all2 = ranges(&[(80, 90), (443, 443)]);
    let (k, d) = split_port_overrides(&[po(80, 8080), po(443, 443)], &all2, &all2);
    assert_eq!((k.len(), endpoint_ports(&d[..])), (1, vec![443]));
}

#[test]
fn listener_settings_drift() {
    use ClientAffinity::{None as NoAffinity, SourceIp};
    for (name, w, h, drift) in [
        (
            "No drift - exact match",
            want_affinity("l", Tcp, &[(80, 80), (443, 443)], NoAffinity),
            have_affinity("a", "TCP", &[(443, 443), (80, 80)], "NONE"),
            false,
        ),
        (
            "Drift - different protocol",
            want_affinity("l", Tcp, &[(80, 80)], NoAffinity),
            have_affinity("a", "UDP", &[(80, 80)], "NONE"),
            true,
        ),
        (
            "Drift - different client affinity",
            want_affinity("l", Tcp, &[(80, 80)], SourceIp),
            have_affinity("a", "TCP", &[(80, 80)], "NONE"),
            true,
        ),
        (
            "Drift - different port ranges",
            want_affinity("l", Tcp, &[(80, 80), (443, 443)], NoAffinity),
            have_affinity("a", "TCP", &[(80, 80)], "NONE"),
            true,
        ),
        (
            "No drift - same ports in different order",
            want_affinity("l", Tcp, &[(80, 80), (443, 443)], NoAffinity),
            have_affinity("a", "TCP", &[(443, 443), (80, 80)], "NONE"),
            false,
        ),
    ] {
        assert_eq!(listener_drifted(&w, &h), drift, "{name}");
    }
}

#[test]
fn port_range_equality() {
    for (name, a, b, equal) in [
        (
            "Equal - exact match",
            ranges(&[(80, 80), (443, 443)]),
            ranges(&[(80, 80), (443, 443)]),
            true,
        ),
        (
            "Equal - different order",
            ranges(&[(80, 80), (443, 443)]),
            ranges(&[(443, 443), (80, 80)]),
            true,
        ),
        (
            "Not equal - different count",
            ranges(&[(80, 80), (443, 443)]),
            ranges(&[(80, 80)]),
            false,
        ),
        (
            "Not equal - different range",
            ranges(&[(80, 80), (443, 443)]),
            ranges(&[(80, 80), (8443, 8443)]),
            false,
        ),
        ("Equal - empty slices", ranges(&[]), ranges(&[]), true),
        (
            "Not equal - one empty, one not",
            ranges(&[(80, 80)]),
            ranges(&[]),
            false,
        ),
        (
            "Equal - port ranges with ranges",
            ranges(&[(80, 100), (443, 450)]),
            ranges(&[(80, 100), (443, 450)]),
            true,
        ),
    ] {
        assert_eq!(port_ranges_equal(&a, &b), equal, "{name}");
    }
}

/// An unpaired AWS listener is deleted before the updates only when a paired one takes its
/// ports; the others after.
#[test]
fn conflicting_listeners_split() {
    let w = vec![want("tcp-80-90", Tcp, &[(80, 90)])];
    let h = vec![
        have(&larn("a"), "TCP", &[(80, 85)]),
        have(&larn("b"), "TCP", &[(86, 86)]),
        have(&larn("c"), "UDP", &[(80, 90)]),
    ];
    let m = Matching {
        pairs: vec![(0, 0)],
        unmatched_want: vec![],
        unmatched_have: vec![1, 2],
    };
    assert_eq!(split_conflicting(&w, &h, &m), (vec![1], vec![2]));
}

// ---------------------------------------------------------------- on the fake

/// One case of ProcessEndpointGroupPortOverrides: listeners (protocol, ranges) each with groups
/// seeded with these overrides; the model's ranges, the updated ranges by listener index; the
/// overrides each group must hold afterwards (listener index, group index → overrides) and
/// the number of UpdateEndpointGroup calls.
struct FixCase {
    name: &'static str,
    listeners: Vec<(AgaProtocol, Vec<(i32, i32)>, Vec<Vec<PortOverride>>)>,
    all: Vec<(i32, i32)>,
    updated: Vec<(usize, Vec<(i32, i32)>)>,
    want: Vec<(usize, usize, Vec<PortOverride>)>,
    updates: usize,
}

async fn run_fix(case: FixCase) {
    let fake = Arc::new(FakeAws::new());
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let acc = ts::accelerator(ga).await;
    let mut listeners = Vec::new();
    let mut groups = Vec::new();
    for (i, (protocol, r, seeded)) in case.listeners.iter().enumerate() {
        let l = ga
            .create_listener(&acc, &ts::listener(&format!("l{i}"), *protocol, r))
            .await
            .unwrap();
        let regions = ["us-east-1", "eu-west-1", "ap-southeast-1"];
        let mut gs = Vec::new();
        for (j, overrides) in seeded.iter().enumerate() {
            let g = ga
                .create_endpoint_group(&l.arn, &ts::group(&format!("g{i}{j}"), regions[j]))
                .await
                .unwrap();
            fake.seed_ga_port_overrides(&g.arn, overrides.clone());
            gs.push(g.arn);
        }
        groups.push(gs);
        listeners.push(l);
    }
    let updated: BTreeMap<String, Vec<PortRange>> = case
        .updated
        .iter()
        .map(|(i, r)| (listeners[*i].arn.clone(), ranges(r)))
        .collect();
    let refs: Vec<&DescribedListener> = listeners.iter().collect();
    fake.clear_calls();
    let opts = ts::options();
    let mut ctx = ts::ctx(ga, &opts);
    let got = fix_port_overrides(&mut ctx, &refs, &ranges(&case.all), &updated)
        .await
        .unwrap();
    assert_eq!(
        fake.count("UpdateEndpointGroup"),
        case.updates,
        "{}",
        case.name
    );
    assert_eq!(ctx.writes, case.updates, "{}", case.name);
    for (i, j, overrides) in case.want {
        let held = fake
            .ga_endpoint_groups_of(&listeners[i].arn)
            .into_iter()
            .find(|g| g.arn == groups[i][j])
            .unwrap();
        let as_map = |v: &[PortOverride]| -> BTreeMap<i32, i32> {
            v.iter()
                .map(|o| (o.endpoint_port, o.listener_port))
                .collect()
        };
        assert_eq!(
            as_map(&held.port_overrides),
            as_map(&overrides),
            "{}",
            case.name
        );
        // What the fix hands on is what AWS holds.
        let handed = got[&listeners[i].arn]
            .iter()
            .find(|g| g.arn == groups[i][j])
            .unwrap();
        assert_eq!(handed.port_overrides, held.port_overrides, "{}", case.name);
    }
}

#[tokio::test]
async fn port_overrides_fixed_before_listener_updates() {
    let cases = vec![
        FixCase {
            name: "no endpoint groups - no updates needed",
            listeners: vec![(Tcp, vec![(80, 80)], vec![])],
            all: vec![(80, 80)],
            updated: vec![],
            want: vec![],
            updates: 0,
        },
        FixCase {
            name: "no port overrides - no updates needed",
            listeners: vec![(Tcp, vec![(80, 80)], vec![vec![]])],
            all: vec![(80, 80)],
            updated: vec![],
            want: vec![(0, 0, vec![])],
            updates: 0,
        },
        FixCase {
            name: "endpoint port overlaps with listener port range - should be removed",
            listeners: vec![(Tcp, vec![(80, 90)], vec![vec![po(80, 85), po(80, 8080)]])],
            all: vec![(80, 90)],
            updated: vec![],
            want: vec![(0, 0, vec![po(80, 8080)])],
            updates: 1,
        },
        FixCase {
            name: "listener port outside updated ranges - should be removed",
            listeners: vec![(Tcp, vec![(80, 90)], vec![vec![po(82, 8082), po(88, 8088)]])],
            all: vec![(80, 90)],
            updated: vec![(0, vec![(80, 85)])],
            want: vec![(0, 0, vec![po(82, 8082)])],
            updates: 1,
        },
        FixCase {
            name: "multiple listeners with multiple endpoint groups - consolidated processing",
            listeners: vec![
                (
                    Tcp,
                    vec![(80, 90)],
                    vec![vec![po(82, 82), po(88, 8088), po(85, 8085)]],
                ),
                (Udp, vec![(53, 53)], vec![vec![po(53, 5353), po(53, 53)]]),
            ],
            all: vec![(80, 90), (53, 53)],
            updated: vec![(0, vec![(80, 85)])],
            want: vec![(0, 0, vec![po(85, 8085)]), (1, 0, vec![po(53, 5353)])],
            updates: 2,
        },
        FixCase {
            name: "multiple listeners each with both types of port override conflicts",
            listeners: vec![
                (
                    Tcp,
                    vec![(80, 90), (443, 443)],
                    vec![vec![
                        po(82, 82),
                        po(88, 8088),
                        po(443, 443),
                        po(85, 8085),
                        po(443, 8443),
                    ]],
                ),
                (
                    Udp,
                    vec![(53, 53), (8000, 8010)],
                    vec![vec![
                        po(53, 53),
                        po(8008, 9008),
                        po(8000, 8000),
                        po(53, 5353),
                        po(8005, 9005),
                    ]],
                ),
            ],
            all: vec![(80, 90), (443, 443), (53, 53), (8000, 8010)],
            updated: vec![
                (0, vec![(80, 85), (443, 443)]),
                (1, vec![(53, 53), (8000, 8005)]),
            ],
            want: vec![
                (0, 0, vec![po(85, 8085), po(443, 8443)]),
                (1, 0, vec![po(53, 5353), po(8005, 9005)]),
            ],
            updates: 2,
        },
    ];
    for case in cases {
        run_fix(case).await;
    }
}
