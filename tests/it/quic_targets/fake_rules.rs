//! The fake holds AWS's QUIC server-id rules (moto does not): an id on every target of a
//! QUIC or TCP_QUIC group and on no other, in AWS's form, fixed while registered, needed to
//! deregister; stored per target and listed by DescribeTargetHealth.

use std::collections::BTreeMap;

use aws_load_balancer_controller::aws::fake::spec;
use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::{ElbV2, TargetDescription, TargetHealthState};
use aws_load_balancer_controller::model::{Protocol, TargetType};

const A: &str = "0x0123456789abcdef";
const B: &str = "0xfedcba9876543210";

fn target(ip: &str, id: Option<&str>) -> TargetDescription {
    TargetDescription {
        quic_server_id: id.map(Into::into),
        ..TargetDescription::new(ip, 8443)
    }
}

async fn group(fake: &FakeAws, vpc: &str, name: &str, protocol: &str) -> String {
    let protocol: Protocol = serde_json::from_value(serde_json::json!(protocol)).unwrap();
    let tg = spec::target_group(name, TargetType::Ip, protocol, 8443);
    fake.create_target_group((&tg).into(), vpc)
        .await
        .unwrap()
        .arn
}

async fn listed(fake: &FakeAws, arn: &str) -> Vec<(String, Option<String>, TargetHealthState)> {
    fake.describe_target_health(arn, &[])
        .await
        .unwrap()
        .into_iter()
        .map(|t| (t.target.id, t.target.quic_server_id, t.health.state))
        .collect()
}

#[tokio::test]
async fn quic_groups_take_targets_only_with_their_server_id() {
    let fake = FakeAws::new();
    let vpc = fake.add_vpc("10.0.0.0/16", BTreeMap::new());
    let quic = group(&fake, &vpc, "quic", "QUIC").await;
    let tcp_quic = group(&fake, &vpc, "tcp-quic", "TCP_QUIC").await;
    let udp = group(&fake, &vpc, "udp", "UDP").await;

    // A target without an id is refused, and the whole call with it.
    for arn in [&quic, &tcp_quic] {
        let err = fake
            .register_targets(
                arn,
                &[target("10.0.0.1", Some(A)), target("10.0.0.2", None)],
            )
            .await
            .unwrap_err();
        assert_eq!(err.code(), "ValidationError", "{err}");
        assert!(listed(&fake, arn).await.is_empty(), "{err}");
    }
    // An id where none belongs, or not `0x` and 16 lowercase hex digits: refused.
    for (arn, id) in [
        (&udp, A),
        (&quic, "0x0123456789ABCDEF"),
        (&quic, "0x0123"),
        (&quic, "0123456789abcdef"),
    ] {
        let err = fake
            .register_targets(arn, &[target("10.0.0.1", Some(id))])
            .await
            .unwrap_err();
        assert_eq!(err.code(), "ValidationError", "{id}: {err}");
    }
    fake.register_targets(&udp, &[target("10.0.0.1", None)])
        .await
        .unwrap();

    // Stored with the target and listed with it; registering it again with the same id is a
    // no-op, with another refused.
    fake.register_targets(&quic, &[target("10.0.0.1", Some(A))])
        .await
        .unwrap();
    fake.register_targets(&quic, &[target("10.0.0.1", Some(A))])
        .await
        .unwrap();
    let unused = TargetHealthState::Unused;
    assert_eq!(
        listed(&fake, &quic).await,
        vec![("10.0.0.1".to_string(), Some(A.to_string()), unused)]
    );
    let err = fake
        .register_targets(&quic, &[target("10.0.0.1", Some(B))])
        .await
        .unwrap_err();
    assert_eq!(err.code(), "ValidationError", "{err}");

    // Deregistration needs the id it was registered with.
    for id in [None, Some(B)] {
        let err = fake
            .deregister_targets(&quic, &[target("10.0.0.1", id)])
            .await
            .unwrap_err();
        assert_eq!(err.code(), "ValidationError", "{id:?}: {err}");
    }
    fake.deregister_targets(&quic, &[target("10.0.0.1", Some(A))])
        .await
        .unwrap();
    assert!(listed(&fake, &quic).await.is_empty());

    // A draining target may come back with a new id.
    fake.set_deregistration_draining(true);
    fake.register_targets(&quic, &[target("10.0.0.1", Some(A))])
        .await
        .unwrap();
    fake.deregister_targets(&quic, &[target("10.0.0.1", Some(A))])
        .await
        .unwrap();
    assert_eq!(
        listed(&fake, &quic).await,
        vec![(
            "10.0.0.1".to_string(),
            Some(A.to_string()),
            TargetHealthState::Draining
        )]
    );
    fake.register_targets(&quic, &[target("10.0.0.1", Some(B))])
        .await
        .unwrap();
    assert_eq!(
        listed(&fake, &quic).await,
        vec![("10.0.0.1".to_string(), Some(B.to_string()), unused)]
    );
}
