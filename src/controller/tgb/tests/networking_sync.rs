//! Unit tests of the stateful networking part against the in-memory fake: the shared
//! registry (authorize first, revoke once all bindings are computed), ENI resolution for pods
//! and nodes, and the caches that keep repeated reconciles off EC2.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::json;

use super::networking::{group, net, perm, tags};
use crate::aws::fake::FakeAws;
use crate::aws::{CreateSecurityGroup, Ec2, Ec2Query, Tags};
use crate::controller::tgb::eni::PodTarget;
use crate::controller::tgb::networking::*;
use crate::controller::tgb::sg_rules::{NetConfig, Networking};
use crate::crd::target_group_binding::TargetGroupBindingNetworking;

async fn sg(fake: &FakeAws, vpc: &str, name: &str, tags: Tags) -> String {
    let req = CreateSecurityGroup {
        name: name.into(),
        description: name.into(),
        vpc_id: vpc.into(),
        tags,
    };
    fake.create_security_group(&req).await.unwrap()
}

fn pod_target(key: &str, ip: &str) -> (PodTarget, Vec<(String, i32)>) {
    let t = PodTarget {
        key: key.into(),
        uid: key.into(),
        ip: ip.into(),
        branch_eni: None,
    };
    (t, vec![("http".into(), 8080)])
}

/// A VPC with a load balancer group and a node (10.0.1.10) whose primary group carries the
/// cluster tag, plus `extra` further groups on the node; the networking manager of cluster `c1`
/// in restricted mode (upstream's default).
struct Vpc {
    fake: Arc<FakeAws>,
    vpc: String,
    lb: String,
    node: String,
}

async fn vpc_with_node(extra: &[&str]) -> Vpc {
    let fake = Arc::new(FakeAws::new());
    let vpc = fake.add_vpc("10.0.0.0/16", BTreeMap::new());
    let subnet = fake
        .add_subnet(&vpc, "10.0.1.0/24", "us-west-2a", BTreeMap::new())
        .unwrap();
    let lb = sg(&fake, &vpc, "lb", BTreeMap::new()).await;
    let node = sg(
        &fake,
        &vpc,
        "node",
        tags(&[("kubernetes.io/cluster/c1", "owned")]),
    )
    .await;
    let mut groups = vec![node.clone()];
    for name in extra {
        groups.push(sg(&fake, &vpc, name, BTreeMap::new()).await);
    }
    fake.add_instance(&subnet, "10.0.1.10", &groups).unwrap();
    Vpc {
        fake,
        vpc,
        lb,
        node,
    }
}

impl Vpc {
    fn networking(&self) -> Networking {
        let cfg = NetConfig {
            cluster_name: "c1".into(),
            vpc_id: self.vpc.clone(),
            restricted: true,
            ..Default::default()
        };
        Networking::new(self.fake.clone(), cfg)
    }
}

#[tokio::test]
async fn registry_authorizes_first_revokes_only_when_all_computed_and_caches_lookups() {
    let v = vpc_with_node(&["extra"]).await;
    let net = v.networking();
    let (fake, lb, node) = (v.fake.clone(), v.lb.clone(), v.node.clone());
    let n = net_from(&lb, json!("http"));
    let pods = [pod_target("default/a", "10.0.1.10")];
    let wanted = net.for_pods(&n, &pods).await.unwrap();
    assert_eq!(wanted.keys().collect::<Vec<_>>(), vec![&node]);
    let both: BTreeSet<String> = ["default/a".to_string(), "default/b".to_string()].into();
    // Stale rule of ours from before the "restart".
    let stale = perm("tcp", 7070, 7070, group(&lb)).to_ip_permission(Some(rule_description()));
    fake.authorize_ingress(&node, &[stale]).await.unwrap();

    net.reconcile("default/a", wanted.clone(), &both)
        .await
        .unwrap();
    let rules = |fake: Arc<FakeAws>, id: String| async move {
        let g = fake
            .describe_security_groups(&Ec2Query::ids([id]))
            .await
            .unwrap();
        let mut v: Vec<Perm> = explode(&g[0].ingress).into_iter().map(|(p, _)| p).collect();
        v.sort();
        v
    };
    let r = rules(fake.clone(), node.clone()).await;
    assert_eq!(
        r,
        vec![
            perm("tcp", 7070, 7070, group(&lb)),
            perm("tcp", 8080, 8080, group(&lb))
        ],
        "authorize only while default/b has not been computed"
    );
    net.reconcile("default/b", BTreeMap::new(), &both)
        .await
        .unwrap();
    let r = rules(fake.clone(), node.clone()).await;
    assert_eq!(
        r,
        vec![perm("tcp", 8080, 8080, group(&lb))],
        "stale rule revoked once all computed"
    );

    fake.clear_calls();
    let again = net.for_pods(&n, &pods).await.unwrap();
    net.reconcile("default/a", again, &both).await.unwrap();
    assert!(
        fake.calls().is_empty(),
        "cached ENI and group: no EC2 call, got {:?}",
        fake.calls()
    );
}

