//! Which ENI (and so which security groups) serves each target: a pod's branch ENI from its
//! `vpc.amazonaws.com/pod-eni` annotation, else the VPC ENI holding the pod IP; a node's
//! primary ENI. Answers are cached per pod (and IP) and per instance, so a reconcile does not
//! ask EC2 about pods it has seen before.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::aws::{Ec2, Ec2Query, NetworkInterface};

use super::networking::NetError;

/// How long an ENI answer is trusted (upstream's 10 minutes: ENIs of a live pod do not move).
pub const ENI_CACHE_TTL: Duration = Duration::from_secs(600);
/// IP values per DescribeNetworkInterfaces filter (AWS allows 200 values; one is the VPC).
const IPS_PER_CALL: usize = 199;

/// An ENI and its security groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EniInfo {
    pub id: String,
    pub security_groups: Vec<String>,
}

/// A pod target whose ENI is wanted.
#[derive(Debug, Clone)]
pub struct PodTarget {
    /// `ns/name`.
    pub key: String,
    pub uid: String,
    pub ip: String,
    /// Branch ENI from the pod-eni annotation (security groups for pods).
    pub branch_eni: Option<String>,
}

type Cached = (Instant, EniInfo);

/// ENI lookups with their caches.
pub struct EniResolver {
    ec2: Arc<dyn Ec2>,
    vpc_id: String,
    ttl: Duration,
    /// `(ns/name, uid, ip)` → ENI.
    pods: Mutex<HashMap<(String, String, String), Cached>>,
    /// Instance ID → primary ENI.
    nodes: Mutex<HashMap<String, Cached>>,
}

fn cached<K: std::hash::Hash + Eq>(
    map: &Mutex<HashMap<K, Cached>>,
    key: &K,
    ttl: Duration,
) -> Option<EniInfo> {
    let g = map.lock().unwrap_or_else(|p| p.into_inner());
    g.get(key)
        .filter(|(at, _)| at.elapsed() < ttl)
        .map(|(_, e)| e.clone())
}

/// Stores fresh answers and drops expired ones (pods that went away).
fn store<K: std::hash::Hash + Eq>(
    map: &Mutex<HashMap<K, Cached>>,
    items: Vec<(K, EniInfo)>,
    ttl: Duration,
) {
    let mut g = map.lock().unwrap_or_else(|p| p.into_inner());
    g.retain(|_, (at, _)| at.elapsed() < ttl);
    let now = Instant::now();
    for (k, e) in items {
        g.insert(k, (now, e));
    }
}

fn info(eni: &NetworkInterface) -> EniInfo {
    EniInfo {
        id: eni.id.clone(),
        security_groups: eni.security_groups.clone(),
    }
}

impl EniResolver {
    pub fn new(ec2: Arc<dyn Ec2>, vpc_id: String, ttl: Duration) -> Self {
        Self {
            ec2,
            vpc_id,
            ttl,
            pods: Mutex::new(HashMap::new()),
            nodes: Mutex::new(HashMap::new()),
        }
    }

