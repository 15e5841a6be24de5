//! The ALB Gateway controller in-process (`controller::gateway::run`) against the in-memory API
//! server (our CRDs plus the Gateway API's) and FakeAws: a Gateway of an accepted class with an
//! HTTPRoute gets the finalizer, an ALB with upstream's tags, a listener and rules, bindings with
//! upstream's labels, `Programmed=True` with the ARN, the lower-cased DNS name, listener status
//! and `SuccessfullyReconciled`; deleting it removes everything and releases the finalizer. A
//! class not accepted holds the Gateway back with upstream's condition; a build error is a
//! `FailedBuildModel` Warning with upstream's static condition and no AWS write. HTTPS without
//! configured certificates gets them from ACM discovery (the in-memory ACM).

use std::sync::Arc;
use std::time::Duration;

use albc_model::fixtures::{Fixture, RuleFixture, TestObject};
use aws_load_balancer_controller::aws::fake::{FakeAcm, FakeAws, FakeCertificate};
use aws_load_balancer_controller::aws::ElbV2;
use aws_load_balancer_controller::controller::gateway::{self, GatewayControllerConfig};
use aws_load_balancer_controller::crd::TargetGroupBinding;
use aws_load_balancer_controller::deploy::cert_discovery::CacheTtls;
use aws_load_balancer_controller::deploy::CertDiscovery;
use aws_load_balancer_controller::model::gateway::listeners::LbKind;
use aws_load_balancer_controller::model::ModelConfig;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::httproutes::HttpRoute;
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::ResourceExt;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::ingress::{eventually, network, Harness, CLUSTER, WAIT};
use crate::support::gateway::{accept_class, create_all, create_objects, install_gateway_api};
use crate::support::inventory::inventory_of;

const STACK_TAG: &str = "gateway.k8s.aws.alb/stack";

mod refused_rules;
mod upkeep;

/// The ALB Gateway controller running in-process (shared with `gateway_listener_sets`).
pub(crate) struct Running {
    pub h: Harness,
    pub fake: Arc<FakeAws>,
    token: CancellationToken,
}

impl Running {
    pub async fn start() -> Running {
        Self::start_with(None).await
    }

    /// With ACM certificate discovery over `acm` (its certificate list cached 200 ms).
    async fn start_with(acm: Option<Arc<FakeAcm>>) -> Running {
        let fake = Arc::new(FakeAws::new());
        let vpc = network(&fake);
        let h = Harness::new(fake.clone(), fake.clone(), &vpc, Default::default()).await;
        install_gateway_api(&h.client).await;
        let cfg = GatewayControllerConfig {
            model: ModelConfig {
                cluster_name: CLUSTER.into(),
                vpc_id: Some(vpc.clone()),
                ..ModelConfig::default()
            },
            max_backoff: Duration::from_millis(500),
            cert_discovery: acm.map(|acm| {
                Arc::new(CertDiscovery::new(acm).with_cache_ttls(CacheTtls {
                    certificate_list: Duration::from_millis(200),
                    ..CacheTtls::default()
                }))
            }),
            ..GatewayControllerConfig::new(LbKind::Alb)
        };
        let token = CancellationToken::new();
        tokio::spawn(gateway::run(
            h.client.clone(),
            fake.clone(),
            fake.clone(),
            vpc,
            cfg,
            token.clone(),
        ));
        Running { h, fake, token }
    }

    pub fn gateways(&self) -> Api<Gateway> {
        Api::namespaced(self.h.client.clone(), "demo")
    }

