//! End-to-end tests of the TargetGroupBinding controller: the real controller loop against the
//! in-memory API server, with AWS as the in-memory fake or a private moto_server.

mod fake;
mod gate_polls;
mod moto;
mod networking;
mod networking_moto;
mod node_selector;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use albc_model::fixtures::{PortRef, TestObject};
use aws_load_balancer_controller::aws::fake::{spec, FakeAws};
use aws_load_balancer_controller::aws::{Ec2, ElbV2, TargetDescription};
use aws_load_balancer_controller::controller::tgb::{self, TgbConfig};
use aws_load_balancer_controller::crd::{all_crds, TargetGroupBinding};
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;

pub const NS: &str = "default";

/// API server + running controller; `stop` shuts both down.
pub struct Harness {
    pub server: TestApiServer,
    pub client: kube::Client,
    token: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Harness {
    /// EC2 is an empty fake: only bindings with `spec.networking` would use it.
    pub async fn start(elb: Arc<dyn ElbV2>, vpc_cidr: &str) -> Harness {
        Self::start_with(elb, Arc::new(FakeAws::new()), vpc_cidr, |_| {}).await
    }

    pub async fn start_with(
        elb: Arc<dyn ElbV2>,
        ec2: Arc<dyn Ec2>,
        vpc_cidr: &str,
        tweak: impl FnOnce(&mut TgbConfig),
    ) -> Harness {
        let server = TestApiServer::start(Options::default()).await.unwrap();
        let client = server.client();
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in all_crds() {
            crds.create(&PostParams::default(), &crd).await.unwrap();
        }
        let mut cfg = TgbConfig {
            requeue: Duration::from_millis(200),
            max_backoff: Duration::from_secs(1),
            vpc_cidrs: vec![vpc_cidr.parse().unwrap()],
            ..TgbConfig::default()
        };
        tweak(&mut cfg);
        let token = CancellationToken::new();
        let task = tokio::spawn(tgb::run(client.clone(), elb, ec2, cfg, token.clone()));
        Harness {
            server,
            client,
            token,
            task,
        }
    }

    pub async fn stop(self) {
        self.token.cancel();
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("controller stops on shutdown")
            .unwrap();
        self.server.stop().await;
    }

    pub fn pods(&self) -> Api<Pod> {
        Api::namespaced(self.client.clone(), NS)
    }

    pub fn bindings(&self) -> Api<TargetGroupBinding> {
        Api::namespaced(self.client.clone(), NS)
    }

    pub fn slices(&self) -> Api<EndpointSlice> {
        Api::namespaced(self.client.clone(), NS)
    }

    pub fn config_maps(&self) -> Api<ConfigMap> {
        Api::namespaced(self.client.clone(), NS)
    }

    /// A Service `name` of `type_` selecting `app: name`, with `ports` (a manifest's list).
    pub async fn service(&self, name: &str, type_: &str, ports: serde_json::Value) {
        let svc = Service::test(NS, name)
            .service_type(type_)
            .selector("app", name)
            .ports(ports)
            .build();
        Api::<Service>::namespaced(self.client.clone(), NS)
            .create(&PostParams::default(), &svc)
            .await
            .unwrap();
    }

    /// A running pod on `node` with `ip`, ContainersReady, gated on `gate_binding` (Ready False
    /// while the gate is open, as the kubelet would report it).
    pub async fn pod(&self, name: &str, ip: &str, node: &str, gate_binding: Option<&str>) {
        let gates: Vec<_> = gate_binding
            .map(|b| json!({ "conditionType": format!("target-health.elbv2.k8s.aws/{b}") }))
            .into_iter()
            .collect();
        let pod: Pod = serde_json::from_value(json!({
            "metadata": { "name": name, "namespace": NS, "labels": { "app": "web" } },
            "spec": {
                "nodeName": node,
                "containers": [{ "name": "c", "image": "nginx" }],
                "readinessGates": gates,
            }
        }))
        .unwrap();
        self.pods()
            .create(&PostParams::default(), &pod)
            .await
            .unwrap();
        let status = json!({ "status": {
            "phase": "Running",
            "podIP": ip,
            "conditions": [
                { "type": "ContainersReady", "status": "True" },
                { "type": "Ready", "status": if gates.is_empty() { "True" } else { "False" } },
            ]
        }});
        self.pods()
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .unwrap();
    }

    pub async fn node(&self, name: &str, instance: &str, labels: serde_json::Value) {
        let node: Node = serde_json::from_value(json!({
            "metadata": { "name": name, "labels": labels },
            "spec": { "providerID": format!("aws:///us-west-2a/{instance}") },
            "status": { "conditions": [{ "type": "Ready", "status": "True" }] }
        }))
        .unwrap();
        Api::<Node>::all(self.client.clone())
            .create(&PostParams::default(), &node)
            .await
            .unwrap();
    }

    /// Creates or replaces the Service's one EndpointSlice; endpoints are `(pod, ip, ready)`.
    pub async fn endpoints(
        &self,
        svc: &str,
        port_name: &str,
        port: i32,
        eps: &[(&str, &str, bool)],
    ) {
        let endpoints: Vec<_> = eps
            .iter()
            .map(|(pod, ip, ready)| {
                json!({
                    "addresses": [ip],
                    "conditions": { "ready": ready, "serving": ready, "terminating": false },
                    "nodeName": "node-a",
                    "targetRef": { "kind": "Pod", "name": pod, "namespace": NS }
                })
            })
            .collect();
        let slice = json!({
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": format!("{svc}-abc"),
                "namespace": NS,
                "labels": { "kubernetes.io/service-name": svc }
            },
            "addressType": "IPv4",
            "ports": [{ "name": port_name, "port": port, "protocol": "TCP" }],
            "endpoints": endpoints,
        });
        self.slices()
            .patch(
                &format!("{svc}-abc"),
                &PatchParams::apply("test").force(),
                &Patch::Apply(&slice),
            )
            .await
            .unwrap();
    }

