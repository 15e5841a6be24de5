//! The merged namespace watch keeps the store contract.

use super::*;
use k8s_openapi::api::core::v1::ConfigMap;

fn cm(ns: &str, name: &str) -> ConfigMap {
    ConfigMap {
        metadata: kube::api::ObjectMeta {
            namespace: Some(ns.into()),
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn show(ev: &Item<ConfigMap>) -> String {
    let key = |o: &ConfigMap| format!("{}/{}", o.namespace().unwrap_or_default(), o.name_any());
    match ev {
        Ok(Event::Init) => "Init".into(),
        Ok(Event::InitApply(o)) => format!("InitApply {}", key(o)),
        Ok(Event::InitDone) => "InitDone".into(),
        Ok(Event::Apply(o)) => format!("Apply {}", key(o)),
        Ok(Event::Delete(o)) => format!("Delete {}", key(o)),
        Err(_) => "Err".into(),
    }
}

async fn run(input: Vec<(&str, Event<ConfigMap>)>) -> Vec<String> {
    let input: Vec<(String, Item<ConfigMap>)> = input
        .into_iter()
        .map(|(ns, ev)| (ns.to_string(), Ok(ev)))
        .collect();
    let namespaces = vec!["a".to_string(), "b".to_string()];
    merge(stream::iter(input), &namespaces)
        .map(|ev| show(&ev))
        .collect()
        .await
}

#[tokio::test]
async fn one_initial_list_for_all_namespaces_then_changes() {
    let got = run(vec![
        ("a", Event::Init),
        ("a", Event::InitApply(cm("a", "x"))),
        ("b", Event::Init),
        ("a", Event::InitDone),
        // a's watch runs while b still lists: held until the merged list is complete.
        ("a", Event::Apply(cm("a", "y"))),
        ("b", Event::InitApply(cm("b", "z"))),
        ("b", Event::InitDone),
        ("b", Event::Delete(cm("b", "z"))),
    ])
    .await;
    assert_eq!(
        got,
        [
            "Init",
            "InitApply a/x",
            "InitApply b/z",
            "InitDone",
            "Apply a/y",
            "Delete b/z"
        ]
    );
}

#[tokio::test]
async fn changes_held_for_a_slow_namespace_keep_one_entry_per_object() {
    let mut input = vec![
        ("a", Event::Init),
        ("a", Event::InitDone),
        ("b", Event::Init),
    ];
    // Churn in `a` while `b` has not listed: 1,000 updates of one object, then its deletion.
    for _ in 0..1000 {
        input.push(("a", Event::Apply(cm("a", "busy"))));
    }
    input.push(("a", Event::Apply(cm("a", "other"))));
    input.push(("a", Event::Delete(cm("a", "other"))));
    input.push(("b", Event::InitDone));
    let mut got = run(input).await;
    got[2..].sort();
    assert_eq!(got, ["Init", "InitDone", "Apply a/busy", "Delete a/other"]);
}

#[tokio::test]
async fn a_later_relist_of_one_namespace_never_wipes_the_others() {
    let got = run(vec![
        ("a", Event::Init),
        ("a", Event::InitApply(cm("a", "x"))),
        ("a", Event::InitApply(cm("a", "gone"))),
        ("a", Event::InitDone),
        ("b", Event::Init),
        ("b", Event::InitApply(cm("b", "z"))),
        ("b", Event::InitDone),
        // a's watch expired: it lists again; `gone` was deleted meanwhile.
        ("a", Event::Init),
        ("a", Event::InitApply(cm("a", "x"))),
        ("a", Event::InitApply(cm("a", "new"))),
        ("a", Event::InitDone),
    ])
    .await;
    assert_eq!(
        got,
        [
            "Init",
            "InitApply a/x",
            "InitApply a/gone",
            "InitApply b/z",
            "InitDone",
            "Apply a/x",
            "Apply a/new",
            "Delete a/gone"
        ]
    );
}

#[test]
fn namespaces_parse_as_a_comma_list() {
    assert!(parse_namespaces("").is_empty());
    assert_eq!(parse_namespaces("team-a"), ["team-a"]);
    assert_eq!(parse_namespaces(" a, b ,,a"), ["a", "b"]);
}
