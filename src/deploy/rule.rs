//! Listener rules, planned as a pure function: described rules are paired with model rules
//! first by identical (normalised) conditions and actions — those at most change priority,
//! all moves in one SetRulePriorities — then by resource id / priority, then any leftover —
//! those are changed in place with ModifyRule (never delete-then-create). Only surplus rules
//! are created or deleted; a surplus rule that holds a priority another rule moves to is
//! deleted before the move, the rest in the cleanup phase.

use std::collections::BTreeSet;

use super::compare;
use super::error::{Context, Error, Result};
use super::resolve::Resolved;
use super::tags;
use super::Deployer;
use crate::aws;
use crate::model::{self, StackKind, Token};

/// A model rule as it goes to AWS (on its listener's ARN, target groups as ARNs), with its
/// priority checked.
#[derive(Debug, Clone, PartialEq)]
pub struct WantRule {
    pub priority: u32,
    pub rule: model::ListenerRule,
}

/// A described (non-default) rule with its resource-id tag, if any.
#[derive(Debug, Clone)]
pub struct HaveRule {
    pub rule: aws::Rule,
    pub priority: u32,
    pub resource_id: Option<String>,
}

/// What to do on one listener; indexes point into the `want` slice.
#[derive(Debug, Default, PartialEq)]
pub struct RulePlan {
    /// Every pairing (want index, rule ARN), modified or not.
    pub paired: Vec<(usize, String)>,
    /// Pairs whose conditions or actions change (ModifyRule).
    pub modify: Vec<(usize, String)>,
    /// One SetRulePriorities request.
    pub priorities: Vec<(String, u32)>,
    pub create: Vec<usize>,
    /// Surplus rules in the way of a priority move: deleted before the move.
    pub delete_first: Vec<String>,
    /// Other surplus rules: deleted in the cleanup phase.
    pub delete_later: Vec<String>,
}

pub fn plan(want: &[WantRule], have: &[HaveRule]) -> RulePlan {
    let mut used = vec![false; have.len()];
    let mut pair: Vec<Option<usize>> = vec![None; want.len()];
    let mut claim = |pair: &mut Vec<Option<usize>>, f: &dyn Fn(&WantRule, &HaveRule) -> bool| {
        for (wi, w) in want.iter().enumerate() {
            if pair[wi].is_some() {
                continue;
            }
            if let Some(hi) = (0..have.len()).find(|&hi| !used[hi] && f(w, &have[hi])) {
                used[hi] = true;
                pair[wi] = Some(hi);
            }
        }
    };
    let same = |w: &WantRule, h: &HaveRule| compare::same_rule(&w.rule, &h.rule);
    claim(&mut pair, &|w, h| same(w, h) && w.priority == h.priority);
    claim(&mut pair, &|w, h| same(w, h));
    claim(&mut pair, &|w, h| {
        h.resource_id.as_deref() == Some(w.rule.id.as_str())
    });
    claim(&mut pair, &|w, h| h.priority == w.priority);
    claim(&mut pair, &|_, _| true);

    let mut p = RulePlan::default();
    let mut taken: BTreeSet<u32> = BTreeSet::new();
    for (wi, w) in want.iter().enumerate() {
        match pair[wi] {
            Some(hi) => {
                let h = &have[hi];
                p.paired.push((wi, h.rule.arn.clone()));
                if !same(w, h) {
                    p.modify.push((wi, h.rule.arn.clone()));
                }
                if h.priority != w.priority {
                    p.priorities.push((h.rule.arn.clone(), w.priority));
                    taken.insert(w.priority);
                }
            }
            None => {
                p.create.push(wi);
                taken.insert(w.priority);
            }
        }
    }
    for (hi, h) in have.iter().enumerate() {
        if used[hi] {
            continue;
        }
        if taken.contains(&h.priority) {
            p.delete_first.push(h.rule.arn.clone());
        } else {
            p.delete_later.push(h.rule.arn.clone());
        }
    }
    p
}

/// The model rule on `listener_arn`, its actions' target groups as ARNs.
pub fn want_rule(r: &model::ListenerRule, listener_arn: &str, res: &Resolved) -> Result<WantRule> {
    let priority = u32::try_from(r.priority)
        .map_err(|_| Error::Invalid(format!("invalid priority {} of rule {}", r.priority, r.id)))?;
    Ok(WantRule {
        priority,
        rule: model::ListenerRule {
            listener_arn: Token::Literal(listener_arn.to_string()),
            actions: res.actions(&r.actions)?,
            ..r.clone()
        },
    })
}

