//! The controller against FakeAws: resources with upstream's names and tags, status, bindings,
//! finalizers and events; an unchanged reconcile writes nothing; an edited path modifies only
//! its rule; deletion leaves nothing; explicit groups share one ALB in group order; a broken
//! Ingress neither stalls other groups nor loses its own load balancer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::{AddonClients, Ec2, Ec2Query};
use serde_json::json;

use super::*;

pub fn fake_aws() -> (Arc<FakeAws>, String) {
    let fake = Arc::new(FakeAws::new());
    let vpc = network(&fake);
    (fake, vpc)
}

pub async fn start(fake: &Arc<FakeAws>, vpc: &str) -> Harness {
    Harness::start(fake.clone(), fake.clone(), vpc).await
}

/// Waits until the fake has seen no request for a while (the controller is idle).
pub async fn settle(fake: &FakeAws) {
    let mut last = fake.calls().len();
    let mut since = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let n = fake.calls().len();
        if n != last {
            last = n;
            since = Instant::now();
        } else if since.elapsed() > Duration::from_millis(700) {
            return;
        }
    }
}

/// Makes the controller reconcile the Ingress's group (an annotation the model ignores) and
/// waits until that reconcile is over; returns the write operations it made.
pub async fn reconcile_again(h: &Harness, fake: &FakeAws, ns: &str, name: &str) -> Vec<String> {
    settle(fake).await;
    fake.clear_calls();
    let poke = json!({"metadata": {"annotations": {"test.example/poke": format!("{:?}", Instant::now())}}});
    h.patch_ingress(ns, name, poke).await;
    // Every deploy of a group with a load balancer reads its listeners (the load balancers
    // come from the controller's inventory, listed at most once a TTL).
    eventually("a reconcile reaches AWS", WAIT, || async {
        fake.count("DescribeListeners") > 0
    })
    .await;
    settle(fake).await;
    write_ops(fake)
}

pub fn write_ops(fake: &FakeAws) -> Vec<String> {
    fake.write_calls().into_iter().map(|(_, op)| op).collect()
}

