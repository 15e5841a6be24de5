//! The Global Accelerator contract, on the fake only: moto does not serve Global Accelerator,
//! so what the fake answers is pinned here, call by call, against AWS's API reference (the
//! errors each call lists, the defaults it documents, the quotas) and the developer guide
//! ("Overriding listener ports"). Each test names the call and the behaviour it pins; the
//! deployer relies on nothing else the fake does.

use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::{spec, FakeAws, GaDeployment, GaLimits};
use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::model::aga::{
    Accelerator, AgaIpAddressType, AgaListener, AgaProtocol, ClientAffinity, EndpointConfiguration,
    EndpointGroup, PortOverride, PortRange,
};
use regex::Regex;

use super::env::{tags, Env};

fn fake() -> Arc<FakeAws> {
    Arc::new(FakeAws::new())
}

fn tracked(name: &str, uid: &str) -> Accelerator {
    Accelerator {
        name: name.into(),
        ip_addresses: vec![],
        ip_address_type: AgaIpAddressType::Ipv4,
        enabled: None,
        tags: tags(&[
            ("elbv2.k8s.aws/cluster", "c1"),
            ("aga.k8s.aws/stack", "ns/ga"),
            ("aga.k8s.aws/resource", "GlobalAccelerator"),
        ]),
        crd_uid: uid.into(),
        existing_arn: None,
    }
}

fn listener(protocol: AgaProtocol, ranges: &[(i32, i32)]) -> AgaListener {
    AgaListener {
        id: "l".into(),
        protocol,
        port_ranges: ranges
            .iter()
            .map(|&(from_port, to_port)| PortRange { from_port, to_port })
            .collect(),
        client_affinity: None,
        endpoint_groups: vec![],
    }
}

fn group(region: &str, overrides: &[(i32, i32)], endpoints: &[&str]) -> EndpointGroup {
    EndpointGroup {
        id: "g".into(),
        region: region.into(),
        traffic_dial_percentage: None,
        port_overrides: overrides
            .iter()
            .map(|&(listener_port, endpoint_port)| PortOverride {
                listener_port,
                endpoint_port,
            })
            .collect(),
        endpoint_configurations: endpoints.iter().map(|e| endpoint(e, None)).collect(),
    }
}

fn endpoint(id: &str, weight: Option<i32>) -> EndpointConfiguration {
    EndpointConfiguration {
        endpoint_id: id.into(),
        weight,
        client_ip_preservation_enabled: None,
    }
}

/// An NLB ARN in another region: the fake takes those on trust.
fn remote_lb(name: &str) -> String {
    format!("arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/net/{name}/0123456789abcdef")
}

async fn accelerator(ga: &dyn GlobalAccelerator) -> DescribedAccelerator {
    ga.create_accelerator(&tracked("k8s_ns_ga_0123", "uid-1"))
        .await
        .unwrap()
}

/// CreateAccelerator: AWS's answer (IN_PROGRESS, enabled by default, ARN and DNS formats, two
/// static IPv4 addresses; DUAL_STACK adds two IPv6 ones and a dual-stack DNS name); the same
/// idempotency token answers the same accelerator; BYOIP addresses are kept.
#[tokio::test]
async fn create_accelerator() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let a = accelerator(ga).await;
    let arn = Regex::new(
        r"^arn:aws:globalaccelerator::123456789012:accelerator/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
    )
    .unwrap();
    assert!(arn.is_match(&a.arn), "{}", a.arn);
    assert!(
        Regex::new(r"^a[0-9a-f]{16}\.awsglobalaccelerator\.com$")
            .unwrap()
            .is_match(&a.dns_name),
        "{}",
        a.dns_name
    );
    assert_eq!(a.status, "IN_PROGRESS");
    assert!(a.enabled, "AWS's default");
    assert_eq!(a.ip_address_type, "IPV4");
    assert_eq!(a.dual_stack_dns_name, None);
    assert_eq!(a.ip_sets.len(), 1);
    assert_eq!(a.ip_sets[0].ip_address_family, "IPv4");
    assert_eq!(a.ip_sets[0].ip_addresses.len(), 2);

    // The same token: the same accelerator, not a second one.
    let again = accelerator(ga).await;
    assert_eq!(again.arn, a.arn);
    assert_eq!(fake.ga_accelerators().len(), 1);

    let mut dual = tracked("dual", "uid-2");
    dual.ip_address_type = AgaIpAddressType::DualStack;
    let d = ga.create_accelerator(&dual).await.unwrap();
    assert_eq!(d.ip_address_type, "DUAL_STACK");
    assert!(d
        .dual_stack_dns_name
        .as_deref()
        .is_some_and(|n| n.ends_with(".dualstack.awsglobalaccelerator.com")));
    assert_eq!(d.ip_sets[1].ip_address_family, "IPv6");
    assert_eq!(d.ip_sets[1].ip_addresses.len(), 2);

    let mut byoip = tracked("byoip", "uid-3");
    byoip.ip_addresses = vec!["198.51.100.7".into()];
    let b = ga.create_accelerator(&byoip).await.unwrap();
    assert_eq!(b.ip_sets[0].ip_addresses[0], "198.51.100.7");
    assert_eq!(b.ip_sets[0].ip_addresses.len(), 2, "AWS fills the other");
}

