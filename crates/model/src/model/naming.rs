//! Generated AWS names, hash-for-hash identical to upstream: sha256 over concatenated inputs,
//! lower-case hex, name parts stripped of non-alphanumerics and truncated like Go's `%.Ns`.

use sha2::{Digest, Sha256};

use super::types::{GroupId, LoadBalancerScheme, Protocol, ProtocolVersion, TargetType};

/// Removes every character that is not an ASCII letter or digit (Go `[[:^alnum:]]`).
pub fn sanitize(s: &str) -> String {
    s.chars().filter(|c| c.is_ascii_alphanumeric()).collect()
}

/// First `n` characters (Go `%.Ns` counts runes; sanitised input is ASCII anyway).
fn trunc(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

pub(crate) fn sha256_hex(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
    }
    hex::encode(h.finalize())
}

/// `k8s-<17 of group>-<10 hex>` (explicit) or `k8s-<8 of ns>-<8 of name>-<10 hex>` (implicit).
fn group_scoped_name(group: &GroupId, hash: &str) -> String {
    if group.is_explicit() {
        format!(
            "k8s-{}-{}",
            trunc(&sanitize(&group.name), 17),
            trunc(hash, 10)
        )
    } else {
        format!(
            "k8s-{}-{}-{}",
            trunc(&sanitize(&group.namespace), 8),
            trunc(&sanitize(&group.name), 8),
            trunc(hash, 10)
        )
    }
}

/// Generated ALB name: hash of cluster + group id string + scheme.
pub fn load_balancer_name(cluster: &str, group: &GroupId, scheme: LoadBalancerScheme) -> String {
    let id = group.as_string();
    group_scoped_name(group, &sha256_hex(&[cluster, &id, scheme.as_str()]))
}

/// Managed frontend security group name: hash of cluster + group id string.
pub fn managed_sg_name(cluster: &str, group: &GroupId) -> String {
    let id = group.as_string();
    group_scoped_name(group, &sha256_hex(&[cluster, &id]))
}

/// Auto-created backend security group: `k8s-traffic-<232 of cluster>-<10 hex of cluster>`.
pub fn backend_sg_name(cluster: &str) -> String {
    let hash = sha256_hex(&[cluster]);
    format!(
        "k8s-traffic-{}-{}",
        trunc(&sanitize(cluster), 232),
        trunc(&hash, 10)
    )
}

/// A frontend NLB target group (type `alb`, protocol TCP): hash of cluster + group id string +
/// NLB port + `alb` + `TCP` + health-check port + health-check protocol.
pub fn frontend_nlb_target_group_name(
    cluster: &str,
    group: &GroupId,
    port: i32,
    hc_port: &str,
    hc_protocol: Protocol,
) -> String {
    let (id, port) = (group.as_string(), port.to_string());
    let hash = sha256_hex(&[
        cluster,
        &id,
        &port,
        "alb",
        "TCP",
        hc_port,
        hc_protocol.as_str(),
    ]);
    group_scoped_name(group, &hash)
}

/// Inputs of a target group name, in upstream's hash order.
#[derive(Debug, Clone)]
pub struct TargetGroupNameInputs<'a> {
    pub cluster: &'a str,
    pub group: &'a GroupId,
    pub ingress_namespace: &'a str,
    pub ingress_name: &'a str,
    pub service_namespace: &'a str,
    pub service_name: &'a str,
    pub service_uid: &'a str,
    /// `IntOrString.String()` of the port as written in the Ingress (`80` or `http`).
    pub service_port: &'a str,
    pub target_port: i32,
    pub target_type: TargetType,
    pub protocol: Protocol,
    pub protocol_version: ProtocolVersion,
    pub target_control_port: Option<i32>,
}

/// Target group name: `k8s-<8 of svc ns>-<8 of svc name>-<10 hex>`.
pub fn target_group_name(i: &TargetGroupNameInputs<'_>) -> String {
    let id = i.group.as_string();
    let tg_port = i.target_port.to_string();
    let control = i.target_control_port.map(|p| p.to_string());
    let mut parts = vec![
        i.cluster,
        &id,
        i.ingress_namespace,
        i.ingress_name,
        i.service_uid,
        i.service_port,
        &tg_port,
        i.target_type.as_str(),
        i.protocol.as_str(),
        i.protocol_version.as_str(),
    ];
    if let Some(c) = &control {
        parts.push(c);
    }
    let hash = sha256_hex(&parts);
    format!(
        "k8s-{}-{}-{}",
        trunc(&sanitize(i.service_namespace), 8),
        trunc(&sanitize(i.service_name), 8),
        trunc(&hash, 10)
    )
}