#[tokio::test]
async fn two_paths_become_upstream_resources_then_edit_and_delete() {
    let (fake, vpc) = fake_aws();
    let h = start(&fake, &vpc).await;
    h.apply(DEMO).await;
    eventually("status hostname", WAIT, || async {
        h.hostname("demo", "app").await.is_some()
    })
    .await;

    let inv = inventory(fake.as_ref(), fake.as_ref(), "demo/app").await;
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    let (lb, lb_tags) = &inv.lbs[0];
    assert!(lb.name.starts_with("k8s-demo-app-"), "{}", lb.name);
    assert_eq!(lb.name.len(), "k8s-demo-app-".len() + 10);
    assert_eq!(lb.scheme, "internet-facing");
    assert_eq!(lb_tags["elbv2.k8s.aws/cluster"], CLUSTER);
    assert_eq!(lb_tags["ingress.k8s.aws/stack"], "demo/app");
    assert_eq!(lb_tags["ingress.k8s.aws/resource"], "LoadBalancer");
    assert_eq!(inv.sgs.len(), 1);
    assert!(inv.sgs[0].name.starts_with("k8s-demo-app-"));
    assert_eq!(
        inv.sgs[0].description,
        "[k8s] Managed SecurityGroup for LoadBalancer"
    );
    assert_eq!(inv.listeners.len(), 1);
    assert_eq!(
        (inv.listeners[0].port, inv.listeners[0].protocol.as_str()),
        (80, "HTTP")
    );
    let rule_paths: Vec<Vec<String>> = inv.rules.iter().map(|(r, _)| paths(r)).collect();
    assert_eq!(rule_paths, vec![vec!["/api", "/api/*"], vec!["/*"]]);
    assert_eq!(inv.rules[0].1["ingress.k8s.aws/resource"], "80:1");
    let tg_names: Vec<&str> = inv.tgs.iter().map(|(t, _)| t.name.as_str()).collect();
    assert_eq!(tg_names.len(), 2);
    assert!(
        tg_names[0].starts_with("k8s-demo-back-") && tg_names[1].starts_with("k8s-demo-front-")
    );
    assert_eq!(
        inv.tgs[0].1["ingress.k8s.aws/resource"],
        "demo/app-back:8080"
    );
    assert_eq!(inv.tgs[0].0.target_type, "instance");
    assert_eq!(
        inv.tgs[0].0.port,
        Some(30091),
        "instance targets use the NodePort"
    );

    // Status, finalizer, bindings, events.
    let ing = h.ingress("demo", "app").await.unwrap();
    assert_eq!(
        ing.metadata.finalizers,
        Some(vec!["ingress.k8s.aws/resources".to_string()])
    );
    let st = json_of(&ing.status);
    assert_eq!(
        st["loadBalancer"]["ingress"][0]["hostname"],
        lb.dns_name.to_ascii_lowercase()
    );
    assert_eq!(st["loadBalancer"]["ingress"][0]["ports"][0]["port"], 80);
    let tgbs = h.bindings().list(&Default::default()).await.unwrap().items;
    assert_eq!(tgbs.len(), 2);
    for b in &tgbs {
        let labels = b.metadata.labels.clone().unwrap();
        assert_eq!(labels["ingress.k8s.aws/stack-namespace"], "demo");
        assert_eq!(labels["ingress.k8s.aws/stack-name"], "app");
        assert_eq!(b.metadata.namespace.as_deref(), Some("demo"));
        let tg = inv
            .tgs
            .iter()
            .find(|(t, _)| t.arn == b.spec.target_group_arn);
        assert_eq!(tg.map(|(t, _)| t.name.as_str()), b.metadata.name.as_deref());
        assert_eq!(b.spec.vpc_id, vpc);
    }
    eventually("SuccessfullyReconciled event", WAIT, || async {
        h.event_reasons("demo", "app")
            .await
            .iter()
            .any(|r| r == "SuccessfullyReconciled")
    })
    .await;

    // Unchanged: zero writes.
    assert_eq!(
        reconcile_again(&h, &fake, "demo", "app").await,
        Vec::<String>::new()
    );

    // One path edited: only its rule changes, in place.
    fake.clear_calls();
    let mut ing = h.ingress("demo", "app").await.unwrap();
    let spec = ing.spec.as_mut().unwrap();
    spec.rules.as_mut().unwrap()[0].http.as_mut().unwrap().paths[0].path = Some("/v2".into());
    h.patch_ingress("demo", "app", json!({"spec": json_of(&ing.spec)}))
        .await;
    eventually("edited rule", WAIT, || async {
        let inv = inventory(fake.as_ref(), fake.as_ref(), "demo/app").await;
        inv.rules.first().map(|(r, _)| paths(r)) == Some(vec!["/v2".into(), "/v2/*".into()])
    })
    .await;
    settle(&fake).await;
    assert_eq!(write_ops(&fake), vec!["ModifyRule"]);
    let after = inventory(fake.as_ref(), fake.as_ref(), "demo/app").await;
    assert_eq!(after.rules.len(), 2);
    assert_eq!(after.lbs[0].0.arn, lb.arn);

    // Deleted: nothing of the stack left, bindings gone, finalizer released.
    h.delete_ingress("demo", "app").await;
    eventually("ingress gone", WAIT, || async {
        h.ingress("demo", "app").await.is_none()
    })
    .await;
    let inv = inventory(fake.as_ref(), fake.as_ref(), "demo/app").await;
    assert!(inv.is_empty(), "{inv:#?}");
    assert!(h
        .bindings()
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .is_empty());
    h.stop().await;
}

