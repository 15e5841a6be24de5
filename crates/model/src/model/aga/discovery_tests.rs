//! Replays upstream's `pkg/aga/endpoint_discovery_test.go` (24 cases): protocols and ports of
//! Service, Ingress, Gateway and load balancer (EndpointID) endpoints. The load balancer's
//! listeners, which upstream reads from a mocked ELBv2 client, come on the loaded endpoint.

use serde_json::{json, Value};

use super::*;
use crate::crd::global_accelerator::GlobalAcceleratorEndpointType as T;
use crate::model::aga::endpoints::LoadedEndpointStatus;
use crate::model::aga::test_support::{by_id, ga, gateway, ingress, loaded, service};

const LB_ARN: &str =
    "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/test-lb/1234567890abcdef";

fn with(resource: EndpointResource, t: T, name: &str) -> LoadedEndpoint {
    LoadedEndpoint {
        resource: Some(resource),
        ..loaded(t, name, "default", LoadedEndpointStatus::Loaded, "arn:x")
    }
}

/// `(tcp ports, udp ports)` of a discovery result, each sorted.
fn split(found: &[ProtocolPorts]) -> (Vec<i32>, Vec<i32>) {
    let mut tcp = Vec::new();
    let mut udp = Vec::new();
    for f in found {
        match f.protocol {
            AgaProtocol::Tcp => tcp.extend(&f.ports),
            AgaProtocol::Udp => udp.extend(&f.ports),
        }
    }
    tcp.sort_unstable();
    udp.sort_unstable();
    (tcp, udp)
}

fn svc(name: &str, ports: Value) -> EndpointResource {
    service(json!({
        "metadata": {"name": name, "namespace": "default"},
        // Spec ports are not what discovery reads.
        "spec": {"type": "LoadBalancer", "ports": [{"name": "http", "port": 9999, "protocol": "TCP"}]},
        "status": {"loadBalancer": {"ingress": [{
            "hostname": "test-nlb.us-west-2.elb.amazonaws.com", "ports": ports
        }]}}
    }))
}

fn ing(name: &str, entries: Value) -> EndpointResource {
    ingress(json!({
        "metadata": {"name": name, "namespace": "default"},
        "status": {"loadBalancer": {"ingress": entries}}
    }))
}

fn gw(name: &str, listeners: Value) -> EndpointResource {
    gateway(json!({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"gatewayClassName": "test-class", "listeners": listeners}
    }))
}

