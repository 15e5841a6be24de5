//! aws-sdk-ec2 types to ours and back: tags, instances and ingress permissions.

use aws_sdk_ec2::types as ec;

use crate::aws::sdk::{non_empty, os, s};
use crate::aws::types::*;

pub(super) fn tags_from(t: &[ec::Tag]) -> Tags {
    t.iter().map(|t| (s(t.key()), s(t.value()))).collect()
}

pub(super) fn tags_to(t: &Tags) -> Vec<ec::Tag> {
    t.iter()
        .map(|(k, v)| ec::Tag::builder().key(k).value(v).build())
        .collect()
}

pub(super) fn instance_from(i: &ec::Instance) -> Instance {
    Instance {
        id: s(i.instance_id()),
        vpc_id: os(i.vpc_id()),
        subnet_id: os(i.subnet_id()),
        private_ip_address: os(i.private_ip_address()),
        availability_zone: i.placement().and_then(|p| os(p.availability_zone())),
        state: s(i.state().and_then(|st| st.name()).map(|n| n.as_str())),
        network_interfaces: i
            .network_interfaces()
            .iter()
            .map(|n| InstanceNetworkInterface {
                id: s(n.network_interface_id()),
                device_index: n
                    .attachment()
                    .and_then(|a| a.device_index())
                    .unwrap_or_default(),
                security_groups: n.groups().iter().filter_map(|g| os(g.group_id())).collect(),
            })
            .collect(),
        tags: tags_from(i.tags()),
    }
}

pub(super) fn perm_from(p: &ec::IpPermission) -> IpPermission {
    let r = |v: Option<&str>, d: Option<&str>| IpRange {
        value: s(v),
        description: os(d),
    };
    IpPermission {
        ip_protocol: s(p.ip_protocol()),
        from_port: p.from_port(),
        to_port: p.to_port(),
        ipv4_ranges: p
            .ip_ranges()
            .iter()
            .map(|x| r(x.cidr_ip(), x.description()))
            .collect(),
        ipv6_ranges: p
            .ipv6_ranges()
            .iter()
            .map(|x| r(x.cidr_ipv6(), x.description()))
            .collect(),
        prefix_list_ids: p
            .prefix_list_ids()
            .iter()
            .map(|x| r(x.prefix_list_id(), x.description()))
            .collect(),
        group_ids: p
            .user_id_group_pairs()
            .iter()
            .map(|x| r(x.group_id(), x.description()))
            .collect(),
    }
}

pub(super) fn perm_to(p: &IpPermission) -> ec::IpPermission {
    ec::IpPermission::builder()
        .ip_protocol(&p.ip_protocol)
        .set_from_port(p.from_port)
        .set_to_port(p.to_port)
        .set_ip_ranges(non_empty(
            &p.ipv4_ranges
                .iter()
                .map(|x| {
                    ec::IpRange::builder()
                        .cidr_ip(&x.value)
                        .set_description(x.description.clone())
                        .build()
                })
                .collect::<Vec<_>>(),
        ))
        .set_ipv6_ranges(non_empty(
            &p.ipv6_ranges
                .iter()
                .map(|x| {
                    ec::Ipv6Range::builder()
                        .cidr_ipv6(&x.value)
                        .set_description(x.description.clone())
                        .build()
                })
                .collect::<Vec<_>>(),
        ))
        .set_prefix_list_ids(non_empty(
            &p.prefix_list_ids
                .iter()
                .map(|x| {
                    ec::PrefixListId::builder()
                        .prefix_list_id(&x.value)
                        .set_description(x.description.clone())
                        .build()
                })
                .collect::<Vec<_>>(),
        ))
        .set_user_id_group_pairs(non_empty(
            &p.group_ids
                .iter()
                .map(|x| {
                    ec::UserIdGroupPair::builder()
                        .group_id(&x.value)
                        .set_description(x.description.clone())
                        .build()
                })
                .collect::<Vec<_>>(),
        ))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field of a permission reaches the SDK's (Authorize/RevokeSecurityGroupIngress):
    /// protocol, ports and the four source lists with their descriptions (7 fields), read back
    /// unchanged. Taken apart without `..`: a field added is a compile error here.
    #[test]
    fn every_permission_field_reaches_the_sdk() {
        let r = |v: &str| IpRange {
            value: v.into(),
            description: Some(format!("from {v}")),
        };
        let p = IpPermission {
            ip_protocol: "udp".into(),
            from_port: Some(1000),
            to_port: Some(2000),
            ipv4_ranges: vec![r("10.0.0.0/8")],
            ipv6_ranges: vec![r("2600::/64")],
            prefix_list_ids: vec![r("pl-1")],
            group_ids: vec![r("sg-1")],
        };
        let IpPermission {
            ip_protocol,
            from_port,
            to_port,
            ipv4_ranges,
            ipv6_ranges,
            prefix_list_ids,
            group_ids,
        } = perm_from(&perm_to(&p));
        assert_eq!(ip_protocol, p.ip_protocol);
        assert_eq!((from_port, to_port), (p.from_port, p.to_port));
        assert_eq!(ipv4_ranges, p.ipv4_ranges);
        assert_eq!(ipv6_ranges, p.ipv6_ranges);
        assert_eq!(prefix_list_ids, p.prefix_list_ids);
        assert_eq!(group_ids, p.group_ids);
    }
}