    /// A binding `name` of the target group `arn` to Service `svc`'s `port` (number or name).
    pub async fn binding(
        &self,
        name: &str,
        svc: &str,
        port: impl Into<PortRef>,
        arn: &str,
        target_type: &str,
    ) {
        let tgb = TargetGroupBinding::test(NS, name)
            .arn(arn)
            .target_type(target_type)
            .service_ref(svc, port)
            .build();
        self.bindings()
            .create(&PostParams::default(), &tgb)
            .await
            .unwrap();
    }

    /// `(status, reason, message)` of the pod's gate condition for `binding`.
    pub async fn gate(&self, pod: &str, binding: &str) -> Option<(String, String, String)> {
        let p = self.pods().get(pod).await.ok()?;
        let t = format!("target-health.elbv2.k8s.aws/{binding}");
        p.status?
            .conditions?
            .into_iter()
            .find(|c| c.type_ == t)
            .map(|c| {
                (
                    c.status,
                    c.reason.unwrap_or_default(),
                    c.message.unwrap_or_default(),
                )
            })
    }
}

pub async fn ip_tg(elb: &dyn ElbV2, name: &str, vpc: &str, target_type: &str) -> String {
    let target_type = match target_type {
        "ip" => aws_load_balancer_controller::model::TargetType::Ip,
        "instance" => aws_load_balancer_controller::model::TargetType::Instance,
        other => panic!("no {other} target groups here"),
    };
    let tg = spec::target_group(
        name,
        target_type,
        aws_load_balancer_controller::model::Protocol::Http,
        80,
    );
    elb.create_target_group((&tg).into(), vpc)
        .await
        .unwrap()
        .arn
}

/// Registered target `id:port`s of the group, sorted.
pub async fn targets(elb: &dyn ElbV2, arn: &str) -> Vec<String> {
    let mut v: Vec<String> = elb
        .describe_target_health(arn, &[])
        .await
        .unwrap()
        .into_iter()
        .map(|t| format!("{}:{}", t.target.id, t.target.port.unwrap_or_default()))
        .collect();
    v.sort();
    v
}

pub fn target(id: &str, port: u16) -> TargetDescription {
    TargetDescription::new(id, port)
}

/// Polls `check` until it returns true; panics with `what` after `timeout`.
pub async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if check().await {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub const WAIT: Duration = Duration::from_secs(20);
