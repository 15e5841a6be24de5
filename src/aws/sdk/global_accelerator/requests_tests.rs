//! Upstream's request-builder tables replayed on ours: `buildSDKCreateAcceleratorInput` (5
//! cases), `buildSDKUpdateAcceleratorInput` (4) and the disable request of
//! `disableAccelerator` (accelerator_manager_test.go); `buildSDKCreateListenerInput` (2) and
//! `buildSDKUpdateListenerInput` (2) (listener_manager_test.go); `buildSDKPortOverrides` (4) and
//! `buildSDKCreateEndpointGroupInput` (2) (endpoint_group_manager_test.go). Where upstream
//! compares the whole input, so do these.

use std::collections::BTreeMap;

use super::*;
use crate::model::aga::{AgaIpAddressType, AgaProtocol, ClientAffinity};

const ACC_ARN: &str =
    "arn:aws:globalaccelerator::123456789012:accelerator/1234abcd-abcd-1234-abcd-1234abcdefgh";
const LISTENER_ARN: &str = "arn:aws:globalaccelerator::123456789012:accelerator/1234abcd-abcd-1234-abcd-1234abcdefgh/listener/abcdef1234";

fn tracking() -> Tags {
    BTreeMap::from([
        (
            "elbv2.k8s.aws/cluster".to_string(),
            "test-cluster".to_string(),
        ),
        (
            "aga.k8s.aws/stack".to_string(),
            "test-namespace/test-name".to_string(),
        ),
        (
            "aga.k8s.aws/resource".to_string(),
            "test-accelerator".to_string(),
        ),
    ])
}

fn accelerator(name: &str, ip: AgaIpAddressType, enabled: Option<bool>, tags: Tags) -> Accelerator {
    Accelerator {
        name: name.into(),
        ip_addresses: vec![],
        ip_address_type: ip,
        enabled,
        tags,
        crd_uid: format!("test-uid-{name}"),
        existing_arn: None,
    }
}

fn tag_keys(input: &CreateAcceleratorInput) -> Vec<String> {
    input.tags().iter().map(|t| t.key().to_string()).collect()
}

#[test]
fn create_accelerator_inputs() {
    // "Standard accelerator with minimal spec".
    let a = accelerator(
        "test-accelerator",
        AgaIpAddressType::Ipv4,
        Some(true),
        tracking(),
    );
    let input = create_accelerator(&a).unwrap().build().unwrap();
    assert_eq!(input.name(), Some("test-accelerator"));
    assert_eq!(input.ip_address_type(), Some(&gt::IpAddressType::Ipv4));
    assert_eq!(input.enabled(), Some(true));
    assert_eq!(input.idempotency_token(), Some("test-uid-test-accelerator"));
    for key in [
        "elbv2.k8s.aws/cluster",
        "aga.k8s.aws/stack",
        "aga.k8s.aws/resource",
    ] {
        assert!(tag_keys(&input).contains(&key.to_string()), "{key}");
    }
    assert!(input.ip_addresses.is_none(), "no BYOIP addresses sent");

    // "Accelerator with user tags": tracking and user tags, each once, sorted by key.
    let mut tags = tracking();
    tags.insert("Environment".into(), "test".into());
    tags.insert("Application".into(), "my-app".into());
    let a = accelerator(
        "test-accelerator-with-tags",
        AgaIpAddressType::Ipv4,
        Some(true),
        tags,
    );
    let input = create_accelerator(&a).unwrap().build().unwrap();
    assert_eq!(input.name(), Some("test-accelerator-with-tags"));
    assert_eq!(
        tag_keys(&input),
        vec![
            "Application",
            "Environment",
            "aga.k8s.aws/resource",
            "aga.k8s.aws/stack",
            "elbv2.k8s.aws/cluster"
        ]
    );
    assert_eq!(input.tags()[0].value(), "my-app");

    // "Dual stack accelerator".
    let a = accelerator("dual", AgaIpAddressType::DualStack, Some(true), tracking());
    let input = create_accelerator(&a).unwrap().build().unwrap();
    assert_eq!(input.ip_address_type(), Some(&gt::IpAddressType::DualStack));

    // "Disabled accelerator".
    let a = accelerator("off", AgaIpAddressType::Ipv4, Some(false), tracking());
    let input = create_accelerator(&a).unwrap().build().unwrap();
    assert_eq!(input.enabled(), Some(false));

    // "BYOIP accelerator with custom IP addresses".
    let mut a = accelerator("byoip", AgaIpAddressType::Ipv4, Some(true), tracking());
    a.ip_addresses = vec!["192.0.2.1".into(), "192.0.2.2".into()];
    let input = create_accelerator(&a).unwrap().build().unwrap();
    assert_eq!(input.ip_addresses(), ["192.0.2.1", "192.0.2.2"]);
}

#[test]
fn create_accelerator_without_uid_leaves_the_token_to_the_sdk() {
    let mut a = accelerator("x", AgaIpAddressType::Ipv4, None, Tags::new());
    a.crd_uid.clear();
    let input = create_accelerator(&a).unwrap().build().unwrap();
    assert_eq!(input.idempotency_token(), None);
    assert_eq!(input.enabled(), None, "AWS's default applies");
    assert!(input.tags.is_none());
}

