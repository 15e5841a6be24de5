//! Our own EC2 data types: queries, VPCs, subnets, security groups with their permissions,
//! instances and network interfaces.

use super::Tags;

/// A Describe* query: IDs plus AWS filters (`vpc-id`, `tag:Name`, `tag-key`, ...), all ANDed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ec2Query {
    pub ids: Vec<String>,
    pub filters: Vec<(String, Vec<String>)>,
}

impl Ec2Query {
    pub fn ids<I: IntoIterator<Item = S>, S: Into<String>>(ids: I) -> Self {
        Self {
            ids: ids.into_iter().map(Into::into).collect(),
            filters: vec![],
        }
    }

    pub fn filter<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        name: &str,
        values: I,
    ) -> Self {
        self.filters.push((
            name.to_string(),
            values.into_iter().map(Into::into).collect(),
        ));
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Vpc {
    pub id: String,
    pub cidr_blocks: Vec<String>,
    pub ipv6_cidr_blocks: Vec<String>,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Subnet {
    pub id: String,
    pub vpc_id: String,
    pub availability_zone: String,
    pub availability_zone_id: String,
    pub cidr_block: String,
    pub ipv6_cidr_blocks: Vec<String>,
    pub available_ip_address_count: i32,
    pub outpost_arn: Option<String>,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AvailabilityZone {
    pub zone_name: String,
    pub zone_id: String,
    /// `availability-zone`, `local-zone` or `wavelength-zone`.
    pub zone_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SecurityGroup {
    pub id: String,
    pub name: String,
    pub description: String,
    pub vpc_id: String,
    pub ingress: Vec<IpPermission>,
    pub tags: Tags,
}

impl SecurityGroup {
    /// The group a create makes: the request's fields, no rules yet.
    pub fn created(id: String, req: &CreateSecurityGroup) -> SecurityGroup {
        SecurityGroup {
            id,
            name: req.name.clone(),
            description: req.description.clone(),
            vpc_id: req.vpc_id.clone(),
            ingress: vec![],
            tags: req.tags.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateSecurityGroup {
    pub name: String,
    pub description: String,
    pub vpc_id: String,
    pub tags: Tags,
}

/// One ingress permission; AWS merges permissions with the same protocol and ports.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct IpPermission {
    /// `tcp`, `udp`, `icmp` or `-1`.
    pub ip_protocol: String,
    pub from_port: Option<i32>,
    pub to_port: Option<i32>,
    pub ipv4_ranges: Vec<IpRange>,
    pub ipv6_ranges: Vec<IpRange>,
    pub prefix_list_ids: Vec<IpRange>,
    pub group_ids: Vec<IpRange>,
}

/// Which list of a permission a source sits in (ordered as AWS lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SourceKind {
    Ipv4Cidr,
    Ipv6Cidr,
    PrefixList,
    Group,
}

impl IpPermission {
    /// Every source of the permission with its kind, one at a time: the one flattening of
    /// AWS's merged permissions (sources per protocol and ports) into single-source rules.
    pub fn sources(&self) -> impl Iterator<Item = (SourceKind, &IpRange)> {
        let lists = [
            (SourceKind::Ipv4Cidr, &self.ipv4_ranges),
            (SourceKind::Ipv6Cidr, &self.ipv6_ranges),
            (SourceKind::PrefixList, &self.prefix_list_ids),
            (SourceKind::Group, &self.group_ids),
        ];
        lists
            .into_iter()
            .flat_map(|(kind, list)| list.iter().map(move |r| (kind, r)))
    }

    /// The list sources of `kind` go in.
    pub fn sources_mut(&mut self, kind: SourceKind) -> &mut Vec<IpRange> {
        match kind {
            SourceKind::Ipv4Cidr => &mut self.ipv4_ranges,
            SourceKind::Ipv6Cidr => &mut self.ipv6_ranges,
            SourceKind::PrefixList => &mut self.prefix_list_ids,
            SourceKind::Group => &mut self.group_ids,
        }
    }

    /// A permission with the one source `range` of `kind`.
    pub fn single(
        ip_protocol: impl Into<String>,
        ports: (Option<i32>, Option<i32>),
        kind: SourceKind,
        range: IpRange,
    ) -> IpPermission {
        let mut p = IpPermission {
            ip_protocol: ip_protocol.into(),
            from_port: ports.0,
            to_port: ports.1,
            ..Default::default()
        };
        p.sources_mut(kind).push(range);
        p
    }
}

/// A CIDR, prefix-list ID or security-group ID with its optional description.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct IpRange {
    pub value: String,
    pub description: Option<String>,
}

impl IpRange {
    pub fn new(v: impl Into<String>) -> Self {
        Self {
            value: v.into(),
            description: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Instance {
    pub id: String,
    pub vpc_id: Option<String>,
    pub subnet_id: Option<String>,
    pub private_ip_address: Option<String>,
    pub availability_zone: Option<String>,
    /// `pending`, `running`, `stopped`, ...
    pub state: String,
    pub network_interfaces: Vec<InstanceNetworkInterface>,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InstanceNetworkInterface {
    pub id: String,
    pub device_index: i32,
    pub security_groups: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NetworkInterface {
    pub id: String,
    pub vpc_id: String,
    pub subnet_id: String,
    pub availability_zone: String,
    pub private_ip_addresses: Vec<String>,
    pub ipv6_addresses: Vec<String>,
    pub security_groups: Vec<String>,
    pub instance_id: Option<String>,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RouteTable {
    pub id: String,
    pub vpc_id: String,
    pub main: bool,
    pub subnet_ids: Vec<String>,
    pub routes: Vec<Route>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Route {
    pub destination: Option<String>,
    pub gateway_id: Option<String>,
}
