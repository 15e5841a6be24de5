//! What users protect or still use is never taken away (FakeAws): a deletion-protected ALB is
//! kept with its Ingress waiting, a member whose own edit is invalid keeps its routes while the
//! rest of its group deploys (also across a restart), and namespace events reconcile only the
//! groups an IngressClassParams namespaceSelector flip concerns.

use aws_load_balancer_controller::aws::ElbV2;
use aws_load_balancer_controller::crd::IngressClassParams;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::networking::v1::IngressClass;
use serde_json::json;

use super::fake::{fake_aws, settle, start, write_ops};
use super::*;

/// Notes of the events with `reason` on the object `ns/name` (see [`events_of`]).
async fn event_notes(h: &Harness, ns: &str, name: &str, reason: &str) -> Vec<String> {
    events_of(&h.client, ns, name)
        .await
        .into_iter()
        .filter(|(_, r, _)| r == reason)
        .map(|(_, _, note)| note)
        .collect()
}

fn protection(on: bool) -> Tags {
    [("deletion_protection.enabled".to_string(), on.to_string())].into()
}

#[tokio::test]
async fn a_protected_alb_is_kept_and_its_ingress_waits_until_protection_is_lifted() {
    let (fake, vpc) = fake_aws();
    let h = super::fake::start(&fake, &vpc).await;
    h.apply_objects(app("prot", "web", 30301, None)).await;
    eventually("status", WAIT, || async {
        h.hostname("prot", "web").await.is_some()
    })
    .await;
    let inv = inventory(fake.as_ref(), fake.as_ref(), "prot/web").await;
    let lb = inv.lbs[0].0.clone();
    // The operator protects the production ALB in AWS.
    fake.modify_load_balancer_attributes(&lb.arn, &protection(true))
        .await
        .unwrap();
    settle(&fake).await;
    fake.clear_calls();

    h.delete_ingress("prot", "web").await;
    eventually(
        "a Warning names the ALB and the attribute",
        WAIT,
        || async {
            event_notes(&h, "prot", "web", "FailedDeployModel")
                .await
                .iter()
                .any(|n| n.contains(&lb.name) && n.contains("deletion_protection.enabled"))
        },
    )
    .await;
    // It keeps retrying (never quiet), so look after a few retries rather than settling.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let writes = write_ops(&fake);
    assert!(
        !writes
            .iter()
            .any(|o| o == "ModifyLoadBalancerAttributes" || o.starts_with("Delete")),
        "protection is never lifted and nothing is taken apart: {writes:?}"
    );
    let attrs = fake
        .describe_load_balancer_attributes(&lb.arn)
        .await
        .unwrap();
    assert_eq!(attrs["deletion_protection.enabled"], "true");
    let still = inventory(fake.as_ref(), fake.as_ref(), "prot/web").await;
    assert_eq!(still.lbs.len(), 1);
    assert_eq!(still.rules.len(), inv.rules.len());
    assert_eq!(still.tgs.len(), inv.tgs.len());
    let ing = h.ingress("prot", "web").await.expect("the finalizer holds");
    assert!(ing.metadata.deletion_timestamp.is_some());
    assert_eq!(
        h.bindings()
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .len(),
        1,
        "the protected ALB keeps its targets"
    );

    // The user lifts protection: the stack goes and the Ingress is released.
    fake.modify_load_balancer_attributes(&lb.arn, &protection(false))
        .await
        .unwrap();
    eventually("the Ingress is released", WAIT, || async {
        h.ingress("prot", "web").await.is_none()
    })
    .await;
    assert!(inventory(fake.as_ref(), fake.as_ref(), "prot/web")
        .await
        .is_empty());
    h.stop().await;
}

fn rule_with_path<'a>(inv: &'a Inventory, path: &str) -> Option<&'a Rule> {
    inv.rules
        .iter()
        .map(|(r, _)| r)
        .find(|r| paths(r).iter().any(|p| p == path))
}

fn tg_arns_of(inv: &Inventory, member: &str) -> Vec<String> {
    inv.tgs
        .iter()
        .filter(|(_, t)| {
            t.get("ingress.k8s.aws/resource")
                .is_some_and(|r| r.starts_with(&format!("{member}-")))
        })
        .map(|(tg, _)| tg.arn.clone())
        .collect()
}

