//! Ingress status: `status.loadBalancer.ingress` = one entry with the load balancer's lower-cased
//! DNS name and its listener ports (ascending), written on `/status` only when it differs.

use k8s_openapi::api::networking::v1::{
    Ingress, IngressLoadBalancerIngress, IngressLoadBalancerStatus, IngressPortStatus,
    IngressStatus,
};
use std::collections::BTreeSet;

use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};

/// The status every member of a deployed group should carry.
pub fn desired(dns_name: &str, ports: &[i32]) -> IngressStatus {
    let mut ports: Vec<i32> = ports.to_vec();
    ports.sort_unstable();
    ports.dedup();
    IngressStatus {
        load_balancer: Some(IngressLoadBalancerStatus {
            ingress: Some(vec![IngressLoadBalancerIngress {
                hostname: Some(dns_name.to_ascii_lowercase()),
                ip: None,
                // The API requires a protocol on each port status; ALB listeners are TCP.
                ports: (!ports.is_empty()).then(|| {
                    ports
                        .iter()
                        .map(|p| IngressPortStatus {
                            port: *p,
                            protocol: "TCP".into(),
                            error: None,
                        })
                        .collect()
                }),
            }]),
        }),
    }
}

/// `status` with the frontend NLB's entry appended (`enable-frontend-nlb`): its lower-cased DNS
/// name, no ports, after the ALB's entry, as upstream writes it.
pub fn with_frontend_nlb(mut status: IngressStatus, dns_name: Option<&str>) -> IngressStatus {
    let Some(dns) = dns_name else {
        return status;
    };
    let dns = dns.to_ascii_lowercase();
    let lb = status.load_balancer.get_or_insert_with(Default::default);
    let entries = lb.ingress.get_or_insert_with(Vec::new);
    if !entries
        .iter()
        .any(|e| e.hostname.as_deref() == Some(dns.as_str()))
    {
        entries.push(IngressLoadBalancerIngress {
            hostname: Some(dns),
            ip: None,
            ports: None,
        });
    }
    status
}

/// Whether the Ingress already shows `want`, by meaning as upstream judges it: no IP entry, and
/// the same hostnames each with the same set of ports. Port order, duplicates, and each port's
/// `protocol` (upstream v3.5 writes it empty, we write `TCP`) or `error` are no difference.
pub fn is_current(ing: &Ingress, want: &IngressStatus) -> bool {
    let entries = |s: Option<&IngressStatus>| {
        s.and_then(|s| s.load_balancer.as_ref())
            .and_then(|lb| lb.ingress.clone())
            .unwrap_or_default()
    };
    let meaning = |e: &[IngressLoadBalancerIngress]| {
        e.iter()
            .map(|e| {
                let ports: BTreeSet<i32> = e.ports.iter().flatten().map(|p| p.port).collect();
                (e.ip.clone().unwrap_or_default(), e.hostname.clone(), ports)
            })
            .collect::<BTreeSet<_>>()
    };
    let (have, want) = (entries(ing.status.as_ref()), entries(Some(want)));
    have.len() == want.len() && meaning(&have) == meaning(&want)
}

/// Patches the status of `ing` to `want` unless it already matches; returns whether it wrote.
pub async fn update(
    client: &kube::Client,
    ing: &Ingress,
    want: &IngressStatus,
) -> Result<bool, kube::Error> {
    if is_current(ing, want) {
        return Ok(false);
    }
    let ns = ing.namespace().unwrap_or_else(|| "default".into());
    let api: Api<Ingress> = Api::namespaced(client.clone(), &ns);
    let body = serde_json::json!({ "status": want });
    match api
        .patch_status(
            &ing.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&body),
        )
        .await
    {
        Ok(_) => Ok(true),
        // Deleted meanwhile: nothing to show any more.
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn desired_status_is_lower_cased_with_sorted_ports() {
        let s = desired("K8S-Shop-ABC.us-west-2.ELB.amazonaws.com", &[443, 80]);
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            json!({"loadBalancer": {"ingress": [{
                "hostname": "k8s-shop-abc.us-west-2.elb.amazonaws.com",
                "ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]
            }]}})
        );
    }

    #[test]
    fn the_frontend_nlb_is_a_second_entry_without_ports() {
        let s = with_frontend_nlb(desired("alb.example", &[80]), Some("K8S-NLB.example"));
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            json!({"loadBalancer": {"ingress": [
                {"hostname": "alb.example", "ports": [{"port": 80, "protocol": "TCP"}]},
                {"hostname": "k8s-nlb.example"}
            ]}})
        );
        assert_eq!(
            with_frontend_nlb(desired("a", &[80]), None),
            desired("a", &[80])
        );
        // A status without the NLB entry is not current.
        let mut ing: Ingress = serde_json::from_value(json!({"metadata": {"name": "a"}})).unwrap();
        ing.status = Some(desired("alb.example", &[80]));
        assert!(!is_current(&ing, &s));
        ing.status = Some(s.clone());
        assert!(is_current(&ing, &s));
    }

    #[test]
    fn only_a_different_status_needs_a_write() {
        let want = desired("lb.example", &[80]);
        let mut ing: Ingress = serde_json::from_value(json!({"metadata": {"name": "a"}})).unwrap();
        assert!(!is_current(&ing, &want));
        ing.status = Some(want.clone());
        assert!(is_current(&ing, &want));
        ing.status = Some(desired("other.example", &[80]));
        assert!(!is_current(&ing, &want));
        ing.status = Some(desired("lb.example", &[80, 8080]));
        assert!(!is_current(&ing, &want));
    }

    /// Upstream v3.5 writes `ports: [{port: p}]`, which the API stores with `protocol: ""`.
    #[test]
    fn upstreams_status_without_protocols_is_current() {
        let want = desired(
            "k8s-ns1-ing1-b7e914000d-1.us-west-2.elb.amazonaws.com",
            &[443, 80],
        );
        let ing: Ingress = serde_json::from_value(json!({
            "metadata": {"name": "ing-1"},
            "status": {"loadBalancer": {"ingress": [{
                "hostname": "k8s-ns1-ing1-b7e914000d-1.us-west-2.elb.amazonaws.com",
                "ports": [{"port": 80, "protocol": ""}, {"port": 443, "protocol": ""}]
            }]}}
        }))
        .unwrap();
        assert!(is_current(&ing, &want));
        let with_ip: Ingress = serde_json::from_value(json!({
            "metadata": {"name": "ing-1"},
            "status": {"loadBalancer": {"ingress": [{
                "ip": "10.0.0.1",
                "hostname": "k8s-ns1-ing1-b7e914000d-1.us-west-2.elb.amazonaws.com",
                "ports": [{"port": 80, "protocol": ""}, {"port": 443, "protocol": ""}]
            }]}}
        }))
        .unwrap();
        assert!(!is_current(&with_ip, &want));
    }
}
