//! The names the webhooks, the controllers and the model share with users and with each other
//! (finalizers, readiness-gate condition types, stack labels): one definition each, so the
//! webhook that injects a gate and the controller that writes it cannot drift apart.

/// Condition-type prefix of our pod readiness gates: `target-health.elbv2.k8s.aws/<binding>`.
pub const GATE_PREFIX: &str = "target-health.elbv2.k8s.aws/";
/// The v1 ALB ingress controller's gates (`target-health.alb.ingress.k8s.aws/<...>`). The pod
/// webhook drops every condition type starting with this domain, slash or not, as upstream.
pub const LEGACY_GATE_DOMAIN: &str = "target-health.alb.ingress.k8s.aws";
/// [`LEGACY_GATE_DOMAIN`] with its slash: the prefix the controller strips to find a binding.
pub const LEGACY_GATE_PREFIX: &str = "target-health.alb.ingress.k8s.aws/";
/// Both gate prefixes a pod may carry (current first).
pub const GATE_PREFIXES: [&str; 2] = [GATE_PREFIX, LEGACY_GATE_PREFIX];

/// Held by a TargetGroupBinding until its targets are deregistered.
pub const TGB_FINALIZER: &str = "elbv2.k8s.aws/resources";
/// Held by a member of an implicit (one-Ingress) group until its stack is deleted.
pub const INGRESS_FINALIZER: &str = "ingress.k8s.aws/resources";
/// `group.ingress.k8s.aws/<group name>`: held by a member of an explicit IngressGroup.
pub const GROUP_FINALIZER_PREFIX: &str = "group.ingress.k8s.aws/";
/// Held by a Service with an NLB until its stack is deleted.
pub const SERVICE_FINALIZER: &str = "service.k8s.aws/resources";

/// Label of the TargetGroupBindings of an explicit IngressGroup's stack (value: group name).
pub const INGRESS_STACK_LABEL: &str = "ingress.k8s.aws/stack";
/// Labels of the TargetGroupBindings of an implicit group's stack (the Ingress's namespace and
/// name).
pub const INGRESS_STACK_NAMESPACE_LABEL: &str = "ingress.k8s.aws/stack-namespace";
pub const INGRESS_STACK_NAME_LABEL: &str = "ingress.k8s.aws/stack-name";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legacy_prefix_is_its_domain_with_a_slash() {
        assert_eq!(LEGACY_GATE_PREFIX, format!("{LEGACY_GATE_DOMAIN}/"));
        assert!(GATE_PREFIX.ends_with('/'));
    }
}
