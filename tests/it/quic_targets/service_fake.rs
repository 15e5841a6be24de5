//! A QUIC Service on the fake, through the Service controller (NLB, QUIC listener and target
//! group, binding with `targetGroupProtocol: QUIC`) and the TargetGroupBinding controller.
//! The fake refuses a QUIC target without its id, or deregistered without the id it was
//! registered with, as AWS does; so a target that comes and goes proves the id was sent.

use std::time::Duration;

use aws_load_balancer_controller::controller::tgb::quic::{DEFAULT_ENV_NAME, REASON_MISSING};
use aws_load_balancer_controller::controller::tgb::{self, TgbConfig};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::ingress::{events_of, eventually, CLUSTER, WAIT};
use crate::service_controller::Running;

/// A QUIC Service: UDP 443 (to pods' 8443) upgraded by the QUIC annotation, ip targets.
pub(super) const SERVICE: &str = r#"
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: demo
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: ip
    service.beta.kubernetes.io/aws-load-balancer-quic-enabled-ports: "443"
spec:
  type: LoadBalancer
  loadBalancerClass: service.k8s.aws/nlb
  selector: {app: web}
  ports:
  - {name: h3, port: 443, targetPort: 8443, protocol: UDP}
"#;

#[tokio::test]
async fn a_quic_service_registers_pods_with_their_server_ids_and_warns_about_one_without() {
    let r = Running::start().await;
    let client = r.h.client.clone();
    let token = CancellationToken::new();
    let cfg = TgbConfig {
        requeue: Duration::from_millis(200),
        max_backoff: Duration::from_secs(1),
        vpc_cidrs: vec!["10.0.0.0/16".parse().unwrap()],
        cluster_name: CLUSTER.into(),
        vpc_id: r.h.vpc.clone(),
        ..TgbConfig::default()
    };
    let tgb_task = tokio::spawn(tgb::run(
        client.clone(),
        r.fake.clone(),
        r.fake.clone(),
        cfg,
        token.clone(),
    ));
    r.h.apply(SERVICE).await;
    let (binding, arn) = quic_binding(&client, "demo", WAIT).await;

    let (ip1, ip2, ip3) = ("10.0.1.11", "10.0.1.12", "10.0.1.13");
    let id1 = quic_pod(&client, "demo", "web-1", ip1, Some(DEFAULT_ENV_NAME))
        .await
        .unwrap();
    let id2 = quic_pod(&client, "demo", "web-2", ip2, Some(DEFAULT_ENV_NAME))
        .await
        .unwrap();
    assert_ne!(id1, id2);
    assert_eq!(quic_pod(&client, "demo", "web-3", ip3, None).await, None);
    slice(
        &client,
        "demo",
        &[("web-1", ip1), ("web-2", ip2), ("web-3", ip3)],
    )
    .await;

    let both = vec![
        (format!("{ip1}:8443"), Some(id1.clone())),
        (format!("{ip2}:8443"), Some(id2.clone())),
    ];
    eventually(
        "both pods registered with their server ids",
        WAIT,
        || async { quic_targets(r.fake.as_ref(), &arn).await == both },
    )
    .await;

    // The pod without an id is not registered, and the binding says why.
    let named = format!("pod web-3 ({ip3}:8443)");
    eventually(
        "a Warning names the pod without a server id",
        WAIT,
        || async {
            events_of(&client, "demo", &binding)
                .await
                .iter()
                .any(|(t, reason, note)| {
                    t == "Warning" && reason == REASON_MISSING && note.contains(&named)
                })
        },
    )
    .await;
    let warnings: Vec<String> = events_of(&client, "demo", &binding)
        .await
        .into_iter()
        .filter(|(_, reason, _)| reason == REASON_MISSING)
        .map(|(_, _, note)| note)
        .collect();
    assert!(
        warnings
            .iter()
            .all(|n| !n.contains("web-1") && !n.contains("web-2")),
        "{warnings:?}"
    );
    assert_eq!(quic_targets(r.fake.as_ref(), &arn).await, both);

    // web-2 leaves: deregistered (the fake takes it only with the id it was registered with).
    slice(&client, "demo", &[("web-1", ip1), ("web-3", ip3)]).await;
    eventually("web-2 deregistered", WAIT, || async {
        quic_targets(r.fake.as_ref(), &arn).await == both[..1]
    })
    .await;
    // No request of ours was refused for its server id.
    let refused: Vec<String> = events_of(&client, "demo", &binding)
        .await
        .into_iter()
        .filter(|(_, reason, note)| reason == "FailedReconcile" && note.contains("QUIC server ID"))
        .map(|(_, _, note)| note)
        .collect();
    assert!(refused.is_empty(), "{refused:?}");

    token.cancel();
    tokio::time::timeout(Duration::from_secs(10), tgb_task)
        .await
        .expect("the binding controller stops on shutdown")
        .unwrap();
}
