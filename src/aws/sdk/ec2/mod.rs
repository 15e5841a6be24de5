//! `Ec2` over aws-sdk-ec2: requests with pagination folded in, and conversions to our types.

use async_trait::async_trait;
use aws_sdk_ec2::types as ec;

use super::{non_empty, os, s, send};
use crate::aws::caller::Caller;
use crate::aws::error::Result;
use crate::aws::types::*;
use crate::aws::Ec2;

mod convert;
use convert::{instance_from, perm_from, perm_to, tags_from, tags_to};

/// EC2 over the AWS SDK.
#[derive(Debug, Clone)]
pub struct SdkEc2 {
    pub(crate) client: aws_sdk_ec2::Client,
    pub(crate) caller: Caller,
}

impl SdkEc2 {
    pub fn new(client: aws_sdk_ec2::Client, caller: Caller) -> Self {
        Self { client, caller }
    }
}

const SVC: Service = Service::Ec2;

fn filters(q: &Ec2Query) -> Option<Vec<ec::Filter>> {
    if q.filters.is_empty() {
        return None;
    }
    Some(
        q.filters
            .iter()
            .map(|(n, v)| {
                ec::Filter::builder()
                    .name(n)
                    .set_values(Some(v.clone()))
                    .build()
            })
            .collect(),
    )
}

/// One paginated EC2 Describe: `$call` builds the request given the token; `$items` maps a page.
macro_rules! paged {
    ($self:ident, $op:literal, |$tok:ident| $call:expr, |$page:ident| $items:expr) => {{
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let $page = send(&$self.caller, SVC, $op, || {
                let $tok = token.clone();
                $call
            })
            .await?;
            out.extend($items);
            match $page.next_token() {
                Some(t) if !t.is_empty() => token = Some(t.to_string()),
                _ => break,
            }
        }
        Ok(out)
    }};
}

#[async_trait]
impl Ec2 for SdkEc2 {
    async fn describe_vpcs(&self, q: &Ec2Query) -> Result<Vec<Vpc>> {
        paged!(
            self,
            "DescribeVpcs",
            |tok| self
                .client
                .describe_vpcs()
                .set_vpc_ids(non_empty(&q.ids))
                .set_filters(filters(q))
                .set_next_token(tok)
                .send(),
            |page| page.vpcs().iter().map(|v| Vpc {
                id: s(v.vpc_id()),
                cidr_blocks: v
                    .cidr_block_association_set()
                    .iter()
                    .filter_map(|c| os(c.cidr_block()))
                    .collect(),
                ipv6_cidr_blocks: v
                    .ipv6_cidr_block_association_set()
                    .iter()
                    .filter_map(|c| os(c.ipv6_cidr_block()))
                    .collect(),
                tags: tags_from(v.tags()),
            })
        )
    }

    async fn describe_subnets(&self, q: &Ec2Query) -> Result<Vec<Subnet>> {
        paged!(
            self,
            "DescribeSubnets",
            |tok| self
                .client
                .describe_subnets()
                .set_subnet_ids(non_empty(&q.ids))
                .set_filters(filters(q))
                .set_next_token(tok)
                .send(),
            |page| page.subnets().iter().map(|x| Subnet {
                id: s(x.subnet_id()),
                vpc_id: s(x.vpc_id()),
                availability_zone: s(x.availability_zone()),
                availability_zone_id: s(x.availability_zone_id()),
                cidr_block: s(x.cidr_block()),
                ipv6_cidr_blocks: x
                    .ipv6_cidr_block_association_set()
                    .iter()
                    .filter_map(|c| os(c.ipv6_cidr_block()))
                    .collect(),
                available_ip_address_count: x.available_ip_address_count().unwrap_or_default(),
                outpost_arn: os(x.outpost_arn()),
                tags: tags_from(x.tags()),
            })
        )
    }

    async fn describe_availability_zones(&self, q: &Ec2Query) -> Result<Vec<AvailabilityZone>> {
        let out = send(&self.caller, SVC, "DescribeAvailabilityZones", || {
            self.client
                .describe_availability_zones()
                .set_zone_names(non_empty(&q.ids))
                .set_filters(filters(q))
                .send()
        })
        .await?;
        Ok(out
            .availability_zones()
            .iter()
            .map(|z| AvailabilityZone {
                zone_name: s(z.zone_name()),
                zone_id: s(z.zone_id()),
                zone_type: s(z.zone_type()),
            })
            .collect())
    }

    async fn describe_security_groups(&self, q: &Ec2Query) -> Result<Vec<SecurityGroup>> {
        paged!(
            self,
            "DescribeSecurityGroups",
            |tok| self
                .client
                .describe_security_groups()
                .set_group_ids(non_empty(&q.ids))
                .set_filters(filters(q))
                .set_next_token(tok)
                .send(),
            |page| page.security_groups().iter().map(|g| SecurityGroup {
                id: s(g.group_id()),
                name: s(g.group_name()),
                description: s(g.description()),
                vpc_id: s(g.vpc_id()),
                ingress: g.ip_permissions().iter().map(perm_from).collect(),
                tags: tags_from(g.tags()),
            })
        )
    }

