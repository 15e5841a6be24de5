//! Deploys one GlobalAccelerator object's stack ([`AgaStack`]) through the
//! [`GlobalAccelerator`] trait, in upstream's order (`pkg/deploy/aga/stack_deployer.go`):
//! the accelerator, then its listeners, then their endpoint groups with their endpoints.
//! Idempotent: a second deploy of an unchanged stack makes no write.
//!
//! Ownership: an accelerator is the stack's when it carries `elbv2.k8s.aws/cluster=<cluster>`
//! and `aga.k8s.aws/stack=<namespace>/<name>` (upstream's tracking tags, which the model's
//! accelerator tags must hold). It is found by the ARN the object's status names, else by those
//! tags, so one upstream made is adopted as it is. Listeners and endpoint groups carry no tags;
//! they are the stack's because their accelerator is. Nothing else is modified or deleted: an
//! ARN in the status that names someone else's accelerator is refused
//! ([`Error::NotOwned`]).
//!
//! Settings the model leaves out (`None`) are AWS's defaults where AWS applies one when the
//! request leaves it out (an accelerator is enabled, an endpoint's weight is 128) and otherwise
//! left as AWS has them (client affinity, traffic dial, client IP preservation): upstream's CRD
//! defaults fill all of them, so the two agree on what a GlobalAccelerator object asks for.
//!
//! Deletion ([`delete`]) never waits: it disables the accelerator and answers
//! [`AgaDeletion::InProgress`]; called again once AWS reports the accelerator `DEPLOYED`, it
//! deletes the endpoint groups, listeners and the accelerator.

mod accelerator;
mod endpoint_group;
mod listener;
mod ports;
mod tags;
#[cfg(test)]
mod test_support;

use std::collections::BTreeMap;
use std::time::Duration;

pub use accelerator::{accelerator_drifted, ipv4_addresses_equal};
pub use endpoint_group::{
    detect_conflicts, endpoint_changes, endpoint_drifted, group_settings_drifted, match_groups,
    port_overrides_equal, EndpointChanges, GroupMatching, DEFAULT_WEIGHT,
};
pub use listener::{
    aws_listener_key, exact_matches, has_port_range_conflict, listener_drifted, listener_key,
    match_listeners, model_listener_key, port_ranges_changed, port_ranges_equal,
    similarity_matches, similarity_score, split_conflicting, split_port_overrides, Matching,
    MIN_SIMILARITY,
};
pub use ports::{
    add_ports, compare_port_ranges, format_port_range, is_port_in_ranges, port_ranges_to_string,
    port_set, sort_port_ranges,
};
pub use tags::{
    is_owned, model_tags_problem, ownership_problem, tag_changes, TagChanges, CLUSTER_TAG,
    RESOURCE_TAG, STACK_TAG,
};

use super::error::{Context, Error, Result};
use crate::aws::global_accelerator::STATUS_DEPLOYED;
use crate::aws::{GlobalAccelerator, IpSet};
use crate::model::aga::AgaStack;
use accelerator::Lookup;

/// How long to wait before looking again at an accelerator that is not `DEPLOYED` after a
/// deploy (upstream requeues a minute later to update the status).
pub const STATUS_REQUEUE_AFTER: Duration = Duration::from_secs(60);
/// How long to wait before the next step of a deletion (a disable propagating).
pub const DELETION_REQUEUE_AFTER: Duration = Duration::from_secs(10);

/// What a deploy made of the stack, for the object's status.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AgaDeployed {
    pub accelerator_arn: String,
    pub dns_name: String,
    /// Dual-stack accelerators only.
    pub dual_stack_dns_name: Option<String>,
    pub ip_sets: Vec<IpSet>,
    /// `DEPLOYED` or `IN_PROGRESS`, as AWS answered after this deploy's writes.
    pub status: String,
    /// Listener ARN by model listener id.
    pub listener_arns: BTreeMap<String, String>,
    /// Endpoint-group ARN by model endpoint-group id.
    pub endpoint_group_arns: BTreeMap<String, String>,
    /// What was asked and cannot be done (an existing accelerator's BYOIP addresses, a second
    /// accelerator tagged for the stack): for Warning events.
    pub warnings: Vec<String>,
}

impl AgaDeployed {
    /// When to reconcile again to see the status settle (upstream: a minute while the
    /// accelerator is not `DEPLOYED`); `None` once it is.
    pub fn requeue_after(&self) -> Option<Duration> {
        (self.status != STATUS_DEPLOYED).then_some(STATUS_REQUEUE_AFTER)
    }
}

/// Where a deletion stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgaDeletion {
    /// Nothing of the stack is left in AWS (or nothing ever was).
    Deleted,
    /// AWS is applying a step (the accelerator's disable); call again after `requeue_after`.
    InProgress {
        requeue_after: Duration,
        reason: String,
    },
}

/// What a deploy or deletion needs beside the stack.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgaOptions {
    /// `--cluster-name`: the `elbv2.k8s.aws/cluster` value of the stack's accelerators.
    pub cluster: String,
    /// `--external-managed-tags`: keys never added to or removed from an accelerator.
    pub external_managed_tags: Vec<String>,
}

/// What the steps share: the client, whose stack this is, the writes made and the warnings.
pub(super) struct Ctx<'a> {
    pub ga: &'a dyn GlobalAccelerator,
    pub cluster: &'a str,
    pub stack_id: &'a str,
    pub external_managed_tags: &'a [String],
    pub writes: usize,
    pub warnings: Vec<String>,
}

