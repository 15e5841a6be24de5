//! Switching from upstream: moto and the API test server hold what upstream v3.5's deployer left
//! for many Ingress shapes (names, tags, TargetGroupBindings in upstream's shape, finalizers,
//! status), written from upstream's model, never from ours; then our Ingress and TargetGroupBinding
//! controllers start and must write nothing: no AWS write call, the same AWS inventory, and the same resourceVersion on every
//! Ingress, Service and TargetGroupBinding.

pub(crate) mod bindings;
pub(crate) mod diff;
mod kit;
mod names;
pub(crate) mod seed;
pub(crate) mod shapes;
mod shapes_more;

use std::collections::BTreeMap;
use std::net::Ipv6Addr;

use aws_load_balancer_controller::aws::Ec2Query;
use aws_load_balancer_controller::crd::{IngressClassParams, TargetGroupBinding};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
use kube::api::{Api, ListParams, PostParams};
use serde_json::{json, Value};

use aws_load_balancer_controller::controller::tgb::{self, TgbConfig};
use tokio_util::sync::CancellationToken;

use crate::ingress::{eventually, inventory, test_config, Harness};
use crate::support::moto_cloud::{calls_by_op, cloud, new_writes, raw_ec2, settle, Cloud};

/// The cluster name of upstream's test tables (their names are pinned to it in `names`).
pub const CLUSTER: &str = "cluster-dummy";

/// Creates the user's objects of one shape whose kind `keep` accepts; Ingresses already carry
/// upstream's `finalizer`.
pub async fn apply_kinds(
    client: &kube::Client,
    ns: &str,
    yaml: &str,
    finalizer: &str,
    keep: impl Fn(&str) -> bool,
) {
    let obj: k8s_openapi::api::core::v1::Namespace =
        serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
    let _ = Api::all(client.clone())
        .create(&PostParams::default(), &obj)
        .await;
    let pp = PostParams::default();
    for mut doc in aws_load_balancer_controller::plan::parse_documents(yaml).unwrap() {
        if !keep(doc["kind"].as_str().unwrap()) {
            continue;
        }
        match doc["kind"].as_str().unwrap() {
            "Service" => {
                let s: Service = serde_json::from_value(doc).unwrap();
                Api::namespaced(client.clone(), ns)
                    .create(&pp, &s)
                    .await
                    .unwrap();
            }
            "Ingress" => {
                doc["metadata"]["finalizers"] = json!([finalizer]);
                let i: Ingress = serde_json::from_value(doc).unwrap();
                Api::namespaced(client.clone(), ns)
                    .create(&pp, &i)
                    .await
                    .unwrap();
            }
            "IngressClass" => {
                let c: IngressClass = serde_json::from_value(doc).unwrap();
                Api::all(client.clone()).create(&pp, &c).await.unwrap();
            }
            "IngressClassParams" => {
                let c: IngressClassParams = serde_json::from_value(doc).unwrap();
                Api::all(client.clone()).create(&pp, &c).await.unwrap();
            }
            other => panic!("unsupported kind {other}"),
        }
    }
}

/// Both subnets may hold internal load balancers too, and have IPv6 CIDRs (dual-stack shapes).
pub(crate) async fn prepare_network(c: &Cloud) {
    let raw = raw_ec2(&c.moto.endpoint);
    let tag = aws_sdk_ec2::types::Tag::builder()
        .key("kubernetes.io/role/internal-elb")
        .value("1")
        .build();
    raw.create_tags()
        .set_resources(Some(c.subnets.clone()))
        .tags(tag)
        .send()
        .await
        .unwrap();
    let assoc = raw
        .associate_vpc_cidr_block()
        .vpc_id(&c.vpc)
        .amazon_provided_ipv6_cidr_block(true)
        .send()
        .await
        .unwrap();
    let block = assoc
        .ipv6_cidr_block_association()
        .and_then(|a| a.ipv6_cidr_block())
        .unwrap()
        .to_string();
    let base: Ipv6Addr = block.split('/').next().unwrap().parse().unwrap();
    for (i, s) in c.subnets.iter().enumerate() {
        let mut seg = base.segments();
        seg[3] += i as u16;
        raw.associate_subnet_cidr_block()
            .subnet_id(s)
            .ipv6_cidr_block(format!("{}/64", Ipv6Addr::from(seg)))
            .send()
            .await
            .unwrap();
    }
}

