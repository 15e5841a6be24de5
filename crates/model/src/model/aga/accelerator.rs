//! The accelerator step (upstream's `model_build_accelerator.go`): name (the object's, else
//! upstream's generated `k8s_<ns>_<name>_<hash>`), address type, BYOIP addresses, tags, and what
//! of the object identifies the accelerator in AWS (uid, the ARN its status names).

use super::config::AgaConfig;
use super::tags::accelerator_tags;
use crate::crd::global_accelerator::{GlobalAccelerator, IpAddressType};
use crate::model::naming::sha256_hex;
use crate::model::types::aga::{Accelerator, AgaIpAddressType};

/// The accelerator of `ga`; fails only on a refused tag key.
pub fn build_accelerator(cfg: &AgaConfig, ga: &GlobalAccelerator) -> Result<Accelerator, String> {
    let ip_address_type = accelerator_ip_address_type(ga);
    let name = accelerator_name(&cfg.cluster_name, &cfg.region, ga, ip_address_type);
    let ip_addresses = ga.spec.ip_addresses.clone().unwrap_or_default();
    let tags = accelerator_tags(cfg, ga)?;
    Ok(Accelerator {
        name,
        ip_addresses,
        ip_address_type,
        // The controller always asks for an enabled accelerator.
        enabled: Some(true),
        tags,
        crd_uid: ga.metadata.uid.clone().unwrap_or_default(),
        existing_arn: ga
            .status
            .as_ref()
            .and_then(|s| s.accelerator_arn.clone())
            .filter(|arn| !arn.is_empty()),
    })
}

/// `spec.ipAddressType`, IPV4 when unset.
pub fn accelerator_ip_address_type(ga: &GlobalAccelerator) -> AgaIpAddressType {
    match ga.spec.ip_address_type {
        Some(IpAddressType::DualStack) => AgaIpAddressType::DualStack,
        Some(IpAddressType::Ipv4) | None => AgaIpAddressType::Ipv4,
    }
}

/// `spec.name`, else `k8s_<16 of ns>_<16 of name>_<25 hex>`: ns and name without characters
/// outside `[a-zA-Z0-9_-]`, the hex of sha256(cluster, region, ns, name, address type) —
/// upstream's, so an accelerator it named is found under the same name.
pub fn accelerator_name(
    cluster_name: &str,
    region: &str,
    ga: &GlobalAccelerator,
    ip_address_type: AgaIpAddressType,
) -> String {
    if let Some(name) = &ga.spec.name {
        return name.clone();
    }
    let namespace = ga.metadata.namespace.as_deref().unwrap_or_default();
    let object = ga.metadata.name.as_deref().unwrap_or_default();
    let hash = sha256_hex(&[
        cluster_name,
        region,
        namespace,
        object,
        ip_address_type.as_str(),
    ]);
    format!(
        "k8s_{}_{}_{}",
        truncate(&sanitize(namespace), 16),
        truncate(&sanitize(object), 16),
        truncate(&hash, 25)
    )
}

/// Drops every character an accelerator name cannot hold (upstream's `[^a-zA-Z0-9_-]`).
fn sanitize(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect()
}

/// Go's `%.Ns`: the first `n` characters.
fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

#[cfg(test)]
#[path = "accelerator_tests.rs"]
mod tests;
