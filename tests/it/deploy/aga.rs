//! The Global Accelerator deployer on the fake: a stack created from nothing and the second
//! deploy writing nothing; listener port and endpoint weight edits; a listener in the way of
//! another's new ports; an accelerator upstream made adopted as it is; an untagged one never
//! touched; deletion through disable → wait for DEPLOYED → delete; a dry run that records and
//! sends nothing; a stack without the tracking tags refused before any call.

use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::{spec, FakeAws};
use aws_load_balancer_controller::aws::shadow::Recorder;
use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::deploy::aga::{self, AgaDeletion};
use aws_load_balancer_controller::deploy::Error as DeployError;
use aws_load_balancer_controller::model::aga::{
    Accelerator, AgaIpAddressType, AgaListener, AgaProtocol, AgaStack, ClientAffinity,
    EndpointConfiguration, EndpointGroup, PortOverride, PortRange,
};

use super::{network, tags, write_ops, CLUSTER};

const STACK: &str = "shop/edge";

fn remote_nlb(name: &str) -> String {
    format!("arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/net/{name}/0123456789abcdef")
}

fn range(from_port: i32, to_port: i32) -> PortRange {
    PortRange { from_port, to_port }
}

/// Upstream's tracking tags (as its model builder and tracking provider put them) and a user
/// tag.
fn accelerator_tags() -> Tags {
    tags(&[
        ("elbv2.k8s.aws/cluster", CLUSTER),
        ("elbv2.k8s.aws/cluster-region", "us-west-2"),
        ("aga.k8s.aws/stack", STACK),
        ("aga.k8s.aws/resource", "GlobalAccelerator"),
        ("Team", "edge"),
    ])
}

/// A TCP listener on 80 and 443 with an endpoint group in us-west-2 on `alb` (443 → 8443), and
/// a UDP listener on 53 with one in eu-west-1 on a remote NLB; every default spelled out, as
/// upstream's CRD defaults do.
fn stack(alb: &str) -> AgaStack {
    AgaStack {
        id: STACK.into(),
        accelerator: Accelerator {
            name: "k8s_shop_edge_0123456789abcdef0123456".into(),
            ip_addresses: vec![],
            ip_address_type: AgaIpAddressType::Ipv4,
            enabled: Some(true),
            tags: accelerator_tags(),
            crd_uid: "4f6b1a52-0000-4000-8000-000000000001".into(),
            existing_arn: None,
        },
        listeners: vec![
            AgaListener {
                id: "listener-0".into(),
                protocol: AgaProtocol::Tcp,
                port_ranges: vec![range(80, 80), range(443, 443)],
                client_affinity: Some(ClientAffinity::None),
                endpoint_groups: vec![EndpointGroup {
                    id: "listener-0/group-0".into(),
                    region: "us-west-2".into(),
                    traffic_dial_percentage: Some(100),
                    port_overrides: vec![PortOverride {
                        listener_port: 443,
                        endpoint_port: 8443,
                    }],
                    endpoint_configurations: vec![EndpointConfiguration {
                        endpoint_id: alb.into(),
                        weight: Some(128),
                        client_ip_preservation_enabled: Some(true),
                    }],
                }],
            },
            AgaListener {
                id: "listener-1".into(),
                protocol: AgaProtocol::Udp,
                port_ranges: vec![range(53, 53)],
                client_affinity: Some(ClientAffinity::SourceIp),
                endpoint_groups: vec![EndpointGroup {
                    id: "listener-1/group-0".into(),
                    region: "eu-west-1".into(),
                    traffic_dial_percentage: Some(50),
                    port_overrides: vec![],
                    endpoint_configurations: vec![EndpointConfiguration {
                        endpoint_id: remote_nlb("dns"),
                        weight: Some(200),
                        client_ip_preservation_enabled: Some(false),
                    }],
                }],
            },
        ],
    }
}

/// A fake with an ALB in us-west-2; the fake and the ALB's ARN.
async fn setup() -> (Arc<FakeAws>, String) {
    let fake = Arc::new(FakeAws::new());
    let vpc = network(&fake);
    let subnets: Vec<String> = fake
        .describe_subnets(&Ec2Query::default().filter("vpc-id", [vpc]))
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    let alb = fake
        .create_load_balancer(&spec::alb("edge", &subnets[..2], &[]))
        .await
        .unwrap()
        .arn;
    (fake, alb)
}

