//! WAFv2 on moto through the real SDK clients (`aws::build_addons` with `--aws-api-endpoints`,
//! upstream's default WAF throttles): `wafv2-acl-arn` associates, `wafv2-acl-name` is resolved
//! with ListWebACLs and replaces it, an absent annotation leaves a hand-made association alone,
//! `none` disassociates, and an unchanged second deploy sends no write.

use std::collections::BTreeMap;

use prometheus_client::registry::Registry;

use aws_load_balancer_controller::aws::fence::is_write;
use aws_load_balancer_controller::aws::{
    build_addons, parse_api_endpoints, AddonClients, AwsConfig, AwsMetrics,
};
use aws_load_balancer_controller::deploy::Deployer;

use super::*;
use crate::support::moto_cloud::{calls_by_op, cloud, Cloud};

const APP: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: front, namespace: demo, uid: aaaaaaaa-0000-0000-0000-000000000011}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30095}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: waf
  namespace: demo
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/scheme: internet-facing
EXTRA
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: front, port: {number: 80}}}}
"#;

fn stack(c: &Cloud, extra: &str) -> Stack {
    build_one(&APP.replace("EXTRA\n", extra), &c.vpc)
}

fn ann(key: &str, value: &str) -> String {
    format!("    alb.ingress.kubernetes.io/{key}: '{value}'\n")
}

pub fn raw_wafv2(endpoint: &str) -> aws_sdk_wafv2::Client {
    use aws_sdk_wafv2::config::{BehaviorVersion, Credentials, Region};
    aws_sdk_wafv2::Client::from_conf(
        aws_sdk_wafv2::config::Builder::new()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-west-2"))
            .endpoint_url(endpoint)
            .credentials_provider(Credentials::new("testing", "testing", None, None, "test"))
            .build(),
    )
}

