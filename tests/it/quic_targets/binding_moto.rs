//! A QUIC binding on moto through the real SDK clients. The controller decides from the
//! binding's `targetGroupProtocol` (as upstream), not from the group's protocol, so the group
//! is an ordinary one (a QUIC group through the Service controller: `service_moto`), the
//! binding says QUIC, and the ids are read from the requests moto recorded.

use std::sync::Arc;

use aws_load_balancer_controller::aws::{Ec2Query, ElbV2};
use aws_load_balancer_controller::controller::tgb::quic::{DEFAULT_ENV_NAME, REASON_MISSING};
use aws_load_balancer_controller::crd::TargetGroupBinding;
use kube::api::{DeleteParams, PostParams};
use serde_json::json;

use super::*;
use crate::ingress::events_of;
use crate::support::moto_cloud::clients;
use crate::tgb::{eventually, ip_tg, targets, Harness, NS, WAIT};

#[tokio::test]
async fn a_quic_binding_sends_server_ids_on_register_and_deregister() {
    let moto = Moto::start();
    let (elb, ec2) = clients(&moto, None).await;
    let vpcs = ec2.describe_vpcs(&Ec2Query::default()).await.unwrap();
    let vpc = vpcs.first().expect("moto's default VPC");
    let cidr = vpc.cidr_blocks[0].clone();
    let arn = ip_tg(elb.as_ref(), "quic", &vpc.id, "ip").await;
    let elb: Arc<dyn ElbV2> = elb;

    let h = Harness::start(elb.clone(), &cidr).await;
    h.service(
        "web",
        "ClusterIP",
        json!([{ "name": "h3", "port": 443, "targetPort": 8443, "protocol": "UDP" }]),
    )
    .await;
    let (ip1, ip2, ip3) = ("172.31.9.1", "172.31.9.2", "172.31.9.3");
    let id1 = quic_pod(&h.client, NS, "web-1", ip1, Some(DEFAULT_ENV_NAME))
        .await
        .unwrap();
    let id2 = quic_pod(&h.client, NS, "web-2", ip2, Some(DEFAULT_ENV_NAME))
        .await
        .unwrap();
    assert_eq!(quic_pod(&h.client, NS, "web-3", ip3, None).await, None);
    slice(
        &h.client,
        NS,
        &[("web-1", ip1), ("web-2", ip2), ("web-3", ip3)],
    )
    .await;

    moto.start_recording().await;
    let tgb: TargetGroupBinding = serde_json::from_value(json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
        "metadata": { "name": "web", "namespace": NS },
        "spec": {
            "targetGroupARN": arn, "targetType": "ip", "targetGroupProtocol": "QUIC",
            "serviceRef": { "name": "web", "port": 443 }
        }
    }))
    .unwrap();
    h.bindings()
        .create(&PostParams::default(), &tgb)
        .await
        .unwrap();

    let both = vec![format!("{ip1}:8443"), format!("{ip2}:8443")];
    eventually("the pods with ids registered in moto", WAIT, || async {
        targets(elb.as_ref(), &arn).await == both
    })
    .await;
    let named = format!("pod web-3 ({ip3}:8443)");
    eventually(
        "a Warning names the pod without a server id",
        WAIT,
        || async {
            events_of(&h.client, NS, "web")
                .await
                .iter()
                .any(|(t, reason, note)| {
                    t == "Warning" && reason == REASON_MISSING && note.contains(&named)
                })
        },
    )
    .await;
    let sent = |ip: &str, id: &str| (ip.to_string(), "8443".to_string(), Some(id.to_string()));
    let mut registered = sent_targets(&moto, "RegisterTargets");
    registered.sort();
    assert_eq!(
        registered,
        vec![sent(ip1, id1.as_str()), sent(ip2, id2.as_str())],
        "each pod registered once, with its server id; web-3 never"
    );

    // web-2 leaves: deregistered with its id, and nothing else moves.
    slice(&h.client, NS, &[("web-1", ip1), ("web-3", ip3)]).await;
    eventually("web-2 deregistered", WAIT, || async {
        targets(elb.as_ref(), &arn).await == both[..1]
    })
    .await;
    assert_eq!(
        sent_targets(&moto, "DeregisterTargets"),
        vec![sent(ip2, id2.as_str())]
    );
    assert_eq!(sent_targets(&moto, "RegisterTargets").len(), 2);

    // The binding goes: its last target leaves with its id too.
    h.bindings()
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    eventually("binding gone", WAIT, || async {
        h.bindings().get_opt("web").await.unwrap().is_none()
    })
    .await;
    assert_eq!(
        sent_targets(&moto, "DeregisterTargets"),
        vec![sent(ip2, id2.as_str()), sent(ip1, id1.as_str())]
    );
    assert!(targets(elb.as_ref(), &arn).await.is_empty());
    h.stop().await;
    drop(moto);
}
