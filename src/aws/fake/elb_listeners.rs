//! The fake's listeners, listener certificates, rules and ELBv2 tags.

use std::collections::{BTreeMap, BTreeSet};

use super::elb::{invalid, normalise};
use super::state::{hex, lb_not_found, not_found, tg_not_found, ListenerRec, RuleRec, State};
use crate::aws::error::{AwsError, Result};
use crate::aws::types::*;
use crate::aws::TAG_ARNS_PER_CALL;

fn listener_not_found(arn: &str) -> AwsError {
    not_found(
        "ListenerNotFound",
        format!("One or more listeners not found: '{arn}'"),
    )
}

fn rule_not_found(arn: &str) -> AwsError {
    not_found(
        "RuleNotFound",
        format!("One or more rules not found: '{arn}'"),
    )
}

/// Sorts rules as AWS lists them: by numeric priority, the default rule last.
fn priority_key(r: &Rule) -> u32 {
    r.priority.parse().unwrap_or(u32::MAX)
}

impl State {
    fn check_actions(&self, actions: &[Action]) -> Result<()> {
        if actions.is_empty() {
            return Err(AwsError::validation(
                "At least one action must be specified",
            ));
        }
        for a in actions {
            if let Action::Forward(f) = a {
                if f.target_groups.is_empty() {
                    return Err(AwsError::validation(
                        "A forward action must have at least one target group",
                    ));
                }
                if f.target_groups.len() > 5 {
                    return Err(invalid(
                        "TooManyTargetGroups",
                        "A forward action can have at most 5 target groups",
                    ));
                }
                for t in &f.target_groups {
                    if !self.tgs.contains_key(&t.arn) {
                        return Err(tg_not_found(&t.arn));
                    }
                }
            }
        }
        Ok(())
    }

    fn check_listener_spec(&self, lb_type: &str, spec: &ListenerSpec) -> Result<()> {
        if spec.port == 0 {
            return Err(AwsError::validation(
                "Listener port must be between 1 and 65535",
            ));
        }
        let allowed: &[&str] = if lb_type == "application" {
            &["HTTP", "HTTPS"]
        } else {
            &["TCP", "TLS", "UDP", "TCP_UDP"]
        };
        if !allowed.contains(&spec.protocol.as_str()) {
            return Err(invalid(
                "IncompatibleProtocols",
                format!(
                    "Listener protocol '{}' is not supported by this load balancer",
                    spec.protocol
                ),
            ));
        }
        if (spec.protocol == "HTTPS" || spec.protocol == "TLS") && spec.certificates.is_empty() {
            return Err(AwsError::validation(format!(
                "A certificate must be specified for {} listeners",
                spec.protocol
            )));
        }
        self.check_actions(&spec.default_actions)
    }

    pub(crate) fn describe_listeners(&self, lb_arn: &str) -> Result<Vec<Listener>> {
        if !self.lbs.contains_key(lb_arn) {
            return Err(lb_not_found(lb_arn));
        }
        let mut v: Vec<Listener> = self
            .listeners
            .values()
            .filter(|l| l.listener.load_balancer_arn == lb_arn)
            .map(|l| l.listener.clone())
            .collect();
        v.sort_by_key(|l| l.port);
        Ok(v)
    }

    pub(crate) fn create_listener(
        &mut self,
        lb_arn: &str,
        spec: &ListenerSpec,
    ) -> Result<Listener> {
        let lb = self
            .lbs
            .get(lb_arn)
            .ok_or_else(|| lb_not_found(lb_arn))?
            .lb
            .clone();
        if self
            .listeners
            .values()
            .any(|l| l.listener.load_balancer_arn == lb_arn && l.listener.port == spec.port)
        {
            return Err(invalid(
                "DuplicateListener",
                format!("A listener already exists on this port for this load balancer '{lb_arn}'"),
            ));
        }
        self.check_listener_spec(&lb.lb_type, spec)?;
        if spec.tags.len() > 50 {
            return Err(invalid("TooManyTags", "The quota for the number of tags that can be assigned to a listener has been reached"));
        }
        let lb_part = lb_arn
            .split_once(":loadbalancer/")
            .map(|(_, r)| r)
            .unwrap_or_default();
        let arn = self.elb_arn(&format!("listener/{lb_part}/{}", hex(16)));
        let listener = Listener {
            arn: arn.clone(),
            load_balancer_arn: lb_arn.into(),
            port: spec.port,
            protocol: spec.protocol.clone(),
            ssl_policy: spec.ssl_policy.clone().or_else(|| {
                matches!(spec.protocol.as_str(), "HTTPS" | "TLS")
                    .then(|| "ELBSecurityPolicy-2016-08".into())
            }),
            certificates: spec.certificates.iter().take(1).cloned().collect(),
            alpn_policy: spec.alpn_policy.clone(),
            default_actions: normalise(&spec.default_actions),
        };
        let extra_certs = spec.certificates.iter().skip(1).cloned().collect();
        self.listeners.insert(
            arn.clone(),
            ListenerRec {
                listener: listener.clone(),
                extra_certs,
            },
        );
        let l_part = arn
            .split_once(":listener/")
            .map(|(_, r)| r)
            .unwrap_or_default()
            .to_string();
        let rule_arn = self.elb_arn(&format!("listener-rule/{l_part}/{}", hex(16)));
        let rule = Rule {
            arn: rule_arn.clone(),
            priority: "default".into(),
            is_default: true,
            conditions: vec![],
            actions: listener.default_actions.clone(),
        };
        self.rules.insert(
            rule_arn,
            RuleRec {
                listener_arn: arn.clone(),
                rule,
            },
        );
        self.elb_tags.insert(arn, spec.tags.clone());
        self.recompute_tg_usage();
        Ok(listener)
    }

