//! The fake's security groups: ingress rules kept single-source and shown merged per protocol
//! and ports as AWS shows them, the rule limit, and DependencyViolation on groups in use.

use super::ec2::MAX_TAGS;
use super::state::{group_not_found, hex, not_found, SgRec, SgRule, State};
use crate::aws::error::{AwsError, Result};
use crate::aws::types::*;

const MAX_RULES: usize = 60;

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
    pub(super) fn sg_view(rec: &SgRec) -> SecurityGroup {
        SecurityGroup {
            ingress: aggregate(&rec.rules),
            ..rec.sg.clone()
        }
    }

    pub(super) fn create_sg(&mut self, req: &CreateSecurityGroup) -> Result<String> {
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
        let sg = SecurityGroup::created(id.clone(), req);
        self.sgs.insert(id.clone(), SgRec { sg, rules: vec![] });
        Ok(id)
    }

    pub(super) fn delete_sg(&mut self, id: &str) -> Result<()> {
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

    pub(super) fn authorize(&mut self, id: &str, perms: &[IpPermission]) -> Result<()> {
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

    pub(super) fn revoke(&mut self, id: &str, perms: &[IpPermission]) -> Result<()> {
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
}
