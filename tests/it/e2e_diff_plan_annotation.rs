//! `diff` shows the Ingress patches of upstream's dry-run plan (gate `IngressPlanAnnotation`)
//! as the Ingress controller makes them: the plan on the group's first member and none on the
//! others with the gate on, every stale plan cleared with the gate off; the plan names the VPC
//! the controller resolved, also when found by `--aws-vpc-tags`.

use albc_model::fixtures::TestObject;
use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, PostParams};
use serde_json::{json, Value};

use crate::support::e2e::Cluster;
use crate::support::moto_cloud::{cloud, endpoints_flag};
use crate::takeover::diff::{run_diff_flags, run_diff_with};

const PLAN: &str = "alb.ingress.kubernetes.io/dry-run-plan";

/// A member of the group `shared` routing `/name` to `web`, with a stale plan annotation.
fn ingress(name: &str) -> Ingress {
    Ingress::test("demo", name)
        .annotation("kubernetes.io/ingress.class", "alb")
        .annotation("alb.ingress.kubernetes.io/group.name", "shared")
        .annotation(PLAN, "stale")
        .rule(|r| r.prefix(&format!("/{name}"), "web", 80))
        .build()
}

/// The plan-annotation writes of the report: (Ingress, value after).
fn plan_writes(report: &Value) -> Vec<(String, Value)> {
    let field = format!("metadata.annotations.{PLAN}");
    report["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["writes"].as_array().unwrap().clone())
        .filter(|w| w["call"] == "kubernetes:patch Ingress" && w["changes"][0]["field"] == field)
        .map(|w| {
            let after = w["changes"][0].get("after").cloned().unwrap_or(Value::Null);
            (w["resource"].as_str().unwrap().to_string(), after)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_shows_the_dry_run_plan_patches_the_ingress_controller_makes() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let client = &k8s.client;
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "demo"}})).unwrap();
    let pp = PostParams::default();
    Api::<Namespace>::all(client.clone())
        .create(&pp, &ns)
        .await
        .unwrap();
    let svc = Service::test("demo", "web")
        .service_type("NodePort")
        .port(80, |p| p.target(8080).node_port(30080))
        .build();
    Api::<Service>::namespaced(client.clone(), "demo")
        .create(&pp, &svc)
        .await
        .unwrap();
    let ings: Api<Ingress> = Api::namespaced(client.clone(), "demo");
    for name in ["a", "b"] {
        ings.create(&pp, &ingress(name)).await.unwrap();
    }
    let run = |gate: &'static str| {
        let extra = [format!("--feature-gates=IngressPlanAnnotation={gate}")];
        let (c, kc) = (&c, &k8s.kubeconfig);
        async move { run_diff_with(c, kc, &endpoints_flag(&c.moto), &extra).await }
    };

    // Gate on: the first member's stale value becomes upstream's plan, the other's is cleared.
    let (_, report, stderr) = run("true").await;
    let mut w = plan_writes(&report);
    w.sort_by_key(|(_, after)| after.is_null());
    assert_eq!(w.len(), 2, "{report:#}\nstderr:\n{stderr}");
    let plan: Value = serde_json::from_str(w[0].1.as_str().unwrap()).unwrap();
    assert!(
        plan.get("resources").is_some(),
        "upstream's stack schema: {plan:#}"
    );
    assert_eq!(w[1].1, Value::Null, "{report:#}");

    // Gate off: both stale plans are cleared.
    let (_, report, _) = run("false").await;
    let mut w = plan_writes(&report);
    w.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        w,
        vec![
            ("demo/a".to_string(), Value::Null),
            ("demo/b".to_string(), Value::Null)
        ],
        "{report:#}"
    );

    // The VPC found by `--aws-vpc-tags`: the plan names it, as the controller's does.
    let tags = [("albc-e2e".to_string(), "diff".to_string())].into();
    c.ec2
        .create_tags(std::slice::from_ref(&c.vpc), &tags)
        .await
        .unwrap();
    let extra = [
        "--aws-vpc-tags=albc-e2e=diff".to_string(),
        "--feature-gates=IngressPlanAnnotation=true".to_string(),
    ];
    let (_, report, stderr) =
        run_diff_flags(&k8s.kubeconfig, &endpoints_flag(&c.moto), &extra).await;
    let w = plan_writes(&report);
    let plan = w
        .iter()
        .find_map(|(_, after)| after.as_str())
        .unwrap_or_else(|| panic!("no plan written: {report:#}\nstderr:\n{stderr}"));
    assert!(
        plan.contains(&format!("\"vpcID\":\"{}\"", c.vpc)),
        "the bindings' VPC is the resolved one: {plan}"
    );
    k8s.server.stop().await;
}
