//! Replays upstream's `pkg/aga/model_build_endpoint_group_test.go` (52 cases): endpoint keys,
//! endpoint configurations from loaded endpoints, regions, port overrides and the checks within
//! a group and across listeners — with upstream's messages.
// Upstream's test tables, one tuple per case, as its Go tables are.
#![allow(clippy::type_complexity)]

use serde_json::json;

use super::*;
use crate::crd::global_accelerator::GlobalAcceleratorEndpointType as T;
use crate::model::aga::test_support::{by_id, endpoint, named, named_in};

const SERVICE_ARN: &str =
    "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/test-service/1234567890";
const INGRESS_ARN: &str =
    "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/test-ingress/0987654321";
const LB_ARN: &str =
    "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/net/test-lb/abcdef1234";

fn r(from_port: i32, to_port: i32) -> PortRange {
    PortRange { from_port, to_port }
}

fn po(listener_port: i32, endpoint_port: i32) -> PortOverride {
    PortOverride {
        listener_port,
        endpoint_port,
    }
}

fn group(v: serde_json::Value) -> GlobalAcceleratorEndpointGroup {
    serde_json::from_value(v).expect("an endpoint group")
}

#[test]
fn endpoint_keys() {
    let arn =
        "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/my-alb/1234567890";
    let nameless = |ns: Option<&str>| crate::crd::global_accelerator::GlobalAcceleratorEndpoint {
        namespace: ns.map(str::to_string),
        ..crate::crd::global_accelerator::GlobalAcceleratorEndpoint::of_type(T::Service)
    };
    let cases = [
        (
            "endpoint with EndpointID type",
            by_id(arn),
            format!("EndpointID/{arn}"),
        ),
        (
            "endpoint with Service type and explicit namespace",
            named_in(T::Service, "test-namespace", "test-service"),
            "Service/test-namespace/test-service".to_string(),
        ),
        (
            "endpoint with Service type and default namespace",
            named(T::Service, "test-service"),
            "Service/default/test-service".to_string(),
        ),
        (
            "endpoint with Ingress type",
            named_in(T::Ingress, "ingress-ns", "test-ingress"),
            "Ingress/ingress-ns/test-ingress".to_string(),
        ),
        (
            "endpoint with Gateway type",
            named_in(T::Gateway, "gateway-ns", "test-gateway"),
            "Gateway/gateway-ns/test-gateway".to_string(),
        ),
        (
            "endpoint with nil name (should still work)",
            nameless(Some("test-namespace")),
            "Service/test-namespace/".to_string(),
        ),
        (
            "endpoint with both nil namespace and name",
            nameless(None),
            "Service/default/".to_string(),
        ),
    ];
    for (case, ep, want) in cases {
        assert_eq!(endpoint_key(&ep, "default"), want, "{case}");
    }
}

/// Upstream's `createTestEndpoints`: a Service and an Ingress that loaded, a Gateway that did
/// not, and an EndpointID.
fn test_endpoints() -> Vec<LoadedEndpoint> {
    let service = LoadedEndpoint {
        weight: 100,
        arn: SERVICE_ARN.into(),
        dns_name: "test-service.default.svc.cluster.local".into(),
        ..LoadedEndpoint::new(&named(T::Service, "test-service"), "default")
    };
    let ingress = LoadedEndpoint {
        weight: 200,
        arn: INGRESS_ARN.into(),
        dns_name: "test-ingress.example.com".into(),
        ..LoadedEndpoint::new(
            &named_in(T::Ingress, "ingress-ns", "test-ingress"),
            "default",
        )
    };
    let gateway = LoadedEndpoint {
        weight: 150,
        status: LoadedEndpointStatus::Warning,
        message: "Gateway resource not found".into(),
        ..LoadedEndpoint::new(
            &named_in(T::Gateway, "gateway-ns", "test-gateway"),
            "default",
        )
    };
    let by_arn = LoadedEndpoint {
        weight: 100,
        arn: LB_ARN.into(),
        ..LoadedEndpoint::new(&by_id(LB_ARN), "default")
    };
    vec![service, ingress, gateway, by_arn]
}

