//! The listeners step (upstream's `model_build_listener.go` and `canApplyAutoDiscoveryForGA`):
//! one listener per spec listener (`Listener-<i>`), except that a spec of one listener with one
//! endpoint group of one endpoint, missing its protocol or ports, becomes the listeners the
//! endpoint serves (one per protocol found, TCP before UDP, ports folded into ranges).

use super::discovery::{can_apply_auto_discovery, protocol_ports};
use super::endpoints::LoadedEndpoint;
use super::ports::consolidate_port_ranges;
use crate::crd::global_accelerator::{
    self as crd, ClientAffinityType, GlobalAccelerator, GlobalAcceleratorListener,
    GlobalAcceleratorProtocol,
};
use crate::model::types::aga::{AgaListener, AgaProtocol, ClientAffinity, PortRange};

/// The model's protocol of a spec protocol.
pub fn model_protocol(p: GlobalAcceleratorProtocol) -> AgaProtocol {
    match p {
        GlobalAcceleratorProtocol::Tcp => AgaProtocol::Tcp,
        GlobalAcceleratorProtocol::Udp => AgaProtocol::Udp,
    }
}

fn spec_protocol(p: AgaProtocol) -> GlobalAcceleratorProtocol {
    match p {
        AgaProtocol::Tcp => GlobalAcceleratorProtocol::Tcp,
        AgaProtocol::Udp => GlobalAcceleratorProtocol::Udp,
    }
}

/// The listeners of `ga` without their endpoint groups, and the spec listeners they came from
/// (after auto-discovery), which the endpoint groups step reads.
pub fn build_listeners(
    ga: &GlobalAccelerator,
    loaded: &[LoadedEndpoint],
) -> Result<(Vec<AgaListener>, Vec<GlobalAcceleratorListener>), String> {
    let listeners = match ga.spec.listeners.as_deref() {
        Some(listeners) if !listeners.is_empty() => listeners,
        _ => return Ok((Vec::new(), Vec::new())),
    };
    let processed = if can_apply_auto_discovery(ga, loaded) {
        auto_discovery_listeners(&listeners[0], &loaded[0])?
    } else {
        listeners.to_vec()
    };
    let built = processed
        .iter()
        .enumerate()
        .map(|(i, l)| build_listener(l, i))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((built, processed))
}

/// Listener `index` of the processed spec (upstream's `buildListener`), no endpoint groups yet.
pub fn build_listener(
    listener: &GlobalAcceleratorListener,
    index: usize,
) -> Result<AgaListener, String> {
    Ok(AgaListener {
        id: format!("Listener-{index}"),
        protocol: listener_protocol(listener)?,
        port_ranges: listener_port_ranges(listener)?,
        client_affinity: Some(listener_client_affinity(listener)),
        endpoint_groups: Vec::new(),
    })
}

/// The listener's protocol; required once auto-discovery had its chance.
pub fn listener_protocol(listener: &GlobalAcceleratorListener) -> Result<AgaProtocol, String> {
    // Upstream's text, trailing space included.
    listener
        .protocol
        .map(model_protocol)
        .ok_or_else(|| "listener protocol must be specified ".to_string())
}

/// The listener's port ranges; required once auto-discovery had its chance.
pub fn listener_port_ranges(
    listener: &GlobalAcceleratorListener,
) -> Result<Vec<PortRange>, String> {
    let ranges = listener
        .port_ranges
        .as_ref()
        .ok_or_else(|| "listener port ranges must be specified".to_string())?;
    // Range limits and order are the CRD's and the webhook's to check.
    Ok(ranges
        .iter()
        .map(|r| PortRange {
            from_port: r.from_port,
            to_port: r.to_port,
        })
        .collect())
}

/// SOURCE_IP when asked for, else NONE.
pub fn listener_client_affinity(listener: &GlobalAcceleratorListener) -> ClientAffinity {
    match listener.client_affinity {
        Some(ClientAffinityType::SourceIp) => ClientAffinity::SourceIp,
        Some(ClientAffinityType::None) | None => ClientAffinity::None,
    }
}

/// The listeners auto-discovery makes of `template` from what `endpoint` serves (upstream's
/// `buildAutoDiscoveryListeners`): the template's protocol alone when it has one, else TCP and
/// UDP when both were found, else the one found.
pub fn auto_discovery_listeners(
    template: &GlobalAcceleratorListener,
    endpoint: &LoadedEndpoint,
) -> Result<Vec<GlobalAcceleratorListener>, String> {
    let found = protocol_ports(endpoint)
        .map_err(|e| format!("failed to fetch endpoint port info for auto-discovery: {e}"))?;
    let Some(first) = found.first() else {
        return Err("no protocol or port information found for auto-discovery".into());
    };
    let protocols = match template.protocol {
        Some(p) => vec![model_protocol(p)],
        None if found.len() > 1 => vec![AgaProtocol::Tcp, AgaProtocol::Udp],
        None => vec![first.protocol],
    };
    Ok(protocols
        .into_iter()
        .map(|protocol| {
            let ports: Vec<i32> = found
                .iter()
                .filter(|f| f.protocol == protocol)
                .flat_map(|f| f.ports.iter().copied())
                .collect();
            new_listener(template, protocol, &consolidate_port_ranges(&ports))
        })
        .collect())
}

/// `template` with `protocol`, and `discovered` as its ranges unless it has its own (upstream's
/// `createNewListener`); client affinity and endpoint groups copied.
pub fn new_listener(
    template: &GlobalAcceleratorListener,
    protocol: AgaProtocol,
    discovered: &[PortRange],
) -> GlobalAcceleratorListener {
    let port_ranges = match &template.port_ranges {
        Some(own) => Some(own.clone()),
        None if !discovered.is_empty() => Some(
            discovered
                .iter()
                .map(|r| crd::PortRange {
                    from_port: r.from_port,
                    to_port: r.to_port,
                })
                .collect(),
        ),
        None => None,
    };
    GlobalAcceleratorListener {
        protocol: Some(spec_protocol(protocol)),
        port_ranges,
        client_affinity: template.client_affinity,
        endpoint_groups: template.endpoint_groups.clone(),
    }
}

#[cfg(test)]
#[path = "listener_tests.rs"]
mod tests;
