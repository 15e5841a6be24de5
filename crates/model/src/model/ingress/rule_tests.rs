//! Path ordering/conversion, condition assembly and optimiser tests.

use super::*;
use k8s_openapi::api::networking::v1::HTTPIngressPath;

fn p(path: &str, ty: &str) -> HTTPIngressPath {
    HTTPIngressPath {
        path: Some(path.into()),
        path_type: ty.into(),
        ..Default::default()
    }
}

#[test]
fn paths_sort_exact_then_longest_prefix_then_rest_in_written_order() {
    let paths = vec![
        p("/a", "Prefix"),
        p("/impl1", "ImplementationSpecific"),
        p("/exact", "Exact"),
        p("/longer/prefix", "Prefix"),
        p("/bb", "Prefix"),
        p("/cc", "Prefix"),
        p("/impl2", "ImplementationSpecific"),
    ];
    let sorted: Vec<&str> = sort_paths(&paths)
        .unwrap()
        .iter()
        .map(|p| p.path.as_deref().unwrap())
        .collect();
    assert_eq!(
        sorted,
        vec![
            "/exact",
            "/longer/prefix",
            "/bb",
            "/cc",
            "/a",
            "/impl1",
            "/impl2"
        ]
    );
    let err = sort_paths(&[p("/x", "Weird")]).unwrap_err();
    assert_eq!(err.message, "unknown pathType for path /x");
}

#[test]
fn path_patterns_follow_upstream_conversion() {
    assert_eq!(
        path_patterns("/", "Prefix", false).unwrap(),
        (vec!["/*".to_string()], vec![])
    );
    assert_eq!(
        path_patterns("/foo/", "Prefix", false).unwrap().0,
        vec!["/foo", "/foo/*"]
    );
    assert_eq!(
        path_patterns("/foo", "Prefix", false).unwrap().0,
        vec!["/foo", "/foo/*"]
    );
    assert_eq!(
        path_patterns("/foo", "Exact", false).unwrap().0,
        vec!["/foo"]
    );
    assert_eq!(
        path_patterns("/img/*", "ImplementationSpecific", false)
            .unwrap()
            .0,
        vec!["/img/*"]
    );
    assert_eq!(
        path_patterns("/api/v[0-9]+", "ImplementationSpecific", true)
            .unwrap()
            .1,
        vec!["api/v[0-9]+"]
    );
    assert_eq!(
        path_patterns("/a*", "Exact", false).unwrap_err().message,
        "exact path shouldn't contain wildcards: /a*"
    );
    assert_eq!(
        path_patterns("/a?", "Prefix", false).unwrap_err().message,
        "prefix path shouldn't contain wildcards: /a?"
    );
}

#[test]
fn conditions_merge_host_path_and_annotation_entries() {
    let extra = vec![
        ConditionInput {
            field: "host-header".into(),
            host_header_config: Some(ValuesConfig {
                values: vec!["b.example.com".into()],
                regex_values: vec![],
            }),
            ..Default::default()
        },
        ConditionInput {
            field: "source-ip".into(),
            source_ip_config: Some(ListConfig {
                values: vec!["10.0.0.0/8".into()],
            }),
            ..Default::default()
        },
    ];
    let c = conditions(
        Some("a.example.com"),
        Some((vec!["/x".into()], vec![])),
        &extra,
    )
    .unwrap();
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(
        json,
        serde_json::json!([
            {"field": "source-ip", "sourceIPConfig": {"values": ["10.0.0.0/8"]}},
            {"field": "host-header", "hostHeaderConfig": {"values": ["a.example.com", "b.example.com"]}},
            {"field": "path-pattern", "pathPatternConfig": {"values": ["/x"]}}
        ])
    );
    assert_eq!(
        serde_json::to_value(conditions(None, None, &[]).unwrap()).unwrap(),
        serde_json::json!([{"field": "path-pattern", "pathPatternConfig": {"values": ["/*"]}}])
    );
    let mixed = vec![ConditionInput {
        field: "path-pattern".into(),
        path_pattern_config: Some(ValuesConfig {
            values: vec![],
            regex_values: vec!["^/r".into()],
        }),
        ..Default::default()
    }];
    let err = conditions(None, Some((vec!["/x".into()], vec![])), &mixed).unwrap_err();
    assert_eq!(
        err.message,
        "path condition must specify exactly one of Values and RegexValues, got both Values [/x] and RegexValues [^/r]"
    );
}

fn draft(conds: Vec<RuleCondition>, action: Action) -> DraftRule {
    DraftRule {
        ingress: "ns/i".into(),
        conditions: conds,
        actions: vec![action],
        transforms: vec![],
        tags: Default::default(),
    }
}

#[test]
fn optimizer_drops_infinite_redirect_and_shadowed_rules() {
    let redirect = Action::Redirect {
        config: RedirectConfig {
            port: Some("443".into()),
            protocol: Some("HTTPS".into()),
            status_code: "HTTP_301".into(),
            ..Default::default()
        },
    };
    let all = || {
        vec![RuleCondition::PathPattern {
            config: ValuesConfig {
                values: vec!["/*".into()],
                regex_values: vec![],
            },
        }]
    };
    let fwd = Action::fixed("200", None);
    // On HTTPS:443 the redirect to HTTPS:443 would loop: dropped; the forward rule stays.
    let out = optimize(
        443,
        Protocol::Https,
        vec![draft(all(), redirect.clone()), draft(all(), fwd.clone())],
    );
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].actions[0], fwd);
    // On HTTP:80 the redirect catches everything, so the following rule is shadowed.
    let out = optimize(
        80,
        Protocol::Http,
        vec![draft(all(), redirect.clone()), draft(all(), fwd)],
    );
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].actions[0], redirect);
}
