//! Security-group rules from `spec.networking`, the stateful part: each binding's contribution
//! (rules per endpoint security group) in one registry shared by all bindings, and the passes
//! that bring the groups to the aggregate.
//!
//! Until every binding with networking has contributed once since start, rules are only
//! authorized, never revoked: a restart must not take away rules of bindings it has not
//! looked at yet. After that, our stale rules (told apart by their label) are revoked, also on
//! cluster-tagged groups no binding uses any more.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::aws::{AwsError, Ec2, Ec2Query, SecurityGroup};
use crate::crd::target_group_binding::TargetGroupBindingNetworking;

use super::eni::{EniInfo, EniResolver, PodTarget, ENI_CACHE_TTL};
use super::networking::{
    aggregate, covered, diff, explode, permissions, rule_description, select_endpoint_sg, NetError,
    Perm, PodPorts, CLUSTER_TAG_PREFIX,
};

/// How long a described security group (rules and tags) is trusted; our own writes drop it.
pub const SG_CACHE_TTL: Duration = Duration::from_secs(600);

/// Settings of the networking part.
#[derive(Debug, Clone, Default)]
pub struct NetConfig {
    pub cluster_name: String,
    /// Scope of pod-IP ENI lookups and of the cluster-tagged group discovery; empty: no scope.
    pub vpc_id: String,
    /// `--service-target-eni-security-group-tags`: extra tags the endpoint group must carry.
    pub required_tags: BTreeMap<String, String>,
    /// Upstream's default: one port range per source group and protocol.
    pub restricted: bool,
}

/// Each binding's rules per endpoint security group, and the groups we have put rules on.
#[derive(Debug, Default)]
struct Registry {
    by_binding: HashMap<String, BTreeMap<String, Vec<Perm>>>,
    tracked: BTreeSet<String>,
    /// The cluster-tagged groups of the VPC were added to `tracked` (once).
    discovered: bool,
}

/// The networking manager shared by all reconciles.
pub struct Networking {
    ec2: Arc<dyn Ec2>,
    cfg: NetConfig,
    enis: EniResolver,
    sgs: Mutex<HashMap<String, (Instant, SecurityGroup)>>,
    /// Serialises the passes, as one pass reads and writes every group in the aggregate.
    reg: tokio::sync::Mutex<Registry>,
}

fn retriable(e: &AwsError) -> bool {
    matches!(
        e.code(),
        "InvalidPermission.Duplicate"
            | "InvalidPermission.NotFound"
            | "RulesPerSecurityGroupLimitExceeded"
    )
}

impl Networking {
    pub fn new(ec2: Arc<dyn Ec2>, cfg: NetConfig) -> Self {
        Self {
            enis: EniResolver::new(ec2.clone(), cfg.vpc_id.clone(), ENI_CACHE_TTL),
            ec2,
            cfg,
            sgs: Mutex::new(HashMap::new()),
            reg: tokio::sync::Mutex::new(Registry::default()),
        }
    }

    /// The groups, from the cache unless `fresh`; describes only what is missing.
    async fn groups(
        &self,
        ids: &[String],
        fresh: bool,
    ) -> Result<HashMap<String, SecurityGroup>, AwsError> {
        let mut out = HashMap::new();
        let mut missing = Vec::new();
        {
            let g = self.sgs.lock().unwrap_or_else(|p| p.into_inner());
            for id in ids {
                match g
                    .get(id)
                    .filter(|(at, _)| !fresh && at.elapsed() < SG_CACHE_TTL)
                {
                    Some((_, sg)) => {
                        out.insert(id.clone(), sg.clone());
                    }
                    None => missing.push(id.clone()),
                }
            }
        }
        if !missing.is_empty() {
            let got = self
                .ec2
                .describe_security_groups(&Ec2Query::ids(missing))
                .await?;
            self.remember(&got);
            out.extend(got.into_iter().map(|sg| (sg.id.clone(), sg)));
        }
        Ok(out)
    }