    async fn create_security_group(&self, req: &CreateSecurityGroup) -> Result<String> {
        let spec = (!req.tags.is_empty()).then(|| {
            vec![ec::TagSpecification::builder()
                .resource_type(ec::ResourceType::SecurityGroup)
                .set_tags(Some(tags_to(&req.tags)))
                .build()]
        });
        let out = send(&self.caller, SVC, "CreateSecurityGroup", || {
            self.client
                .create_security_group()
                .group_name(&req.name)
                .description(&req.description)
                .vpc_id(&req.vpc_id)
                .set_tag_specifications(spec.clone())
                .send()
        })
        .await?;
        Ok(s(out.group_id()))
    }

    async fn delete_security_group(&self, id: &str) -> Result<()> {
        send(&self.caller, SVC, "DeleteSecurityGroup", || {
            self.client.delete_security_group().group_id(id).send()
        })
        .await?;
        Ok(())
    }

    async fn authorize_ingress(&self, group_id: &str, permissions: &[IpPermission]) -> Result<()> {
        let perms: Vec<ec::IpPermission> = permissions.iter().map(perm_to).collect();
        send(&self.caller, SVC, "AuthorizeSecurityGroupIngress", || {
            self.client
                .authorize_security_group_ingress()
                .group_id(group_id)
                .set_ip_permissions(Some(perms.clone()))
                .send()
        })
        .await?;
        Ok(())
    }

    async fn revoke_ingress(&self, group_id: &str, permissions: &[IpPermission]) -> Result<()> {
        let perms: Vec<ec::IpPermission> = permissions.iter().map(perm_to).collect();
        send(&self.caller, SVC, "RevokeSecurityGroupIngress", || {
            self.client
                .revoke_security_group_ingress()
                .group_id(group_id)
                .set_ip_permissions(Some(perms.clone()))
                .send()
        })
        .await?;
        Ok(())
    }

    async fn describe_instances(&self, q: &Ec2Query) -> Result<Vec<Instance>> {
        paged!(
            self,
            "DescribeInstances",
            |tok| self
                .client
                .describe_instances()
                .set_instance_ids(non_empty(&q.ids))
                .set_filters(filters(q))
                .set_next_token(tok)
                .send(),
            |page| page
                .reservations()
                .iter()
                .flat_map(|r| r.instances())
                .map(instance_from)
        )
    }

    async fn describe_network_interfaces(&self, q: &Ec2Query) -> Result<Vec<NetworkInterface>> {
        paged!(
            self,
            "DescribeNetworkInterfaces",
            |tok| self
                .client
                .describe_network_interfaces()
                .set_network_interface_ids(non_empty(&q.ids))
                .set_filters(filters(q))
                .set_next_token(tok)
                .send(),
            |page| page.network_interfaces().iter().map(|n| NetworkInterface {
                id: s(n.network_interface_id()),
                vpc_id: s(n.vpc_id()),
                subnet_id: s(n.subnet_id()),
                availability_zone: s(n.availability_zone()),
                private_ip_addresses: n
                    .private_ip_addresses()
                    .iter()
                    .filter_map(|a| os(a.private_ip_address()))
                    .collect(),
                ipv6_addresses: n
                    .ipv6_addresses()
                    .iter()
                    .filter_map(|a| os(a.ipv6_address()))
                    .collect(),
                security_groups: n.groups().iter().filter_map(|g| os(g.group_id())).collect(),
                instance_id: n.attachment().and_then(|a| os(a.instance_id())),
                tags: tags_from(n.tag_set()),
            })
        )
    }

    async fn describe_route_tables(&self, q: &Ec2Query) -> Result<Vec<RouteTable>> {
        paged!(
            self,
            "DescribeRouteTables",
            |tok| self
                .client
                .describe_route_tables()
                .set_route_table_ids(non_empty(&q.ids))
                .set_filters(filters(q))
                .set_next_token(tok)
                .send(),
            |page| page.route_tables().iter().map(|t| RouteTable {
                id: s(t.route_table_id()),
                vpc_id: s(t.vpc_id()),
                main: t.associations().iter().any(|a| a.main() == Some(true)),
                subnet_ids: t
                    .associations()
                    .iter()
                    .filter_map(|a| os(a.subnet_id()))
                    .collect(),
                routes: t
                    .routes()
                    .iter()
                    .map(|r| Route {
                        destination: os(r.destination_cidr_block())
                            .or_else(|| os(r.destination_ipv6_cidr_block())),
                        gateway_id: os(r.gateway_id()),
                    })
                    .collect(),
            })
        )
    }

    async fn create_tags(&self, resource_ids: &[String], tags: &Tags) -> Result<()> {
        let list = tags_to(tags);
        send(&self.caller, SVC, "CreateTags", || {
            self.client
                .create_tags()
                .set_resources(Some(resource_ids.to_vec()))
                .set_tags(Some(list.clone()))
                .send()
        })
        .await?;
        Ok(())
    }

    async fn delete_tags(&self, resource_ids: &[String], keys: &[String]) -> Result<()> {
        let list: Vec<ec::Tag> = keys
            .iter()
            .map(|k| ec::Tag::builder().key(k).build())
            .collect();
        send(&self.caller, SVC, "DeleteTags", || {
            self.client
                .delete_tags()
                .set_resources(Some(resource_ids.to_vec()))
                .set_tags(Some(list.clone()))
                .send()
        })
        .await?;
        Ok(())
    }
}
