//! The listeners of a stack's accelerator (upstream's `listener_synthesizer.go` and
//! `listener_manager.go`). AWS keeps no id on a listener, so the model's are paired with AWS's
//! by protocol and ports: first the exact ones (same protocol, same ranges in any order), then by
//! similarity (40 for the protocol, the Jaccard overlap of the port sets in percent, 10 for an
//! equal client affinity; 15 at least, best first).
//!
//! Changes go in upstream's order, so that AWS never sees two listeners of one protocol on one
//! port nor a port override a listener change would break: (1) delete the unpaired listeners
//! whose ports a paired one is about to take; (2) drop the port overrides the new ranges make
//! invalid (an endpoint port inside any listener's ranges, a listener port outside its updated
//! listener's); (3) update the paired listeners; (4) delete the other unpaired ones; (5) create
//! the new ones. A listener goes with its endpoint groups.

use std::collections::{BTreeMap, BTreeSet};

use super::ports::{is_port_in_ranges, port_ranges_to_string, port_set, sort_port_ranges};
use super::Ctx;
use crate::aws::{DescribedEndpointGroup, DescribedListener};
use crate::deploy::error::{Context, Result};
use crate::model::aga::{AgaListener, PortOverride, PortRange};

/// Below this similarity score a model listener and an AWS one are not paired.
pub const MIN_SIMILARITY: i32 = 15;

/// `TCP:80-80,443-443`: the protocol and the ranges, sorted.
pub fn listener_key(protocol: &str, ranges: &[PortRange]) -> String {
    let mut sorted = ranges.to_vec();
    sort_port_ranges(&mut sorted);
    format!("{protocol}:{}", port_ranges_to_string(&sorted))
}

pub fn model_listener_key(l: &AgaListener) -> String {
    listener_key(l.protocol.as_str(), &l.port_ranges)
}

pub fn aws_listener_key(l: &DescribedListener) -> String {
    listener_key(&l.protocol, &l.port_ranges)
}

/// Same protocol and at least one port in common (other protocols may share ports).
pub fn has_port_range_conflict(want: &AgaListener, have: &DescribedListener) -> bool {
    want.protocol.as_str() == have.protocol
        && !port_set(&want.port_ranges).is_disjoint(&port_set(&have.port_ranges))
}

/// How alike two listeners are (see the module docs).
pub fn similarity_score(want: &AgaListener, have: &DescribedListener) -> i32 {
    let mut score = 0;
    if want.protocol.as_str() == have.protocol {
        score += 40;
    }
    let w = port_set(&want.port_ranges);
    let h = port_set(&have.port_ranges);
    let common = w.intersection(&h).count();
    let union = w.len() + h.len() - common;
    if let Some(share) = (common * 100).checked_div(union) {
        score += share as i32;
    }
    // Only when both say it: an affinity left out earns nothing.
    if let Some(a) = want.client_affinity {
        if !have.client_affinity.is_empty() && a.as_str() == have.client_affinity {
            score += 10;
        }
    }
    score
}

/// Model listeners paired with AWS listeners, by index into the two lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matching {
    /// `(model index, AWS index)`.
    pub pairs: Vec<(usize, usize)>,
    pub unmatched_want: Vec<usize>,
    pub unmatched_have: Vec<usize>,
}

fn exact_among(
    want: &[AgaListener],
    have: &[DescribedListener],
    want_idx: &[usize],
    have_idx: &[usize],
) -> Matching {
    let mut free = have_idx.to_vec();
    let mut m = Matching::default();
    for &w in want_idx {
        let key = model_listener_key(&want[w]);
        match free.iter().position(|&h| aws_listener_key(&have[h]) == key) {
            Some(p) => m.pairs.push((w, free.remove(p))),
            None => m.unmatched_want.push(w),
        }
    }
    m.unmatched_have = free;
    m
}

