//! The NLB Gateway controller in-process (`controller::gateway::run`) with the backendRef kinds
//! beyond Services, against the in-memory API server and FakeAws:
//! - `Gateway` (NLB → ALB chaining): while the ALB Gateway has no ARN the NLB Gateway fails with
//!   upstream's message; once the ALB controller programs it, its status change alone (the NLB
//!   controller's retry is an hour away) brings the NLB Gateway back, which gets an `alb`-type
//!   target group with the ALB registered on the backendRef port; deleting it releases the ALB
//!   target and removes its stack;
//! - `TargetGroupName`: the listener forwards to the existing group's ARN, the group is neither
//!   owned nor tagged; a name AWS does not know is a `FailedBuildModel` Warning with AWS's error.
//!
//! In both, a second pass over the unchanged Gateway makes no AWS write.

use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fake::{spec, FakeAws};
use aws_load_balancer_controller::aws::{ElbV2, TargetGroup};
use aws_load_balancer_controller::controller::gateway::{self, GatewayControllerConfig};
use aws_load_balancer_controller::model::gateway::listeners::LbKind;
use aws_load_balancer_controller::model::{Action, ModelConfig};
use gateway_api::apis::standard::gateways::Gateway;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use tokio_util::sync::CancellationToken;

use crate::ingress::{eventually, network, Harness, CLUSTER, WAIT};
use crate::support::gateway::{accept_class, create_all, install_gateway_api};
use crate::support::inventory::inventory_of;

pub(crate) const NLB_STACK: &str = "gateway.k8s.aws.nlb/stack";

pub(crate) struct Running {
    pub(crate) h: Harness,
    pub(crate) fake: Arc<FakeAws>,
    vpc: String,
    token: CancellationToken,
}

impl Running {
    pub(crate) async fn start() -> Running {
        let fake = Arc::new(FakeAws::new());
        let vpc = network(&fake);
        let h = Harness::new(fake.clone(), fake.clone(), &vpc, Default::default()).await;
        install_gateway_api(&h.client).await;
        let r = Running {
            h,
            fake,
            vpc,
            token: CancellationToken::new(),
        };
        // A failed NLB Gateway is retried only after an hour: what brings it back sooner is an
        // event about something it reads.
        r.controller(LbKind::Nlb, Duration::from_secs(3600));
        r
    }

    pub(crate) fn controller(&self, lb: LbKind, backoff: Duration) {
        let cfg = GatewayControllerConfig {
            model: ModelConfig {
                cluster_name: CLUSTER.into(),
                vpc_id: Some(self.vpc.clone()),
                ..ModelConfig::default()
            },
            base_backoff: backoff,
            max_backoff: backoff,
            ..GatewayControllerConfig::new(lb)
        };
        tokio::spawn(gateway::run(
            self.h.client.clone(),
            self.fake.clone(),
            self.fake.clone(),
            self.vpc.clone(),
            cfg,
            self.token.clone(),
        ));
    }

    pub fn gateways(&self) -> Api<Gateway> {
        Api::namespaced(self.h.client.clone(), "demo")
    }

    pub(crate) async fn programmed(&self, name: &str) -> Option<String> {
        let gw = self.gateways().get_opt(name).await.ok()??;
        let c = gw
            .status?
            .conditions?
            .into_iter()
            .find(|c| c.type_ == "Programmed" && c.status == "True")?;
        Some(c.message)
    }

    pub async fn warned(&self, name: &str, needle: &str) -> bool {
        self.h
            .events("demo", name)
            .await
            .iter()
            .any(|(t, reason, note)| {
                t == "Warning" && reason == "FailedBuildModel" && note.contains(needle)
            })
    }

