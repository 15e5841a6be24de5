//! The whole GlobalAccelerator stack from an object and its loaded endpoints: upstream's model
//! builder has no test of its own; these pin what its steps make together (ids, nesting, the
//! endpoints that loaded, errors as model errors) and the JSON `plan` prints.

use serde_json::json;

use super::*;
use crate::model::aga::endpoints::LoadedEndpointStatus;
use crate::model::aga::loader::{load_endpoints, EndpointObjects};
use crate::model::aga::test_support::{ga, gateway};
use crate::model::aga::{desired_endpoints, DescribedLoadBalancer, LoadedEndpoint};
use crate::model::types::aga::{
    AgaIpAddressType, AgaListener, AgaProtocol, ClientAffinity, EndpointConfiguration,
    EndpointGroup, PortOverride, PortRange,
};

const NLB_DNS: &str = "web-0123.elb.us-west-2.amazonaws.com";
const NLB_ARN: &str = "arn:aws:elasticloadbalancing:us-west-2:1:loadbalancer/net/web/0123";
const OTHER_ARN: &str = "arn:aws:elasticloadbalancing:eu-west-1:1:loadbalancer/app/x/9";

fn cfg() -> AgaConfig {
    AgaConfig {
        cluster_name: "prod".into(),
        region: "us-west-2".into(),
        ..AgaConfig::default()
    }
}

fn sources() -> EndpointObjects {
    EndpointObjects {
        services: vec![serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web", "namespace": "apps"},
            "spec": {"type": "LoadBalancer"},
            "status": {"loadBalancer": {"ingress": [{
                "hostname": NLB_DNS,
                "ports": [{"port": 80, "protocol": "TCP"}, {"port": 81, "protocol": "TCP"},
                          {"port": 53, "protocol": "UDP"}]
            }]}}
        }))
        .unwrap()],
        load_balancers: vec![DescribedLoadBalancer {
            dns_name: NLB_DNS.into(),
            arn: NLB_ARN.into(),
        }],
        ..Default::default()
    }
}

fn build(spec: serde_json::Value) -> Result<AgaStack, ModelError> {
    let object = ga("apps", "edge", spec);
    let (loaded, fatal) = load_endpoints(&sources(), &object, &desired_endpoints(&object));
    assert!(fatal.is_empty());
    build_aga_stack(&cfg(), &object, &loaded)
}

#[test]
fn explicit_listeners_nest_their_groups_and_loaded_endpoints() {
    let stack = build(json!({
        "name": "edge",
        "listeners": [
            {"protocol": "TCP", "portRanges": [{"fromPort": 80, "toPort": 81}],
             "clientAffinity": "SOURCE_IP",
             "endpointGroups": [
                {"portOverrides": [{"listenerPort": 80, "endpointPort": 8080}],
                 "endpoints": [{"type": "Service", "name": "web", "weight": 10},
                               {"type": "Service", "name": "missing"}]},
                {"region": "eu-west-1", "trafficDialPercentage": 0,
                 "endpoints": [{"type": "EndpointID", "endpointID": OTHER_ARN,
                                "clientIPPreservationEnabled": false}]}
             ]},
            {"protocol": "UDP", "portRanges": [{"fromPort": 53, "toPort": 53}]}
        ]
    }))
    .unwrap();
    assert_eq!(stack.id, "apps/edge");
    assert_eq!(stack.accelerator.name, "edge");
    assert_eq!(stack.accelerator.ip_address_type, AgaIpAddressType::Ipv4);
    assert_eq!(stack.accelerator.tags["aga.k8s.aws/stack"], "apps/edge");
    assert_eq!(
        stack.listeners,
        vec![
            AgaListener {
                id: "Listener-0".into(),
                protocol: AgaProtocol::Tcp,
                port_ranges: vec![PortRange {
                    from_port: 80,
                    to_port: 81
                }],
                client_affinity: Some(ClientAffinity::SourceIp),
                endpoint_groups: vec![
                    EndpointGroup {
                        id: "EndpointGroup-0-0".into(),
                        region: "us-west-2".into(),
                        traffic_dial_percentage: None,
                        port_overrides: vec![PortOverride {
                            listener_port: 80,
                            endpoint_port: 8080
                        }],
                        // The Service that does not exist is left out (a warning, retried).
                        endpoint_configurations: vec![EndpointConfiguration {
                            endpoint_id: NLB_ARN.into(),
                            weight: Some(10),
                            client_ip_preservation_enabled: None,
                        }],
                    },
                    EndpointGroup {
                        id: "EndpointGroup-0-1".into(),
                        region: "eu-west-1".into(),
                        traffic_dial_percentage: Some(0),
                        port_overrides: vec![],
                        endpoint_configurations: vec![EndpointConfiguration {
                            endpoint_id: OTHER_ARN.into(),
                            weight: Some(128),
                            client_ip_preservation_enabled: Some(false),
                        }],
                    },
                ],
            },
            AgaListener {
                id: "Listener-1".into(),
                protocol: AgaProtocol::Udp,
                port_ranges: vec![PortRange {
                    from_port: 53,
                    to_port: 53
                }],
                client_affinity: Some(ClientAffinity::None),
                endpoint_groups: vec![],
            },
        ]
    );
}

