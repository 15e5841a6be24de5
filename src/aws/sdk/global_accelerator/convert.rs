//! What aws-sdk-globalaccelerator describes, in our types: accelerators (with their IP sets),
//! listeners, endpoint groups with their endpoints, and tags.

use aws_sdk_globalaccelerator::types as gt;

use crate::aws::global_accelerator::{
    DescribedAccelerator, DescribedEndpointGroup, DescribedListener, EndpointDescription, IpSet,
};
use crate::aws::sdk::s;
use crate::aws::types::Tags;
use crate::model::aga::{PortOverride, PortRange};

pub(super) fn accelerator_from(a: &gt::Accelerator) -> DescribedAccelerator {
    DescribedAccelerator {
        arn: s(a.accelerator_arn()),
        name: s(a.name()),
        ip_address_type: s(a.ip_address_type().map(|v| v.as_str())),
        // Absent only where upstream reads it as false (`aws.ToBool`).
        enabled: a.enabled().unwrap_or(false),
        ip_sets: a.ip_sets().iter().map(ip_set_from).collect(),
        dns_name: s(a.dns_name()),
        dual_stack_dns_name: a.dual_stack_dns_name().map(str::to_string),
        status: s(a.status().map(|v| v.as_str())),
    }
}

fn ip_set_from(i: &gt::IpSet) -> IpSet {
    IpSet {
        ip_address_family: s(i.ip_address_family().map(|f| f.as_str())),
        ip_addresses: i.ip_addresses().to_vec(),
    }
}

pub(super) fn listener_from(l: &gt::Listener) -> DescribedListener {
    DescribedListener {
        arn: s(l.listener_arn()),
        protocol: s(l.protocol().map(|p| p.as_str())),
        port_ranges: l
            .port_ranges()
            .iter()
            .map(|r| PortRange {
                from_port: r.from_port().unwrap_or_default(),
                to_port: r.to_port().unwrap_or_default(),
            })
            .collect(),
        client_affinity: s(l.client_affinity().map(|c| c.as_str())),
    }
}

pub(super) fn group_from(g: &gt::EndpointGroup) -> DescribedEndpointGroup {
    DescribedEndpointGroup {
        arn: s(g.endpoint_group_arn()),
        region: s(g.endpoint_group_region()),
        traffic_dial_percentage: g.traffic_dial_percentage(),
        port_overrides: g
            .port_overrides()
            .iter()
            .map(|p| PortOverride {
                listener_port: p.listener_port().unwrap_or_default(),
                endpoint_port: p.endpoint_port().unwrap_or_default(),
            })
            .collect(),
        endpoints: g
            .endpoint_descriptions()
            .iter()
            .filter_map(endpoint_from)
            .collect(),
    }
}

/// An endpoint without an id is left out, as upstream's drift detection skips it.
pub(super) fn endpoint_from(e: &gt::EndpointDescription) -> Option<EndpointDescription> {
    Some(EndpointDescription {
        endpoint_id: e.endpoint_id()?.to_string(),
        weight: e.weight(),
        client_ip_preservation_enabled: e.client_ip_preservation_enabled(),
        health_state: e.health_state().map(|h| h.as_str().to_string()),
    })
}

