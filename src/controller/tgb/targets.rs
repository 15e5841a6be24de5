//! Target diffing: what to deregister and register, given what the target group holds.
//! Pure; the multi-cluster filter and the "outside the VPC" zone are decided here too.

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;

use ipnet::IpNet;

use crate::aws::{TargetDescription, TargetHealthDescription, TargetHealthState};

/// Identifier of a target as upstream writes it in the multi-cluster ConfigMap: `id:port`.
pub fn target_key(id: &str, port: Option<u16>) -> String {
    match port {
        Some(p) => format!("{id}:{p}"),
        None => id.to_string(),
    }
}

/// Draining targets are on their way out; they never count as registered.
pub fn is_draining(state: TargetHealthState) -> bool {
    matches!(
        state,
        TargetHealthState::Draining | TargetHealthState::UnhealthyDraining
    )
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetDiff {
    pub register: Vec<TargetDescription>,
    pub deregister: Vec<TargetDescription>,
}

impl TargetDiff {
    pub fn is_empty(&self) -> bool {
        self.register.is_empty() && self.deregister.is_empty()
    }
}

/// Compares wanted targets with the target group's.
///
/// `tracked` is the multi-cluster filter: `None` for a plain binding (every unwanted target
/// is deregistered); `Some(None)` for a multi-cluster binding without a record yet (nothing is
/// deregistered: we cannot know which targets are ours); `Some(Some(set))` deregisters only
/// targets in the set.
pub fn diff_targets(
    wanted: &[TargetDescription],
    current: &[TargetHealthDescription],
    tracked: Option<Option<&BTreeSet<String>>>,
) -> TargetDiff {
    let live: HashMap<String, &TargetDescription> = current
        .iter()
        .filter(|t| !is_draining(t.health.state))
        .map(|t| (target_key(&t.target.id, t.target.port), &t.target))
        .collect();
    let wanted_keys: BTreeSet<String> = wanted.iter().map(|t| target_key(&t.id, t.port)).collect();
    let mut deregister: Vec<TargetDescription> = live
        .iter()
        .filter(|(k, _)| !wanted_keys.contains(*k))
        .filter(|(k, _)| match tracked {
            None => true,
            Some(None) => false,
            Some(Some(set)) => set.contains(*k),
        })
        .map(|(_, t)| TargetDescription {
            id: t.id.clone(),
            port: t.port,
            availability_zone: None,
        })
        .collect();
    deregister.sort();
    let mut register: Vec<TargetDescription> = wanted
        .iter()
        .filter(|t| !live.contains_key(&target_key(&t.id, t.port)))
        .cloned()
        .collect();
    register.sort();
    register.dedup();
    TargetDiff {
        register,
        deregister,
    }
}

/// `all` for an IP outside every VPC CIDR (peered or on-premises targets need it); `None`
/// when inside, when the CIDRs are unknown, or for a non-IP id.
pub fn availability_zone_for(ip: &str, vpc_cidrs: &[IpNet]) -> Option<String> {
    let addr: IpAddr = ip.parse().ok()?;
    if vpc_cidrs.is_empty() || vpc_cidrs.iter().any(|c| c.contains(&addr)) {
        return None;
    }
    Some("all".into())
}

/// The ConfigMap `targets` value: sorted identifiers joined by commas.
pub fn tracked_to_csv(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join(",")
}

pub fn tracked_from_csv(csv: &str) -> BTreeSet<String> {
    csv.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}
