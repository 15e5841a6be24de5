//! The endpoint groups of a stack's listeners and their endpoints (upstream's
//! `endpoint_group_synthesizer.go` and `endpoint_group_manager.go`). A listener has one group
//! per region, so model groups pair with AWS's by region.
//!
//! Before any group changes, the port overrides of the accelerator's other listeners' groups
//! that would collide with the model's (same region, same endpoint port, another listener) are
//! dropped. Then per listener: paired groups are updated (traffic dial and port overrides when
//! they drifted, then their endpoints), unpaired AWS groups deleted, new ones created with their
//! endpoints. Endpoints: one UpdateEndpointGroup with the whole list when a kept endpoint's
//! weight or client IP preservation changes (AddEndpoints cannot change those); otherwise
//! AddEndpoints, then RemoveEndpoints, and on a quota error (`LimitExceededException`) the
//! removals first.

use std::collections::BTreeMap;

use super::listener::Synced;
use super::Ctx;
use crate::aws::global_accelerator::listener_arn_of_group;
use crate::aws::{DescribedEndpointGroup, EndpointDescription, GlobalAccelerator};
use crate::deploy::error::{Context, Result};
use crate::model::aga::{AgaListener, EndpointConfiguration, EndpointGroup, PortOverride};

/// AWS's weight of an endpoint that names none.
pub const DEFAULT_WEIGHT: i32 = 128;
/// Traffic dials closer than this are equal (AWS answers a float).
const DIAL_EPSILON: f32 = 0.001;

/// Model groups paired with AWS groups by region, by index into the two lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupMatching {
    /// `(model index, AWS index)`.
    pub pairs: Vec<(usize, usize)>,
    pub unmatched_want: Vec<usize>,
    pub unmatched_have: Vec<usize>,
}

/// Pairs by region (upstream's `matchResAndSDKEndpointGroups`).
pub fn match_groups(want: &[EndpointGroup], have: &[DescribedEndpointGroup]) -> GroupMatching {
    let mut free: Vec<usize> = (0..have.len()).collect();
    let mut m = GroupMatching::default();
    for (w, g) in want.iter().enumerate() {
        match free.iter().position(|&h| have[h].region == g.region) {
            Some(p) => m.pairs.push((w, free.remove(p))),
            None => m.unmatched_want.push(w),
        }
    }
    m.unmatched_have = free;
    m
}

/// Endpoint port → the AWS groups whose port overrides collide with a model group's: same
/// region, same endpoint port, another listener (upstream's
/// `detectConflictsWithSDKEndpointGroups`; the listener is read off the group's ARN).
pub fn detect_conflicts(
    desired: &[(&str, &EndpointGroup)],
    have: &[DescribedEndpointGroup],
) -> BTreeMap<i32, Vec<String>> {
    let mut conflicts: BTreeMap<i32, Vec<String>> = BTreeMap::new();
    for (listener_arn, want) in desired {
        for o in &want.port_overrides {
            for g in have {
                let other_listener = listener_arn_of_group(&g.arn) != *listener_arn;
                let collides = g.region == want.region
                    && other_listener
                    && g.port_overrides
                        .iter()
                        .any(|p| p.endpoint_port == o.endpoint_port);
                if collides {
                    let arns = conflicts.entry(o.endpoint_port).or_default();
                    if !arns.contains(&g.arn) {
                        arns.push(g.arn.clone());
                    }
                }
            }
        }
    }
    conflicts
}

/// Drops the colliding port overrides: one UpdateEndpointGroup per group, with the overrides
/// it keeps; `groups` (by listener) is updated to match (upstream's
/// `resolveConflictsWithSDKEndpointGroups`).
pub(super) async fn resolve_conflicts(
    ctx: &mut Ctx<'_>,
    conflicts: &BTreeMap<i32, Vec<String>>,
    groups: &mut BTreeMap<String, Vec<DescribedEndpointGroup>>,
) -> Result<()> {
    let mut updates: BTreeMap<String, Vec<PortOverride>> = BTreeMap::new();
    for (port, arns) in conflicts {
        for arn in arns {
            let group = groups
                .values_mut()
                .flat_map(|list| list.iter_mut())
                .find(|g| &g.arn == arn);
            if let Some(g) = group {
                g.port_overrides.retain(|o| o.endpoint_port != *port);
                updates.insert(arn.clone(), g.port_overrides.clone());
            }
        }
    }
    let ga = ctx.ga;
    for (arn, overrides) in updates {
        tracing::info!(stack = ctx.stack_id, endpoint_group = %arn, "removing port overrides that collide with the stack's");
        ga.set_port_overrides(&arn, &overrides)
            .await
            .ctx(|| format!("remove colliding port overrides of endpoint group {arn}"))?;
        ctx.wrote();
    }
    Ok(())
}