/// CreateAccelerator refuses bad names, bad BYOIP lists and reserved tags
/// (InvalidArgumentException), and the 21st accelerator (LimitExceededException).
#[tokio::test]
async fn create_accelerator_refusals() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let long = "x".repeat(65);
    for (name, why) in [
        ("", "empty"),
        ("-lead", "leading hyphen"),
        ("trail.", "trailing period"),
        ("has space", "space"),
        (long.as_str(), "too long"),
    ] {
        let err = ga.create_accelerator(&tracked(name, "")).await.unwrap_err();
        assert_eq!(err.code(), "InvalidArgumentException", "{why}");
        assert!(matches!(err, AwsError::Validation { .. }), "{why}: {err:?}");
    }
    // Upstream's generated names (underscores) are fine.
    ga.create_accelerator(&tracked("k8s_ns_name_0123456789abcdef", ""))
        .await
        .unwrap();
    let mut three = tracked("ips", "");
    three.ip_addresses = vec!["192.0.2.1".into(), "192.0.2.2".into(), "192.0.2.3".into()];
    assert_eq!(
        ga.create_accelerator(&three).await.unwrap_err().code(),
        "InvalidArgumentException"
    );
    let mut reserved = tracked("aws-tag", "");
    reserved
        .tags
        .insert("aws:cloudformation:stack-name".into(), "x".into());
    assert_eq!(
        ga.create_accelerator(&reserved).await.unwrap_err().code(),
        "InvalidArgumentException"
    );
    fake.set_ga_limits(GaLimits {
        accelerators: 1,
        ..GaLimits::default()
    });
    let err = ga
        .create_accelerator(&tracked("second", ""))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "LimitExceededException");
    assert!(matches!(err, AwsError::LimitExceeded { .. }));
}

/// DescribeAccelerator / ListAccelerators: an unknown ARN is AcceleratorNotFoundException
/// (NotFound); a listener's ARN is not an accelerator's (InvalidArgumentException); the list
/// holds every accelerator.
#[tokio::test]
async fn describe_and_list_accelerators() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let a = accelerator(ga).await;
    assert_eq!(ga.describe_accelerator(&a.arn).await.unwrap(), a);
    let err = ga
        .describe_accelerator(&format!("{}0", a.arn))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "AcceleratorNotFoundException");
    assert!(err.is_not_found());
    let err = ga
        .describe_accelerator(&format!("{}/listener/0123abcd", a.arn))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "InvalidArgumentException");
    let listed = ga.list_accelerators().await.unwrap();
    assert_eq!(listed, vec![a]);
    assert_eq!(fake.count("ListAccelerators"), 1);
}

