//! Replays `translate/group_test.go`: `TestPartitionByGroup` (3), `TestSortMembers` (4),
//! `TestPartitionByGroupDeterministicNamespace` (3), `TestMergeGroupLBAnnotations` (8),
//! `TestMergeGroupListenPorts` (4), `TestResolveGroupICPs` (3), `TestResolveGroupSSLRedirect`
//! (7), `TestBuildMemberParentRefs` (4): all 36 cases.

use std::collections::BTreeMap;

use super::{icp, ingress, lp};
use crate::crd::IngressClassParams;
use crate::migrate::group::*;

const GROUP: &str = "alb.ingress.kubernetes.io/group.name";
const ORDER: &str = "alb.ingress.kubernetes.io/group.order";

fn with_class(
    ns: &str,
    name: &str,
    annotations: &[(&str, &str)],
    class: &str,
) -> k8s_openapi::api::networking::v1::Ingress {
    ingress(ns, name, annotations, &format!("ingressClassName: {class}"))
}

#[test]
fn partition_by_group() {
    let cases = vec![
        (
            "two ingresses same group, one ungrouped",
            vec![
                ingress("team-a", "api", &[(GROUP, "shared")], ""),
                ingress("team-b", "web", &[(GROUP, "shared")], ""),
                ingress("default", "solo", &[], ""),
            ],
            1,
            1,
            vec![("shared", 2)],
        ),
        (
            "all ungrouped",
            vec![
                ingress("default", "a", &[], ""),
                ingress("default", "b", &[], ""),
            ],
            0,
            2,
            vec![],
        ),
        (
            "two different groups",
            vec![
                ingress("ns", "a", &[(GROUP, "g1")], ""),
                ingress("ns", "b", &[(GROUP, "g2")], ""),
            ],
            2,
            0,
            vec![("g1", 1), ("g2", 1)],
        ),
    ];
    for (name, ings, explicit, implicit, sizes) in cases {
        let groups = super::super::group::partition_by_group(&ings);
        let sizes: BTreeMap<&str, usize> = sizes.into_iter().collect();
        let (mut e, mut i) = (0, 0);
        for g in &groups {
            if g.is_explicit {
                e += 1;
                if let Some(n) = sizes.get(g.name.as_str()) {
                    assert_eq!(g.members.len(), *n, "{name}: group {}", g.name);
                }
            } else {
                i += 1;
                assert_eq!(g.members.len(), 1, "{name}");
            }
        }
        assert_eq!((e, i), (explicit, implicit), "{name}");
    }
}

