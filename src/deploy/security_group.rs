//! Security groups: the stack's managed (frontend) SG — found by stack tags among the VPC's
//! cluster-tagged groups of the shared inventory, created, its ingress permissions and tags
//! reconciled (and the inventory told how it left them) — the cluster's shared backend SG
//! (found or created once per `Deployer`, never deleted here), and bounded deletion that waits
//! out DependencyViolation.

use std::collections::BTreeSet;

use super::error::{Context, Error, Result};
use super::tags::{self, CLUSTER_TAG};
use super::Deployer;
use crate::aws::{self, AwsError, Ec2Query, SourceKind};
use crate::model::{self, StackKind};

/// One single-source permission: (protocol, from, to, source kind, source).
pub type PermKey = (String, Option<i32>, Option<i32>, SourceKind, String);

fn proto(p: &str) -> String {
    match p.to_ascii_lowercase().as_str() {
        "6" => "tcp".into(),
        "17" => "udp".into(),
        "1" => "icmp".into(),
        "58" => "icmpv6".into(),
        "all" => "-1".into(),
        other => other.into(),
    }
}

/// Ports as AWS keeps them: none on all-protocol (`-1`) rules.
fn ports(proto: &str, from: Option<i32>, to: Option<i32>) -> (Option<i32>, Option<i32>) {
    if proto == "-1" {
        (None, None)
    } else {
        (from, to)
    }
}

/// The model's permissions as single-source keys. The model's permission (one rule the stack
/// asks for) and AWS's (`aws::IpPermission`: sources of four kinds merged per protocol and
/// ports, with descriptions, also what TargetGroupBinding networking writes) are two concepts;
/// this is the one place the first becomes the second, and it takes the model's apart without
/// `..` so a field added there is a compile error here until it is sent.
pub fn desired_perms(perms: &[model::IpPermission]) -> BTreeSet<PermKey> {
    let mut out = BTreeSet::new();
    for p in perms {
        let model::IpPermission {
            ip_protocol,
            from_port,
            to_port,
            cidr_ipv4,
            cidr_ipv6,
            prefix_list_id,
        } = p;
        let pr = proto(ip_protocol);
        let (from, to) = ports(&pr, Some(*from_port), Some(*to_port));
        let sources = [
            (SourceKind::Ipv4Cidr, cidr_ipv4),
            (SourceKind::Ipv6Cidr, cidr_ipv6),
            (SourceKind::PrefixList, prefix_list_id),
        ];
        for (kind, src) in sources {
            if let Some(s) = src {
                out.insert((pr.clone(), from, to, kind, s.clone()));
            }
        }
    }
    out
}

/// Described permissions (AWS merges sources per protocol and ports) as single-source keys.
pub fn actual_perms(perms: &[aws::IpPermission]) -> BTreeSet<PermKey> {
    let mut out = BTreeSet::new();
    for p in perms {
        let pr = proto(&p.ip_protocol);
        let (from, to) = ports(&pr, p.from_port, p.to_port);
        for (kind, r) in p.sources() {
            out.insert((pr.clone(), from, to, kind, r.value.clone()));
        }
    }
    out
}

/// Keys back to request permissions, one per key.
pub fn to_permissions<'a>(keys: impl IntoIterator<Item = &'a PermKey>) -> Vec<aws::IpPermission> {
    keys.into_iter()
        .map(|(pr, from, to, kind, src)| {
            aws::IpPermission::single(pr, (*from, *to), *kind, aws::IpRange::new(src))
        })
        .collect()
}

/// (to authorize, to revoke).
pub fn perm_diff(
    desired: &BTreeSet<PermKey>,
    actual: &BTreeSet<PermKey>,
) -> (Vec<aws::IpPermission>, Vec<aws::IpPermission>) {
    (
        to_permissions(desired.difference(actual)),
        to_permissions(actual.difference(desired)),
    )
}

