//! The few fields of Pods, Nodes, Services and EndpointSlices the reconciler reads, projected
//! out of the watched objects so the caches hold kilobytes instead of whole objects.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Endpoints, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::ResourceExt;

use super::quic::QuicIds;

/// Condition-type prefixes of the target-health readiness gates (current and legacy).
pub use crate::crd::names::GATE_PREFIXES;

/// A pod readiness condition written by this controller.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GateCondition {
    pub type_: String,
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
    /// RFC 3339, as the API server returned it.
    pub last_transition_time: Option<String>,
}

/// Boxed strings and slices (no spare capacity, two words each): 13,000 of these are kept.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodInfo {
    pub uid: Box<str>,
    pub node: Option<Box<str>>,
    /// `ContainersReady=True`.
    pub containers_ready: bool,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// Readiness-gate condition types with a target-health prefix.
    pub gates: Box<[String]>,
    /// Current status conditions of those gate types.
    pub conditions: Box<[GateCondition]>,
    /// `(name, containerPort)` of the named ports of containers and sidecars, for rules that
    /// name a port.
    pub container_ports: Box<[(String, i32)]>,
    /// The branch ENI holding the pod IP, from the `vpc.amazonaws.com/pod-eni` annotation.
    pub branch_eni: Option<Box<str>>,
    /// QUIC server ids, for pods that carry one (one pointer for all the others).
    pub quic: Option<Box<QuicIds>>,
}

/// Annotation listing a pod's branch ENIs (security groups for pods).
pub const POD_ENI_ANNOTATION: &str = "vpc.amazonaws.com/pod-eni";

#[derive(serde::Deserialize)]
struct PodEniEntry {
    #[serde(rename = "eniId", default)]
    eni_id: String,
    #[serde(rename = "privateIp", default)]
    private_ip: String,
    #[serde(rename = "ipv6Addr", default)]
    ipv6_addr: String,
}

/// The ENI of the annotation whose address is the pod IP; a malformed annotation counts as
/// none (the VPC lookup then finds the ENI).
fn branch_eni(p: &Pod) -> Option<String> {
    let raw = p.annotations().get(POD_ENI_ANNOTATION)?;
    let ip = p.status.as_ref()?.pod_ip.as_deref()?;
    let entries: Vec<PodEniEntry> = crate::annotations::go_json::from_str(raw).ok()?;
    entries
        .into_iter()
        .find(|e| e.private_ip == ip || (!e.ipv6_addr.is_empty() && e.ipv6_addr == ip))
        .map(|e| e.eni_id)
        .filter(|id| !id.is_empty())
}

fn named_container_ports(p: &Pod) -> Vec<(String, i32)> {
    let Some(spec) = p.spec.as_ref() else {
        return Vec::new();
    };
    let sidecars = spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"));
    spec.containers
        .iter()
        .chain(sidecars)
        .flat_map(|c| c.ports.iter().flatten())
        .filter_map(|cp| Some((cp.name.clone()?, cp.container_port)))
        .collect()
}

impl PodInfo {
    /// The projection; `quic_env` is `--quic-environment-variable-name`.
    pub fn from_pod(p: &Pod, quic_env: &str) -> PodInfo {
        let gates: Vec<String> = p
            .spec
            .iter()
            .flat_map(|s| s.readiness_gates.iter().flatten())
            .map(|g| g.condition_type.clone())
            .filter(|t| GATE_PREFIXES.iter().any(|pre| t.starts_with(pre)))
            .collect();
        let conds = p.status.as_ref().and_then(|s| s.conditions.as_ref());
        let containers_ready = conds
            .into_iter()
            .flatten()
            .any(|c| c.type_ == "ContainersReady" && c.status == "True");
        let conditions = conds
            .into_iter()
            .flatten()
            .filter(|c| gates.contains(&c.type_))
            .map(|c| GateCondition {
                type_: c.type_.clone(),
                status: c.status.clone(),
                reason: c.reason.clone(),
                message: c.message.clone(),
                last_transition_time: c.last_transition_time.as_ref().map(|t| t.0.to_string()),
            })
            .collect();
        PodInfo {
            uid: p.uid().unwrap_or_default().into(),
            node: p
                .spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .map(Into::into),
            containers_ready,
            deleting: p.metadata.deletion_timestamp.is_some(),
            gates: gates.into(),
            conditions,
            container_ports: named_container_ports(p).into(),
            branch_eni: branch_eni(p).map(Into::into),
            quic: QuicIds::from_pod(p, quic_env).map(Box::new),
        }
    }

    pub fn condition(&self, type_: &str) -> Option<&GateCondition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// The QUIC server id of this pod's target on `port`, if the pod has one.
    pub fn quic_server_id(&self, port: u16) -> Option<&str> {
        self.quic.as_deref().map(|q| q.for_port(i32::from(port)))
    }
}

/// A condition status: `True`, `False` or anything else (treated as `Unknown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tri {
    True,
    False,
    #[default]
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeInfo {
    pub labels: BTreeMap<String, String>,
    /// Tainted `ToBeDeletedByClusterAutoscaler` (any effect) or `karpenter.sh/disrupted:NoSchedule`.
    pub tainted_out: bool,
    pub ready: Tri,
    pub provider_id: Option<String>,
}

