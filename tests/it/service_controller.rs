//! The Service controller in-process (`controller::service::run`) against the in-memory API
//! server and FakeAws: a new Service gets the finalizer, an NLB, TargetGroupBindings with
//! upstream's labels, the lower-cased hostname and `SuccessfullyReconciled`; an invalid
//! annotation is a `FailedBuildModel` Warning with no AWS write and no finalizer; a Service of
//! another class is never touched; a Service whose annotation asks for deletion protection keeps
//! its finalizer and NLB when deleted, with upstream's Warning.

use std::sync::Arc;
use std::time::Duration;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::controller::service::{self, ServiceConfig};
use aws_load_balancer_controller::crd::TargetGroupBinding;
use aws_load_balancer_controller::model::ModelConfig;
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, DeleteParams, ListParams};
use kube::ResourceExt;
use tokio_util::sync::CancellationToken;

use crate::ingress::{eventually, network, Harness, CLUSTER, WAIT};
use crate::support::inventory::inventory_of;

const FINALIZER: &str = "service.k8s.aws/resources";

/// The Service controller running in-process (also used by `service_weighted`).
pub(crate) struct Running {
    pub(crate) h: Harness,
    pub(crate) fake: Arc<FakeAws>,
    token: CancellationToken,
}

impl Running {
    pub(crate) async fn start() -> Running {
        Self::start_with(|_| {}).await
    }

    /// Started with the test settings, then `tweak`.
    pub(crate) async fn start_with(tweak: impl FnOnce(&mut ServiceConfig)) -> Running {
        let fake = Arc::new(FakeAws::new());
        let vpc = network(&fake);
        let h = Harness::new(fake.clone(), fake.clone(), &vpc, Default::default()).await;
        let mut cfg = ServiceConfig {
            model: ModelConfig {
                cluster_name: CLUSTER.into(),
                vpc_id: Some(vpc.clone()),
                ..ModelConfig::default()
            },
            max_backoff: Duration::from_millis(500),
            vpc_cidrs: vec!["10.0.0.0/16".into()],
            ..ServiceConfig::default()
        };
        tweak(&mut cfg);
        let token = CancellationToken::new();
        tokio::spawn(service::run(
            h.client.clone(),
            fake.clone(),
            fake.clone(),
            vpc,
            cfg,
            token.clone(),
        ));
        Running { h, fake, token }
    }

    pub(crate) fn services(&self) -> Api<Service> {
        Api::namespaced(self.h.client.clone(), "demo")
    }

    pub(crate) async fn hostname(&self, name: &str) -> Option<String> {
        let svc = self.services().get_opt(name).await.ok()??;
        svc.status?
            .load_balancer?
            .ingress?
            .first()?
            .hostname
            .clone()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

fn manifest(name: &str, class: &str, annotations: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: demo\n  annotations:\n    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing\n{annotations}spec:\n  type: LoadBalancer\n  loadBalancerClass: {class}\n  ports:\n  - {{name: http, port: 80, targetPort: 8080, nodePort: 30080, protocol: TCP}}\n"
    )
}

#[tokio::test]
async fn a_new_service_gets_finalizer_nlb_bindings_status_and_success_event() {
    let r = Running::start().await;
    r.h.apply(&manifest("web", "service.k8s.aws/nlb", "")).await;
    eventually("status hostname", WAIT, || async {
        r.hostname("web").await.is_some()
    })
    .await;
    let inv = inventory_of(
        r.fake.as_ref(),
        r.fake.as_ref(),
        "service.k8s.aws/stack",
        "demo/web",
    )
    .await;
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    let lb = &inv.lbs[0].0;
    assert_eq!(lb.lb_type, "network");
    let host = r.hostname("web").await.unwrap();
    assert_eq!(host, lb.dns_name.to_ascii_lowercase());
    let svc = r.services().get("web").await.unwrap();
    assert!(svc.finalizers().contains(&FINALIZER.to_string()));
    let ports = svc.status.unwrap().load_balancer.unwrap().ingress.unwrap()[0]
        .ports
        .clone()
        .unwrap();
    assert_eq!(
        (ports[0].port, ports[0].protocol.as_str()),
        (80, "TCP"),
        "spec ports in status, as upstream"
    );
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(r.h.client.clone(), "demo");
    let ours = ListParams::default()
        .labels("service.k8s.aws/stack-namespace=demo,service.k8s.aws/stack-name=web");
    let list = tgbs.list(&ours).await.unwrap().items;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].spec.target_group_arn, inv.tgs[0].0.arn);
    assert_eq!(
        list[0].name_any(),
        inv.tgs[0].0.name,
        "named after its target group"
    );
    eventually("SuccessfullyReconciled", WAIT, || async {
        r.h.event_reasons("demo", "web")
            .await
            .contains(&"SuccessfullyReconciled".to_string())
    })
    .await;
}