fn similar_among(
    want: &[AgaListener],
    have: &[DescribedListener],
    want_idx: &[usize],
    have_idx: &[usize],
) -> Matching {
    let mut scored = Vec::new();
    for &w in want_idx {
        for &h in have_idx {
            let score = similarity_score(&want[w], &have[h]);
            if score >= MIN_SIMILARITY {
                scored.push((score, w, h));
            }
        }
    }
    // Best first; a stable sort keeps equal scores in list order, so pairing is deterministic.
    scored.sort_by_key(|s| std::cmp::Reverse(s.0));
    let (mut used_w, mut used_h) = (BTreeSet::new(), BTreeSet::new());
    let mut m = Matching::default();
    for (_, w, h) in scored {
        if used_w.contains(&w) || used_h.contains(&h) {
            continue;
        }
        used_w.insert(w);
        used_h.insert(h);
        m.pairs.push((w, h));
    }
    m.unmatched_want = want_idx
        .iter()
        .copied()
        .filter(|w| !used_w.contains(w))
        .collect();
    m.unmatched_have = have_idx
        .iter()
        .copied()
        .filter(|h| !used_h.contains(h))
        .collect();
    m
}

fn all(n: usize) -> Vec<usize> {
    (0..n).collect()
}

/// Pairs of identical protocol and port ranges (upstream's `findExactMatches`).
pub fn exact_matches(want: &[AgaListener], have: &[DescribedListener]) -> Matching {
    exact_among(want, have, &all(want.len()), &all(have.len()))
}

/// Pairs by similarity (upstream's `findSimilarityMatches`).
pub fn similarity_matches(want: &[AgaListener], have: &[DescribedListener]) -> Matching {
    similar_among(want, have, &all(want.len()), &all(have.len()))
}

/// Exact pairs first, then similar ones among the rest (upstream's `matchResAndSDKListeners`).
pub fn match_listeners(want: &[AgaListener], have: &[DescribedListener]) -> Matching {
    let exact = exact_matches(want, have);
    let similar = similar_among(want, have, &exact.unmatched_want, &exact.unmatched_have);
    let mut pairs = exact.pairs;
    pairs.extend(similar.pairs);
    Matching {
        pairs,
        unmatched_want: similar.unmatched_want,
        unmatched_have: similar.unmatched_have,
    }
}

/// The unpaired AWS listeners whose ports a paired model listener takes (deleted before the
/// updates), and the others (deleted after them); AWS indexes, in list order.
pub fn split_conflicting(
    want: &[AgaListener],
    have: &[DescribedListener],
    m: &Matching,
) -> (Vec<usize>, Vec<usize>) {
    let mut conflicting = Vec::new();
    for &(w, _) in &m.pairs {
        for &h in &m.unmatched_have {
            if !conflicting.contains(&h) && has_port_range_conflict(&want[w], &have[h]) {
                conflicting.push(h);
            }
        }
    }
    let rest = m
        .unmatched_have
        .iter()
        .copied()
        .filter(|h| !conflicting.contains(h))
        .collect();
    (conflicting, rest)
}

/// The same ranges, in any order (upstream's `arePortRangesEqual`).
pub fn port_ranges_equal(a: &[PortRange], b: &[PortRange]) -> bool {
    let set = |r: &[PortRange]| -> BTreeSet<(i32, i32)> {
        r.iter().map(|p| (p.from_port, p.to_port)).collect()
    };
    a.len() == b.len() && set(a) == set(b)
}

/// The ranges cover other ports, or are another number of ranges (upstream's
/// `havePortRangesChanged`).
pub fn port_ranges_changed(want: &[PortRange], have: &[PortRange]) -> bool {
    want.len() != have.len() || port_set(want) != port_set(have)
}

