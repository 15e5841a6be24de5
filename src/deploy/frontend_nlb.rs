//! The frontend NLB of an Ingress stack (`enable-frontend-nlb`; resource id `FrontendNlb`, its
//! listeners `FrontendNlb-ls-*` and `alb`-type target groups `FrontendNlb-tg-*`, all with the
//! group's stack tags), in upstream's order: ALB targets of target groups that go away are
//! deregistered first; the target groups, the NLB and its listeners are synced like the ALB's;
//! once the ALB and its listeners exist the ALB is registered (ARN, ALB listener port) in each
//! target group. A stack without a frontend NLB deletes the one it owns (upstream deletes it
//! when the annotation goes); an upstream-made one the model describes is adopted as it is.
//!
//! NLB Gateway stacks reuse the `alb`-type target group steps for their `Gateway` backends
//! (`Stack::alb_target_groups`, as upstream's Gateway deploy enables the same synthesizer): the
//! target is then another Gateway's ALB.

use std::collections::BTreeMap;

use super::error::{Context, Error, Result};
use super::resolve::Resolved;
use super::{tags, Deployer};
use crate::aws::{self, Tags, TargetDescription, TargetHealthState};
use crate::model::frontend_nlb::{eip_count_mismatch, pair_eips};
use crate::model::{self, AlbTargetGroup, FrontendNlb, Stack, StackKind, Subnets};

/// Resource id of upstream's frontend NLB; its listeners and target groups extend it.
pub const RESOURCE_ID: &str = model::FRONTEND_NLB_ID;

/// Upstream's requeue after a failed registration of the ALB behind its frontend NLB.
const FRONTEND_NLB_REGISTER_RETRY: std::time::Duration = std::time::Duration::from_secs(15);

/// True for any resource of a frontend NLB (the NLB, `FrontendNlb-ls-*`, `FrontendNlb-tg-*`).
pub fn is_frontend_nlb(t: &Tags) -> bool {
    // Ingress stacks only: the Ingress resource tag, read directly.
    t.get(tags::RESOURCE_TAG).is_some_and(|id| {
        id == RESOURCE_ID
            || id
                .strip_prefix(RESOURCE_ID)
                .is_some_and(|rest| rest.starts_with('-'))
    })
}

/// The stack's owned frontend-NLB resources, taken out of the owned lists.
#[derive(Debug, Default)]
pub(crate) struct Owned {
    pub lbs: Vec<(aws::LoadBalancer, Tags)>,
    pub tgs: Vec<(aws::TargetGroup, Tags)>,
}

/// Moves the frontend-NLB resources out of the owned lists, unless the stack is being deleted
/// (no load balancer): then they go with everything else.
pub(crate) fn split(
    stack: &Stack,
    lbs: &mut Vec<(aws::LoadBalancer, Tags)>,
    tgs: &mut Vec<(aws::TargetGroup, Tags)>,
) -> Owned {
    if stack.load_balancer.is_none() || !stack.kind.is_ingress() {
        return Owned::default();
    }
    let (fe_lbs, rest): (Vec<_>, Vec<_>) = lbs.drain(..).partition(|(_, t)| is_frontend_nlb(t));
    *lbs = rest;
    let (fe_tgs, rest): (Vec<_>, Vec<_>) = tgs.drain(..).partition(|(_, t)| is_frontend_nlb(t));
    *tgs = rest;
    Owned {
        lbs: fe_lbs,
        tgs: fe_tgs,
    }
}

/// AWS cannot change these in place; the target group is replaced. An `alb`-type target
/// group has no target-control port: one described is a change (upstream's rule).
fn needs_replacement(have: &aws::TargetGroup, want: &AlbTargetGroup) -> bool {
    have.target_type != "alb"
        || !have
            .protocol
            .as_deref()
            .is_some_and(|p| p.eq_ignore_ascii_case(want.protocol.as_str()))
        || have.target_control_port.is_some()
}

fn matches(kind: StackKind, have: &(aws::TargetGroup, Tags), want: &AlbTargetGroup) -> bool {
    tags::resource_id(&have.1, kind) == Some(want.id.as_str()) && !needs_replacement(&have.0, want)
}