#[test]
fn update_accelerator_inputs() {
    // "Standard accelerator update": the model's name replaces AWS's.
    let a = accelerator(
        "test-accelerator",
        AgaIpAddressType::Ipv4,
        Some(true),
        tracking(),
    );
    let input = update_accelerator(ACC_ARN, &a).build().unwrap();
    assert_eq!(input.name(), Some("test-accelerator"));
    assert_eq!(input.ip_address_type(), Some(&gt::IpAddressType::Ipv4));
    assert_eq!(input.enabled(), Some(true));
    assert_eq!(input.accelerator_arn(), Some(ACC_ARN));

    // "Change IP address type".
    let a = accelerator("t", AgaIpAddressType::DualStack, Some(true), tracking());
    let input = update_accelerator(ACC_ARN, &a).build().unwrap();
    assert_eq!(input.ip_address_type(), Some(&gt::IpAddressType::DualStack));

    // "Disable accelerator".
    let a = accelerator("t", AgaIpAddressType::Ipv4, Some(false), tracking());
    let input = update_accelerator(ACC_ARN, &a).build().unwrap();
    assert_eq!(input.enabled(), Some(false));

    // "BYOIP not supported in update".
    let mut a = accelerator("t", AgaIpAddressType::Ipv4, Some(true), tracking());
    a.ip_addresses = vec!["192.0.2.1".into(), "192.0.2.2".into()];
    let input = update_accelerator(ACC_ARN, &a).build().unwrap();
    assert!(input.ip_addresses.is_none());
}

/// disableAccelerator's "Accelerator enabled, successfully disabled": exactly
/// `{AcceleratorArn, Enabled: false}`.
#[test]
fn disable_request_is_arn_and_enabled_false_only() {
    let want = UpdateAcceleratorInput::builder()
        .accelerator_arn(ACC_ARN)
        .enabled(false)
        .build()
        .unwrap();
    assert_eq!(disable_accelerator(ACC_ARN).build().unwrap(), want);
}

fn listener(
    protocol: AgaProtocol,
    affinity: Option<ClientAffinity>,
    ranges: &[(i32, i32)],
) -> AgaListener {
    AgaListener {
        id: "listener-1".into(),
        protocol,
        port_ranges: ranges
            .iter()
            .map(|(f, t)| PortRange {
                from_port: *f,
                to_port: *t,
            })
            .collect(),
        client_affinity: affinity,
        endpoint_groups: vec![],
    }
}

fn sdk_range(from: i32, to: i32) -> gt::PortRange {
    gt::PortRange::builder().from_port(from).to_port(to).build()
}

#[test]
fn create_listener_inputs() {
    // "Standard TCP listener".
    let got = create_listener(
        ACC_ARN,
        &listener(AgaProtocol::Tcp, None, &[(80, 80), (443, 443)]),
    )
    .build()
    .unwrap();
    let want = CreateListenerInput::builder()
        .accelerator_arn(ACC_ARN)
        .protocol(gt::Protocol::Tcp)
        .port_ranges(sdk_range(80, 80))
        .port_ranges(sdk_range(443, 443))
        .build()
        .unwrap();
    assert_eq!(got, want);

    // "UDP listener with client affinity".
    let got = create_listener(
        ACC_ARN,
        &listener(
            AgaProtocol::Udp,
            Some(ClientAffinity::SourceIp),
            &[(10000, 20000)],
        ),
    )
    .build()
    .unwrap();
    let want = CreateListenerInput::builder()
        .accelerator_arn(ACC_ARN)
        .protocol(gt::Protocol::Udp)
        .client_affinity(gt::ClientAffinity::SourceIp)
        .port_ranges(sdk_range(10000, 20000))
        .build()
        .unwrap();
    assert_eq!(got, want);
}

#[test]
fn update_listener_inputs() {
    // "Standard TCP listener update".
    let got = update_listener(
        LISTENER_ARN,
        &listener(AgaProtocol::Tcp, None, &[(80, 80), (443, 443)]),
    )
    .build()
    .unwrap();
    let want = UpdateListenerInput::builder()
        .listener_arn(LISTENER_ARN)
        .protocol(gt::Protocol::Tcp)
        .port_ranges(sdk_range(80, 80))
        .port_ranges(sdk_range(443, 443))
        .build()
        .unwrap();
    assert_eq!(got, want);

    // "UDP listener update with client affinity".
    let got = update_listener(
        LISTENER_ARN,
        &listener(
            AgaProtocol::Udp,
            Some(ClientAffinity::SourceIp),
            &[(10000, 20000)],
        ),
    )
    .build()
    .unwrap();
    let want = UpdateListenerInput::builder()
        .listener_arn(LISTENER_ARN)
        .protocol(gt::Protocol::Udp)
        .client_affinity(gt::ClientAffinity::SourceIp)
        .port_ranges(sdk_range(10000, 20000))
        .build()
        .unwrap();
    assert_eq!(got, want);
}

fn po(listener_port: i32, endpoint_port: i32) -> PortOverride {
    PortOverride {
        listener_port,
        endpoint_port,
    }
}