fn order_of(members: &[k8s_openapi::api::networking::v1::Ingress]) -> Vec<String> {
    members
        .iter()
        .map(|m| {
            format!(
                "{}/{}",
                m.metadata.namespace.as_deref().unwrap_or_default(),
                m.metadata.name.as_deref().unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn sort_members_upstream_cases() {
    let cases = vec![
        (
            "sort by group.order ascending",
            vec![
                ingress("ns", "high", &[(ORDER, "10")], ""),
                ingress("ns", "low", &[(ORDER, "1")], ""),
            ],
            vec!["ns/low", "ns/high"],
        ),
        (
            "same group.order tie-breaks by namespace/name",
            vec![
                ingress("ns", "z-ingress", &[], ""),
                ingress("ns", "a-ingress", &[], ""),
            ],
            vec!["ns/a-ingress", "ns/z-ingress"],
        ),
        (
            "same group.order tie-breaks by namespace first",
            vec![
                ingress("team-b", "app", &[], ""),
                ingress("team-a", "app", &[], ""),
            ],
            vec!["team-a/app", "team-b/app"],
        ),
        (
            "mixed: group.order wins over lexical name",
            vec![
                ingress("ns", "aaa", &[(ORDER, "100")], ""),
                ingress("ns", "zzz", &[(ORDER, "1")], ""),
                ingress("ns", "mmm", &[], ""),
            ],
            vec!["ns/mmm", "ns/zzz", "ns/aaa"],
        ),
    ];
    for (name, mut members, want) in cases {
        sort_members(&mut members);
        assert_eq!(order_of(&members), want, "{name}");
    }
}

#[test]
fn partition_by_group_deterministic_namespace() {
    let cases = vec![
        (
            "cross-namespace group picks lowest order member namespace",
            vec![
                ingress("team-b", "web", &[(GROUP, "shared"), (ORDER, "10")], ""),
                ingress("team-a", "api", &[(GROUP, "shared"), (ORDER, "1")], ""),
            ],
            "team-a",
        ),
        (
            "reverse input order produces same result",
            vec![
                ingress("team-a", "api", &[(GROUP, "shared"), (ORDER, "1")], ""),
                ingress("team-b", "web", &[(GROUP, "shared"), (ORDER, "10")], ""),
            ],
            "team-a",
        ),
        (
            "same group.order falls back to lexical namespace/name",
            vec![
                ingress("zulu", "ing", &[(GROUP, "shared")], ""),
                ingress("alpha", "ing", &[(GROUP, "shared")], ""),
            ],
            "alpha",
        ),
    ];
    for (name, ings, ns) in cases {
        let groups = super::super::group::partition_by_group(&ings);
        assert_eq!(groups.len(), 1, "{name}");
        assert_eq!(groups[0].namespace, ns, "{name}");
    }
}

#[test]
fn merge_group_lb_annotations_upstream_cases() {
    let scheme = "alb.ingress.kubernetes.io/scheme";
    let cert = "alb.ingress.kubernetes.io/certificate-arn";
    let tags = "alb.ingress.kubernetes.io/tags";
    type Check = Box<dyn Fn(&BTreeMap<String, String>)>;
    let has = |k: &'static str, v: &'static str| -> Check {
        Box::new(move |m: &BTreeMap<String, String>| {
            assert_eq!(m.get(k).map(String::as_str), Some(v))
        })
    };
    let cases: Vec<(&str, Vec<_>, Option<&str>, Vec<Check>)> = vec![
        (
            "single member passthrough",
            vec![ingress(
                "ns",
                "a",
                &[
                    (scheme, "internal"),
                    ("alb.ingress.kubernetes.io/target-type", "ip"),
                ],
                "",
            )],
            None,
            vec![
                has(scheme, "internal"),
                has("alb.ingress.kubernetes.io/target-type", "ip"),
            ],
        ),
        (
            "same scheme no conflict",
            vec![
                ingress("ns", "a", &[(scheme, "internal")], ""),
                ingress("ns", "b", &[(scheme, "internal")], ""),
            ],
            None,
            vec![has(scheme, "internal")],
        ),
        (
            "conflicting scheme errors",
            vec![
                ingress("ns", "a", &[(scheme, "internal")], ""),
                ingress("ns", "b", &[(scheme, "internet-facing")], ""),
            ],
            Some("conflicting annotation"),
            vec![],
        ),
        (
            "certificate-arn union",
            vec![
                ingress("ns", "a", &[(cert, "arn:cert-a")], ""),
                ingress("ns", "b", &[(cert, "arn:cert-b")], ""),
            ],
            None,
            vec![has(cert, "arn:cert-a,arn:cert-b")],
        ),
        (
            "certificate-arn dedup",
            vec![
                ingress("ns", "a", &[(cert, "arn:cert-a,arn:cert-b")], ""),
                ingress("ns", "b", &[(cert, "arn:cert-b,arn:cert-c")], ""),
            ],
            None,
            vec![has(cert, "arn:cert-a,arn:cert-b,arn:cert-c")],
        ),
        (
            "tags union no conflict",
            vec![
                ingress("ns", "a", &[(tags, "env=prod")], ""),
                ingress("ns", "b", &[(tags, "team=platform")], ""),
            ],
            None,
            vec![Box::new(move |m: &BTreeMap<String, String>| {
                let v = &m[tags];
                assert!(v.contains("env=prod") && v.contains("team=platform"), "{v}");
            }) as Check],
        ),
        (
            "tags conflict errors",
            vec![
                ingress("ns", "a", &[(tags, "env=prod")], ""),
                ingress("ns", "b", &[(tags, "env=staging")], ""),
            ],
            Some("conflicting tags"),
            vec![],
        ),
        (
            "one member sets annotation other does not",
            vec![
                ingress("ns", "a", &[(scheme, "internal")], ""),
                ingress("ns", "b", &[], ""),
            ],
            None,
            vec![has(scheme, "internal")],
        ),
    ];
    assert_eq!(cases.len(), 8);
    for (name, members, err, checks) in cases {
        match (merge_group_lb_annotations(&members), err) {
            (Err(e), Some(w)) => assert!(e.to_string().contains(w), "{name}: {e}"),
            (Ok(m), None) => checks.iter().for_each(|c| c(&m)),
            (got, _) => panic!("{name}: {got:?}"),
        }
    }
}

#[test]
fn merge_group_listen_ports_upstream_cases() {
    let ports = "alb.ingress.kubernetes.io/listen-ports";
    let cases = vec![
        (
            "union different ports",
            vec![
                ingress("ns", "a", &[(ports, r#"[{"HTTP":80}]"#)], ""),
                ingress("ns", "b", &[(ports, r#"[{"HTTPS":443}]"#)], ""),
            ],
            2,
            vec!["ns/a", "ns/b"],
        ),
        (
            "same ports dedup",
            vec![
                ingress("ns", "a", &[(ports, r#"[{"HTTP":80}]"#)], ""),
                ingress("ns", "b", &[(ports, r#"[{"HTTP":80}]"#)], ""),
            ],
            1,
            vec![],
        ),
        (
            "default port when no annotation",
            vec![ingress("ns", "a", &[], "")],
            1,
            vec![],
        ),
        (
            "default HTTPS when member has cert-arn",
            vec![ingress(
                "ns",
                "a",
                &[("alb.ingress.kubernetes.io/certificate-arn", "arn:cert")],
                "",
            )],
            1,
            vec![],
        ),
    ];
    for (name, members, n, keys) in cases {
        let (all, per) = merge_group_listen_ports(&members).unwrap();
        assert_eq!(all.len(), n, "{name}");
        for k in keys {
            assert!(per.contains_key(k), "{name}: {k}");
        }
    }
    // The defaults themselves.
    let (all, _) = merge_group_listen_ports(&[ingress("ns", "a", &[], "")]).unwrap();
    assert_eq!(all, vec![lp("HTTP", 80)]);
    let certified = ingress(
        "ns",
        "a",
        &[("alb.ingress.kubernetes.io/certificate-arn", "arn:cert")],
        "",
    );
    let (all, _) = merge_group_listen_ports(&[certified]).unwrap();
    assert_eq!(all, vec![lp("HTTPS", 443)]);
}

#[test]
fn resolve_group_icps_upstream_cases() {
    let params_a = icp("params-a", "{}");
    let by_class: BTreeMap<String, &IngressClassParams> =
        BTreeMap::from([("alb".to_string(), &params_a)]);
    let cases = vec![
        ("no ICP", vec![ingress("ns", "a", &[], "")], 0),
        (
            "one member with ICP",
            vec![
                with_class("ns", "a", &[], "alb"),
                ingress("ns", "b", &[], ""),
            ],
            1,
        ),
        (
            "same ICP deduped",
            vec![
                with_class("ns", "a", &[], "alb"),
                with_class("ns", "b", &[], "alb"),
            ],
            1,
        ),
    ];
    for (name, members, n) in cases {
        let icps = resolve_group_icps(&members, &by_class);
        assert_eq!(icps.len(), n, "{name}");
        if n > 0 {
            assert_eq!(icps[0].metadata.name.as_deref(), Some("params-a"), "{name}");
        }
    }
}

#[test]
fn resolve_group_ssl_redirect_upstream_cases() {
    let redirect = "alb.ingress.kubernetes.io/ssl-redirect";
    let with_redirect = icp("params-redirect", "{sslRedirectPort: '443'}");
    let with_other = icp("params-redirect-8443", "{sslRedirectPort: '8443'}");
    let without = icp("params-no-redirect", "{}");
    let none: BTreeMap<String, &IngressClassParams> = BTreeMap::new();
    let alb = |p: &'static IngressClassParams| BTreeMap::from([("alb".to_string(), p)]);
    // The params outlive the cases.
    let with_redirect: &'static IngressClassParams = Box::leak(Box::new(with_redirect));
    let with_other: &'static IngressClassParams = Box::leak(Box::new(with_other));
    let without: &'static IngressClassParams = Box::leak(Box::new(without));
    let cases: Vec<(
        &str,
        Vec<_>,
        BTreeMap<String, &IngressClassParams>,
        Result<Option<i32>, &str>,
    )> = vec![
        (
            "no ssl-redirect anywhere",
            vec![ingress("ns", "a", &[], "")],
            none.clone(),
            Ok(None),
        ),
        (
            "one member sets ssl-redirect via annotation",
            vec![
                ingress("ns", "a", &[(redirect, "443")], ""),
                ingress("ns", "b", &[], ""),
            ],
            none.clone(),
            Ok(Some(443)),
        ),
        (
            "conflicting annotation values",
            vec![
                ingress("ns", "a", &[(redirect, "443")], ""),
                ingress("ns", "b", &[(redirect, "8443")], ""),
            ],
            none.clone(),
            Err("conflicting ssl-redirect"),
        ),
        (
            "ICP sets ssl-redirect, annotation ignored",
            vec![with_class("ns", "a", &[(redirect, "8443")], "alb")],
            alb(with_redirect),
            Ok(Some(443)),
        ),
        (
            "ICP sets ssl-redirect, member B annotation differs — error",
            vec![
                with_class("ns", "a", &[], "alb"),
                ingress("ns", "b", &[(redirect, "8443")], ""),
            ],
            alb(with_redirect),
            Err("conflicting ssl-redirect"),
        ),
        (
            "two ICPs with different ssl-redirect — error",
            vec![
                with_class("ns", "a", &[], "alb"),
                with_class("ns", "b", &[], "alb-other"),
            ],
            BTreeMap::from([
                ("alb".to_string(), with_redirect),
                ("alb-other".to_string(), with_other),
            ]),
            Err("conflicting ssl-redirect"),
        ),
        (
            "ICP without ssl-redirect falls through to annotation",
            vec![with_class("ns", "a", &[(redirect, "443")], "alb")],
            alb(without),
            Ok(Some(443)),
        ),
    ];
    assert_eq!(cases.len(), 7);
    for (name, members, by_class, want) in cases {
        match (resolve_group_ssl_redirect(&members, &by_class), want) {
            (Ok(got), Ok(w)) => assert_eq!(got, w, "{name}"),
            (Err(e), Err(w)) => assert!(e.to_string().contains(w), "{name}: {e}"),
            (got, w) => panic!("{name}: got {got:?}, want {w:?}"),
        }
    }
}

#[test]
fn build_member_parent_refs_upstream_cases() {
    let cases = vec![
        (
            "single port gets explicit sectionName",
            vec![lp("HTTP", 80)],
            None,
            "ns",
            "ns",
            vec!["http-80"],
            false,
        ),
        (
            "multiple member ports each get sectionName",
            vec![lp("HTTP", 80), lp("HTTPS", 443)],
            None,
            "ns",
            "ns",
            vec!["http-80", "https-443"],
            false,
        ),
        (
            "ssl-redirect scopes to HTTPS only",
            vec![lp("HTTP", 80), lp("HTTPS", 443)],
            Some(443),
            "ns",
            "ns",
            vec!["https-443"],
            false,
        ),
        (
            "cross-namespace adds namespace",
            vec![lp("HTTP", 80)],
            None,
            "team-b",
            "team-a",
            vec!["http-80"],
            true,
        ),
    ];
    for (name, ports, redirect, member_ns, gw_ns, sections, namespaced) in cases {
        let refs = build_member_parent_refs("gw", gw_ns, member_ns, &ports, redirect);
        let got: Vec<&str> = refs
            .iter()
            .map(|r| r.section_name.as_deref().unwrap_or_default())
            .collect();
        assert_eq!(got, sections, "{name}");
        if namespaced {
            assert_eq!(refs[0].namespace.as_deref(), Some(gw_ns), "{name}");
        } else {
            assert!(refs[0].namespace.is_none(), "{name}");
        }
    }
}