    pub(crate) fn modify_listener(&mut self, arn: &str, spec: &ListenerSpec) -> Result<Listener> {
        let current = self
            .listeners
            .get(arn)
            .ok_or_else(|| listener_not_found(arn))?
            .listener
            .clone();
        let lb_type = self
            .lbs
            .get(&current.load_balancer_arn)
            .map(|r| r.lb.lb_type.clone())
            .unwrap_or_default();
        if spec.port != current.port
            && self.listeners.values().any(|l| {
                l.listener.load_balancer_arn == current.load_balancer_arn
                    && l.listener.port == spec.port
            })
        {
            return Err(invalid(
                "DuplicateListener",
                format!(
                    "A listener already exists on this port for this load balancer '{}'",
                    current.load_balancer_arn
                ),
            ));
        }
        self.check_listener_spec(&lb_type, spec)?;
        let actions = normalise(&spec.default_actions);
        let rec = self
            .listeners
            .get_mut(arn)
            .ok_or_else(|| listener_not_found(arn))?;
        rec.listener.port = spec.port;
        rec.listener.protocol = spec.protocol.clone();
        rec.listener.ssl_policy = spec.ssl_policy.clone().or(rec.listener.ssl_policy.clone());
        rec.listener.certificates = spec.certificates.iter().take(1).cloned().collect();
        rec.listener.alpn_policy = spec.alpn_policy.clone();
        rec.listener.default_actions = actions.clone();
        let out = rec.listener.clone();
        if let Some(r) = self
            .rules
            .values_mut()
            .find(|r| r.listener_arn == arn && r.rule.is_default)
        {
            r.rule.actions = actions;
        }
        self.recompute_tg_usage();
        Ok(out)
    }

    pub(crate) fn drop_listener(&mut self, arn: &str) {
        self.listeners.remove(arn);
        self.elb_tags.remove(arn);
        let rules: Vec<String> = self
            .rules
            .values()
            .filter(|r| r.listener_arn == arn)
            .map(|r| r.rule.arn.clone())
            .collect();
        for r in rules {
            self.rules.remove(&r);
            self.elb_tags.remove(&r);
        }
    }

    pub(crate) fn delete_listener(&mut self, arn: &str) -> Result<()> {
        if !self.listeners.contains_key(arn) {
            return Err(listener_not_found(arn));
        }
        self.drop_listener(arn);
        self.recompute_tg_usage();
        Ok(())
    }

    pub(crate) fn listener_certs(&self, arn: &str) -> Result<Vec<ListenerCertificate>> {
        let rec = self
            .listeners
            .get(arn)
            .ok_or_else(|| listener_not_found(arn))?;
        let default = rec
            .listener
            .certificates
            .iter()
            .map(|c| ListenerCertificate {
                arn: c.clone(),
                is_default: true,
            });
        let extra = rec.extra_certs.iter().map(|c| ListenerCertificate {
            arn: c.clone(),
            is_default: false,
        });
        Ok(default.chain(extra).collect())
    }

    pub(crate) fn add_certs(&mut self, arn: &str, certs: &[String]) -> Result<()> {
        let rec = self
            .listeners
            .get_mut(arn)
            .ok_or_else(|| listener_not_found(arn))?;
        for c in certs {
            if !rec.extra_certs.contains(c) && !rec.listener.certificates.contains(c) {
                rec.extra_certs.push(c.clone());
            }
        }
        Ok(())
    }

    pub(crate) fn remove_certs(&mut self, arn: &str, certs: &[String]) -> Result<()> {
        let rec = self
            .listeners
            .get_mut(arn)
            .ok_or_else(|| listener_not_found(arn))?;
        if let Some(c) = certs.iter().find(|c| rec.listener.certificates.contains(c)) {
            return Err(invalid(
                "OperationNotPermitted",
                format!("The default certificate '{c}' cannot be removed from the listener"),
            ));
        }
        rec.extra_certs.retain(|c| !certs.contains(c));
        Ok(())
    }

    pub(crate) fn describe_rules(&self, listener_arn: &str) -> Result<Vec<Rule>> {
        if !self.listeners.contains_key(listener_arn) {
            return Err(listener_not_found(listener_arn));
        }
        let mut v: Vec<Rule> = self
            .rules
            .values()
            .filter(|r| r.listener_arn == listener_arn)
            .map(|r| r.rule.clone())
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

    pub(crate) fn create_rule(&mut self, listener_arn: &str, spec: &RuleSpec) -> Result<Rule> {
        if !self.listeners.contains_key(listener_arn) {
            return Err(listener_not_found(listener_arn));
        }
        self.check_priority(listener_arn, spec.priority, "")?;
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
            priority: spec.priority.to_string(),
            is_default: false,
            conditions: spec.conditions.clone(),
            actions: normalise(&spec.actions),
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

    pub(crate) fn modify_rule(
        &mut self,
        arn: &str,
        conditions: &[RuleCondition],
        actions: &[Action],
    ) -> Result<Rule> {
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
        r.rule.conditions = conditions.to_vec();
        r.rule.actions = actions;
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