fn config(id: &str, weight: i32, preserve: Option<bool>) -> EndpointConfiguration {
    EndpointConfiguration {
        endpoint_id: id.into(),
        weight: Some(weight),
        client_ip_preservation_enabled: preserve,
    }
}

#[test]
fn endpoint_configurations_table() {
    let cases = [
        ("nil endpoints in endpoint group", json!({}), vec![]),
        (
            "empty endpoints array in endpoint group",
            json!({"endpoints": []}),
            vec![],
        ),
        (
            "endpoint with EndpointID reference",
            json!({"endpoints": [{"type": "EndpointID", "endpointID": LB_ARN,
                                  "clientIPPreservationEnabled": true}]}),
            vec![config(LB_ARN, 100, Some(true))],
        ),
        (
            "endpoint with Service reference",
            json!({"endpoints": [{"type": "Service", "name": "test-service",
                                  "clientIPPreservationEnabled": false}]}),
            vec![config(SERVICE_ARN, 100, Some(false))],
        ),
        (
            "endpoint with Ingress reference, no override weight",
            json!({"endpoints": [{"type": "Ingress", "namespace": "ingress-ns",
                                  "name": "test-ingress", "clientIPPreservationEnabled": true}]}),
            vec![config(INGRESS_ARN, 200, Some(true))],
        ),
        (
            "endpoint with warning status - not included",
            json!({"endpoints": [{"type": "Gateway", "namespace": "gateway-ns",
                                  "name": "test-gateway"}]}),
            vec![],
        ),
        (
            "endpoint not found in loaded endpoints",
            json!({"endpoints": [{"type": "Service", "namespace": "non-existent",
                                  "name": "non-existent-service"}]}),
            vec![],
        ),
        (
            "multiple endpoints with mixed types",
            json!({"endpoints": [
                {"type": "Service", "name": "test-service"},
                {"type": "Ingress", "namespace": "ingress-ns", "name": "test-ingress",
                 "clientIPPreservationEnabled": true},
                {"type": "Gateway", "namespace": "gateway-ns", "name": "test-gateway"},
                {"type": "Service", "name": "non-existent-service"}
            ]}),
            vec![
                config(SERVICE_ARN, 100, None),
                config(INGRESS_ARN, 200, Some(true)),
            ],
        ),
    ];
    for (case, g, want) in cases {
        assert_eq!(
            endpoint_configurations("default", &group(g), &test_endpoints()),
            want,
            "{case}"
        );
    }
}

#[test]
fn region_table() {
    const MISSING: &str = "region is required for endpoint group but neither specified in the endpoint group nor available from cluster configuration";
    let cases = [
        (
            "region specified in endpoint group",
            json!({"region": "us-west-2"}),
            "us-east-1",
            Ok("us-west-2"),
        ),
        (
            "region specified in endpoint group even with empty cluster region",
            json!({"region": "eu-west-1"}),
            "",
            Ok("eu-west-1"),
        ),
        (
            "region not specified in endpoint group, use cluster region",
            json!({}),
            "us-east-1",
            Ok("us-east-1"),
        ),
        (
            "neither region specified nor cluster region available",
            json!({}),
            "",
            Err(MISSING),
        ),
        (
            "empty region string in endpoint group, fall back to cluster region",
            json!({"region": ""}),
            "ap-southeast-1",
            Ok("ap-southeast-1"),
        ),
        (
            "empty region string in endpoint group and no cluster region",
            json!({"region": ""}),
            "",
            Err(MISSING),
        ),
    ];
    for (case, g, cluster_region, want) in cases {
        let got = endpoint_group_region(cluster_region, &group(g));
        assert_eq!(
            got,
            want.map(str::to_string).map_err(str::to_string),
            "{case}"
        );
    }
}