fn ga_writes(fake: &FakeAws) -> Vec<String> {
    fake.write_calls()
        .into_iter()
        .filter(|(s, _)| *s == Service::GlobalAccelerator)
        .map(|(_, op)| op)
        .collect()
}

#[tokio::test]
async fn creates_the_stack_and_a_second_deploy_writes_nothing() {
    let (fake, alb) = setup().await;
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let want = stack(&alb);
    fake.clear_calls();
    let out = aga::deploy(ga, &want, CLUSTER).await.unwrap();

    let accs = fake.ga_accelerators();
    assert_eq!(accs.len(), 1);
    let (acc, acc_tags) = &accs[0];
    assert_eq!(acc.name, want.accelerator.name);
    assert_eq!(acc_tags, &accelerator_tags());
    assert!(acc.enabled);
    assert_eq!(out.accelerator_arn, acc.arn);
    assert_eq!(out.dns_name, acc.dns_name);
    assert_eq!(out.ip_sets, acc.ip_sets);
    assert_eq!(out.status, "IN_PROGRESS");
    assert_eq!(out.requeue_after(), Some(aga::STATUS_REQUEUE_AFTER));
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(
        ga_writes(&fake),
        [
            "CreateAccelerator",
            "CreateListener",
            "CreateListener",
            "CreateEndpointGroup",
            "CreateEndpointGroup",
        ],
        "a new accelerator's listeners are not listed; endpoints ride in the creates"
    );
    assert_eq!(fake.count("ListListeners"), 0);

    let listeners = fake.ga_listeners_of(&acc.arn);
    assert_eq!(listeners.len(), 2);
    let tcp = listeners.iter().find(|l| l.protocol == "TCP").unwrap();
    let udp = listeners.iter().find(|l| l.protocol == "UDP").unwrap();
    assert_eq!(tcp.port_ranges, vec![range(80, 80), range(443, 443)]);
    assert_eq!(udp.client_affinity, "SOURCE_IP");
    assert_eq!(out.listener_arns["listener-0"], tcp.arn);
    assert_eq!(out.listener_arns["listener-1"], udp.arn);
    let west = fake.ga_endpoint_groups_of(&tcp.arn).remove(0);
    assert_eq!(west.region, "us-west-2");
    assert_eq!(
        west.port_overrides,
        want.listeners[0].endpoint_groups[0].port_overrides
    );
    assert_eq!(west.endpoints[0].endpoint_id, alb);
    let eu = fake.ga_endpoint_groups_of(&udp.arn).remove(0);
    assert_eq!(eu.traffic_dial_percentage, Some(50.0));
    assert_eq!(eu.endpoints[0].weight, Some(200));
    assert_eq!(out.endpoint_group_arns["listener-0/group-0"], west.arn);
    assert_eq!(out.endpoint_group_arns["listener-1/group-0"], eu.arn);

    // Found again by its tags (no ARN in the status yet): nothing to write.
    fake.clear_calls();
    let again = aga::deploy(ga, &want, CLUSTER).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
    assert_eq!(again.accelerator_arn, out.accelerator_arn);
    assert_eq!(again.listener_arns, out.listener_arns);
    assert_eq!(again.endpoint_group_arns, out.endpoint_group_arns);

    // By the ARN the status names, once DEPLOYED: nothing to write, no requeue.
    fake.finish_ga_deployments();
    let mut known = want.clone();
    known.accelerator.existing_arn = Some(out.accelerator_arn.clone());
    fake.clear_calls();
    let third = aga::deploy(ga, &known, CLUSTER).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
    assert_eq!(fake.count("ListAccelerators"), 0, "the ARN is enough");
    assert_eq!(third.status, "DEPLOYED");
    assert_eq!(third.requeue_after(), None);
}