    pub async fn condition(&self, name: &str, t: &str) -> Option<(String, String, String)> {
        let gw = self.gateways().get_opt(name).await.ok()??;
        let c = gw.status?.conditions?.into_iter().find(|c| c.type_ == t)?;
        Some((c.status, c.reason, c.message))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

/// A class, a NodePort Service and an HTTPRoute with a path rule; the Gateway's listener is
/// `protocol` on `port`.
fn manifests(protocol: &str, port: i32) -> Vec<Value> {
    manifests_with(protocol, port, |gw| gw, |rule| rule)
}

/// [`manifests`] with the Gateway `demo/gw` (its class and listener `web` set) as `gateway`
/// makes it and the route's rule (its `/api` match and backend set) as `rule` makes it.
fn manifests_with(
    protocol: &str,
    port: i32,
    gateway: impl FnOnce(Fixture<Gateway>) -> Fixture<Gateway>,
    rule: impl FnOnce(RuleFixture) -> RuleFixture,
) -> Vec<Value> {
    let class = json!({
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
        "metadata": {"name": "aws-alb"}, "spec": {"controllerName": "gateway.k8s.aws/alb"},
    });
    let service = Service::test("demo", "web")
        .service_type("NodePort")
        .selector("app", "web")
        .port(80, |p| {
            p.name("http").target(8080).node_port(30080).protocol("TCP")
        });
    let gw = Gateway::test("demo", "gw")
        .class("aws-alb")
        .listener("web", protocol, port);
    let route = HttpRoute::test("demo", "route")
        .parent("gw")
        .rule(|r| rule(r.path_prefix("/api").backend("web", 80)));
    vec![
        class,
        service.into_value(),
        gateway(gw).into_value(),
        route.into_value(),
    ]
}

/// Names the LoadBalancerConfiguration `name` as the Gateway's `infrastructure.parametersRef`.
fn with_configuration(name: &str) -> impl FnOnce(Fixture<Gateway>) -> Fixture<Gateway> + '_ {
    move |gw| gw.parameters_ref("gateway.k8s.aws", "LoadBalancerConfiguration", name)
}

#[tokio::test]
async fn an_alb_gateway_is_deployed_programmed_and_deleted_with_upstreams_status() {
    let r = Running::start().await;
    create_objects(&r.h.client, manifests("HTTP", 80)).await;
    // Stands in for the GatewayClass reconciler (see `accept_class`).
    accept_class(&r.h.client, "aws-alb").await;
    eventually("Programmed=True", WAIT, || async {
        r.condition("gw", "Programmed")
            .await
            .is_some_and(|c| c.0 == "True")
    })
    .await;
    let inv = inventory_of(r.fake.as_ref(), r.fake.as_ref(), STACK_TAG, "demo/gw").await;
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    let (lb, tags) = &inv.lbs[0];
    assert_eq!(lb.lb_type, "application");
    assert_eq!(
        tags.get("gateway.k8s.aws.alb/resource").map(String::as_str),
        Some("LoadBalancer")
    );
    assert_eq!(inv.listeners.len(), 1);
    assert_eq!(inv.rules.len(), 1, "one rule for the route's one match");
    assert_eq!(inv.tgs.len(), 1);
    let (_, reason, message) = r.condition("gw", "Programmed").await.unwrap();
    assert_eq!(
        (reason.as_str(), message.as_str()),
        ("Programmed", lb.arn.as_str())
    );
    assert_eq!(
        r.condition("gw", "Accepted").await.unwrap(),
        ("True".into(), "Accepted".into(), String::new())
    );
    let gw = r.gateways().get("gw").await.unwrap();
    assert!(gw.finalizers().contains(&"gateway.k8s.aws/alb".to_string()));
    let st = gw.status.unwrap();
    let addr = &st.addresses.unwrap()[0];
    assert_eq!(
        (addr.r#type.as_deref(), addr.value.as_str()),
        (Some("Hostname"), lb.dns_name.to_ascii_lowercase().as_str())
    );
    let listener = &st.listeners.unwrap()[0];
    assert_eq!(
        (listener.name.as_str(), listener.attached_routes),
        ("web", 1)
    );
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(r.h.client.clone(), "demo");
    let ours = ListParams::default()
        .labels("gateway.k8s.aws.alb/stack-namespace=demo,gateway.k8s.aws.alb/stack-name=gw");
    let list = tgbs.list(&ours).await.unwrap().items;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].spec.target_group_arn, inv.tgs[0].0.arn);
    eventually("SuccessfullyReconciled", WAIT, || async {
        r.h.event_reasons("demo", "gw")
            .await
            .contains(&"SuccessfullyReconciled".to_string())
    })
    .await;