fn pairs(v: &[gt::PortOverride]) -> Vec<(i32, i32)> {
    v.iter()
        .map(|p| {
            (
                p.listener_port().unwrap_or_default(),
                p.endpoint_port().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn port_overrides_convert_pair_by_pair() {
    // "nil model port overrides", "empty model port overrides".
    assert!(port_overrides_to(&[]).is_empty());
    // "single port override".
    assert_eq!(pairs(&port_overrides_to(&[po(80, 8080)])), vec![(80, 8080)]);
    // "multiple port overrides".
    assert_eq!(
        pairs(&port_overrides_to(&[po(80, 8080), po(443, 8443)])),
        vec![(80, 8080), (443, 8443)]
    );
    // Sent in an update even when empty: that is how AWS is told to drop them.
    let g = EndpointGroup {
        id: "eg".into(),
        region: "us-west-2".into(),
        traffic_dial_percentage: None,
        port_overrides: vec![],
        endpoint_configurations: vec![],
    };
    let input = update_endpoint_group("arn:eg", &g).build().unwrap();
    assert_eq!(input.port_overrides.as_deref(), Some(&[][..]));
    assert_eq!(input.traffic_dial_percentage(), None);
    assert!(input.endpoint_configurations.is_none());
}

#[test]
fn create_endpoint_group_inputs() {
    let listener_arn =
        "arn:aws:globalaccelerator::123456789012:listener/1234abcd-abcd-1234-abcd-1234abcdefgh/abcdefghi";
    // "Standard endpoint group with all fields".
    let g = EndpointGroup {
        id: "endpoint-group-1".into(),
        region: "us-west-2".into(),
        traffic_dial_percentage: Some(85),
        port_overrides: vec![po(80, 8080), po(443, 8443)],
        endpoint_configurations: vec![],
    };
    let want = CreateEndpointGroupInput::builder()
        .listener_arn(listener_arn)
        .endpoint_group_region("us-west-2")
        .traffic_dial_percentage(85.0)
        .port_overrides(
            gt::PortOverride::builder()
                .listener_port(80)
                .endpoint_port(8080)
                .build(),
        )
        .port_overrides(
            gt::PortOverride::builder()
                .listener_port(443)
                .endpoint_port(8443)
                .build(),
        )
        .build()
        .unwrap();
    assert_eq!(
        create_endpoint_group(listener_arn, &g).build().unwrap(),
        want
    );

    // "Minimal endpoint group".
    let g = EndpointGroup {
        id: "endpoint-group-2".into(),
        region: "us-west-2".into(),
        traffic_dial_percentage: None,
        port_overrides: vec![],
        endpoint_configurations: vec![],
    };
    let want = CreateEndpointGroupInput::builder()
        .listener_arn(listener_arn)
        .endpoint_group_region("us-west-2")
        .build()
        .unwrap();
    assert_eq!(
        create_endpoint_group(listener_arn, &g).build().unwrap(),
        want
    );
}

/// Ours only: the endpoints ride in the create (upstream adds them with AddEndpoints next).
#[test]
fn create_endpoint_group_carries_every_endpoint_field() {
    let g = EndpointGroup {
        id: "eg".into(),
        region: "eu-west-1".into(),
        traffic_dial_percentage: Some(100),
        port_overrides: vec![],
        endpoint_configurations: vec![EndpointConfiguration {
            endpoint_id: "arn:lb".into(),
            weight: Some(7),
            client_ip_preservation_enabled: Some(false),
        }],
    };
    let input = create_endpoint_group("arn:l", &g).build().unwrap();
    let e = &input.endpoint_configurations()[0];
    assert_eq!(e.endpoint_id(), Some("arn:lb"));
    assert_eq!(e.weight(), Some(7));
    assert_eq!(e.client_ip_preservation_enabled(), Some(false));
    assert!(input.port_overrides.is_none());
}

#[test]
fn endpoint_calls_send_what_they_are_given() {
    let eps = [EndpointConfiguration {
        endpoint_id: "arn:lb".into(),
        weight: None,
        client_ip_preservation_enabled: Some(true),
    }];
    let input = set_endpoints("arn:eg", &eps).build().unwrap();
    assert_eq!(input.endpoint_configurations().len(), 1);
    assert!(input.port_overrides.is_none(), "port overrides left alone");
    assert_eq!(input.traffic_dial_percentage(), None);
    let input = add_endpoints("arn:eg", &eps).build().unwrap();
    assert_eq!(input.endpoint_configurations()[0].weight(), None);
    let input = remove_endpoints("arn:eg", &["a".into(), "b".into()])
        .unwrap()
        .build()
        .unwrap();
    let ids: Vec<&str> = input
        .endpoint_identifiers()
        .iter()
        .map(|i| i.endpoint_id())
        .collect();
    assert_eq!(ids, ["a", "b"]);
    let input = set_port_overrides("arn:eg", &[po(443, 8443)])
        .build()
        .unwrap();
    assert_eq!(pairs(input.port_overrides()), vec![(443, 8443)]);
    assert!(input.endpoint_configurations.is_none());
}
