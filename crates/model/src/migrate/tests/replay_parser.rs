//! Replays `translate/ingress_annotation_parser_test.go`: `TestParseActionAnnotation` (8),
//! `TestParseListenPorts` (4), `TestParseConditionAnnotation` (5): all 17 cases.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{annotations_map, lp};
use crate::migrate::annotations::*;

#[test]
fn parse_action_annotation_upstream_cases() {
    let key = |n: &str| -> &'static str {
        Box::leak(format!("alb.ingress.kubernetes.io/actions.{n}").into_boxed_str())
    };
    // fixed-response action
    let a = annotations_map(&[(
        key("response-503"),
        r#"{"type":"fixed-response","fixedResponseConfig":{"contentType":"text/plain","statusCode":"503","messageBody":"503 error text"}}"#,
    )]);
    let got = parse_action_annotation(&a, "response-503").unwrap();
    assert_eq!(got.action_type, "fixed-response");
    let f = got.fixed_response_config.unwrap();
    assert_eq!(f.status_code, "503");
    assert_eq!(f.message_body.as_deref(), Some("503 error text"));
    // redirect action
    let a = annotations_map(&[(
        key("redirect-to-eks"),
        r#"{"type":"redirect","redirectConfig":{"host":"aws.amazon.com","path":"/eks/","port":"443","protocol":"HTTPS","query":"k=v","statusCode":"HTTP_302"}}"#,
    )]);
    let got = parse_action_annotation(&a, "redirect-to-eks").unwrap();
    assert_eq!(got.action_type, "redirect");
    let r = got.redirect_config.unwrap();
    assert_eq!(r.host.as_deref(), Some("aws.amazon.com"));
    assert_eq!(r.status_code, "HTTP_302");
    // forward single TG by ARN (simplified schema)
    let a = annotations_map(&[(
        key("forward-single-tg"),
        r#"{"type":"forward","targetGroupARN":"arn:aws:elasticloadbalancing:us-west-2:123456789:targetgroup/my-tg/abc123"}"#,
    )]);
    let got = parse_action_annotation(&a, "forward-single-tg").unwrap();
    assert_eq!(got.action_type, "forward");
    let fc = got.forward_config.unwrap();
    assert_eq!(fc.target_groups.len(), 1);
    assert!(fc.target_groups[0].target_group_arn.is_some());
    // forward single TG by name (simplified schema)
    let a = annotations_map(&[(
        key("forward-by-name"),
        r#"{"type":"forward","targetGroupName":"my-target-group"}"#,
    )]);
    let fc = parse_action_annotation(&a, "forward-by-name")
        .unwrap()
        .forward_config
        .unwrap();
    assert_eq!(fc.target_groups.len(), 1);
    assert!(fc.target_groups[0].target_group_name.is_some());
    // forward multiple TGs with stickiness (advanced schema)
    let a = annotations_map(&[(
        key("forward-multiple-tg"),
        r#"{"type":"forward","forwardConfig":{"targetGroups":[{"serviceName":"service-1","servicePort":"http","weight":20},{"serviceName":"service-2","servicePort":80,"weight":20},{"targetGroupARN":"arn-of-tg","weight":60}],"targetGroupStickinessConfig":{"enabled":true,"durationSeconds":200}}}"#,
    )]);
    let fc = parse_action_annotation(&a, "forward-multiple-tg")
        .unwrap()
        .forward_config
        .unwrap();
    assert_eq!(fc.target_groups.len(), 3);
    assert_eq!(
        fc.target_group_stickiness_config.unwrap().enabled,
        Some(true)
    );
    // servicePort string is normalized to int (backwards compat)
    let a = annotations_map(&[(
        key("forward-str-port"),
        r#"{"type":"forward","forwardConfig":{"targetGroups":[{"serviceName":"svc","servicePort":"80"}]}}"#,
    )]);
    let fc = parse_action_annotation(&a, "forward-str-port")
        .unwrap()
        .forward_config
        .unwrap();
    assert_eq!(fc.target_groups[0].service_port, Some(IntOrString::Int(80)));
    // missing annotation
    let err = parse_action_annotation(&annotations_map(&[]), "nonexistent").unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"missing action annotation "actions.nonexistent" for service "nonexistent""#
    );
    // invalid JSON
    let a = annotations_map(&[(key("bad"), "{invalid")]);
    assert!(parse_action_annotation(&a, "bad").is_err());
}

#[test]
fn parse_listen_ports_upstream_cases() {
    let key = "alb.ingress.kubernetes.io/listen-ports";
    assert_eq!(
        parse_listen_ports(&annotations_map(&[])).unwrap(),
        Vec::<ListenPort>::new(),
        "not present"
    );
    assert_eq!(
        parse_listen_ports(&annotations_map(&[(key, r#"[{"HTTP": 80}]"#)])).unwrap(),
        vec![lp("HTTP", 80)],
        "single HTTP"
    );
    assert_eq!(
        parse_listen_ports(&annotations_map(&[(
            key,
            r#"[{"HTTP": 80}, {"HTTPS": 443}]"#
        )]))
        .unwrap(),
        vec![lp("HTTP", 80), lp("HTTPS", 443)],
        "multiple ports"
    );
    assert!(
        parse_listen_ports(&annotations_map(&[(key, "invalid")])).is_err(),
        "invalid JSON"
    );
}

#[test]
fn parse_condition_annotation_upstream_cases() {
    let key = |n: &str| -> &'static str {
        Box::leak(format!("alb.ingress.kubernetes.io/conditions.{n}").into_boxed_str())
    };
    // not present returns nil
    assert!(parse_condition_annotation(&annotations_map(&[]), "my-svc")
        .unwrap()
        .is_empty());
    // single host-header condition with values
    let a = annotations_map(&[(
        key("my-svc"),
        r#"[{"field":"host-header","hostHeaderConfig":{"values":["anno.example.com"]}}]"#,
    )]);
    let c = parse_condition_annotation(&a, "my-svc").unwrap();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].field, "host-header");
    assert_eq!(
        c[0].host_header_config.as_ref().unwrap().values,
        vec!["anno.example.com"]
    );
    // multiple conditions (http-header + query-string + query-string)
    let a = annotations_map(&[(
        key("rule-path7"),
        r#"[{"field":"http-header","httpHeaderConfig":{"httpHeaderName":"HeaderName","values":["HeaderValue"]}},{"field":"query-string","queryStringConfig":{"values":[{"key":"paramA","value":"valueA"}]}},{"field":"query-string","queryStringConfig":{"values":[{"key":"paramB","value":"valueB"}]}}]"#,
    )]);
    let c = parse_condition_annotation(&a, "rule-path7").unwrap();
    let fields: Vec<&str> = c.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(fields, vec!["http-header", "query-string", "query-string"]);
    // source-ip condition
    let a = annotations_map(&[(
        key("my-svc"),
        r#"[{"field":"source-ip","sourceIpConfig":{"values":["192.168.0.0/16","172.16.0.0/16"]}}]"#,
    )]);
    let c = parse_condition_annotation(&a, "my-svc").unwrap();
    assert_eq!(c[0].field, "source-ip");
    assert_eq!(
        c[0].source_ip_config.as_ref().unwrap().values,
        vec!["192.168.0.0/16", "172.16.0.0/16"]
    );
    // invalid JSON
    let a = annotations_map(&[(key("bad"), "{invalid")]);
    assert!(parse_condition_annotation(&a, "bad").is_err());
}
