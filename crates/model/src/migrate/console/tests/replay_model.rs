//! Replays `pkg/ingress2gateway/console/model_test.go`: `TestParseStack` (3 cases) and
//! `TestFlattenMap` (9): all 12 cases.

use serde_json::{json, Value};

use crate::migrate::console::model::{flatten_map, parse_stack, Fields};

#[test]
fn parse_stack_cases() {
    let valid = r#"{
        "id": "ns/name",
        "resources": {
            "AWS::ElasticLoadBalancingV2::LoadBalancer": {
                "LoadBalancer": {"spec": {"name": "k8s-test-abc123", "scheme": "internet-facing", "type": "application"}}
            },
            "AWS::ElasticLoadBalancingV2::Listener": {
                "80": {"spec": {"port": 80, "protocol": "HTTP"}}
            }
        }
    }"#;
    let tree = parse_stack(valid).unwrap();
    let lb = &tree["AWS::ElasticLoadBalancingV2::LoadBalancer"]["LoadBalancer"];
    assert_eq!(lb["spec.name"], json!("k8s-test-abc123"));
    assert_eq!(lb["spec.scheme"], json!("internet-facing"));
    assert_eq!(lb["spec.type"], json!("application"));
    let l = &tree["AWS::ElasticLoadBalancingV2::Listener"]["80"];
    assert_eq!(l["spec.port"], json!(80));
    assert_eq!(l["spec.protocol"], json!("HTTP"));

    for (name, raw, want) in [
        ("empty string", "", "empty stack JSON"),
        ("invalid JSON", "{invalid", "invalid stack JSON"),
    ] {
        let e = parse_stack(raw).unwrap_err().to_string();
        assert!(e.contains(want), "{name}: {e}");
    }
}

#[test]
fn flatten_map_cases() {
    let cases: Vec<(&str, Value, Value)> = vec![
        ("flat map", json!({"a": "b"}), json!({"a": "b"})),
        (
            "nested map",
            json!({"spec": {"name": "test", "nested": {"deep": "value"}}}),
            json!({"spec.name": "test", "spec.nested.deep": "value"}),
        ),
        ("empty map", json!({}), json!({})),
        (
            "array value preserved as-is",
            json!({"spec": {"subnets": ["subnet-a", "subnet-b"]}}),
            json!({"spec.subnets": ["subnet-a", "subnet-b"]}),
        ),
        (
            "numeric value",
            json!({"spec": {"port": 80.0}}),
            json!({"spec.port": 80.0}),
        ),
        (
            "boolean value",
            json!({"spec": {"enabled": true}}),
            json!({"spec.enabled": true}),
        ),
        (
            "nil value",
            json!({"spec": {"optional": null}}),
            json!({"spec.optional": null}),
        ),
        (
            "mixed nested and leaf values",
            json!({"spec": {"name": "lb", "tags": {"Env": "prod", "Team": "platform"}, "securityGroups": ["sg-123", "sg-456"]}}),
            json!({"spec.name": "lb", "spec.tags.Env": "prod", "spec.tags.Team": "platform", "spec.securityGroups": ["sg-123", "sg-456"]}),
        ),
        (
            "deeply nested (4 levels)",
            json!({"a": {"b": {"c": {"d": "leaf"}}}}),
            json!({"a.b.c.d": "leaf"}),
        ),
    ];
    for (name, input, want) in cases {
        let mut out = Fields::new();
        flatten_map("", input.as_object().unwrap(), &mut out);
        let want: Fields = want
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(out, want, "{name}");
    }
}