#[test]
fn one_service_endpoint_without_protocol_or_ports_is_discovered() {
    let stack = build(json!({
        "listeners": [{"endpointGroups": [{"endpoints": [{"type": "Service", "name": "web"}]}]}]
    }))
    .unwrap();
    assert_eq!(
        stack.accelerator.name,
        format!(
            "k8s_apps_edge_{}",
            &crate::model::naming::sha256_hex(&["prod", "us-west-2", "apps", "edge", "IPV4"])[..25]
        )
    );
    let summary: Vec<(&str, AgaProtocol, Vec<PortRange>, usize)> = stack
        .listeners
        .iter()
        .map(|l| {
            (
                l.id.as_str(),
                l.protocol,
                l.port_ranges.clone(),
                l.endpoint_groups.len(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                "Listener-0",
                AgaProtocol::Tcp,
                vec![PortRange {
                    from_port: 80,
                    to_port: 81
                }],
                1
            ),
            (
                "Listener-1",
                AgaProtocol::Udp,
                vec![PortRange {
                    from_port: 53,
                    to_port: 53
                }],
                1
            ),
        ]
    );
    // Both listeners send to the Service's load balancer.
    for l in &stack.listeners {
        assert_eq!(
            l.endpoint_groups[0].endpoint_configurations[0].endpoint_id,
            NLB_ARN
        );
    }
}

#[test]
fn failures_are_model_errors_naming_the_accelerator() {
    for (spec, message) in [
        (
            json!({"tags": {"owner": "x"}, "listeners": []}),
            "external managed tag key owner cannot be specified",
        ),
        (
            json!({"listeners": [{"portRanges": [{"fromPort": 80, "toPort": 80}]},
                                 {"protocol": "TCP", "portRanges": [{"fromPort": 81, "toPort": 81}]}]}),
            "listener protocol must be specified ",
        ),
        (
            json!({"listeners": [{"protocol": "TCP", "portRanges": [{"fromPort": 80, "toPort": 80}],
                                  "endpointGroups": [{"portOverrides": [
                                      {"listenerPort": 443, "endpointPort": 8443}]}]}]}),
            "port override listener port 443 is not within any listener port ranges - this will cause AWS Global Accelerator to reject the configuration",
        ),
    ] {
        let object = ga("apps", "edge", spec);
        let c = AgaConfig {
            external_managed_tags: vec!["owner".into()],
            ..cfg()
        };
        let err = build_aga_stack(&c, &object, &[]).unwrap_err();
        assert_eq!(
            err,
            ModelError::GlobalAccelerator {
                accelerator: "apps/edge".into(),
                message: message.into(),
            }
        );
        assert_eq!(err.to_string(), message);
    }
    // Discovery that finds nothing says so (a Gateway without listeners).
    let object = ga(
        "apps",
        "edge",
        json!({"listeners": [{"endpointGroups": [{"endpoints": [{"type": "Gateway", "name": "gw"}]}]}]}),
    );
    let loaded = vec![LoadedEndpoint {
        arn: NLB_ARN.into(),
        resource: Some(gateway(
            json!({"metadata": {"name": "gw", "namespace": "apps"}}),
        )),
        ..LoadedEndpoint::new(
            &object.spec.listeners.as_ref().unwrap()[0]
                .endpoint_groups
                .as_ref()
                .unwrap()[0]
                .endpoints
                .as_ref()
                .unwrap()[0],
            "apps",
        )
    }];
    assert_eq!(loaded[0].status, LoadedEndpointStatus::Loaded);
    assert_eq!(
        build_aga_stack(&cfg(), &object, &loaded)
            .unwrap_err()
            .to_string(),
        "no protocol or port information found for auto-discovery"
    );
}

#[test]
fn listeners_are_sorted_by_id_and_the_stack_serialises_stably() {
    let listeners: Vec<serde_json::Value> = (0..11)
        .map(|i| json!({"protocol": "TCP", "portRanges": [{"fromPort": 1000 + i, "toPort": 1000 + i}]}))
        .collect();
    let stack = build(json!({"name": "many", "listeners": listeners})).unwrap();
    let ids: Vec<&str> = stack.listeners.iter().map(|l| l.id.as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted);
    assert_eq!(ids.len(), 11);
    let json = serde_json::to_value(&stack).unwrap();
    let back: AgaStack = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, stack);
    assert_eq!(json["accelerator"]["ipAddressType"], "IPV4");
    assert_eq!(json["listeners"][0]["clientAffinity"], "NONE");
}

#[test]
fn config_reads_the_model_config_and_the_low_priority_gate() {
    let mut model = crate::model::config::ModelConfig {
        cluster_name: "c".into(),
        external_managed_tags: vec!["k".into()],
        ..Default::default()
    };
    let c = AgaConfig::new(&model, "eu-central-1");
    assert_eq!(
        (
            c.cluster_name.as_str(),
            c.region.as_str(),
            c.user_tags_over_default_tags
        ),
        ("c", "eu-central-1", false)
    );
    assert_eq!(c.external_managed_tags, vec!["k".to_string()]);
    model
        .feature_gates
        .insert("EnableDefaultTagsLowPriority".into(), true);
    assert!(AgaConfig::new(&model, "eu-central-1").user_tags_over_default_tags);
}
