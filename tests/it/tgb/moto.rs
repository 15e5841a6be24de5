//! The controller against a private moto_server through the real SDK clients (built by
//! `aws::config::build` from flags, as the binary does).

use std::sync::Arc;

use aws_load_balancer_controller::aws::{Ec2Query, ElbV2};
use kube::api::DeleteParams;
use serde_json::json;

use super::*;
use crate::support::moto::Moto;
use crate::support::moto_cloud::clients;

#[tokio::test]
async fn ip_binding_on_moto_registers_readies_scales_down_and_cleans_up() {
    let moto = Moto::start();
    let (elb, ec2) = clients(&moto, None).await;
    // moto starts with a default VPC (172.31.0.0/16).
    let vpcs = ec2.describe_vpcs(&Ec2Query::default()).await.unwrap();
    let vpc = vpcs.first().expect("moto's default VPC");
    let cidr = vpc.cidr_blocks[0].clone();
    let arn = ip_tg(elb.as_ref(), "web", &vpc.id, "ip").await;
    let elb: Arc<dyn ElbV2> = elb;

    let h = Harness::start(elb.clone(), &cidr).await;
    h.node("node-a", "i-0aaa", json!({})).await;
    h.service(
        "web",
        "ClusterIP",
        json!([{ "name": "http", "port": 80, "targetPort": 8080 }]),
    )
    .await;
    let ips = ["172.31.1.1", "172.31.1.2", "172.31.1.3"];
    for (i, ip) in ips.iter().enumerate() {
        h.pod(&format!("web-{i}"), ip, "node-a", Some("web")).await;
    }
    let eps: Vec<(String, &str, bool)> = ips
        .iter()
        .enumerate()
        .map(|(i, ip)| (format!("web-{i}"), *ip, false))
        .collect();
    let eps_ref: Vec<(&str, &str, bool)> =
        eps.iter().map(|(p, ip, r)| (p.as_str(), *ip, *r)).collect();
    h.endpoints("web", "http", 8080, &eps_ref).await;
    h.binding("web", "web", "http", &arn, "ip").await;

    let all: Vec<String> = ips.iter().map(|ip| format!("{ip}:8080")).collect();
    eventually("all pods registered in moto", WAIT, || async {
        targets(elb.as_ref(), &arn).await == all
    })
    .await;
    // moto reports registered targets healthy: every gate turns True.
    for i in 0..ips.len() {
        let pod = format!("web-{i}");
        eventually("gate True", WAIT, || async {
            h.gate(&pod, "web")
                .await
                .is_some_and(|(s, _, _)| s == "True")
        })
        .await;
    }

    // Scale down to one pod.
    h.endpoints("web", "http", 8080, &eps_ref[..1]).await;
    eventually("scaled down", WAIT, || async {
        targets(elb.as_ref(), &arn).await == vec!["172.31.1.1:8080".to_string()]
    })
    .await;

    h.bindings()
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    eventually("binding gone", WAIT, || async {
        h.bindings().get_opt("web").await.unwrap().is_none()
    })
    .await;
    assert!(targets(elb.as_ref(), &arn).await.is_empty());
    h.stop().await;
    drop(moto);
}