#[test]
fn port_overrides_table() {
    let cases = [
        (
            "no port overrides",
            vec![r(80, 80)],
            json!({}),
            Ok(vec![]),
        ),
        (
            "empty port overrides",
            vec![r(80, 80)],
            json!({"portOverrides": []}),
            Ok(vec![]),
        ),
        (
            "valid single port override",
            vec![r(80, 80)],
            json!({"portOverrides": [{"listenerPort": 80, "endpointPort": 8080}]}),
            Ok(vec![po(80, 8080)]),
        ),
        (
            "valid multiple port overrides",
            vec![r(80, 80), r(443, 443)],
            json!({"portOverrides": [{"listenerPort": 80, "endpointPort": 8080},
                                     {"listenerPort": 443, "endpointPort": 8443}]}),
            Ok(vec![po(80, 8080), po(443, 8443)]),
        ),
        (
            "listener port outside range",
            vec![r(80, 80)],
            json!({"portOverrides": [{"listenerPort": 443, "endpointPort": 8443}]}),
            Err("port override listener port 443 is not within any listener port ranges - this will cause AWS Global Accelerator to reject the configuration"),
        ),
        (
            "duplicate listener port",
            vec![r(80, 80), r(443, 443)],
            json!({"portOverrides": [{"listenerPort": 80, "endpointPort": 8080},
                                     {"listenerPort": 80, "endpointPort": 9090}]}),
            Err("duplicate listener port 80 in port overrides: each listener port can only be used once in port overrides for an endpoint group"),
        ),
        (
            "duplicate endpoint port",
            vec![r(80, 80), r(443, 443)],
            json!({"portOverrides": [{"listenerPort": 80, "endpointPort": 8080},
                                     {"listenerPort": 443, "endpointPort": 8080}]}),
            Err("duplicate endpoint port 8080 in port overrides: each endpoint port can only be used once in port overrides for an endpoint group"),
        ),
        (
            "port range check for listener port",
            vec![r(80, 90)],
            json!({"portOverrides": [{"listenerPort": 85, "endpointPort": 8085}]}),
            Ok(vec![po(85, 8085)]),
        ),
    ];
    for (case, ranges, g, want) in cases {
        assert_eq!(
            port_overrides(&ranges, &group(g)),
            want.map_err(str::to_string),
            "{case}"
        );
    }
}