    // Another pass over the unchanged Gateway (a label edit queues it): AWS is only read.
    r.fake.clear_calls();
    let touch = serde_json::json!({"metadata": {"labels": {"touched": "yes"}}});
    r.gateways()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&touch))
        .await
        .unwrap();
    eventually("a second pass reads the rules", WAIT, || async {
        r.fake.count("DescribeRules") > 0
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        r.fake.write_calls().is_empty(),
        "an unchanged Gateway makes no AWS write: {:?}",
        r.fake.write_calls()
    );

    r.gateways()
        .delete("gw", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the Gateway goes once its stack is gone", WAIT, || async {
        r.gateways().get_opt("gw").await.unwrap().is_none()
    })
    .await;
    let inv = inventory_of(r.fake.as_ref(), r.fake.as_ref(), STACK_TAG, "demo/gw").await;
    assert!(inv.is_empty(), "{inv:#?}");
    assert!(tgbs.list(&ours).await.unwrap().items.is_empty());
}

#[tokio::test]
async fn a_class_not_accepted_holds_the_gateway_back_with_upstreams_condition() {
    let r = Running::start().await;
    create_objects(&r.h.client, manifests("HTTP", 80)).await;
    eventually("Accepted=False", WAIT, || async {
        r.condition("gw", "Accepted").await
            == Some((
                "False".into(),
                "Invalid".into(),
                "Unable to materialize gateway when gateway class [aws-alb] is not accepted".into(),
            ))
    })
    .await;
    assert!(
        r.fake.write_calls().is_empty(),
        "{:?}",
        r.fake.write_calls()
    );
    let gw = r.gateways().get("gw").await.unwrap();
    assert!(gw.finalizers().is_empty());
}

#[tokio::test]
async fn a_build_error_is_a_warning_with_upstreams_static_condition_and_no_aws_write() {
    let r = Running::start().await;
    // HTTPS without a certificate in a LoadBalancerConfiguration and without any hostname to
    // discover one for in ACM cannot be built (upstream's message).
    create_objects(&r.h.client, manifests("HTTPS", 443)).await;
    accept_class(&r.h.client, "aws-alb").await;
    eventually("FailedBuildModel", WAIT, || async {
        r.h.events("demo", "gw")
            .await
            .iter()
            .any(|(t, reason, note)| {
                t == "Warning"
                    && reason == "FailedBuildModel"
                    && note
                        == "Failed build model due to No hostnames found for TLS cert discovery for listener on gateway demo/gw with protocol:port HTTPS:443"
            })
    })
    .await;
    eventually("Accepted=False Invalid", WAIT, || async {
        r.condition("gw", "Accepted").await
            == Some((
                "False".into(),
                "Invalid".into(),
                "Check Gateway Events for more information.".into(),
            ))
    })
    .await;
    assert!(
        r.fake.write_calls().is_empty(),
        "{:?}",
        r.fake.write_calls()
    );
    let gw = r.gateways().get("gw").await.unwrap();
    assert!(gw.finalizers().is_empty(), "no finalizer before a deploy");
}

