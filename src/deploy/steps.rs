//! The steps of one deploy ([`Deployer::deploy`]) longer than a call, in the order it runs them:
//! the checks before any call, the stack's resources found in AWS, the target groups and the
//! load balancers (the frontend NLB's beside the stack's own), listeners with their rules and
//! add-ons, and the cleanup of what no model resource kept.

use std::collections::BTreeMap;

use super::addons::AddonPlan;
use super::error::{Context, Error, Result};
use super::resolve::Resolved;
use super::{frontend_nlb, preflight, Deployer};
use crate::aws::{self, Tags};
use crate::model::{self, Stack, StackKind, Token};

/// Refuses, before the first call, a stack that could only be half built: no stack id, a rule
/// on a listener the stack does not have, or what [`preflight::check`] refuses.
pub(super) fn check(stack: &Stack) -> Result<()> {
    if stack.stack_id.is_empty() {
        return Err(Error::Invalid("stack id is empty".into()));
    }
    for r in &stack.listener_rules {
        let ok = matches!(&r.listener_arn, Token::ListenerArn(p)
            if stack.listeners.iter().any(|l| l.port == *p));
        if !ok {
            return Err(Error::Invalid(format!(
                "rule {} refers to a listener the stack does not have",
                r.id
            )));
        }
    }
    // Refused whole before the first call: never a half-built stack.
    preflight::check(stack)?;
    Ok(())
}

/// The stack's resources found in AWS by their tags.
pub(super) struct Owned {
    pub sgs: Vec<aws::SecurityGroup>,
    pub tgs: Vec<(aws::TargetGroup, Tags)>,
    pub lbs: Vec<(aws::LoadBalancer, Tags)>,
    /// The frontend NLB's, taken out of `tgs` and `lbs`: synced on their own (a stack deletion
    /// takes them with everything else, the ALB targets released first).
    pub frontend: frontend_nlb::Owned,
}

/// The target-group ARNs the later steps need, and the owned target groups no model resource
/// kept.
pub(super) struct TargetGroups {
    /// The stack's `alb`-type target groups (an NLB Gateway's Gateway backends), by model id.
    pub gw_alb_arns: BTreeMap<String, String>,
    /// The frontend NLB's target groups, by model id.
    pub fe_arns: BTreeMap<String, String>,
    pub leftovers: Vec<String>,
}

/// The load balancers after their step, and those (with listeners) no model resource kept.
pub(super) struct LoadBalancers {
    pub lb: Option<aws::LoadBalancer>,
    pub frontend_nlb: Option<aws::LoadBalancer>,
    pub leftovers: Vec<String>,
    /// The frontend NLB's listeners no model listener kept.
    pub listener_leftovers: Vec<String>,
}

/// What no model resource kept, by kind; deleted in reverse order of creation.
pub(super) struct Leftovers<'a> {
    pub rules: &'a [String],
    pub listeners: &'a [String],
    pub lbs: &'a [String],
    pub tgs: &'a [String],
    pub certificates: &'a super::certificate::CertificateLeftovers,
    pub sgs: &'a [aws::SecurityGroup],
}

impl Deployer {
    /// The stack's security groups, target groups and load balancers in AWS (`sid`: its stack
    /// id), the frontend NLB's apart: from one look at the inventory. A stack being deleted (no
    /// load balancer) reads a listing begun after it was asked for: everything of the stack
    /// goes, also what appeared within the inventory's TTL.
    pub(super) async fn find_owned(&self, stack: &Stack, sid: &str) -> Result<Owned> {
        let kind = stack.kind;
        let (sgs, mut tgs, mut lbs) = if self.tagging.is_none() {
            let deleting = stack.load_balancer.is_none();
            self.inventory
                .ensure(deleting.then(std::time::Instant::now))
                .await?;
            (
                self.listed_sgs(kind, sid),
                self.listed_tgs(kind, sid),
                self.listed_lbs(kind, sid),
            )
        } else {
            (
                self.find_owned_sgs(kind, sid).await?,
                self.find_owned_tgs(kind, sid).await?,
                self.find_owned_lbs(kind, sid).await?,
            )
        };
        let frontend = frontend_nlb::split(stack, &mut lbs, &mut tgs);
        Ok(Owned {
            sgs,
            tgs,
            lbs,
            frontend,
        })
    }

