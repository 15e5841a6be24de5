//! kill -9 chaos with the real binary against moto and the API test server: three Ingresses in
//! two groups are created and then flipped (scheme, listen port, target type) between twelve
//! SIGKILLs of the controller (alternately after a short varying delay and at the first change
//! moto shows, so many land half-way through a deploy; the count is printed); afterwards AWS
//! holds exactly the expected resources, no duplicate and nothing stale. Six more SIGKILLs
//! land during deletion; afterwards nothing of ours is left (load balancers, target groups,
//! security groups including the shared backend one, TargetGroupBindings).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::{AwsError, Ec2Query, Tags};
use aws_load_balancer_controller::crd::TargetGroupBinding;
use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::support::e2e::Cluster;
use crate::support::moto_cloud::{cloud, raw_ec2, Cloud};
use crate::support::process::Controller;

const CLUSTER: &str = "e2e";
/// (namespace, name, explicit group): `alpha` has two members, `cc/three` is implicit.
const MEMBERS: [(&str, &str, Option<&str>); 3] = [
    ("ca", "one", Some("alpha")),
    ("cb", "two", Some("alpha")),
    ("cc", "three", None),
];
const STACKS: [(&str, usize); 2] = [("alpha", 2), ("cc/three", 1)];

/// What step `i` asks of every Ingress: the three flips change at different rates so that
/// consecutive steps differ in one to three of them.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shape {
    scheme: &'static str,
    port: u16,
    target: &'static str,
}

fn shape(i: usize) -> Shape {
    Shape {
        scheme: if i % 2 == 1 {
            "internal"
        } else {
            "internet-facing"
        },
        port: if (i / 2) % 2 == 1 { 8080 } else { 80 },
        target: if (i / 3) % 2 == 1 { "ip" } else { "instance" },
    }
}

fn ingress(ns: &str, name: &str, group: Option<&str>, s: Shape) -> serde_json::Value {
    let mut ann = json!({
        "kubernetes.io/ingress.class": "alb",
        "alb.ingress.kubernetes.io/scheme": s.scheme,
        "alb.ingress.kubernetes.io/listen-ports": format!("[{{\"HTTP\": {}}}]", s.port),
        "alb.ingress.kubernetes.io/target-type": s.target,
    });
    if let Some(g) = group {
        ann["alb.ingress.kubernetes.io/group.name"] = json!(g);
    }
    json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": name, "namespace": ns, "annotations": ann},
        "spec": {"rules": [{"http": {"paths": [{"path": format!("/{name}"), "pathType": "Prefix",
            "backend": {"service": {"name": name, "port": {"number": 80}}}}]}}]}
    })
}

async fn apply_shape(client: &kube::Client, s: Shape) {
    for (ns, name, group) in MEMBERS {
        let api: Api<Ingress> = Api::namespaced(client.clone(), ns);
        api.patch(
            name,
            &PatchParams::apply("chaos").force(),
            &Patch::Apply(&ingress(ns, name, group, s)),
        )
        .await
        .unwrap();
    }
}

fn start(k8s: &Cluster, c: &Cloud) -> Controller {
    let ctl = k8s.controller(&[
        format!("--cluster-name={CLUSTER}"),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!(
            "--aws-api-endpoints=elasticloadbalancing={0},ec2={0}",
            c.moto.endpoint
        ),
        // Killed replicas never release a Lease; this test is about AWS state, not election.
        "--enable-leader-election=false".into(),
        "--ingress-max-exponential-backoff-delay=1s".into(),
    ]);
    ctl.wait_for_log("AWS clients ready", Duration::from_secs(30));
    ctl
}

/// SIGKILL (std's `Child::kill` on Unix) and reap.
fn kill9(mut ctl: Controller) {
    ctl.child.kill().unwrap();
    ctl.child.wait().unwrap();
}

/// A varying moment inside the deploys that follow an edit (40 ms to ~330 ms).
fn delay(i: usize) -> Duration {
    Duration::from_millis(40 + ((i * 53) % 300) as u64)
}

