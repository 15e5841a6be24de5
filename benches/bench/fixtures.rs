//! What several benches start from: group-shaped Ingress manifests (and the same objects in an
//! API server), LoadBalancer Services, a fake account with a VPC and three internal subnets,
//! behind upstream's default client throttles and retries, and the readers of the controllers'
//! reconcile counters.

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::{Caller, Tags};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Service as CoreService};
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, PostParams};
use prometheus_client::registry::Registry;
use serde_json::json;

/// `groups` explicit groups of `per_group` Ingresses, each with its own NodePort Service.
pub fn ingress_manifests(groups: usize, per_group: usize) -> String {
    let mut y = String::new();
    for g in 0..groups {
        for i in 0..per_group {
            y.push_str(&format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: svc{i}, namespace: ns{g}, uid: u-{g}-{i}}}\n\
                 spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080, nodePort: {np}}}]}}\n---\n\
                 apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: ing{i}\n  namespace: ns{g}\n  annotations:\n\
                 \x20   kubernetes.io/ingress.class: alb\n    alb.ingress.kubernetes.io/group.name: group{g}\n\
                 spec:\n  rules:\n  - host: app{i}.group{g}.example.com\n    http:\n      paths:\n\
                 \x20     - {{path: /, pathType: Prefix, backend: {{service: {{name: svc{i}, port: {{number: 80}}}}}}}}\n---\n",
                np = 30000 + i
            ));
        }
    }
    y
}

/// A fake account (upstream's default throttles, 10 SDK retries) with a VPC and one internal
/// subnet in each of three zones; returns it and the VPC id.
pub fn fake_account() -> (Arc<FakeAws>, String) {
    let caller = Caller::from_flags(&[], 10, None);
    let fake = Arc::new(FakeAws::with_caller("us-west-2", caller));
    let vpc = fake.add_vpc("10.0.0.0/16", Tags::new());
    for (i, az) in ["a", "b", "c"].iter().enumerate() {
        let role: Tags = [(
            "kubernetes.io/role/internal-elb".to_string(),
            "1".to_string(),
        )]
        .into();
        fake.add_subnet(
            &vpc,
            &format!("10.0.{i}.0/24"),
            &format!("us-west-2{az}"),
            role,
        )
        .expect("subnet");
    }
    (fake, vpc)
}

/// An API test server with our CRDs installed (the controllers' benches run against it).
pub async fn api_server_with_crds() -> kube_test_apiserver::TestApiServer {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let server = kube_test_apiserver::TestApiServer::start(kube_test_apiserver::Options::default())
        .await
        .expect("apiserver");
    let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    for crd in aws_load_balancer_controller::crd::all_crds() {
        crds.create(&PostParams::default(), &crd).await.unwrap();
    }
    server
}

/// Namespaces `ns0`.. with, per group `g`, `per_group` NodePort Services `svc{i}` and Ingresses
/// `ing{i}` of the explicit group `group{g}` (the objects of [`ingress_manifests`], created in
/// an API server).
pub async fn ingress_objects(client: &kube::Client, groups: usize, per_group: usize) {
    // A group's objects in order, groups side by side: it is all set up before the clock starts.
    futures::stream::iter(0..groups)
        .for_each_concurrent(16, |g| group_objects(client, g, per_group))
        .await;
}

/// Group `g`'s namespace, and per Ingress its NodePort Service and the Ingress.
async fn group_objects(client: &kube::Client, g: usize, per_group: usize) {
    let pp = PostParams::default();
    let ns = format!("ns{g}");
    let n: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&pp, &n)
        .await
        .unwrap();
    for i in 0..per_group {
        let svc: CoreService = serde_json::from_value(json!({
            "metadata": {"name": format!("svc{i}"), "namespace": ns},
            "spec": {"type": "NodePort", "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30000 + i}]}
        }))
        .unwrap();
        Api::<CoreService>::namespaced(client.clone(), &ns)
            .create(&pp, &svc)
            .await
            .unwrap();
        Api::<Ingress>::namespaced(client.clone(), &ns)
            .create(
                &pp,
                &ingress_object(g, i, &format!("app{i}.group{g}.example.com")),
            )
            .await
            .unwrap();
    }
}