    /// Target groups: the stack's `alb`-type ones first (taken out of the owned ones), then the
    /// others, then the frontend NLB's (`fe_tgs`, out of `fe_owned`); every ARN into `res`.
    pub(super) async fn sync_stack_target_groups(
        &self,
        stack: &Stack,
        fe_tgs: &[model::AlbTargetGroup],
        mut owned: Vec<(aws::TargetGroup, Tags)>,
        mut fe_owned: Vec<(aws::TargetGroup, Tags)>,
        res: &mut Resolved,
    ) -> Result<TargetGroups> {
        let kind = stack.kind;
        let gw_alb_arns = self
            .sync_alb_target_groups(kind, &stack.alb_target_groups, &mut owned)
            .await?;
        let mut tgs = self
            .sync_target_groups(kind, &stack.target_groups, owned)
            .await?;
        res.target_group_arns = tgs.arns;
        res.target_group_arns.extend(gw_alb_arns.clone());
        let fe_arns = self
            .sync_alb_target_groups(StackKind::Ingress, fe_tgs, &mut fe_owned)
            .await?;
        res.target_group_arns.extend(fe_arns.clone());
        tgs.leftovers
            .extend(fe_owned.into_iter().map(|(t, _)| t.arn));
        Ok(TargetGroups {
            gw_alb_arns,
            fe_arns,
            leftovers: tgs.leftovers,
        })
    }

    /// Load balancers: the stack's, then the frontend NLB with its listeners (`fe_planned`, as
    /// planned before the first write), whose ARN goes into `res`.
    pub(super) async fn sync_stack_load_balancers(
        &self,
        stack: &Stack,
        owned: Vec<(aws::LoadBalancer, Tags)>,
        fe_owned: Vec<(aws::LoadBalancer, Tags)>,
        fe_planned: Option<&frontend_nlb::Planned>,
        res: &mut Resolved,
    ) -> Result<LoadBalancers> {
        let (lb, mut leftovers) = match &stack.load_balancer {
            Some(want) => {
                let owned = self.lbs_to_create_on(stack, want, owned).await?;
                let o = self
                    .sync_load_balancer(stack.kind, want, owned, res)
                    .await?;
                (o.lb, o.leftovers)
            }
            None => (None, owned.into_iter().map(|(l, _)| l.arn).collect()),
        };
        let mut listener_leftovers = Vec::new();
        let frontend_nlb = match (stack.frontend_nlb.as_ref(), fe_planned) {
            (Some(f), Some(p)) => {
                let (nlb, ls) = self.sync_frontend_nlb(f, p, fe_owned, res).await?;
                res.frontend_nlb_arn = Some(nlb.arn.clone());
                listener_leftovers = ls;
                Some(nlb)
            }
            // Not modelled: the stack's own frontend NLB goes (listeners with it).
            _ => {
                leftovers.extend(fe_owned.into_iter().map(|(l, _)| l.arn));
                None
            }
        };
        Ok(LoadBalancers {
            lb,
            frontend_nlb,
            leftovers,
            listener_leftovers,
        })
    }

    /// The stack's load balancers the load-balancer step works on: `owned` when `want` is
    /// among them; else, since that step will create one, the inventory's from a listing begun
    /// now (the frontend NLB's left out). The listing the deploy started with may show the
    /// target groups and security groups someone else just made (upstream's controller putting
    /// its stack in place, say) but not the load balancer they made next: created on it, the
    /// stack would have two (a name taken is no refusal where the settings match). Under
    /// `EnableRGTAPI` the look is the deploy's own already.
    async fn lbs_to_create_on(
        &self,
        stack: &Stack,
        want: &model::LoadBalancer,
        owned: Vec<(aws::LoadBalancer, Tags)>,
    ) -> Result<Vec<(aws::LoadBalancer, Tags)>> {
        let kind = stack.kind;
        let found = owned
            .iter()
            .any(|(l, t)| super::load_balancer::pairs_with(kind, want, l, t));
        if found || self.tagging.is_some() {
            return Ok(owned);
        }
        self.inventory
            .ensure(Some(std::time::Instant::now()))
            .await?;
        let mut lbs = self.listed_lbs(kind, &stack.stack_id);
        // Split off as at the start of the deploy; the frontend NLB's step keeps what it had.
        frontend_nlb::split(stack, &mut lbs, &mut Vec::new());
        Ok(lbs)
    }