/// Lets the controller work, then SIGKILLs it: on even steps after `delay`, on odd steps at
/// the first moment moto shows any change from `from` (so the kill lands inside the deploy).
/// Returns what moto holds after the kill.
async fn work_then_kill(ctl: Controller, c: &Cloud, i: usize, from: &Seen) -> Seen {
    if i.is_multiple_of(2) {
        tokio::time::sleep(delay(i)).await;
    } else {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && &seen(c).await == from {}
    }
    kill9(ctl);
    seen(c).await
}

/// Everything of the cluster in moto, found by the cluster tag (and, for uniqueness, every load
/// balancer and target group of the VPC whatever its tags).
#[derive(Debug, PartialEq)]
struct Seen {
    /// stack → (scheme, listener ports, non-default rule count)
    lbs: BTreeMap<String, Vec<(String, Vec<u16>, usize)>>,
    /// stack → target types
    tgs: BTreeMap<String, Vec<String>>,
    untagged_lbs: usize,
    untagged_tgs: usize,
    security_groups: usize,
}

/// One look at moto; fails when a resource vanishes between two calls (a deploy is running).
async fn try_seen(c: &Cloud) -> Result<Seen, AwsError> {
    let stack_of = |t: &Tags| {
        (t.get("elbv2.k8s.aws/cluster").map(String::as_str) == Some(CLUSTER))
            .then(|| t.get("ingress.k8s.aws/stack").cloned())
            .flatten()
    };
    let mut out = Seen {
        lbs: BTreeMap::new(),
        tgs: BTreeMap::new(),
        untagged_lbs: 0,
        untagged_tgs: 0,
        security_groups: 0,
    };
    let lbs = c.elb.describe_load_balancers(&Default::default()).await?;
    let arns: Vec<String> = lbs.iter().map(|l| l.arn.clone()).collect();
    let tags = c.elb.describe_tags(&arns).await?;
    for lb in lbs.iter().filter(|l| l.vpc_id == c.vpc) {
        let Some(stack) = tags.get(&lb.arn).and_then(stack_of) else {
            out.untagged_lbs += 1;
            continue;
        };
        let mut ports = Vec::new();
        let mut rules = 0;
        for l in c.elb.describe_listeners(&lb.arn).await? {
            ports.push(l.port);
            rules += c
                .elb
                .describe_rules(&l.arn)
                .await?
                .iter()
                .filter(|r| !r.is_default)
                .count();
        }
        ports.sort();
        out.lbs
            .entry(stack)
            .or_default()
            .push((lb.scheme.clone(), ports, rules));
    }
    let tgs = c.elb.describe_target_groups(&Default::default()).await?;
    let arns: Vec<String> = tgs.iter().map(|t| t.arn.clone()).collect();
    let tags = c.elb.describe_tags(&arns).await?;
    for tg in &tgs {
        match tags.get(&tg.arn).and_then(stack_of) {
            Some(stack) => out
                .tgs
                .entry(stack)
                .or_default()
                .push(tg.target_type.clone()),
            None => out.untagged_tgs += 1,
        }
    }
    let q = Ec2Query::default().filter("tag:elbv2.k8s.aws/cluster", [CLUSTER]);
    out.security_groups = c.ec2.describe_security_groups(&q).await?.len();
    Ok(out)
}

async fn seen(c: &Cloud) -> Seen {
    loop {
        if let Ok(s) = try_seen(c).await {
            return s;
        }
    }
}

fn expected(s: Shape) -> Seen {
    let mut lbs = BTreeMap::new();
    let mut tgs = BTreeMap::new();
    for (stack, members) in STACKS {
        lbs.insert(
            stack.to_string(),
            vec![(s.scheme.to_string(), vec![s.port], members)],
        );
        tgs.insert(stack.to_string(), vec![s.target.to_string(); members]);
    }
    Seen {
        lbs,
        tgs,
        untagged_lbs: 0,
        untagged_tgs: 0,
        // One managed SG per load balancer and the shared backend SG.
        security_groups: 3,
    }
}

fn empty() -> Seen {
    Seen {
        lbs: BTreeMap::new(),
        tgs: BTreeMap::new(),
        untagged_lbs: 0,
        untagged_tgs: 0,
        security_groups: 0,
    }
}