#[tokio::test]
async fn explicit_group_of_three_shares_one_alb_in_group_order() {
    let (fake, vpc) = fake_aws();
    let h = start(&fake, &vpc).await;
    h.apply_objects(app("a", "alpha", 30101, Some(("team", 3))))
        .await;
    h.apply_objects(app("b", "beta", 30102, Some(("team", 1))))
        .await;
    h.apply_objects(app("c", "gamma", 30103, Some(("team", 2))))
        .await;
    for (ns, n) in [("a", "alpha"), ("b", "beta"), ("c", "gamma")] {
        eventually("member status", WAIT, || async {
            h.hostname(ns, n).await.is_some()
        })
        .await;
    }
    eventually("three rules", WAIT, || async {
        inventory(fake.as_ref(), fake.as_ref(), "team")
            .await
            .rules
            .len()
            == 3
    })
    .await;
    let inv = inventory(fake.as_ref(), fake.as_ref(), "team").await;
    assert_eq!(inv.lbs.len(), 1);
    assert!(inv.lbs[0].0.name.starts_with("k8s-team-"));
    let firsts: Vec<String> = inv.rules.iter().map(|(r, _)| paths(r)[0].clone()).collect();
    assert_eq!(
        firsts,
        vec!["/beta", "/gamma", "/alpha"],
        "priorities follow group.order"
    );
    let host = h.hostname("a", "alpha").await;
    for (ns, n) in [("b", "beta"), ("c", "gamma")] {
        assert_eq!(h.hostname(ns, n).await, host);
        let fin = h.ingress(ns, n).await.unwrap().metadata.finalizers.unwrap();
        assert_eq!(fin, vec!["group.ingress.k8s.aws/team"]);
    }
    let tgbs = h.bindings().list(&Default::default()).await.unwrap().items;
    assert_eq!(tgbs.len(), 3);
    assert!(tgbs
        .iter()
        .all(|b| b.metadata.labels.as_ref().unwrap()["ingress.k8s.aws/stack"] == "team"));

    // One member leaves: its rule, target group and binding go; the ALB stays.
    h.delete_ingress("b", "beta").await;
    eventually("beta released", WAIT, || async {
        h.ingress("b", "beta").await.is_none()
    })
    .await;
    eventually("two rules", WAIT, || async {
        let inv = inventory(fake.as_ref(), fake.as_ref(), "team").await;
        inv.rules.len() == 2 && inv.tgs.len() == 2
    })
    .await;
    let after = inventory(fake.as_ref(), fake.as_ref(), "team").await;
    assert_eq!(after.lbs[0].0.arn, inv.lbs[0].0.arn);
    eventually("binding of beta deleted", WAIT, || async {
        h.bindings()
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .len()
            == 2
    })
    .await;

    // The last members go: everything goes.
    h.delete_ingress("a", "alpha").await;
    h.delete_ingress("c", "gamma").await;
    eventually("all released", WAIT, || async {
        h.ingress("a", "alpha").await.is_none() && h.ingress("c", "gamma").await.is_none()
    })
    .await;
    assert!(inventory(fake.as_ref(), fake.as_ref(), "team")
        .await
        .is_empty());
    h.stop().await;
}