/// resourceVersion of every Ingress, Service and TargetGroupBinding.
async fn versions(client: &kube::Client) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let lp = ListParams::default();
    for i in Api::<Ingress>::all(client.clone()).list(&lp).await.unwrap() {
        out.insert(
            format!(
                "Ingress {}/{}",
                i.metadata.namespace.unwrap(),
                i.metadata.name.unwrap()
            ),
            i.metadata.resource_version.unwrap(),
        );
    }
    for s in Api::<Service>::all(client.clone()).list(&lp).await.unwrap() {
        out.insert(
            format!(
                "Service {}/{}",
                s.metadata.namespace.unwrap(),
                s.metadata.name.unwrap()
            ),
            s.metadata.resource_version.unwrap(),
        );
    }
    for b in Api::<TargetGroupBinding>::all(client.clone())
        .list(&lp)
        .await
        .unwrap()
    {
        out.insert(
            format!(
                "TGB {}/{}",
                b.metadata.namespace.unwrap(),
                b.metadata.name.unwrap()
            ),
            b.metadata.resource_version.unwrap(),
        );
    }
    out
}

/// Everything in AWS: each stack's inventory with listener certificates, and every SG.
async fn aws_state(c: &Cloud, stacks: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for id in stacks {
        let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), id).await;
        for l in &inv.listeners {
            let certs = c.elb.describe_listener_certificates(&l.arn).await.unwrap();
            out.push(format!("{id} listener {} certificates {certs:?}", l.port));
        }
        out.push(format!("{id}: {inv:?}"));
    }
    let sgs = c
        .ec2
        .describe_security_groups(&Ec2Query::default())
        .await
        .unwrap();
    out.push(format!("{sgs:?}"));
    out
}

/// Reason and note of the events about `name` in `ns`. One table behind both event APIs (as
/// in kube-apiserver): events.k8s.io lists those written through core/v1 too.
async fn events(client: &kube::Client, ns: &str, name: &str) -> Vec<String> {
    Api::<k8s_openapi::api::events::v1::Event>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .map(|e| {
            format!(
                "{}: {}",
                e.reason.unwrap_or_default(),
                e.note.unwrap_or_default()
            )
        })
        .collect()
}

/// Waits for `SuccessfullyReconciled` on every member Ingress; fails at the first `Failed*`.
async fn all_reconciled(client: &kube::Client, shapes: &[seed::Shape]) {
    for s in shapes {
        for m in &s.members {
            let what = format!("{} ({}/{m}) reconciled", s.title, s.namespace);
            eventually(&what, std::time::Duration::from_secs(60), || async {
                let evs = events(client, s.namespace, m).await;
                if let Some(bad) = evs.iter().find(|e| e.starts_with("Failed")) {
                    panic!("{}: {bad}", s.title);
                }
                evs.iter().any(|e| e.starts_with("SuccessfullyReconciled"))
            })
            .await;
        }
    }
}

/// A cloud ready for every shape, the three certificates, and a harness (controller not started).
async fn setup() -> (Cloud, Harness, BTreeMap<String, String>) {
    let c = cloud().await;
    prepare_network(&c).await;
    let mut cfg = test_config(&c.vpc);
    cfg.model.cluster_name = CLUSTER.into();
    let h = Harness::new(c.elb.clone(), c.ec2.clone(), &c.vpc, cfg).await;
    let vars = certificates(&c).await;
    (c, h, vars)
}

/// The three certificates the shapes name (`{cert1}`…), made in ACM; their ARNs by name.
pub(crate) async fn certificates(c: &Cloud) -> BTreeMap<String, String> {
    let mut vars = BTreeMap::new();
    for (k, domain) in [
        ("cert1", "a.example.com"),
        ("cert2", "b.example.com"),
        ("cert3", "shop.example.com"),
    ] {
        vars.insert(k.to_string(), seed::certificate(c, domain).await);
    }
    vars
}

