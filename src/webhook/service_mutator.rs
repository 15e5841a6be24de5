//! `/mutate-v1-service`: defaults `spec.loadBalancerClass` on LoadBalancer Services, as upstream.
//!
//! CREATE: a `type: LoadBalancer` Service without a class gets `--load-balancer-class`.
//! UPDATE: a class removed by the update is put back from the old object (the field is immutable
//! once set, so re-applying a manifest without it must not fail).
//! Which Services the rule touches is the model's ([`needs_class`]), which `plan` applies too.

use super::{AdmissionRequest, Decision, Handler, Operation};
use crate::model::service::mutator::{load_balancer_class, needs_class};
use json_patch::{AddOperation, PatchOperation, ReplaceOperation};
use serde_json::Value;

pub const PATH: &str = "/mutate-v1-service";

pub struct ServiceMutator {
    pub load_balancer_class: String,
}

/// Sets `/spec/loadBalancerClass`, replacing an empty value or adding the key.
fn set_class(svc: &Value, value: &str) -> Vec<PatchOperation> {
    let path =
        json_patch::jsonptr::PointerBuf::parse("/spec/loadBalancerClass").expect("static pointer");
    let value = Value::String(value.to_string());
    if svc.pointer("/spec/loadBalancerClass").is_some() {
        vec![PatchOperation::Replace(ReplaceOperation { path, value })]
    } else {
        vec![PatchOperation::Add(AddOperation { path, value })]
    }
}

#[async_trait::async_trait]
impl Handler for ServiceMutator {
    fn mutating(&self) -> bool {
        true
    }

    async fn admit(&self, req: &AdmissionRequest) -> Decision {
        let Some(svc) = req.object.as_ref() else {
            return Decision::errored("decodeService", "admission request carries no object");
        };
        if !svc.is_object() || (svc.get("spec").is_some() && !svc["spec"].is_object()) {
            return Decision::errored("decodeService", "object is not a Service");
        }
        if !needs_class(svc) {
            return Decision::Patch(vec![]);
        }
        match req.operation {
            Operation::Create if svc.get("spec").is_some() => {
                Decision::Patch(set_class(svc, &self.load_balancer_class))
            }
            Operation::Update => match req.old_object.as_ref().and_then(load_balancer_class) {
                Some(old) => Decision::Patch(set_class(svc, old)),
                None => Decision::Patch(vec![]),
            },
            _ => Decision::Patch(vec![]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(op: Operation, obj: Value, old: Option<Value>) -> AdmissionRequest {
        AdmissionRequest {
            uid: "u".into(),
            operation: op,
            namespace: Some("ns".into()),
            name: None,
            object: Some(obj),
            old_object: old,
            dry_run: false,
        }
    }

    fn apply(obj: &Value, d: Decision) -> Value {
        let Decision::Patch(ops) = d else {
            panic!("expected a patch, got {d:?}")
        };
        let mut out = obj.clone();
        json_patch::patch(&mut out, &ops).unwrap();
        out
    }

    fn mutator() -> ServiceMutator {
        ServiceMutator {
            load_balancer_class: "service.k8s.aws/nlb".into(),
        }
    }

    #[tokio::test]
    async fn create_defaults_the_class_and_keeps_unknown_fields() {
        let svc =
            json!({"spec": {"type": "LoadBalancer", "futureField": {"x": [1, 2]}}, "zzz": true});
        let out = apply(
            &svc,
            mutator()
                .admit(&req(Operation::Create, svc.clone(), None))
                .await,
        );
        assert_eq!(out["spec"]["loadBalancerClass"], "service.k8s.aws/nlb");
        assert_eq!(out["spec"]["futureField"], json!({"x": [1, 2]}));
        assert_eq!(out["zzz"], true);
        let empty = json!({"spec": {"type": "LoadBalancer", "loadBalancerClass": ""}});
        let out = apply(
            &empty,
            mutator()
                .admit(&req(Operation::Create, empty.clone(), None))
                .await,
        );
        assert_eq!(out["spec"]["loadBalancerClass"], "service.k8s.aws/nlb");
    }

    #[tokio::test]
    async fn leaves_other_services_and_explicit_classes_alone() {
        for svc in [
            json!({"spec": {"type": "ClusterIP"}}),
            json!({"spec": {"type": "LoadBalancer", "loadBalancerClass": "other"}}),
        ] {
            assert_eq!(
                mutator().admit(&req(Operation::Create, svc, None)).await,
                Decision::Patch(vec![])
            );
        }
    }

    #[tokio::test]
    async fn update_restores_a_removed_class_only() {
        let new = json!({"spec": {"type": "LoadBalancer"}});
        let old = json!({"spec": {"type": "LoadBalancer", "loadBalancerClass": "custom/x"}});
        let out = apply(
            &new,
            mutator()
                .admit(&req(Operation::Update, new.clone(), Some(old)))
                .await,
        );
        assert_eq!(out["spec"]["loadBalancerClass"], "custom/x");
        let old_none = json!({"spec": {"type": "LoadBalancer"}});
        assert_eq!(
            mutator()
                .admit(&req(Operation::Update, new, Some(old_none)))
                .await,
            Decision::Patch(vec![])
        );
    }

    #[tokio::test]
    async fn garbage_objects_are_errors_not_panics() {
        for obj in [json!("str"), json!({"spec": 5})] {
            assert!(matches!(
                mutator().admit(&req(Operation::Create, obj, None)).await,
                Decision::Errored { .. }
            ));
        }
    }
}
