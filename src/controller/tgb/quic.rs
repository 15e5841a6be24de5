//! QUIC server ids of pod targets: read from the pod as upstream reads them, and what a QUIC
//! binding does with a pod that has none.
//!
//! A pod annotated `service.beta.kubernetes.io/aws-load-balancer-quic-enabled-containers` has
//! its server id in the environment variable `--quic-environment-variable-name` (default
//! `AWS_LBC_QUIC_SERVER_ID`) of those containers, as the pod webhook writes it: 8 bytes in
//! standard base64. AWS takes it as `0x` and 16 lowercase hex digits. A port of a container
//! carrying an id gets that container's id; any other port the first id found (containers, then
//! sidecar init containers).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use base64::Engine;
use k8s_openapi::api::core::v1::{Container, Pod};
use kube::ResourceExt;

use crate::aws::{TargetDescription, TargetHealthDescription};
use crate::crd::target_group_binding::TargetGroupProtocol;
use crate::crd::TargetGroupBinding;
pub use crate::webhook::quic_server_id::{ANNOTATION, DEFAULT_ENV_NAME};

/// Reason of the Warning on a QUIC binding for its pods without a server id, and of their gate
/// condition. Upstream only logs these pods (and counts them in
/// `awslbc_quic_target_missing_server_id`, which it never registers); an input we cannot act
/// on gets a Warning.
pub const REASON_MISSING: &str = "QUICTargetMissingServerID";
/// Gate condition message of a pod that has no server id.
pub const GATE_MESSAGE_MISSING: &str =
    "Pod has no QUIC server ID; it is not registered with the QUIC target group";

/// The server ids of one pod, in AWS's form. Held only by the few pods that have one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuicIds {
    /// The first id found: for ports no id-carrying container declares.
    pub default: Box<str>,
    /// `(containerPort, id)` of the ports of the containers carrying an id; a port two such
    /// containers declare takes the later one's id (upstream's per-port map).
    pub per_port: Box<[(i32, Box<str>)]>,
}

impl QuicIds {
    /// The ids of a pod, or `None` when it has none (not annotated, or no container carries a
    /// usable value of `env_name`).
    pub fn from_pod(p: &Pod, env_name: &str) -> Option<QuicIds> {
        if !p.annotations().contains_key(ANNOTATION) {
            return None;
        }
        let spec = p.spec.as_ref()?;
        let sidecars = spec
            .init_containers
            .iter()
            .flatten()
            .filter(|c| c.restart_policy.as_deref() == Some("Always"));
        let mut default: Option<String> = None;
        let mut per_port: BTreeMap<i32, String> = BTreeMap::new();
        for c in spec.containers.iter().chain(sidecars) {
            let Some(id) = container_id(c, env_name) else {
                continue;
            };
            for port in c.ports.iter().flatten() {
                per_port.insert(port.container_port, id.clone());
            }
            if default.is_none() {
                default = Some(id);
            }
        }
        Some(QuicIds {
            default: default?.into(),
            per_port: per_port
                .into_iter()
                .map(|(port, id)| (port, id.into_boxed_str()))
                .collect(),
        })
    }

    /// The id for a target on `port` (the endpoint's port, i.e. the container port).
    pub fn for_port(&self, port: i32) -> &str {
        self.per_port
            .iter()
            .find(|(p, _)| *p == port)
            .map_or(&*self.default, |(_, id)| &**id)
    }
}

/// The container's id: the first `env_name` entry, decoded (upstream looks no further either).
fn container_id(c: &Container, env_name: &str) -> Option<String> {
    let var = c.env.iter().flatten().find(|e| e.name == env_name)?;
    elb_form(var.value.as_deref()?)
}

/// `0x` and the hex digits of the base64 value, as upstream converts it; `None` for a value
/// that is not standard base64 (upstream's answer too) or not 8 bytes. Upstream would send
/// such an id and AWS would refuse the whole RegisterTargets call (it takes exactly 16 hex
/// digits), leaving every other pod unregistered as well; here only that pod is left out.
pub fn elb_form(b64: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    (bytes.len() == 8).then(|| format!("0x{}", hex::encode(bytes)))
}

/// Whether the binding's targets carry server ids: its `targetGroupProtocol` is QUIC or
/// TCP_QUIC (upstream decides from the spec alone; the binding webhook defaults the protocol
/// from the target group).
pub fn binding_is_quic(tgb: &TargetGroupBinding) -> bool {
    matches!(
        tgb.spec.target_group_protocol,
        Some(TargetGroupProtocol::Quic | TargetGroupProtocol::TcpQuic)
    )
}

/// `(id, port)` of a target.
type Addr = (String, Option<u16>);

/// The server id this controller registered each QUIC target with, per binding (`ns/name`).
///
/// AWS's target listing is the source; this only fills in a target it lists without an id
/// (moto drops the field), so that target still matches its pod instead of being deregistered
/// and registered again on every pass, and leaves with the id it was registered with. Held
/// for QUIC bindings only, and only for targets registered by this process.
#[derive(Debug, Default)]
pub struct RegisteredIds(Mutex<HashMap<String, HashMap<Addr, String>>>);

fn addr(t: &TargetDescription) -> Addr {
    (t.id.clone(), t.port)
}

impl RegisteredIds {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, HashMap<Addr, String>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Gives each listed target without an id the one it was registered with, if known.
    pub fn fill(&self, binding: &str, current: &mut [TargetHealthDescription]) {
        let g = self.lock();
        let Some(ids) = g.get(binding) else {
            return;
        };
        for t in current
            .iter_mut()
            .filter(|t| t.target.quic_server_id.is_none())
        {
            if let Some(id) = ids.get(&addr(&t.target)) {
                t.target.quic_server_id = Some(id.clone());
            }
        }
    }

    /// `targets` were registered.
    pub fn registered(&self, binding: &str, targets: &[TargetDescription]) {
        let mut g = self.lock();
        let ids = g.entry(binding.to_string()).or_default();
        for t in targets {
            if let Some(id) = &t.quic_server_id {
                ids.insert(addr(t), id.clone());
            }
        }
        if ids.is_empty() {
            g.remove(binding);
        }
    }

    /// `targets` were deregistered (a target registered again since with another id is kept).
    pub fn deregistered(&self, binding: &str, targets: &[TargetDescription]) {
        let mut g = self.lock();
        let Some(ids) = g.get_mut(binding) else {
            return;
        };
        for t in targets {
            let a = addr(t);
            if ids.get(&a) == t.quic_server_id.as_ref() {
                ids.remove(&a);
            }
        }
        if ids.is_empty() {
            g.remove(binding);
        }
    }

    /// The binding is gone.
    pub fn forget(&self, binding: &str) {
        self.lock().remove(binding);
    }
}