#[tokio::test]
async fn listener_ports_and_endpoint_weights_are_updated_in_place() {
    let (fake, alb) = setup().await;
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let mut want = stack(&alb);
    let first = aga::deploy(ga, &want, CLUSTER).await.unwrap();

    want.listeners[0].port_ranges = vec![range(80, 81), range(443, 443)];
    want.listeners[1].endpoint_groups[0].endpoint_configurations[0].weight = Some(100);
    want.listeners[1].endpoint_groups[0].traffic_dial_percentage = Some(75);
    fake.clear_calls();
    let second = aga::deploy(ga, &want, CLUSTER).await.unwrap();
    assert_eq!(
        ga_writes(&fake),
        [
            "UpdateListener",
            "UpdateEndpointGroup", // traffic dial
            "UpdateEndpointGroup", // the weight: only the whole endpoint list changes it
        ]
    );
    assert_eq!(
        second.listener_arns, first.listener_arns,
        "same listeners, updated"
    );
    assert_eq!(second.endpoint_group_arns, first.endpoint_group_arns);
    let tcp = &second.listener_arns["listener-0"];
    let listener = fake
        .ga_listeners_of(&second.accelerator_arn)
        .into_iter()
        .find(|l| &l.arn == tcp)
        .unwrap();
    assert_eq!(listener.port_ranges, vec![range(80, 81), range(443, 443)]);
    let eu = fake
        .ga_endpoint_groups_of(&second.listener_arns["listener-1"])
        .remove(0);
    assert_eq!(eu.endpoints[0].weight, Some(100));
    assert_eq!(eu.traffic_dial_percentage, Some(75.0));

    fake.clear_calls();
    aga::deploy(ga, &want, CLUSTER).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());

    // A new endpoint is added, the old one removed (AddEndpoints, then RemoveEndpoints).
    want.listeners[1].endpoint_groups[0].endpoint_configurations[0].endpoint_id =
        remote_nlb("dns-2");
    fake.clear_calls();
    aga::deploy(ga, &want, CLUSTER).await.unwrap();
    assert_eq!(ga_writes(&fake), ["AddEndpoints", "RemoveEndpoints"]);
    let eu = fake
        .ga_endpoint_groups_of(&second.listener_arns["listener-1"])
        .remove(0);
    assert_eq!(eu.endpoints.len(), 1);
    assert_eq!(eu.endpoints[0].endpoint_id, remote_nlb("dns-2"));
}

/// Listeners are paired by likeness and changed in upstream's order: an unpaired listener in
/// the way of a paired one's new ports is deleted before the update (AWS would refuse the
/// update otherwise), one in nobody's way after it.
#[tokio::test]
async fn listeners_in_the_way_go_first() {
    let (fake, _) = setup().await;
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let mut want = stack(&remote_nlb("unused"));
    want.listeners.truncate(1);
    want.listeners[0].port_ranges = vec![range(80, 80)];
    want.listeners[0].endpoint_groups[0].region = "eu-west-1".into();
    want.listeners[0].endpoint_groups[0].port_overrides = vec![PortOverride {
        listener_port: 80,
        endpoint_port: 8080,
    }];
    want.listeners[0].endpoint_groups[0].endpoint_configurations[0].endpoint_id = remote_nlb("web");
    let out = aga::deploy(ga, &want, CLUSTER).await.unwrap();
    let acc = out.accelerator_arn.clone();
    // A second listener on 81, made outside the model.
    let extra = ga
        .create_listener(
            &acc,
            &AgaListener {
                id: "extra".into(),
                protocol: AgaProtocol::Tcp,
                port_ranges: vec![range(81, 81)],
                client_affinity: None,
                endpoint_groups: vec![],
            },
        )
        .await
        .unwrap();

    // The model now wants TCP 81-82, without port overrides. 81-82 is more like the extra
    // listener (81) than like the old one (80): that one is paired and updated, and the old
    // listener, in nobody's way, is deleted after the update, with its endpoint group.
    want.listeners[0].port_ranges = vec![range(81, 82)];
    want.listeners[0].endpoint_groups[0].port_overrides = vec![];
    fake.clear_calls();
    let out2 = aga::deploy(ga, &want, CLUSTER).await.unwrap();
    let ops = ga_writes(&fake);
    assert_eq!(
        out2.listener_arns["listener-0"], extra.arn,
        "paired with the extra listener, not {}",
        out.listener_arns["listener-0"]
    );
    assert_eq!(
        ops,
        [
            "UpdateListener",
            "DeleteEndpointGroup",
            "DeleteListener",
            "CreateEndpointGroup",
        ]
    );
    let listeners = fake.ga_listeners_of(&acc);
    assert_eq!(listeners.len(), 1);
    assert_eq!(listeners[0].port_ranges, vec![range(81, 82)]);
    fake.clear_calls();
    aga::deploy(ga, &want, CLUSTER).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());

    // Now a second AWS listener on TCP 84-90, and the model's on 81-85: the model's is paired
    // with its own (81-82) and takes 84-85 from the other, which goes before the update.
    let blocker = ga
        .create_listener(
            &acc,
            &AgaListener {
                id: "blocker".into(),
                protocol: AgaProtocol::Tcp,
                port_ranges: vec![range(84, 90)],
                client_affinity: None,
                endpoint_groups: vec![],
            },
        )
        .await
        .unwrap();
    want.listeners[0].port_ranges = vec![range(81, 85)];
    fake.clear_calls();
    aga::deploy(ga, &want, CLUSTER).await.unwrap();
    assert_eq!(
        ga_writes(&fake),
        ["DeleteListener", "UpdateListener"],
        "the blocker ({}) first",
        blocker.arn
    );
    let listeners = fake.ga_listeners_of(&acc);
    assert_eq!(listeners.len(), 1);
    assert_eq!(listeners[0].port_ranges, vec![range(81, 85)]);
}

