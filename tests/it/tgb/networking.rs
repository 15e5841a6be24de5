//! Security-group rules from `spec.networking`, end to end: the controller against the API
//! server with the in-memory fake (and moto) for ELBv2 and EC2.

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::{
    CreateSecurityGroup, Ec2, Ec2Query, IpPermission, IpRange, Service,
};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use super::*;

pub const LABEL: &str = "elbv2.k8s.aws/targetGroupBinding=shared";

pub async fn sg(ec2: &dyn Ec2, vpc: &str, name: &str, tags: &[(&str, &str)]) -> String {
    let req = CreateSecurityGroup {
        name: name.into(),
        description: name.into(),
        vpc_id: vpc.into(),
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    ec2.create_security_group(&req).await.unwrap()
}

/// `proto from-to peer [description]` of every source of the group's ingress, sorted.
pub async fn rules(ec2: &dyn Ec2, id: &str) -> Vec<String> {
    let g = ec2
        .describe_security_groups(&Ec2Query::ids([id]))
        .await
        .unwrap();
    let mut out = Vec::new();
    for p in &g[0].ingress {
        for r in p.group_ids.iter().chain(&p.ipv4_ranges) {
            out.push(format!(
                "{} {}-{} {} [{}]",
                p.ip_protocol,
                p.from_port.unwrap_or(-1),
                p.to_port.unwrap_or(-1),
                r.value,
                r.description.clone().unwrap_or_default()
            ));
        }
    }
    out.sort();
    out
}

pub fn rule(from: i32, peer: &str, desc: &str) -> String {
    format!("tcp {from}-{from} {peer} [{desc}]")
}

pub async fn binding_with_networking(
    h: &Harness,
    name: &str,
    svc: &str,
    arn: &str,
    target_type: &str,
    networking: serde_json::Value,
) {
    let tgb = TargetGroupBinding::test(NS, name)
        .arn(arn)
        .target_type(target_type)
        .service_ref(svc, 80)
        .set(&["spec", "networking"], networking)
        .build();
    h.bindings()
        .create(&PostParams::default(), &tgb)
        .await
        .unwrap();
}

pub fn from_group(group: &str, port: i32) -> serde_json::Value {
    json!({ "ingress": [{
        "from": [{ "securityGroup": { "groupID": group } }],
        "ports": [{ "protocol": "TCP", "port": port }]
    }]})
}

async fn events(h: &Harness, reason: &str) -> Vec<String> {
    let api: Api<Event> = Api::namespaced(h.client.clone(), NS);
    api.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some(reason))
        .map(|e| e.note.unwrap_or_default())
        .collect()
}

fn ec2_writes(fake: &FakeAws) -> Vec<String> {
    fake.write_calls()
        .into_iter()
        .filter(|(s, _)| *s == Service::Ec2)
        .map(|(_, op)| op)
        .collect()
}

/// Two Services with one pod each, both pods' IPs on ENIs carrying the node group (and an
/// untagged extra group, so the cluster tag decides).
async fn cluster(fake: &Arc<FakeAws>) -> (String, String, String, String) {
    let vpc = fake.add_vpc("10.0.0.0/16", BTreeMap::new());
    let subnet = fake
        .add_subnet(&vpc, "10.0.1.0/24", "us-west-2a", BTreeMap::new())
        .unwrap();
    let ec2: &dyn Ec2 = fake.as_ref();
    let lb = sg(ec2, &vpc, "lb", &[]).await;
    let lb2 = sg(ec2, &vpc, "lb2", &[]).await;
    let node = sg(ec2, &vpc, "node", &[("kubernetes.io/cluster/c1", "owned")]).await;
    let extra = sg(ec2, &vpc, "extra", &[]).await;
    for ip in ["10.0.1.20", "10.0.1.21"] {
        fake.add_instance(&subnet, ip, &[extra.clone(), node.clone()])
            .unwrap();
    }
    (vpc, lb, lb2, node)
}