/// The Gateway's own LoadBalancerConfiguration protects the ALB: deleting the Gateway is refused
/// with upstream's message, the finalizer and the ALB stay; the configuration in use carries
/// upstream's finalizer.
#[tokio::test]
async fn deletion_protection_in_the_configuration_keeps_finalizer_and_alb() {
    let r = Running::start().await;
    let lbc = r#"
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {name: protect, namespace: demo}
spec:
  loadBalancerAttributes: [{key: deletion_protection.enabled, value: "true"}]
"#;
    create_all(&r.h.client, lbc).await;
    let objects = manifests_with("HTTP", 80, with_configuration("protect"), |rule| rule);
    create_objects(&r.h.client, objects).await;
    accept_class(&r.h.client, "aws-alb").await;
    eventually("Programmed=True", WAIT, || async {
        r.condition("gw", "Programmed")
            .await
            .is_some_and(|c| c.0 == "True")
    })
    .await;
    let lbcs: Api<aws_load_balancer_controller::crd::gateway::LoadBalancerConfiguration> =
        Api::namespaced(r.h.client.clone(), "demo");
    let held = lbcs.get("protect").await.unwrap();
    assert!(held
        .finalizers()
        .contains(&"gateway.k8s.aws/loadbalancerconfigurations".to_string()));
    r.gateways()
        .delete("gw", &DeleteParams::default())
        .await
        .unwrap();
    eventually("upstream's refusal", WAIT, || async {
        r.h.events("demo", "gw").await.iter().any(|(t, reason, note)| {
            t == "Warning"
                && reason == "FailedBuildModel"
                && note.contains(
                    "Unable to delete gateway {Namespace:demo Name:gw} because deletion protection is enabled.",
                )
        })
    })
    .await;
    let gw = r.gateways().get("gw").await.unwrap();
    assert!(gw.finalizers().contains(&"gateway.k8s.aws/alb".to_string()));
    let inv = inventory_of(r.fake.as_ref(), r.fake.as_ref(), STACK_TAG, "demo/gw").await;
    assert_eq!(inv.lbs.len(), 1, "the protected ALB stays");
}

/// Upstream's dry run: a Gateway not yet provisioned with `gateway.k8s.aws/dry-run: "true"` gets
/// its stack in `gateway.k8s.aws/dry-run-plan`, in upstream's stack schema (what its stack
/// marshaller writes: `id`, `resources` by upstream's resource types and ids, references as
/// `$ref`), and nothing is written to AWS (the backend security group not created: ""), no
/// finalizer; later passes leave the text as it is. With dry run off, the plan goes.
#[tokio::test]
async fn a_dry_run_gateway_gets_its_plan_annotation_and_no_aws_write() {
    let r = Running::start().await;
    let dry_run = |gw: Fixture<Gateway>| gw.annotation("gateway.k8s.aws/dry-run", "true");
    create_objects(
        &r.h.client,
        manifests_with("HTTP", 80, dry_run, |rule| rule),
    )
    .await;
    accept_class(&r.h.client, "aws-alb").await;
    eventually("the plan annotation", WAIT, || async {
        r.gateways()
            .get("gw")
            .await
            .unwrap()
            .annotations()
            .contains_key("gateway.k8s.aws/dry-run-plan")
    })
    .await;
    let gw = r.gateways().get("gw").await.unwrap();
    let text = gw.annotations()["gateway.k8s.aws/dry-run-plan"].clone();
    let plan: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(plan["id"], "demo/gw", "{plan}");
    assert!(
        plan.get("stackId").is_none(),
        "not our model's JSON: {plan}"
    );
    let res = &plan["resources"];
    let lb = &res["AWS::ElasticLoadBalancingV2::LoadBalancer"]["LoadBalancer"]["spec"];
    assert_eq!(lb["type"], "application", "{plan}");
    assert_eq!(
        lb["securityGroups"],
        serde_json::json!([
            {"$ref": "#/resources/AWS::EC2::SecurityGroup/ManagedLBSecurityGroup/status/groupID"},
            ""
        ]),
        "the managed group by reference; the backend group, not created by a dry run, empty"
    );
    let rule = &res["AWS::ElasticLoadBalancingV2::ListenerRule"]["80:1"]["spec"];
    assert_eq!(
        rule["listenerARN"]["$ref"],
        "#/resources/AWS::ElasticLoadBalancingV2::Listener/80/status/listenerARN"
    );
    let tg_id = "demo/gw:demo-route:HTTPRoute-demo-web:8080";
    assert_eq!(
        rule["actions"][0]["forwardConfig"]["targetGroups"][0]["targetGroupARN"]["$ref"],
        format!(
            "#/resources/AWS::ElasticLoadBalancingV2::TargetGroup/{tg_id}/status/targetGroupARN"
        )
    );
    assert_eq!(
        res["AWS::ElasticLoadBalancingV2::TargetGroup"][tg_id]["spec"]["port"],
        30080
    );
    let tgb = &res["K8S::ElasticLoadBalancingV2::TargetGroupBinding"][tg_id]["spec"]["template"];
    assert_eq!(
        tgb["spec"]["serviceRef"],
        serde_json::json!({"name": "web", "port": 80})
    );
    assert_eq!(
        res["FrontendNLBTargetGroup"],
        serde_json::json!({"FrontendNLBTargetGroup": {"TargetGroups": {}}})
    );
    assert!(res["AWS::EC2::SecurityGroup"]["ManagedLBSecurityGroup"]["spec"].is_object());
    assert!(gw.finalizers().is_empty());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        r.fake.write_calls().is_empty(),
        "{:?}",
        r.fake.write_calls()
    );
    let gw = r.gateways().get("gw").await.unwrap();
    assert_eq!(
        gw.annotations()["gateway.k8s.aws/dry-run-plan"],
        text,
        "a later pass writes the same text"
    );

    let off = serde_json::json!({"metadata": {"annotations": {"gateway.k8s.aws/dry-run": null}}});
    r.gateways()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&off))
        .await
        .unwrap();
    eventually("the plan annotation removed", WAIT, || async {
        !r.gateways()
            .get("gw")
            .await
            .unwrap()
            .annotations()
            .contains_key("gateway.k8s.aws/dry-run-plan")
    })
    .await;
}