/// Protocol, port ranges or (when the model sets it, the only case it is sent) client affinity
/// differ (upstream's `isSDKListenerSettingsDrifted`).
pub fn listener_drifted(want: &AgaListener, have: &DescribedListener) -> bool {
    want.protocol.as_str() != have.protocol
        || want
            .client_affinity
            .is_some_and(|c| c.as_str() != have.client_affinity)
        || !port_ranges_equal(&want.port_ranges, &have.port_ranges)
}

/// Which port overrides stay and which go once the listeners have `all_ranges` and the
/// overrides' own listener gets `updated_ranges` (empty: its ranges do not change): an endpoint
/// port inside any listener range goes, then a listener port outside the updated ranges
/// (upstream's `processPortOverridesWithAllRules`).
pub fn split_port_overrides(
    overrides: &[PortOverride],
    all_ranges: &[PortRange],
    updated_ranges: &[PortRange],
) -> (Vec<PortOverride>, Vec<PortOverride>) {
    overrides.iter().copied().partition(|o| {
        !is_port_in_ranges(o.endpoint_port, all_ranges)
            && (updated_ranges.is_empty() || is_port_in_ranges(o.listener_port, updated_ranges))
    })
}

/// Lists the endpoint groups of `listeners` and drops the port overrides the new listener
/// ranges make invalid, all analysis before any write (upstream's
/// `ProcessEndpointGroupPortOverrides`). Returns the groups as they are afterwards, by
/// listener ARN.
pub(super) async fn fix_port_overrides(
    ctx: &mut Ctx<'_>,
    listeners: &[&DescribedListener],
    all_ranges: &[PortRange],
    updated_ranges: &BTreeMap<String, Vec<PortRange>>,
) -> Result<BTreeMap<String, Vec<DescribedEndpointGroup>>> {
    let ga = ctx.ga;
    let mut groups = BTreeMap::new();
    let mut fixes = Vec::new();
    for l in listeners {
        let list = ga
            .list_endpoint_groups(&l.arn)
            .await
            .ctx(|| format!("list endpoint groups of listener {}", l.arn))?;
        let updated = updated_ranges.get(&l.arn).map_or(&[][..], Vec::as_slice);
        for (i, g) in list.iter().enumerate() {
            let (keep, dropped) = split_port_overrides(&g.port_overrides, all_ranges, updated);
            if !dropped.is_empty() {
                fixes.push((l.arn.clone(), i, keep, dropped));
            }
        }
        groups.insert(l.arn.clone(), list);
    }
    for (listener, i, keep, dropped) in fixes {
        let Some(g) = groups.get_mut(&listener).and_then(|list| list.get_mut(i)) else {
            continue;
        };
        tracing::info!(
            stack = ctx.stack_id,
            endpoint_group = %g.arn,
            removed = ?dropped,
            "removing port overrides the listener changes make invalid"
        );
        ga.set_port_overrides(&g.arn, &keep)
            .await
            .ctx(|| format!("remove port overrides of endpoint group {}", g.arn))?;
        ctx.wrote();
        g.port_overrides = keep;
    }
    Ok(groups)
}

/// What the listener step leaves for the endpoint-group step.
#[derive(Debug, Clone, Default)]
pub(super) struct Synced {
    /// Listener ARN by model listener id.
    pub arns: BTreeMap<String, String>,
    /// The endpoint groups of each kept listener as last read (none for new ones), by ARN.
    pub groups: BTreeMap<String, Vec<DescribedEndpointGroup>>,
}

