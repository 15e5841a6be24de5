//! Gateway add-ons through the ALB Gateway controller in-process (the in-memory API server and
//! FakeAws with WAFv2 and Shield clients): the Gateway's LoadBalancerConfiguration `wafV2`,
//! `shieldConfiguration` and `minimumLoadBalancerCapacity` put the web ACL, the protection and
//! the capacity reservation on the ALB and are recorded `"true"` in upstream's
//! `gateway.k8s.aws.addon.*` annotations; a second pass writes nothing; dropping the fields
//! removes all three and records `"false"`; deleting a Gateway with an add-on active removes the
//! add-on before the stack, as upstream — unless the ALB has deletion protection on, which keeps
//! it whole, web ACL and Shield protection included.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::{AddonClients, ElbV2};
use aws_load_balancer_controller::controller::gateway::{self, GatewayControllerConfig};
use aws_load_balancer_controller::crd::gateway::LoadBalancerConfiguration;
use aws_load_balancer_controller::model::gateway::listeners::LbKind;
use aws_load_balancer_controller::model::ModelConfig;
use gateway_api::apis::standard::gateways::Gateway;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::ResourceExt;
use tokio_util::sync::CancellationToken;

use crate::ingress::{eventually, network, Harness, CLUSTER, WAIT};
use crate::support::gateway::{accept_class, create_all, install_gateway_api};
use crate::support::inventory::inventory_of;

const KEYS: [&str; 3] = [
    "gateway.k8s.aws.addon.wafv2",
    "gateway.k8s.aws.addon.shield",
    "gateway.k8s.aws.addon.provisionedcapacity",
];

