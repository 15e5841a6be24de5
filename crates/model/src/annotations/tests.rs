//! Parser tests: every type's success path and upstream's exact error texts.

use super::*;

fn m(pairs: &[(&str, &str)]) -> AnnotationMap {
    pairs.iter().map(|(k, v)| (key(k), v.to_string())).collect()
}

#[test]
fn bool_accepts_go_spellings_and_reports_go_error() {
    for (raw, want) in [
        ("true", true),
        ("1", true),
        ("T", true),
        ("False", false),
        ("0", false),
    ] {
        assert_eq!(bool(&m(&[("x", raw)]), "x").unwrap(), Some(want), "{raw}");
    }
    assert_eq!(bool(&m(&[]), "x").unwrap(), None);
    let err = bool(&m(&[("ssl-redirect", "yes")]), "ssl-redirect").unwrap_err();
    assert_eq!(err.key, "alb.ingress.kubernetes.io/ssl-redirect");
    assert_eq!(
        err.to_string(),
        "failed to parse bool annotation, alb.ingress.kubernetes.io/ssl-redirect: yes: strconv.ParseBool: parsing \"yes\": invalid syntax"
    );
}

#[test]
fn int32_syntax_and_range_errors() {
    assert_eq!(
        int32(&m(&[("group.order", "-12")]), "group.order").unwrap(),
        Some(-12)
    );
    assert_eq!(
        int32(&m(&[("group.order", "+7")]), "group.order").unwrap(),
        Some(7)
    );
    assert_eq!(
        int32(&m(&[("group.order", "1.5")]), "group.order").unwrap_err().to_string(),
        "failed to parse int32 annotation, alb.ingress.kubernetes.io/group.order: 1.5: strconv.ParseInt: parsing \"1.5\": invalid syntax"
    );
    assert_eq!(
        int32(&m(&[("group.order", "3000000000")]), "group.order").unwrap_err().to_string(),
        "failed to parse int32 annotation, alb.ingress.kubernetes.io/group.order: 3000000000: strconv.ParseInt: parsing \"3000000000\": value out of range"
    );
    assert_eq!(
        int64(&m(&[("a", "3000000000")]), "a").unwrap(),
        Some(3_000_000_000)
    );
    assert!(int64(&m(&[("a", "")]), "a")
        .unwrap_err()
        .message
        .ends_with("invalid syntax"));
}

#[test]
fn string_list_trims_and_drops_empties() {
    assert_eq!(
        string_list(&m(&[("subnets", " subnet-a, ,subnet-b ,")]), "subnets"),
        Some(vec!["subnet-a".to_string(), "subnet-b".to_string()])
    );
    assert_eq!(string_list(&m(&[("subnets", "")]), "subnets"), Some(vec![]));
    assert_eq!(string_list(&m(&[]), "subnets"), None);
}

#[test]
fn string_map_parses_pairs_escapes_and_values_with_equals() {
    let got = string_map(&m(&[("tags", "Env=prod, Team = web ,k=a=b")]), "tags")
        .unwrap()
        .unwrap();
    assert_eq!(got.get("Env").map(String::as_str), Some("prod"));
    assert_eq!(got.get("Team").map(String::as_str), Some("web"));
    assert_eq!(got.get("k").map(String::as_str), Some("a=b"));
    let escaped = string_map(&m(&[("tags", r"list=a\,b,other=c")]), "tags")
        .unwrap()
        .unwrap();
    assert_eq!(escaped.get("list").map(String::as_str), Some("a,b"));
    // A comma not followed by any '=' is kept inside the value only when nothing follows it.
    let trailing = string_map(&m(&[("tags", "a=b,")]), "tags")
        .unwrap()
        .unwrap();
    assert_eq!(trailing.get("a").map(String::as_str), Some("b,"));
}

#[test]
fn string_map_errors_use_upstream_text() {
    for raw in ["novalue", "a=b,c", "=v"] {
        let err = string_map(&m(&[("tags", raw)]), "tags").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("failed to parse stringMap annotation, alb.ingress.kubernetes.io/tags: {raw}")
        );
    }
}

#[test]
fn json_errors_name_key_and_raw_value() {
    let ok: Option<Vec<u8>> = json(&m(&[("x", "[1,2]")]), "x").unwrap();
    assert_eq!(ok, Some(vec![1, 2]));
    let err = json::<Vec<u8>>(&m(&[("actions.svc", "{bad")]), "actions.svc").unwrap_err();
    assert!(
        err.to_string().starts_with(
            "failed to parse json annotation, alb.ingress.kubernetes.io/actions.svc: {bad: "
        ),
        "{err}"
    );
}

#[test]
fn service_annotations_win_over_ingress() {
    let svc = m(&[("healthcheck-path", "/svc")]);
    let ing = m(&[("healthcheck-path", "/ing"), ("target-type", "ip")]);
    let merged = merge_service_over_ingress(&svc, &ing);
    assert_eq!(string(&merged, "healthcheck-path"), Some("/svc"));
    assert_eq!(string(&merged, "target-type"), Some("ip"));
}
