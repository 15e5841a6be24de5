//! Helpers of the per-setting Service model tests: a `default/svc` Service from a few
//! annotations and a YAML spec, built offline.

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{build_service_stack, ServiceEnv};
use crate::crd::target_group_binding::NetworkingProtocol;
use crate::model::config::ModelConfig;
use crate::model::types::*;

pub fn cfg() -> ModelConfig {
    ModelConfig {
        cluster_name: "my-cluster".into(),
        backend_sg_id: Some("sg-backend".into()),
        ..Default::default()
    }
}

/// A Service `default/svc` with these annotations (suffixes) and this YAML `spec`.
pub fn svc(annotations: &[(&str, &str)], spec: &str) -> Service {
    let mut y = String::from("metadata:\n  name: svc\n  namespace: default\n  uid: 11111111-2222-3333-4444-555555555555\n  annotations:\n    service.beta.kubernetes.io/aws-load-balancer-type: nlb-ip\n");
    for (k, v) in annotations {
        y.push_str(&format!("    service.beta.kubernetes.io/{k}: \"{v}\"\n"));
    }
    y.push_str("spec:\n  type: LoadBalancer\n");
    y.push_str(spec);
    serde_yaml::from_str(&y).unwrap()
}

pub const DNS_PORTS: &str = "  ports:\n  - {name: dns-tcp, port: 53, targetPort: 5353, protocol: TCP}\n  - {name: dns-udp, port: 53, targetPort: 5353, protocol: UDP}\n";
pub const WEB_PORTS: &str = "  ports:\n  - {name: http, port: 80, targetPort: 8080, protocol: TCP}\n  - {name: https, port: 443, targetPort: 8443, protocol: TCP}\n";

pub fn build(s: &Service, c: &ModelConfig) -> Stack {
    build_service_stack(s, c, &ServiceEnv::default()).unwrap()
}

pub fn err(s: &Service, c: &ModelConfig) -> String {
    build_service_stack(s, c, &ServiceEnv::default())
        .unwrap_err()
        .to_string()
}

pub fn rules(
    b: &TargetGroupBindingResource,
) -> Vec<(Option<NetworkingProtocol>, Option<IntOrString>)> {
    b.spec
        .networking
        .iter()
        .map(|r| (r.protocol, r.port.clone()))
        .collect()
}

/// The target group of Service port `port` (the stack sorts them by resource id as text).
pub fn tg(stack: &Stack, port: i32) -> &TargetGroup {
    let id = format!("default/svc:{port}");
    stack.target_groups.iter().find(|t| t.id == id).unwrap()
}

pub fn tg_attr(stack: &Stack, port: i32, k: &str) -> Option<String> {
    tg(stack, port).attributes.get(k).cloned()
}