const MANIFESTS: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: aws-alb}
spec: {controllerName: gateway.k8s.aws/alb}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080, nodePort: 30080, protocol: TCP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: demo}
spec:
  gatewayClassName: aws-alb
  infrastructure:
    parametersRef: {group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: addons}
  listeners: [{name: web, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route, namespace: demo}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [{name: web, port: 80}]
"#;

struct Running {
    h: Harness,
    fake: Arc<FakeAws>,
    token: CancellationToken,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

impl Running {
    async fn start() -> Running {
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
            addons: AddonClients::all(fake.clone()),
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

    fn gateways(&self) -> Api<Gateway> {
        Api::namespaced(self.h.client.clone(), "demo")
    }

    /// The Gateway's `gateway.k8s.aws.addon.*` annotations.
    /// The Gateway's stack as the fake AWS holds it.
    async fn stack(&self) -> crate::support::inventory::Inventory {
        inventory_of(
            self.fake.as_ref(),
            self.fake.as_ref(),
            "gateway.k8s.aws.alb/stack",
            "demo/gw",
        )
        .await
    }

    /// Waits until the Gateway's ALB carries web ACL `acl`.
    async fn wait_for_web_acl(&self, acl: &str) {
        eventually("the ALB with its web ACL", WAIT, || async {
            let inv = self.stack().await;
            inv.lbs
                .first()
                .is_some_and(|(lb, _)| self.fake.wafv2_web_acl_of(&lb.arn).as_deref() == Some(acl))
        })
        .await;
    }

    async fn recorded(&self) -> BTreeMap<String, String> {
        let Ok(Some(gw)) = self.gateways().get_opt("gw").await else {
            return BTreeMap::new();
        };
        gw.annotations()
            .iter()
            .filter(|(k, _)| k.starts_with("gateway.k8s.aws.addon."))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    async fn set_config(&self, spec: serde_json::Value) {
        let lbcs: Api<LoadBalancerConfiguration> = Api::namespaced(self.h.client.clone(), "demo");
        lbcs.patch(
            "addons",
            &PatchParams::default(),
            &Patch::Merge(&serde_json::json!({ "spec": spec })),
        )
        .await
        .unwrap();
    }

    /// A pass over the unchanged Gateway (a label edit queues it) must only read AWS.
    async fn assert_second_pass_writes_nothing(&self, label: &str) {
        self.fake.clear_calls();
        let touch = serde_json::json!({"metadata": {"labels": {"touched": label}}});
        self.gateways()
            .patch("gw", &PatchParams::default(), &Patch::Merge(&touch))
            .await
            .unwrap();
        eventually("a second pass reads the rules", WAIT, || async {
            self.fake.count("DescribeRules") > 0
        })
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            self.fake.write_calls().is_empty(),
            "an unchanged Gateway makes no AWS write: {:?}",
            self.fake.write_calls()
        );
    }
}

fn all(value: &str) -> BTreeMap<String, String> {
    KEYS.iter()
        .map(|k| (k.to_string(), value.to_string()))
        .collect()
}

#[tokio::test]
async fn gateway_addons_are_applied_recorded_removed_and_released_on_delete() {
    let r = Running::start().await;
    r.fake.set_shield_subscription(true);
    let acl = r.fake.add_wafv2_web_acl("gw-acl");
    let lbc = format!(
        r#"
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {{name: addons, namespace: demo}}
spec:
  wafV2: {{webACL: "{acl}"}}
  shieldConfiguration: {{enabled: true}}
  minimumLoadBalancerCapacity: {{capacityUnits: 100}}
"#
    );
    create_all(&r.h.client, &lbc).await;
    create_all(&r.h.client, MANIFESTS).await;
    accept_class(&r.h.client, "aws-alb").await;
    eventually("the add-ons recorded on", WAIT, || async {
        r.recorded().await == all("true")
    })
    .await;
    r.wait_for_web_acl(&acl).await;
    let inv = r.stack().await;
    let lb = inv.lbs[0].0.arn.clone();
    let protections = r.fake.shield_protections();
    assert_eq!(protections.len(), 1, "{protections:?}");
    assert_eq!(protections[0].resource_arn, lb);
    assert_eq!(
        protections[0].name,
        "managed by aws-load-balancer-controller"
    );
    assert_eq!(
        r.fake.describe_capacity_reservation(&lb).await.unwrap(),
        Some(100)
    );
    eventually("SuccessfullyReconciled", WAIT, || async {
        r.h.event_reasons("demo", "gw")
            .await
            .contains(&"SuccessfullyReconciled".to_string())
    })
    .await;
    r.assert_second_pass_writes_nothing("1").await;

    // The fields dropped: all three removed, then recorded off.
    r.set_config(serde_json::json!({
        "wafV2": null, "shieldConfiguration": null, "minimumLoadBalancerCapacity": null
    }))
    .await;
    eventually("the add-ons recorded off", WAIT, || async {
        r.recorded().await == all("false")
    })
    .await;
    assert_eq!(r.fake.wafv2_web_acl_of(&lb), None);
    assert!(r.fake.shield_protections().is_empty());
    assert_eq!(
        r.fake.describe_capacity_reservation(&lb).await.unwrap(),
        None
    );
    r.assert_second_pass_writes_nothing("2").await;

    // The web ACL again, then the Gateway deleted: the ACL comes off before the ALB goes.
    r.set_config(serde_json::json!({"wafV2": {"webACL": acl}}))
        .await;
    eventually("the web ACL back on", WAIT, || async {
        r.fake.wafv2_web_acl_of(&lb).as_deref() == Some(&acl)
            && r.recorded().await.get(KEYS[0]).map(String::as_str) == Some("true")
    })
    .await;
    r.fake.clear_calls();
    r.gateways()
        .delete("gw", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the Gateway goes once its stack is gone", WAIT, || async {
        r.gateways().get_opt("gw").await.unwrap().is_none()
    })
    .await;
    let ops: Vec<String> = r.fake.write_calls().into_iter().map(|(_, op)| op).collect();
    let at = |op: &str| ops.iter().position(|o| o == op);
    assert!(
        at("DisassociateWebACL").is_some() && at("DisassociateWebACL") < at("DeleteLoadBalancer"),
        "{ops:?}"
    );
    let inv = r.stack().await;
    assert!(inv.is_empty(), "{inv:#?}");
}

/// The ALB of a deleted Gateway has deletion protection on in AWS (set there, not in the
/// configuration): the deletion stops before the pass that takes the add-ons off, with the
/// Ingress path's Warning; the ALB keeps its web ACL and Shield protection, the Gateway its
/// finalizer and its add-on records. Once protection is lifted the add-ons come off and the
/// stack goes, as for an unprotected Gateway.
#[tokio::test]
async fn a_protected_gateways_alb_keeps_waf_and_shield_when_the_gateway_is_deleted() {
    let r = Running::start().await;
    r.fake.set_shield_subscription(true);
    let acl = r.fake.add_wafv2_web_acl("gw-acl");
    let lbc = format!(
        r#"
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {{name: addons, namespace: demo}}
spec:
  wafV2: {{webACL: "{acl}"}}
  shieldConfiguration: {{enabled: true}}
"#
    );
    create_all(&r.h.client, &lbc).await;
    create_all(&r.h.client, MANIFESTS).await;
    accept_class(&r.h.client, "aws-alb").await;
    let on = |rec: &BTreeMap<String, String>| {
        KEYS[..2]
            .iter()
            .all(|k| rec.get(*k).map(String::as_str) == Some("true"))
    };
    eventually("the web ACL and Shield recorded on", WAIT, || async {
        on(&r.recorded().await)
    })
    .await;
    r.wait_for_web_acl(&acl).await;
    let inv = r.stack().await;
    let lb = inv.lbs[0].0.clone();
    let shielded = |r: &Running| {
        let protections = r.fake.shield_protections();
        protections.len() == 1 && protections[0].resource_arn == lb.arn
    };
    assert!(shielded(&r), "{:?}", r.fake.shield_protections());
    eventually("SuccessfullyReconciled", WAIT, || async {
        r.h.event_reasons("demo", "gw")
            .await
            .contains(&"SuccessfullyReconciled".to_string())
    })
    .await;

    // The operator protects the ALB in AWS; then the Gateway is deleted.
    let protection = |enabled: bool| {
        BTreeMap::from([(
            "deletion_protection.enabled".to_string(),
            enabled.to_string(),
        )])
    };
    r.fake
        .modify_load_balancer_attributes(&lb.arn, &protection(true))
        .await
        .unwrap();
    r.fake.clear_calls();
    r.gateways()
        .delete("gw", &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "a Warning names the ALB and the attribute",
        WAIT,
        || async {
            r.h.events("demo", "gw")
                .await
                .iter()
                .any(|(t, reason, note)| {
                    t == "Warning"
                        && reason == "FailedDeployModel"
                        && note.contains(&lb.name)
                        && note.contains("deletion_protection.enabled")
                })
        },
    )
    .await;
    // It keeps retrying (never quiet), so look after a few retries rather than settling.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let ops: Vec<String> = r.fake.write_calls().into_iter().map(|(_, op)| op).collect();
    assert!(
        !ops.iter().any(|o| o == "DisassociateWebACL"
            || o == "ModifyLoadBalancerAttributes"
            || o.starts_with("Delete")),
        "nothing of the protected ALB is taken off: {ops:?}"
    );
    assert_eq!(
        r.fake.wafv2_web_acl_of(&lb.arn).as_deref(),
        Some(acl.as_str())
    );
    assert!(shielded(&r), "{:?}", r.fake.shield_protections());
    let gw = r.gateways().get("gw").await.unwrap();
    assert!(gw.finalizers().contains(&"gateway.k8s.aws/alb".to_string()));
    assert!(on(&r.recorded().await), "{:?}", r.recorded().await);

    // The user lifts protection: the add-ons come off, then the stack goes.
    r.fake
        .modify_load_balancer_attributes(&lb.arn, &protection(false))
        .await
        .unwrap();
    eventually("the Gateway goes once its stack is gone", WAIT, || async {
        r.gateways().get_opt("gw").await.unwrap().is_none()
    })
    .await;
    let ops: Vec<String> = r.fake.write_calls().into_iter().map(|(_, op)| op).collect();
    let at = |op: &str| ops.iter().position(|o| o == op);
    assert!(
        at("DisassociateWebACL").is_some() && at("DisassociateWebACL") < at("DeleteLoadBalancer"),
        "{ops:?}"
    );
    assert!(r.fake.shield_protections().is_empty());
    let inv = r.stack().await;
    assert!(inv.is_empty(), "{inv:#?}");
}