/// The NLB as it is to be created or updated: EIPs paired with the (sorted) subnets.
pub(crate) struct Planned {
    pub lb: model::LoadBalancer,
}

impl Deployer {
    /// Read-only checks before the first write: the NLB's subnets resolve and, with EIPs, are
    /// as many as the EIPs (upstream's error otherwise).
    pub(crate) async fn plan_frontend_nlb(
        &self,
        want: &FrontendNlb,
        owned: &Owned,
    ) -> Result<Planned> {
        let mut lb = want.load_balancer.clone();
        let current = owned.lbs.iter().find(|(l, t)| {
            tags::resource_id(t, StackKind::Ingress) == Some(lb.id.as_str())
                && !super::load_balancer::needs_replacement(l, &lb)
        });
        let subnets = self.desired_subnets(&lb, current.map(|(l, _)| l)).await?;
        if !want.eip_allocations.is_empty() {
            let ids = match subnets {
                Some(ids) => ids,
                None => current
                    .map(|(l, _)| super::lb_subnets::subnets_of(l))
                    .unwrap_or_default(),
            };
            if ids.len() != want.eip_allocations.len() {
                return Err(Error::Invalid(eip_count_mismatch(
                    want.eip_allocations.len(),
                    ids.len(),
                )));
            }
            let mut sorted = ids.clone();
            sorted.sort();
            lb.subnet_mappings = pair_eips(&sorted, &want.eip_allocations);
            lb.subnets = Subnets::Resolved(sorted);
        }
        Ok(Planned { lb })
    }

    /// Upstream's first frontend-NLB step: owned `alb`-type target groups (among `owned`) the
    /// model no longer has (`want`) give up their ALB target, so that they (and then the ALB)
    /// can be deleted.
    pub(crate) async fn release_unwanted_alb_targets(
        &self,
        kind: StackKind,
        want: &[&AlbTargetGroup],
        owned: &[&(aws::TargetGroup, Tags)],
    ) -> Result<()> {
        let wanted = |h: &(aws::TargetGroup, Tags)| want.iter().any(|w| matches(kind, h, w));
        let unwanted: Vec<(aws::TargetGroup, Tags)> = owned
            .iter()
            .filter(|h| !wanted(h))
            .map(|h| (*h).clone())
            .collect();
        self.release_alb_targets(&unwanted).await
    }

    /// The `alb`-type target groups: created, health check, attributes and tags kept true;
    /// returns their ARNs by resource id. The owned ones they match are taken out of
    /// `existing`; what is left there is not theirs.
    pub(crate) async fn sync_alb_target_groups(
        &self,
        kind: StackKind,
        want: &[AlbTargetGroup],
        existing: &mut Vec<(aws::TargetGroup, Tags)>,
    ) -> Result<BTreeMap<String, String>> {
        let mut arns = BTreeMap::new();
        for tg in want {
            let arn = match existing.iter().position(|h| matches(kind, h, tg)) {
                Some(i) => {
                    let (have, have_tags) = existing.remove(i);
                    self.keep_target_group(have, &have_tags, &tg.health_check, &tg.tags)
                        .await?
                }
                None => {
                    self.create_target_group(tg.into(), &tg.name, &tg.tags)
                        .await?
                }
            };
            self.sync_tg_attributes(&arn, &tg.attributes).await?;
            arns.insert(tg.id.clone(), arn);
        }
        Ok(arns)
    }

    /// The NLB and its listeners; returns the NLB and the listeners to delete.
    pub(crate) async fn sync_frontend_nlb(
        &self,
        want: &FrontendNlb,
        planned: &Planned,
        owned_lbs: Vec<(aws::LoadBalancer, Tags)>,
        r: &Resolved,
    ) -> Result<(aws::LoadBalancer, Vec<String>)> {
        let out = self
            .sync_load_balancer(StackKind::Ingress, &planned.lb, owned_lbs, r)
            .await?;
        let nlb = out
            .lb
            .ok_or_else(|| Error::Invalid("the frontend NLB was not created".into()))?;
        let ls = self.sync_listeners(&nlb.arn, &want.listeners, r).await?;
        Ok((nlb, ls.leftovers))
    }

