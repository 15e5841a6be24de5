//! Which targets a binding wants: pod endpoints (ip mode) from EndpointSlices, or nodes on
//! the NodePort (instance mode). Pure functions over the projected caches.

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::info::{NodeInfo, PodInfo, ServiceInfo, ServicePortInfo, SliceInfo, Tri};
use super::selector::check_selector;

/// An ip-mode target candidate.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PodEndpoint {
    pub ip: String,
    pub port: u16,
    pub pod: String,
}

/// An instance-mode target candidate.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeEndpoint {
    pub instance_id: String,
    pub port: u16,
    pub node: String,
}

/// The ServicePort a `serviceRef.port` names: by number (`port`) or by name.
pub fn find_service_port<'a>(
    svc: &'a ServiceInfo,
    port: &IntOrString,
) -> Option<&'a ServicePortInfo> {
    svc.ports.iter().find(|p| match port {
        IntOrString::Int(n) => p.port == *n,
        IntOrString::String(s) => p.name == *s || s.parse::<i32>().is_ok_and(|n| n == p.port),
    })
}

/// Pod endpoints of the Service port, chosen the way upstream does, with one improvement:
/// endpoints that are terminating or whose pod is being deleted are not wanted, so they are
/// deregistered at once (drain first) — except as the fail-open fallback below.
///
/// Ready (or readiness unknown) endpoints are wanted. A not-ready endpoint is wanted when its
/// pod is ContainersReady on a node whose Ready condition is True: that pod only waits on the
/// readiness gates, which need the pod registered to turn True. When that leaves none and
/// `fail_open` (gate `EndpointsFailOpen`), the not-ready endpoints of ContainersReady pods on
/// nodes whose Ready condition is Unknown are taken instead, terminating or not (the node may
/// only have lost touch with the API server).
pub fn select_pod_endpoints<'a>(
    svc_port: &ServicePortInfo,
    slices: impl IntoIterator<Item = &'a SliceInfo>,
    ipv6: bool,
    fail_open: bool,
    pod: impl Fn(&str) -> Option<&'a PodInfo>,
    node: impl Fn(&str) -> Option<&'a NodeInfo>,
) -> Vec<PodEndpoint> {
    let family = if ipv6 { "IPv6" } else { "IPv4" };
    let (mut ready, mut unknown) = (Candidates::default(), Candidates::default());
    for slice in slices.into_iter().filter(|s| s.address_type == family) {
        for (name, port) in &slice.ports {
            if !svc_port.name.is_empty() && *name != svc_port.name {
                continue;
            }
            let Some(port) = port.and_then(|p| u16::try_from(p).ok()) else {
                continue;
            };
            for ep in &slice.endpoints {
                let Some(pod_name) = ep.pod.as_deref() else {
                    continue;
                };
                let Some(p) = pod(pod_name) else { continue };
                let leaving = p.deleting || ep.terminating == Some(true);
                let into = match ep.ready {
                    None | Some(true) if !leaving => Some(&mut ready),
                    Some(false) if p.containers_ready => {
                        let node_name = ep.node.as_deref().or(p.node.as_deref());
                        match node_name.and_then(&node).map(|n| n.ready) {
                            Some(Tri::True) if !leaving => Some(&mut ready),
                            // Kept even while leaving, as upstream: a node out of touch gets
                            // its pods evicted after a while, and failing open must still
                            // hold then, when they are all that is left.
                            Some(Tri::Unknown) => Some(&mut unknown),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                if let Some(c) = into {
                    c.add(&ep.address, port, pod_name);
                }
            }
        }
    }
    let mut out = if ready.0.is_empty() && fail_open {
        unknown.0
    } else {
        ready.0
    };
    out.sort();
    out
}

/// Endpoints chosen so far, each address and port once.
#[derive(Default)]
struct Candidates(Vec<PodEndpoint>, HashSet<(String, u16)>);

impl Candidates {
    fn add(&mut self, ip: &str, port: u16, pod: &str) {
        if self.1.insert((ip.to_string(), port)) {
            self.0.push(PodEndpoint {
                ip: ip.to_string(),
                port,
                pod: pod.to_string(),
            });
        }
    }
}

/// Why a node cannot be a target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeError {
    #[error("providerID {provider_id} is invalid for EC2 instances, node: {node}")]
    BadProviderId { provider_id: String, node: String },
    /// A `nodeSelector` Kubernetes cannot turn into requirements: no node is judged by it.
    #[error("invalid nodeSelector: {0}")]
    BadSelector(String),
}

/// Whether the node passes upstream's default exclusions (role/exclusion labels, Fargate,
/// autoscaler/karpenter taints) and the binding's `nodeSelector`.
pub fn node_is_candidate(n: &NodeInfo, selector: Option<&LabelSelector>) -> bool {
    const ABSENT: [&str; 3] = [
        "node-role.kubernetes.io/master",
        "node.kubernetes.io/exclude-from-external-load-balancers",
        "alpha.service-controller.kubernetes.io/exclude-balancer",
    ];
    if ABSENT.iter().any(|k| n.labels.contains_key(*k))
        || n.labels
            .get("eks.amazonaws.com/compute-type")
            .map(String::as_str)
            == Some("fargate")
        || n.tainted_out
    {
        return false;
    }
    selector.is_none_or(|s| selector_matches(s, &n.labels))
}

/// `metav1.LabelSelector` semantics; an unknown operator matches nothing.
pub fn selector_matches(s: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let labels_ok = s
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    labels_ok
        && s.match_expressions.iter().flatten().all(|e| {
            let values = e.values.as_deref().unwrap_or_default();
            let have = labels.get(&e.key);
            match e.operator.as_str() {
                "In" => have.is_some_and(|v| values.contains(v)),
                "NotIn" => have.is_none_or(|v| !values.contains(v)),
                "Exists" => have.is_some(),
                "DoesNotExist" => have.is_none(),
                _ => false,
            }
        })
}

/// EC2 instance ID from `spec.providerID` (`aws:///us-west-2a/i-0abc` → `i-0abc`).
pub fn instance_id(provider_id: &str) -> Option<&str> {
    let last = provider_id.rsplit('/').next()?;
    (last.starts_with("i-") && last.len() > 2).then_some(last)
}

/// Node targets on `node_port` (none chosen under a `selector` Kubernetes would refuse): candidate nodes with Ready=True, or — when none is Ready and
/// `fail_open` — those with Ready=Unknown.
pub fn select_node_endpoints<'a>(
    node_port: u16,
    nodes: impl IntoIterator<Item = (&'a str, &'a NodeInfo)>,
    selector: Option<&LabelSelector>,
    fail_open: bool,
) -> Result<Vec<NodeEndpoint>, NodeError> {
    if let Some(s) = selector {
        check_selector(s).map_err(NodeError::BadSelector)?;
    }
    let candidates: Vec<_> = nodes
        .into_iter()
        .filter(|(_, n)| node_is_candidate(n, selector))
        .collect();
    let mut chosen: Vec<_> = candidates
        .iter()
        .filter(|(_, n)| n.ready == Tri::True)
        .collect();
    if chosen.is_empty() && fail_open {
        chosen = candidates
            .iter()
            .filter(|(_, n)| n.ready == Tri::Unknown)
            .collect();
    }
    let mut out = Vec::with_capacity(chosen.len());
    for (name, n) in chosen {
        let pid = n.provider_id.as_deref().unwrap_or_default();
        let id = instance_id(pid).ok_or_else(|| NodeError::BadProviderId {
            provider_id: pid.to_string(),
            node: name.to_string(),
        })?;
        out.push(NodeEndpoint {
            instance_id: id.to_string(),
            port: node_port,
            node: name.to_string(),
        });
    }
    out.sort();
    Ok(out)
}