/// `k8s-<8 of ns>-<8 of name>-<10 hex>`: the shape of every Service (NLB) stack name.
pub(crate) fn service_scoped_name(namespace: &str, name: &str, hash: &str) -> String {
    format!(
        "k8s-{}-{}-{}",
        trunc(&sanitize(namespace), 8),
        trunc(&sanitize(name), 8),
        trunc(hash, 10)
    )
}

/// Generated NLB name: hash of cluster + Service UID + scheme.
pub fn service_load_balancer_name(
    cluster: &str,
    namespace: &str,
    name: &str,
    uid: &str,
    scheme: LoadBalancerScheme,
) -> String {
    let hash = sha256_hex(&[cluster, uid, scheme.as_str()]);
    service_scoped_name(namespace, name, &hash)
}

/// Managed NLB security group name: hash of cluster + name + namespace + UID (name first).
pub fn service_managed_sg_name(cluster: &str, namespace: &str, name: &str, uid: &str) -> String {
    let hash = sha256_hex(&[cluster, name, namespace, uid]);
    service_scoped_name(namespace, name, &hash)
}

/// Inputs of an NLB target group name, in upstream's hash order.
#[derive(Debug, Clone)]
pub struct ServiceTargetGroupNameInputs<'a> {
    pub cluster: &'a str,
    /// The Service owning the NLB, only for weighted extra backends.
    pub base_service_uid: Option<&'a str>,
    pub service_namespace: &'a str,
    pub service_name: &'a str,
    pub service_uid: &'a str,
    pub target_port: i32,
    pub service_port: i32,
    pub target_type: TargetType,
    pub protocol: Protocol,
    pub health_check_protocol: Protocol,
    pub health_check_interval: i32,
}

/// NLB target group name: `k8s-<8 of svc ns>-<8 of svc name>-<10 hex>`.
pub fn service_target_group_name(i: &ServiceTargetGroupNameInputs<'_>) -> String {
    let tg_port = i.target_port.to_string();
    let svc_port = i.service_port.to_string();
    let interval = i.health_check_interval.to_string();
    let mut parts = vec![i.cluster];
    parts.extend(i.base_service_uid);
    parts.extend([
        i.service_uid,
        &tg_port,
        &svc_port,
        i.target_type.as_str(),
        i.protocol.as_str(),
        i.health_check_protocol.as_str(),
        &interval,
    ]);
    service_scoped_name(i.service_namespace, i.service_name, &sha256_hex(&parts))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values computed independently with python3 hashlib from the documented inputs,
    // e.g. sha256(b"my-cluster" + b"default/echo" + b"internet-facing").hexdigest()[:10].
    #[test]
    fn implicit_group_load_balancer_name() {
        let g = GroupId::implicit("default", "echo");
        assert_eq!(
            load_balancer_name("my-cluster", &g, LoadBalancerScheme::InternetFacing),
            "k8s-default-echo-169df2a340"
        );
        assert_eq!(
            load_balancer_name("my-cluster", &g, LoadBalancerScheme::Internal),
            "k8s-default-echo-3d39d9b3b0"
        );
    }

    #[test]
    fn explicit_group_names_truncate_and_sanitize() {
        let g = GroupId::explicit("shared-web.prod-frontend");
        assert_eq!(
            load_balancer_name("prod", &g, LoadBalancerScheme::InternetFacing),
            "k8s-sharedwebprodfron-fb34476a18"
        );
        assert_eq!(
            managed_sg_name("prod", &g),
            "k8s-sharedwebprodfron-241f61928e"
        );
    }

    #[test]
    fn implicit_names_truncate_namespace_and_name_to_eight() {
        let g = GroupId::implicit("kube-system-long", "my_ingress-name");
        assert_eq!(managed_sg_name("c", &g), "k8s-kubesyst-myingres-2e844f467a");
    }

    #[test]
    fn backend_sg_name_matches_upstream_shape() {
        assert_eq!(
            backend_sg_name("my-cluster"),
            "k8s-traffic-mycluster-4cbfcec96c"
        );
    }

    #[test]
    fn target_group_name_hashes_all_inputs_in_order() {
        let g = GroupId::implicit("default", "echo");
        let mut i = TargetGroupNameInputs {
            cluster: "my-cluster",
            group: &g,
            ingress_namespace: "default",
            ingress_name: "echo",
            service_namespace: "default",
            service_name: "echoserver",
            service_uid: "7a1b6f6e-1111-2222-3333-444455556666",
            service_port: "80",
            target_port: 30080,
            target_type: TargetType::Instance,
            protocol: Protocol::Http,
            protocol_version: ProtocolVersion::HTTP1,
            target_control_port: None,
        };
        assert_eq!(target_group_name(&i), "k8s-default-echoserv-3e4f238c32");
        i.target_control_port = Some(3000);
        assert_eq!(target_group_name(&i), "k8s-default-echoserv-77f0417afd");
    }
}