#[tokio::test]
async fn an_invalid_annotation_is_a_warning_and_no_aws_write() {
    let r = Running::start().await;
    let bad = "    service.beta.kubernetes.io/aws-load-balancer-ip-address-type: ipv5\n";
    r.h.apply(&manifest("bad", "service.k8s.aws/nlb", bad))
        .await;
    eventually("FailedBuildModel", WAIT, || async {
        r.h.events("demo", "bad")
            .await
            .iter()
            .any(|(t, reason, note)| {
                t == "Warning"
                    && reason == "FailedBuildModel"
                    && note.starts_with("Failed build model due to")
                    && note.contains("unknown IPAddressType: ipv5")
            })
    })
    .await;
    // The Service keeps failing (and retrying with backoff): give it a few rounds.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        r.fake.write_calls().is_empty(),
        "{:?}",
        r.fake.write_calls()
    );
    let svc = r.services().get("bad").await.unwrap();
    assert!(svc.finalizers().is_empty(), "no finalizer before a deploy");
}

#[tokio::test]
async fn a_service_of_another_class_is_never_touched() {
    let r = Running::start().await;
    r.h.apply(&manifest("other", "example.com/lb", "")).await;
    // A Service of ours next to it, to know the controller is running.
    r.h.apply(&manifest("web", "service.k8s.aws/nlb", "")).await;
    eventually("ours reconciled", WAIT, || async {
        r.hostname("web").await.is_some()
    })
    .await;
    let other = r.services().get("other").await.unwrap();
    assert!(other.finalizers().is_empty());
    assert!(other
        .status
        .and_then(|s| s.load_balancer)
        .and_then(|l| l.ingress)
        .is_none());
    assert!(r.h.events("demo", "other").await.is_empty());
}

#[tokio::test]
async fn deletion_protection_in_the_annotation_keeps_finalizer_and_nlb() {
    let r = Running::start().await;
    let protect = "    service.beta.kubernetes.io/aws-load-balancer-attributes: deletion_protection.enabled=true\n";
    r.h.apply(&manifest("web", "service.k8s.aws/nlb", protect))
        .await;
    eventually("status hostname", WAIT, || async {
        r.hostname("web").await.is_some()
    })
    .await;
    r.services()
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    eventually("upstream's refusal", WAIT, || async {
        r.h.events("demo", "web")
            .await
            .iter()
            .any(|(t, reason, note)| {
                t == "Warning"
                    && reason == "FailedBuildModel"
                    && note
                        .contains("deletion_protection is enabled, cannot delete the service: web")
            })
    })
    .await;
    let svc = r.services().get("web").await.unwrap();
    assert!(svc.finalizers().contains(&FINALIZER.to_string()));
    let inv = inventory_of(
        r.fake.as_ref(),
        r.fake.as_ref(),
        "service.k8s.aws/stack",
        "demo/web",
    )
    .await;
    assert_eq!(inv.lbs.len(), 1, "the protected NLB stays");
}

