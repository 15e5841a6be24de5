//! The Go printers' text: go-yaml v2's quoting, key order, folding and layout, and
//! `encoding/json`'s indentation and escapes.

use super::*;
use serde_json::json;

#[test]
fn strings_that_would_read_as_something_else_are_double_quoted() {
    // Keys too: go-yaml writes a key as it writes a value.
    let v = json!({
        "bool": "true", "yes": "yes", "on": "On", "null": "null", "empty": "",
        "int": "80", "octal": "0755", "hex": "0x1F", "float": "1.5", "exp": "1e3",
        "date": "2024-01-02", "sexagesimal": "80:1", "tilde": "~",
        "name": "2048-game", "arn": "arn:aws:acm:us-west-2:123:certificate/abc",
    });
    assert_eq!(
        to_yaml(&v),
        "arn: arn:aws:acm:us-west-2:123:certificate/abc\n\
         bool: \"true\"\n\
         date: \"2024-01-02\"\n\
         empty: \"\"\n\
         exp: \"1e3\"\n\
         float: \"1.5\"\n\
         hex: \"0x1F\"\n\
         int: \"80\"\n\
         name: 2048-game\n\
         \"null\": \"null\"\n\
         octal: \"0755\"\n\
         \"on\": \"On\"\n\
         sexagesimal: \"80:1\"\n\
         tilde: \"~\"\n\
         \"yes\": \"yes\"\n"
    );
}

#[test]
fn strings_that_cannot_be_plain_are_single_quoted() {
    let v =
        json!({"a": "*.example.com", "b": "key: value", "c": " lead", "d": "it's #1", "e": "x #y"});
    assert_eq!(
        to_yaml(&v),
        "a: '*.example.com'\nb: 'key: value'\nc: ' lead'\nd: 'it''s #1'\ne: 'x #y'\n"
    );
}

#[test]
fn keys_sort_in_go_yamls_natural_order() {
    let mut keys = vec![
        "b10",
        "b9",
        "a_b",
        "aB",
        "Ab",
        "a-b",
        "port",
        "protocol",
        "name",
        "namespace",
    ];
    keys.sort_by(|a, b| key_order(a, b));
    assert_eq!(
        keys,
        vec![
            "Ab",
            "a-b",
            "a_b",
            "aB",
            "b9",
            "b10",
            "name",
            "namespace",
            "port",
            "protocol"
        ]
    );
}

#[test]
fn layout_is_go_yamls() {
    let v = json!({
        "spec": {
            "hostnames": ["app.example.com"],
            "rules": [{"backendRefs": [{"name": "svc", "port": 80}], "matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}],
            "empty": {},
            "none": [],
        }
    });
    assert_eq!(
        to_yaml(&v),
        "spec:\n  empty: {}\n  hostnames:\n  - app.example.com\n  none: []\n  rules:\n  - backendRefs:\n    - name: svc\n      port: 80\n    matches:\n    - path:\n        type: PathPrefix\n        value: /\n"
    );
}

#[test]
fn long_strings_fold_at_a_space_past_column_80() {
    let body = "word ".repeat(30);
    let body = body.trim_end();
    let text = to_yaml(&json!({"messageBody": body}));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 1, "{text}");
    assert!(lines[0].starts_with("messageBody: word word"), "{text}");
    assert!(lines[1].starts_with("  word"), "{text}");
    // Folded lines read back as the one string.
    let back: serde_json::Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(back["messageBody"], body);
}

#[test]
fn strings_with_line_breaks_are_literal_blocks() {
    let text = to_yaml(&json!({"body": "line one\nline two"}));
    assert_eq!(text, "body: |-\n  line one\n  line two\n");
    let back: serde_json::Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(back["body"], "line one\nline two");
}

#[test]
fn json_is_marshal_indent_with_four_spaces_and_html_escapes() {
    let v = json!({"b": [1, {"x": "<a&b>"}], "a": {}, "c": []});
    assert_eq!(
        to_json(&v),
        "{\n    \"a\": {},\n    \"b\": [\n        1,\n        {\n            \"x\": \"\\u003ca\\u0026b\\u003e\"\n        }\n    ],\n    \"c\": []\n}\n"
    );
}
