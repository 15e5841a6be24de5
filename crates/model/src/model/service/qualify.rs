//! Which Services this controller turns into NLBs: upstream's `IsServiceSupported`, in its
//! order (deleting → type gate → `spec.loadBalancerClass` → type annotations).

use k8s_openapi::api::core::v1::Service;

use super::annotations::{sfx, SvcAnnotations};
use crate::annotations::AnnotationMap;
use crate::model::config::ModelConfig;

/// Finalizer upstream puts on every Service it manages (defined with the other finalizers).
pub use crate::crd::names::SERVICE_FINALIZER;

/// Whether the controller builds an NLB for `svc` (a Service that stops qualifying but still
/// carries [`SERVICE_FINALIZER`] has its stack deleted instead).
pub fn is_service_supported(svc: &Service, cfg: &ModelConfig) -> bool {
    if svc.metadata.deletion_timestamp.is_some() {
        return false;
    }
    let spec = svc.spec.as_ref();
    if cfg.gate("ServiceTypeLoadBalancerOnly")
        && spec.and_then(|s| s.type_.as_deref()) != Some("LoadBalancer")
    {
        return false;
    }
    if let Some(class) = spec.and_then(|s| s.load_balancer_class.as_deref()) {
        return class == cfg.load_balancer_class;
    }
    let empty = AnnotationMap::new();
    let a = SvcAnnotations(svc.metadata.annotations.as_ref().unwrap_or(&empty));
    match a.string(sfx::LB_TYPE) {
        Some("nlb-ip") => true,
        Some("external") => matches!(a.string(sfx::TARGET_TYPE), Some("ip" | "instance")),
        _ => false,
    }
}

/// Whether the Service still holds upstream's finalizer (its stack must be cleaned up).
pub fn is_pending_finalization(svc: &Service) -> bool {
    svc.metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|x| x == SERVICE_FINALIZER))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    struct Case {
        name: &'static str,
        svc_type: Option<&'static str>,
        class: Option<&'static str>,
        annotations: &'static [(&'static str, &'static str)],
        deleting: bool,
        lb_only_gate: bool,
        want: bool,
    }

    fn svc(c: &Case) -> Service {
        let mut s = Service::default();
        s.metadata.name = Some("svc".into());
        s.metadata.annotations = Some(
            c.annotations
                .iter()
                .map(|(k, v)| (format!("service.beta.kubernetes.io/{k}"), v.to_string()))
                .collect(),
        );
        if c.deleting {
            s.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
        }
        s.spec = Some(k8s_openapi::api::core::v1::ServiceSpec {
            type_: c.svc_type.map(String::from),
            load_balancer_class: c.class.map(String::from),
            ..Default::default()
        });
        s
    }

    // Mirrors upstream's service_utils_test.go table plus the type-gate rows.
    #[test]
    fn is_service_supported_table() {
        let lb = Some("LoadBalancer");
        let cases = [
            Case {
                name: "no annotation, no class",
                svc_type: lb,
                class: None,
                annotations: &[],
                deleting: false,
                lb_only_gate: false,
                want: false,
            },
            Case {
                name: "nlb-ip",
                svc_type: lb,
                class: None,
                annotations: &[("aws-load-balancer-type", "nlb-ip")],
                deleting: false,
                lb_only_gate: false,
                want: true,
            },
            Case {
                name: "external + ip",
                svc_type: lb,
                class: None,
                annotations: &[
                    ("aws-load-balancer-type", "external"),
                    ("aws-load-balancer-nlb-target-type", "ip"),
                ],
                deleting: false,
                lb_only_gate: false,
                want: true,
            },
            Case {
                name: "external + instance",
                svc_type: lb,
                class: None,
                annotations: &[
                    ("aws-load-balancer-type", "external"),
                    ("aws-load-balancer-nlb-target-type", "instance"),
                ],
                deleting: false,
                lb_only_gate: false,
                want: true,
            },
            Case {
                name: "external + typo target type",
                svc_type: lb,
                class: None,
                annotations: &[
                    ("aws-load-balancer-type", "external"),
                    ("aws-load-balancer-nlb-target-type", "IP"),
                ],
                deleting: false,
                lb_only_gate: false,
                want: false,
            },
            Case {
                name: "external alone",
                svc_type: lb,
                class: None,
                annotations: &[("aws-load-balancer-type", "external")],
                deleting: false,
                lb_only_gate: false,
                want: false,
            },
            Case {
                name: "in-tree nlb value",
                svc_type: lb,
                class: None,
                annotations: &[("aws-load-balancer-type", "nlb")],
                deleting: false,
                lb_only_gate: false,
                want: false,
            },
            Case {
                name: "our class",
                svc_type: lb,
                class: Some("service.k8s.aws/nlb"),
                annotations: &[],
                deleting: false,
                lb_only_gate: false,
                want: true,
            },
            Case {
                name: "other class wins over annotation",
                svc_type: lb,
                class: Some("other"),
                annotations: &[("aws-load-balancer-type", "nlb-ip")],
                deleting: false,
                lb_only_gate: false,
                want: false,
            },
            Case {
                name: "deleting",
                svc_type: lb,
                class: Some("service.k8s.aws/nlb"),
                annotations: &[],
                deleting: true,
                lb_only_gate: false,
                want: false,
            },
            Case {
                name: "NodePort with annotation, gate off",
                svc_type: Some("NodePort"),
                class: None,
                annotations: &[("aws-load-balancer-type", "nlb-ip")],
                deleting: false,
                lb_only_gate: false,
                want: true,
            },
            Case {
                name: "NodePort with annotation, gate on",
                svc_type: Some("NodePort"),
                class: None,
                annotations: &[("aws-load-balancer-type", "nlb-ip")],
                deleting: false,
                lb_only_gate: true,
                want: false,
            },
            Case {
                name: "LoadBalancer, gate on",
                svc_type: lb,
                class: None,
                annotations: &[("aws-load-balancer-type", "nlb-ip")],
                deleting: false,
                lb_only_gate: true,
                want: true,
            },
        ];
        for c in &cases {
            let mut cfg = ModelConfig::default();
            cfg.feature_gates
                .insert("ServiceTypeLoadBalancerOnly".into(), c.lb_only_gate);
            assert_eq!(is_service_supported(&svc(c), &cfg), c.want, "{}", c.name);
        }
    }

    #[test]
    fn class_compares_with_the_configured_class() {
        let c = Case {
            name: "custom",
            svc_type: Some("LoadBalancer"),
            class: Some("example.com/nlb"),
            annotations: &[],
            deleting: false,
            lb_only_gate: false,
            want: true,
        };
        let cfg = ModelConfig {
            load_balancer_class: "example.com/nlb".into(),
            ..Default::default()
        };
        assert!(is_service_supported(&svc(&c), &cfg));
        assert!(!is_service_supported(&svc(&c), &ModelConfig::default()));
    }
}