/// Upstream's un-adoption: a Service that stops qualifying (here its type annotation no longer
/// names this controller) has its stack deleted, its status cleared and the finalizer released.
#[tokio::test]
async fn a_service_that_stops_qualifying_loses_its_nlb_status_and_finalizer() {
    let r = Running::start().await;
    let yaml = "apiVersion: v1\nkind: Service\nmetadata:\n  name: legacy\n  namespace: demo\n  annotations:\n    service.beta.kubernetes.io/aws-load-balancer-type: external\n    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: instance\nspec:\n  type: LoadBalancer\n  ports:\n  - {name: http, port: 80, targetPort: 8080, nodePort: 30080, protocol: TCP}\n";
    r.h.apply(yaml).await;
    eventually("status hostname", WAIT, || async {
        r.hostname("legacy").await.is_some()
    })
    .await;
    let patch = serde_json::json!({"metadata": {"annotations": {
        "service.beta.kubernetes.io/aws-load-balancer-type": "nlb"}}});
    r.services()
        .patch(
            "legacy",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&patch),
        )
        .await
        .unwrap();
    eventually("finalizer released", WAIT, || async {
        let svc = r.services().get("legacy").await.unwrap();
        !svc.finalizers().contains(&FINALIZER.to_string())
    })
    .await;
    assert!(r.hostname("legacy").await.is_none(), "status cleared");
    let inv = inventory_of(
        r.fake.as_ref(),
        r.fake.as_ref(),
        "service.k8s.aws/stack",
        "demo/legacy",
    )
    .await;
    assert!(inv.is_empty() && inv.listeners.is_empty(), "{inv:#?}");
}

/// `--lb-stabilization-monitor-interval`: a capacity reservation asked of an NLB still
/// provisioning is waited for as upstream does — no Warning, the Service queued again after the
/// interval (not the failure backoff, which would retry within a second) — then applied.
#[tokio::test]
async fn a_provisioning_nlb_is_retried_after_the_stabilization_interval() {
    use aws_load_balancer_controller::aws::ElbV2;
    let capacity = |n: u32| {
        format!("    service.beta.kubernetes.io/aws-load-balancer-minimum-load-balancer-capacity: CapacityUnits={n}\n")
    };
    for (interval, applied) in [
        (Duration::from_millis(300), true),
        (Duration::from_secs(3600), false),
    ] {
        let r = Running::start_with(|c| c.lb_stabilization_interval = interval).await;
        r.h.apply(&manifest("web", "service.k8s.aws/nlb", &capacity(100)))
            .await;
        eventually("status hostname", WAIT, || async {
            r.hostname("web").await.is_some()
        })
        .await;
        let inv = inventory_of(
            r.fake.as_ref(),
            r.fake.as_ref(),
            "service.k8s.aws/stack",
            "demo/web",
        )
        .await;
        let arn = inv.lbs[0].0.arn.clone();
        let reserved = || async { r.fake.describe_capacity_reservation(&arn).await.unwrap() };
        assert_eq!(reserved().await, Some(100));
        // Settled: no pass left over from the create.
        tokio::time::sleep(Duration::from_millis(500)).await;

        r.fake.set_load_balancer_state(&arn, "provisioning");
        r.fake.clear_calls();
        let patch = serde_json::json!({"metadata": {"annotations": {
            "service.beta.kubernetes.io/aws-load-balancer-minimum-load-balancer-capacity": "CapacityUnits=200"}}});
        r.services()
            .patch(
                "web",
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&patch),
            )
            .await
            .unwrap();
        eventually("a pass meets the provisioning NLB", WAIT, || async {
            r.fake.count("DescribeLoadBalancers") > 0
        })
        .await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(reserved().await, Some(100), "not while provisioning");
        // The wait is the deploy's last step, as upstream's: the pass still synced listeners.
        assert!(
            r.fake.count("DescribeListeners") > 0,
            "listeners synced before the capacity step waits: {:?}",
            r.fake.calls()
        );
        r.fake.set_load_balancer_state(&arn, "active");
        if applied {
            eventually("the reservation once the NLB is active", WAIT, || async {
                reserved().await == Some(200)
            })
            .await;
        } else {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            assert_eq!(
                reserved().await,
                Some(100),
                "queued again only after the interval (1h), not by the failure backoff"
            );
        }
        let events = r.h.events("demo", "web").await;
        assert!(
            events.iter().all(|(t, _, _)| t != "Warning"),
            "waiting is not a failure: {events:?}"
        );
    }
}