    /// Listeners and their rules on the load balancer `lb_arn`, then WAFv2, WAF Classic and
    /// Shield (upstream's order, after the rules); returns the listeners and the rules no model
    /// resource kept.
    pub(super) async fn sync_listeners_and_rules(
        &self,
        stack: &Stack,
        lb_arn: &str,
        addon_plan: &AddonPlan,
        res: &mut Resolved,
    ) -> Result<(Vec<String>, Vec<String>)> {
        res.load_balancer_arn = Some(lb_arn.to_string());
        // The certificates created for members in place of their tokens.
        let listeners = super::certificate::listeners_with_certificates(stack, res)?;
        let have = self.describe_listeners_of(lb_arn).await?;
        // AWS keeps rules on ALB listeners only: an NLB's have their default actions and nothing
        // to describe (as the frontend NLB's listeners never had).
        let rules_possible = stack
            .load_balancer
            .as_ref()
            .is_none_or(|l| l.lb_type != "network");
        // The rules of the listeners that stay, described first so that their tags and the
        // listeners' come in one DescribeTags (20 ARNs a request) rather than one per kind.
        let mut have_rules: BTreeMap<String, Vec<aws::Rule>> = BTreeMap::new();
        for h in have.iter().filter(|_| rules_possible) {
            if listeners.iter().any(|w| w.port == i32::from(h.port)) {
                have_rules.insert(h.arn.clone(), self.describe_rules_of(&h.arn).await?);
            }
        }
        if self.listener_rules_tagging {
            let arns: Vec<String> = have_rules
                .iter()
                .flat_map(|(l, rules)| {
                    std::iter::once(l.clone()).chain(rules.iter().map(|r| r.arn.clone()))
                })
                .collect();
            if !arns.is_empty() {
                // Into the tag cache, where the listener and rule steps read them.
                self.elb_tags(&arns).await?;
            }
        }
        let ls = self
            .sync_described_listeners(lb_arn, have, &listeners, res)
            .await?;
        res.listener_arns = ls.arns.clone();
        let mut rule_leftovers = Vec::new();
        for (port, arn) in &ls.arns {
            let rules: Vec<_> = stack
                .listener_rules
                .iter()
                .filter(|r| r.listener_arn == Token::ListenerArn(*port))
                .cloned()
                .collect();
            if !rules_possible && rules.is_empty() {
                continue;
            }
            let described = have_rules.remove(arn);
            rule_leftovers.extend(
                self.sync_rules(stack.kind, arn, described, &rules, res)
                    .await?,
            );
        }
        self.sync_addons(addon_plan, lb_arn).await?;
        Ok((ls.leftovers, rule_leftovers))
    }

    /// Deletes the leftovers in reverse order of creation: rules, listeners, load balancers,
    /// target groups, ACM certificates (once no listener serves them), security groups.
    pub(super) async fn delete_leftovers(&self, leftovers: Leftovers<'_>) -> Result<()> {
        for arn in leftovers.rules {
            self.delete_rule(arn).await?;
        }
        for arn in leftovers.listeners {
            match self.elbv2.delete_listener(arn).await {
                Err(e) if !e.is_not_found() => {
                    return Err(e).ctx(|| format!("delete listener {arn}"));
                }
                _ => {
                    self.tag_cache.forget(arn);
                    self.oidc_secrets.forget(arn);
                }
            }
        }
        for arn in leftovers.lbs {
            self.delete_lb(arn).await?;
        }
        for arn in leftovers.tgs {
            self.delete_tg(arn).await?;
        }
        self.delete_certificates(leftovers.certificates).await?;
        for g in leftovers.sgs {
            self.delete_sg(&g.id).await?;
        }
        Ok(())
    }
}
