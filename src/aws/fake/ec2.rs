//! The fake's EC2: filtered describes, EC2 tags (≤ 50), and the `Ec2` trait over them; security
//! groups and their rules live in `ec2_sg`.

use async_trait::async_trait;

use super::filter::select;
use super::state::{group_not_found, not_found, State};
use super::FakeAws;
use crate::aws::error::{AwsError, Result};
use crate::aws::types::*;
use crate::aws::Ec2;

const SVC: Service = Service::Ec2;
/// EC2's limit of tags per resource.
pub(super) const MAX_TAGS: usize = 50;

impl State {
    fn tags_mut(&mut self, id: &str) -> Result<&mut Tags> {
        let nf = |code: &str, what: &str| {
            not_found(code, format!("The {what} ID '{id}' does not exist"))
        };
        if id.starts_with("vpc-") {
            self.vpcs
                .get_mut(id)
                .map(|v| &mut v.tags)
                .ok_or_else(|| nf("InvalidVpcID.NotFound", "vpc"))
        } else if id.starts_with("subnet-") {
            self.subnets
                .get_mut(id)
                .map(|v| &mut v.tags)
                .ok_or_else(|| nf("InvalidSubnetID.NotFound", "subnet"))
        } else if id.starts_with("sg-") {
            self.sgs
                .get_mut(id)
                .map(|v| &mut v.sg.tags)
                .ok_or_else(|| group_not_found(id))
        } else if id.starts_with("i-") {
            self.instances
                .get_mut(id)
                .map(|v| &mut v.tags)
                .ok_or_else(|| nf("InvalidInstanceID.NotFound", "instance"))
        } else if id.starts_with("eni-") {
            self.enis
                .get_mut(id)
                .map(|v| &mut v.tags)
                .ok_or_else(|| nf("InvalidNetworkInterfaceID.NotFound", "network interface"))
        } else {
            Err(AwsError::from_code(
                "InvalidID",
                format!("The ID '{id}' is not valid"),
                Some(400),
            ))
        }
    }

    fn create_tags(&mut self, ids: &[String], tags: &Tags) -> Result<()> {
        for id in ids {
            let t = self.tags_mut(id)?;
            let mut merged = t.clone();
            merged.extend(tags.clone());
            if merged.len() > MAX_TAGS {
                return Err(AwsError::from_code(
                    "TagLimitExceeded",
                    format!("The maximum number of tags for resource '{id}' has been reached"),
                    Some(400),
                ));
            }
        }
        for id in ids {
            self.tags_mut(id)?.extend(tags.clone());
        }
        Ok(())
    }

    fn delete_tags(&mut self, ids: &[String], keys: &[String]) -> Result<()> {
        for id in ids {
            self.tags_mut(id)?;
        }
        for id in ids {
            self.tags_mut(id)?.retain(|k, _| !keys.contains(k));
        }
        Ok(())
    }
}

#[async_trait]
impl Ec2 for FakeAws {
    async fn describe_vpcs(&self, q: &Ec2Query) -> Result<Vec<Vpc>> {
        self.run(SVC, "DescribeVpcs", |st| {
            select(st.vpcs.values(), q, |id| {
                not_found(
                    "InvalidVpcID.NotFound",
                    format!("The vpc ID '{id}' does not exist"),
                )
            })
        })
        .await
    }

    async fn describe_subnets(&self, q: &Ec2Query) -> Result<Vec<Subnet>> {
        self.run(SVC, "DescribeSubnets", |st| {
            select(st.subnets.values(), q, |id| {
                not_found(
                    "InvalidSubnetID.NotFound",
                    format!("The subnet ID '{id}' does not exist"),
                )
            })
        })
        .await
    }

    async fn describe_availability_zones(&self, q: &Ec2Query) -> Result<Vec<AvailabilityZone>> {
        self.run(SVC, "DescribeAvailabilityZones", |st| {
            select(st.azs.iter(), q, |id| {
                AwsError::from_code(
                    "InvalidParameterValue",
                    format!("The zone '{id}' does not exist"),
                    Some(400),
                )
            })
        })
        .await
    }

    async fn describe_security_groups(&self, q: &Ec2Query) -> Result<Vec<SecurityGroup>> {
        self.run(SVC, "DescribeSecurityGroups", |st| {
            let views: Vec<SecurityGroup> = st.sgs.values().map(State::sg_view).collect();
            select(views.iter(), q, group_not_found)
        })
        .await
    }

    async fn create_security_group(&self, req: &CreateSecurityGroup) -> Result<String> {
        self.run(SVC, "CreateSecurityGroup", |st| st.create_sg(req))
            .await
    }

    async fn delete_security_group(&self, id: &str) -> Result<()> {
        self.run(SVC, "DeleteSecurityGroup", |st| st.delete_sg(id))
            .await
    }

    async fn authorize_ingress(&self, group_id: &str, permissions: &[IpPermission]) -> Result<()> {
        self.run(SVC, "AuthorizeSecurityGroupIngress", |st| {
            st.authorize(group_id, permissions)
        })
        .await
    }

    async fn revoke_ingress(&self, group_id: &str, permissions: &[IpPermission]) -> Result<()> {
        self.run(SVC, "RevokeSecurityGroupIngress", |st| {
            st.revoke(group_id, permissions)
        })
        .await
    }

    async fn describe_instances(&self, q: &Ec2Query) -> Result<Vec<Instance>> {
        self.run(SVC, "DescribeInstances", |st| {
            select(st.instances.values(), q, |id| {
                not_found(
                    "InvalidInstanceID.NotFound",
                    format!("The instance ID '{id}' does not exist"),
                )
            })
        })
        .await
    }

    async fn describe_network_interfaces(&self, q: &Ec2Query) -> Result<Vec<NetworkInterface>> {
        self.run(SVC, "DescribeNetworkInterfaces", |st| {
            select(st.enis.values(), q, |id| {
                not_found(
                    "InvalidNetworkInterfaceID.NotFound",
                    format!("The networkInterface ID '{id}' does not exist"),
                )
            })
        })
        .await
    }

    async fn describe_route_tables(&self, q: &Ec2Query) -> Result<Vec<RouteTable>> {
        self.run(SVC, "DescribeRouteTables", |st| {
            select(st.route_tables.values(), q, |id| {
                not_found(
                    "InvalidRouteTableID.NotFound",
                    format!("The routeTable ID '{id}' does not exist"),
                )
            })
        })
        .await
    }

    async fn create_tags(&self, resource_ids: &[String], tags: &Tags) -> Result<()> {
        self.run(SVC, "CreateTags", |st| st.create_tags(resource_ids, tags))
            .await
    }

    async fn delete_tags(&self, resource_ids: &[String], keys: &[String]) -> Result<()> {
        self.run(SVC, "DeleteTags", |st| st.delete_tags(resource_ids, keys))
            .await
    }
}
