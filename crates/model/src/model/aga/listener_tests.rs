//! Replays upstream's `pkg/aga/model_build_listener_test.go` (26 of 28 cases: an `INVALID`
//! protocol and an `INVALID` client affinity cannot be held by the CRD types, and the API server
//! refuses them by the CRD's enums) and `utils_test.go`'s `canApplyAutoDiscoveryForGA` table
//! (16 cases).
// Upstream's test tables, one tuple per case, as its Go tables are.
#![allow(clippy::type_complexity)]

use serde_json::json;

use super::*;
use crate::crd::global_accelerator::{GlobalAcceleratorEndpoint, GlobalAcceleratorEndpointType};
use crate::model::aga::endpoints::LoadedEndpointStatus;
use crate::model::aga::test_support::{endpoint, ga, ingress, listener, loaded, named_in, service};

const INGRESS_ARN: &str =
    "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/test-ingress/1234567890123456";

fn r(from_port: i32, to_port: i32) -> PortRange {
    PortRange { from_port, to_port }
}

fn ingress_endpoint_spec() -> serde_json::Value {
    json!({
        "clientAffinity": "NONE",
        "endpointGroups": [{"endpoints": [
            {"type": "Ingress", "name": "test-ingress", "namespace": "default"}
        ]}]
    })
}

/// The loaded Ingress upstream's auto-discovery cases use: ALB status ports 8080 and 8443.
fn loaded_ingress() -> LoadedEndpoint {
    LoadedEndpoint {
        resource: Some(ingress(json!({
            "metadata": {"name": "test-ingress", "namespace": "default"},
            "status": {"loadBalancer": {"ingress": [{
                "hostname": "test-alb.us-west-2.elb.amazonaws.com",
                "ports": [{"port": 8080, "protocol": "TCP"}, {"port": 8443, "protocol": "TCP"}]
            }]}}
        }))),
        ..loaded(
            GlobalAcceleratorEndpointType::Ingress,
            "test-ingress",
            "default",
            LoadedEndpointStatus::Loaded,
            INGRESS_ARN,
        )
    }
}

fn loaded_service(name: &str, ports: serde_json::Value) -> LoadedEndpoint {
    LoadedEndpoint {
        resource: Some(service(json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"type": "LoadBalancer"},
            "status": {"loadBalancer": {"ingress": [{
                "hostname": format!("{name}-nlb.us-west-2.elb.amazonaws.com"),
                "ports": ports
            }]}}
        }))),
        ..loaded(
            GlobalAcceleratorEndpointType::Service,
            name,
            "default",
            LoadedEndpointStatus::Loaded,
            &format!(
                "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/net/{name}/1"
            ),
        )
    }
}

fn service_spec(name: &str) -> serde_json::Value {
    json!({
        "clientAffinity": "NONE",
        "endpointGroups": [{"endpoints": [
            {"type": "Service", "name": name, "namespace": "default"}
        ]}]
    })
}

