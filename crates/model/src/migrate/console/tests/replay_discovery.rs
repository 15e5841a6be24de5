//! Replays `pkg/ingress2gateway/console/discovery_test.go`: `TestParseNamespacedName` (4 cases),
//! `TestReadMigratedFromTag` (4) and `TestResolvePlanHolder` (7, upstream's fake client's
//! Ingresses as the objects read): all 15 cases.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::migrate::console::discovery::{
    parse_namespaced_name, read_migrated_from_tag, resolve_plan_holder,
};

#[test]
fn parse_namespaced_name_cases() {
    let cases: [(&str, &str, Result<(&str, &str), &str>); 4] = [
        ("valid", "my-ns/my-ingress", Ok(("my-ns", "my-ingress"))),
        ("missing slash", "no-slash", Err("invalid namespaced name")),
        ("empty namespace", "/name", Err("invalid namespaced name")),
        ("empty name", "ns/", Err("invalid namespaced name")),
    ];
    for (name, reference, want) in cases {
        match (parse_namespaced_name(reference), want) {
            (Ok((ns, n)), Ok((wns, wn))) => {
                assert_eq!((ns.as_str(), n.as_str()), (wns, wn), "{name}")
            }
            (Err(e), Err(w)) => assert!(e.to_string().contains(w), "{name}: {e}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn read_migrated_from_tag_cases() {
    let cases = [
        (
            "standalone ingress tag",
            r#"{"id":"ns/gw","resources":{"AWS::ElasticLoadBalancingV2::LoadBalancer":{"LoadBalancer":{"spec":{"tags":{"gateway.k8s.aws/migrated-from":"ingress/my-ns/my-ingress"}}}}}}"#,
            "ingress/my-ns/my-ingress",
        ),
        (
            "group ingress tag",
            r#"{"id":"ns/gw","resources":{"AWS::ElasticLoadBalancingV2::LoadBalancer":{"LoadBalancer":{"spec":{"tags":{"gateway.k8s.aws/migrated-from":"ingress-group/my-group"}}}}}}"#,
            "ingress-group/my-group",
        ),
        ("no LB resource", r#"{"id":"ns/gw","resources":{}}"#, ""),
        ("invalid JSON", "not json", ""),
    ];
    for (name, plan, want) in cases {
        assert_eq!(read_migrated_from_tag(plan), want, "{name}");
    }
}

fn member(ns: &str, name: &str, plan: &str) -> ObjectMeta {
    let mut annotations = std::collections::BTreeMap::from([(
        "alb.ingress.kubernetes.io/group.name".to_string(),
        "my-group".to_string(),
    )]);
    if !plan.is_empty() {
        annotations.insert("alb.ingress.kubernetes.io/dry-run-plan".into(), plan.into());
    }
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some(ns.into()),
        annotations: Some(annotations),
        ..Default::default()
    }
}

#[test]
fn resolve_plan_holder_cases() {
    let group = "ingress-group/my-group";
    let cases: Vec<(&str, &str, Vec<ObjectMeta>, Result<&str, &str>)> = vec![
        (
            "standalone tag returns the embedded ref directly",
            "ingress/other-ns/some-ing",
            vec![],
            Ok("other-ns/some-ing"),
        ),
        (
            "unrecognized prefix errors",
            "weird/something",
            vec![],
            Err("unrecognized migrated-from tag"),
        ),
        (
            "empty group name errors",
            "ingress-group/",
            vec![],
            Err("empty ingress-group name"),
        ),
        (
            "group with one holder",
            group,
            vec![
                member("demo", "primary", r#"{"id":"demo/primary"}"#),
                member("demo", "secondary", ""),
            ],
            Ok("demo/primary"),
        ),
        (
            "group with zero holders errors",
            group,
            vec![member("demo", "a", "")],
            Err("no ingress in group"),
        ),
        (
            "group with multiple holders errors and lists members",
            group,
            vec![
                member("demo", "a", r#"{"id":"demo/a"}"#),
                member("demo", "b", r#"{"id":"demo/b"}"#),
            ],
            Err("multiple ingresses in group"),
        ),
        (
            "cross-namespace group: picks holder regardless of namespace",
            group,
            vec![
                member("team-a", "a", ""),
                member("team-b", "b", r#"{"id":"team-b/b"}"#),
            ],
            Ok("team-b/b"),
        ),
    ];
    for (name, tag, ingresses, want) in cases {
        match (resolve_plan_holder(&ingresses, tag), want) {
            (Ok(h), Ok(w)) => assert_eq!(h, w, "{name}"),
            (Err(e), Err(w)) => assert!(e.to_string().contains(w), "{name}: {e}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
    // The multiple-holder text lists them in order.
    let e = resolve_plan_holder(
        &[member("demo", "b", "{}"), member("demo", "a", "{}")],
        group,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("carry a dry-run-plan annotation: demo/a, demo/b;"),
        "{e}"
    );
}