    /// Another pass over the unchanged Gateway `name` (a label edit queues it): AWS is read
    /// (`DescribeListeners`) and never written.
    pub(crate) async fn second_pass_writes_nothing(&self, name: &str) {
        self.fake.clear_calls();
        let touch = serde_json::json!({"metadata": {"labels": {"touched": "yes"}}});
        self.gateways()
            .patch(name, &PatchParams::default(), &Patch::Merge(&touch))
            .await
            .unwrap();
        eventually("a second pass reads the listeners", WAIT, || async {
            self.fake.count("DescribeListeners") > 0
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

impl Drop for Running {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

/// An NLB class and Gateway `demo/nlb` (TCP 80) with a TCPRoute whose one backend is `backend`.
pub(crate) fn nlb_gateway(backend: &str) -> String {
    format!(
        r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {{name: aws-nlb}}
spec: {{controllerName: gateway.k8s.aws/nlb}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: nlb, namespace: demo}}
spec:
  gatewayClassName: aws-nlb
  listeners: [{{name: tcp, port: 80, protocol: TCP}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {{name: chain, namespace: demo}}
spec:
  parentRefs: [{{name: nlb}}]
  rules: [{{backendRefs: [{backend}]}}]
"#
    )
}

/// An ALB class and Gateway `demo/edge` (HTTP 8080) with an HTTPRoute to a NodePort Service.
pub(crate) const ALB_GATEWAY: &str = r#"
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
metadata: {name: edge, namespace: demo}
spec:
  gatewayClassName: aws-alb
  listeners: [{name: web, port: 8080, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: demo}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
"#;

fn forwarded_to(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Forward { config } => Some(
                config
                    .target_groups
                    .iter()
                    .filter_map(|t| t.target_group_arn.literal().map(String::from)),
            ),
            _ => None,
        })
        .flatten()
        .collect()
}

#[tokio::test]
async fn an_nlb_gateway_chains_to_an_alb_gateway_once_it_is_programmed() {
    let r = Running::start().await;
    create_all(&r.h.client, ALB_GATEWAY).await;
    create_all(
        &r.h.client,
        &nlb_gateway("{name: edge, kind: Gateway, group: gateway.networking.k8s.io, port: 8080}"),
    )
    .await;
    accept_class(&r.h.client, "aws-nlb").await;
    eventually("upstream's refusal while the ALB has no ARN", WAIT, || async {
        r.warned(
            "nlb",
            "Gateway (demo:edge) is not usable yet, LB ARN is not provisioned). Invalid data can be found in route (TCPRoute, demo:chain)",
        )
        .await
    })
    .await;
    // Upstream's loader error on the Gateway: Accepted False ListenersNotValid, its message.
    eventually("Accepted=False ListenersNotValid", WAIT, || async {
        let Ok(Some(gw)) = r.gateways().get_opt("nlb").await else {
            return false;
        };
        let conditions = gw.status.and_then(|s| s.conditions).unwrap_or_default();
        conditions.iter().any(|c| {
            c.type_ == "Accepted"
                && c.status == "False"
                && c.reason == "ListenersNotValid"
                && c.message
                    == "Gateway (demo:edge) is not usable yet, LB ARN is not provisioned). Invalid data can be found in route (TCPRoute, demo:chain)"
        })
    })
    .await;
    assert!(
        r.fake.write_calls().is_empty(),
        "{:?}",
        r.fake.write_calls()
    );

    // The ALB controller programs `edge`; its status change queues `nlb`.
    r.controller(LbKind::Alb, Duration::from_millis(500));
    accept_class(&r.h.client, "aws-alb").await;
    eventually("the ALB Gateway is programmed", WAIT, || async {
        r.programmed("edge").await.is_some()
    })
    .await;
    let alb_arn = r.programmed("edge").await.unwrap();
    eventually("the NLB Gateway is programmed", WAIT, || async {
        r.programmed("nlb").await.is_some()
    })
    .await;

    let inv = inventory_of(r.fake.as_ref(), r.fake.as_ref(), NLB_STACK, "demo/nlb").await;
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    assert_eq!(inv.lbs[0].0.lb_type, "network");
    assert_eq!(inv.tgs.len(), 1, "{inv:#?}");
    let (tg, tags): &(TargetGroup, _) = &inv.tgs[0];
    assert_eq!(tg.target_type, "alb");
    assert_eq!((tg.protocol.as_deref(), tg.port), (Some("TCP"), Some(8080)));
    assert_eq!(
        tags.get("gateway.k8s.aws.nlb/resource").map(String::as_str),
        Some("demo/nlb:demo-chain:TCPRoute-demo-edge:8080")
    );
    assert_eq!(inv.listeners.len(), 1);
    assert_eq!(
        forwarded_to(&inv.listeners[0].default_actions),
        vec![tg.arn.clone()]
    );
    let targets = r.fake.describe_target_health(&tg.arn, &[]).await.unwrap();
    let registered: Vec<(&str, Option<u16>)> = targets
        .iter()
        .map(|t| (t.target.id.as_str(), t.target.port))
        .collect();
    assert_eq!(registered, vec![(alb_arn.as_str(), Some(8080))]);

    r.second_pass_writes_nothing("nlb").await;

    // Deleting the NLB Gateway releases the ALB target, then removes the whole NLB stack.
    r.fake.clear_calls();
    r.gateways()
        .delete("nlb", &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the NLB Gateway goes once its stack is gone",
        WAIT,
        || async { r.gateways().get_opt("nlb").await.unwrap().is_none() },
    )
    .await;
    assert!(r.fake.count("DeregisterTargets") > 0);
    let inv = inventory_of(r.fake.as_ref(), r.fake.as_ref(), NLB_STACK, "demo/nlb").await;
    assert!(inv.is_empty(), "{inv:#?}");
    assert!(
        r.programmed("edge").await.is_some(),
        "the ALB Gateway stays"
    );
}

#[tokio::test]
async fn a_target_group_name_backend_forwards_to_the_existing_group_untouched() {
    let r = Running::start().await;
    let existing = r
        .fake
        .create_target_group(
            (&spec::target_group(
                "existing",
                aws_load_balancer_controller::model::TargetType::Ip,
                aws_load_balancer_controller::model::Protocol::Tcp,
                80,
            ))
                .into(),
            &r.vpc,
        )
        .await
        .unwrap();
    create_all(
        &r.h.client,
        &nlb_gateway("{name: existing, kind: TargetGroupName}"),
    )
    .await;
    accept_class(&r.h.client, "aws-nlb").await;
    eventually("the NLB Gateway is programmed", WAIT, || async {
        r.programmed("nlb").await.is_some()
    })
    .await;
    let inv = inventory_of(r.fake.as_ref(), r.fake.as_ref(), NLB_STACK, "demo/nlb").await;
    assert!(inv.tgs.is_empty(), "no target group is built: {inv:#?}");
    assert_eq!(
        forwarded_to(&inv.listeners[0].default_actions),
        vec![existing.arn.clone()]
    );
    let tags = r
        .fake
        .describe_tags(std::slice::from_ref(&existing.arn))
        .await
        .unwrap();
    assert!(
        tags.get(&existing.arn).is_none_or(|t| t.is_empty()),
        "the user's group is not tagged: {tags:?}"
    );

    r.second_pass_writes_nothing("nlb").await;
}

#[tokio::test]
async fn a_target_group_name_aws_does_not_know_fails_the_build_with_its_error() {
    let r = Running::start().await;
    create_all(
        &r.h.client,
        &nlb_gateway("{name: missing, kind: TargetGroupName}"),
    )
    .await;
    accept_class(&r.h.client, "aws-nlb").await;
    eventually("FailedBuildModel with AWS's error", WAIT, || async {
        r.warned("nlb", "One or more target groups not found: 'missing'")
            .await
    })
    .await;
    assert!(
        r.fake.write_calls().is_empty(),
        "{:?}",
        r.fake.write_calls()
    );
}
