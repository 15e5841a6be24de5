//! The fake's listener rules (priorities, conditions, atomic SetRulePriorities), actions as
//! ELBv2 stores and describes them, and ELBv2 tags.

use std::collections::{BTreeMap, BTreeSet};

use super::elb::invalid;
use super::state::{
    hex, lb_not_found, listener_not_found, rule_not_found, tg_not_found, RuleRec, State,
};
use crate::aws::error::{AwsError, Result};
use crate::aws::types::*;
use crate::aws::TAG_ARNS_PER_CALL;
use crate::model::{
    self, Action, AuthenticateOidcConfig, ForwardConfig, Redacted, RuleCondition, StickinessConfig,
    TargetGroupTuple,
};

/// Sorts rules as AWS lists them: by numeric priority, the default rule last.
fn priority_key(r: &Rule) -> u32 {
    r.priority.parse().unwrap_or(u32::MAX)
}

/// Actions as ELBv2 describes them: never with an OIDC client secret.
pub(super) fn described(actions: &[Action]) -> Vec<Action> {
    actions
        .iter()
        .map(|a| match a {
            Action::AuthenticateOidc { config } => Action::AuthenticateOidc {
                config: AuthenticateOidcConfig {
                    client_secret: Redacted::default(),
                    use_existing_client_secret: None,
                    ..config.clone()
                },
            },
            other => other.clone(),
        })
        .collect()
}

/// Actions as ELBv2 keeps them: forwards with each weight (1 when not given) and stickiness
/// (off when not given) filled in; OIDC without the name of the Secret, which AWS never sees.
pub(super) fn normalise(actions: &[Action]) -> Vec<Action> {
    actions
        .iter()
        .map(|a| match a {
            Action::Forward { config: f } => {
                let st = f.target_group_stickiness_config.clone().unwrap_or_default();
                Action::Forward {
                    config: ForwardConfig {
                        target_groups: f
                            .target_groups
                            .iter()
                            .map(|t| TargetGroupTuple {
                                target_group_arn: t.target_group_arn.clone(),
                                weight: Some(t.weight.unwrap_or(1)),
                            })
                            .collect(),
                        target_group_stickiness_config: Some(StickinessConfig {
                            enabled: Some(st.enabled.unwrap_or(false)),
                            duration_seconds: st.duration_seconds,
                        }),
                    },
                }
            }
            Action::AuthenticateOidc { config } => Action::AuthenticateOidc {
                config: AuthenticateOidcConfig {
                    secret: String::new(),
                    ..config.clone()
                },
            },
            other => other.clone(),
        })
        .collect()
}

impl State {
    pub(crate) fn describe_rules(&self, listener_arn: &str) -> Result<Vec<Rule>> {
        if !self.listeners.contains_key(listener_arn) {
            return Err(listener_not_found(listener_arn));
        }
        let mut v: Vec<Rule> = self
            .rules
            .values()
            .filter(|r| r.listener_arn == listener_arn)
            .map(|r| Rule {
                actions: described(&r.rule.actions),
                ..r.rule.clone()
            })
            .collect();
        v.sort_by_key(priority_key);
        Ok(v)
    }

    fn check_priority(&self, listener_arn: &str, priority: u32, except: &str) -> Result<()> {
        if !(1..=50000).contains(&priority) {
            return Err(AwsError::validation(format!(
                "Priority '{priority}' must be between 1 and 50000"
            )));
        }
        let p = priority.to_string();
        if self
            .rules
            .values()
            .any(|r| r.listener_arn == listener_arn && r.rule.priority == p && r.rule.arn != except)
        {
            return Err(invalid(
                "PriorityInUse",
                format!("Priority '{priority}' is currently in use"),
            ));
        }
        Ok(())
    }

    fn check_conditions(conditions: &[RuleCondition]) -> Result<()> {
        if conditions.is_empty() {
            return Err(AwsError::validation(
                "A rule must have at least one condition",
            ));
        }
        Ok(())
    }

    pub(crate) fn create_rule(&mut self, spec: &model::ListenerRule) -> Result<Rule> {
        let listener_arn = literal(&spec.listener_arn, "rule's listener")?;
        if !self.listeners.contains_key(listener_arn) {
            return Err(listener_not_found(listener_arn));
        }
        // A negative priority is out of range as AWS words it.
        let priority = u32::try_from(spec.priority).unwrap_or(0);
        self.check_priority(listener_arn, priority, "")?;
        Self::check_conditions(&spec.conditions)?;
        self.check_actions(&spec.actions)?;
        let l_part = listener_arn
            .split_once(":listener/")
            .map(|(_, r)| r)
            .unwrap_or_default()
            .to_string();
        let arn = self.elb_arn(&format!("listener-rule/{l_part}/{}", hex(16)));
        let rule = Rule {
            arn: arn.clone(),
            priority: priority.to_string(),
            is_default: false,
            conditions: spec.conditions.clone(),
            actions: normalise(&spec.actions),
            transforms: spec.transforms.clone(),
        };
        self.rules.insert(
            arn.clone(),
            RuleRec {
                listener_arn: listener_arn.into(),
                rule: rule.clone(),
            },
        );
        self.elb_tags.insert(arn, spec.tags.clone());
        self.recompute_tg_usage();
        Ok(rule)
    }

