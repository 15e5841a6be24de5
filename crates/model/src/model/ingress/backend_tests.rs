//! `actions.*`, `conditions.*` and `transforms.*` parsing and validation texts.

use super::*;

fn ann_of(k: &str, v: &str) -> AnnotationMap {
    AnnotationMap::from([(crate::annotations::key(k), v.to_string())])
}

#[test]
fn action_annotation_validation_texts() {
    let cases = [
        (r#"{"type":"fixed-response"}"#, "missing FixedResponseConfig"),
        (r#"{"type":"fixed-response","fixedResponseConfig":{}}"#, "invalid FixedResponseConfig: statusCode is required"),
        (r#"{"type":"redirect","redirectConfig":{}}"#, "invalid RedirectConfig: statusCode is required"),
        (r#"{"type":"forward"}"#, "missing ForwardConfig or TargetGroupARN/TargetGroupName"),
        (
            r#"{"type":"forward","targetGroupARN":"arn:x","forwardConfig":{"targetGroups":[]}}"#,
            "either ForwardConfig or TargetGroupARN/TargetGroupName can be specified",
        ),
        (
            r#"{"type":"forward","forwardConfig":{"targetGroups":[{"weight":1}]}}"#,
            "invalid ForwardConfig: invalid TargetGroupTuple: missing serviceName or targetGroupARN/targetGroupName",
        ),
        (
            r#"{"type":"forward","forwardConfig":{"targetGroups":[{"serviceName":"a"}]}}"#,
            "invalid ForwardConfig: invalid TargetGroupTuple: missing servicePort",
        ),
        (
            r#"{"type":"forward","forwardConfig":{"targetGroups":[{"serviceName":"a","servicePort":80},{"serviceName":"b","servicePort":80,"weight":1}]}}"#,
            "invalid ForwardConfig: weight must be set when route to multiple target groups",
        ),
        (r#"{"type":"teleport"}"#, "unknown action type: teleport"),
    ];
    for (raw, want) in cases {
        let err = action_via_annotation(&ann_of("actions.svc", raw), "svc", true).unwrap_err();
        assert_eq!(err.message, want, "{raw}");
        assert_eq!(
            err.annotation.as_deref(),
            Some("alb.ingress.kubernetes.io/actions.svc")
        );
    }
}

#[test]
fn missing_action_is_503_when_tolerated_else_error() {
    let a = action_via_annotation(&AnnotationMap::new(), "svc", true).unwrap();
    let fr = a.fixed_response_config.unwrap();
    assert_eq!(
        (fr.status_code.as_str(), fr.message_body.as_deref()),
        ("503", Some(NON_EXISTENT_ACTION_BODY))
    );
    let err = action_via_annotation(&AnnotationMap::new(), "svc", false).unwrap_err();
    assert_eq!(err.message, "missing actions.svc configuration");
}

#[test]
fn simplified_forward_and_string_ports_are_normalized() {
    let a = action_via_annotation(
        &ann_of(
            "actions.x",
            r#"{"type":"forward","targetGroupARN":"arn:tg"}"#,
        ),
        "x",
        false,
    )
    .unwrap();
    let fc = a.forward_config.unwrap();
    assert_eq!(
        fc.target_groups[0].target_group_arn.as_deref(),
        Some("arn:tg")
    );
    let raw = r#"{"type":"forward","forwardConfig":{"targetGroups":[{"serviceName":"s","servicePort":"80","weight":1},{"serviceName":"t","servicePort":"http","weight":2}]}}"#;
    let a = action_via_annotation(&ann_of("actions.x", raw), "x", false).unwrap();
    let tgs = a.forward_config.unwrap().target_groups;
    assert_eq!(tgs[0].service_port, Some(IntOrString::Int(80)));
    assert_eq!(
        tgs[1].service_port,
        Some(IntOrString::String("http".into()))
    );
}

#[test]
fn condition_validation_texts() {
    let cases = [
        (r#"[{"field":"host-header"}]"#, "missing hostHeaderConfig"),
        (
            r#"[{"field":"host-header","hostHeaderConfig":{}}]"#,
            "invalid hostHeaderConfig: values or regexValues must be specified",
        ),
        (
            r#"[{"field":"path-pattern","pathPatternConfig":{"values":["/a"],"regexValues":["b"]}}]"#,
            "invalid pathPatternConfig: precisely one of values and regexValues can be specified",
        ),
        (
            r#"[{"field":"http-header","httpHeaderConfig":{"httpHeaderName":"X"}}]"#,
            "invalid httpHeaderConfig: values or regexValues must be specified",
        ),
        (
            r#"[{"field":"http-request-method","httpRequestMethodConfig":{"values":[]}}]"#,
            "invalid httpRequestMethodConfig: values cannot be empty",
        ),
        (
            r#"[{"field":"query-string","queryStringConfig":{"values":[]}}]"#,
            "invalid queryStringConfig: Values cannot be empty",
        ),
        (
            r#"[{"field":"query-string","queryStringConfig":{"values":[{"key":"a"}]}}]"#,
            "invalid queryStringConfig: value cannot be empty",
        ),
        (
            r#"[{"field":"source-ip","sourceIPConfig":{"values":[]}}]"#,
            "invalid sourceIPConfig: values cannot be empty",
        ),
    ];
    for (raw, want) in cases {
        let err = conditions(&ann_of("conditions.svc", raw), "svc").unwrap_err();
        assert_eq!(err.message, want, "{raw}");
    }
    let ok = conditions(
        &ann_of("conditions.svc", r#"[{"field":"something-new"}]"#),
        "svc",
    )
    .unwrap();
    assert_eq!(ok.len(), 1, "unknown fields pass validation like upstream");
}

#[test]
fn transform_validation_texts() {
    let cases = [
        (r#"[{"type":"url-rewrite"}]"#, "missing urlRewriteConfig"),
        (
            r#"[{"type":"host-header-rewrite","hostHeaderRewriteConfig":{"rewrites":[]}}]"#,
            "hostHeaderRewriteConfig.rewrites cannot be empty",
        ),
        (r#"[{"type":"x"}]"#, "unknown transform type: x"),
    ];
    for (raw, want) in cases {
        assert_eq!(
            transforms(&ann_of("transforms.svc", raw), "svc")
                .unwrap_err()
                .message,
            want
        );
    }
}

/// Upstream decodes annotation JSON case-insensitively; its own docs spell `sourceIpConfig`.
#[test]
fn source_ip_config_as_upstreams_docs_spell_it() {
    let c: ConditionInput = serde_json::from_str(
        r#"{"field":"source-ip","sourceIpConfig":{"values":["192.168.0.0/16"]}}"#,
    )
    .unwrap();
    assert_eq!(c.source_ip_config.unwrap().values, vec!["192.168.0.0/16"]);
}