    /// The ENI of every pod, by `ns/name`; an error names the pods no ENI was found for.
    pub async fn resolve_pods(
        &self,
        pods: &[PodTarget],
    ) -> Result<BTreeMap<String, EniInfo>, NetError> {
        let ckey = |p: &PodTarget| (p.key.clone(), p.uid.clone(), p.ip.clone());
        let mut out = BTreeMap::new();
        let mut missing = Vec::new();
        for p in pods {
            match cached(&self.pods, &ckey(p), self.ttl) {
                Some(e) => {
                    out.insert(p.key.clone(), e);
                }
                None => missing.push(p),
            }
        }
        if missing.is_empty() {
            return Ok(out);
        }
        let mut found: BTreeMap<String, EniInfo> = BTreeMap::new();
        // Branch ENIs by ID.
        let branch: BTreeSet<&str> = missing
            .iter()
            .filter_map(|p| p.branch_eni.as_deref())
            .collect();
        if !branch.is_empty() {
            let enis = self
                .ec2
                .describe_network_interfaces(&Ec2Query::ids(branch.iter().copied()))
                .await?;
            let by_id: HashMap<&str, &NetworkInterface> =
                enis.iter().map(|e| (e.id.as_str(), e)).collect();
            for p in &missing {
                if let Some(e) = p.branch_eni.as_deref().and_then(|b| by_id.get(b)) {
                    found.insert(p.key.clone(), info(e));
                }
            }
        }
        // The rest by address, VPC-wide.
        let rest: Vec<&&PodTarget> = missing
            .iter()
            .filter(|p| !found.contains_key(&p.key))
            .collect();
        let (v6, v4): (Vec<&str>, Vec<&str>) = rest
            .iter()
            .map(|p| p.ip.as_str())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .partition(|ip| ip.contains(':'));
        let mut by_ip: HashMap<String, EniInfo> = HashMap::new();
        for (ips, filter, v6) in [
            (v4, "addresses.private-ip-address", false),
            (v6, "ipv6-addresses.ipv6-address", true),
        ] {
            for chunk in ips.chunks(IPS_PER_CALL) {
                let mut q = Ec2Query::default();
                if !self.vpc_id.is_empty() {
                    q = q.filter("vpc-id", [self.vpc_id.as_str()]);
                }
                let enis = self
                    .ec2
                    .describe_network_interfaces(&q.filter(filter, chunk.iter().copied()))
                    .await?;
                for e in &enis {
                    let addrs = if v6 {
                        &e.ipv6_addresses
                    } else {
                        &e.private_ip_addresses
                    };
                    for a in addrs {
                        by_ip.insert(a.clone(), info(e));
                    }
                }
            }
        }
        for p in rest {
            if let Some(e) = by_ip.get(&p.ip) {
                found.insert(p.key.clone(), e.clone());
            }
        }
        let unresolved: Vec<&str> = missing
            .iter()
            .filter(|p| !found.contains_key(&p.key))
            .map(|p| p.key.as_str())
            .collect();
        let fresh = missing
            .iter()
            .filter_map(|p| found.get(&p.key).map(|e| (ckey(p), e.clone())))
            .collect();
        store(&self.pods, fresh, self.ttl);
        if !unresolved.is_empty() {
            return Err(NetError::Rule(format!(
                "cannot resolve pod ENI for pods: [{}]",
                unresolved.join(" ")
            )));
        }
        out.extend(found);
        Ok(out)
    }

    /// The primary ENI of every node, by node name; `nodes` are `(node, instance ID)`.
    pub async fn resolve_nodes(
        &self,
        nodes: &[(String, String)],
    ) -> Result<BTreeMap<String, EniInfo>, NetError> {
        let mut out = BTreeMap::new();
        let mut missing: Vec<&(String, String)> = Vec::new();
        for n in nodes {
            match cached(&self.nodes, &n.1, self.ttl) {
                Some(e) => {
                    out.insert(n.0.clone(), e);
                }
                None => missing.push(n),
            }
        }
        if missing.is_empty() {
            return Ok(out);
        }
        let ids: BTreeSet<&str> = missing.iter().map(|n| n.1.as_str()).collect();
        let instances = self
            .ec2
            .describe_instances(&Ec2Query::ids(ids.iter().copied()))
            .await?;
        let mut fresh = Vec::new();
        for i in &instances {
            let primary = i
                .network_interfaces
                .iter()
                .find(|n| n.device_index == 0)
                .ok_or_else(|| {
                    NetError::Rule("[this should never happen] no primary ENI found".into())
                })?;
            let e = EniInfo {
                id: primary.id.clone(),
                security_groups: primary.security_groups.clone(),
            };
            fresh.push((i.id.clone(), e));
        }
        let by_instance: HashMap<&str, &EniInfo> =
            fresh.iter().map(|(i, e)| (i.as_str(), e)).collect();
        let mut unresolved = Vec::new();
        for (node, instance) in missing {
            match by_instance.get(instance.as_str()) {
                Some(e) => {
                    out.insert(node.clone(), (*e).clone());
                }
                None => unresolved.push(format!("/{node}")),
            }
        }
        store(&self.nodes, fresh, self.ttl);
        if !unresolved.is_empty() {
            return Err(NetError::Rule(format!(
                "cannot resolve node ENI for nodes: [{}]",
                unresolved.join(" ")
            )));
        }
        Ok(out)
    }
}