impl Deployer {
    /// The non-default rules of one listener, OIDC client secrets filled in.
    pub(crate) async fn describe_rules_of(&self, listener_arn: &str) -> Result<Vec<aws::Rule>> {
        let described = self
            .elbv2
            .describe_rules(listener_arn)
            .await
            .ctx(|| format!("describe rules of {listener_arn}"))?;
        let mut rules: Vec<aws::Rule> = described.into_iter().filter(|r| !r.is_default).collect();
        for r in &mut rules {
            self.oidc_secrets.fill(&r.arn, &mut r.actions);
        }
        Ok(rules)
    }

    /// Reconciles the rules of one listener (`described`: its rules from
    /// [`Self::describe_rules_of`], when already read); returns the rules to delete in the
    /// cleanup phase.
    pub(crate) async fn sync_rules(
        &self,
        kind: StackKind,
        listener_arn: &str,
        described: Option<Vec<aws::Rule>>,
        want: &[model::ListenerRule],
        res: &Resolved,
    ) -> Result<Vec<String>> {
        let want: Vec<WantRule> = want
            .iter()
            .map(|r| want_rule(r, listener_arn, res))
            .collect::<Result<_>>()?;
        let rules = match described {
            Some(rules) => rules,
            None => self.describe_rules_of(listener_arn).await?,
        };
        let arns: Vec<String> = rules.iter().map(|r| r.arn.clone()).collect();
        let mut tag_map = if self.listener_rules_tagging && !arns.is_empty() {
            self.elb_tags(&arns).await?
        } else {
            Default::default()
        };
        let have: Vec<HaveRule> = rules
            .into_iter()
            .map(|rule| HaveRule {
                priority: rule.priority.parse().unwrap_or(u32::MAX),
                // Ingress and ALB Gateway stacks have listener rules, each with its own prefix.
                resource_id: tag_map
                    .get(&rule.arn)
                    .and_then(|t| tags::resource_id(t, kind).map(String::from)),
                rule,
            })
            .collect();
        let p = plan(&want, &have);
        for (wi, arn) in &p.modify {
            let w = &want[*wi].rule;
            self.elbv2
                .modify_rule(arn, w)
                .await
                .ctx(|| format!("modify rule {}", w.id))?;
        }
        for arn in &p.delete_first {
            self.delete_rule(arn).await?;
        }
        if !p.priorities.is_empty() {
            self.elbv2
                .set_rule_priorities(&p.priorities)
                .await
                .ctx(|| format!("set rule priorities on {listener_arn}"))?;
        }
        for wi in &p.create {
            let mut rule = want[*wi].rule.clone();
            if !self.listener_rules_tagging {
                rule.tags.clear();
            }
            let created = self
                .elbv2
                .create_rule(&rule)
                .await
                .ctx(|| format!("create rule {}", rule.id))?;
            self.oidc_secrets.record(&created.arn, &rule.actions);
            self.tag_cache.put(&created.arn, rule.tags);
        }
        // Modified or found equal: each paired rule now carries the wanted actions.
        for (wi, arn) in &p.paired {
            self.oidc_secrets.record(arn, &want[*wi].rule.actions);
        }
        if self.listener_rules_tagging {
            for (wi, arn) in &p.paired {
                let actual = tag_map.remove(arn).unwrap_or_default();
                self.reconcile_elb_tags(arn, &want[*wi].rule.tags, &actual)
                    .await?;
            }
        }
        Ok(p.delete_later)
    }

    /// Deletes a rule; gone counts as deleted.
    pub(crate) async fn delete_rule(&self, arn: &str) -> Result<()> {
        match self.elbv2.delete_rule(arn).await {
            Err(e) if !e.is_not_found() => Err(Error::Aws {
                what: format!("delete rule {arn}"),
                source: e,
            }),
            _ => {
                self.tag_cache.forget(arn);
                self.oidc_secrets.forget(arn);
                Ok(())
            }
        }
    }
}

#[cfg(test)]
#[path = "rule_tests.rs"]
mod tests;