/// On a fresh cluster, the bindings our controller creates are exactly upstream's for every
/// shape: same name, namespace, labels, no annotation, and the same spec field for field.
#[tokio::test]
async fn fresh_bindings_are_upstreams_shape() {
    let (c, mut h, vars) = setup().await;
    let shapes = shapes::all();
    for s in &shapes {
        seed::user_objects(&c, &h.client, &vars, s).await;
    }
    h.launch();
    all_reconciled(&h.client, &shapes).await;
    let q = Ec2Query::default().filter("group-name", [names::backend_sg(CLUSTER)]);
    let backend = c.ec2.describe_security_groups(&q).await.unwrap()[0]
        .id
        .clone();
    for s in &shapes {
        let api: Api<TargetGroupBinding> = Api::namespaced(h.client.clone(), s.namespace);
        for tg in &s.tgs {
            let name = seed::tg_name(&h.client, s, tg).await;
            let ours = api
                .get(&name)
                .await
                .unwrap_or_else(|e| panic!("{}: {name}: {e}", s.title));
            let arn = &ours.spec.target_group_arn;
            let want = bindings::upstream(s, tg, &name, arn, &backend, &c.vpc);
            let got = serde_json::to_value(&ours).unwrap();
            assert_eq!(got["spec"], want["spec"], "{}: {name}", s.title);
            assert_eq!(
                got["metadata"]["labels"], want["metadata"]["labels"],
                "{}",
                s.title
            );
            assert_eq!(got["metadata"]["annotations"], Value::Null, "{}", s.title);
        }
        let count = api.list(&ListParams::default()).await.unwrap().items.len();
        assert_eq!(count, s.tgs.len(), "{}", s.title);
    }
    h.stop().await;
}

#[tokio::test]
async fn upstream_made_state_is_taken_over_without_a_write() {
    let (c, mut h, vars) = setup().await;
    let backend = seed::backend_sg(&c).await;
    let shapes = shapes::all();
    assert!(shapes.len() >= 15, "{} shapes", shapes.len());
    for s in &shapes {
        seed::seed(&c, &h.client, &backend, &vars, s).await;
    }
    let stacks: Vec<String> = shapes.iter().map(|s| s.group().id()).collect();
    let k8s_before = versions(&h.client).await;
    let aws_before = aws_state(&c, &stacks).await;
    let calls = calls_by_op(&c.registry);

    h.launch();
    // The TargetGroupBinding controller runs beside it, as in the binary.
    let tgb_cfg = TgbConfig {
        vpc_cidrs: vec!["10.1.0.0/16".parse().unwrap()],
        cluster_name: CLUSTER.into(),
        vpc_id: c.vpc.clone(),
        max_backoff: std::time::Duration::from_secs(1),
        ..TgbConfig::default()
    };
    let tgb_stop = CancellationToken::new();
    let tgb_task = tokio::spawn(tgb::run(
        h.client.clone(),
        c.elb.clone(),
        c.ec2.clone(),
        tgb_cfg,
        tgb_stop.clone(),
    ));
    all_reconciled(&h.client, &shapes).await;
    // Every binding was looked at: each reconcile reads its target group's health.
    let bindings: usize = shapes.iter().map(|s| s.tgs.len()).sum();
    let health = |r: &BTreeMap<String, f64>| r.get("DescribeTargetHealth").copied().unwrap_or(0.0);
    eventually(
        "every binding reconciled",
        std::time::Duration::from_secs(60),
        || async { health(&calls_by_op(&c.registry)) - health(&calls) >= bindings as f64 },
    )
    .await;
    settle(&c.registry).await;

    assert_eq!(
        new_writes(&c.registry, &calls),
        Vec::<String>::new(),
        "AWS write calls"
    );
    let aws_after = aws_state(&c, &stacks).await;
    for (b, a) in aws_before.iter().zip(&aws_after) {
        assert_eq!(b, a);
    }
    let k8s_after = versions(&h.client).await;
    let moved: Vec<&String> = k8s_before
        .iter()
        .filter(|(k, v)| k8s_after.get(*k) != Some(v))
        .map(|(k, _)| k)
        .collect();
    assert!(moved.is_empty(), "objects written: {moved:?}");
    assert_eq!(k8s_before.len(), k8s_after.len());
    tgb_stop.cancel();
    tgb_task.await.unwrap();
    h.stop().await;
}