/// HTTPS without configured certificates: ACM discovery over the listener's hostname. A host
/// without an issued certificate is upstream's `FailedBuildModel` and no AWS write; once ACM
/// has certificates for it, every matching one lands on the listener (the smallest ARN the
/// default) and a second pass writes nothing.
#[tokio::test]
async fn an_https_gateway_gets_its_certificates_from_acm_discovery() {
    let acm = Arc::new(FakeAcm::new());
    acm.add(FakeCertificate::imported("shop.example.com", &[]).status("PENDING_VALIDATION"));
    let r = Running::start_with(Some(acm.clone())).await;
    // The one listener, with a hostname.
    let listener = json!([{"name": "web", "port": 443, "protocol": "HTTPS",
        "hostname": "shop.example.com"}]);
    let with_host = |gw: Fixture<Gateway>| gw.set(&["spec", "listeners"], listener);
    create_objects(
        &r.h.client,
        manifests_with("HTTPS", 443, with_host, |rule| rule),
    )
    .await;
    accept_class(&r.h.client, "aws-alb").await;
    let want = "Failed build model due to no certificate found for host: shop.example.com";
    eventually("FailedBuildModel naming the host", WAIT, || async {
        r.h.events("demo", "gw")
            .await
            .iter()
            .any(|(t, reason, note)| t == "Warning" && reason == "FailedBuildModel" && note == want)
    })
    .await;
    assert!(
        r.fake.write_calls().is_empty(),
        "{:?}",
        r.fake.write_calls()
    );

    let wild = acm.add(FakeCertificate::imported("*.example.com", &[]));
    let exact = acm.add(FakeCertificate::imported("shop.example.com", &[]));
    let _other = acm.add(FakeCertificate::imported("*.example.org", &[]));
    eventually("Programmed=True", WAIT, || async {
        r.condition("gw", "Programmed")
            .await
            .is_some_and(|c| c.0 == "True")
    })
    .await;
    let inv = inventory_of(r.fake.as_ref(), r.fake.as_ref(), STACK_TAG, "demo/gw").await;
    assert_eq!(inv.listeners.len(), 1, "{inv:#?}");
    let listener = &inv.listeners[0];
    assert_eq!((listener.port, listener.protocol.as_str()), (443, "HTTPS"));
    let mut both = [wild, exact];
    both.sort();
    assert_eq!(listener.certificates, vec![both[0].clone()]);
    let extra: Vec<String> = r
        .fake
        .describe_listener_certificates(&listener.arn)
        .await
        .unwrap()
        .into_iter()
        .filter(|c| !c.is_default)
        .map(|c| c.arn)
        .collect();
    assert_eq!(extra, vec![both[1].clone()]);

    // Another pass over the unchanged Gateway: ACM and AWS are only read.
    r.fake.clear_calls();
    let touch = serde_json::json!({"metadata": {"labels": {"touched": "yes"}}});
    r.gateways()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&touch))
        .await
        .unwrap();
    eventually("a second pass reads the rules", WAIT, || async {
        r.fake.count("DescribeRules") > 0
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        r.fake.write_calls().is_empty(),
        "an unchanged Gateway makes no AWS write: {:?}",
        r.fake.write_calls()
    );
}