    fn remember(&self, sgs: &[SecurityGroup]) {
        let mut g = self.sgs.lock().unwrap_or_else(|p| p.into_inner());
        g.retain(|_, (at, _)| at.elapsed() < SG_CACHE_TTL);
        let now = Instant::now();
        for sg in sgs {
            g.insert(sg.id.clone(), (now, sg.clone()));
        }
    }

    fn forget(&self, id: &str) {
        self.sgs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }

    /// The endpoint group of each ENI (tags are read only for ENIs with several groups).
    async fn endpoint_groups(
        &self,
        enis: impl Iterator<Item = &EniInfo>,
    ) -> Result<HashMap<String, String>, NetError> {
        let enis: BTreeMap<&str, &EniInfo> = enis.map(|e| (e.id.as_str(), e)).collect();
        let need: BTreeSet<String> = enis
            .values()
            .filter(|e| e.security_groups.len() > 1)
            .flat_map(|e| e.security_groups.iter().cloned())
            .collect();
        let tags = if need.is_empty() {
            HashMap::new()
        } else {
            self.groups(&need.into_iter().collect::<Vec<_>>(), false)
                .await?
        };
        let mut out = HashMap::new();
        for (id, e) in enis {
            let sg = select_endpoint_sg(
                id,
                &e.security_groups,
                |g| tags.get(g).map(|s| s.tags.clone()),
                &self.cfg.cluster_name,
                &self.cfg.required_tags,
            )?;
            out.insert(id.to_string(), sg);
        }
        Ok(out)
    }

    /// Rules per endpoint group for pod targets: `(pod, named container ports)`.
    pub async fn for_pods(
        &self,
        networking: &TargetGroupBindingNetworking,
        pods: &[(PodTarget, Vec<(String, i32)>)],
    ) -> Result<BTreeMap<String, Vec<Perm>>, NetError> {
        let targets: Vec<PodTarget> = pods.iter().map(|(t, _)| t.clone()).collect();
        let enis = self.enis.resolve_pods(&targets).await?;
        let sg_of_eni = self.endpoint_groups(enis.values()).await?;
        let mut by_sg: BTreeMap<&str, Vec<PodPorts<'_>>> = BTreeMap::new();
        for (t, ports) in pods {
            if let Some(sg) = enis.get(&t.key).and_then(|e| sg_of_eni.get(&e.id)) {
                by_sg.entry(sg).or_default().push(PodPorts {
                    key: &t.key,
                    container_ports: ports,
                });
            }
        }
        let mut out = BTreeMap::new();
        for (sg, pods) in by_sg {
            out.insert(sg.to_string(), permissions(networking, Some(&pods))?);
        }
        Ok(out)
    }

    /// Rules per endpoint group for node targets: `(node, instance ID)`.
    pub async fn for_nodes(
        &self,
        networking: &TargetGroupBindingNetworking,
        nodes: &[(String, String)],
    ) -> Result<BTreeMap<String, Vec<Perm>>, NetError> {
        let enis = self.enis.resolve_nodes(nodes).await?;
        let sgs: BTreeSet<String> = self
            .endpoint_groups(enis.values())
            .await?
            .into_values()
            .collect();
        let perms = permissions(networking, None)?;
        Ok(sgs.into_iter().map(|sg| (sg, perms.clone())).collect())
    }

    /// Records `binding`'s rules (empty: it wants none, e.g. being deleted) and brings every
    /// group to the aggregate. `with_networking` are all bindings that have `spec.networking`.
    pub async fn reconcile(
        &self,
        binding: &str,
        wanted: BTreeMap<String, Vec<Perm>>,
        with_networking: &BTreeSet<String>,
    ) -> Result<(), NetError> {
        let mut reg = self.reg.lock().await;
        reg.tracked.extend(wanted.keys().cloned());
        reg.by_binding.insert(binding.to_string(), wanted);
        reg.by_binding.retain(|k, _| with_networking.contains(k));
        let all_computed = reg.by_binding.len() == with_networking.len();
        let desired = aggregate(reg.by_binding.values(), self.cfg.restricted);
        let mut errors = Vec::new();
        for (sg, perms) in &desired {
            if let Err(e) = self.reconcile_group(sg, perms, !all_computed).await {
                errors.push(e);
            }
        }
        if all_computed {
            self.collect_unused(&mut reg, &desired).await?;
        }
        match errors.len() {
            0 => Ok(()),
            1 => Err(errors.remove(0).into()),
            _ => {
                let msgs: Vec<String> = errors.iter().map(ToString::to_string).collect();
                Err(NetError::Rule(msgs.join("\n")))
            }
        }
    }