    pub(crate) fn modify_rule(&mut self, arn: &str, spec: &model::ListenerRule) -> Result<Rule> {
        let (conditions, actions, transforms) = (&spec.conditions, &spec.actions, &spec.transforms);
        let rec = self
            .rules
            .get(arn)
            .ok_or_else(|| rule_not_found(arn))?
            .clone();
        if rec.rule.is_default && !conditions.is_empty() {
            return Err(invalid(
                "OperationNotPermitted",
                "Conditions cannot be set on the default rule",
            ));
        }
        if !rec.rule.is_default {
            Self::check_conditions(conditions)?;
        }
        self.check_actions(actions)?;
        let actions = normalise(actions);
        if rec.rule.is_default {
            if let Some(l) = self.listeners.get_mut(&rec.listener_arn) {
                l.listener.default_actions = actions.clone();
            }
        }
        let r = self.rules.get_mut(arn).ok_or_else(|| rule_not_found(arn))?;
        r.rule.conditions = conditions.clone();
        r.rule.actions = actions;
        r.rule.transforms = transforms.clone();
        let out = r.rule.clone();
        self.recompute_tg_usage();
        Ok(out)
    }

    pub(crate) fn delete_rule(&mut self, arn: &str) -> Result<()> {
        let rec = self.rules.get(arn).ok_or_else(|| rule_not_found(arn))?;
        if rec.rule.is_default {
            return Err(invalid(
                "OperationNotPermitted",
                format!("Default rule '{arn}' cannot be deleted"),
            ));
        }
        self.rules.remove(arn);
        self.elb_tags.remove(arn);
        self.recompute_tg_usage();
        Ok(())
    }

    /// All pairs are applied together, so two rules can swap priorities in one request.
    pub(crate) fn set_priorities(&mut self, pairs: &[(String, u32)]) -> Result<()> {
        let mut next: BTreeMap<String, String> = BTreeMap::new();
        for (arn, p) in pairs {
            let rec = self.rules.get(arn).ok_or_else(|| rule_not_found(arn))?;
            if rec.rule.is_default {
                return Err(invalid(
                    "OperationNotPermitted",
                    format!("The priority of the default rule '{arn}' cannot be changed"),
                ));
            }
            if !(1..=50000).contains(p) {
                return Err(AwsError::validation(format!(
                    "Priority '{p}' must be between 1 and 50000"
                )));
            }
            next.insert(arn.clone(), p.to_string());
        }
        let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
        for r in self.rules.values().filter(|r| !r.rule.is_default) {
            let p = next
                .get(&r.rule.arn)
                .cloned()
                .unwrap_or_else(|| r.rule.priority.clone());
            if !seen.insert((r.listener_arn.clone(), p.clone())) {
                return Err(invalid(
                    "PriorityInUse",
                    format!("Priority '{p}' is currently in use"),
                ));
            }
        }
        for (arn, p) in next {
            if let Some(r) = self.rules.get_mut(&arn) {
                r.rule.priority = p;
            }
        }
        Ok(())
    }

    fn check_arn(&self, arn: &str) -> Result<()> {
        let exists = if arn.contains(":loadbalancer/") {
            self.lbs.contains_key(arn)
        } else if arn.contains(":targetgroup/") {
            self.tgs.contains_key(arn)
        } else if arn.contains(":listener-rule/") {
            self.rules.contains_key(arn)
        } else if arn.contains(":listener/") {
            self.listeners.contains_key(arn)
        } else {
            return Err(AwsError::validation(format!(
                "'{arn}' is not a valid load balancer resource ARN"
            )));
        };
        if exists {
            return Ok(());
        }
        Err(if arn.contains(":loadbalancer/") {
            lb_not_found(arn)
        } else if arn.contains(":targetgroup/") {
            tg_not_found(arn)
        } else if arn.contains(":listener-rule/") {
            rule_not_found(arn)
        } else {
            listener_not_found(arn)
        })
    }

    pub(crate) fn describe_tags(&self, arns: &[String]) -> Result<BTreeMap<String, Tags>> {
        if arns.len() > TAG_ARNS_PER_CALL {
            return Err(AwsError::validation(format!(
                "1 validation error detected: Value at 'resourceArns' failed to satisfy constraint: Member must have length less than or equal to {TAG_ARNS_PER_CALL}"
            )));
        }
        let mut out = BTreeMap::new();
        for a in arns {
            self.check_arn(a)?;
            out.insert(a.clone(), self.elb_tags.get(a).cloned().unwrap_or_default());
        }
        Ok(out)
    }

    pub(crate) fn add_tags(&mut self, arns: &[String], tags: &Tags) -> Result<()> {
        for a in arns {
            self.check_arn(a)?;
            self.check_tag_count(a, tags)?;
        }
        for a in arns {
            self.elb_tags
                .entry(a.clone())
                .or_default()
                .extend(tags.clone());
        }
        Ok(())
    }

    pub(crate) fn remove_tags(&mut self, arns: &[String], keys: &[String]) -> Result<()> {
        for a in arns {
            self.check_arn(a)?;
        }
        for a in arns {
            if let Some(t) = self.elb_tags.get_mut(a) {
                t.retain(|k, _| !keys.contains(k));
            }
        }
        Ok(())
    }
}
