//! `plan -o yaml`'s writer: serde_yaml's layout, no tags, and strings every loader reads back
//! as themselves.

use super::*;
use serde_json::json;

/// What a YAML loader makes of `text`, as JSON.
fn load(text: &str) -> serde_json::Value {
    serde_yaml::from_str(text).unwrap()
}

/// Without tags and strings to quote, the text is serde_yaml's, byte for byte.
#[test]
fn layout_is_serde_yamls() {
    let v = json!({
        "name": "web",
        "port": 80,
        "enabled": true,
        "missing": null,
        "empty": {},
        "none": [],
        "code": "503",
        "nested": {"a": {"b": "c"}, "list": ["x", "y2"]},
        "items": [
            {"id": "one", "tags": {"k": "v"}, "ports": [80, 443]},
            ["inner", "seq"],
            [],
            {},
            "scalar"
        ],
    });
    assert_eq!(to_string(&v).unwrap(), serde_yaml::to_string(&v).unwrap());
    assert_eq!(to_string(&json!([])).unwrap(), "[]\n");
    assert_eq!(to_string(&json!("web")).unwrap(), "web\n");
}

/// `value` through the writer reads back as `-o json` prints it, with no tag in the text.
fn same_as_json<T: Serialize>(value: &T) {
    let text = to_string(value).unwrap();
    assert!(!text.contains('!'), "{text}");
    assert_eq!(load(&text), serde_json::to_value(value).unwrap(), "{text}");
}

/// Every shape of enum variant serde_yaml would tag (newtype, struct, inside sequences and
/// mappings) comes out as the one-key map JSON has.
#[test]
fn enum_variants_are_written_as_json_writes_them() {
    use crate::model::{Subnets, Token};
    same_as_json(&Token::ListenerArn(443));
    same_as_json(&Token::Literal("sg-0123".into()));
    same_as_json(&Token::LoadBalancerArn);
    same_as_json(&[
        Token::TargetGroupArn("shop/web:80".into()),
        Token::ManagedSecurityGroupId,
    ]);
    same_as_json(&Subnets::Selector {
        ids: vec!["subnet-1".into()],
        tags: [("team".to_string(), vec!["web".to_string()])].into(),
    });
    #[derive(Serialize)]
    struct Rule {
        #[serde(rename = "listenerArn")]
        listener_arn: Token,
    }
    let rules = [Rule {
        listener_arn: Token::ListenerArn(80),
    }];
    same_as_json(&rules);
    assert_eq!(
        to_string(&rules).unwrap(),
        "- listenerArn:\n    listenerArn: 80\n"
    );
}

/// Strings a YAML 1.1 loader (PyYAML) would read as something else — `80:1` is the number 4801
/// there, `on` is true — are quoted, and so is anything else not plainly a string.
#[test]
fn strings_every_loader_would_read_as_strings() {
    for (s, want) in [
        ("80:1", "'80:1'"),
        ("on", "'on'"),
        ("No", "'No'"),
        ("null", "'null'"),
        ("~", "'~'"),
        ("", "''"),
        ("2001-12-14", "'2001-12-14'"),
        ("10.0.0.0/16", "'10.0.0.0/16'"),
        ("1_000", "'1_000'"),
        (".inf", "'.inf'"),
        ("=", "'='"),
        ("<<", "'<<'"),
        ("*alias", "'*alias'"),
        ("!tag", "'!tag'"),
        ("a: b", "'a: b'"),
        ("trailing ", "'trailing '"),
        ("it's", "'it''s'"),
        ("#{host}", "'#{host}'"),
        ("café", "'café'"),
        ("two\nlines", "\"two\\nlines\""),
        ("tab\there", "\"tab\\there\""),
        ("quote\" and \\ \u{1}", "\"quote\\\" and \\\\ \\u0001\""),
        ("line\u{2028}sep", "\"line\\u2028sep\""),
    ] {
        assert_eq!(string(s), want, "{s:?}");
        assert_eq!(load(&format!("k: {want}\n"))["k"], s, "{s:?}");
    }
    for s in [
        "web",
        "shop/api-api:8080",
        "kubernetes.io/role/elb",
        "/checkout/*",
        "back soon",
        "arn:aws:acm:us-west-2:123456789012:certificate/abc",
        "_x",
        "Team=web,Env=dev",
    ] {
        assert_eq!(string(s), s);
        assert_eq!(load(&format!("k: {s}\n"))["k"], s, "{s:?}");
    }
}
