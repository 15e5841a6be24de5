//! The ALB Gateway controller in-process against the in-memory API server and FakeAws: a
//! TargetGroupConfiguration's `nodeSelector` reaches the instance TargetGroupBinding whole —
//! `matchLabels` and `matchExpressions`, as upstream copies it — and a second pass over the
//! unchanged Gateway writes neither AWS nor the binding.

use std::time::Duration;

use aws_load_balancer_controller::crd::TargetGroupBinding;
use aws_load_balancer_controller::model::gateway::listeners::LbKind;
use kube::api::{Api, ListParams};
use kube::ResourceExt;
use serde_json::json;

use crate::gateway_backends::{Running, ALB_GATEWAY};
use crate::ingress::{eventually, WAIT};
use crate::support::gateway::{accept_class, create_all};

const TGC: &str = r#"
apiVersion: gateway.k8s.aws/v1beta1
kind: TargetGroupConfiguration
metadata: {name: web, namespace: demo}
spec:
  targetReference: {name: web}
  defaultConfiguration:
    targetType: instance
    nodeSelector:
      matchLabels: {pool: web}
      matchExpressions:
      - {key: zone, operator: NotIn, values: [b]}
      - {key: spot, operator: DoesNotExist, values: []}
"#;

#[tokio::test]
async fn a_target_group_configuration_node_selector_reaches_the_binding_whole() {
    let r = Running::start().await;
    create_all(&r.h.client, &format!("{ALB_GATEWAY}---{TGC}")).await;
    r.controller(LbKind::Alb, Duration::from_millis(500));
    accept_class(&r.h.client, "aws-alb").await;
    eventually("the ALB Gateway is programmed", WAIT, || async {
        r.programmed("edge").await.is_some()
    })
    .await;
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(r.h.client.clone(), "demo");
    let binding = || async {
        let mut all = tgbs.list(&ListParams::default()).await.unwrap().items;
        assert_eq!(all.len(), 1, "one binding for the one backend");
        all.remove(0)
    };
    let first = binding().await;
    assert_eq!(
        serde_json::to_value(&first.spec.node_selector).unwrap(),
        json!({
            "matchLabels": {"pool": "web"},
            "matchExpressions": [
                {"key": "zone", "operator": "NotIn", "values": ["b"]},
                {"key": "spot", "operator": "DoesNotExist"},
            ],
        })
    );

    r.second_pass_writes_nothing("edge").await;
    assert_eq!(
        binding().await.resource_version(),
        first.resource_version(),
        "an unchanged selector is not written again"
    );
}
