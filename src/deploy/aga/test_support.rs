//! Builders the deployer's unit tests share: model listeners and endpoint groups, the tracking
//! tags, an accelerator on a fake, and a step context over it.

use super::{AgaOptions, Ctx};
use crate::aws::{GlobalAccelerator, Tags};
use crate::model::aga::{
    Accelerator, AgaIpAddressType, AgaListener, AgaProtocol, EndpointGroup, PortRange,
};

pub const CLUSTER: &str = "c1";
pub const STACK: &str = "ns/ga";

pub fn pr(from_port: i32, to_port: i32) -> PortRange {
    PortRange { from_port, to_port }
}

pub fn listener(id: &str, protocol: AgaProtocol, ranges: &[(i32, i32)]) -> AgaListener {
    AgaListener {
        id: id.into(),
        protocol,
        port_ranges: ranges.iter().map(|&(f, t)| pr(f, t)).collect(),
        client_affinity: None,
        endpoint_groups: vec![],
    }
}

pub fn group(id: &str, region: &str) -> EndpointGroup {
    EndpointGroup {
        id: id.into(),
        region: region.into(),
        traffic_dial_percentage: Some(100),
        port_overrides: vec![],
        endpoint_configurations: vec![],
    }
}

/// Upstream's tracking tags of the accelerator of stack [`STACK`] in cluster [`CLUSTER`].
pub fn tracking_tags() -> Tags {
    [
        ("elbv2.k8s.aws/cluster", CLUSTER),
        ("aga.k8s.aws/stack", STACK),
        ("aga.k8s.aws/resource", "GlobalAccelerator"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

pub fn model_accelerator(name: &str) -> Accelerator {
    Accelerator {
        name: name.into(),
        ip_addresses: vec![],
        ip_address_type: AgaIpAddressType::Ipv4,
        enabled: Some(true),
        tags: tracking_tags(),
        crd_uid: format!("uid-{name}"),
        existing_arn: None,
    }
}

/// An accelerator of the stack, created on `ga`; its ARN.
pub async fn accelerator(ga: &dyn GlobalAccelerator) -> String {
    ga.create_accelerator(&model_accelerator("k8s_ns_ga"))
        .await
        .unwrap()
        .arn
}

pub fn options() -> AgaOptions {
    AgaOptions {
        cluster: CLUSTER.into(),
        external_managed_tags: vec![],
    }
}

pub fn ctx<'a>(ga: &'a dyn GlobalAccelerator, opts: &'a AgaOptions) -> Ctx<'a> {
    Ctx::new(ga, opts, STACK)
}