    /// Revokes our rules from tracked groups no binding wants rules on.
    async fn collect_unused(
        &self,
        reg: &mut Registry,
        desired: &BTreeMap<String, BTreeSet<Perm>>,
    ) -> Result<(), NetError> {
        if !reg.discovered {
            let tag = format!("{CLUSTER_TAG_PREFIX}{}", self.cfg.cluster_name);
            let mut q = Ec2Query::default().filter(&format!("tag:{tag}"), ["owned", "shared"]);
            if !self.cfg.vpc_id.is_empty() {
                q = q.filter("vpc-id", [self.cfg.vpc_id.as_str()]);
            }
            let found = self.ec2.describe_security_groups(&q).await?;
            self.remember(&found);
            reg.tracked.extend(found.into_iter().map(|sg| sg.id));
            reg.discovered = true;
        }
        let unused: Vec<String> = reg
            .tracked
            .iter()
            .filter(|sg| !desired.contains_key(*sg))
            .cloned()
            .collect();
        let none = BTreeSet::new();
        for sg in unused {
            match self.reconcile_group(&sg, &none, false).await {
                Err(e) if e.code() == "InvalidGroup.NotFound" => {
                    reg.tracked.remove(&sg);
                }
                other => other?,
            }
        }
        Ok(())
    }

    /// Brings one group to `desired` (our rules only); retried once on a fresh description
    /// when AWS says the cached one was stale.
    async fn reconcile_group(
        &self,
        sg: &str,
        desired: &BTreeSet<Perm>,
        authorize_only: bool,
    ) -> Result<(), AwsError> {
        let ids = [sg.to_string()];
        let cur = self.groups(&ids, false).await?;
        let rules = cur.get(sg).map(|g| g.ingress.clone()).unwrap_or_default();
        match self.apply(sg, &rules, desired, authorize_only, false).await {
            Err(e) if retriable(&e) => {
                let revoke_first = e.code() == "RulesPerSecurityGroupLimitExceeded";
                tracing::info!(sg, error = %e, "retrying security group rules without cache");
                let cur = self.groups(&ids, true).await?;
                let rules = cur.get(sg).map(|g| g.ingress.clone()).unwrap_or_default();
                self.apply(sg, &rules, desired, authorize_only, revoke_first)
                    .await
            }
            other => other,
        }
    }

    async fn apply(
        &self,
        sg: &str,
        current: &[crate::aws::IpPermission],
        desired: &BTreeSet<Perm>,
        authorize_only: bool,
        revoke_first: bool,
    ) -> Result<(), AwsError> {
        let (grant, revoke) = diff(current, desired);
        let revoke: Vec<_> = if authorize_only {
            Vec::new()
        } else {
            revoke
                .into_iter()
                .map(|(p, d)| p.to_ip_permission(d))
                .collect()
        };
        let held = if authorize_only {
            explode(current)
        } else {
            Vec::new()
        };
        let grant: Vec<_> = grant
            .iter()
            .filter(|p| !authorize_only || !covered(p, &held))
            .map(|p| p.to_ip_permission(Some(rule_description())))
            .collect();
        if revoke_first && !revoke.is_empty() {
            self.forget(sg);
            self.ec2.revoke_ingress(sg, &revoke).await?;
        }
        if !grant.is_empty() {
            self.forget(sg);
            tracing::info!(
                sg,
                rules = grant.len(),
                "authorizing security group ingress"
            );
            self.ec2.authorize_ingress(sg, &grant).await?;
        }
        if !revoke_first && !revoke.is_empty() {
            self.forget(sg);
            tracing::info!(sg, rules = revoke.len(), "revoking security group ingress");
            self.ec2.revoke_ingress(sg, &revoke).await?;
        }
        Ok(())
    }
}
