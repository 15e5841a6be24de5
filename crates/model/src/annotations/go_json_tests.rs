//! Go `encoding/json` key-matching rules.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::from_str;

#[derive(Deserialize, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Inner {
    #[serde(default)]
    status_code: String,
    host: Option<String>,
}

#[derive(Deserialize, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Outer {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(rename = "targetGroupARN")]
    arn: Option<String>,
    inner: Option<Inner>,
    #[serde(default)]
    list: Vec<Inner>,
    #[serde(default)]
    map: BTreeMap<String, String>,
}

#[test]
fn keys_match_case_insensitively_and_unknown_keys_are_ignored() {
    let got: Outer = from_str(
        r#"{"TYPE":"redirect","TargetGroupArn":"arn","Inner":{"StatusCode":"301"},"LIST":[{"HOST":"h"}],"bogus":{"x":1}}"#,
    )
    .unwrap();
    assert_eq!(
        got,
        Outer {
            kind: "redirect".into(),
            arn: Some("arn".into()),
            inner: Some(Inner {
                status_code: "301".into(),
                host: None
            }),
            list: vec![Inner {
                host: Some("h".into()),
                ..Default::default()
            }],
            map: BTreeMap::new(),
        }
    );
}

#[test]
fn map_keys_stay_exact() {
    let got: Outer = from_str(r#"{"map":{"Key":"a","key":"b"}}"#).unwrap();
    assert_eq!(got.map.len(), 2);
    let ports: Vec<BTreeMap<String, i64>> = from_str(r#"[{"HTTP":80,"http":8080}]"#).unwrap();
    assert_eq!(ports[0]["HTTP"], 80);
}

#[derive(Deserialize, Debug, PartialEq)]
struct TwoCases {
    #[serde(rename = "name", default)]
    lower: String,
    #[serde(rename = "Name", default)]
    upper: String,
}

#[test]
fn exact_match_is_preferred_then_the_first_folded_field() {
    let got: TwoCases = from_str(r#"{"Name":"exact","NAME":"folded"}"#).unwrap();
    assert_eq!(
        got,
        TwoCases {
            lower: "folded".into(),
            upper: "exact".into()
        }
    );
}

#[test]
fn repeated_keys_apply_in_document_order() {
    // The later spelling wins, whichever sorts first.
    let got: Outer = from_str(r#"{"type":"forward","Type":"redirect"}"#).unwrap();
    assert_eq!(got.kind, "redirect");
    let got: Outer = from_str(r#"{"Type":"redirect","type":"forward"}"#).unwrap();
    assert_eq!(got.kind, "forward");
    // Objects decode into the same value, as Go reuses the pointer it allocated.
    let got: Outer = from_str(r#"{"inner":{"host":"h"},"Inner":{"statusCode":"302"}}"#).unwrap();
    assert_eq!(
        got.inner,
        Some(Inner {
            status_code: "302".into(),
            host: Some("h".into())
        })
    );
    // null resets.
    let got: Outer = from_str(r#"{"inner":{"host":"h"},"INNER":null,"type":null}"#).unwrap();
    assert_eq!((got.inner, got.kind.as_str()), (None, ""));
}

#[test]
fn go_folds_long_s_and_kelvin_sign_to_ascii() {
    let got: Inner = from_str("{\"\u{17F}tatusCode\":\"1\",\"ho\u{17F}t\":\"h\"}").unwrap();
    assert_eq!(got.status_code, "1");
    assert_eq!(got.host.as_deref(), Some("h"));
    #[derive(Deserialize)]
    struct K {
        #[serde(default)]
        kind: String,
    }
    let got: K = from_str("{\"\u{212A}IND\":\"k\"}").unwrap();
    assert_eq!(got.kind, "k");
}

#[test]
fn type_errors_and_syntax_errors_still_fail() {
    assert!(from_str::<Outer>(r#"{"inner":{"statusCode":301}}"#).is_err());
    assert!(from_str::<Outer>(r#"{"type":"#).is_err());
    assert!(from_str::<Vec<Outer>>(r#"{"type":"x"}"#).is_err());
}