/// The same listener → endpoint port mappings, in any order (upstream's
/// `arePortOverridesEqual`).
pub fn port_overrides_equal(want: &[PortOverride], have: &[PortOverride]) -> bool {
    let map: BTreeMap<i32, i32> = want
        .iter()
        .map(|o| (o.listener_port, o.endpoint_port))
        .collect();
    want.len() == have.len()
        && have
            .iter()
            .all(|o| map.get(&o.listener_port) == Some(&o.endpoint_port))
}

/// Traffic dial or port overrides differ (upstream's `isSDKEndpointGroupSettingsDrifted`). A
/// traffic dial the model leaves out is not sent, so it is not compared either: comparing it
/// would update the group on every deploy to no effect.
pub fn group_settings_drifted(want: &EndpointGroup, have: &DescribedEndpointGroup) -> bool {
    let dial_drifted = want.traffic_dial_percentage.is_some_and(|p| {
        (p as f32 - have.traffic_dial_percentage.unwrap_or(0.0)).abs() > DIAL_EPSILON
    });
    dial_drifted || !port_overrides_equal(&want.port_overrides, &have.port_overrides)
}

/// Weight (AWS's 128 where left out, as AWS applies it) or client IP preservation (when the
/// model sets it) differ (upstream's `isEndpointConfigurationDrifted`).
pub fn endpoint_drifted(want: &EndpointConfiguration, have: &EndpointDescription) -> bool {
    want.weight.unwrap_or(DEFAULT_WEIGHT) != have.weight.unwrap_or(DEFAULT_WEIGHT)
        || want
            .client_ip_preservation_enabled
            .is_some_and(|c| have.client_ip_preservation_enabled != Some(c))
}

/// How a group's endpoints get from `have` to `want` (upstream's `detectEndpointDrift`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointChanges {
    /// Wanted, not there.
    pub add: Vec<EndpointConfiguration>,
    /// Wanted and there.
    pub keep: Vec<EndpointConfiguration>,
    /// There, not wanted (sorted).
    pub remove: Vec<String>,
    /// A kept endpoint's settings differ: only UpdateEndpointGroup changes those.
    pub update_required: bool,
}

pub fn endpoint_changes(
    have: &[EndpointDescription],
    want: &[EndpointConfiguration],
) -> EndpointChanges {
    let mut c = EndpointChanges::default();
    for w in want {
        match have.iter().find(|h| h.endpoint_id == w.endpoint_id) {
            Some(h) => {
                c.update_required |= endpoint_drifted(w, h);
                c.keep.push(w.clone());
            }
            None => c.add.push(w.clone()),
        }
    }
    c.remove = have
        .iter()
        .filter(|h| !want.iter().any(|w| w.endpoint_id == h.endpoint_id))
        .map(|h| h.endpoint_id.clone())
        .collect();
    c.remove.sort();
    c
}

/// Brings a group's endpoints from `have` to `want` (upstream's `ManageEndpoints`).
pub(super) async fn manage_endpoints(
    ctx: &mut Ctx<'_>,
    group_arn: &str,
    want: &[EndpointConfiguration],
    have: &[EndpointDescription],
) -> Result<()> {
    let ga = ctx.ga;
    let c = endpoint_changes(have, want);
    if c.add.is_empty() && c.remove.is_empty() && !c.update_required {
        return Ok(());
    }
    if c.update_required {
        // The whole list: kept endpoints with their new settings, new ones, none of the rest.
        ga.set_endpoints(group_arn, want)
            .await
            .ctx(|| format!("update the endpoints of endpoint group {group_arn}"))?;
        ctx.wrote();
        return Ok(());
    }
    if !c.add.is_empty() {
        match ga.add_endpoints(group_arn, &c.add).await {
            Ok(()) => ctx.wrote(),
            // The quota is full: make room with the removals first, then add.
            Err(e) if e.code() == "LimitExceededException" && !c.remove.is_empty() => {
                tracing::info!(
                    stack = ctx.stack_id,
                    endpoint_group = group_arn,
                    "endpoint quota reached; removing the old endpoints before adding the new"
                );
                ga.remove_endpoints(group_arn, &c.remove)
                    .await
                    .ctx(|| format!("remove endpoints from endpoint group {group_arn}"))?;
                ctx.wrote();
                ga.add_endpoints(group_arn, &c.add)
                    .await
                    .ctx(|| format!("add endpoints to endpoint group {group_arn}"))?;
                ctx.wrote();
                return Ok(());
            }
            Err(e) => return Err(e).ctx(|| format!("add endpoints to endpoint group {group_arn}")),
        }
    }
    if !c.remove.is_empty() {
        ga.remove_endpoints(group_arn, &c.remove)
            .await
            .ctx(|| format!("remove endpoints from endpoint group {group_arn}"))?;
        ctx.wrote();
    }
    Ok(())
}

