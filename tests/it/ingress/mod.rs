//! The Ingress controller end to end in-process: the real `controller::ingress::run` against the
//! in-memory API server, with AWS as FakeAws (call log, faults) or moto through the SDK.

mod acm;
mod acm_create;
mod fake;
mod faults;
mod moto;
mod plan_annotation;
mod recorder;
mod safety;

use std::sync::Arc;
use std::time::Duration;

use albc_model::fixtures::{Fixture, TestObject};
use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::controller::ingress::{self, IngressConfig};
use aws_load_balancer_controller::crd::{all_crds, TargetGroupBinding};
use aws_load_balancer_controller::model::ModelConfig;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::{json, Value};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use crate::deploy::CLUSTER;
pub use crate::support::inventory::{inventory, Inventory};
pub use crate::tgb::eventually;
use aws_load_balancer_controller::aws::fake::FakeAws;

pub const WAIT: Duration = Duration::from_secs(30);

/// A VPC with three subnets in us-west-2a/b/c carrying both role tags (public and internal
/// load balancers can be placed); returns the VPC id.
pub fn network(fake: &FakeAws) -> String {
    let vpc = fake.add_vpc("10.0.0.0/16", crate::deploy::tags(&[("Name", "test")]));
    for (i, az) in ["a", "b", "c"].iter().enumerate() {
        let t = crate::deploy::tags(&[
            ("kubernetes.io/role/elb", "1"),
            ("kubernetes.io/role/internal-elb", "1"),
        ]);
        fake.add_subnet(
            &vpc,
            &format!("10.0.{}.0/24", i + 1),
            &format!("us-west-2{az}"),
            t,
        )
        .unwrap();
    }
    vpc
}

/// Controller settings for tests: fast retries, fast SG/TG delete retries, no resync.
pub fn test_config(vpc: &str) -> IngressConfig {
    IngressConfig {
        model: ModelConfig {
            cluster_name: CLUSTER.into(),
            vpc_id: Some(vpc.into()),
            ..ModelConfig::default()
        },
        max_backoff: Duration::from_millis(500),
        delete_retry: Some((Duration::from_millis(20), Duration::from_secs(5))),
        ..IngressConfig::default()
    }
}

/// API server (with our CRDs) + a controller task that can be stopped, aborted and restarted.
pub struct Harness {
    pub server: TestApiServer,
    pub client: kube::Client,
    pub elb: Arc<dyn ElbV2>,
    pub ec2: Arc<dyn Ec2>,
    pub vpc: String,
    pub cfg: IngressConfig,
    token: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Harness {
    pub async fn start(elb: Arc<dyn ElbV2>, ec2: Arc<dyn Ec2>, vpc: &str) -> Harness {
        Self::start_with(elb, ec2, vpc, test_config(vpc)).await
    }

    pub async fn start_with(
        elb: Arc<dyn ElbV2>,
        ec2: Arc<dyn Ec2>,
        vpc: &str,
        cfg: IngressConfig,
    ) -> Harness {
        let mut h = Self::new(elb, ec2, vpc, cfg).await;
        h.launch();
        h
    }

    /// API server with CRDs, controller not started yet (see [`Harness::launch`]).
    pub async fn new(
        elb: Arc<dyn ElbV2>,
        ec2: Arc<dyn Ec2>,
        vpc: &str,
        cfg: IngressConfig,
    ) -> Harness {
        let server = TestApiServer::start(Options::default()).await.unwrap();
        let client = server.client();
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in all_crds() {
            crds.create(&PostParams::default(), &crd).await.unwrap();
        }
        Harness {
            server,
            client,
            elb,
            ec2,
            vpc: vpc.to_string(),
            cfg,
            token: CancellationToken::new(),
            task: None,
        }
    }

    /// Starts a fresh controller (new caches, new deployer) against the same cluster and AWS.
    pub fn launch(&mut self) {
        self.token = CancellationToken::new();
        self.task = Some(tokio::spawn(ingress::run(
            self.client.clone(),
            self.elb.clone(),
            self.ec2.clone(),
            self.vpc.clone(),
            self.cfg.clone(),
            self.token.clone(),
        )));
    }

    /// Kills the controller mid-flight, as a crash would (no graceful shutdown).
    pub async fn crash(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
            let _ = t.await;
        }
    }