impl Deployer {
    /// The create request of a group in the cluster's VPC.
    fn sg_request(
        &self,
        name: &str,
        description: &str,
        tags: &aws::Tags,
    ) -> aws::CreateSecurityGroup {
        aws::CreateSecurityGroup {
            name: name.to_string(),
            description: description.to_string(),
            vpc_id: self.vpc_id.clone(),
            tags: tags.clone(),
        }
    }

    /// Security groups in the VPC tagged with this cluster (or legacy cluster key) and stack:
    /// from the inventory; under gate `EnableRGTAPI`, which has no inventory listed, with a
    /// DescribeSecurityGroups of the stack's own.
    pub(crate) async fn find_owned_sgs(
        &self,
        kind: StackKind,
        stack_id: &str,
    ) -> Result<Vec<aws::SecurityGroup>> {
        if self.tagging.is_none() {
            self.inventory.ensure(None).await?;
            return Ok(self.listed_sgs(kind, stack_id));
        }
        let q = Ec2Query::default()
            .filter("vpc-id", [self.vpc_id.as_str()])
            .filter(&format!("tag:{}", kind.stack_tag()), [stack_id]);
        let all = self
            .ec2
            .describe_security_groups(&q)
            .await
            .ctx(|| format!("find security groups of stack {stack_id}"))?;
        Ok(all
            .into_iter()
            .filter(|g| tags::is_owned(&g.tags, &self.cluster, kind, stack_id))
            .collect())
    }

    /// The stack's security groups as the inventory has them now (listed by the caller).
    pub(crate) fn listed_sgs(&self, kind: StackKind, stack_id: &str) -> Vec<aws::SecurityGroup> {
        self.inventory
            .sgs_where(|g| tags::is_owned(&g.tags, &self.cluster, kind, stack_id))
    }

    /// Creates or updates the managed SG; the matched group is removed from `existing`.
    pub(crate) async fn sync_managed_sg(
        &self,
        kind: StackKind,
        want: &model::SecurityGroup,
        existing: &mut Vec<aws::SecurityGroup>,
    ) -> Result<String> {
        let desired = desired_perms(&want.ingress);
        let found = existing
            .iter()
            .position(|g| tags::resource_id(&g.tags, kind) == Some(want.id.as_str()));
        let (mut group, actual) = match found {
            Some(i) => {
                let g = existing.remove(i);
                let actual = actual_perms(&g.ingress);
                (g, actual)
            }
            None => {
                let req = self.sg_request(&want.name, &want.description, &want.tags);
                let id = self
                    .ec2
                    .create_security_group(&req)
                    .await
                    .ctx(|| format!("create security group {}", want.name))?;
                let created = aws::SecurityGroup::created(id, &req);
                // In the inventory at once: a failure from here on never makes the next deploy
                // create it again.
                self.inventory.put_sg(created.clone());
                (created, BTreeSet::new())
            }
        };
        let id = group.id.clone();
        let (add, remove) = perm_diff(&desired, &actual);
        if !add.is_empty() {
            self.ec2
                .authorize_ingress(&id, &add)
                .await
                .ctx(|| format!("authorize ingress on {id}"))?;
        }
        if !remove.is_empty() {
            self.ec2
                .revoke_ingress(&id, &remove)
                .await
                .ctx(|| format!("revoke ingress on {id}"))?;
        }
        let changed = !add.is_empty() || !remove.is_empty();
        if changed {
            // Exactly the model's permissions now, as the inventory keeps them for the next
            // deploy (one source per permission, which compares equal).
            group.ingress = to_permissions(&desired);
            self.inventory.put_sg(group.clone());
        }
        let tags_now = self
            .reconcile_ec2_tags(&id, &want.tags, &group.tags)
            .await?;
        if tags_now != group.tags {
            group.tags = tags_now;
            self.inventory.put_sg(group);
        }
        Ok(id)
    }

