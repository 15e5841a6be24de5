//! Replays `pkg/ingress2gateway/console/differ_test.go`: `TestDiff` (6 cases),
//! `TestDiff_ChangedFieldValues` (1), `TestDiff_SliceOrderInvariance` (7) and
//! `TestGroupByCorrelation` (6): all 20 cases.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{LB, LISTENER, TG, TGB};
use crate::migrate::console::classify::UserSpecifiedFields;
use crate::migrate::console::differ::{
    diff, group_by_correlation, Correlated, DiffStatus, DiffSummary,
};
use crate::migrate::console::model::{Fields, ResourceTree};

type Resource = (&'static str, &'static str, Vec<(&'static str, Value)>);

/// A tree from `(type, id, [(field, value)])`.
fn tree(resources: Vec<Resource>) -> ResourceTree {
    let mut t = ResourceTree::new();
    for (kind, id, fields) in resources {
        t.entry(kind.to_string())
            .or_default()
            .insert(id.to_string(), fields_of(&fields));
    }
    t
}

fn fields_of(fields: &[(&str, Value)]) -> Fields {
    fields
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn summary(same: usize, changed: usize, added: usize, removed: usize) -> DiffSummary {
    DiffSummary {
        same,
        changed,
        added,
        removed,
    }
}

#[test]
fn diff_summaries() {
    let lb = |name: &str| {
        tree(vec![(
            LB,
            "LoadBalancer",
            vec![
                ("spec.name", json!(name)),
                ("spec.scheme", json!("internet-facing")),
            ],
        )])
    };
    let cases = vec![
        (
            "identical trees",
            lb("k8s-test"),
            lb("k8s-test"),
            summary(2, 0, 0, 0),
        ),
        (
            "changed field",
            lb("k8s-ingress-abc"),
            lb("k8s-gateway-xyz"),
            summary(1, 1, 0, 0),
        ),
        (
            "removed resource",
            tree(vec![
                (TG, "tg-api", vec![("spec.targetType", json!("ip"))]),
                (TG, "tg-web", vec![("spec.targetType", json!("ip"))]),
            ]),
            tree(vec![(TG, "tg-api", vec![("spec.targetType", json!("ip"))])]),
            summary(1, 0, 0, 1),
        ),
        (
            "added resource",
            tree(vec![(
                LISTENER,
                "80",
                vec![("spec.protocol", json!("HTTP"))],
            )]),
            tree(vec![
                (LISTENER, "80", vec![("spec.protocol", json!("HTTP"))]),
                (LISTENER, "443", vec![("spec.protocol", json!("HTTPS"))]),
            ]),
            summary(1, 0, 1, 0),
        ),
        (
            "empty trees",
            tree(vec![]),
            tree(vec![]),
            summary(0, 0, 0, 0),
        ),
        (
            "entirely different types",
            tree(vec![(LB, "LB", vec![("spec.name", json!("old"))])]),
            tree(vec![(
                LISTENER,
                "80",
                vec![("spec.protocol", json!("HTTP"))],
            )]),
            summary(0, 0, 1, 1),
        ),
    ];
    for (name, ingress, gateway, want) in cases {
        assert_eq!(
            diff(&ingress, &gateway, &UserSpecifiedFields::new()).summary,
            want,
            "{name}"
        );
    }
}

#[test]
fn diff_changed_field_values() {
    let ingress = tree(vec![(
        LB,
        "LoadBalancer",
        vec![("spec.name", json!("k8s-ingress-abc"))],
    )]);
    let gateway = tree(vec![(
        LB,
        "LoadBalancer",
        vec![("spec.name", json!("k8s-gateway-xyz"))],
    )]);
    let result = diff(&ingress, &gateway, &UserSpecifiedFields::new());
    let e = result
        .entries
        .iter()
        .find(|e| e.field == "spec.name")
        .expect("expected spec.name entry not found");
    assert_eq!(e.status, DiffStatus::Changed);
    assert_eq!(e.ingress, Some(json!("k8s-ingress-abc")));
    assert_eq!(e.gateway, Some(json!("k8s-gateway-xyz")));
}

#[test]
fn diff_slice_order_invariance() {
    let rule = |from: u16, cidr: bool| {
        let mut r = json!({"fromPort": from, "toPort": from});
        if cidr {
            r["ipProtocol"] = json!("tcp");
            r["ipRanges"] = json!([{"cidrIP": "0.0.0.0/0"}]);
        }
        r
    };
    let cases = vec![
        (
            "scalar slice — identical order",
            json!(["a", "b", "c"]),
            json!(["a", "b", "c"]),
            DiffStatus::Same,
        ),
        (
            "scalar slice — reversed order",
            json!(["a", "b", "c"]),
            json!(["c", "b", "a"]),
            DiffStatus::Same,
        ),
        (
            "scalar slice — different elements",
            json!(["a", "b", "c"]),
            json!(["a", "b", "d"]),
            DiffStatus::Changed,
        ),
        (
            "slice of maps — reversed order",
            json!([rule(81, true), rule(80, true)]),
            json!([rule(80, true), rule(81, true)]),
            DiffStatus::Same,
        ),
        (
            "slice of maps — different element",
            json!([rule(80, false), rule(81, false)]),
            json!([rule(80, false), rule(82, false)]),
            DiffStatus::Changed,
        ),
        (
            "scalar unchanged",
            json!("hello"),
            json!("hello"),
            DiffStatus::Same,
        ),
        (
            "scalar changed",
            json!("hello"),
            json!("world"),
            DiffStatus::Changed,
        ),
    ];
    for (name, i, g, want) in cases {
        let ingress = tree(vec![(
            "AWS::EC2::SecurityGroup",
            "SG",
            vec![("spec.ingress", i)],
        )]);
        let gateway = tree(vec![(
            "AWS::EC2::SecurityGroup",
            "SG",
            vec![("spec.ingress", g)],
        )]);
        let result = diff(&ingress, &gateway, &UserSpecifiedFields::new());
        let got = result
            .entries
            .iter()
            .find(|e| e.field == "spec.ingress")
            .map(|e| e.status);
        assert_eq!(got, Some(want), "{name}");
    }
}

#[test]
fn group_by_correlation_cases() {
    const TG_RAW: &str = "console-test/echo-echoserver:80";
    let valid_tgb = || {
        vec![
            ("spec.template.spec.serviceRef.name", json!("echoserver")),
            ("spec.template.spec.serviceRef.port", json!(80.0)),
        ]
    };
    let corr = |raw: &str, fields: Vec<(&'static str, Value)>| Correlated {
        raw_id: raw.into(),
        fields: fields_of(&fields),
    };
    let target_type = || vec![("spec.targetType", json!("ip"))];
    let cases: Vec<(&str, &str, ResourceTree, BTreeMap<String, Correlated>)> = vec![
        (
            "non-correlated type uses raw ID as key",
            LB,
            tree(vec![(
                LB,
                "LoadBalancer",
                vec![("spec.name", json!("k8s-test"))],
            )]),
            BTreeMap::from([(
                "LoadBalancer".into(),
                corr("LoadBalancer", vec![("spec.name", json!("k8s-test"))]),
            )]),
        ),
        (
            "TargetGroup correlates via serviceRef",
            TG,
            tree(vec![
                (TG, TG_RAW, target_type()),
                (TGB, TG_RAW, valid_tgb()),
            ]),
            BTreeMap::from([("echoserver:80".into(), corr(TG_RAW, target_type()))]),
        ),
        (
            "TargetGroupBinding correlates via its own serviceRef",
            TGB,
            tree(vec![(TGB, TG_RAW, valid_tgb())]),
            BTreeMap::from([("echoserver:80".into(), corr(TG_RAW, valid_tgb()))]),
        ),
        (
            "TargetGroup without a paired TGB falls back to raw ID",
            TG,
            tree(vec![(TG, TG_RAW, target_type())]),
            BTreeMap::from([(TG_RAW.into(), corr(TG_RAW, target_type()))]),
        ),
        (
            "TGB with missing serviceRef.name falls back to raw ID",
            TG,
            tree(vec![
                (TG, TG_RAW, target_type()),
                (
                    TGB,
                    TG_RAW,
                    vec![("spec.template.spec.serviceRef.port", json!(80.0))],
                ),
            ]),
            BTreeMap::from([(TG_RAW.into(), corr(TG_RAW, target_type()))]),
        ),
        (
            "resource type absent from tree yields empty map",
            TG,
            tree(vec![(
                LB,
                "LoadBalancer",
                vec![("spec.name", json!("k8s-test"))],
            )]),
            BTreeMap::new(),
        ),
    ];
    for (name, kind, t, want) in cases {
        assert_eq!(group_by_correlation(kind, &t), want, "{name}");
    }
}