pub(super) fn tags_from(tags: &[gt::Tag]) -> Tags {
    tags.iter()
        .map(|t| (t.key().to_string(), t.value().to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    //! Upstream's `buildAcceleratorStatus` cases (accelerator_manager_test.go) and its nil
    //! handling (an accelerator without `Enabled` is disabled, an endpoint without id skipped),
    //! on the SDK side of the conversion.

    use super::*;

    const ARN: &str =
        "arn:aws:globalaccelerator::123456789012:accelerator/1234abcd-abcd-1234-abcd-1234abcdefgh";

    fn ip_set(family: gt::IpAddressFamily, ips: &[&str]) -> gt::IpSet {
        gt::IpSet::builder()
            .ip_address_family(family)
            .set_ip_addresses(Some(ips.iter().map(|s| s.to_string()).collect()))
            .build()
    }

    #[test]
    fn accelerator_status_as_upstream_builds_it() {
        // "Basic accelerator status".
        let a = gt::Accelerator::builder()
            .accelerator_arn(ARN)
            .name("test-accelerator")
            .dns_name("a1234567890abcdef.awsglobalaccelerator.com")
            .status(gt::AcceleratorStatus::Deployed)
            .ip_sets(ip_set(
                gt::IpAddressFamily::IPv4,
                &["192.0.2.250", "198.51.100.52"],
            ))
            .build();
        let d = accelerator_from(&a);
        assert_eq!(d.arn, ARN);
        assert_eq!(d.dns_name, "a1234567890abcdef.awsglobalaccelerator.com");
        assert_eq!(d.status, "DEPLOYED");
        assert!(d.is_deployed());
        assert_eq!(d.dual_stack_dns_name, None);
        assert_eq!(
            d.ip_sets,
            vec![IpSet {
                ip_address_family: "IPv4".into(),
                ip_addresses: vec!["192.0.2.250".into(), "198.51.100.52".into()],
            }]
        );

        // "Dual stack accelerator status".
        let a = gt::Accelerator::builder()
            .accelerator_arn(ARN)
            .dns_name("a1234567890abcdef.awsglobalaccelerator.com")
            .dual_stack_dns_name("a1234567890abcdef.dualstack.awsglobalaccelerator.com")
            .status(gt::AcceleratorStatus::Deployed)
            .ip_sets(ip_set(
                gt::IpAddressFamily::IPv4,
                &["192.0.2.250", "198.51.100.52"],
            ))
            .ip_sets(ip_set(
                gt::IpAddressFamily::IPv6,
                &["2001:db8::1", "2001:db8::2"],
            ))
            .build();
        let d = accelerator_from(&a);
        assert_eq!(
            d.dual_stack_dns_name.as_deref(),
            Some("a1234567890abcdef.dualstack.awsglobalaccelerator.com")
        );
        assert_eq!(d.ip_sets.len(), 2);
        assert_eq!(d.ip_sets[1].ip_address_family, "IPv6");
        assert_eq!(d.ipv4_addresses(), vec!["192.0.2.250", "198.51.100.52"]);

        // "In progress accelerator status": no IP sets yet.
        let a = gt::Accelerator::builder()
            .accelerator_arn(ARN)
            .status(gt::AcceleratorStatus::InProgress)
            .build();
        let d = accelerator_from(&a);
        assert_eq!(d.status, "IN_PROGRESS");
        assert!(!d.is_deployed());
        assert!(d.ip_sets.is_empty());
    }

    /// disableAccelerator's "Accelerator with nil enabled field": read as disabled.
    #[test]
    fn an_accelerator_without_enabled_reads_as_disabled() {
        let a = gt::Accelerator::builder().accelerator_arn(ARN).build();
        assert!(!accelerator_from(&a).enabled);
        let a = gt::Accelerator::builder()
            .accelerator_arn(ARN)
            .enabled(true)
            .build();
        assert!(accelerator_from(&a).enabled);
    }

    /// detectEndpointDrift's "nil endpoint ID in existing endpoints": skipped.
    #[test]
    fn endpoints_without_id_are_skipped() {
        let g = gt::EndpointGroup::builder()
            .endpoint_group_arn("arn:eg")
            .endpoint_group_region("us-west-2")
            .endpoint_descriptions(gt::EndpointDescription::builder().weight(80).build())
            .endpoint_descriptions(
                gt::EndpointDescription::builder()
                    .endpoint_id("endpoint-2")
                    .weight(100)
                    .build(),
            )
            .build();
        let d = group_from(&g);
        assert_eq!(d.endpoints.len(), 1);
        assert_eq!(d.endpoints[0].endpoint_id, "endpoint-2");
        assert_eq!(d.endpoints[0].weight, Some(100));
    }

    #[test]
    fn listeners_and_tags_convert() {
        let l = gt::Listener::builder()
            .listener_arn("arn:l")
            .protocol(gt::Protocol::Udp)
            .port_ranges(gt::PortRange::builder().from_port(53).to_port(53).build())
            .client_affinity(gt::ClientAffinity::SourceIp)
            .build();
        let d = listener_from(&l);
        assert_eq!(d.protocol, "UDP");
        assert_eq!(d.client_affinity, "SOURCE_IP");
        assert_eq!(
            d.port_ranges,
            vec![PortRange {
                from_port: 53,
                to_port: 53
            }]
        );
        let t = vec![gt::Tag::builder().key("k").value("v").build().unwrap()];
        assert_eq!(tags_from(&t), Tags::from([("k".into(), "v".into())]));
    }
}