/// Ingress `ns{g}/ing{i}` of group `group{g}`: one rule for `host` to `svc{i}:80`.
pub fn ingress_object(g: usize, i: usize, host: &str) -> Ingress {
    serde_json::from_value(json!({
        "metadata": {"name": format!("ing{i}"), "namespace": format!("ns{g}"), "annotations": {
            "kubernetes.io/ingress.class": "alb",
            "alb.ingress.kubernetes.io/group.name": format!("group{g}")}},
        "spec": {"rules": [{"host": host, "http": {"paths": [
            {"path": "/", "pathType": "Prefix",
             "backend": {"service": {"name": format!("svc{i}"), "port": {"number": 80}}}}]}}]}
    }))
    .unwrap()
}

pub fn ingress_has_status(i: &Ingress) -> bool {
    i.status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|l| l.ingress.as_ref())
        .is_some_and(|v| !v.is_empty())
}

/// How many Ingresses show their load balancer in status.
pub async fn ingresses_with_status(client: &kube::Client) -> usize {
    Api::<Ingress>::all(client.clone())
        .list(&Default::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
        .iter()
        .filter(|i| ingress_has_status(i))
        .count()
}

/// Namespaces `{prefix}0`.. each with `per_namespace` LoadBalancer Services `svc{i}` (class
/// `service.k8s.aws/nlb`, one TCP port, node port `30000 + i`).
pub async fn lb_service_objects(
    client: &kube::Client,
    prefix: &str,
    namespaces: usize,
    per_namespace: usize,
) {
    let pp = PostParams::default();
    for n in 0..namespaces {
        let ns = format!("{prefix}{n}");
        let obj: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        Api::<Namespace>::all(client.clone())
            .create(&pp, &obj)
            .await
            .unwrap();
        for i in 0..per_namespace {
            let svc: CoreService = serde_json::from_value(json!({
                "metadata": {"name": format!("svc{i}"), "namespace": ns},
                "spec": {"type": "LoadBalancer", "loadBalancerClass": "service.k8s.aws/nlb",
                         "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30000 + i, "protocol": "TCP"}]}
            }))
            .unwrap();
            Api::<CoreService>::namespaced(client.clone(), &ns)
                .create(&pp, &svc)
                .await
                .unwrap();
        }
    }
}

/// How many Services show their load balancer in status.
pub async fn services_with_status(client: &kube::Client) -> usize {
    Api::<CoreService>::all(client.clone())
        .list(&Default::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
        .iter()
        .filter(|s| {
            s.status
                .as_ref()
                .and_then(|s| s.load_balancer.as_ref())
                .and_then(|l| l.ingress.as_ref())
                .is_some_and(|v| !v.is_empty())
        })
        .count()
}

/// `op n, op n, ...` of operation names, by name.
pub fn by_op(ops: &[String]) -> String {
    let mut m: BTreeMap<&str, usize> = BTreeMap::new();
    for o in ops {
        *m.entry(o).or_default() += 1;
    }
    m.iter()
        .map(|(o, n)| format!("{o} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `controller_runtime_reconcile_total{controller="<controller>"}` in `registry`, by `result`
/// (`success`, `error`, `requeue`, `requeue_after`).
pub fn reconciles(registry: &Registry, controller: &str) -> BTreeMap<String, u64> {
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, registry).unwrap();
    let wanted = format!(r#"controller="{controller}""#);
    out.lines()
        .filter(|l| l.starts_with("controller_runtime_reconcile_total{") && l.contains(&wanted))
        .filter_map(|l| {
            let result = l.split(r#"result=""#).nth(1)?.split('"').next()?;
            let n = l.rsplit(' ').next()?.parse().ok()?;
            Some((result.to_string(), n))
        })
        .collect()
}