/// A paired group: its settings when they drifted, then its endpoints.
async fn update_group(
    ctx: &mut Ctx<'_>,
    want: &EndpointGroup,
    have: &DescribedEndpointGroup,
) -> Result<()> {
    let ga = ctx.ga;
    if group_settings_drifted(want, have) {
        tracing::info!(stack = ctx.stack_id, endpoint_group = %have.arn, "updating endpoint group");
        let updated = ga
            .update_endpoint_group(&have.arn, want)
            .await
            .ctx(|| format!("update endpoint group {}", have.arn))?;
        ctx.wrote();
        return manage_endpoints(
            ctx,
            &have.arn,
            &want.endpoint_configurations,
            &updated.endpoints,
        )
        .await;
    }
    manage_endpoints(
        ctx,
        &have.arn,
        &want.endpoint_configurations,
        &have.endpoints,
    )
    .await
}

/// The endpoint groups of each listener (upstream's `getAllEndpointGroupsInListeners`, kept by
/// listener).
pub(super) async fn list_groups_of(
    ga: &dyn GlobalAccelerator,
    listener_arns: &[&str],
) -> Result<BTreeMap<String, Vec<DescribedEndpointGroup>>> {
    let mut out = BTreeMap::new();
    for arn in listener_arns {
        let list = ga
            .list_endpoint_groups(arn)
            .await
            .ctx(|| format!("list endpoint groups of listener {arn}"))?;
        out.insert(arn.to_string(), list);
    }
    Ok(out)
}

/// Makes every listener's endpoint groups the model's (see the module docs); returns the
/// endpoint-group ARN by model id.
pub(super) async fn sync(
    ctx: &mut Ctx<'_>,
    listeners: &[AgaListener],
    synced: Synced,
) -> Result<BTreeMap<String, String>> {
    let ga = ctx.ga;
    let Synced { arns, mut groups } = synced;
    let unread: Vec<&str> = arns
        .values()
        .filter(|a| !groups.contains_key(*a))
        .map(String::as_str)
        .collect();
    groups.extend(list_groups_of(ga, &unread).await?);
    let desired: Vec<(&str, &EndpointGroup)> = listeners
        .iter()
        .filter_map(|l| arns.get(&l.id).map(|arn| (arn.as_str(), l)))
        .flat_map(|(arn, l)| l.endpoint_groups.iter().map(move |g| (arn, g)))
        .collect();
    if !desired.is_empty() {
        let all: Vec<DescribedEndpointGroup> = groups.values().flatten().cloned().collect();
        let conflicts = detect_conflicts(&desired, &all);
        if !conflicts.is_empty() {
            resolve_conflicts(ctx, &conflicts, &mut groups).await?;
        }
    }
    let mut out = BTreeMap::new();
    for l in listeners {
        let Some(listener_arn) = arns.get(&l.id) else {
            continue;
        };
        let have = groups.remove(listener_arn).unwrap_or_default();
        let m = match_groups(&l.endpoint_groups, &have);
        for &(w, h) in &m.pairs {
            update_group(ctx, &l.endpoint_groups[w], &have[h]).await?;
            out.insert(l.endpoint_groups[w].id.clone(), have[h].arn.clone());
        }
        for &h in &m.unmatched_have {
            let arn = &have[h].arn;
            tracing::info!(stack = ctx.stack_id, endpoint_group = %arn, "deleting endpoint group");
            match ga.delete_endpoint_group(arn).await {
                Ok(()) => ctx.wrote(),
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e).ctx(|| format!("delete endpoint group {arn}")),
            }
        }
        for &w in &m.unmatched_want {
            let want = &l.endpoint_groups[w];
            tracing::info!(stack = ctx.stack_id, listener = %listener_arn, region = %want.region, "creating endpoint group");
            let created = ga.create_endpoint_group(listener_arn, want).await.ctx(|| {
                format!(
                    "create endpoint group in {} on listener {listener_arn}",
                    want.region
                )
            })?;
            ctx.wrote();
            out.insert(want.id.clone(), created.arn);
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "endpoint_group_tests.rs"]
mod tests;