    pub async fn stop(mut self) {
        self.token.cancel();
        if let Some(t) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(10), t)
                .await
                .expect("controller stops on shutdown")
                .unwrap();
        }
        self.server.stop().await;
    }

    pub fn ingresses(&self, ns: &str) -> Api<Ingress> {
        Api::namespaced(self.client.clone(), ns)
    }

    pub fn bindings(&self) -> Api<TargetGroupBinding> {
        Api::all(self.client.clone())
    }

    /// Creates the objects of a multi-document YAML text (Services and Ingresses).
    pub async fn apply(&self, yaml: &str) {
        let docs = aws_load_balancer_controller::plan::parse_documents(yaml).unwrap();
        self.apply_objects(docs).await
    }

    /// Creates the objects of `docs`, manifests of Services and Ingresses (such as
    /// `albc_model::fixtures`' `into_value()`).
    pub async fn apply_objects(&self, docs: Vec<Value>) {
        for doc in docs {
            let kind = doc["kind"].as_str().unwrap().to_string();
            let ns = doc["metadata"]["namespace"].as_str().unwrap_or("default");
            self.namespace(ns).await;
            match kind.as_str() {
                "Service" => {
                    let s: Service = serde_json::from_value(doc.clone()).unwrap();
                    Api::<Service>::namespaced(self.client.clone(), ns)
                        .create(&PostParams::default(), &s)
                        .await
                        .unwrap();
                }
                "Ingress" => {
                    let i: Ingress = serde_json::from_value(doc.clone()).unwrap();
                    self.ingresses(ns)
                        .create(&PostParams::default(), &i)
                        .await
                        .unwrap();
                }
                other => panic!("apply: unsupported kind {other}"),
            }
        }
    }

    /// Creates namespace `ns` unless it exists.
    pub async fn namespace(&self, ns: &str) {
        let obj: k8s_openapi::api::core::v1::Namespace =
            serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(self.client.clone());
        match api.create(&PostParams::default(), &obj).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => panic!("create namespace {ns}: {e}"),
        }
    }

    pub async fn patch_ingress(&self, ns: &str, name: &str, patch: Value) {
        self.ingresses(ns)
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
    }

    pub async fn delete_ingress(&self, ns: &str, name: &str) {
        self.ingresses(ns)
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }

    pub async fn ingress(&self, ns: &str, name: &str) -> Option<Ingress> {
        self.ingresses(ns).get_opt(name).await.unwrap()
    }

    /// `status.loadBalancer.ingress[0].hostname` of an Ingress.
    pub async fn hostname(&self, ns: &str, name: &str) -> Option<String> {
        let ing = self.ingress(ns, name).await?;
        ing.status?
            .load_balancer?
            .ingress?
            .first()?
            .hostname
            .clone()
    }

    /// `(type, reason, note)` of the events about Ingress `ns/name` (see [`events_of`]).
    pub async fn events(&self, ns: &str, name: &str) -> Vec<(String, String, String)> {
        events_of(&self.client, ns, name).await
    }

    /// Reasons of the events recorded on an object named `name` in `ns` (see [`events_of`]).
    pub async fn event_reasons(&self, ns: &str, name: &str) -> Vec<String> {
        events_of(&self.client, ns, name)
            .await
            .into_iter()
            .map(|(_, reason, _)| reason)
            .filter(|r| !r.is_empty())
            .collect()
    }
}

/// Path patterns of a rule.
pub fn paths(r: &Rule) -> Vec<String> {
    r.conditions
        .iter()
        .filter_map(|c| match c {
            aws_load_balancer_controller::model::RuleCondition::PathPattern { config } => {
                Some(config.values.clone())
            }
            _ => None,
        })
        .flatten()
        .collect()
}

/// Two NodePort Services and an Ingress `demo/app` with two paths (`/api` → back, `/` → front).
pub const DEMO: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: front, namespace: demo}
spec: {type: NodePort, selector: {app: front}, ports: [{port: 80, targetPort: 8080, nodePort: 30090}]}
---
apiVersion: v1
kind: Service
metadata: {name: back, namespace: demo}
spec: {type: NodePort, selector: {app: back}, ports: [{port: 8080, targetPort: 8080, nodePort: 30091}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: app
  namespace: demo
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/scheme: internet-facing
spec:
  rules:
  - http:
      paths:
      - {path: /api, pathType: Prefix, backend: {service: {name: back, port: {number: 8080}}}}
      - {path: /, pathType: Prefix, backend: {service: {name: front, port: {number: 80}}}}
"#;

/// A NodePort Service `ns/name` and an Ingress of the same name routing `/name` to it, of the
/// class `alb` (annotation), in `group` (explicit, with `order`) or implicit when `group` is
/// None.
pub fn app(ns: &str, name: &str, node_port: i32, group: Option<(&str, i32)>) -> Vec<Value> {
    app_with(ns, name, node_port, group, None, |ingress| ingress)
}

/// [`app`] with its rule for `host` (for any host when None) and the Ingress (its annotations
/// and rule set) as `ingress` makes it.
pub fn app_with(
    ns: &str,
    name: &str,
    node_port: i32,
    group: Option<(&str, i32)>,
    host: Option<&str>,
    ingress: impl FnOnce(Fixture<Ingress>) -> Fixture<Ingress>,
) -> Vec<Value> {
    let service = Service::test(ns, name)
        .service_type("NodePort")
        .port(80, |p| p.target(8080).node_port(node_port));
    let path = format!("/{name}");
    let mut ing = Ingress::test(ns, name)
        .annotation("kubernetes.io/ingress.class", "alb")
        .rule(|r| match host {
            Some(host) => r.host(host).prefix(&path, name, 80),
            None => r.prefix(&path, name, 80),
        });
    if let Some((g, order)) = group {
        ing = ing
            .annotation("alb.ingress.kubernetes.io/group.name", g)
            .annotation("alb.ingress.kubernetes.io/group.order", &order.to_string());
    }
    vec![service.into_value(), ingress(ing).into_value()]
}

pub fn json_of<T: serde::Serialize>(v: &T) -> Value {
    json!(v)
}

/// `(type, reason, note)` of the events about the object `ns/name`. One table behind both event
/// APIs (as in kube-apiserver): events.k8s.io lists those written through core/v1 too, each once.
pub async fn events_of(
    client: &kube::Client,
    ns: &str,
    name: &str,
) -> Vec<(String, String, String)> {
    let evs: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(client.clone(), ns);
    evs.list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .map(|e| {
            let s = |v: Option<String>| v.unwrap_or_default();
            (s(e.type_), s(e.reason), s(e.note))
        })
        .collect()
}