impl NodeInfo {
    pub fn from_node(n: &Node) -> NodeInfo {
        let tainted_out = n
            .spec
            .iter()
            .flat_map(|s| s.taints.iter().flatten())
            .any(|t| {
                t.key == "ToBeDeletedByClusterAutoscaler"
                    || (t.key == "karpenter.sh/disrupted" && t.effect == "NoSchedule")
            });
        let ready = n
            .status
            .iter()
            .flat_map(|s| s.conditions.iter().flatten())
            .find(|c| c.type_ == "Ready")
            .map(|c| match c.status.as_str() {
                "True" => Tri::True,
                "False" => Tri::False,
                _ => Tri::Unknown,
            })
            .unwrap_or(Tri::Unknown);
        NodeInfo {
            labels: n.labels().clone(),
            tainted_out,
            ready,
            provider_id: n.spec.as_ref().and_then(|s| s.provider_id.clone()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServicePortInfo {
    pub name: String,
    pub port: i32,
    pub node_port: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServiceInfo {
    /// `spec.type` (`ClusterIP` when unset).
    pub type_: String,
    pub ports: Vec<ServicePortInfo>,
    /// `spec.selector` as a label selector (`k=v,k2=v2`, in key order; empty when it has
    /// none): which pods the controller keeps for a binding of this Service (see `scope`).
    pub selector: Box<str>,
}

impl ServiceInfo {
    pub fn from_service(s: &Service) -> ServiceInfo {
        let spec = s.spec.as_ref();
        let selector: Vec<String> = spec
            .and_then(|s| s.selector.as_ref())
            .iter()
            .flat_map(|m| m.iter())
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        ServiceInfo {
            selector: selector.join(",").into(),
            type_: spec
                .and_then(|s| s.type_.clone())
                .unwrap_or_else(|| "ClusterIP".into()),
            ports: spec
                .iter()
                .flat_map(|s| s.ports.iter().flatten())
                .map(|p| ServicePortInfo {
                    name: p.name.clone().unwrap_or_default(),
                    port: p.port,
                    node_port: p.node_port,
                })
                .collect(),
        }
    }
}

/// One endpoint of a slice. Boxed strings (no spare capacity, two words each): one is kept
/// per endpoint of every bound Service, 50,000 behind 50 bindings of 1,000 pods.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EndpointInfo {
    pub address: Box<str>,
    pub ready: Option<bool>,
    pub terminating: Option<bool>,
    /// Name of the pod when `targetRef.kind == Pod`.
    pub pod: Option<Box<str>>,
    pub node: Option<Box<str>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SliceInfo {
    /// `IPv4`, `IPv6` or `FQDN`.
    pub address_type: String,
    /// `(name, port)` of each slice port.
    pub ports: Vec<(String, Option<i32>)>,
    pub endpoints: Vec<EndpointInfo>,
}

/// Label naming the Service an EndpointSlice belongs to.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

impl SliceInfo {
    /// The projection and the Service name, or `None` for slices of no Service.
    pub fn from_slice(s: &EndpointSlice) -> Option<(String, SliceInfo)> {
        let svc = s.labels().get(SERVICE_NAME_LABEL)?.clone();
        let mut info = SliceInfo {
            address_type: s.address_type.clone(),
            ports: s
                .ports
                .iter()
                .flatten()
                .map(|p| (p.name.clone().unwrap_or_default(), p.port))
                .collect(),
            endpoints: s
                .endpoints
                .iter()
                .filter_map(|e| {
                    let conds = e.conditions.as_ref();
                    Some(EndpointInfo {
                        address: e.addresses.first()?.as_str().into(),
                        ready: conds.and_then(|c| c.ready),
                        terminating: conds.and_then(|c| c.terminating),
                        pod: e
                            .target_ref
                            .as_ref()
                            .filter(|r| r.kind.as_deref() == Some("Pod"))
                            .and_then(|r| r.name.as_deref())
                            .map(Into::into),
                        node: e.node_name.as_deref().map(Into::into),
                    })
                })
                .collect(),
        };
        // Collected from a filter, the list grew by doubling: give back the spare half.
        info.endpoints.shrink_to_fit();
        Some((svc, info))
    }
}

impl SliceInfo {
    /// A core/v1 Endpoints object (`--enable-endpoint-slices=false`) in slice form: one slice
    /// per subset and address family; `notReadyAddresses` are not-ready endpoints. Endpoints
    /// carry no terminating state, so that stays unknown.
    pub fn from_endpoints(ep: &Endpoints) -> Vec<SliceInfo> {
        let mut out = Vec::new();
        for subset in ep.subsets.iter().flatten() {
            let ports: Vec<(String, Option<i32>)> = subset
                .ports
                .iter()
                .flatten()
                .map(|p| (p.name.clone().unwrap_or_default(), Some(p.port)))
                .collect();
            let ready = subset.addresses.iter().flatten().map(|a| (a, true));
            let not_ready = subset
                .not_ready_addresses
                .iter()
                .flatten()
                .map(|a| (a, false));
            let mut by_family: BTreeMap<&'static str, Vec<EndpointInfo>> = BTreeMap::new();
            for (a, is_ready) in ready.chain(not_ready) {
                let family = if a.ip.contains(':') { "IPv6" } else { "IPv4" };
                by_family.entry(family).or_default().push(EndpointInfo {
                    address: a.ip.as_str().into(),
                    ready: Some(is_ready),
                    terminating: None,
                    pod: a
                        .target_ref
                        .as_ref()
                        .filter(|r| r.kind.as_deref() == Some("Pod"))
                        .and_then(|r| r.name.as_deref())
                        .map(Into::into),
                    node: a.node_name.as_deref().map(Into::into),
                });
            }
            for (family, endpoints) in by_family {
                out.push(SliceInfo {
                    address_type: family.to_string(),
                    ports: ports.clone(),
                    endpoints,
                });
            }
        }
        out
    }
}