/// A port override the listener's new ranges would break is dropped before the update, which
/// AWS would refuse otherwise.
#[tokio::test]
async fn port_overrides_are_fixed_before_the_listener_changes() {
    let (fake, _) = setup().await;
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let mut want = stack(&remote_nlb("unused"));
    want.listeners.truncate(1);
    want.listeners[0].port_ranges = vec![range(80, 90)];
    let group = &mut want.listeners[0].endpoint_groups[0];
    group.region = "eu-west-1".into();
    group.endpoint_configurations[0].endpoint_id = remote_nlb("web");
    group.port_overrides = vec![
        PortOverride {
            listener_port: 85,
            endpoint_port: 8085,
        },
        PortOverride {
            listener_port: 80,
            endpoint_port: 8080,
        },
    ];
    aga::deploy(ga, &want, CLUSTER).await.unwrap();

    // Ports 80-84 only: 85 → 8085 cannot stay.
    want.listeners[0].port_ranges = vec![range(80, 84)];
    want.listeners[0].endpoint_groups[0]
        .port_overrides
        .remove(0);
    fake.clear_calls();
    let out = aga::deploy(ga, &want, CLUSTER).await.unwrap();
    assert_eq!(ga_writes(&fake), ["UpdateEndpointGroup", "UpdateListener"]);
    let g = fake
        .ga_endpoint_groups_of(&out.listener_arns["listener-0"])
        .remove(0);
    assert_eq!(
        g.port_overrides,
        vec![PortOverride {
            listener_port: 80,
            endpoint_port: 8080,
        }]
    );
    fake.clear_calls();
    aga::deploy(ga, &want, CLUSTER).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

/// An accelerator upstream made (its tags, its listeners, its endpoint groups) is found by its
/// tags and kept: same ARN, nothing recreated; only what differs is written.
#[tokio::test]
async fn adopts_the_accelerator_upstream_made() {
    let (fake, alb) = setup().await;
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let want = stack(&alb);
    // What upstream's deployer leaves: the same model, created by another client, with another
    // idempotency token.
    let mut upstream = want.clone();
    upstream.accelerator.crd_uid = "made-by-upstream".into();
    let theirs = aga::deploy(ga, &upstream, CLUSTER).await.unwrap();
    fake.finish_ga_deployments();

    fake.clear_calls();
    let ours = aga::deploy(ga, &want, CLUSTER).await.unwrap();
    assert_eq!(ours.accelerator_arn, theirs.accelerator_arn);
    assert_eq!(ours.listener_arns, theirs.listener_arns);
    assert_eq!(ours.endpoint_group_arns, theirs.endpoint_group_arns);
    assert_eq!(write_ops(&fake), Vec::<String>::new());
    assert_eq!(fake.ga_accelerators().len(), 1);

    // A tag the user changed: TagResource only.
    let mut retagged = want.clone();
    retagged
        .accelerator
        .tags
        .insert("Team".into(), "platform".into());
    fake.clear_calls();
    aga::deploy(ga, &retagged, CLUSTER).await.unwrap();
    assert_eq!(ga_writes(&fake), ["TagResource"]);
    // A CloudFormation tag on it stays.
    fake.seed_ga_tags(
        &ours.accelerator_arn,
        tags(&[("aws:cloudformation:stack-name", "x")]),
    );
    fake.clear_calls();
    aga::deploy(ga, &retagged, CLUSTER).await.unwrap();
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

/// An accelerator without this cluster's and stack's tags is never modified or deleted: named
/// by the status it is refused; otherwise the stack makes its own.
#[tokio::test]
async fn never_touches_an_untagged_accelerator() {
    let (fake, alb) = setup().await;
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let stranger = ga
        .create_accelerator(&Accelerator {
            name: "hand-made".into(),
            ip_addresses: vec![],
            ip_address_type: AgaIpAddressType::Ipv4,
            enabled: Some(true),
            tags: tags(&[("owner", "someone-else")]),
            crd_uid: String::new(),
            existing_arn: None,
        })
        .await
        .unwrap();
    let mut want = stack(&alb);
    want.accelerator.existing_arn = Some(stranger.arn.clone());
    fake.clear_calls();
    let err = aga::deploy(ga, &want, CLUSTER).await.unwrap_err();
    assert!(matches!(err, DeployError::NotOwned { .. }), "{err}");
    assert!(err.to_string().contains(&stranger.arn), "{err}");
    assert_eq!(write_ops(&fake), Vec::<String>::new());

    // Deleting the object leaves it alone, and says so.
    let step = aga::delete(ga, STACK, Some(stranger.arn.as_str()), CLUSTER)
        .await
        .unwrap();
    assert_eq!(step, AgaDeletion::Deleted);
    assert_eq!(write_ops(&fake), Vec::<String>::new());

    // Another cluster's stack of the same name is not ours either.
    let mut other = stack(&alb);
    other
        .accelerator
        .tags
        .insert("elbv2.k8s.aws/cluster".into(), "other".into());
    other.accelerator.crd_uid = "other".into();
    let theirs = aga::deploy(ga, &other, "other").await.unwrap();

    // Without the ARN: the stack's own accelerator, beside the others.
    want.accelerator.existing_arn = None;
    let out = aga::deploy(ga, &want, CLUSTER).await.unwrap();
    assert_ne!(out.accelerator_arn, stranger.arn);
    assert_ne!(out.accelerator_arn, theirs.accelerator_arn);
    let accs = fake.ga_accelerators();
    assert_eq!(accs.len(), 3);
    let hand = accs.iter().find(|(a, _)| a.arn == stranger.arn).unwrap();
    assert_eq!(hand.0.name, "hand-made");
    assert!(hand.0.enabled);
    assert!(fake.ga_listeners_of(&stranger.arn).is_empty());
    assert_eq!(fake.ga_listeners_of(&theirs.accelerator_arn).len(), 2);
}

/// Deletion as upstream orders it, one step per call: disable (InProgress), wait while the
/// accelerator is IN_PROGRESS (InProgress, no write), then endpoint groups, listeners and the
/// accelerator (Deleted). Another stack's accelerator stays.
#[tokio::test]
async fn deletion_disables_waits_then_deletes() {
    let (fake, alb) = setup().await;
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let want = stack(&alb);
    let out = aga::deploy(ga, &want, CLUSTER).await.unwrap();
    let mut other = stack(&alb);
    other.id = "shop/other".into();
    other
        .accelerator
        .tags
        .insert("aga.k8s.aws/stack".into(), "shop/other".into());
    other.accelerator.crd_uid = "other".into();
    let kept = aga::deploy(ga, &other, CLUSTER).await.unwrap();
    fake.finish_ga_deployments();

    fake.clear_calls();
    let step = aga::delete(ga, STACK, Some(out.accelerator_arn.as_str()), CLUSTER)
        .await
        .unwrap();
    let AgaDeletion::InProgress {
        requeue_after,
        reason,
    } = &step
    else {
        panic!("{step:?}");
    };
    assert_eq!(*requeue_after, aga::DELETION_REQUEUE_AFTER);
    assert!(reason.contains(&out.accelerator_arn), "{reason}");
    assert_eq!(ga_writes(&fake), ["UpdateAccelerator"]);
    let acc = ga.describe_accelerator(&out.accelerator_arn).await.unwrap();
    assert!(!acc.enabled);
    assert_eq!(
        fake.ga_listeners_of(&acc.arn).len(),
        2,
        "nothing deleted yet"
    );

    // Still IN_PROGRESS: wait, write nothing.
    fake.clear_calls();
    let step = aga::delete(ga, STACK, Some(out.accelerator_arn.as_str()), CLUSTER)
        .await
        .unwrap();
    assert!(matches!(step, AgaDeletion::InProgress { .. }), "{step:?}");
    assert_eq!(write_ops(&fake), Vec::<String>::new());

    // DEPLOYED: everything goes, endpoint groups before listeners before the accelerator.
    fake.finish_ga_deployments();
    fake.clear_calls();
    let step = aga::delete(ga, STACK, Some(out.accelerator_arn.as_str()), CLUSTER)
        .await
        .unwrap();
    assert_eq!(step, AgaDeletion::Deleted);
    let ops = ga_writes(&fake);
    assert_eq!(ops.len(), 5, "{ops:?}");
    assert_eq!(ops.last().map(String::as_str), Some("DeleteAccelerator"));
    let first_listener = ops.iter().position(|o| o == "DeleteListener").unwrap();
    assert_eq!(ops[first_listener - 1], "DeleteEndpointGroup");
    let accs = fake.ga_accelerators();
    assert_eq!(accs.len(), 1);
    assert_eq!(accs[0].0.arn, kept.accelerator_arn);
    assert_eq!(fake.ga_listeners_of(&kept.accelerator_arn).len(), 2);

    // Done is done.
    fake.clear_calls();
    let step = aga::delete(ga, STACK, Some(out.accelerator_arn.as_str()), CLUSTER)
        .await
        .unwrap();
    assert_eq!(step, AgaDeletion::Deleted);
    assert_eq!(write_ops(&fake), Vec::<String>::new());
}

/// Deletion without an ARN in the status finds the stack's accelerator by its tags.
#[tokio::test]
async fn deletion_finds_the_accelerator_by_tag() {
    let (fake, alb) = setup().await;
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    aga::deploy(ga, &stack(&alb), CLUSTER).await.unwrap();
    fake.finish_ga_deployments();
    let step = aga::delete(ga, STACK, None, CLUSTER).await.unwrap();
    assert!(matches!(step, AgaDeletion::InProgress { .. }), "{step:?}");
    fake.finish_ga_deployments();
    assert_eq!(
        aga::delete(ga, STACK, None, CLUSTER).await.unwrap(),
        AgaDeletion::Deleted
    );
    assert!(fake.ga_accelerators().is_empty());
}

/// Through the shadow recorder: the deploy walks its whole chain, every write is recorded,
/// none reaches AWS.
#[tokio::test]
async fn a_dry_run_records_and_sends_nothing() {
    let (fake, alb) = setup().await;
    let recorder = Recorder::new(fake.clone(), fake.clone()).with_global_accelerator(fake.clone());
    fake.clear_calls();
    let out = aga::deploy(&recorder, &stack(&alb), CLUSTER).await.unwrap();
    assert!(shadow::is_placeholder(&out.accelerator_arn));
    assert!(fake.write_calls().is_empty(), "{:?}", fake.write_calls());
    assert!(fake.ga_accelerators().is_empty());
    let calls: Vec<String> = recorder.take().into_iter().map(|w| w.call).collect();
    assert_eq!(
        calls,
        [
            "globalaccelerator:CreateAccelerator",
            "globalaccelerator:CreateListener",
            "globalaccelerator:CreateListener",
            "globalaccelerator:CreateEndpointGroup",
            "globalaccelerator:CreateEndpointGroup",
        ]
    );
}

/// A model accelerator without the tracking tags would be created and never found again: the
/// deploy refuses it before any call.
#[tokio::test]
async fn a_stack_without_tracking_tags_is_refused() {
    let (fake, alb) = setup().await;
    let ga: &dyn GlobalAccelerator = fake.as_ref();
    let mut want = stack(&alb);
    want.accelerator.tags.remove("aga.k8s.aws/stack");
    fake.clear_calls();
    let err = aga::deploy(ga, &want, CLUSTER).await.unwrap_err();
    assert!(matches!(err, DeployError::Invalid(_)), "{err}");
    assert!(
        err.to_string().contains("aga.k8s.aws/stack=shop/edge"),
        "{err}"
    );
    assert!(fake.calls().is_empty());
    // Two endpoint groups in one region on one listener: refused too.
    let mut twice = stack(&alb);
    let g = twice.listeners[1].endpoint_groups[0].clone();
    twice.listeners[1].endpoint_groups.push(EndpointGroup {
        id: "listener-1/group-1".into(),
        ..g
    });
    let err = aga::deploy(ga, &twice, CLUSTER).await.unwrap_err();
    assert!(
        err.to_string().contains("two endpoint groups in eu-west-1"),
        "{err}"
    );
    assert!(fake.calls().is_empty());
}
