//! EC2 through the recorder: describes forwarded (placeholder security groups answered locally),
//! security-group and tag writes recorded.

use async_trait::async_trait;

use super::*;

#[async_trait]
impl Ec2 for Recorder {
    async fn describe_vpcs(&self, q: &Ec2Query) -> Result<Vec<Vpc>> {
        self.ec2.describe_vpcs(q).await
    }
    async fn describe_subnets(&self, q: &Ec2Query) -> Result<Vec<Subnet>> {
        self.ec2.describe_subnets(q).await
    }
    async fn describe_availability_zones(&self, q: &Ec2Query) -> Result<Vec<AvailabilityZone>> {
        self.ec2.describe_availability_zones(q).await
    }
    async fn describe_security_groups(&self, q: &Ec2Query) -> Result<Vec<SecurityGroup>> {
        let (real, fake) = split(&q.ids);
        let mut out = if q.ids.is_empty() || !real.is_empty() {
            let q = Ec2Query {
                ids: real,
                filters: q.filters.clone(),
            };
            self.ec2.describe_security_groups(&q).await?
        } else {
            vec![]
        };
        let mut s = self.seen();
        for g in &out {
            s.sgs.insert(g.id.clone(), g.clone());
        }
        out.extend(fake.iter().filter_map(|id| s.sgs.get(id).cloned()));
        Ok(out)
    }
    async fn create_security_group(&self, req: &CreateSecurityGroup) -> Result<String> {
        let id = self.placeholder("sg-");
        let changes = created(&[
            ("groupName", &req.name),
            ("description", &req.description),
            ("vpcId", &req.vpc_id),
        ]);
        self.record("ec2", "CreateSecurityGroup", &id, changes);
        self.seen()
            .sgs
            .insert(id.clone(), SecurityGroup::created(id.clone(), req));
        Ok(id)
    }
    async fn delete_security_group(&self, id: &str) -> Result<()> {
        self.record("ec2", "DeleteSecurityGroup", id, vec![]);
        Ok(())
    }
    async fn authorize_ingress(&self, group_id: &str, permissions: &[IpPermission]) -> Result<()> {
        let c = permissions
            .iter()
            .map(|p| Change {
                field: "ingress".into(),
                before: None,
                after: Some(show(p)),
            })
            .collect();
        self.record("ec2", "AuthorizeSecurityGroupIngress", group_id, c);
        Ok(())
    }
    async fn revoke_ingress(&self, group_id: &str, permissions: &[IpPermission]) -> Result<()> {
        let c = permissions
            .iter()
            .map(|p| Change {
                field: "ingress".into(),
                before: Some(show(p)),
                after: None,
            })
            .collect();
        self.record("ec2", "RevokeSecurityGroupIngress", group_id, c);
        Ok(())
    }
    async fn describe_instances(&self, q: &Ec2Query) -> Result<Vec<Instance>> {
        self.ec2.describe_instances(q).await
    }
    async fn describe_network_interfaces(&self, q: &Ec2Query) -> Result<Vec<NetworkInterface>> {
        self.ec2.describe_network_interfaces(q).await
    }
    async fn describe_route_tables(&self, q: &Ec2Query) -> Result<Vec<RouteTable>> {
        self.ec2.describe_route_tables(q).await
    }
    async fn create_tags(&self, resource_ids: &[String], tags: &Tags) -> Result<()> {
        for id in resource_ids {
            let have = self.seen().sgs.get(id).map(|g| g.tags.clone());
            let c = tags
                .iter()
                .filter_map(|(k, v)| {
                    change(
                        &format!("tag {k}"),
                        have.as_ref().and_then(|t| t.get(k).cloned()),
                        Some(v.clone()),
                    )
                })
                .collect();
            self.record("ec2", "CreateTags", id, c);
        }
        Ok(())
    }
    async fn delete_tags(&self, resource_ids: &[String], keys: &[String]) -> Result<()> {
        for id in resource_ids {
            let have = self.seen().sgs.get(id).map(|g| g.tags.clone());
            let c = keys
                .iter()
                .map(|k| Change {
                    field: format!("tag {k}"),
                    before: have.as_ref().and_then(|t| t.get(k).cloned()),
                    after: None,
                })
                .collect();
            self.record("ec2", "DeleteTags", id, c);
        }
        Ok(())
    }
}