impl<'a> Ctx<'a> {
    fn new(ga: &'a dyn GlobalAccelerator, opts: &'a AgaOptions, stack_id: &'a str) -> Self {
        Self {
            ga,
            cluster: &opts.cluster,
            stack_id,
            external_managed_tags: &opts.external_managed_tags,
            writes: 0,
            warnings: Vec::new(),
        }
    }

    pub fn wrote(&mut self) {
        self.writes += 1;
    }

    pub fn warn(&mut self, warning: String) {
        tracing::warn!(stack = self.stack_id, "{warning}");
        self.warnings.push(warning);
    }
}

/// Refuses a stack the deployer could not own or would half ignore: the accelerator's tags must
/// be this cluster's and stack's (else it would be created and never found again), and a
/// listener may have one endpoint group per region only (AWS's rule; groups pair by region).
fn check(stack: &AgaStack, cluster: &str) -> Result<()> {
    if let Some(problem) = model_tags_problem(&stack.accelerator.tags, cluster, &stack.id) {
        return Err(Error::Invalid(format!(
            "Global Accelerator stack {}: the accelerator's tags are not the controller's tracking tags ({problem})",
            stack.id
        )));
    }
    for l in &stack.listeners {
        let mut regions = std::collections::BTreeSet::new();
        if let Some(g) = l
            .endpoint_groups
            .iter()
            .find(|g| !regions.insert(g.region.as_str()))
        {
            return Err(Error::Invalid(format!(
                "Global Accelerator stack {}: listener {} has two endpoint groups in {}",
                stack.id, l.id, g.region
            )));
        }
    }
    Ok(())
}

/// Makes AWS match `stack` for the cluster `cluster` (see the module docs).
pub async fn deploy(
    ga: &dyn GlobalAccelerator,
    stack: &AgaStack,
    cluster: &str,
) -> Result<AgaDeployed> {
    let opts = AgaOptions {
        cluster: cluster.to_string(),
        external_managed_tags: vec![],
    };
    deploy_with(ga, stack, &opts).await
}

/// [`deploy`] with every option.
pub async fn deploy_with(
    ga: &dyn GlobalAccelerator,
    stack: &AgaStack,
    opts: &AgaOptions,
) -> Result<AgaDeployed> {
    check(stack, &opts.cluster)?;
    let mut ctx = Ctx::new(ga, opts, &stack.id);
    let want = &stack.accelerator;

    // 1. The accelerator.
    let found = match accelerator::find(&mut ctx, want.existing_arn.as_deref(), false).await? {
        Lookup::Owned(owned) => accelerator::pick(&mut ctx, owned, &want.name),
        Lookup::Foreign { arn, reason } => {
            return Err(Error::NotOwned {
                what: format!(
                    "Global Accelerator {arn} named in the status of {}",
                    stack.id
                ),
                reason,
            })
        }
    };
    let fresh = found.is_none();
    let acc = accelerator::sync(&mut ctx, want, found).await?;
    // 2. Its listeners (a new accelerator has none to list).
    let have = fresh.then(Vec::new);
    let synced = listener::sync(&mut ctx, &acc.arn, &stack.listeners, have).await?;
    let listener_arns = synced.arns.clone();
    // 3. Their endpoint groups.
    let endpoint_group_arns = endpoint_group::sync(&mut ctx, &stack.listeners, synced).await?;

    // The status after this deploy's writes, which leave the accelerator IN_PROGRESS.
    let acc = if ctx.writes > 0 {
        ga.describe_accelerator(&acc.arn)
            .await
            .ctx(|| format!("describe accelerator {}", acc.arn))?
    } else {
        acc
    };
    Ok(AgaDeployed {
        accelerator_arn: acc.arn,
        dns_name: acc.dns_name,
        dual_stack_dns_name: acc.dual_stack_dns_name,
        ip_sets: acc.ip_sets,
        status: acc.status,
        listener_arns,
        endpoint_group_arns,
        warnings: ctx.warnings,
    })
}

/// One step of deleting the stack `stack_id`'s accelerators: the one `accelerator_arn` (the
/// object's status) names, and any other tagged for the stack. Returns `InProgress` while AWS
/// disables one (call again later), `Deleted` once none is left. An ARN that names an
/// accelerator not tagged for the stack is left alone (the stack's own are looked up by tag).
pub async fn delete(
    ga: &dyn GlobalAccelerator,
    stack_id: &str,
    accelerator_arn: Option<&str>,
    cluster: &str,
) -> Result<AgaDeletion> {
    let opts = AgaOptions {
        cluster: cluster.to_string(),
        external_managed_tags: vec![],
    };
    let mut ctx = Ctx::new(ga, &opts, stack_id);
    let mut owned = match accelerator::find(&mut ctx, accelerator_arn, true).await? {
        Lookup::Owned(owned) => owned,
        Lookup::Foreign { arn, reason } => {
            ctx.warn(format!(
                "Global Accelerator {arn} named in the status of {stack_id} is not this controller's ({reason}); it is left as it is"
            ));
            vec![]
        }
    };
    // The status may name one and tags find others (a create whose ARN never reached the
    // status): all of them go.
    if accelerator_arn.is_some_and(|a| !a.is_empty()) {
        if let Lookup::Owned(tagged) = accelerator::find(&mut ctx, None, true).await? {
            for f in tagged {
                if !owned.iter().any(|o| o.acc.arn == f.acc.arn) {
                    owned.push(f);
                }
            }
        }
    }
    let mut pending = None;
    for found in &owned {
        let step = accelerator::delete(&mut ctx, found).await?;
        if pending.is_none() && step != AgaDeletion::Deleted {
            pending = Some(step);
        }
    }
    Ok(pending.unwrap_or(AgaDeletion::Deleted))
}