/// Status: every change leaves the accelerator IN_PROGRESS until it propagates; the fake
/// propagates when the test says (Manual, the default), after N describes, or at once.
#[tokio::test]
async fn status_moves_from_in_progress_to_deployed() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let a = accelerator(ga).await;
    assert_eq!(
        ga.describe_accelerator(&a.arn).await.unwrap().status,
        "IN_PROGRESS"
    );
    fake.finish_ga_deployments();
    assert_eq!(
        ga.describe_accelerator(&a.arn).await.unwrap().status,
        "DEPLOYED"
    );

    fake.set_ga_deployment(GaDeployment::AfterDescribes(2));
    ga.create_listener(&a.arn, &listener(AgaProtocol::Tcp, &[(80, 80)]))
        .await
        .unwrap();
    let seen: Vec<String> = {
        let mut v = Vec::new();
        for _ in 0..3 {
            v.push(ga.describe_accelerator(&a.arn).await.unwrap().status);
        }
        v
    };
    assert_eq!(seen, ["IN_PROGRESS", "IN_PROGRESS", "DEPLOYED"]);

    fake.set_ga_deployment(GaDeployment::Immediate);
    let u = ga.disable_accelerator(&a.arn).await.unwrap();
    assert_eq!(u.status, "DEPLOYED");
}

/// UpdateAccelerator: name, IP address type (DUAL_STACK adds the IPv6 set and DNS name) and
/// enabled change; an unknown ARN is AcceleratorNotFoundException.
#[tokio::test]
async fn update_accelerator() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let a = accelerator(ga).await;
    fake.finish_ga_deployments();
    let mut want = tracked("renamed", "uid-1");
    want.ip_address_type = AgaIpAddressType::DualStack;
    want.enabled = Some(false);
    let u = ga.update_accelerator(&a.arn, &want).await.unwrap();
    assert_eq!(u.name, "renamed");
    assert_eq!(u.ip_address_type, "DUAL_STACK");
    assert!(u.dual_stack_dns_name.is_some());
    assert!(!u.enabled);
    assert_eq!(u.status, "IN_PROGRESS");
    assert_eq!(u.dns_name, a.dns_name, "the DNS name stays");
    assert_eq!(
        ga.update_accelerator(&format!("{}0", a.arn), &want)
            .await
            .unwrap_err()
            .code(),
        "AcceleratorNotFoundException"
    );
}

/// DeleteAccelerator: an enabled accelerator, or one whose disable is still propagating, is
/// AcceleratorNotDisabledException (NotPermitted); one with a listener is
/// AssociatedListenerFoundException (InUse); a disabled, DEPLOYED one without listeners goes.
#[tokio::test]
async fn delete_accelerator() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let a = accelerator(ga).await;
    fake.finish_ga_deployments();
    let err = ga.delete_accelerator(&a.arn).await.unwrap_err();
    assert_eq!(err.code(), "AcceleratorNotDisabledException");
    assert!(matches!(err, AwsError::NotPermitted { .. }));
    ga.disable_accelerator(&a.arn).await.unwrap();
    let err = ga.delete_accelerator(&a.arn).await.unwrap_err();
    assert_eq!(
        err.code(),
        "AcceleratorNotDisabledException",
        "the disable still propagates"
    );
    fake.finish_ga_deployments();
    let l = ga
        .create_listener(&a.arn, &listener(AgaProtocol::Tcp, &[(80, 80)]))
        .await
        .unwrap();
    let err = ga.delete_accelerator(&a.arn).await.unwrap_err();
    assert_eq!(err.code(), "AssociatedListenerFoundException");
    assert!(matches!(err, AwsError::InUse { .. }));
    ga.delete_listener(&l.arn).await.unwrap();
    ga.delete_accelerator(&a.arn).await.unwrap();
    assert!(ga
        .describe_accelerator(&a.arn)
        .await
        .unwrap_err()
        .is_not_found());
    // Its idempotency token is free again.
    let again = accelerator(ga).await;
    assert_ne!(again.arn, a.arn);
}