#[test]
fn build_table() {
    // (case, listeners, loaded, listeners built, (protocol, port range count) of the first)
    let cases: Vec<(
        &str,
        serde_json::Value,
        Vec<LoadedEndpoint>,
        usize,
        Option<(AgaProtocol, usize)>,
    )> = vec![
        ("with nil listeners", json!(null), vec![], 0, None),
        ("with empty listeners", json!([]), vec![], 0, None),
        (
            "with single TCP listener",
            json!([{"protocol": "TCP", "portRanges": [{"fromPort": 80, "toPort": 80}],
                    "clientAffinity": "NONE"}]),
            vec![],
            1,
            None,
        ),
        (
            "with single UDP listener",
            json!([{"protocol": "UDP", "portRanges": [{"fromPort": 53, "toPort": 53}],
                    "clientAffinity": "SOURCE_IP"}]),
            vec![],
            1,
            None,
        ),
        (
            "with multiple listeners",
            json!([
                {"protocol": "TCP", "portRanges": [{"fromPort": 80, "toPort": 80}],
                 "clientAffinity": "NONE"},
                {"protocol": "UDP", "portRanges": [{"fromPort": 53, "toPort": 53}],
                 "clientAffinity": "SOURCE_IP"}
            ]),
            vec![],
            2,
            None,
        ),
        (
            "with auto-discovery for Ingress endpoint with custom ports",
            json!([ingress_endpoint_spec()]),
            vec![loaded_ingress()],
            1,
            Some((AgaProtocol::Tcp, 2)),
        ),
        (
            "with auto-discovery for Service endpoint with TCP protocol",
            json!([service_spec("test-service")]),
            vec![loaded_service(
                "test-service",
                json!([{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]),
            )],
            1,
            Some((AgaProtocol::Tcp, 2)),
        ),
        (
            "with auto-discovery for Service endpoint with mixed TCP/UDP protocols",
            json!([service_spec("mixed-service")]),
            vec![loaded_service(
                "mixed-service",
                json!([{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]),
            )],
            2,
            None,
        ),
    ];
    for (case, listeners, endpoints, want_count, want_first) in cases {
        let object = ga("default", "test-ga", json!({ "listeners": listeners }));
        let (built, processed) = build_listeners(&object, &endpoints).unwrap();
        assert_eq!(built.len(), want_count, "{case}");
        assert_eq!(processed.len(), want_count, "{case}");
        if let Some((protocol, ranges)) = want_first {
            assert_eq!(built[0].protocol, protocol, "{case}");
            assert_eq!(built[0].port_ranges.len(), ranges, "{case}");
        }
    }
}

#[test]
fn mixed_service_becomes_a_tcp_and_a_udp_listener_with_the_groups_copied() {
    let object = ga(
        "default",
        "test-ga",
        json!({ "listeners": [service_spec("mixed-service")] }),
    );
    let endpoints = vec![loaded_service(
        "mixed-service",
        json!([{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]),
    )];
    let (built, processed) = build_listeners(&object, &endpoints).unwrap();
    let summary: Vec<(&str, AgaProtocol, Vec<PortRange>)> = built
        .iter()
        .map(|l| (l.id.as_str(), l.protocol, l.port_ranges.clone()))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("Listener-0", AgaProtocol::Tcp, vec![r(80, 80)]),
            ("Listener-1", AgaProtocol::Udp, vec![r(53, 53)]),
        ]
    );
    for p in &processed {
        assert_eq!(
            p.endpoint_groups,
            object.spec.listeners.as_ref().unwrap()[0].endpoint_groups
        );
    }
}

#[test]
fn listener_spec_table() {
    let cases = [
        (
            "with TCP protocol",
            json!({"protocol": "TCP", "portRanges": [{"fromPort": 80, "toPort": 80}],
                   "clientAffinity": "NONE"}),
            Ok((AgaProtocol::Tcp, ClientAffinity::None, vec![r(80, 80)])),
        ),
        (
            "with UDP protocol",
            json!({"protocol": "UDP", "portRanges": [{"fromPort": 53, "toPort": 53}],
                   "clientAffinity": "SOURCE_IP"}),
            Ok((AgaProtocol::Udp, ClientAffinity::SourceIp, vec![r(53, 53)])),
        ),
        (
            "with nil protocol",
            json!({"portRanges": [{"fromPort": 80, "toPort": 80}], "clientAffinity": "NONE"}),
            Err("listener protocol must be specified "),
        ),
        (
            "with nil port ranges",
            json!({"protocol": "TCP", "clientAffinity": "NONE"}),
            Err("listener port ranges must be specified"),
        ),
    ];
    for (case, spec, want) in cases {
        let got = build_listener(&listener(spec), 0);
        match want {
            Ok((protocol, affinity, ranges)) => {
                let got = got.unwrap();
                assert_eq!(got.protocol, protocol, "{case}");
                assert_eq!(got.client_affinity, Some(affinity), "{case}");
                assert_eq!(got.port_ranges, ranges, "{case}");
                assert_eq!(got.id, "Listener-0", "{case}");
            }
            Err(message) => assert_eq!(got.unwrap_err(), message, "{case}"),
        }
    }
}

#[test]
fn listener_protocol_table() {
    for (case, spec, want) in [
        (
            "with nil protocol",
            json!({}),
            Err("listener protocol must be specified ".to_string()),
        ),
        (
            "with TCP protocol",
            json!({"protocol": "TCP"}),
            Ok(AgaProtocol::Tcp),
        ),
        (
            "with UDP protocol",
            json!({"protocol": "UDP"}),
            Ok(AgaProtocol::Udp),
        ),
    ] {
        assert_eq!(listener_protocol(&listener(spec)), want, "{case}");
    }
}

#[test]
fn listener_port_ranges_table() {
    for (case, spec, want) in [
        (
            "with nil port ranges",
            json!({}),
            Err("listener port ranges must be specified".to_string()),
        ),
        (
            "with single port range",
            json!({"portRanges": [{"fromPort": 443, "toPort": 443}]}),
            Ok(vec![r(443, 443)]),
        ),
        (
            "with multiple port ranges",
            json!({"portRanges": [{"fromPort": 80, "toPort": 80}, {"fromPort": 443, "toPort": 443},
                                  {"fromPort": 8080, "toPort": 8090}]}),
            Ok(vec![r(80, 80), r(443, 443), r(8080, 8090)]),
        ),
    ] {
        assert_eq!(listener_port_ranges(&listener(spec)), want, "{case}");
    }
}

#[test]
fn client_affinity_table() {
    for (case, spec, want) in [
        (
            "with NONE client affinity",
            json!({"clientAffinity": "NONE"}),
            ClientAffinity::None,
        ),
        (
            "with SOURCE_IP client affinity",
            json!({"clientAffinity": "SOURCE_IP"}),
            ClientAffinity::SourceIp,
        ),
        (
            "with empty client affinity (should default to NONE)",
            json!({}),
            ClientAffinity::None,
        ),
    ] {
        assert_eq!(listener_client_affinity(&listener(spec)), want, "{case}");
    }
}

#[test]
fn automatic_endpoint_discovery() {
    let object = ga(
        "default",
        "auto-discovery-ga",
        json!({ "listeners": [ingress_endpoint_spec()] }),
    );
    let endpoints = vec![loaded_ingress()];
    assert!(can_apply_auto_discovery(&object, &endpoints));
    let (built, _) = build_listeners(&object, &endpoints).unwrap();
    assert_eq!(built.len(), 1);
    assert_eq!(built[0].protocol, AgaProtocol::Tcp);
    assert_eq!(built[0].port_ranges, vec![r(8080, 8080), r(8443, 8443)]);
}

#[test]
fn new_listener_table() {
    let template = listener(json!({
        "protocol": "TCP",
        "portRanges": [{"fromPort": 8080, "toPort": 8080}],
        "clientAffinity": "SOURCE_IP",
        "endpointGroups": [{
            "region": "us-west-2",
            "trafficDialPercentage": 100,
            "endpoints": [{"type": "Service", "name": "test-service", "namespace": "default",
                           "weight": 100}],
            "portOverrides": [{"listenerPort": 8080, "endpointPort": 80}]
        }]
    }));
    let discovered = [r(80, 80), r(443, 443)];
    let spec_range = |from_port, to_port| crd::PortRange { from_port, to_port };
    let cases = [
        (
            "Create TCP listener with discovered ports",
            listener(json!({"clientAffinity": "SOURCE_IP"})),
            AgaProtocol::Tcp,
            &discovered[..],
            vec![spec_range(80, 80), spec_range(443, 443)],
            Some(ClientAffinityType::SourceIp),
        ),
        (
            "Create UDP listener with discovered ports",
            listener(json!({"clientAffinity": "SOURCE_IP"})),
            AgaProtocol::Udp,
            &discovered[..],
            vec![spec_range(80, 80), spec_range(443, 443)],
            Some(ClientAffinityType::SourceIp),
        ),
        (
            "Create listener with empty port ranges",
            template.clone(),
            AgaProtocol::Tcp,
            &[][..],
            vec![spec_range(8080, 8080)],
            Some(ClientAffinityType::SourceIp),
        ),
        (
            "Create listener from minimal template",
            listener(json!({"clientAffinity": "NONE"})),
            AgaProtocol::Tcp,
            &discovered[..],
            vec![spec_range(80, 80), spec_range(443, 443)],
            Some(ClientAffinityType::None),
        ),
    ];
    for (case, template, protocol, found, want_ranges, want_affinity) in cases {
        let got = new_listener(&template, protocol, found);
        assert_eq!(got.protocol.map(model_protocol), Some(protocol), "{case}");
        assert_eq!(got.client_affinity, want_affinity, "{case}");
        assert_eq!(got.port_ranges, Some(want_ranges), "{case}");
        assert_eq!(got.endpoint_groups, template.endpoint_groups, "{case}");
    }
    // Neither the template's nor discovered ranges: none, and building the listener says so.
    let bare = new_listener(&listener(json!({})), AgaProtocol::Tcp, &[]);
    assert_eq!(bare.port_ranges, None);
    assert_eq!(
        build_listener(&bare, 0).unwrap_err(),
        "listener port ranges must be specified"
    );
}

/// `n` spec endpoints (of type Service: upstream's tables leave the type empty).
fn endpoints(n: usize) -> Vec<GlobalAcceleratorEndpoint> {
    (0..n)
        .map(|_| GlobalAcceleratorEndpoint::of_type(GlobalAcceleratorEndpointType::Service))
        .collect()
}

fn one_listener(
    protocol: Option<&str>,
    ranges: bool,
    groups: Option<Vec<Option<Vec<GlobalAcceleratorEndpoint>>>>,
) -> GlobalAccelerator {
    let groups = groups.map(|gs| {
        gs.into_iter()
            .map(
                |eps| crate::crd::global_accelerator::GlobalAcceleratorEndpointGroup {
                    endpoints: eps,
                    ..Default::default()
                },
            )
            .collect::<Vec<_>>()
    });
    let mut object = ga("ns", "ga", json!({}));
    object.spec.listeners = Some(vec![GlobalAcceleratorListener {
        protocol: protocol.map(|p| serde_json::from_value(json!(p)).unwrap()),
        port_ranges: ranges.then(|| {
            vec![crd::PortRange {
                from_port: 80,
                to_port: 80,
            }]
        }),
        client_affinity: None,
        endpoint_groups: groups,
    }]);
    object
}

#[test]
fn auto_discovery_applicability_table() {
    let ok = |t| loaded(t, "x", "ns", LoadedEndpointStatus::Loaded, "");
    let service_with_object = LoadedEndpoint {
        resource: Some(service(json!({}))),
        ..ok(GlobalAcceleratorEndpointType::Service)
    };
    let by_arn = loaded(
        GlobalAcceleratorEndpointType::EndpointID,
        "",
        "",
        LoadedEndpointStatus::Loaded,
        "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/test-endpoint/1234567890123456",
    );
    let warning = loaded(
        GlobalAcceleratorEndpointType::Service,
        "x",
        "ns",
        LoadedEndpointStatus::Warning,
        "",
    );
    let two_loaded = vec![
        ok(GlobalAcceleratorEndpointType::Service),
        ok(GlobalAcceleratorEndpointType::Service),
    ];
    let mut no_listeners = ga("ns", "ga", json!({}));
    no_listeners.spec.listeners = None;
    let mut two_listeners = ga("ns", "ga", json!({}));
    two_listeners.spec.listeners = Some(vec![Default::default(), Default::default()]);
    let cases: Vec<(&str, GlobalAccelerator, Vec<LoadedEndpoint>, bool)> = vec![
        ("No listeners", no_listeners, vec![], false),
        (
            "Empty listeners array",
            ga("ns", "ga", json!({"listeners": []})),
            vec![],
            false,
        ),
        ("Multiple listeners", two_listeners, vec![], false),
        (
            "No endpoint groups",
            one_listener(None, false, None),
            vec![],
            false,
        ),
        (
            "Empty endpoint groups array",
            one_listener(None, false, Some(vec![])),
            vec![],
            false,
        ),
        (
            "Multiple endpoint groups",
            one_listener(None, false, Some(vec![None, None])),
            vec![],
            false,
        ),
        (
            "No endpoints in endpoint group",
            one_listener(None, false, Some(vec![None])),
            vec![],
            false,
        ),
        (
            "Empty endpoints array",
            one_listener(None, false, Some(vec![Some(endpoints(0))])),
            vec![],
            false,
        ),
        (
            "Multiple endpoints",
            one_listener(None, false, Some(vec![Some(endpoints(2))])),
            two_loaded.clone(),
            false,
        ),
        (
            "Both protocol and port ranges specified",
            one_listener(Some("TCP"), true, Some(vec![Some(endpoints(1))])),
            vec![ok(GlobalAcceleratorEndpointType::Service)],
            false,
        ),
        (
            "Failed endpoint loading",
            one_listener(Some("TCP"), false, Some(vec![Some(endpoints(1))])),
            vec![warning],
            false,
        ),
        (
            "No loaded endpoints",
            one_listener(Some("TCP"), false, Some(vec![Some(endpoints(1))])),
            vec![],
            false,
        ),
        (
            "Multiple loaded endpoints",
            one_listener(Some("TCP"), false, Some(vec![Some(endpoints(2))])),
            two_loaded,
            false,
        ),
        (
            "Valid for auto-discovery - protocol specified, port ranges not specified",
            one_listener(Some("TCP"), false, Some(vec![Some(endpoints(1))])),
            vec![service_with_object.clone()],
            true,
        ),
        (
            "Valid for auto-discovery - port ranges specified, protocol not specified",
            one_listener(None, true, Some(vec![Some(endpoints(1))])),
            vec![service_with_object],
            true,
        ),
        (
            "Valid for auto-discovery - both protocol and port ranges not specified",
            one_listener(
                None,
                false,
                Some(vec![Some(vec![endpoint(json!({
                    "type": "EndpointID", "endpointID": "some-arn", "weight": 112
                }))])]),
            ),
            vec![by_arn],
            true,
        ),
    ];
    for (case, object, loaded_endpoints, want) in cases {
        assert_eq!(
            can_apply_auto_discovery(&object, &loaded_endpoints),
            want,
            "{case}"
        );
    }
    // A loaded Service without its object cannot be read.
    let bare = ok(GlobalAcceleratorEndpointType::Service);
    let object = one_listener(
        Some("TCP"),
        false,
        Some(vec![Some(vec![named_in(
            GlobalAcceleratorEndpointType::Service,
            "ns",
            "x",
        )])]),
    );
    assert!(!can_apply_auto_discovery(&object, &[bare]));
}