    /// The auto-created backend SG of this cluster and VPC, found by its two tags.
    async fn find_backend_sg(&self) -> Result<Option<String>> {
        let q = Ec2Query::default()
            .filter("vpc-id", [self.vpc_id.as_str()])
            .filter(&format!("tag:{CLUSTER_TAG}"), [self.cluster.as_str()])
            .filter("tag:elbv2.k8s.aws/resource", ["backend-sg"]);
        let found = self
            .ec2
            .describe_security_groups(&q)
            .await
            .ctx(|| "find the backend security group".into())?;
        Ok(found.into_iter().next().map(|g| g.id))
    }

    /// The shared backend SG: the configured id, else found by its two tags, else created.
    /// Serialised per `Deployer` so concurrent stacks do not race to create it.
    pub(crate) async fn backend_sg(&self, want: &model::BackendSecurityGroup) -> Result<String> {
        if let Some(id) = &want.group_id {
            return Ok(id.clone());
        }
        let mut cached = self.backend_sg.lock().await;
        if let Some(id) = cached.as_ref() {
            return Ok(id.clone());
        }
        let id = match self.find_backend_sg().await? {
            Some(id) => id,
            None => {
                let req = self.sg_request(&want.name, &want.description, &want.tags);
                let id = self
                    .ec2
                    .create_security_group(&req)
                    .await
                    .ctx(|| format!("create backend security group {}", want.name))?;
                self.inventory
                    .put_sg(aws::SecurityGroup::created(id.clone(), &req));
                id
            }
        };
        *cached = Some(id.clone());
        Ok(id)
    }

    /// The shared backend SG as [`Self::backend_sg`] would give it, for a Gateway's dry-run
    /// plan; reads only: `None` while it does not exist yet (a dry run creates nothing).
    pub(crate) async fn planned_backend_sg(
        &self,
        want: &model::BackendSecurityGroup,
    ) -> Result<Option<String>> {
        if let Some(id) = &want.group_id {
            return Ok(Some(id.clone()));
        }
        if let Some(id) = self.backend_sg.lock().await.clone() {
            return Ok(Some(id));
        }
        self.find_backend_sg().await
    }

    /// Whether the remembered backend SG no longer is the one AWS has (deleted, or replaced);
    /// then it is forgotten so the next use finds or creates it again.
    pub(crate) async fn forget_stale_backend_sg(&self) -> bool {
        let mut cached = self.backend_sg.lock().await;
        let Some(id) = cached.clone() else {
            return false;
        };
        match self.find_backend_sg().await {
            Ok(found) if found.as_deref() == Some(id.as_str()) => false,
            Ok(_) => {
                *cached = None;
                true
            }
            Err(_) => false,
        }
    }

    /// Deletes the auto-created backend SG once the last Ingress group is gone, as upstream
    /// does, so a cluster that stops using ALBs leaks nothing. Kept while any load balancer in
    /// the VPC still lists it (Services of another controller, a group being created) or while
    /// node/pod rules still reference it past the delete timeout. Returns whether it was deleted.
    pub async fn release_backend_sg(&self) -> Result<bool> {
        let mut cached = self.backend_sg.lock().await;
        let Some(sg) = self.find_backend_sg().await? else {
            *cached = None;
            return Ok(false);
        };
        let lbs = self
            .elbv2
            .describe_load_balancers(&aws::LoadBalancerQuery::default())
            .await
            .ctx(|| "list load balancers".into())?;
        if lbs.iter().any(|lb| lb.security_groups.contains(&sg)) {
            return Ok(false);
        }
        // Forget it first: a deploy racing with this delete re-finds or re-creates it.
        *cached = None;
        drop(cached);
        self.delete_sg(&sg).await?;
        Ok(true)
    }

    /// Deletes a SG; gone counts as deleted; in-use is retried until the delete timeout.
    pub(crate) async fn delete_sg(&self, id: &str) -> Result<()> {
        let what = format!("security group {id}");
        self.delete_with_retry(&what, || self.ec2.delete_security_group(id))
            .await?;
        self.inventory.sg_gone(id);
        Ok(())
    }

