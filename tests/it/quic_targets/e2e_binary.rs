//! The real binary on the API test server and moto, with `--quic-environment-variable-name`
//! set: a QUIC binding registers the pod whose id is in that variable (its `QuicServerId` read
//! from moto's request log), and warns about a pod whose id is only in the default variable.

use aws_load_balancer_controller::aws::Ec2Query;
use aws_load_balancer_controller::controller::tgb::quic::{DEFAULT_ENV_NAME, REASON_MISSING};
use aws_load_balancer_controller::crd::TargetGroupBinding;
use k8s_openapi::api::core::v1::{Namespace, Service};
use kube::api::{Api, PostParams};
use serde_json::json;

use super::*;
use crate::ingress::events_of;
use crate::support::e2e::Cluster;
use crate::support::moto_cloud::{clients, endpoints_flag};
use crate::tgb::{eventually, ip_tg, targets, WAIT};

const NS: &str = "shop";
const ENV: &str = "MY_QUIC_ID";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_reads_server_ids_from_the_configured_variable() {
    let moto = Moto::start();
    let endpoints = endpoints_flag(&moto);
    let (elb, ec2) = clients(&moto, None).await;
    let vpc = ec2.describe_vpcs(&Ec2Query::default()).await.unwrap()[0].clone();
    let arn = ip_tg(elb.as_ref(), "quic", &vpc.id, "ip").await;

    let k8s = Cluster::start().await;
    let client = k8s.client.clone();
    let ctl = k8s.controller(&[
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", vpc.id),
        format!("--aws-api-endpoints={endpoints}"),
        format!("--quic-environment-variable-name={ENV}"),
    ]);
    ctl.wait_for_log("AWS clients ready", WAIT);

    let ns: Namespace = serde_json::from_value(json!({ "metadata": { "name": NS } })).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let svc: Service = serde_json::from_value(json!({
        "metadata": { "name": "web", "namespace": NS },
        "spec": { "selector": { "app": "web" },
                  "ports": [{ "name": "h3", "port": 443, "targetPort": 8443, "protocol": "UDP" }] }
    }))
    .unwrap();
    Api::<Service>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &svc)
        .await
        .unwrap();
    let (ip1, ip2) = ("172.31.8.1", "172.31.8.2");
    let id1 = quic_pod(&client, NS, "web-1", ip1, Some(ENV))
        .await
        .unwrap();
    // Its id is in the default variable, which this controller was told not to read.
    quic_pod(&client, NS, "web-2", ip2, Some(DEFAULT_ENV_NAME))
        .await
        .unwrap();
    slice(&client, NS, &[("web-1", ip1), ("web-2", ip2)]).await;

    moto.start_recording().await;
    let tgb: TargetGroupBinding = serde_json::from_value(json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
        "metadata": { "name": "web", "namespace": NS },
        "spec": {
            "targetGroupARN": arn, "targetType": "ip", "targetGroupProtocol": "QUIC",
            "ipAddressType": "ipv4", "serviceRef": { "name": "web", "port": 443 }
        }
    }))
    .unwrap();
    Api::<TargetGroupBinding>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &tgb)
        .await
        .unwrap();

    eventually("web-1 registered in moto", WAIT, || async {
        targets(elb.as_ref(), &arn).await == vec![format!("{ip1}:8443")]
    })
    .await;
    assert_eq!(
        sent_targets(&moto, "RegisterTargets"),
        vec![(ip1.to_string(), "8443".to_string(), Some(id1))]
    );
    let named = format!("pod web-2 ({ip2}:8443)");
    eventually(
        "a Warning names the pod without an id in MY_QUIC_ID",
        WAIT,
        || async {
            events_of(&client, NS, "web")
                .await
                .iter()
                .any(|(t, reason, note)| {
                    t == "Warning"
                        && reason == REASON_MISSING
                        && note.contains(&named)
                        && note.contains(ENV)
                })
        },
    )
    .await;
    assert_eq!(
        targets(elb.as_ref(), &arn).await,
        vec![format!("{ip1}:8443")]
    );

    k8s.assert_requests_allowed_by_chart(&["patch targetgroupbindings.elbv2.k8s.aws shop/web"]);
    drop(ctl);
    k8s.server.stop().await;
}