#[test]
fn endpoint_port_outside_listener_ranges_table() {
    let cases: [(&str, i32, Vec<(&str, Vec<PortRange>)>, Option<&str>); 6] = [
        (
            "endpoint port outside all listener port ranges",
            8080,
            vec![("l-1", vec![r(80, 80)]), ("l-2", vec![r(443, 443)])],
            None,
        ),
        (
            "endpoint port inside a listener port range",
            450,
            vec![("l-1", vec![r(80, 80)]), ("l-2", vec![r(400, 500)])],
            Some("endpoint port 450 conflicts with listener l-2 port range 400-500"),
        ),
        (
            "endpoint port at boundary of listener port range",
            400,
            vec![("l-1", vec![r(400, 500)])],
            Some("endpoint port 400 conflicts with listener l-1 port range 400-500"),
        ),
        (
            "endpoint port at upper boundary of listener port range",
            500,
            vec![("l-1", vec![r(400, 500)])],
            Some("endpoint port 500 conflicts with listener l-1 port range 400-500"),
        ),
        (
            "multiple listener port ranges, endpoint port in one range",
            1024,
            vec![
                ("l-1", vec![r(80, 80), r(443, 443)]),
                ("l-2", vec![r(1000, 2000), r(3000, 4000)]),
            ],
            Some("endpoint port 1024 conflicts with listener l-2 port range 1000-2000"),
        ),
        ("empty listener port ranges", 8080, vec![], None),
    ];
    for (case, port, listeners, want) in cases {
        let listeners: Vec<(&str, &[PortRange])> = listeners
            .iter()
            .map(|(id, rs)| (*id, rs.as_slice()))
            .collect();
        match (
            check_endpoint_port_outside_listeners(port, &listeners),
            want,
        ) {
            (Ok(()), None) => {}
            (Err(e), Some(prefix)) => assert_eq!(
                e,
                format!("{prefix}: endpoint port cannot be included in any listener port range"),
                "{case}"
            ),
            (got, want) => panic!("{case}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn duplicate_ports_within_a_group_table() {
    let listener_dup = "duplicate listener port 80 in port overrides: each listener port can only be used once in port overrides for an endpoint group";
    let endpoint_dup = "duplicate endpoint port 8080 in port overrides: each endpoint port can only be used once in port overrides for an endpoint group";
    let cases = [
        ("no port overrides", vec![], None),
        ("single port override", vec![po(80, 8080)], None),
        (
            "multiple port overrides with unique ports",
            vec![po(80, 8080), po(443, 8443), po(8000, 9000)],
            None,
        ),
        (
            "multiple port overrides with duplicate listener ports",
            vec![po(80, 8080), po(80, 9090), po(443, 8443)],
            Some(listener_dup),
        ),
        (
            "multiple duplicate listener ports",
            vec![po(80, 8080), po(443, 8443), po(80, 9090), po(443, 9443)],
            Some(listener_dup),
        ),
        (
            "multiple port overrides with duplicate endpoint ports",
            vec![po(80, 8080), po(443, 8080), po(8000, 9000)],
            Some(endpoint_dup),
        ),
        (
            "multiple duplicate endpoint ports",
            vec![po(80, 8080), po(443, 8443), po(8000, 8080), po(9000, 8443)],
            Some(endpoint_dup),
        ),
    ];
    for (case, overrides, want) in cases {
        assert_eq!(
            check_no_duplicate_ports(&overrides),
            want.map_or(Ok(()), |m| Err(m.to_string())),
            "{case}"
        );
    }
}

#[test]
fn endpoint_ports_across_listeners_table() {
    const ACROSS: &str =
        "the same endpoint port cannot be used in port overrides from different listeners";
    // (case, groups as (listener, overrides), listeners as (id, ranges), error prefix)
    type Groups = Vec<(&'static str, Vec<PortOverride>)>;
    type Listeners = Vec<(&'static str, Vec<PortRange>)>;
    let cases: Vec<(&str, Groups, Listeners, Option<String>)> = vec![
        ("no endpoint groups", vec![], vec![], None),
        (
            "single endpoint group - no conflicts possible",
            vec![("listener-1", vec![po(80, 8080)])],
            vec![("listener-1", vec![r(80, 80)])],
            None,
        ),
        (
            "multiple endpoint groups, same listener - no conflicts",
            vec![
                ("listener-1", vec![po(80, 8080)]),
                ("listener-1", vec![po(443, 8443)]),
            ],
            vec![("listener-1", vec![r(80, 80), r(443, 443)])],
            None,
        ),
        (
            "multiple endpoint groups, different listeners, no conflicts",
            vec![
                ("listener-1", vec![po(80, 8080)]),
                ("listener-2", vec![po(443, 9090)]),
            ],
            vec![
                ("listener-1", vec![r(80, 80)]),
                ("listener-2", vec![r(443, 443)]),
            ],
            None,
        ),
        (
            "endpoint port in listener port range - conflict",
            vec![("listener-1", vec![po(80, 85)])],
            vec![("listener-1", vec![r(80, 90)])],
            Some("endpoint port 85 conflicts with listener listener-1 port range 80-90: endpoint port cannot be included in any listener port range".into()),
        ),
        (
            "duplicate endpoint port across different listeners - conflict",
            vec![
                ("listener-1", vec![po(80, 8080)]),
                ("listener-2", vec![po(443, 8080)]),
            ],
            vec![
                ("listener-1", vec![r(80, 80)]),
                ("listener-2", vec![r(443, 443)]),
            ],
            Some(format!("duplicate endpoint port 8080: {ACROSS} (used in listener-1 and listener-2)")),
        ),
        (
            "multiple duplicate endpoint ports across different listeners",
            vec![
                ("listener-1", vec![po(80, 9090), po(443, 9091)]),
                ("listener-2", vec![po(8080, 9090), po(8443, 7070)]),
            ],
            vec![
                ("listener-1", vec![r(80, 80), r(443, 443)]),
                ("listener-2", vec![r(8080, 8080), r(8443, 8443)]),
            ],
            Some(format!("duplicate endpoint port 9090: {ACROSS} (used in listener-1 and listener-2)")),
        ),
        (
            "multiple endpoint groups with mixed conflicts",
            vec![
                ("listener-1", vec![po(80, 8080)]),
                ("listener-2", vec![po(443, 8080)]),
                ("listener-3", vec![po(8080, 9999)]),
            ],
            vec![
                ("listener-1", vec![r(80, 80)]),
                ("listener-2", vec![r(443, 443)]),
                ("listener-3", vec![r(9500, 9999)]),
            ],
            Some(format!("duplicate endpoint port 8080: {ACROSS} (used in listener-1 and listener-2)")),
        ),
        (
            "same endpoint port in different regions - still a conflict",
            vec![
                ("listener-1", vec![po(80, 8080)]),
                ("listener-2", vec![po(443, 8080)]),
            ],
            vec![
                ("listener-1", vec![r(80, 80)]),
                ("listener-2", vec![r(443, 443)]),
            ],
            Some(format!("duplicate endpoint port 8080: {ACROSS} (used in listener-1 and listener-2)")),
        ),
        (
            "endpoint groups with no port overrides - no conflicts",
            vec![("listener-1", vec![]), ("listener-2", vec![])],
            vec![
                ("listener-1", vec![r(80, 80)]),
                ("listener-2", vec![r(443, 443)]),
            ],
            None,
        ),
    ];
    for (case, groups, listeners, want) in cases {
        let groups: Vec<(&str, &[PortOverride])> =
            groups.iter().map(|(l, o)| (*l, o.as_slice())).collect();
        let listeners: Vec<(&str, &[PortRange])> = listeners
            .iter()
            .map(|(l, rs)| (*l, rs.as_slice()))
            .collect();
        assert_eq!(
            check_endpoint_ports_across_listeners(&groups, &listeners),
            want.map_or(Ok(()), Err),
            "{case}"
        );
    }
}

#[test]
fn groups_are_built_per_listener_with_ids_regions_and_endpoints() {
    let listeners = vec![
        AgaListener {
            id: "Listener-0".into(),
            protocol: crate::model::types::aga::AgaProtocol::Tcp,
            port_ranges: vec![r(80, 80)],
            client_affinity: None,
            endpoint_groups: vec![],
        },
        AgaListener {
            id: "Listener-1".into(),
            protocol: crate::model::types::aga::AgaProtocol::Udp,
            port_ranges: vec![r(53, 53)],
            client_affinity: None,
            endpoint_groups: vec![],
        },
    ];
    let configs: Vec<GlobalAcceleratorListener> = vec![
        serde_json::from_value(json!({"endpointGroups": [
            {"portOverrides": [{"listenerPort": 80, "endpointPort": 8080}],
             "endpoints": [{"type": "Service", "name": "test-service"}]},
            {"region": "eu-west-1", "trafficDialPercentage": 20,
             "endpoints": [{"type": "EndpointID", "endpointID": LB_ARN}]}
        ]}))
        .unwrap(),
        serde_json::from_value(json!({})).unwrap(),
    ];
    let groups = build_endpoint_groups(
        "us-west-2",
        "default",
        &listeners,
        &configs,
        &test_endpoints(),
    )
    .unwrap();
    assert_eq!(
        groups,
        vec![
            vec![
                EndpointGroup {
                    id: "EndpointGroup-0-0".into(),
                    region: "us-west-2".into(),
                    traffic_dial_percentage: None,
                    port_overrides: vec![po(80, 8080)],
                    endpoint_configurations: vec![config(SERVICE_ARN, 100, None)],
                },
                EndpointGroup {
                    id: "EndpointGroup-0-1".into(),
                    region: "eu-west-1".into(),
                    traffic_dial_percentage: Some(20),
                    port_overrides: vec![],
                    endpoint_configurations: vec![config(LB_ARN, 100, None)],
                },
            ],
            vec![],
        ]
    );
    // An override's endpoint port inside another listener's range is refused across listeners.
    let clash: Vec<GlobalAcceleratorListener> = vec![
        serde_json::from_value(json!({"endpointGroups": [
            {"portOverrides": [{"listenerPort": 80, "endpointPort": 53}]}
        ]}))
        .unwrap(),
        serde_json::from_value(json!({})).unwrap(),
    ];
    assert_eq!(
        build_endpoint_groups("us-west-2", "default", &listeners, &clash, &[]).unwrap_err(),
        "endpoint port 53 conflicts with listener Listener-1 port range 53-53: endpoint port cannot be included in any listener port range"
    );
    // The spec endpoint helper reads upstream-shaped JSON too.
    assert_eq!(
        endpoint(json!({"type": "Service", "name": "test-service"})),
        named(T::Service, "test-service")
    );
}