#[test]
fn protocol_ports_of_each_endpoint_kind() {
    // Service with TCP ports in its status.
    let e = with(
        svc(
            "test-service",
            json!([{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]),
        ),
        T::Service,
        "test-service",
    );
    let found = protocol_ports(&e).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(split(&found), (vec![80, 443], vec![]));
    // Service with TCP and UDP ports.
    let e = with(
        svc(
            "test-service-multi-proto",
            json!([{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]),
        ),
        T::Service,
        "test-service-multi-proto",
    );
    let found = protocol_ports(&e).unwrap();
    assert_eq!(found.len(), 2);
    assert_eq!(split(&found), (vec![80], vec![53]));
    // Ingress with its ALB's ports, and an NLB entry.
    let e = with(
        ing(
            "test-ingress",
            json!([
                {"hostname": "test-alb.us-west-2.elb.amazonaws.com",
                 "ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]},
                {"hostname": "test-nlb.amazonaws.com"}
            ]),
        ),
        T::Ingress,
        "test-ingress",
    );
    let found = protocol_ports(&e).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(split(&found), (vec![80, 443], vec![]));
    // Gateway with HTTP, HTTPS and UDP listeners.
    let e = with(
        gw(
            "test-gateway",
            json!([{"name": "http", "port": 80, "protocol": "HTTP"},
                   {"name": "https", "port": 443, "protocol": "HTTPS"},
                   {"name": "udp", "port": 1433, "protocol": "UDP"}]),
        ),
        T::Gateway,
        "test-gateway",
    );
    let found = protocol_ports(&e).unwrap();
    assert_eq!(found.len(), 2);
    assert_eq!(split(&found), (vec![80, 443], vec![1433]));
}

#[test]
fn ingress_table() {
    let alb =
        |ports: Value| json!({"hostname": "test-alb.us-west-2.elb.amazonaws.com", "ports": ports});
    let nlb = json!({"hostname": "test-nlb.amazonaws.com"});
    let two = json!([{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]);
    let cases = [
        (
            "Ingress with ALB entry and ports in status",
            json!([alb(two.clone())]),
            Ok(vec![80, 443]),
        ),
        (
            "Ingress with ALB entry but no ports in status",
            json!([{"hostname": "test-alb.us-west-2.elb.amazonaws.com"}]),
            Err(()),
        ),
        (
            "Ingress with ALB and NLB entries in status (should use ALB ports)",
            json!([alb(two.clone()), nlb.clone()]),
            Ok(vec![80, 443]),
        ),
        (
            "Ingress with NLB entry first and ALB entry second in status",
            json!([
                nlb.clone(),
                alb(json!([{"port": 443, "protocol": "TCP"},
                                           {"port": 8443, "protocol": "TCP"}]))
            ]),
            Ok(vec![443, 8443]),
        ),
        (
            "Ingress with no ALB entry in status",
            json!([nlb.clone()]),
            Err(()),
        ),
        ("Ingress with empty status", json!([]), Err(())),
    ];
    for (case, entries, want) in cases {
        let EndpointResource::Ingress(object) = ing("test-ingress", entries) else {
            unreachable!("ing() builds Ingresses")
        };
        match (ingress_protocol_ports(&object), want) {
            (Ok(found), Ok(ports)) => {
                assert_eq!(found.len(), 1, "{case}");
                assert_eq!(found[0].protocol, AgaProtocol::Tcp, "{case}");
                assert_eq!(found[0].ports, ports, "{case}");
            }
            (Err(e), Err(())) => assert_eq!(
                e, "no valid ports found for ingress default/test-ingress",
                "{case}"
            ),
            (got, want) => panic!("{case}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn service_table() {
    let cases = [
        (
            "Service ports from status (TCP only)",
            Some(json!([{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}])),
            Ok((vec![80, 443], vec![])),
        ),
        (
            "Service ports from status (TCP + UDP)",
            Some(json!([{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}])),
            Ok((vec![80], vec![53])),
        ),
        (
            "Error for TCP_UDP service (same port with different protocols)",
            Some(json!([{"port": 53, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}])),
            Err("auto-discovery does not support TCP_UDP services on the same port 53 for endpoint default/test-service"),
        ),
        (
            "Error when status has no ports",
            Some(json!([])),
            Err("no port information available in service status for endpoint default/test-service"),
        ),
        (
            "Error when no status entry",
            None,
            Err("no port information available in service status for endpoint default/test-service"),
        ),
    ];
    for (case, ports, want) in cases {
        let object = match ports {
            Some(ports) => svc("test-service", ports),
            None => service(json!({
                "metadata": {"name": "test-service", "namespace": "default"},
                "spec": {"type": "LoadBalancer"}
            })),
        };
        let EndpointResource::Service(object) = object else {
            unreachable!("svc() and service() build Services")
        };
        let got = service_protocol_ports(&object);
        match want {
            Ok((tcp, udp)) => {
                let found = got.unwrap();
                let groups = usize::from(!tcp.is_empty()) + usize::from(!udp.is_empty());
                assert_eq!(found.len(), groups, "{case}");
                assert_eq!(split(&found), (tcp, udp), "{case}");
            }
            Err(message) => assert_eq!(got.unwrap_err(), message, "{case}"),
        }
    }
}

#[test]
fn gateway_table() {
    let cases = [
        (
            "Gateway with mixed protocols (HTTP, HTTPS, UDP)",
            json!([{"name": "http", "port": 80, "protocol": "HTTP"},
                   {"name": "https", "port": 443, "protocol": "HTTPS"},
                   {"name": "udp", "port": 1433, "protocol": "UDP"}]),
            2,
            (vec![80, 443], vec![1433]),
        ),
        (
            "Gateway with HTTP protocol only",
            json!([{"name": "http-80", "port": 80, "protocol": "HTTP"},
                   {"name": "http-8080", "port": 8080, "protocol": "HTTP"}]),
            1,
            (vec![80, 8080], vec![]),
        ),
        (
            "Gateway with UDP protocol only",
            json!([{"name": "udp-53", "port": 53, "protocol": "UDP"},
                   {"name": "udp-123", "port": 123, "protocol": "UDP"}]),
            1,
            (vec![], vec![53, 123]),
        ),
    ];
    for (case, listeners, groups, want) in cases {
        let EndpointResource::Gateway(object) = gw("test-gateway", listeners) else {
            unreachable!("gw() builds Gateways")
        };
        let found = gateway_protocol_ports(&object);
        assert_eq!(found.len(), groups, "{case}");
        assert_eq!(split(&found), want, "{case}");
    }
}

fn listeners(pairs: &[(&str, i32)]) -> Vec<ElbListener> {
    pairs
        .iter()
        .map(|(protocol, port)| ElbListener {
            protocol: protocol.to_string(),
            port: *port,
        })
        .collect()
}

#[test]
fn elb_listener_table() {
    let cases = [
        (
            "HTTP and HTTPS listeners",
            listeners(&[("HTTP", 80), ("HTTPS", 443)]),
            Ok((1, vec![80, 443], vec![])),
        ),
        (
            "TCP and TLS listeners",
            listeners(&[("TCP", 80), ("TLS", 443)]),
            Ok((1, vec![80, 443], vec![])),
        ),
        (
            "UDP listener",
            listeners(&[("UDP", 53)]),
            Ok((1, vec![], vec![53])),
        ),
        (
            "Unsupported protocol",
            listeners(&[("TCP_UDP", 53)]),
            Err(format!("listener protocol TCP_UDP is not supported by Global Accelerator for load balancer {LB_ARN}")),
        ),
        ("Empty listeners", listeners(&[]), Ok((0, vec![], vec![]))),
    ];
    for (case, described, want) in cases {
        let got = elb_listener_protocol_ports(LB_ARN, &described);
        match want {
            Ok((groups, tcp, udp)) => {
                let found = got.unwrap();
                assert_eq!(found.len(), groups, "{case}");
                assert_eq!(split(&found), (tcp, udp), "{case}");
            }
            Err(message) => assert_eq!(got.unwrap_err(), message, "{case}"),
        }
    }
}

#[test]
fn load_balancer_endpoint_reads_its_described_listeners() {
    // Upstream's one case: HTTP, HTTPS and UDP listeners.
    let e = LoadedEndpoint {
        listeners: Some(Ok(listeners(&[("HTTP", 80), ("HTTPS", 443), ("UDP", 53)]))),
        ..LoadedEndpoint::new(&by_id(LB_ARN), "default")
    };
    let e = LoadedEndpoint {
        arn: LB_ARN.into(),
        ..e
    };
    let found = protocol_ports(&e).unwrap();
    assert_eq!(found.len(), 2);
    assert_eq!(split(&found), (vec![80, 443], vec![53]));
    // No listeners, a failed describe, none described at all: upstream's texts.
    let none = LoadedEndpoint {
        listeners: Some(Ok(vec![])),
        ..e.clone()
    };
    assert_eq!(
        protocol_ports(&none).unwrap_err(),
        format!("no listeners found for load balancer ARN {LB_ARN}")
    );
    let failed = LoadedEndpoint {
        listeners: Some(Err("AccessDenied".into())),
        ..e.clone()
    };
    assert_eq!(
        protocol_ports(&failed).unwrap_err(),
        format!("failed to describe listeners for load balancer ARN {LB_ARN}: failed to describe listeners for load balancer {LB_ARN}: AccessDenied")
    );
    let unsupported = LoadedEndpoint {
        listeners: Some(Ok(listeners(&[("TCP_UDP", 53)]))),
        ..e.clone()
    };
    assert_eq!(
        protocol_ports(&unsupported).unwrap_err(),
        format!("failed to describe listeners for load balancer ARN {LB_ARN}: listener protocol TCP_UDP is not supported by Global Accelerator for load balancer {LB_ARN}")
    );
    let undescribed = LoadedEndpoint {
        listeners: None,
        ..e
    };
    assert!(protocol_ports(&undescribed)
        .unwrap_err()
        .contains("the listeners were not described"));
}

#[test]
fn missing_objects_and_arns_are_named() {
    let bare = loaded(
        T::Service,
        "web",
        "apps",
        LoadedEndpointStatus::Loaded,
        "arn:x",
    );
    assert_eq!(
        protocol_ports(&bare).unwrap_err(),
        "kubernetes resource not available for endpoint apps/web"
    );
    let no_arn = LoadedEndpoint::new(&by_id(""), "apps");
    assert_eq!(
        protocol_ports(&no_arn).unwrap_err(),
        "endpoint ARN is not available for endpoint with EndpointID type"
    );
    let mismatched = with(gw("gw", json!([])), T::Service, "gw");
    assert_eq!(
        protocol_ports(&mismatched).unwrap_err(),
        "expected Service object for endpoint default/gw but got *v1.Gateway"
    );
}

#[test]
fn only_an_auto_discovered_endpoint_id_asks_for_its_listeners() {
    let spec =
        |endpoint: Value| json!({"listeners": [{"endpointGroups": [{"endpoints": [endpoint]}]}]});
    let object = ga(
        "default",
        "ga",
        spec(json!({"type": "EndpointID", "endpointID": LB_ARN})),
    );
    let by_arn = loaded(T::EndpointID, "", "", LoadedEndpointStatus::Loaded, LB_ARN);
    assert_eq!(
        listeners_to_describe(&object, std::slice::from_ref(&by_arn)),
        Some(LB_ARN)
    );
    // Protocol and ports given: nothing to discover.
    let given = ga(
        "default",
        "ga",
        json!({"listeners": [{"protocol": "TCP", "portRanges": [{"fromPort": 80, "toPort": 80}],
                              "endpointGroups": [{"endpoints": [
                                  {"type": "EndpointID", "endpointID": LB_ARN}]}]}]}),
    );
    assert_eq!(listeners_to_describe(&given, &[by_arn]), None);
    // A Service is read from its object, not described.
    let object = ga(
        "default",
        "ga",
        spec(json!({"type": "Service", "name": "web"})),
    );
    let web = with(
        svc("web", json!([{"port": 80, "protocol": "TCP"}])),
        T::Service,
        "web",
    );
    assert_eq!(listeners_to_describe(&object, &[web]), None);
}
