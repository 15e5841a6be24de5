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

/// Applies `--max-targets-per-target-group` (0 = unlimited): registrations beyond what keeps
/// the group at `max` targets (counting the `live` ones left after deregistration) are dropped
/// for this round, in the diff's sorted order so the choice is stable. Returns how many.
pub fn cap_registrations(diff: &mut TargetDiff, live: usize, max: usize) -> usize {
    if max == 0 {
        return 0;
    }
    let remaining = live.saturating_sub(diff.deregister.len());
    let room = max.saturating_sub(remaining);
    let dropped = diff.register.len().saturating_sub(room);
    diff.register.truncate(room.min(diff.register.len()));
    dropped
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

#[cfg(test)]
mod cap_tests {
    use super::*;

    fn diff(register: usize, deregister: usize) -> TargetDiff {
        let t = |i: usize| TargetDescription::new(format!("10.0.0.{i}"), 80);
        TargetDiff {
            register: (0..register).map(t).collect(),
            deregister: (100..100 + deregister).map(t).collect(),
        }
    }

    #[test]
    fn zero_means_unlimited() {
        let mut d = diff(5, 0);
        assert_eq!(cap_registrations(&mut d, 10, 0), 0);
        assert_eq!(d.register.len(), 5);
    }

    #[test]
    fn additions_stop_at_the_cap_counting_what_stays_registered() {
        // 8 live, 2 leaving: room for 4 of 5 under a cap of 10.
        let mut d = diff(5, 2);
        assert_eq!(cap_registrations(&mut d, 8, 10), 1);
        assert_eq!(d.register.len(), 4);
        assert_eq!(d.register[0].id, "10.0.0.0", "the sorted prefix is kept");
        assert_eq!(d.deregister.len(), 2, "deregistrations are never capped");
        // Already over the cap: nothing is added.
        let mut d = diff(3, 0);
        assert_eq!(cap_registrations(&mut d, 12, 10), 3);
        assert!(d.register.is_empty());
    }
}