fn net_from(lb: &str, port: serde_json::Value) -> TargetGroupBindingNetworking {
    net(
        json!({ "ingress": [{ "from": [{ "securityGroup": { "groupID": lb } }], "ports": [{ "port": port }] }] }),
    )
}

#[tokio::test]
async fn a_restart_writes_nothing_where_the_merged_range_already_stands() {
    // Restricted mode merges a source group's ports into one range: before the restart two
    // bindings made tcp 8080-9090 from the load balancer's group. After it, the first binding
    // alone makes 8080-8080, which that rule already allows.
    let v = vpc_with_node(&[]).await;
    let (fake, lb, node) = (v.fake.clone(), v.lb.clone(), v.node.clone());
    let merged = perm("tcp", 8080, 9090, group(&lb)).to_ip_permission(Some(rule_description()));
    fake.authorize_ingress(&node, &[merged]).await.unwrap();
    let net = v.networking();
    let pods = [pod_target("default/p", "10.0.1.10")];
    let a = net
        .for_pods(&net_from(&lb, json!(8080)), &pods)
        .await
        .unwrap();
    let b = net
        .for_pods(&net_from(&lb, json!(9090)), &pods)
        .await
        .unwrap();
    let both: BTreeSet<String> = ["default/a".to_string(), "default/b".to_string()].into();
    fake.clear_calls();

    net.reconcile("default/a", a, &both).await.unwrap();
    net.reconcile("default/b", b, &both).await.unwrap();
    let writes: Vec<_> = fake
        .calls()
        .into_iter()
        .filter(|(_, op)| op.contains("Authorize") || op.contains("Revoke"))
        .collect();
    assert!(writes.is_empty(), "no rule written, got {writes:?}");

    // A range the standing rule does not hold is still authorized while only authorizing.
    let net = v.networking();
    let c = net
        .for_pods(&net_from(&lb, json!(7070)), &pods)
        .await
        .unwrap();
    let c_and_d: BTreeSet<String> = ["default/c".to_string(), "default/d".to_string()].into();
    net.reconcile("default/c", c, &c_and_d).await.unwrap();
    let g = fake
        .describe_security_groups(&Ec2Query::ids([node.clone()]))
        .await
        .unwrap();
    let mut have: Vec<Perm> = explode(&g[0].ingress).into_iter().map(|(p, _)| p).collect();
    have.sort();
    assert_eq!(
        have,
        vec![
            perm("tcp", 7070, 7070, group(&lb)),
            perm("tcp", 8080, 9090, group(&lb))
        ]
    );
}

#[tokio::test]
async fn unresolvable_pods_are_named() {
    let fake = Arc::new(FakeAws::new());
    let net = Networking::new(fake.clone(), NetConfig::default());
    let n = net_from("sg-lb", json!(80));
    let e = net
        .for_pods(&n, &[pod_target("default/x", "10.9.9.9")])
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot resolve pod ENI for pods: [default/x]"
    );
}

#[tokio::test]
async fn nodes_use_their_primary_eni_group_once_looked_up() {
    let fake = Arc::new(FakeAws::new());
    let vpc = fake.add_vpc("10.0.0.0/16", BTreeMap::new());
    let subnet = fake
        .add_subnet(&vpc, "10.0.1.0/24", "us-west-2a", BTreeMap::new())
        .unwrap();
    let node_sg = sg(&fake, &vpc, "node", BTreeMap::new()).await;
    let a = fake
        .add_instance(&subnet, "10.0.1.10", std::slice::from_ref(&node_sg))
        .unwrap();
    let b = fake
        .add_instance(&subnet, "10.0.1.11", std::slice::from_ref(&node_sg))
        .unwrap();
    let net = Networking::new(fake.clone(), NetConfig::default());
    let n = net_from("sg-lb", json!(30080));
    let nodes = [("node-a".to_string(), a), ("node-b".to_string(), b)];
    let got = net.for_nodes(&n, &nodes).await.unwrap();
    let want: BTreeMap<String, Vec<Perm>> =
        [(node_sg, vec![perm("tcp", 30080, 30080, group("sg-lb"))])].into();
    assert_eq!(got, want);
    assert_eq!(fake.count("DescribeInstances"), 1);
    assert_eq!(net.for_nodes(&n, &nodes).await.unwrap(), want);
    assert_eq!(
        fake.count("DescribeInstances"),
        1,
        "second lookup served from the cache"
    );
    let gone = [("node-x".to_string(), "i-0missing".to_string())];
    assert!(net.for_nodes(&n, &gone).await.is_err());
}