/// The controller on cluster `c1`, and Services `web` (pod 10.0.1.20:8080) and `api` (pod
/// 10.0.1.21:9090) on node-a, each with its endpoints.
async fn two_services(fake: &Arc<FakeAws>, vpc: &str) -> Harness {
    let v = vpc.to_string();
    let h = Harness::start_with(fake.clone(), fake.clone(), "10.0.0.0/16", |c| {
        c.cluster_name = "c1".into();
        c.vpc_id = v;
    })
    .await;
    h.node("node-a", "i-0aaa", json!({})).await;
    for (svc, ip, port) in [("web", "10.0.1.20", 8080), ("api", "10.0.1.21", 9090)] {
        h.service(
            svc,
            "ClusterIP",
            json!([{ "name": "http", "port": 80, "targetPort": port }]),
        )
        .await;
        h.pod(&format!("{svc}-1"), ip, "node-a", None).await;
        h.endpoints(svc, "http", port, &[(&format!("{svc}-1"), ip, true)])
            .await;
    }
    h
}

#[tokio::test]
async fn rules_follow_bindings_on_the_shared_node_group() {
    let fake = Arc::new(FakeAws::new());
    let (vpc, lb, lb2, node) = cluster(&fake).await;
    let ec2: &dyn Ec2 = fake.as_ref();
    // Somebody else's rule: never touched.
    let ssh = IpPermission {
        ip_protocol: "tcp".into(),
        from_port: Some(22),
        to_port: Some(22),
        group_ids: vec![IpRange {
            value: lb.clone(),
            description: Some("ssh from bastion".into()),
        }],
        ..Default::default()
    };
    ec2.authorize_ingress(&node, &[ssh]).await.unwrap();
    let web_arn = ip_tg(fake.as_ref(), "web", &vpc, "ip").await;
    let api_arn = ip_tg(fake.as_ref(), "api", &vpc, "ip").await;
    let h = two_services(&fake, &vpc).await;

    binding_with_networking(&h, "web", "web", &web_arn, "ip", from_group(&lb, 8080)).await;
    let ssh_rule = rule(22, &lb, "ssh from bastion");
    let web_rule = rule(8080, &lb, LABEL);
    let want = vec![ssh_rule.clone(), web_rule.clone()];
    eventually("web rule authorized on the node group", WAIT, || async {
        rules(ec2, &node).await == want
    })
    .await;
    // Rules are reconciled before targets in the same pass: the registration may trail a moment.
    eventually("web pod registered", WAIT, || async {
        targets(fake.as_ref(), &web_arn).await == vec!["10.0.1.20:8080"]
    })
    .await;

    binding_with_networking(&h, "api", "api", &api_arn, "ip", from_group(&lb2, 9090)).await;
    let api_rule = rule(9090, &lb2, LABEL);
    let mut want = vec![ssh_rule.clone(), web_rule.clone(), api_rule.clone()];
    want.sort();
    eventually("both bindings' rules on the shared group", WAIT, || async {
        rules(ec2, &node).await == want
    })
    .await;

    h.bindings()
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    let mut want = vec![ssh_rule.clone(), api_rule.clone()];
    want.sort();
    eventually(
        "web's rule revoked, api's and the foreign one kept",
        WAIT,
        || async { rules(ec2, &node).await == want },
    )
    .await;
    eventually("web binding gone", WAIT, || async {
        h.bindings().get_opt("web").await.unwrap().is_none()
    })
    .await;

    // Reconcile api again (any change of the binding triggers one): nothing to write.
    fake.clear_calls();
    let touch = json!({ "metadata": { "annotations": { "touched": "1" } } });
    h.bindings()
        .patch("api", &PatchParams::default(), &Patch::Merge(&touch))
        .await
        .unwrap();
    eventually("api reconciled again", WAIT, || async {
        fake.count("DescribeTargetHealth") > 0
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(ec2_writes(&fake), Vec::<String>::new());
    assert_eq!(rules(ec2, &node).await, want);
    assert!(events(&h, "FailedNetworkReconcile").await.is_empty());
    h.stop().await;
}

#[tokio::test]
async fn a_networking_failure_is_reported_and_targets_still_register() {
    let fake = Arc::new(FakeAws::new());
    let (vpc, lb, _, _) = cluster(&fake).await;
    let arn = ip_tg(fake.as_ref(), "nodes", &vpc, "instance").await;
    fake.clear_calls();
    let h = Harness::start_with(fake.clone(), fake.clone(), "10.0.0.0/16", |c| {
        c.cluster_name = "c1".into();
    })
    .await;
    let instance = fake.describe_instances(&Ec2Query::default()).await.unwrap()[0]
        .id
        .clone();
    h.node("node-a", &instance, json!({})).await;
    h.service(
        "web",
        "NodePort",
        json!([{ "name": "http", "port": 80, "targetPort": 8080, "nodePort": 30080 }]),
    )
    .await;
    // Named ports need pods; instance targets have none.
    let named = json!({ "ingress": [{
        "from": [{ "securityGroup": { "groupID": lb } }],
        "ports": [{ "port": "http" }]
    }]});
    binding_with_networking(&h, "nodes", "web", &arn, "instance", named).await;
    eventually("targets registered regardless", WAIT, || async {
        targets(fake.as_ref(), &arn).await == vec![format!("{instance}:30080")]
    })
    .await;
    eventually("FailedNetworkReconcile event", WAIT, || async {
        events(&h, "FailedNetworkReconcile")
            .await
            .iter()
            .any(|m| m == "named ports can only be used with pod endpoints")
    })
    .await;
    assert_eq!(ec2_writes(&fake), Vec::<String>::new());
    h.stop().await;
}

/// A binding that stops decoding (a `targetType` these types do not know, as a newer CRD kept
/// across a switch may carry) is present, not gone: its shared rule stays through reconciles of
/// the others and a relist, and nothing is revoked while it does not decode. Once it decodes
/// again, revocation resumes.
#[tokio::test]
async fn a_binding_with_an_unknown_value_keeps_its_rules() {
    let fake = Arc::new(FakeAws::new());
    let (vpc, lb, lb2, node) = cluster(&fake).await;
    let ec2: &dyn Ec2 = fake.as_ref();
    let web_arn = ip_tg(fake.as_ref(), "web", &vpc, "ip").await;
    let api_arn = ip_tg(fake.as_ref(), "api", &vpc, "ip").await;
    let h = two_services(&fake, &vpc).await;
    binding_with_networking(&h, "web", "web", &web_arn, "ip", from_group(&lb, 8080)).await;
    binding_with_networking(&h, "api", "api", &api_arn, "ip", from_group(&lb2, 9090)).await;
    let (web_rule, api_rule) = (rule(8080, &lb, LABEL), rule(9090, &lb2, LABEL));
    let mut both = vec![web_rule.clone(), api_rule.clone()];
    both.sort();
    eventually("both rules authorized", WAIT, || async {
        rules(ec2, &node).await == both
    })
    .await;

    // web now carries a value from a newer CRD.
    let untyped: Api<kube::api::DynamicObject> = Api::namespaced_with(
        h.client.clone(),
        NS,
        &kube::api::ApiResource::erase::<TargetGroupBinding>(&()),
    );
    let newer = json!({"spec": {"targetType": "a-type-from-a-newer-crd"}});
    untyped
        .patch("web", &PatchParams::default(), &Patch::Merge(&newer))
        .await
        .unwrap();
    // Not silent: the binding says what is reconciled instead of what it asks for.
    eventually("a Warning on web naming the value", WAIT, || async {
        events(&h, "UnsupportedValue").await.iter().any(|n| {
            n.starts_with(aws_load_balancer_controller::controller::tgb::UNDECODABLE)
                && n.contains("a-type-from-a-newer-crd")
        })
    })
    .await;
    // api is reconciled (a change of it), then everything is listed again.
    fake.clear_calls();
    let touch = json!({ "metadata": { "annotations": { "touched": "1" } } });
    h.bindings()
        .patch("api", &PatchParams::default(), &Patch::Merge(&touch))
        .await
        .unwrap();
    eventually("api reconciled again", WAIT, || async {
        fake.count("DescribeTargetHealth") > 0
    })
    .await;
    h.server.force_compaction();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(rules(ec2, &node).await, both, "web's rule kept");
    assert_eq!(fake.count("RevokeSecurityGroupIngress"), 0);
    assert_eq!(
        targets(fake.as_ref(), &web_arn).await,
        vec!["10.0.1.20:8080"],
        "web's target kept"
    );

    // While web does not decode, api's deletion revokes nothing either (authorize only)...
    h.bindings()
        .delete("api", &DeleteParams::default())
        .await
        .unwrap();
    eventually("api binding gone", WAIT, || async {
        h.bindings().get_opt("api").await.unwrap().is_none()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rules(ec2, &node).await, both);
    // ...and once web decodes again, the rule nobody wants any more goes.
    let fixed = json!({"spec": {"targetType": "ip"}});
    untyped
        .patch("web", &PatchParams::default(), &Patch::Merge(&fixed))
        .await
        .unwrap();
    eventually("api's rule revoked, web's kept", WAIT, || async {
        rules(ec2, &node).await == vec![web_rule.clone()]
    })
    .await;
    h.stop().await;
}