#[tokio::test]
async fn a_broken_ingress_stalls_nothing_and_loses_nothing() {
    let (fake, vpc) = fake_aws();
    let h = start(&fake, &vpc).await;
    h.apply_objects(app("good", "web", 30201, None)).await;
    h.apply_objects(app("keep", "api", 30202, None)).await;
    eventually("api deployed", WAIT, || async {
        h.hostname("keep", "api").await.is_some()
    })
    .await;
    let before = inventory(fake.as_ref(), fake.as_ref(), "keep/api").await;

    // A bad value breaks api's model: nothing of its stack may be deleted.
    fake.clear_calls();
    h.patch_ingress(
        "keep",
        "api",
        json!({"metadata": {"annotations": {"alb.ingress.kubernetes.io/scheme": "sideways"}}}),
    )
    .await;
    eventually("FailedBuildModel on api", WAIT, || async {
        h.event_reasons("keep", "api")
            .await
            .iter()
            .any(|r| r == "FailedBuildModel")
    })
    .await;
    // A new group meanwhile converges although api keeps failing and retrying.
    h.apply_objects(app("late", "new", 30203, None)).await;
    eventually("new deployed", WAIT, || async {
        h.hostname("late", "new").await.is_some()
    })
    .await;
    assert!(h.hostname("good", "web").await.is_some());
    let deletes: Vec<String> = write_ops(&fake)
        .into_iter()
        .filter(|o| o.starts_with("Delete"))
        .collect();
    assert_eq!(deletes, Vec::<String>::new());
    let still = inventory(fake.as_ref(), fake.as_ref(), "keep/api").await;
    assert_eq!(still.lbs[0].0.arn, before.lbs[0].0.arn);
    assert_eq!(still.rules.len(), before.rules.len());

    // Fixed: back to normal, same load balancer.
    h.patch_ingress(
        "keep",
        "api",
        json!({"metadata": {"annotations": {"alb.ingress.kubernetes.io/scheme": "internal"}}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        reconcile_again(&h, &fake, "keep", "api").await,
        Vec::<String>::new()
    );
    h.stop().await;
}

#[tokio::test]
async fn periodic_resync_restores_a_rule_deleted_behind_our_back() {
    let (fake, vpc) = fake_aws();
    let mut cfg = test_config(&vpc);
    cfg.sync_period = Duration::from_millis(500);
    let h = Harness::start_with(fake.clone(), fake.clone(), &vpc, cfg).await;
    h.apply(DEMO).await;
    eventually("two rules", WAIT, || async {
        inventory(fake.as_ref(), fake.as_ref(), "demo/app")
            .await
            .rules
            .len()
            == 2
    })
    .await;
    let inv = inventory(fake.as_ref(), fake.as_ref(), "demo/app").await;
    use aws_load_balancer_controller::aws::ElbV2;
    fake.delete_rule(&inv.rules[0].0.arn).await.unwrap();
    ElbV2::delete_listener(fake.as_ref(), &inv.listeners[0].arn)
        .await
        .ok();
    eventually("listener and rules restored by resync", WAIT, || async {
        let inv = inventory(fake.as_ref(), fake.as_ref(), "demo/app").await;
        inv.listeners.len() == 1 && inv.rules.len() == 2
    })
    .await;
    h.stop().await;
}

/// Ids of the cluster's backend security groups in the fake.
async fn backend_sgs(fake: &FakeAws) -> Vec<String> {
    let q = Ec2Query::default().filter("tag:elbv2.k8s.aws/resource", ["backend-sg"]);
    fake.describe_security_groups(&q)
        .await
        .unwrap()
        .into_iter()
        .map(|g| g.id)
        .collect()
}

#[tokio::test]
async fn the_backend_security_group_goes_with_the_last_group() {
    let (fake, vpc) = fake_aws();
    let h = start(&fake, &vpc).await;
    h.apply_objects(app("x", "one", 30201, None)).await;
    h.apply_objects(app("y", "two", 30202, None)).await;
    for (ns, n) in [("x", "one"), ("y", "two")] {
        eventually("status", WAIT, || async {
            h.hostname(ns, n).await.is_some()
        })
        .await;
    }
    let shared = backend_sgs(&fake).await;
    assert_eq!(shared.len(), 1, "one backend SG for the cluster");

    // Another group still uses it: it stays.
    h.delete_ingress("x", "one").await;
    eventually("one released", WAIT, || async {
        h.ingress("x", "one").await.is_none()
    })
    .await;
    settle(&fake).await;
    assert_eq!(backend_sgs(&fake).await, shared);

    // The last group goes: so does the backend SG; nothing of ours is left in EC2.
    h.delete_ingress("y", "two").await;
    eventually("backend SG deleted", WAIT, || async {
        backend_sgs(&fake).await.is_empty()
    })
    .await;
    assert!(h.ingress("y", "two").await.is_none());
    h.stop().await;
}

/// A web ACL name that does not resolve fails the group's deploy before any AWS write (a new
/// group gets nothing; a served group keeps its last configuration), with upstream's message.
#[tokio::test]
async fn a_web_acl_name_that_does_not_resolve_makes_no_aws_write_for_the_group() {
    let (fake, vpc) = fake_aws();
    fake.add_wafv2_web_acl("real-acl");
    let mut cfg = super::test_config(&vpc);
    cfg.addons = AddonClients::all(fake.clone());
    let h = Harness::start_with(fake.clone(), fake.clone(), &vpc, cfg).await;
    let missing = |ingress: Fixture<Ingress>| {
        ingress.annotation("alb.ingress.kubernetes.io/wafv2-acl-name", "no-such-acl")
    };
    h.apply_objects(app_with("waf", "web", 30213, None, None, missing))
        .await;
    eventually(
        "a FailedDeployModel event with upstream's text",
        WAIT,
        || async {
            h.events("waf", "web").await.iter().any(|(t, r, n)| {
                t == "Warning"
                    && r == "FailedDeployModel"
                    && n.contains("couldn't find WAFv2 WebACL with name: no-such-acl")
            })
        },
    )
    .await;
    // The group keeps failing (and retrying) with reads only.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(fake.write_calls(), vec![], "no AWS write for the group");
    assert!(fake.count("ListWebACLs") > 0);
    assert!(h.hostname("waf", "web").await.is_none());

    // With the real name the same group deploys and the web ACL is on its ALB.
    h.patch_ingress(
        "waf",
        "web",
        json!({"metadata": {"annotations": {"alb.ingress.kubernetes.io/wafv2-acl-name": "real-acl"}}}),
    )
    .await;
    eventually("deployed with its web ACL", WAIT, || async {
        h.hostname("waf", "web").await.is_some()
    })
    .await;
    let inv = inventory(fake.as_ref(), fake.as_ref(), "waf/web").await;
    assert_eq!(inv.lbs.len(), 1);
    assert!(fake.wafv2_web_acl_of(&inv.lbs[0].0.arn).is_some());
    h.stop().await;
}

#[tokio::test]
async fn watch_namespace_limits_the_ingress_controller() {
    let (fake, vpc) = fake_aws();
    let mut cfg = test_config(&vpc);
    cfg.namespaces = vec!["team".into()];
    let h = Harness::start_with(fake.clone(), fake.clone(), &vpc, cfg).await;
    h.apply_objects(app("other", "web", 30221, None)).await;
    h.apply_objects(app("team", "web", 30222, None)).await;
    eventually("team/web deployed", WAIT, || async {
        h.hostname("team", "web").await.is_some()
    })
    .await;
    let other = h.ingress("other", "web").await.unwrap();
    assert!(other.metadata.finalizers.is_none(), "{:?}", other.metadata);
    assert!(h.hostname("other", "web").await.is_none());
    let stray: Vec<String> = h
        .server
        .requests()
        .into_iter()
        .filter(|r| matches!(r.verb.as_str(), "list" | "watch"))
        .filter(|r| {
            matches!(
                r.resource.as_str(),
                "ingresses" | "services" | "targetgroupbindings"
            )
        })
        .filter(|r| r.namespace.as_deref() != Some("team"))
        .map(|r| r.describe())
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
    h.stop().await;
}

#[tokio::test]
async fn target_group_info_follows_the_controllers_bindings() {
    use aws_load_balancer_controller::aws::AwsMetrics;
    let (fake, vpc) = fake_aws();
    let mut registry = prometheus_client::registry::Registry::default();
    let mut cfg = test_config(&vpc);
    cfg.metrics = Some(AwsMetrics::register(&mut registry));
    let h = Harness::start_with(fake.clone(), fake.clone(), &vpc, cfg).await;
    let render = || {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        text
    };
    h.apply_objects(app("shop", "web", 30231, None)).await;
    eventually("web deployed", WAIT, || async {
        h.hostname("shop", "web").await.is_some()
    })
    .await;
    let binding = h.bindings().list(&Default::default()).await.unwrap().items;
    assert_eq!(binding.len(), 1);
    let arn = &binding[0].spec.target_group_arn;
    let tg = &arn[arn.rfind(':').unwrap() + 1..];
    assert!(tg.starts_with("targetgroup/"), "{tg}");
    let series =
        format!(r#"aws_target_group_info{{namespace="shop",service="web",target_group="{tg}"}} 1"#);
    assert!(render().contains(&series), "{}", render());

    h.ingresses("shop")
        .delete("web", &Default::default())
        .await
        .unwrap();
    eventually("the series goes with the binding", WAIT, || async {
        !render().contains("aws_target_group_info{")
    })
    .await;
    h.stop().await;
}

/// `enable-frontend-nlb` through the controller: the Ingress status gets upstream's second
/// entry (the NLB's lower-cased DNS name, no ports) after the ALB's; a further reconcile
/// writes nothing; dropping the annotation deletes the NLB and its status entry.
#[tokio::test]
async fn frontend_nlb_status_entry_and_idle_reconcile() {
    let (fake, vpc) = fake_aws();
    let h = start(&fake, &vpc).await;
    let with_nlb = DEMO.replace(
        "    alb.ingress.kubernetes.io/scheme: internet-facing\n",
        "    alb.ingress.kubernetes.io/scheme: internet-facing\n    alb.ingress.kubernetes.io/enable-frontend-nlb: \"true\"\n",
    );
    h.apply(&with_nlb).await;
    let entries = |ing: &Option<k8s_openapi::api::networking::v1::Ingress>| {
        json_of(&ing.as_ref().and_then(|i| i.status.clone()))["loadBalancer"]["ingress"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    eventually("two status entries", WAIT, || async {
        entries(&h.ingress("demo", "app").await).len() == 2
    })
    .await;
    let inv = inventory(fake.as_ref(), fake.as_ref(), "demo/app").await;
    let nlb = inv
        .lbs
        .iter()
        .map(|(l, _)| l)
        .find(|l| l.lb_type == "network")
        .expect("frontend NLB");
    let alb = inv
        .lbs
        .iter()
        .map(|(l, _)| l)
        .find(|l| l.lb_type == "application")
        .unwrap();
    let st = entries(&h.ingress("demo", "app").await);
    assert_eq!(st[0]["hostname"], alb.dns_name.to_ascii_lowercase());
    assert_eq!(st[0]["ports"][0]["port"], 80);
    assert_eq!(
        st[1],
        json!({"hostname": nlb.dns_name.to_ascii_lowercase()})
    );

    assert_eq!(
        reconcile_again(&h, &fake, "demo", "app").await,
        Vec::<String>::new(),
        "an unchanged group with a frontend NLB writes nothing"
    );

    let off = json!({"metadata": {"annotations": {"alb.ingress.kubernetes.io/enable-frontend-nlb": null}}});
    h.patch_ingress("demo", "app", off).await;
    eventually("the NLB status entry goes", WAIT, || async {
        entries(&h.ingress("demo", "app").await).len() == 1
    })
    .await;
    let inv = inventory(fake.as_ref(), fake.as_ref(), "demo/app").await;
    assert_eq!(inv.lbs.len(), 1);
    assert_eq!(inv.lbs[0].0.lb_type, "application");
}