async fn converge(c: &Cloud, want: &Seen, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    loop {
        let got = seen(c).await;
        if &got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "did not converge:\n got {got:#?}\nwant {want:#?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_create_update_and_delete_leaves_exactly_the_expected_resources() {
    let c = cloud().await;
    // Internal load balancers need subnets with the internal role too.
    let raw = raw_ec2(&c.moto.endpoint);
    for s in &c.subnets {
        let tag = aws_sdk_ec2::types::Tag::builder()
            .key("kubernetes.io/role/internal-elb")
            .value("1")
            .build();
        raw.create_tags()
            .resources(s)
            .tags(tag)
            .send()
            .await
            .unwrap();
    }
    let k8s = Cluster::start().await;
    let client = k8s.client.clone();
    for (i, (ns, name, _)) in MEMBERS.iter().enumerate() {
        let nso: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &nso)
            .await
            .unwrap();
        let svc: Service = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": ns},
            "spec": {"type": "NodePort", "selector": {"app": name},
                "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30601 + i}]}
        }))
        .unwrap();
        Api::<Service>::namespaced(client.clone(), ns)
            .create(&PostParams::default(), &svc)
            .await
            .unwrap();
    }

    // Create, then flip between kills; count the kills that left AWS half-way.
    let mut before = seen(&c).await;
    let mut half_way = 0;
    for i in 0..12 {
        let ctl = start(&k8s, &c);
        apply_shape(&client, shape(i)).await;
        let after = work_then_kill(ctl, &c, i, &before).await;
        if after != before && after != expected(shape(i)) {
            half_way += 1;
        }
        before = after;
    }
    let last = shape(11);
    let ctl = start(&k8s, &c);
    converge(&c, &expected(last), Duration::from_secs(90)).await;
    // Status and bindings follow.
    let tgbs: Api<TargetGroupBinding> = Api::all(client.clone());
    crate::tgb::eventually(
        "three bindings on the live target groups",
        crate::ingress::WAIT,
        || async {
            let live: Vec<String> = c
                .elb
                .describe_target_groups(&Default::default())
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.arn)
                .collect();
            let bound = tgbs.list(&Default::default()).await.unwrap().items;
            bound.len() == 3
                && bound
                    .iter()
                    .all(|b| live.contains(&b.spec.target_group_arn))
        },
    )
    .await;
    for (ns, name, _) in MEMBERS {
        let ing = Api::<Ingress>::namespaced(client.clone(), ns)
            .get(name)
            .await
            .unwrap();
        let ports = ing
            .status
            .and_then(|s| s.load_balancer)
            .and_then(|l| l.ingress);
        assert!(ports.is_some_and(|v| v.len() == 1), "{ns}/{name} status");
    }
    kill9(ctl);

    // Delete, with kills during the deletion.
    for (ns, name, _) in MEMBERS {
        Api::<Ingress>::namespaced(client.clone(), ns)
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }
    let mut before = seen(&c).await;
    for i in 0..6 {
        let ctl = start(&k8s, &c);
        let after = work_then_kill(ctl, &c, i + 12, &before).await;
        if after != before && after != empty() {
            half_way += 1;
        }
        before = after;
    }
    eprintln!("chaos: {half_way} of 18 kills left AWS half-way through a change");
    assert!(half_way > 0, "no kill interrupted a change");
    let ctl = start(&k8s, &c);
    crate::tgb::eventually(
        "every Ingress released",
        Duration::from_secs(90),
        || async {
            let mut gone = true;
            for (ns, name, _) in MEMBERS {
                gone &= Api::<Ingress>::namespaced(client.clone(), ns)
                    .get_opt(name)
                    .await
                    .unwrap()
                    .is_none();
            }
            gone
        },
    )
    .await;
    converge(&c, &empty(), Duration::from_secs(30)).await;
    crate::tgb::eventually("no binding left", crate::ingress::WAIT, || async {
        tgbs.list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    })
    .await;
    kill9(ctl);
    k8s.server.stop().await;
}
