//! Upstream's binding shape and comparison by meaning.

use serde_json::json;

use super::*;

fn spec(v: serde_json::Value) -> TargetGroupBindingSpec {
    serde_json::from_value(v).unwrap()
}

/// The binding upstream v3.5 writes for an ip target group whose Service sets a health-check
/// port (9090) different from its target port (8443): `pkg/ingress` model, deployed as is.
fn upstream_two_rules() -> serde_json::Value {
    json!({
        "targetGroupARN": "arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/k8s-ns1-svc3-bf42870fba/1",
        "targetGroupProtocol": "HTTPS",
        "targetType": "ip",
        "serviceRef": {"name": "svc-3", "port": "https"},
        "networking": {"ingress": [
            {"from": [{"securityGroup": {"groupID": "sg-backend"}}], "ports": [{"protocol": "TCP", "port": 8443}]},
            {"from": [{"securityGroup": {"groupID": "sg-backend"}}], "ports": [{"protocol": "TCP", "port": 9090}]}
        ]},
        "ipAddressType": "ipv4",
        "vpcID": "vpc-1"
    })
}

#[test]
fn rule_per_port_is_upstreams_shape() {
    let from = [security_group_peer("sg-backend")];
    let tcp = |p| port(NetworkingProtocol::Tcp, Some(IntOrString::Int(p)));
    let rules = rule_per_port(&from, [tcp(8443), tcp(9090)]);
    assert_eq!(
        serde_json::to_value(networking(rules)).unwrap(),
        upstream_two_rules()["networking"]
    );
    assert_eq!(networking(vec![]), None);
    // Upstream's Service shape: the same grants in one rule.
    let service = networking(vec![one_rule(&from, vec![tcp(8443), tcp(9090)])]);
    assert_eq!(
        serde_json::to_value(&service).unwrap(),
        json!({"ingress": [{"from": [{"securityGroup": {"groupID": "sg-backend"}}],
            "ports": [{"protocol": "TCP", "port": 8443}, {"protocol": "TCP", "port": 9090}]}]})
    );
    assert_eq!(
        grants(service.as_ref()),
        grants(spec(upstream_two_rules()).networking.as_ref())
    );
}

#[test]
fn grouping_order_and_default_protocol_do_not_matter() {
    let upstream = spec(upstream_two_rules());
    let mut merged = upstream_two_rules();
    merged["networking"] = json!({"ingress": [
        {"from": [{"securityGroup": {"groupID": "sg-backend"}}],
         "ports": [{"port": 9090}, {"protocol": "TCP", "port": 8443}, {"port": 9090}]}
    ]});
    assert!(same_meaning(&spec(merged.clone()), &upstream));
    assert!(same_meaning(&upstream, &spec(merged)));
}

#[test]
fn a_different_grant_is_a_difference() {
    let upstream = spec(upstream_two_rules());
    for networking in [
        json!({"ingress": [{"from": [{"securityGroup": {"groupID": "sg-backend"}}],
            "ports": [{"protocol": "TCP", "port": 8443}]}]}),
        json!({"ingress": [{"from": [{"securityGroup": {"groupID": "sg-other"}}],
            "ports": [{"protocol": "TCP", "port": 8443}, {"protocol": "TCP", "port": 9090}]}]}),
        json!({"ingress": [{"from": [{"securityGroup": {"groupID": "sg-backend"}}],
            "ports": [{"protocol": "UDP", "port": 8443}, {"protocol": "TCP", "port": 9090}]}]}),
        json!({"ingress": [{"from": [{"securityGroup": {"groupID": "sg-backend"}}], "ports": []}]}),
        json!(null),
    ] {
        let mut have = upstream_two_rules();
        have["networking"] = networking.clone();
        assert!(!same_meaning(&spec(have), &upstream), "{networking}");
    }
}

#[test]
fn webhook_defaults_are_not_a_difference_but_other_fields_are() {
    let have = spec(upstream_two_rules());
    let mut bare = upstream_two_rules();
    for k in [
        "targetGroupProtocol",
        "targetType",
        "ipAddressType",
        "vpcID",
    ] {
        bare.as_object_mut().unwrap().remove(k);
    }
    assert!(same_meaning(&have, &spec(bare)));
    for (k, v) in [
        ("targetType", json!("instance")),
        ("vpcID", json!("vpc-2")),
        ("serviceRef", json!({"name": "svc-3", "port": 443})),
        ("multiClusterTargetGroup", json!(true)),
        ("nodeSelector", json!({"matchLabels": {"a": "b"}})),
    ] {
        let mut want = upstream_two_rules();
        want[k] = v;
        assert!(!same_meaning(&have, &spec(want)), "{k}");
    }
    let mut empty_selector = upstream_two_rules();
    empty_selector["nodeSelector"] = json!({"matchLabels": {}});
    assert!(same_meaning(&spec(empty_selector), &have));
}

/// A selector's `matchExpressions` are part of what a binding means; written with empty parts
/// (as a TargetGroupConfiguration may spell them) it equals what the API server hands back.
#[test]
fn node_selector_expressions_compare_in_their_stored_form() {
    let with = |sel: serde_json::Value| {
        let mut s = upstream_two_rules();
        s["nodeSelector"] = sel;
        spec(s)
    };
    let stored = with(json!({"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]},
        {"key": "spot", "operator": "DoesNotExist"}]}));
    let written = with(json!({"matchLabels": {}, "matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]},
        {"key": "spot", "operator": "DoesNotExist", "values": []}]}));
    assert!(same_meaning(&stored, &written));
    for other in [
        json!({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}),
        json!({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]},
            {"key": "spot", "operator": "DoesNotExist"}]}),
        json!({}),
    ] {
        assert!(!same_meaning(&stored, &with(other.clone())), "{other}");
    }
    let canonical = canonical_selector(&written.node_selector.clone().unwrap());
    assert_eq!(Some(canonical), stored.node_selector);
}

#[test]
fn a_rule_without_ports_grants_nothing_unlike_a_port_entry_without_a_number() {
    let sg = json!([{"securityGroup": {"groupID": "sg-backend"}}]);
    let portless = json!({"ingress": [{"from": sg, "ports": []}]});
    let every_tcp_port = json!({"ingress": [{"from": sg, "ports": [{"protocol": "TCP"}]}]});
    let n = |v: &serde_json::Value| -> TargetGroupBindingNetworking {
        serde_json::from_value(v.clone()).unwrap()
    };
    assert!(grants(Some(&n(&portless)))
        .iter()
        .all(|(_, proto, _)| *proto == "none"));
    assert_ne!(
        grants(Some(&n(&portless))),
        grants(Some(&n(&every_tcp_port)))
    );
}