/// ListTagsForResource / TagResource / UntagResource: tags of an accelerator; `aws:` keys are
/// refused; an unknown ARN is AcceleratorNotFoundException.
#[tokio::test]
async fn accelerator_tags() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let a = accelerator(ga).await;
    assert_eq!(
        ga.list_tags_for_resource(&a.arn).await.unwrap(),
        tracked("", "").tags
    );
    ga.tag_resource(
        &a.arn,
        &tags(&[("team", "a"), ("aga.k8s.aws/stack", "ns/other")]),
    )
    .await
    .unwrap();
    ga.untag_resource(&a.arn, &["team".to_string(), "absent".to_string()])
        .await
        .unwrap();
    let t = ga.list_tags_for_resource(&a.arn).await.unwrap();
    assert_eq!(t["aga.k8s.aws/stack"], "ns/other");
    assert!(!t.contains_key("team"));
    assert_eq!(
        ga.tag_resource(&a.arn, &tags(&[("aws:x", "y")]))
            .await
            .unwrap_err()
            .code(),
        "InvalidArgumentException"
    );
    let unknown = format!("{}0", a.arn);
    assert!(ga
        .list_tags_for_resource(&unknown)
        .await
        .unwrap_err()
        .is_not_found());
    assert!(ga
        .tag_resource(&unknown, &tags(&[("k", "v")]))
        .await
        .unwrap_err()
        .is_not_found());
    // Tagging does not change the status.
    fake.finish_ga_deployments();
    ga.tag_resource(&a.arn, &tags(&[("k", "v")])).await.unwrap();
    assert_eq!(
        ga.describe_accelerator(&a.arn).await.unwrap().status,
        "DEPLOYED"
    );
}

/// CreateListener / ListListeners: client affinity NONE by default, the ARN under the
/// accelerator's; one protocol's ports are unique on an accelerator (another protocol may reuse
/// them), ranges within 1-65535 and ordered (InvalidPortRangeException); 10 listeners at most
/// (LimitExceededException); an unknown accelerator is AcceleratorNotFoundException.
#[tokio::test]
async fn create_listener() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let a = accelerator(ga).await;
    fake.finish_ga_deployments();
    let l = ga
        .create_listener(&a.arn, &listener(AgaProtocol::Tcp, &[(80, 80), (443, 443)]))
        .await
        .unwrap();
    assert!(
        Regex::new(&format!(
            "^{}/listener/[0-9a-f]{{8}}$",
            regex::escape(&a.arn)
        ))
        .unwrap()
        .is_match(&l.arn),
        "{}",
        l.arn
    );
    assert_eq!(l.client_affinity, "NONE");
    assert_eq!(l.protocol, "TCP");
    assert_eq!(
        ga.describe_accelerator(&a.arn).await.unwrap().status,
        "IN_PROGRESS"
    );
    let mut sticky = listener(AgaProtocol::Udp, &[(80, 80)]);
    sticky.client_affinity = Some(ClientAffinity::SourceIp);
    let u = ga.create_listener(&a.arn, &sticky).await.unwrap();
    assert_eq!(
        u.client_affinity, "SOURCE_IP",
        "UDP may reuse TCP's port 80"
    );
    assert_eq!(ga.list_listeners(&a.arn).await.unwrap().len(), 2);

    for (ranges, why) in [
        (&[(443, 450)][..], "overlaps TCP 443"),
        (&[(0, 10)][..], "port 0"),
        (&[(90, 80)][..], "reversed"),
        (&[(1000, 1010), (1005, 1020)][..], "overlapping within"),
    ] {
        let err = ga
            .create_listener(&a.arn, &listener(AgaProtocol::Tcp, ranges))
            .await
            .unwrap_err();
        assert_eq!(err.code(), "InvalidPortRangeException", "{why}");
    }
    let err = ga
        .create_listener(&a.arn, &listener(AgaProtocol::Tcp, &[]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "InvalidArgumentException", "no ranges");

    fake.set_ga_limits(GaLimits {
        listeners_per_accelerator: 2,
        ..GaLimits::default()
    });
    let err = ga
        .create_listener(&a.arn, &listener(AgaProtocol::Tcp, &[(8080, 8080)]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "LimitExceededException");
    let unknown = format!("{}0", a.arn);
    assert!(ga
        .list_listeners(&unknown)
        .await
        .unwrap_err()
        .is_not_found());
    assert_eq!(
        ga.create_listener(&unknown, &listener(AgaProtocol::Tcp, &[(1, 1)]))
            .await
            .unwrap_err()
            .code(),
        "AcceleratorNotFoundException"
    );
}

/// UpdateListener: new ranges and protocol; an endpoint port of a port override may not fall in
/// them, nor may the listener's own groups' overridden listener ports fall outside them
/// (InvalidArgumentException); an unknown listener is ListenerNotFoundException. DeleteListener
/// refuses a listener with endpoint groups (AssociatedEndpointGroupFoundException).
#[tokio::test]
async fn update_and_delete_listener() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let a = accelerator(ga).await;
    let l = ga
        .create_listener(&a.arn, &listener(AgaProtocol::Tcp, &[(80, 90)]))
        .await
        .unwrap();
    let g = ga
        .create_endpoint_group(&l.arn, &group("eu-west-1", &[(85, 8085)], &[]))
        .await
        .unwrap();
    let u = ga
        .update_listener(&l.arn, &listener(AgaProtocol::Tcp, &[(80, 86)]))
        .await
        .unwrap();
    assert_eq!(
        u.port_ranges,
        vec![PortRange {
            from_port: 80,
            to_port: 86
        }]
    );
    let err = ga
        .update_listener(&l.arn, &listener(AgaProtocol::Tcp, &[(80, 84)]))
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        "InvalidArgumentException",
        "85 would fall outside"
    );
    let err = ga
        .update_listener(
            &l.arn,
            &listener(AgaProtocol::Tcp, &[(80, 86), (8085, 8085)]),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        "InvalidArgumentException",
        "8085 is an endpoint port"
    );
    let err = ga
        .update_listener(
            &format!("{}0", l.arn),
            &listener(AgaProtocol::Tcp, &[(1, 1)]),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "ListenerNotFoundException");

    let err = ga.delete_listener(&l.arn).await.unwrap_err();
    assert_eq!(err.code(), "AssociatedEndpointGroupFoundException");
    assert!(matches!(err, AwsError::InUse { .. }));
    ga.delete_endpoint_group(&g.arn).await.unwrap();
    ga.delete_listener(&l.arn).await.unwrap();
    assert_eq!(
        ga.delete_listener(&l.arn).await.unwrap_err().code(),
        "ListenerNotFoundException"
    );
    assert_eq!(
        ga.list_endpoint_groups(&l.arn).await.unwrap_err().code(),
        "ListenerNotFoundException"
    );
}

