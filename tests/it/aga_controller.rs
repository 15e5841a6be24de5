//! The GlobalAccelerator controller in-process (`controller::aga::run`) against the API test
//! server and FakeAws: an accelerator follows the ALB its Ingress's status names (created with
//! the finalizer first, status filled, Ready once AWS reports DEPLOYED, the endpoint replaced
//! when the Ingress's hostname moves to another ALB, nothing written by a pass with nothing to
//! do) and goes with its object (disabled, waited for, deleted, and only then the finalizer
//! released); a missing Service is a Warning endpoint (left out, upstream's event) picked up
//! when it appears; a Gateway endpoint without the Gateway API is upstream's fatal load error;
//! a ReferenceGrant lets a cross-namespace endpoint in on its own event.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fake::{spec, FakeAws};
use aws_load_balancer_controller::aws::{Ec2, Ec2Query, ElbV2, Service as AwsService};
use aws_load_balancer_controller::controller::aga::{self, AgaControllerConfig};
use aws_load_balancer_controller::crd::all_crds;
use aws_load_balancer_controller::crd::global_accelerator::{
    GlobalAccelerator, GlobalAcceleratorStatus, FINALIZER,
};
use aws_load_balancer_controller::model::ModelConfig;
use aws_load_balancer_controller::watch::gateway::resource_as;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::deploy::CLUSTER;
use crate::ingress::{events_of, network};
use crate::tgb::eventually;

const WAIT: Duration = Duration::from_secs(30);
const NS: &str = "edge";

/// Test settings: the gate on, fast retries, short requeues (upstream's minute and the
/// deployer's 10 s would only slow the tests down).
fn config() -> AgaControllerConfig {
    AgaControllerConfig {
        model: ModelConfig {
            cluster_name: CLUSTER.into(),
            feature_gates: BTreeMap::from([("GlobalAcceleratorController".to_string(), true)]),
            ..ModelConfig::default()
        },
        region: "us-west-2".into(),
        base_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(500),
        provisioning_requeue: Duration::from_millis(200),
        deletion_requeue: Duration::from_millis(200),
        ..AgaControllerConfig::default()
    }
}

struct Running {
    /// Kept for the test's length (dropping it stops the API server).
    _server: TestApiServer,
    client: kube::Client,
    fake: Arc<FakeAws>,
    subnets: Vec<String>,
    token: CancellationToken,
}

impl Running {
    /// API server with our CRDs (and the Gateway API's with `gateway_api`), FakeAws with a VPC,
    /// the controller started with `cfg`.
    async fn start(cfg: AgaControllerConfig, gateway_api: bool) -> Running {
        let fake = Arc::new(FakeAws::new());
        let vpc = network(&fake);
        let subnets: Vec<String> = fake
            .describe_subnets(&Ec2Query::default().filter("vpc-id", [vpc]))
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect();
        let server = TestApiServer::start(Options::default()).await.unwrap();
        let client = server.client();
        if gateway_api {
            crate::support::gateway_crds::install(&client).await;
        } else {
            let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
            for crd in all_crds() {
                crds.create(&PostParams::default(), &crd).await.unwrap();
            }
        }
        for ns in [NS, "shop"] {
            let obj: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
            Api::<Namespace>::all(client.clone())
                .create(&PostParams::default(), &obj)
                .await
                .unwrap();
        }
        let token = CancellationToken::new();
        tokio::spawn(aga::run(
            client.clone(),
            fake.clone(),
            fake.clone(),
            cfg,
            token.clone(),
        ));
        Running {
            _server: server,
            client,
            fake,
            subnets,
            token,
        }
    }

    /// An internet-facing ALB in the fake; its ARN and (lower-cased, as the Ingress status has
    /// it) DNS name.
    async fn alb(&self, name: &str) -> (String, String) {
        let lb = self
            .fake
            .create_load_balancer(&spec::alb(name, &self.subnets[..2], &[]))
            .await
            .unwrap();
        (lb.arn, lb.dns_name.to_ascii_lowercase())
    }

    fn accelerators(&self, ns: &str) -> Api<GlobalAccelerator> {
        Api::namespaced(self.client.clone(), ns)
    }

