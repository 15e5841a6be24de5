//! The fake's EC2: filtered describes, security groups with ingress rules (merged per protocol
//! and ports as AWS shows them), DependencyViolation on groups in use, and EC2 tags (≤ 50).

use async_trait::async_trait;

use super::filter::select;
use super::state::{hex, not_found, SgRec, SgRule, State};
use super::FakeAws;
use crate::aws::error::{AwsError, Result};
use crate::aws::types::*;
use crate::aws::Ec2;

const SVC: Service = Service::Ec2;
const MAX_TAGS: usize = 50;
const MAX_RULES: usize = 60;

fn group_not_found(id: &str) -> AwsError {
    not_found(
        "InvalidGroup.NotFound",
        format!("The security group '{id}' does not exist"),
    )
}

/// Splits permissions into single-source rules (protocol lower-cased, ports dropped for `-1`).
fn explode(perms: &[IpPermission]) -> Vec<SgRule> {
    let mut out = Vec::new();
    for p in perms {
        let proto = p.ip_protocol.to_ascii_lowercase();
        let proto = match proto.as_str() {
            "all" => "-1".to_string(),
            "6" => "tcp".into(),
            "17" => "udp".into(),
            _ => proto,
        };
        let (from, to) = if proto == "-1" {
            (None, None)
        } else {
            (p.from_port, p.to_port)
        };
        for (kind, r) in p.sources() {
            out.push(SgRule {
                proto: proto.clone(),
                from,
                to,
                kind,
                source: r.value.clone(),
                description: r.description.clone(),
            });
        }
    }
    out
}

/// Groups single-source rules back into permissions, one per protocol and port range.
fn aggregate(rules: &[SgRule]) -> Vec<IpPermission> {
    let mut sorted = rules.to_vec();
    sorted.sort();
    let mut out: Vec<IpPermission> = Vec::new();
    for r in sorted {
        let range = IpRange {
            value: r.source.clone(),
            description: r.description.clone(),
        };
        let idx = out
            .iter()
            .position(|p| p.ip_protocol == r.proto && p.from_port == r.from && p.to_port == r.to);
        let p = match idx {
            Some(i) => &mut out[i],
            None => {
                out.push(IpPermission {
                    ip_protocol: r.proto.clone(),
                    from_port: r.from,
                    to_port: r.to,
                    ..Default::default()
                });
                let last = out.len() - 1;
                &mut out[last]
            }
        };
        p.sources_mut(r.kind).push(range);
    }
    out
}

fn same_rule(a: &SgRule, b: &SgRule) -> bool {
    a.proto == b.proto
        && a.from == b.from
        && a.to == b.to
        && a.kind == b.kind
        && a.source == b.source
}

impl State {
    fn sg_view(rec: &SgRec) -> SecurityGroup {
        SecurityGroup {
            ingress: aggregate(&rec.rules),
            ..rec.sg.clone()
        }
    }

    fn create_sg(&mut self, req: &CreateSecurityGroup) -> Result<String> {
        if req.name.is_empty() || req.name.len() > 255 || req.name.starts_with("sg-") {
            return Err(AwsError::from_code(
                "InvalidParameterValue",
                format!("Invalid security group name '{}'", req.name),
                Some(400),
            ));
        }
        if !self.vpcs.contains_key(&req.vpc_id) {
            return Err(not_found(
                "InvalidVpcID.NotFound",
                format!("The vpc ID '{}' does not exist", req.vpc_id),
            ));
        }
        if self
            .sgs
            .values()
            .any(|g| g.sg.vpc_id == req.vpc_id && g.sg.name == req.name)
        {
            return Err(AwsError::from_code(
                "InvalidGroup.Duplicate",
                format!(
                    "The security group '{}' already exists for VPC '{}'",
                    req.name, req.vpc_id
                ),
                Some(400),
            ));
        }
        if req.tags.len() > MAX_TAGS {
            return Err(AwsError::from_code(
                "TagLimitExceeded",
                "The maximum number of tags for a resource has been reached",
                Some(400),
            ));
        }
        let id = format!("sg-{}", hex(17));
        let sg = SecurityGroup {
            id: id.clone(),
            name: req.name.clone(),
            description: req.description.clone(),
            vpc_id: req.vpc_id.clone(),
            ingress: vec![],
            tags: req.tags.clone(),
        };
        self.sgs.insert(id.clone(), SgRec { sg, rules: vec![] });
        Ok(id)
    }

    fn delete_sg(&mut self, id: &str) -> Result<()> {
        if !self.sgs.contains_key(id) {
            return Err(group_not_found(id));
        }
        let used = self
            .lbs
            .values()
            .any(|l| l.lb.security_groups.iter().any(|g| g == id))
            || self
                .enis
                .values()
                .any(|e| e.security_groups.iter().any(|g| g == id))
            || self.sgs.values().any(|g| {
                g.sg.id != id
                    && g.rules
                        .iter()
                        .any(|r| r.kind == SourceKind::Group && r.source == id)
            });
        if used {
            return Err(AwsError::from_code(
                "DependencyViolation",
                format!("resource {id} has a dependent object"),
                Some(400),
            ));
        }
        self.sgs.remove(id);
        Ok(())
    }

    fn authorize(&mut self, id: &str, perms: &[IpPermission]) -> Result<()> {
        let new = explode(perms);
        if let Some(r) = new
            .iter()
            .find(|r| r.kind == SourceKind::Group && !self.sgs.contains_key(&r.source))
        {
            return Err(group_not_found(&r.source));
        }
        let rec = self.sgs.get_mut(id).ok_or_else(|| group_not_found(id))?;
        for (i, r) in new.iter().enumerate() {
            if rec
                .rules
                .iter()
                .chain(new[..i].iter())
                .any(|x| same_rule(x, r))
            {
                return Err(AwsError::from_code(
                    "InvalidPermission.Duplicate",
                    format!("the specified rule \"peer: {}, {}, from port: {:?}, to port: {:?}, ALLOW\" already exists", r.source, r.proto, r.from, r.to),
                    Some(400),
                ));
            }
        }
        if rec.rules.len() + new.len() > MAX_RULES {
            return Err(AwsError::from_code(
                "RulesPerSecurityGroupLimitExceeded",
                "The maximum number of rules per security group has been reached.",
                Some(400),
            ));
        }
        rec.rules.extend(new);
        Ok(())
    }

    fn revoke(&mut self, id: &str, perms: &[IpPermission]) -> Result<()> {
        let gone = explode(perms);
        let rec = self.sgs.get_mut(id).ok_or_else(|| group_not_found(id))?;
        if gone
            .iter()
            .any(|r| !rec.rules.iter().any(|x| same_rule(x, r)))
        {
            return Err(AwsError::from_code(
                "InvalidPermission.NotFound",
                "The specified rule does not exist in this security group.",
                Some(400),
            ));
        }
        rec.rules.retain(|x| !gone.iter().any(|r| same_rule(x, r)));
        Ok(())
    }

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