fn set_path(name: &str, path: &str) -> Value {
    json!({"spec": {"rules": [{"http": {"paths": [{"path": path, "pathType": "Prefix",
        "backend": {"service": {"name": name, "port": {"number": 80}}}}]}}]}})
}

async fn binding_count(h: &Harness) -> usize {
    h.bindings()
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .len()
}

const BAD_INTERVAL: &str = "alb.ingress.kubernetes.io/healthcheck-interval-seconds";

#[tokio::test]
async fn a_member_with_an_invalid_edit_keeps_its_routes_while_the_group_deploys() {
    let (fake, vpc) = fake_aws();
    let mut h = start(&fake, &vpc).await;
    h.apply_objects(app("s1", "one", 30401, Some(("shared", 1))))
        .await;
    h.apply_objects(app("s2", "two", 30402, Some(("shared", 2))))
        .await;
    eventually("both members served", WAIT, || async {
        let inv = inventory(fake.as_ref(), fake.as_ref(), "shared").await;
        inv.rules.len() == 2 && h.hostname("s2", "two").await.is_some()
    })
    .await;
    let before = inventory(fake.as_ref(), fake.as_ref(), "shared").await;
    let two_rule = rule_with_path(&before, "/two").unwrap().arn.clone();
    let two_tgs = tg_arns_of(&before, "s2/two");
    assert_eq!(two_tgs.len(), 1);
    assert_eq!(binding_count(&h).await, 2);

    // two gets a typo; one edits its path at the same time.
    h.patch_ingress(
        "s2",
        "two",
        json!({"metadata": {"annotations": {BAD_INTERVAL: "15s"}}}),
    )
    .await;
    h.patch_ingress("s1", "one", set_path("one", "/uno")).await;
    eventually("one's edit deploys", WAIT, || async {
        let inv = inventory(fake.as_ref(), fake.as_ref(), "shared").await;
        rule_with_path(&inv, "/uno").is_some()
    })
    .await;
    eventually("FailedBuildModel on two", WAIT, || async {
        !event_notes(&h, "s2", "two", "FailedBuildModel")
            .await
            .is_empty()
    })
    .await;
    settle(&fake).await;
    let assert_two_kept = |inv: &Inventory| {
        let r = rule_with_path(inv, "/two").expect("two's rule stays");
        assert_eq!(r.arn, two_rule, "in place, not recreated");
        assert_eq!(
            tg_arns_of(inv, "s2/two"),
            two_tgs,
            "two's target group stays"
        );
    };
    let now = inventory(fake.as_ref(), fake.as_ref(), "shared").await;
    assert_two_kept(&now);
    assert_eq!(now.rules.len(), 2);
    assert_eq!(binding_count(&h).await, 2, "two's binding stays");
    assert!(h.hostname("s2", "two").await.is_some());

    // A restart while two is still broken: nothing of two may go (the group waits instead).
    h.crash().await;
    h.launch();
    h.patch_ingress("s1", "one", set_path("one", "/eins")).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    settle(&fake).await;
    let after_restart = inventory(fake.as_ref(), fake.as_ref(), "shared").await;
    assert_two_kept(&after_restart);
    assert_eq!(binding_count(&h).await, 2);

    // Fixed: everything converges, one's latest edit included.
    h.patch_ingress(
        "s2",
        "two",
        json!({"metadata": {"annotations": {BAD_INTERVAL: null}}}),
    )
    .await;
    eventually("one's latest edit deploys", WAIT, || async {
        let inv = inventory(fake.as_ref(), fake.as_ref(), "shared").await;
        rule_with_path(&inv, "/eins").is_some() && rule_with_path(&inv, "/two").is_some()
    })
    .await;
    h.stop().await;
}

