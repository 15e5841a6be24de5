//! `/validate-aga-k8s-aws-v1beta1-globalaccelerator`: upstream's GlobalAccelerator checks on
//! CREATE and UPDATE, in order, with its messages and metric labels:
//!
//! 1. `checkForDuplicateEndpoints`: an endpoint group names no endpoint twice (same type and id,
//!    or same type, namespace and name);
//! 2. `checkForOverlappingPortRanges`: per protocol, the port ranges of all listeners that set
//!    both protocol and ranges do not overlap (listeners left to auto-discovery are skipped).
//!
//! Served only with gate `GlobalAcceleratorController` on (as upstream registers it); needs no
//! state and no API call.

use serde_json::Value;

use super::{AdmissionRequest, Decision, Handler, Operation};
use crate::crd::global_accelerator::{GlobalAcceleratorProtocol, GlobalAcceleratorSpec, PortRange};
use crate::model::aga::endpoints::endpoint_key;

pub const PATH: &str = "/validate-aga-k8s-aws-v1beta1-globalaccelerator";

/// Metric label of each check (upstream's `ObserveWebhookValidationError` names).
pub const CHECK_DUPLICATE_ENDPOINTS: &str = "checkForDuplicateEndpoints";
pub const CHECK_OVERLAPPING_PORT_RANGES: &str = "checkForOverlappingPortRanges";

/// No endpoint twice within one endpoint group.
pub fn check_for_duplicate_endpoints(
    spec: &GlobalAcceleratorSpec,
    namespace: &str,
) -> Result<(), String> {
    for (l, listener) in spec.listeners.iter().flatten().enumerate() {
        for (g, group) in listener.endpoint_groups.iter().flatten().enumerate() {
            let mut seen = std::collections::BTreeSet::new();
            for endpoint in group.endpoints.iter().flatten() {
                let key = endpoint_key(endpoint, namespace);
                if !seen.insert(key.clone()) {
                    return Err(format!(
                        "duplicate endpoint detected in listener[{l}].endpointGroups[{g}]: {key}"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Whether two ranges share a port (both ends included).
pub fn port_ranges_overlap(a: &PortRange, b: &PortRange) -> bool {
    a.from_port <= b.to_port && a.to_port >= b.from_port
}

/// No two port ranges of one protocol overlap, across all listeners. Upstream walks the
/// protocols in Go's map order; TCP is checked before UDP here, so the text is stable.
pub fn check_for_overlapping_port_ranges(spec: &GlobalAcceleratorSpec) -> Result<(), String> {
    for (protocol, name) in [
        (GlobalAcceleratorProtocol::Tcp, "TCP"),
        (GlobalAcceleratorProtocol::Udp, "UDP"),
    ] {
        let ranges: Vec<&PortRange> = spec
            .listeners
            .iter()
            .flatten()
            .filter(|l| l.protocol == Some(protocol))
            .flat_map(|l| l.port_ranges.iter().flatten())
            .collect();
        let overlap = ranges
            .iter()
            .enumerate()
            .any(|(i, a)| ranges[i + 1..].iter().any(|b| port_ranges_overlap(a, b)));
        if overlap {
            return Err(format!(
                "overlapping port ranges detected for protocol {name}, which is not allowed"
            ));
        }
    }
    Ok(())
}

/// Both checks in upstream's order: the first failure, with its metric label.
pub fn validate(spec: &GlobalAcceleratorSpec, namespace: &str) -> Result<(), Decision> {
    check_for_duplicate_endpoints(spec, namespace)
        .map_err(|m| Decision::deny(CHECK_DUPLICATE_ENDPOINTS, m))?;
    check_for_overlapping_port_ranges(spec)
        .map_err(|m| Decision::deny(CHECK_OVERLAPPING_PORT_RANGES, m))
}

/// The spec and namespace of the admitted object; an object without `spec` has an empty one
/// (upstream's field is `omitempty`).
fn decode(
    object: Option<&Value>,
    request_namespace: Option<&str>,
) -> Result<(GlobalAcceleratorSpec, String), Decision> {
    let Some(object) = object.filter(|o| o.is_object()) else {
        return Err(Decision::errored(
            "decode",
            "admission request carries no GlobalAccelerator",
        ));
    };
    let spec = match object.get("spec") {
        None | Some(Value::Null) => GlobalAcceleratorSpec::default(),
        Some(spec) => serde_json::from_value(spec.clone()).map_err(|e| {
            Decision::errored("decode", format!("cannot decode GlobalAccelerator: {e}"))
        })?,
    };
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .or(request_namespace)
        .unwrap_or_default()
        .to_string();
    Ok((spec, namespace))
}

/// The GlobalAccelerator validator; it needs no state.
#[derive(Clone, Copy, Debug, Default)]
pub struct GlobalAcceleratorValidator;

#[async_trait::async_trait]
impl Handler for GlobalAcceleratorValidator {
    fn mutating(&self) -> bool {
        false
    }

    async fn admit(&self, req: &AdmissionRequest) -> Decision {
        if !matches!(req.operation, Operation::Create | Operation::Update) {
            return Decision::Allow;
        }
        decode(req.object.as_ref(), req.namespace.as_deref())
            .and_then(|(spec, namespace)| validate(&spec, &namespace))
            .err()
            .unwrap_or(Decision::Allow)
    }
}

#[cfg(test)]
#[path = "aga_validator_tests.rs"]
mod tests;
