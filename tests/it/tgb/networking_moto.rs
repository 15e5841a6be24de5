//! Security-group rules from `spec.networking` against a private moto_server through the real
//! SDK clients: the pod IP's ENI is found VPC-wide, the rule lands on its group with our
//! label, and goes when the binding goes.

use aws_load_balancer_controller::aws::Ec2Query;
use kube::api::DeleteParams;
use serde_json::json;

use super::networking::{binding_with_networking, from_group, rule, rules, sg, LABEL};
use super::*;
use crate::support::moto::Moto;
use crate::support::moto_cloud::{clients, raw_ec2};

#[tokio::test]
async fn rule_authorized_and_revoked_on_moto() {
    let moto = Moto::start();
    let (elb, ec2) = clients(&moto, None).await;
    let vpc = ec2.describe_vpcs(&Ec2Query::default()).await.unwrap()[0].clone();
    let subnet = ec2
        .describe_subnets(&Ec2Query::default().filter("vpc-id", [vpc.id.as_str()]))
        .await
        .unwrap()[0]
        .clone();
    let net: ipnet::Ipv4Net = subnet.cidr_block.parse().unwrap();
    let pod_ip = net.hosts().nth(40).unwrap().to_string();
    let lb = sg(ec2.as_ref(), &vpc.id, "lb", &[]).await;
    let node = sg(
        ec2.as_ref(),
        &vpc.id,
        "node",
        &[("kubernetes.io/cluster/c1", "owned")],
    )
    .await;
    let extra = sg(ec2.as_ref(), &vpc.id, "extra", &[]).await;
    // A raw EC2 client, for what the controller's trait cannot create (an ENI).
    raw_ec2(&moto.endpoint)
        .create_network_interface()
        .subnet_id(&subnet.id)
        .private_ip_address(&pod_ip)
        .groups(&extra)
        .groups(&node)
        .send()
        .await
        .unwrap();
    let arn = ip_tg(elb.as_ref(), "web", &vpc.id, "ip").await;

    let vpc_id = vpc.id.clone();
    let h = Harness::start_with(elb.clone(), ec2.clone(), &vpc.cidr_blocks[0], |c| {
        c.cluster_name = "c1".into();
        c.vpc_id = vpc_id;
    })
    .await;
    h.node("node-a", "i-0aaa", json!({})).await;
    h.service(
        "web",
        "ClusterIP",
        json!([{ "name": "http", "port": 80, "targetPort": 8080 }]),
    )
    .await;
    h.pod("web-1", &pod_ip, "node-a", None).await;
    h.endpoints("web", "http", 8080, &[("web-1", &pod_ip, true)])
        .await;
    binding_with_networking(&h, "web", "web", &arn, "ip", from_group(&lb, 8080)).await;

    let want = vec![rule(8080, &lb, LABEL)];
    eventually(
        "rule on the pod ENI's cluster group in moto",
        WAIT,
        || async { rules(ec2.as_ref(), &node).await == want },
    )
    .await;
    assert!(rules(ec2.as_ref(), &extra).await.is_empty());
    // Rules are reconciled before targets in the same pass: the registration may trail a moment.
    let want_targets = vec![format!("{pod_ip}:8080")];
    eventually("pod registered", WAIT, || async {
        targets(elb.as_ref(), &arn).await == want_targets
    })
    .await;

    h.bindings()
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    eventually("rule revoked with the binding", WAIT, || async {
        rules(ec2.as_ref(), &node).await.is_empty()
    })
    .await;
    h.stop().await;
    drop(moto);
}