    async fn create_accelerator(&self, ns: &str, name: &str, listeners: Value) {
        let ga: GlobalAccelerator = serde_json::from_value(json!({
            "apiVersion": "aga.k8s.aws/v1beta1", "kind": "GlobalAccelerator",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"listeners": listeners}
        }))
        .unwrap();
        self.accelerators(ns)
            .create(&PostParams::default(), &ga)
            .await
            .unwrap();
    }

    async fn object(&self, ns: &str, name: &str) -> Option<GlobalAccelerator> {
        self.accelerators(ns).get_opt(name).await.unwrap()
    }

    async fn status(&self, ns: &str, name: &str) -> GlobalAcceleratorStatus {
        self.object(ns, name)
            .await
            .and_then(|g| g.status)
            .unwrap_or_default()
    }

    /// An Ingress `ns/name` whose status names `dns` with port 80 (what the Ingress controller
    /// writes for an ALB listening on 80).
    async fn ingress(&self, ns: &str, name: &str, dns: &str) {
        let ing: Ingress = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": ns},
            "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}
        }))
        .unwrap();
        let api: Api<Ingress> = Api::namespaced(self.client.clone(), ns);
        api.create(&PostParams::default(), &ing).await.unwrap();
        self.ingress_status(ns, name, dns).await;
    }

    async fn ingress_status(&self, ns: &str, name: &str, dns: &str) {
        let api: Api<Ingress> = Api::namespaced(self.client.clone(), ns);
        let status = json!({"status": {"loadBalancer": {"ingress": [
            {"hostname": dns, "ports": [{"port": 80, "protocol": "TCP"}]}
        ]}}});
        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .unwrap();
    }

    /// The Global Accelerator writes that reached the fake.
    fn ga_writes(&self) -> Vec<String> {
        self.fake
            .write_calls()
            .into_iter()
            .filter(|(s, _)| *s == AwsService::GlobalAccelerator)
            .map(|(_, op)| op)
            .collect()
    }

    /// The endpoint ids of every endpoint group of every accelerator in the fake.
    fn endpoints(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (acc, _) in self.fake.ga_accelerators() {
            for l in self.fake.ga_listeners_of(&acc.arn) {
                for g in self.fake.ga_endpoint_groups_of(&l.arn) {
                    out.extend(g.endpoints.into_iter().map(|e| e.endpoint_id));
                }
            }
        }
        out
    }

    async fn events(&self, ns: &str, name: &str) -> Vec<(String, String, String)> {
        events_of(&self.client, ns, name).await
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

/// `(status, reason, message)` of a condition.
fn condition(s: &GlobalAcceleratorStatus, type_: &str) -> Option<(String, String, String)> {
    s.conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

/// One endpoint group on `endpoint`; listener protocol and ports left to auto-discovery.
fn discovered(endpoint: Value) -> Value {
    json!([{"endpointGroups": [{"endpoints": [endpoint]}]}])
}

/// TCP 80 with one endpoint group on `endpoints`.
fn tcp_80(endpoints: Value) -> Value {
    json!([{"protocol": "TCP", "portRanges": [{"fromPort": 80, "toPort": 80}],
            "endpointGroups": [{"endpoints": endpoints}]}])
}

#[tokio::test]
async fn an_accelerator_follows_its_ingress_alb_and_goes_with_its_object() {
    let r = Running::start(config(), false).await;
    let (alb1, dns1) = r.alb("edge-one").await;
    let (alb2, dns2) = r.alb("edge-two").await;
    r.ingress(NS, "app", &dns1).await;
    r.fake.clear_calls();
    r.create_accelerator(
        NS,
        "web",
        discovered(json!({"type": "Ingress", "name": "app"})),
    )
    .await;

    // Created: finalizer, accelerator, a TCP 80 listener (from the Ingress's status) and its
    // endpoint group on the ALB; the status names it, Ready Unknown while AWS provisions.
    eventually("the status names the accelerator", WAIT, || async {
        r.status(NS, "web").await.accelerator_arn.is_some()
    })
    .await;
    let accs = r.fake.ga_accelerators();
    assert_eq!(accs.len(), 1, "{accs:?}");
    let (acc, tags) = &accs[0];
    assert_eq!(
        tags.get("aga.k8s.aws/stack").map(String::as_str),
        Some("edge/web")
    );
    assert_eq!(
        tags.get("elbv2.k8s.aws/cluster").map(String::as_str),
        Some(CLUSTER)
    );
    let listeners = r.fake.ga_listeners_of(&acc.arn);
    assert_eq!(listeners.len(), 1);
    assert_eq!(listeners[0].protocol, "TCP");
    assert_eq!(
        (
            listeners[0].port_ranges[0].from_port,
            listeners[0].port_ranges[0].to_port
        ),
        (80, 80)
    );
    assert_eq!(r.endpoints(), std::slice::from_ref(&alb1));
    let writes = r.ga_writes();
    assert_eq!(
        writes,
        ["CreateAccelerator", "CreateListener", "CreateEndpointGroup"]
    );
    let obj = r.object(NS, "web").await.unwrap();
    assert!(obj.finalizers().contains(&FINALIZER.to_string()));
    let s = obj.status.unwrap();
    assert_eq!(s.accelerator_arn.as_deref(), Some(acc.arn.as_str()));
    assert_eq!(s.dns_name.as_deref(), Some(acc.dns_name.as_str()));
    assert_eq!(s.status.as_deref(), Some("IN_PROGRESS"));
    assert_eq!(s.observed_generation, obj.metadata.generation);
    assert!(!s.ip_sets.is_empty(), "the static addresses");
    assert_eq!(
        condition(&s, "Ready"),
        Some((
            "Unknown".into(),
            "AcceleratorProvisioning".into(),
            "GlobalAccelerator is being provisioned".into()
        ))
    );

    // AWS reports DEPLOYED: the requeue sees it, Ready True, SuccessfullyReconciled.
    r.fake.finish_ga_deployments();
    eventually("Ready True", WAIT, || async {
        let s = r.status(NS, "web").await;
        s.status.as_deref() == Some("DEPLOYED")
            && condition(&s, "Ready").is_some_and(|c| c.0 == "True" && c.1 == "AcceleratorReady")
    })
    .await;
    eventually("SuccessfullyReconciled", WAIT, || async {
        r.events(NS, "web").await.iter().any(|(t, reason, note)| {
            t == "Normal" && reason == "SuccessfullyReconciled" && note == "Successfully reconciled"
        })
    })
    .await;

    // A pass with nothing to do (an annotation edit queues one) reads and writes nothing.
    let settled = r.status(NS, "web").await;
    r.fake.clear_calls();
    let api = r.accelerators(NS);
    let touch = json!({"metadata": {"annotations": {"example.com/touched": "1"}}});
    api.patch("web", &PatchParams::default(), &Patch::Merge(&touch))
        .await
        .unwrap();
    eventually("the pass ran", WAIT, || async {
        r.fake.count("DescribeLoadBalancers") > 0 && r.fake.count("ListEndpointGroups") > 0
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(r.ga_writes(), Vec::<String>::new());
    assert_eq!(
        r.status(NS, "web").await,
        settled,
        "the status is left as it is"
    );

    // The Ingress's hostname moves to another ALB: its event alone (the accelerator is settled,
    // no requeue pending) brings the pass that replaces the endpoint.
    r.fake.clear_calls();
    r.ingress_status(NS, "app", &dns2).await;
    eventually("the endpoint follows the Ingress", WAIT, || async {
        r.endpoints() == [alb2.clone()]
    })
    .await;
    assert_eq!(r.fake.ga_accelerators().len(), 1, "the same accelerator");
    assert!(
        !r.ga_writes().iter().any(|w| w.starts_with("Create")),
        "{:?}",
        r.ga_writes()
    );

    // Deleted with its object: disabled first; while AWS propagates the disable the object
    // stays (status DELETING, AcceleratorDisabling) and nothing is deleted.
    r.fake.finish_ga_deployments();
    r.fake.clear_calls();
    api.delete("web", &DeleteParams::default()).await.unwrap();
    eventually("status DELETING", WAIT, || async {
        r.status(NS, "web").await.status.as_deref() == Some("DELETING")
    })
    .await;
    let s = r.status(NS, "web").await;
    assert_eq!(
        condition(&s, "AcceleratorDisabling"),
        Some((
            "True".into(),
            "AcceleratorDisabling".into(),
            "Waiting for accelerator to be disabled before deletion".into()
        ))
    );
    assert_eq!(
        condition(&s, "Ready").map(|c| (c.0, c.1)),
        Some(("False".into(), "AcceleratorDeleting".into()))
    );
    // Several requeues later, still waiting for AWS.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let accs = r.fake.ga_accelerators();
    assert_eq!(accs.len(), 1);
    assert!(!accs[0].0.enabled, "disabled");
    assert_eq!(r.ga_writes(), ["UpdateAccelerator"]);
    let obj = r.object(NS, "web").await.expect("held by the finalizer");
    assert!(obj.finalizers().contains(&FINALIZER.to_string()));

    // The disable has propagated: endpoint groups, listener, accelerator, then the finalizer.
    r.fake.finish_ga_deployments();
    eventually("the object is gone", WAIT, || async {
        r.object(NS, "web").await.is_none()
    })
    .await;
    assert!(r.fake.ga_accelerators().is_empty());
    assert_eq!(
        r.ga_writes(),
        [
            "UpdateAccelerator",
            "DeleteEndpointGroup",
            "DeleteListener",
            "DeleteAccelerator"
        ]
    );
}

#[tokio::test]
async fn a_missing_service_is_a_warning_endpoint_until_it_appears() {
    let r = Running::start(config(), false).await;
    let (alb, dns) = r.alb("api").await;
    r.create_accelerator(
        NS,
        "api",
        tcp_80(json!([{"type": "Service", "name": "api"}])),
    )
    .await;
    // Deployed without the endpoint, with upstream's Warning; the status is written as usual.
    eventually("WarningEndpoints", WAIT, || async {
        r.events(NS, "api").await.iter().any(|(t, reason, note)| {
            t == "Warning"
                && reason == "WarningEndpoints"
                && note == "Detected endpoints which did not load successfully. These endpoints will be rechecked shortly."
        })
    })
    .await;
    eventually("the status names the accelerator", WAIT, || async {
        r.status(NS, "api").await.accelerator_arn.is_some()
    })
    .await;
    assert_eq!(r.fake.ga_accelerators().len(), 1);
    assert!(r.endpoints().is_empty(), "{:?}", r.endpoints());
    let s = r.status(NS, "api").await;
    assert_eq!(
        condition(&s, "Ready").map(|c| (c.0, c.1)),
        Some(("Unknown".into(), "AcceleratorProvisioning".into()))
    );
    // The Service appears with its load balancer: the endpoint goes in.
    let svc: Service = serde_json::from_value(json!({
        "metadata": {"name": "api", "namespace": NS},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80, "protocol": "TCP"}]}
    }))
    .unwrap();
    let services: Api<Service> = Api::namespaced(r.client.clone(), NS);
    services.create(&PostParams::default(), &svc).await.unwrap();
    let status = json!({"status": {"loadBalancer": {"ingress": [{"hostname": dns}]}}});
    services
        .patch_status("api", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    eventually(
        "the Service's load balancer is the endpoint",
        WAIT,
        || async { r.endpoints() == [alb.clone()] },
    )
    .await;
}

#[tokio::test]
async fn a_gateway_endpoint_without_the_gateway_api_is_upstreams_fatal_load_error() {
    let r = Running::start(config(), false).await;
    r.create_accelerator(
        NS,
        "gw",
        tcp_80(json!([{"type": "Gateway", "name": "public"}])),
    )
    .await;
    eventually("FailedEndpointLoad", WAIT, || async {
        r.events(NS, "gw").await.iter().any(|(t, reason, note)| {
            t == "Warning"
                && reason == "FailedEndpointLoad"
                && note.starts_with(
                    "Failed to reconcile due to failed to load endpoints: Fatal error for endpoint Gateway/edge/public: Error contacting Kubernetes API server - no matches for kind",
                )
        })
    })
    .await;
    eventually("Ready False EndpointLoadFailed", WAIT, || async {
        condition(&r.status(NS, "gw").await, "Ready")
            == Some((
                "False".into(),
                "EndpointLoadFailed".into(),
                "Reconciliation failed. See events and controller logs for details".into(),
            ))
    })
    .await;
    // The finalizer comes first, as upstream; no Global Accelerator write at all.
    let obj = r.object(NS, "gw").await.unwrap();
    assert!(obj.finalizers().contains(&FINALIZER.to_string()));
    assert_eq!(r.ga_writes(), Vec::<String>::new());
    assert!(r.fake.ga_accelerators().is_empty());
}

#[tokio::test]
async fn a_reference_grant_lets_a_cross_namespace_ingress_in_on_its_own_event() {
    // No requeue of its own for a Warning endpoint within the test: only the grant's event can
    // bring the pass that adds the endpoint.
    let cfg = AgaControllerConfig {
        provisioning_requeue: Duration::from_secs(3600),
        ..config()
    };
    let r = Running::start(cfg, true).await;
    let (alb, dns) = r.alb("shop").await;
    r.ingress("shop", "store", &dns).await;
    r.create_accelerator(
        NS,
        "shop",
        tcp_80(json!([{"type": "Ingress", "name": "store", "namespace": "shop"}])),
    )
    .await;
    eventually("deployed without the endpoint", WAIT, || async {
        r.status(NS, "shop").await.accelerator_arn.is_some()
    })
    .await;
    assert!(r.endpoints().is_empty(), "no grant, no endpoint");
    let ar = resource_as::<ReferenceGrant>("v1beta1");
    let grant: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "gateway.networking.k8s.io/v1beta1", "kind": "ReferenceGrant",
        "metadata": {"name": "accelerators", "namespace": "shop"},
        "spec": {
            "from": [{"group": "aga.k8s.aws", "kind": "GlobalAccelerator", "namespace": NS}],
            "to": [{"group": "networking.k8s.io", "kind": "Ingress"}]
        }
    }))
    .unwrap();
    Api::<DynamicObject>::namespaced_with(r.client.clone(), "shop", &ar)
        .create(&PostParams::default(), &grant)
        .await
        .unwrap();
    eventually(
        "the granted Ingress's ALB is the endpoint",
        WAIT,
        || async { r.endpoints() == [alb.clone()] },
    )
    .await;
}
