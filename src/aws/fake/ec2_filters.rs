//! How the fake's EC2 objects answer DescribeX filters (`vpc-id`, `tag:K`, `group-name`, …),
//! as EC2 names them.

use super::filter::Filterable;
use crate::aws::types::*;

/// What objects without tags answer for `tag:` filters.
static NO_TAGS: Tags = Tags::new();

fn one(v: &str) -> Option<Vec<String>> {
    Some(vec![v.to_string()])
}

impl Filterable for Vpc {
    const FILTERS: &'static [&'static str] = &[
        "vpc-id",
        "cidr",
        "cidr-block-association.cidr-block",
        "is-default",
        "state",
    ];
    fn id(&self) -> &str {
        &self.id
    }
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn field(&self, name: &str) -> Option<Vec<String>> {
        match name {
            "vpc-id" => one(&self.id),
            "cidr" | "cidr-block-association.cidr-block" => Some(self.cidr_blocks.clone()),
            "is-default" => one("false"),
            "state" => one("available"),
            _ => None,
        }
    }
}

impl Filterable for Subnet {
    const FILTERS: &'static [&'static str] = &[
        "subnet-id",
        "vpc-id",
        "availability-zone",
        "availability-zone-id",
        "cidr-block",
        "cidr",
        "cidrBlock",
        "state",
        "default-for-az",
    ];
    fn id(&self) -> &str {
        &self.id
    }
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn field(&self, name: &str) -> Option<Vec<String>> {
        match name {
            "subnet-id" => one(&self.id),
            "vpc-id" => one(&self.vpc_id),
            "availability-zone" => one(&self.availability_zone),
            "availability-zone-id" => one(&self.availability_zone_id),
            "cidr-block" | "cidr" | "cidrBlock" => one(&self.cidr_block),
            "state" => one("available"),
            "default-for-az" => one("false"),
            _ => None,
        }
    }
}

impl Filterable for AvailabilityZone {
    const FILTERS: &'static [&'static str] = &["zone-name", "zone-id", "zone-type", "state"];
    fn id(&self) -> &str {
        &self.zone_name
    }
    fn tags(&self) -> &Tags {
        &NO_TAGS
    }
    fn field(&self, name: &str) -> Option<Vec<String>> {
        match name {
            "zone-name" => one(&self.zone_name),
            "zone-id" => one(&self.zone_id),
            "zone-type" => one(&self.zone_type),
            "state" => one("available"),
            _ => None,
        }
    }
}

impl Filterable for SecurityGroup {
    const FILTERS: &'static [&'static str] = &["group-id", "group-name", "vpc-id", "description"];
    fn id(&self) -> &str {
        &self.id
    }
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn field(&self, name: &str) -> Option<Vec<String>> {
        match name {
            "group-id" => one(&self.id),
            "group-name" => one(&self.name),
            "vpc-id" => one(&self.vpc_id),
            "description" => one(&self.description),
            _ => None,
        }
    }
}

impl Filterable for Instance {
    const FILTERS: &'static [&'static str] = &[
        "instance-id",
        "vpc-id",
        "subnet-id",
        "private-ip-address",
        "availability-zone",
        "instance-state-name",
        "network-interface.network-interface-id",
    ];
    fn id(&self) -> &str {
        &self.id
    }
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn field(&self, name: &str) -> Option<Vec<String>> {
        match name {
            "instance-id" => one(&self.id),
            "vpc-id" => Some(self.vpc_id.clone().into_iter().collect()),
            "subnet-id" => Some(self.subnet_id.clone().into_iter().collect()),
            "private-ip-address" => Some(self.private_ip_address.clone().into_iter().collect()),
            "availability-zone" => Some(self.availability_zone.clone().into_iter().collect()),
            "instance-state-name" => one(&self.state),
            "network-interface.network-interface-id" => Some(
                self.network_interfaces
                    .iter()
                    .map(|n| n.id.clone())
                    .collect(),
            ),
            _ => None,
        }
    }
}

impl Filterable for NetworkInterface {
    const FILTERS: &'static [&'static str] = &[
        "network-interface-id",
        "vpc-id",
        "subnet-id",
        "availability-zone",
        "private-ip-address",
        "addresses.private-ip-address",
        "ipv6-addresses.ipv6-address",
        "attachment.instance-id",
        "group-id",
    ];
    fn id(&self) -> &str {
        &self.id
    }
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn field(&self, name: &str) -> Option<Vec<String>> {
        match name {
            "network-interface-id" => one(&self.id),
            "vpc-id" => one(&self.vpc_id),
            "subnet-id" => one(&self.subnet_id),
            "availability-zone" => one(&self.availability_zone),
            "private-ip-address" | "addresses.private-ip-address" => {
                Some(self.private_ip_addresses.clone())
            }
            "ipv6-addresses.ipv6-address" => Some(self.ipv6_addresses.clone()),
            "attachment.instance-id" => Some(self.instance_id.clone().into_iter().collect()),
            "group-id" => Some(self.security_groups.clone()),
            _ => None,
        }
    }
}

impl Filterable for RouteTable {
    const FILTERS: &'static [&'static str] = &[
        "route-table-id",
        "vpc-id",
        "association.subnet-id",
        "association.main",
    ];
    fn id(&self) -> &str {
        &self.id
    }
    fn tags(&self) -> &Tags {
        &NO_TAGS
    }
    fn field(&self, name: &str) -> Option<Vec<String>> {
        match name {
            "route-table-id" => one(&self.id),
            "vpc-id" => one(&self.vpc_id),
            "association.subnet-id" => Some(self.subnet_ids.clone()),
            "association.main" => one(if self.main { "true" } else { "false" }),
            _ => None,
        }
    }
}