/// Makes the accelerator's listeners the model's (see the module docs). `have`: the listeners
/// when already known (none for an accelerator just created), else they are listed.
pub(super) async fn sync(
    ctx: &mut Ctx<'_>,
    accelerator_arn: &str,
    want: &[AgaListener],
    have: Option<Vec<DescribedListener>>,
) -> Result<Synced> {
    let ga = ctx.ga;
    let have = match have {
        Some(h) => h,
        None => match ga.list_listeners(accelerator_arn).await {
            Ok(l) => l,
            // Gone since it was read: nothing to pair (the creates will say so).
            Err(e) if e.is_not_found() => vec![],
            Err(e) => {
                return Err(e).ctx(|| format!("list listeners of accelerator {accelerator_arn}"))
            }
        },
    };
    let m = match_listeners(want, &have);
    let (conflicting, rest) = split_conflicting(want, &have, &m);

    // 1. Unpaired listeners in the way of the updates.
    for &h in &conflicting {
        tracing::info!(stack = ctx.stack_id, listener = %have[h].arn, "deleting a listener whose ports another takes");
        delete_tree(ctx, &have[h].arn).await?;
    }
    // 2. Port overrides the new ranges break, on every listener still there.
    let all_ranges: Vec<PortRange> = want
        .iter()
        .flat_map(|l| l.port_ranges.iter().copied())
        .collect();
    let kept: Vec<&DescribedListener> = m
        .pairs
        .iter()
        .map(|&(_, h)| &have[h])
        .chain(rest.iter().map(|&h| &have[h]))
        .collect();
    let updated: BTreeMap<String, Vec<PortRange>> = m
        .pairs
        .iter()
        .filter(|&&(w, h)| port_ranges_changed(&want[w].port_ranges, &have[h].port_ranges))
        .map(|&(w, h)| (have[h].arn.clone(), want[w].port_ranges.clone()))
        .collect();
    let mut groups = fix_port_overrides(ctx, &kept, &all_ranges, &updated).await?;
    // 3. Paired listeners.
    let mut arns = BTreeMap::new();
    for &(w, h) in &m.pairs {
        let (wl, hl) = (&want[w], &have[h]);
        if listener_drifted(wl, hl) {
            tracing::info!(stack = ctx.stack_id, listener = %hl.arn, ports = %port_ranges_to_string(&wl.port_ranges), "updating listener");
            ga.update_listener(&hl.arn, wl)
                .await
                .ctx(|| format!("update listener {}", hl.arn))?;
            ctx.wrote();
        }
        arns.insert(wl.id.clone(), hl.arn.clone());
    }
    // 4. The other unpaired listeners.
    for &h in &rest {
        tracing::info!(stack = ctx.stack_id, listener = %have[h].arn, "deleting listener");
        groups.remove(&have[h].arn);
        delete_tree(ctx, &have[h].arn).await?;
    }
    // 5. New listeners.
    for &w in &m.unmatched_want {
        let wl = &want[w];
        tracing::info!(stack = ctx.stack_id, protocol = wl.protocol.as_str(), ports = %port_ranges_to_string(&wl.port_ranges), "creating listener");
        let created = ga.create_listener(accelerator_arn, wl).await.ctx(|| {
            format!(
                "create listener {} {} on accelerator {accelerator_arn}",
                wl.protocol.as_str(),
                port_ranges_to_string(&wl.port_ranges)
            )
        })?;
        ctx.wrote();
        arns.insert(wl.id.clone(), created.arn.clone());
        groups.insert(created.arn, vec![]);
    }
    Ok(Synced { arns, groups })
}

/// Deletes a listener with its endpoint groups; what is already gone is fine.
pub(super) async fn delete_tree(ctx: &mut Ctx<'_>, listener_arn: &str) -> Result<()> {
    let ga = ctx.ga;
    let groups = match ga.list_endpoint_groups(listener_arn).await {
        Ok(g) => g,
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(e).ctx(|| format!("list endpoint groups of listener {listener_arn}")),
    };
    for g in &groups {
        match ga.delete_endpoint_group(&g.arn).await {
            Ok(()) => ctx.wrote(),
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e).ctx(|| format!("delete endpoint group {}", g.arn)),
        }
    }
    match ga.delete_listener(listener_arn).await {
        Ok(()) => {
            ctx.wrote();
            Ok(())
        }
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(e).ctx(|| format!("delete listener {listener_arn}")),
    }
}

#[cfg(test)]
#[path = "listener_tests.rs"]
mod tests;
