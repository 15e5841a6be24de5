//! Tests of the stack deployer: FakeAws for the idempotency, edit, deletion and fault cases
//! (call counts from its log), moto for a real-SDK deploy and adoption of upstream-made resources;
//! the `nlb*` modules do the same for Service (NLB) stacks.
//! `shared_inventory` covers the inventory of the VPC the deployers of a process share.

mod acm_create;
pub(crate) mod acm_discovery;
mod addons;
pub mod addons_moto;
mod aga;
mod faults;
mod frontend_nlb;
mod functional;
mod gates;
mod ip_pools;
mod jwt;
mod listener_certs;
mod moto;
mod mtls;
mod nlb;
mod nlb_changes;
mod nlb_families;
mod nlb_faults;
mod nlb_moto;
mod oidc;
mod refusals;
mod shared_inventory;
mod target_control;
mod transforms;

use std::path::Path;
use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::Tags;
use aws_load_balancer_controller::model::{self, BuildEnv, ClusterObjects, ModelConfig, Stack};
use aws_load_balancer_controller::plan::add_manifests;

pub const CLUSTER: &str = "prod";

/// Two Services and an explicit group `shop` of two Ingresses (api: two paths, web: one).
pub const SHOP: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop, uid: 11111111-2222-3333-4444-555555555555}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop, uid: 66666666-7777-8888-9999-000000000000}
spec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30081}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  namespace: shop
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/group.name: shop
    alb.ingress.kubernetes.io/group.order: "1"
    alb.ingress.kubernetes.io/tags: Team=api
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /api/v1, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
      - {path: /healthz, pathType: Exact, backend: {service: {name: api, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/group.name: shop
    alb.ingress.kubernetes.io/group.order: "2"
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#;

/// Builds every group in `yaml` with the model builder (subnets left to discovery).
pub fn build_stacks(yaml: &str, vpc_id: &str) -> Vec<Stack> {
    let mut objs = ClusterObjects::default();
    add_manifests(&mut objs, yaml, Path::new("inline.yaml")).unwrap();
    let cfg = ModelConfig {
        cluster_name: CLUSTER.into(),
        vpc_id: Some(vpc_id.into()),
        ..ModelConfig::default()
    };
    let (groups, errors) = model::load_groups(&objs, &cfg.ingress_class);
    assert!(errors.is_empty(), "{errors:?}");
    groups
        .values()
        .map(|g| model::build_stack(g, &objs, &cfg, &BuildEnv::default()).unwrap())
        .collect()
}

pub fn build_one(yaml: &str, vpc_id: &str) -> Stack {
    let mut v = build_stacks(yaml, vpc_id);
    assert_eq!(v.len(), 1);
    v.remove(0)
}

pub fn tags(kv: &[(&str, &str)]) -> Tags {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A VPC with three public-role subnets in us-west-2a/b/c; returns the VPC id.
pub fn network(fake: &FakeAws) -> String {
    let vpc = fake.add_vpc("10.0.0.0/16", tags(&[("Name", "test")]));
    for (i, az) in ["a", "b", "c"].iter().enumerate() {
        fake.add_subnet(
            &vpc,
            &format!("10.0.{}.0/24", i + 1),
            &format!("us-west-2{az}"),
            tags(&[("kubernetes.io/role/elb", "1")]),
        )
        .unwrap();
    }
    vpc
}

/// Operation names of the write calls, e.g. `["CreateRule", "ModifyRule"]`.
pub fn write_ops(fake: &FakeAws) -> Vec<String> {
    fake.write_calls().into_iter().map(|(_, op)| op).collect()
}

pub fn fake() -> Arc<FakeAws> {
    Arc::new(FakeAws::new())
}

/// Makes call `n` (named `what`) of a deploy of `stack` fail with a 500, as a crash would stop
/// it there; then a fresh deploy must repair everything (`converged` checks the account) and
/// the one after it make no write.
pub async fn fail_call_then_repair<F: std::future::Future<Output = ()>>(
    fake: &Arc<FakeAws>,
    vpc: &str,
    stack: &Stack,
    (n, what): (u64, &str),
    converged: impl FnOnce() -> F,
) {
    fake.fail_nth_call(
        n,
        aws_load_balancer_controller::aws::AwsError::from_code(
            "InternalFailure",
            "crash",
            Some(500),
        ),
    );
    let first = functional::deployer(fake, vpc).deploy(stack).await;
    assert!(first.is_err(), "call {n} ({what}) was made to fail");
    functional::deployer(fake, vpc).deploy(stack).await.unwrap();
    converged().await;
    fake.clear_calls();
    functional::deployer(fake, vpc).deploy(stack).await.unwrap();
    assert_eq!(
        write_ops(fake),
        Vec::<String>::new(),
        "after failing call {n} ({what})"
    );
}
