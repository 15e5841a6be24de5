//! Service status as upstream writes it: `status.loadBalancer.ingress` = one entry with the
//! NLB's lower-cased DNS name and every `spec.ports` entry (port and protocol, in spec order),
//! merge-patched on `/status` only when it differs by upstream's test (not exactly one entry,
//! an IP set, another hostname, or another set of port numbers); cleared on deletion.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{LoadBalancerIngress, PortStatus, Service};
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};

/// The `status.loadBalancer.ingress` entry `svc` should show for an NLB named `dns`.
pub fn desired(svc: &Service, dns: &str) -> LoadBalancerIngress {
    let ports: Vec<PortStatus> = svc
        .spec
        .iter()
        .flat_map(|s| s.ports.iter().flatten())
        .map(|p| PortStatus {
            port: p.port,
            protocol: p.protocol.clone().unwrap_or_else(|| "TCP".into()),
            error: None,
        })
        .collect();
    LoadBalancerIngress {
        hostname: Some(dns.to_ascii_lowercase()),
        ports: (!ports.is_empty()).then_some(ports),
        ..Default::default()
    }
}

/// Upstream's test of whether the status already shows `want`.
pub fn is_current(svc: &Service, want: &LoadBalancerIngress) -> bool {
    let have = svc
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_deref())
        .unwrap_or(&[]);
    let [one] = have else {
        return false;
    };
    let ports = |e: &LoadBalancerIngress| -> (usize, BTreeSet<i32>) {
        let list = e.ports.as_deref().unwrap_or(&[]);
        (list.len(), list.iter().map(|p| p.port).collect())
    };
    let (have_n, have_ports) = ports(one);
    let (want_n, want_ports) = ports(want);
    one.ip.as_deref().unwrap_or("").is_empty()
        && one.hostname == want.hostname
        && have_n == want_n
        && want_ports.is_subset(&have_ports)
}

fn api(client: &kube::Client, svc: &Service) -> Api<Service> {
    let ns = svc.namespace().unwrap_or_else(|| "default".into());
    Api::namespaced(client.clone(), &ns)
}

async fn patch(client: &kube::Client, svc: &Service, lb: serde_json::Value) -> kube::Result<()> {
    let body = serde_json::json!({ "status": { "loadBalancer": lb } });
    match api(client, svc)
        .patch_status(
            &svc.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&body),
        )
        .await
    {
        Ok(_) => Ok(()),
        // Deleted meanwhile: nothing to show any more.
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Writes the hostname of `dns` unless the status is current; returns whether it wrote.
pub async fn update(client: &kube::Client, svc: &Service, dns: &str) -> kube::Result<bool> {
    let want = desired(svc, dns);
    if is_current(svc, &want) {
        return Ok(false);
    }
    patch(client, svc, serde_json::json!({ "ingress": [want] })).await?;
    Ok(true)
}

/// Empties `status.loadBalancer` (the NLB is gone), unless it is empty already.
pub async fn clear(client: &kube::Client, svc: &Service) -> kube::Result<()> {
    let empty = svc
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .is_none_or(|i| i.is_empty());
    if empty {
        return Ok(());
    }
    // A merge patch with `ingress: null` removes the list (`{}` would merge to no change).
    patch(client, svc, serde_json::json!({ "ingress": null })).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn svc(status: serde_json::Value) -> Service {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]},
            "status": status
        }))
        .unwrap()
    }

    #[test]
    fn the_hostname_is_lower_cased_with_every_spec_port() {
        let want = desired(
            &svc(json!({})),
            "K8S-NS-WEB-ABC.elb.US-WEST-2.amazonaws.com",
        );
        assert_eq!(
            serde_json::to_value(&want).unwrap(),
            json!({"hostname": "k8s-ns-web-abc.elb.us-west-2.amazonaws.com",
                   "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]})
        );
    }

    #[test]
    fn only_a_status_that_differs_by_upstreams_test_is_written() {
        let want = desired(&svc(json!({})), "lb.example");
        assert!(!is_current(&svc(json!({})), &want));
        let current = svc(json!({"loadBalancer": {"ingress": [
            {"hostname": "lb.example", "ports": [{"port": 53, "protocol": "UDP"}, {"port": 80, "protocol": "TCP"}]}
        ]}}));
        assert!(is_current(&current, &want), "port order is no difference");
        let other_host = svc(json!({"loadBalancer": {"ingress": [
            {"hostname": "old.example", "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}
        ]}}));
        assert!(!is_current(&other_host, &want));
        let with_ip = svc(json!({"loadBalancer": {"ingress": [
            {"ip": "10.0.0.1", "hostname": "lb.example", "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}
        ]}}));
        assert!(!is_current(&with_ip, &want));
        let port_gone = svc(json!({"loadBalancer": {"ingress": [
            {"hostname": "lb.example", "ports": [{"port": 80, "protocol": "TCP"}]}
        ]}}));
        assert!(!is_current(&port_gone, &want));
    }
}
