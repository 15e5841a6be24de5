//! Target diffing: what to deregister and register, given what the target group holds.
//! Pure; the multi-cluster filter, the "outside the VPC" zone and the QUIC server ids of the
//! wanted pod targets are decided here too.

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;

use ipnet::IpNet;

use super::endpoints::PodEndpoint;
use super::info::PodInfo;
use crate::aws::{TargetDescription, TargetHealthDescription, TargetHealthState};

/// Identifier of a target as upstream writes it in the multi-cluster ConfigMap: `id:port`.
pub fn target_key(id: &str, port: Option<u16>) -> String {
    match port {
        Some(p) => format!("{id}:{p}"),
        None => id.to_string(),
    }
}

/// Identity of a target, as upstream matches targets and records them: `id:port`, and
/// `:quicServerId` when it has one. A pod back on the same address and port with another
/// server id is another target: the old one is deregistered with its id, the new registered.
pub fn key_of(t: &TargetDescription) -> String {
    let key = target_key(&t.id, t.port);
    match &t.quic_server_id {
        Some(id) => format!("{key}:{id}"),
        None => key,
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
        .map(|t| (key_of(&t.target), &t.target))
        .collect();
    let wanted_keys: BTreeSet<String> = wanted.iter().map(key_of).collect();
    let mut deregister: Vec<TargetDescription> = live
        .iter()
        .filter(|(k, _)| !wanted_keys.contains(*k))
        .filter(|(k, _)| match tracked {
            None => true,
            Some(None) => false,
            Some(Some(set)) => set.contains(*k),
        })
        // Deregistered with the QUIC server id it was registered with, as AWS requires.
        .map(|(_, t)| TargetDescription {
            id: t.id.clone(),
            port: t.port,
            availability_zone: None,
            quic_server_id: t.quic_server_id.clone(),
        })
        .collect();
    deregister.sort();
    let mut register: Vec<TargetDescription> = wanted
        .iter()
        .filter(|t| !live.contains_key(&key_of(t)))
        .cloned()
        .collect();
    register.sort();
    register.dedup();
    TargetDiff {
        register,
        deregister,
    }
}

/// The pod targets a binding wants, with the pod each stands for.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct IpTargets {
    pub targets: Vec<TargetDescription>,
    /// `(pod, key_of(target))`, for the readiness gates.
    pub pairs: Vec<(String, String)>,
    /// Endpoints left out: the binding is QUIC and their pod has no server id.
    pub missing_quic_id: Vec<PodEndpoint>,
}

/// Targets for `endpoints`: zone `all` outside the VPC and, when `quic`, the pod's server id
/// for the endpoint's port; an endpoint whose pod has none is not a target (AWS refuses a QUIC
/// target without one) and is listed in `missing_quic_id`. Non-QUIC targets never carry an id.
pub fn ip_targets<'a>(
    endpoints: &[PodEndpoint],
    quic: bool,
    vpc_cidrs: &[IpNet],
    pod: impl Fn(&str) -> Option<&'a PodInfo>,
) -> IpTargets {
    let mut out = IpTargets::default();
    for e in endpoints {
        let quic_server_id = if quic {
            match pod(&e.pod).and_then(|p| p.quic_server_id(e.port)) {
                Some(id) => Some(id.to_string()),
                None => {
                    out.missing_quic_id.push(e.clone());
                    continue;
                }
            }
        } else {
            None
        };
        let t = TargetDescription {
            id: e.ip.clone(),
            port: Some(e.port),
            availability_zone: availability_zone_for(&e.ip, vpc_cidrs),
            quic_server_id,
        };
        out.pairs.push((e.pod.clone(), key_of(&t)));
        out.targets.push(t);
    }
    out
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
mod tests {
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
