//! An NLB Gateway's `disableSecurityGroup` against the NLB it already has (the NLB Gateway
//! controller in-process over FakeAws, as in `gateway_backends`): AWS cannot take every group off
//! an NLB created with some, so turning the switch on for a deployed Gateway is a
//! `FailedBuildModel` Warning and `Accepted=False` before any AWS write — the NLB keeps its
//! groups and keeps serving — and turning it back off deploys again. Nor can AWS add groups to
//! an NLB created without any: turning the switch off is refused the same way.

use aws_load_balancer_controller::crd::gateway::LoadBalancerConfiguration;
use kube::api::{Api, Patch, PatchParams};

use crate::gateway_backends::{nlb_gateway, Running, NLB_STACK};
use crate::ingress::{eventually, WAIT};
use crate::support::gateway::{accept_class, create_all};
use crate::support::inventory::inventory_of;

/// The Gateway's LoadBalancerConfiguration (no switch yet) and the NodePort Service it routes to.
const CONFIG_AND_SERVICE: &str = r#"
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {name: nlb-config, namespace: demo}
spec: {scheme: internal}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{name: tcp, port: 80, targetPort: 8080, nodePort: 30080, protocol: TCP}]
"#;

const REFUSAL: &str = "conflicting security groups configuration: disableSecurityGroup is true but the Gateway's existing NLB has security groups";
const ADD_REFUSAL: &str = "conflicting security groups configuration: the Gateway's existing NLB was created without security groups";

async fn set_switch(r: &Running, on: bool) {
    let api: Api<LoadBalancerConfiguration> = Api::namespaced(r.h.client.clone(), "demo");
    let body = serde_json::json!({"spec": {"disableSecurityGroup": on}});
    api.patch("nlb-config", &PatchParams::default(), &Patch::Merge(&body))
        .await
        .unwrap();
}

async fn nlb_groups(r: &Running) -> Vec<String> {
    let inv = inventory_of(r.fake.as_ref(), r.fake.as_ref(), NLB_STACK, "demo/nlb").await;
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    inv.lbs[0].0.security_groups.clone()
}

async fn accepted(r: &Running) -> Option<(String, String)> {
    let gw = r.gateways().get_opt("nlb").await.ok()??;
    let c = gw
        .status?
        .conditions?
        .into_iter()
        .find(|c| c.type_ == "Accepted")?;
    Some((c.status, c.reason))
}

/// The NLB Gateway `demo/nlb` under `nlb-config` with `spec`, deployed.
async fn deployed(spec: &str) -> Running {
    let r = Running::start().await;
    create_all(
        &r.h.client,
        &CONFIG_AND_SERVICE.replace("{scheme: internal}", spec),
    )
    .await;
    let gateway = nlb_gateway("{name: web, port: 80}").replace(
        "  gatewayClassName: aws-nlb\n",
        "  gatewayClassName: aws-nlb\n  infrastructure:\n    parametersRef: {group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: nlb-config}\n",
    );
    create_all(&r.h.client, &gateway).await;
    accept_class(&r.h.client, "aws-nlb").await;
    eventually("the NLB Gateway is programmed", WAIT, || async {
        r.programmed("nlb").await.is_some()
    })
    .await;
    r
}

/// Sets the switch to `on` and sees it refused with `refusal`: a FailedBuildModel Warning,
/// Accepted=False Invalid, and no AWS write.
async fn switch_is_refused(r: &Running, on: bool, refusal: &str) {
    r.fake.clear_calls();
    set_switch(r, on).await;
    eventually(
        "the refusal as a FailedBuildModel Warning",
        WAIT,
        || async { r.warned("nlb", refusal).await },
    )
    .await;
    eventually("Accepted=False Invalid", WAIT, || async {
        accepted(r).await == Some(("False".into(), "Invalid".into()))
    })
    .await;
    assert!(
        r.fake.write_calls().is_empty(),
        "nothing is written for a refused configuration: {:?}",
        r.fake.write_calls()
    );
}

#[tokio::test]
async fn disabling_the_groups_of_a_deployed_nlb_gateway_fails_before_any_aws_write() {
    let r = deployed("{scheme: internal}").await;
    let groups = nlb_groups(&r).await;
    assert!(!groups.is_empty(), "an NLB Gateway gets security groups");

    switch_is_refused(&r, true, REFUSAL).await;
    assert_eq!(nlb_groups(&r).await, groups, "the NLB keeps its groups");

    // Back off: the Gateway deploys again (and its NLB still has the same groups).
    set_switch(&r, false).await;
    eventually("Accepted=True again", WAIT, || async {
        accepted(&r).await.is_some_and(|(s, _)| s == "True")
    })
    .await;
    assert_eq!(nlb_groups(&r).await, groups);
}

#[tokio::test]
async fn asking_groups_of_a_deployed_nlb_gateway_without_any_fails_before_any_aws_write() {
    let r = deployed("{scheme: internal, disableSecurityGroup: true}").await;
    assert!(nlb_groups(&r).await.is_empty(), "created without groups");

    switch_is_refused(&r, false, ADD_REFUSAL).await;
    assert!(nlb_groups(&r).await.is_empty());
}