    /// Upstream's last frontend-NLB step: the ALB (ARN, ALB listener port) registered in each
    /// target group where it is not yet; any other target is deregistered (an `alb` target
    /// group holds one). The ALB is the target group's `target_arn` (a Gateway backend's),
    /// else `own_alb_arn` (the stack's, behind its frontend NLB). A failed registration (the
    /// ALB still provisioning) asks for a retry.
    pub(crate) async fn register_alb(
        &self,
        want: &[AlbTargetGroup],
        tg_arns: &BTreeMap<String, String>,
        own_alb_arn: &str,
    ) -> Result<()> {
        for tg in want {
            let Some(arn) = tg_arns.get(&tg.id) else {
                continue;
            };
            let alb_arn = tg.target_arn.as_deref().unwrap_or(own_alb_arn);
            let port = u16::try_from(tg.target_port).map_err(|_| {
                Error::Invalid(format!(
                    "ALB listener port out of range: {}",
                    tg.target_port
                ))
            })?;
            let desired = TargetDescription::new(alb_arn, port);
            let have = self
                .elbv2
                .describe_target_health(arn, &[])
                .await
                .ctx(|| format!("describe targets of {arn}"))?;
            // A target on its way out (draining) is no longer registered.
            let registered: Vec<TargetDescription> = have
                .into_iter()
                .filter(|h| h.health.state != TargetHealthState::Draining)
                .map(|h| h.target)
                .collect();
            let is_desired = |t: &TargetDescription| t.id == desired.id && t.port == desired.port;
            if registered.iter().any(is_desired) && registered.len() == 1 {
                continue;
            }
            let stale: Vec<TargetDescription> = registered
                .iter()
                .filter(|t| !is_desired(t))
                .cloned()
                .collect();
            if !stale.is_empty() {
                self.elbv2
                    .deregister_targets(arn, &stale)
                    .await
                    .ctx(|| format!("deregister the former target of {arn}"))?;
            }
            if !registered.iter().any(is_desired) {
                if let Err(e) = self.elbv2.register_targets(arn, &[desired]).await {
                    tracing::info!(error = %e, target_group = arn, "registering the ALB failed");
                    // Upstream's message, typo included, and its requeue delay.
                    return Err(Error::NotReady {
                        reason: format!(
                            "Failed to register target, retrying after deplay for target group: {arn}"
                        ),
                        retry_after: FRONTEND_NLB_REGISTER_RETRY,
                    });
                }
            }
        }
        Ok(())
    }

    /// Before a stack deletion: deregisters the ALB targets of `alb`-type target groups, which
    /// AWS requires before the ALB can be deleted.
    pub(crate) async fn release_alb_targets(&self, tgs: &[(aws::TargetGroup, Tags)]) -> Result<()> {
        for (tg, _) in tgs.iter().filter(|(t, _)| t.target_type == "alb") {
            let health = match self.elbv2.describe_target_health(&tg.arn, &[]).await {
                Err(e) if e.is_not_found() => continue,
                other => other.ctx(|| format!("describe targets of {}", tg.arn))?,
            };
            let targets: Vec<aws::TargetDescription> =
                health.into_iter().map(|h| h.target).collect();
            if targets.is_empty() {
                continue;
            }
            match self.elbv2.deregister_targets(&tg.arn, &targets).await {
                Err(e) if !e.is_not_found() => {
                    return Err(e).ctx(|| format!("deregister the ALB from {}", tg.arn));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: &str) -> Tags {
        [(tags::RESOURCE_TAG.to_string(), id.to_string())]
            .into_iter()
            .collect()
    }

    #[test]
    fn frontend_nlb_resources_are_recognised_by_resource_id() {
        for id in [
            "FrontendNlb",
            "FrontendNlb-tg-TCP-80",
            "FrontendNlb-ls-TCP-443",
        ] {
            assert!(is_frontend_nlb(&t(id)), "{id}");
        }
        for id in ["LoadBalancer", "FrontendNlbX", "shop/api-api:80"] {
            assert!(!is_frontend_nlb(&t(id)), "{id}");
        }
        assert!(!is_frontend_nlb(&Tags::new()));
    }
}
