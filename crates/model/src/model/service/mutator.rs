//! The rule of the chart's Service mutator webhook (`/mutate-v1-service`, upstream's
//! `serviceMutator`): a Service created as `type: LoadBalancer` without a
//! `spec.loadBalancerClass` (absent or empty) gets the controller's `--load-balancer-class`,
//! whatever its annotations; an update that drops the class gets the old one back. Defined once
//! here, for the webhook and for `plan`, which plans Services as the webhook makes them.

use serde_json::Value;

/// `spec.loadBalancerClass` of a Service (as JSON), when set and not empty.
pub fn load_balancer_class(svc: &Value) -> Option<&str> {
    svc.pointer("/spec/loadBalancerClass")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
}

/// Whether the mutator gives `svc` (a Service as admitted, JSON) a class: a `type:
/// LoadBalancer` Service without one. On create it gets `--load-balancer-class`; on update the
/// old object's class, if it had one.
pub fn needs_class(svc: &Value) -> bool {
    svc.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer")
        && load_balancer_class(svc).is_none()
}

/// `svc` (a manifest about to be created, JSON) as the mutator admits it: `class` set when
/// [`needs_class`]; returns whether it was set. A manifest without `spec` is left alone, as the
/// webhook leaves it.
pub fn default_class_on_create(svc: &mut Value, class: &str) -> bool {
    if !needs_class(svc) {
        return false;
    }
    match svc.get_mut("spec").and_then(Value::as_object_mut) {
        Some(spec) => {
            spec.insert("loadBalancerClass".into(), Value::String(class.into()));
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_load_balancer_services_without_a_class_get_one_whatever_their_annotations() {
        let nlb = "service.k8s.aws/nlb";
        let cases = [
            (json!({"spec": {"type": "LoadBalancer"}}), Some(nlb)),
            (
                json!({"metadata": {"annotations": {"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"}},
                       "spec": {"type": "LoadBalancer"}}),
                Some(nlb),
            ),
            (
                json!({"spec": {"type": "LoadBalancer", "loadBalancerClass": ""}}),
                Some(nlb),
            ),
            (
                json!({"spec": {"type": "LoadBalancer", "loadBalancerClass": "other/lb"}}),
                Some("other/lb"),
            ),
            (json!({"spec": {"type": "NodePort"}}), None),
            (json!({"spec": {}}), None),
        ];
        for (svc, want) in cases {
            let mut out = svc.clone();
            let set = default_class_on_create(&mut out, nlb);
            assert_eq!(load_balancer_class(&out), want, "{svc}");
            assert_eq!(set, needs_class(&svc), "{svc}");
            assert_eq!(set, load_balancer_class(&svc) != want, "{svc}");
        }
    }
}
