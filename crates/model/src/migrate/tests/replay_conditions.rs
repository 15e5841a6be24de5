//! Replays `translate/translate_condition_helper_test.go` `TestTranslateConditions`: all 11
//! cases.

use crate::crd::gateway::listener_rule_configuration::ConditionField;
use crate::migrate::conditions::translate_conditions;
use crate::migrate::objects::{
    HttpPathMatch, HttpRouteMatch, HEADER_EXACT, HEADER_REGEX, PATH_EXACT, PATH_REGEX,
};
use crate::model::backend::ConditionInput;

fn exact_path(p: &str) -> Vec<HttpRouteMatch> {
    vec![HttpRouteMatch {
        path: Some(HttpPathMatch {
            type_: Some(PATH_EXACT.into()),
            value: Some(p.into()),
        }),
        ..Default::default()
    }]
}

fn empty_match() -> Vec<HttpRouteMatch> {
    vec![HttpRouteMatch::default()]
}

fn conditions(json: &str) -> Vec<ConditionInput> {
    crate::annotations::go_json::from_str(json).unwrap()
}

fn path_of(m: &HttpRouteMatch) -> (Option<&str>, Option<&str>) {
    let p = m.path.as_ref();
    (
        p.and_then(|p| p.type_.as_deref()),
        p.and_then(|p| p.value.as_deref()),
    )
}

#[test]
fn translate_conditions_upstream_cases() {
    // nil conditions returns nil; empty conditions returns nil
    assert!(translate_conditions(&[], empty_match()).is_none());
    assert!(translate_conditions(&conditions("[]"), empty_match()).is_none());

    // host-header values passed through to AdditionalHostnames
    let r = translate_conditions(
        &conditions(r#"[{"field":"host-header","hostHeaderConfig":{"values":["anno.example.com","*.example.com"]}}]"#),
        empty_match(),
    )
    .unwrap();
    assert_eq!(r.matches.len(), 1);
    assert!(r.listener_rule_conditions.is_empty());
    assert_eq!(
        r.additional_hostnames,
        vec!["anno.example.com", "*.example.com"]
    );

    // path-pattern values add additional matches (OR with base path)
    let r = translate_conditions(
        &conditions(r#"[{"field":"path-pattern","pathPatternConfig":{"values":["/anno/path2"]}}]"#),
        exact_path("/path2"),
    )
    .unwrap();
    assert_eq!(r.matches.len(), 2);
    assert_eq!(path_of(&r.matches[0]).1, Some("/path2"));
    assert_eq!(
        path_of(&r.matches[1]),
        (Some(PATH_EXACT), Some("/anno/path2"))
    );

    // path-pattern regexValues add RegularExpression match
    let r = translate_conditions(
        &conditions(
            r#"[{"field":"path-pattern","pathPatternConfig":{"regexValues":["^/api/?(.*)$"]}}]"#,
        ),
        empty_match(),
    )
    .unwrap();
    assert_eq!(r.matches.len(), 2);
    assert_eq!(
        path_of(&r.matches[1]),
        (Some(PATH_REGEX), Some("^/api/?(.*)$"))
    );

    // http-header values joined with comma in single match
    let r = translate_conditions(
        &conditions(r#"[{"field":"http-header","httpHeaderConfig":{"httpHeaderName":"HeaderName","values":["Val1","Val2"]}}]"#),
        exact_path("/path3"),
    )
    .unwrap();
    assert_eq!(r.matches.len(), 1);
    let m = &r.matches[0];
    assert_eq!(path_of(m).1, Some("/path3"));
    assert_eq!(m.headers.len(), 1);
    assert_eq!(m.headers[0].name, "HeaderName");
    assert_eq!(m.headers[0].type_.as_deref(), Some(HEADER_EXACT));
    assert_eq!(m.headers[0].value, "Val1,Val2");

    // http-header regexValues uses RegularExpression type
    let r = translate_conditions(
        &conditions(r#"[{"field":"http-header","httpHeaderConfig":{"httpHeaderName":"User-Agent","regexValues":[".+Chrome.+"]}}]"#),
        empty_match(),
    )
    .unwrap();
    assert_eq!(r.matches.len(), 1);
    assert_eq!(r.matches[0].headers[0].type_.as_deref(), Some(HEADER_REGEX));
    assert_eq!(r.matches[0].headers[0].value, ".+Chrome.+");

    // http-request-method expands matches (OR)
    let r = translate_conditions(
        &conditions(r#"[{"field":"http-request-method","httpRequestMethodConfig":{"values":["GET","HEAD"]}}]"#),
        exact_path("/path4"),
    )
    .unwrap();
    assert_eq!(r.matches.len(), 2);
    assert_eq!(r.matches[0].method.as_deref(), Some("GET"));
    assert_eq!(r.matches[1].method.as_deref(), Some("HEAD"));
    assert_eq!(path_of(&r.matches[0]).1, Some("/path4"));
    assert_eq!(path_of(&r.matches[1]).1, Some("/path4"));

    // query-string values expand matches (OR within single condition)
    let r = translate_conditions(
        &conditions(r#"[{"field":"query-string","queryStringConfig":{"values":[{"key":"paramA","value":"valueA1"},{"key":"paramA","value":"valueA2"}]}}]"#),
        empty_match(),
    )
    .unwrap();
    assert_eq!(r.matches.len(), 2);
    assert_eq!(r.matches[0].query_params[0].value, "valueA1");
    assert_eq!(r.matches[1].query_params[0].value, "valueA2");

    // source-ip goes to LRC
    let r = translate_conditions(
        &conditions(r#"[{"field":"source-ip","sourceIpConfig":{"values":["192.168.0.0/16","172.16.0.0/16"]}}]"#),
        empty_match(),
    )
    .unwrap();
    assert_eq!((r.matches.len(), r.listener_rule_conditions.len()), (1, 1));
    let c = &r.listener_rule_conditions[0];
    assert_eq!(c.field, ConditionField::SourceIp);
    assert_eq!(
        c.source_ip_config.as_ref().unwrap().values,
        vec!["192.168.0.0/16", "172.16.0.0/16"]
    );

    // multiple conditions — http-header AND query-string AND query-string (rule-path7)
    let r = translate_conditions(
        &conditions(r#"[{"field":"http-header","httpHeaderConfig":{"httpHeaderName":"HeaderName","values":["HeaderValue"]}},{"field":"query-string","queryStringConfig":{"values":[{"key":"paramA","value":"valueA"}]}},{"field":"query-string","queryStringConfig":{"values":[{"key":"paramB","value":"valueB"}]}}]"#),
        exact_path("/path7"),
    )
    .unwrap();
    assert_eq!(r.matches.len(), 1);
    let m = &r.matches[0];
    assert_eq!(path_of(m).1, Some("/path7"));
    assert_eq!(m.headers.len(), 1);
    assert_eq!(m.headers[0].value, "HeaderValue");
    let q: Vec<&str> = m.query_params.iter().map(|q| q.value.as_str()).collect();
    assert_eq!(q, vec!["valueA", "valueB"]);
}