/// CreateEndpointGroup: one group per region on a listener
/// (EndpointGroupAlreadyExistsException, Duplicate); AWS's defaults (traffic dial 100, weight
/// 128, client IP preservation on for an ALB); an endpoint must be in the group's region, and
/// one of the fake's own region must exist ("valid and active"); 10 endpoints at most
/// (LimitExceededException); the port-override rules of "Overriding listener ports".
#[tokio::test]
async fn create_endpoint_group() {
    let env = Env::fake();
    let fake = env.fake.clone().unwrap();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let (_, subnets) = env.network().await;
    let alb = env
        .elb
        .create_load_balancer(&spec::alb("web", &subnets[..2], &[]))
        .await
        .unwrap();
    let a = accelerator(ga).await;
    let l = ga
        .create_listener(&a.arn, &listener(AgaProtocol::Tcp, &[(80, 80), (443, 443)]))
        .await
        .unwrap();
    let g = ga
        .create_endpoint_group(
            &l.arn,
            &group("us-west-2", &[(443, 8443)], &[alb.arn.as_str()]),
        )
        .await
        .unwrap();
    assert!(
        g.arn.starts_with(&format!("{}/endpoint-group/", l.arn)),
        "{}",
        g.arn
    );
    assert_eq!(g.region, "us-west-2");
    assert_eq!(g.traffic_dial_percentage, Some(100.0));
    assert_eq!(g.endpoints.len(), 1);
    assert_eq!(g.endpoints[0].weight, Some(128));
    assert_eq!(g.endpoints[0].client_ip_preservation_enabled, Some(true));
    assert_eq!(
        ga.list_endpoint_groups(&l.arn).await.unwrap(),
        vec![g.clone()]
    );

    let err = ga
        .create_endpoint_group(&l.arn, &group("us-west-2", &[], &[]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "EndpointGroupAlreadyExistsException");
    assert!(matches!(err, AwsError::Duplicate { .. }));

    let missing = format!("{}0", alb.arn);
    for (g, why) in [
        (
            group("eu-west-1", &[], &[alb.arn.as_str()]),
            "the ALB is in us-west-2",
        ),
        (
            group("ap-south-1", &[], &[remote_lb("x").as_str()]),
            "the NLB is in eu-west-1",
        ),
        (
            group("us-east-2", &[(80, 443)], &[]),
            "endpoint port in a listener range",
        ),
        (
            group("us-east-2", &[(8080, 9090)], &[]),
            "listener port outside the listener",
        ),
        (
            group("us-east-2", &[(80, 9090), (443, 9090)], &[]),
            "one endpoint port, two listener ports",
        ),
        (
            group("us-east-2", &[(80, 8443)], &[]),
            "8443 is already 443's",
        ),
        (group("not a region", &[], &[]), "region"),
    ] {
        let err = ga.create_endpoint_group(&l.arn, &g).await.unwrap_err();
        assert_eq!(err.code(), "InvalidArgumentException", "{why}");
    }
    // The fake's own region: the load balancer must exist.
    let err = ga
        .create_endpoint_group(&l.arn, &group("eu-central-1", &[], &[]))
        .await;
    assert!(err.is_ok(), "no endpoints is fine");
    let l2 = ga
        .create_listener(&a.arn, &listener(AgaProtocol::Udp, &[(53, 53)]))
        .await
        .unwrap();
    let err = ga
        .create_endpoint_group(&l2.arn, &group("us-west-2", &[], &[missing.as_str()]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "InvalidArgumentException", "{err}");

    fake.set_ga_limits(GaLimits {
        endpoints_per_group: 1,
        ..GaLimits::default()
    });
    let err = ga
        .create_endpoint_group(
            &l2.arn,
            &group(
                "eu-west-1",
                &[],
                &[remote_lb("a").as_str(), remote_lb("b").as_str()],
            ),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "LimitExceededException");
    assert_eq!(
        ga.create_endpoint_group(&format!("{}0", l.arn), &group("us-east-1", &[], &[]))
            .await
            .unwrap_err()
            .code(),
        "ListenerNotFoundException"
    );
}

/// UpdateEndpointGroup (traffic dial and port overrides; or endpoints; or port overrides only):
/// what the request leaves out stays, an empty list clears; AddEndpoints adds or re-sets,
/// RemoveEndpoints refuses an endpoint not in the group (EndpointNotFoundException),
/// DeleteEndpointGroup an unknown group (EndpointGroupNotFoundException).
#[tokio::test]
async fn update_endpoint_group_and_endpoints() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let a = accelerator(ga).await;
    let l = ga
        .create_listener(&a.arn, &listener(AgaProtocol::Tcp, &[(80, 80)]))
        .await
        .unwrap();
    let g = ga
        .create_endpoint_group(
            &l.arn,
            &group("eu-west-1", &[(80, 8080)], &[remote_lb("a").as_str()]),
        )
        .await
        .unwrap();

    let mut settings = group("eu-west-1", &[], &[]);
    settings.traffic_dial_percentage = Some(40);
    let u = ga.update_endpoint_group(&g.arn, &settings).await.unwrap();
    assert_eq!(u.traffic_dial_percentage, Some(40.0));
    assert!(u.port_overrides.is_empty(), "an empty list clears");
    assert_eq!(u.endpoints.len(), 1, "endpoints stay");

    let u = ga
        .set_endpoints(&g.arn, &[endpoint(remote_lb("b").as_str(), Some(7))])
        .await
        .unwrap();
    assert_eq!(u.endpoints.len(), 1);
    assert_eq!(u.endpoints[0].endpoint_id, remote_lb("b"));
    assert_eq!(u.endpoints[0].weight, Some(7));
    assert_eq!(
        u.endpoints[0].client_ip_preservation_enabled,
        Some(false),
        "off for an NLB"
    );
    assert_eq!(u.traffic_dial_percentage, Some(40.0), "the dial stays");

    ga.add_endpoints(
        &g.arn,
        &[
            endpoint(remote_lb("b").as_str(), Some(9)),
            endpoint(remote_lb("c").as_str(), None),
        ],
    )
    .await
    .unwrap();
    let now = ga.list_endpoint_groups(&l.arn).await.unwrap().remove(0);
    let weights: Vec<(String, Option<i32>)> = now
        .endpoints
        .iter()
        .map(|e| (e.endpoint_id.clone(), e.weight))
        .collect();
    assert_eq!(
        weights,
        vec![(remote_lb("b"), Some(9)), (remote_lb("c"), Some(128))]
    );

    let err = ga
        .remove_endpoints(&g.arn, &[remote_lb("zzz")])
        .await
        .unwrap_err();
    assert_eq!(err.code(), "EndpointNotFoundException");
    ga.remove_endpoints(&g.arn, &[remote_lb("b")])
        .await
        .unwrap();
    let u = ga
        .set_port_overrides(
            &g.arn,
            &[PortOverride {
                listener_port: 80,
                endpoint_port: 8081,
            }],
        )
        .await
        .unwrap();
    assert_eq!(u.endpoints.len(), 1, "endpoints stay");
    assert_eq!(u.port_overrides.len(), 1);

    ga.delete_endpoint_group(&g.arn).await.unwrap();
    let err = ga.delete_endpoint_group(&g.arn).await.unwrap_err();
    assert_eq!(err.code(), "EndpointGroupNotFoundException");
    assert!(err.is_not_found());
    assert_eq!(
        ga.add_endpoints(&g.arn, &[]).await.unwrap_err().code(),
        "EndpointGroupNotFoundException"
    );
}

/// Upstream's IAM policy (docs/install/aga_controller_iam_policy.json): creates must carry the
/// cluster tag and `aga.k8s.aws/resource=GlobalAccelerator`; describes and writes need them on
/// the accelerator; listing is open. Anything else is AccessDeniedException (AccessDenied).
#[tokio::test]
async fn upstream_iam_policy() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let theirs = ga
        .create_accelerator(&Accelerator {
            tags: tags(&[("owner", "someone")]),
            ..tracked("theirs", "t")
        })
        .await
        .unwrap();
    fake.enforce_ga_iam_policy(true);
    let mine = accelerator(ga).await;
    let err = ga
        .create_accelerator(&Accelerator {
            tags: tags(&[("elbv2.k8s.aws/cluster", "c1")]),
            ..tracked("untagged", "u")
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), "AccessDeniedException");
    assert!(matches!(err, AwsError::AccessDenied { .. }));
    assert_eq!(ga.list_accelerators().await.unwrap().len(), 2);
    assert!(ga.list_tags_for_resource(&theirs.arn).await.is_ok());
    for err in [
        ga.describe_accelerator(&theirs.arn).await.unwrap_err(),
        ga.disable_accelerator(&theirs.arn).await.unwrap_err(),
        ga.tag_resource(&theirs.arn, &tags(&[("k", "v")]))
            .await
            .unwrap_err(),
        ga.create_listener(&theirs.arn, &listener(AgaProtocol::Tcp, &[(80, 80)]))
            .await
            .unwrap_err(),
    ] {
        assert_eq!(err.code(), "AccessDeniedException");
    }
    assert!(ga.describe_accelerator(&mine.arn).await.is_ok());
    ga.tag_resource(&mine.arn, &tags(&[("k", "v")]))
        .await
        .unwrap();
}

/// Every call goes through the Caller and is logged under the Global Accelerator service, the
/// writes as writes (the leader fence and the dry-run recorder count on it).
#[tokio::test]
async fn calls_are_logged_as_global_accelerator_calls() {
    let fake = fake();
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let a = accelerator(ga).await;
    ga.list_listeners(&a.arn).await.unwrap();
    let calls = fake.calls();
    assert!(calls.iter().all(|(s, _)| *s == Service::GlobalAccelerator));
    assert_eq!(
        fake.write_calls()
            .into_iter()
            .map(|(_, op)| op)
            .collect::<Vec<_>>(),
        ["CreateAccelerator"]
    );
    assert_eq!(Service::GlobalAccelerator.id(), "Global Accelerator");
}