pub async fn create_acl(waf: &aws_sdk_wafv2::Client, name: &str) -> String {
    use aws_sdk_wafv2::types::{AllowAction, DefaultAction, Scope, VisibilityConfig};
    let out = waf
        .create_web_acl()
        .name(name)
        .scope(Scope::Regional)
        .default_action(
            DefaultAction::builder()
                .allow(AllowAction::builder().build())
                .build(),
        )
        .visibility_config(
            VisibilityConfig::builder()
                .sampled_requests_enabled(false)
                .cloud_watch_metrics_enabled(false)
                .metric_name(name)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    out.summary().unwrap().arn().unwrap().to_string()
}

pub async fn acl_of(waf: &aws_sdk_wafv2::Client, lb: &str) -> Option<String> {
    let out = waf
        .get_web_acl_for_resource()
        .resource_arn(lb)
        .send()
        .await
        .unwrap();
    out.web_acl().map(|a| a.arn().to_string())
}

/// Calls per operation of the ELBv2/EC2 clients and of the add-on clients (`addons`).
fn calls(c: &Cloud, addons: &Registry) -> BTreeMap<String, f64> {
    let mut all = calls_by_op(&c.registry);
    for (op, n) in calls_by_op(addons) {
        *all.entry(op).or_default() += n;
    }
    all
}

async fn disassociate(waf: &aws_sdk_wafv2::Client, lb: &str) {
    waf.disassociate_web_acl()
        .resource_arn(lb)
        .send()
        .await
        .unwrap();
}

/// Write operations (any service) whose count grew since `before`.
fn writes_since(c: &Cloud, addons: &Registry, before: &BTreeMap<String, f64>) -> Vec<String> {
    calls(c, addons)
        .into_iter()
        .filter(|(op, _)| is_write(op))
        .filter_map(|(op, v)| {
            let d = v - before.get(&op).copied().unwrap_or(0.0);
            (d > 0.0).then(|| format!("{op}={d}"))
        })
        .collect()
}

/// The add-on clients as the binary builds them, pointed at moto, counted in their registry.
async fn addon_clients(c: &Cloud) -> (AddonClients, Registry) {
    let cfg = AwsConfig {
        region: Some("us-west-2".into()),
        api_endpoints: parse_api_endpoints(&format!(
            "wafv2={0},waf-regional={0},shield={0}",
            c.moto.endpoint
        ))
        .unwrap(),
        ..Default::default()
    };
    let mut registry = Registry::default();
    let metrics = AwsMetrics::register(&mut registry);
    let clients = build_addons(&cfg, "us-west-2", Some(metrics), Default::default()).await;
    (clients, registry)
}

fn deployer(c: &Cloud, addons: &AddonClients) -> Deployer {
    Deployer::new(c.elb.clone(), c.ec2.clone(), CLUSTER, c.vpc.clone())
        .with_delete_retry(
            std::time::Duration::from_millis(100),
            std::time::Duration::from_secs(5),
        )
        .with_addons(addons.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wafv2_by_arn_then_by_name_absent_leaves_it_none_disassociates_on_moto() {
    let c = cloud().await;
    let (addons, reg) = addon_clients(&c).await;
    let waf = raw_wafv2(&c.moto.endpoint);
    let a = create_acl(&waf, "acl-a").await;
    let b = create_acl(&waf, "acl-b").await;
    let d = deployer(&c, &addons);

    // wafv2-acl-arn: associated right after the load balancer exists.
    let lb = d
        .deploy(&stack(&c, &ann("wafv2-acl-arn", &a)))
        .await
        .unwrap()
        .load_balancer
        .unwrap()
        .arn;
    assert_eq!(acl_of(&waf, &lb).await, Some(a.clone()));
    let before = calls(&c, &reg);
    d.deploy(&stack(&c, &ann("wafv2-acl-arn", &a)))
        .await
        .unwrap();
    assert_eq!(
        writes_since(&c, &reg, &before),
        Vec::<String>::new(),
        "second deploy"
    );
    // A fresh deployer (nothing remembered) reads the association and writes nothing either.
    let before = calls(&c, &reg);
    deployer(&c, &addons)
        .deploy(&stack(&c, &ann("wafv2-acl-arn", &a)))
        .await
        .unwrap();
    assert_eq!(writes_since(&c, &reg, &before), Vec::<String>::new());
    assert_eq!(
        calls(&c, &reg).get("GetWebACLForResource").copied(),
        Some(2.0)
    );

    // wafv2-acl-name: resolved to b's ARN, which replaces a.
    let before = calls(&c, &reg);
    d.deploy(&stack(&c, &ann("wafv2-acl-name", "acl-b")))
        .await
        .unwrap();
    assert_eq!(writes_since(&c, &reg, &before), vec!["AssociateWebACL=1"]);
    let before = calls(&c, &reg);
    d.deploy(&stack(&c, &ann("wafv2-acl-name", "acl-b")))
        .await
        .unwrap();
    assert_eq!(
        writes_since(&c, &reg, &before),
        Vec::<String>::new(),
        "second deploy"
    );
    // AWS replaces the association; moto 5.2.5 adds b's beside a's and still answers a. Taking
    // off the oldest one (a's) shows b's, then the next one clears the load balancer.
    disassociate(&waf, &lb).await;
    assert_eq!(acl_of(&waf, &lb).await, Some(b.clone()));
    disassociate(&waf, &lb).await;
    assert_eq!(acl_of(&waf, &lb).await, None);
    assert_eq!(calls(&c, &reg).get("ListWebACLs").copied(), Some(1.0));

    // Absent: a web ACL attached outside the controller (Firewall Manager, by hand) stays.
    waf.associate_web_acl()
        .web_acl_arn(&a)
        .resource_arn(&lb)
        .send()
        .await
        .unwrap();
    let d = deployer(&c, &addons);
    let before = calls(&c, &reg);
    d.deploy(&stack(&c, "")).await.unwrap();
    assert_eq!(acl_of(&waf, &lb).await, Some(a.clone()));
    assert_eq!(writes_since(&c, &reg, &before), Vec::<String>::new());

    // `none`: disassociated.
    let before = calls(&c, &reg);
    d.deploy(&stack(&c, &ann("wafv2-acl-arn", "none")))
        .await
        .unwrap();
    assert_eq!(acl_of(&waf, &lb).await, None);
    assert_eq!(
        writes_since(&c, &reg, &before),
        vec!["DisassociateWebACL=1"]
    );
    let before = calls(&c, &reg);
    d.deploy(&stack(&c, &ann("wafv2-acl-arn", "none")))
        .await
        .unwrap();
    assert_eq!(
        writes_since(&c, &reg, &before),
        Vec::<String>::new(),
        "second deploy"
    );

    // A name moto does not know: the deploy stops before any write (the edit does not go out).
    let before = calls(&c, &reg);
    let mut edited = stack(&c, &ann("wafv2-acl-name", "acl-missing"));
    edited
        .load_balancer
        .as_mut()
        .unwrap()
        .attributes
        .insert("idle_timeout.timeout_seconds".into(), "120".into());
    let err = d.deploy(&edited).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "couldn't find WAFv2 WebACL with name: acl-missing"
    );
    assert_eq!(writes_since(&c, &reg, &before), Vec::<String>::new());
}