#[tokio::test]
async fn namespace_events_reconcile_only_groups_whose_selector_flips() {
    let (fake, vpc) = fake_aws();
    let h = start(&fake, &vpc).await;
    h.apply_objects(app("n1", "web", 30501, None)).await;
    eventually("status", WAIT, || async {
        h.hostname("n1", "web").await.is_some()
    })
    .await;
    // A class whose parameters select namespaces labelled team=a, and an Ingress using it in a
    // namespace without the label (not ours yet).
    let params: IngressClassParams = serde_json::from_value(json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "IngressClassParams",
        "metadata": {"name": "team-a"},
        "spec": {"namespaceSelector": {"matchLabels": {"team": "a"}}}
    }))
    .unwrap();
    Api::<IngressClassParams>::all(h.client.clone())
        .create(&PostParams::default(), &params)
        .await
        .unwrap();
    let class: IngressClass = serde_json::from_value(json!({
        "metadata": {"name": "team-a"},
        "spec": {"controller": "ingress.k8s.aws/alb", "parameters": {
            "apiGroup": "elbv2.k8s.aws", "kind": "IngressClassParams", "name": "team-a"}}
    }))
    .unwrap();
    Api::<IngressClass>::all(h.client.clone())
        .create(&PostParams::default(), &class)
        .await
        .unwrap();
    // Of the class team-a by name, with an annotation no one reads instead of the class one.
    let sel = app_with("sel", "site", 30502, None, None, |ingress| {
        ingress
            .set(
                &["metadata", "annotations"],
                json!({"test.example/none": "x"}),
            )
            .class("team-a")
    });
    h.apply_objects(sel).await;
    settle(&fake).await;
    assert!(h.hostname("sel", "site").await.is_none());
    fake.clear_calls();

    // Namespaces come and go, and one gets a label no selector reads: no group is reconciled.
    let nss: Api<Namespace> = Api::all(h.client.clone());
    for i in 0..5 {
        h.namespace(&format!("churn-{i}")).await;
    }
    for i in 0..5 {
        nss.delete(&format!("churn-{i}"), &Default::default())
            .await
            .unwrap();
    }
    let label = |k: &str, v: &str| json!({"metadata": {"labels": {k: v}}});
    nss.patch(
        "n1",
        &PatchParams::default(),
        &Patch::Merge(&label("env", "dev")),
    )
    .await
    .unwrap();
    nss.patch(
        "sel",
        &PatchParams::default(),
        &Patch::Merge(&label("env", "dev")),
    )
    .await
    .unwrap();
    settle(&fake).await;
    assert_eq!(
        fake.count("DescribeLoadBalancers"),
        0,
        "namespace events that change no selector match reconcile nothing: {:?}",
        fake.calls()
    );

    // The label the selector reads: the Ingress of that namespace becomes ours and deploys.
    nss.patch(
        "sel",
        &PatchParams::default(),
        &Patch::Merge(&label("team", "a")),
    )
    .await
    .unwrap();
    eventually("the selected namespace's Ingress deploys", WAIT, || async {
        h.hostname("sel", "site").await.is_some()
    })
    .await;
    let web = inventory(fake.as_ref(), fake.as_ref(), "n1/web").await;
    assert_eq!(web.lbs.len(), 1);
    h.stop().await;
}

#[tokio::test]
async fn a_member_with_an_invalid_group_order_keeps_its_route() {
    let (fake, vpc) = fake_aws();
    let h = start(&fake, &vpc).await;
    h.apply_objects(app("o1", "one", 30411, Some(("ordered", 1))))
        .await;
    h.apply_objects(app("o2", "two", 30412, Some(("ordered", 2))))
        .await;
    eventually("both members served", WAIT, || async {
        let inv = inventory(fake.as_ref(), fake.as_ref(), "ordered").await;
        inv.rules.len() == 2 && h.hostname("o2", "two").await.is_some()
    })
    .await;
    let order = "alb.ingress.kubernetes.io/group.order";
    h.patch_ingress(
        "o2",
        "two",
        json!({"metadata": {"annotations": {order: "5000"}}}),
    )
    .await;
    h.patch_ingress("o1", "one", set_path("one", "/uno")).await;
    eventually("one's edit deploys", WAIT, || async {
        let inv = inventory(fake.as_ref(), fake.as_ref(), "ordered").await;
        rule_with_path(&inv, "/uno").is_some()
    })
    .await;
    settle(&fake).await;
    let inv = inventory(fake.as_ref(), fake.as_ref(), "ordered").await;
    assert!(rule_with_path(&inv, "/two").is_some(), "two's route stays");
    assert_eq!(tg_arns_of(&inv, "o2/two").len(), 1);
    assert_eq!(binding_count(&h).await, 2);
    assert!(!event_notes(&h, "o2", "two", "FailedBuildModel")
        .await
        .is_empty());
    h.stop().await;
}
