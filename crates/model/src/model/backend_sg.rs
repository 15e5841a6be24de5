//! The cluster's shared backend security group (`--backend-security-group`, or the one the
//! controller creates): the same group for every kind of stack, Ingress, Service and Gateway.

use super::config::ModelConfig;
use super::naming;
use super::types::BackendSecurityGroup;

/// The cluster's shared backend security group (`--backend-security-group` or auto-created).
pub fn shared_backend_sg(cfg: &ModelConfig) -> BackendSecurityGroup {
    BackendSecurityGroup {
        group_id: cfg.backend_sg_id.clone(),
        name: naming::backend_sg_name(&cfg.cluster_name),
        description: "[k8s] Shared Backend SecurityGroup for LoadBalancer".into(),
        tags: {
            let mut t = cfg.default_tags.clone();
            t.insert("elbv2.k8s.aws/cluster".into(), cfg.cluster_name.clone());
            t.insert("elbv2.k8s.aws/resource".into(), "backend-sg".into());
            t
        },
    }
}