/// `securityGroups` in the Gateway's LoadBalancerConfiguration (one by id, one by `Name` tag):
/// no managed or backend group is made, the ALB gets exactly the given groups, the bindings
/// open no node ports (the user does, as upstream without `manageBackendSecurityGroupRules`),
/// and a second pass writes nothing.
#[tokio::test]
async fn explicit_security_groups_front_the_alb_without_a_managed_one() {
    use aws_load_balancer_controller::aws::{CreateSecurityGroup, Ec2};
    let r = Running::start().await;
    let vpc = r.h.vpc.clone();
    let group = |name: &str, tags: &[(&str, &str)]| CreateSecurityGroup {
        name: name.into(),
        description: name.into(),
        vpc_id: vpc.clone(),
        tags: crate::deploy::tags(tags),
    };
    let by_id = r
        .fake
        .create_security_group(&group("by-id", &[]))
        .await
        .unwrap();
    let by_name = r
        .fake
        .create_security_group(&group("launch-wizard-7", &[("Name", "gw-frontend")]))
        .await
        .unwrap();
    r.fake.clear_calls();
    let lbc = format!(
        r#"
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {{name: own-sgs, namespace: demo}}
spec:
  securityGroups: [{by_id}, gw-frontend]
"#
    );
    create_all(&r.h.client, &lbc).await;
    let objects = manifests_with("HTTP", 80, with_configuration("own-sgs"), |rule| rule);
    create_objects(&r.h.client, objects).await;
    accept_class(&r.h.client, "aws-alb").await;
    eventually("Programmed=True", WAIT, || async {
        r.condition("gw", "Programmed")
            .await
            .is_some_and(|c| c.0 == "True")
    })
    .await;
    let inv = inventory_of(r.fake.as_ref(), r.fake.as_ref(), STACK_TAG, "demo/gw").await;
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    let mut sgs = inv.lbs[0].0.security_groups.clone();
    sgs.sort();
    let mut want = vec![by_id.clone(), by_name.clone()];
    want.sort();
    assert_eq!(sgs, want, "exactly the given groups");
    assert!(inv.sgs.is_empty(), "no managed SG: {:?}", inv.sgs);
    assert_eq!(
        r.fake.count("CreateSecurityGroup"),
        0,
        "neither a managed nor a backend SG"
    );
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(r.h.client.clone(), "demo");
    let list = tgbs.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(list.len(), 1);
    assert!(
        list[0].spec.networking.is_none(),
        "{:?}",
        list[0].spec.networking
    );

    r.fake.clear_calls();
    let touch = serde_json::json!({"metadata": {"labels": {"touched": "yes"}}});
    r.gateways()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&touch))
        .await
        .unwrap();
    eventually("a second pass reads the rules", WAIT, || async {
        r.fake.count("DescribeRules") > 0
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        r.fake.write_calls().is_empty(),
        "an unchanged Gateway with its own SGs makes no AWS write: {:?}",
        r.fake.write_calls()
    );
}