    /// Runs a delete until it succeeds, the resource is gone, or it stays in use past the timeout.
    pub(crate) async fn delete_with_retry<F, Fut>(&self, what: &str, mut f: F) -> Result<()>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = std::result::Result<(), AwsError>>,
    {
        let start = tokio::time::Instant::now();
        loop {
            match f().await {
                Ok(()) => return Ok(()),
                Err(e) if e.is_not_found() => return Ok(()),
                Err(e @ AwsError::InUse { .. }) => {
                    if start.elapsed() >= self.delete_timeout {
                        return Err(Error::DeleteTimeout {
                            what: what.to_string(),
                            source: e,
                        });
                    }
                    tokio::time::sleep(self.delete_interval).await;
                }
                Err(source) => {
                    return Err(Error::Aws {
                        what: format!("delete {what}"),
                        source,
                    })
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(from: i32, v4: Option<&str>, v6: Option<&str>) -> model::IpPermission {
        model::IpPermission {
            ip_protocol: "tcp".into(),
            from_port: from,
            to_port: from,
            cidr_ipv4: v4.map(Into::into),
            cidr_ipv6: v6.map(Into::into),
            prefix_list_id: None,
        }
    }

    #[test]
    fn merged_aws_permissions_equal_model_permissions() {
        let want = desired_perms(&[
            m(80, Some("0.0.0.0/0"), None),
            m(443, Some("0.0.0.0/0"), None),
        ]);
        let described = vec![
            aws::IpPermission {
                ip_protocol: "TCP".into(),
                from_port: Some(443),
                to_port: Some(443),
                ipv4_ranges: vec![aws::IpRange {
                    value: "0.0.0.0/0".into(),
                    description: Some("x".into()),
                }],
                ..Default::default()
            },
            aws::IpPermission {
                ip_protocol: "6".into(),
                from_port: Some(80),
                to_port: Some(80),
                ipv4_ranges: vec![aws::IpRange::new("0.0.0.0/0")],
                ..Default::default()
            },
        ];
        let (add, remove) = perm_diff(&want, &actual_perms(&described));
        assert!(add.is_empty() && remove.is_empty(), "{add:?} {remove:?}");
    }

    /// Every field of the model's permission reaches AuthorizeSecurityGroupIngress: protocol,
    /// ports and each of the three sources (6 fields), one single-source permission each.
    #[test]
    fn every_permission_field_reaches_the_authorize_request() {
        let p = model::IpPermission {
            ip_protocol: "udp".into(),
            from_port: 1000,
            to_port: 2000,
            cidr_ipv4: Some("10.0.0.0/8".into()),
            cidr_ipv6: Some("2600::/64".into()),
            prefix_list_id: Some("pl-1".into()),
        };
        let (add, _) = perm_diff(&desired_perms(std::slice::from_ref(&p)), &BTreeSet::new());
        assert_eq!(add.len(), 3, "{add:?}");
        for a in &add {
            assert_eq!(a.ip_protocol, "udp");
            assert_eq!((a.from_port, a.to_port), (Some(1000), Some(2000)));
        }
        let sources: Vec<(SourceKind, &str)> = add
            .iter()
            .flat_map(|a| a.sources().map(|(k, r)| (k, r.value.as_str())))
            .collect();
        assert!(sources.contains(&(SourceKind::Ipv4Cidr, "10.0.0.0/8")));
        assert!(sources.contains(&(SourceKind::Ipv6Cidr, "2600::/64")));
        assert!(sources.contains(&(SourceKind::PrefixList, "pl-1")));
    }

    #[test]
    fn diff_adds_missing_and_revokes_extra() {
        let want = desired_perms(&[m(80, Some("10.0.0.0/8"), Some("::/0"))]);
        let have = desired_perms(&[m(80, Some("0.0.0.0/0"), None)]);
        let (add, remove) = perm_diff(&want, &have);
        assert_eq!(add.len(), 2);
        assert_eq!(remove.len(), 1);
        assert_eq!(remove[0].ipv4_ranges[0].value, "0.0.0.0/0");
        assert_eq!(remove[0].from_port, Some(80));
        assert!(add.iter().any(|p| p.ipv6_ranges.len() == 1));
    }
}
