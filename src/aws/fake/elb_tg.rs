//! The fake's target groups and targets: creation with AWS's validation, in-use tracking,
//! registration and target health.

use std::collections::BTreeMap;

use super::state::{hex, tg_not_found, State, TargetRec, TgRec};
use crate::aws::error::{AwsError, Result};
use crate::aws::types::*;
use crate::aws::TARGETS_PER_CALL;

use super::elb::{check_name, invalid, MAX_TAGS};

fn default_tg_attrs(protocol: Option<&str>) -> Attributes {
    let http = matches!(protocol, Some("HTTP") | Some("HTTPS"));
    let mut a = Attributes::new();
    a.insert("deregistration_delay.timeout_seconds".into(), "300".into());
    a.insert("stickiness.enabled".into(), "false".into());
    a.insert(
        "stickiness.type".into(),
        if http { "lb_cookie" } else { "source_ip" }.into(),
    );
    if http {
        a.insert("load_balancing.algorithm.type".into(), "round_robin".into());
        a.insert("slow_start.duration_seconds".into(), "0".into());
        a.insert(
            "stickiness.lb_cookie.duration_seconds".into(),
            "86400".into(),
        );
    } else {
        a.insert("proxy_protocol_v2.enabled".into(), "false".into());
        a.insert("preserve_client_ip.enabled".into(), "false".into());
    }
    a
}

/// AWS refuses a path or a matcher in a TCP (or other non-HTTP) health check.
fn check_health_check_fields(hc: &crate::model::HealthCheck) -> Result<()> {
    let proto = hc.protocol.as_str();
    if matches!(proto, "HTTP" | "HTTPS") {
        return Ok(());
    }
    if health_check_path(hc).is_some() {
        return Err(AwsError::validation(format!(
            "Health check path is not supported for health check protocol '{proto}'"
        )));
    }
    if !hc.matcher.is_empty() {
        return Err(AwsError::validation(format!(
            "Health check matcher is not supported for health check protocol '{proto}'"
        )));
    }
    Ok(())
}

// AWS echoes forward actions with explicit weights and stickiness; so does the fake, so a
// caller comparing desired and actual state meets the same normalisation as in AWS.

impl State {
    /// CreateTargetGroup of the model's target group in `vpc_id`.
    pub(crate) fn create_tg(
        &mut self,
        want: NewTargetGroup<'_>,
        vpc_id: &str,
    ) -> Result<TargetGroup> {
        let name = want.name();
        check_name("Target group", name)?;
        let protocol = Some(want.protocol().as_str().to_string());
        let port = u16::try_from(want.port()).ok();
        let target_type = want.target_type();
        if let Some(existing) = self.tgs.values().find(|r| r.tg.name == name) {
            let t = &existing.tg;
            if t.protocol == protocol
                && t.port == port
                && t.vpc_id.as_deref() == Some(vpc_id)
                && t.target_type == target_type
            {
                return Ok(t.clone());
            }
            return Err(invalid(
                "DuplicateTargetGroupName",
                format!(
                    "A target group with the same name '{name}' exists, but with different settings"
                ),
            ));
        }
        if port.is_none() {
            return Err(AwsError::validation(format!(
                "Port {} is not valid for a target group",
                want.port()
            )));
        }
        if !self.vpcs.contains_key(vpc_id) {
            return Err(AwsError::validation(format!(
                "The VPC ID '{vpc_id}' is not found"
            )));
        }
        if want.tags().len() > MAX_TAGS {
            return Err(invalid("TooManyTags", "The quota for the number of tags that can be assigned to a target group has been reached"));
        }
        let hc = want.health_check();
        check_health_check_fields(hc)?;
        let health_check = DescribedHealthCheck::sent(hc)?;
        let http = matches!(protocol.as_deref(), Some("HTTP") | Some("HTTPS"));
        let arn = self.elb_arn(&format!("targetgroup/{name}/{}", hex(16)));
        let tg = TargetGroup {
            arn: arn.clone(),
            name: name.to_string(),
            protocol: protocol.clone(),
            protocol_version: want
                .protocol_version()
                .map(|v| v.as_str().to_string())
                .or_else(|| http.then(|| "HTTP1".into())),
            port,
            vpc_id: Some(vpc_id.to_string()),
            target_type: target_type.into(),
            ip_address_type: Some(
                tg_ip_address_type(want.ip_address_type())
                    .unwrap_or("ipv4")
                    .to_string(),
            ),
            health_check,
            target_control_port: want.target_control_port(),
            load_balancer_arns: vec![],
        };
        self.tgs.insert(
            arn.clone(),
            TgRec {
                tg: tg.clone(),
                attrs: default_tg_attrs(protocol.as_deref()),
                targets: BTreeMap::new(),
            },
        );
        self.elb_tags.insert(arn, want.tags().clone());
        Ok(tg)
    }

    /// A target group the controller never creates (a `lambda` one, one in another VPC...),
    /// put in place for a test as AWS would describe it; its ARN is made up from its name.
    pub(crate) fn seed_tg(&mut self, mut tg: TargetGroup, tags: Tags) -> TargetGroup {
        tg.arn = self.elb_arn(&format!("targetgroup/{}/{}", tg.name, hex(16)));
        self.tgs.insert(
            tg.arn.clone(),
            TgRec {
                tg: tg.clone(),
                attrs: default_tg_attrs(tg.protocol.as_deref()),
                targets: BTreeMap::new(),
            },
        );
        self.elb_tags.insert(tg.arn.clone(), tags);
        tg
    }

    pub(crate) fn tg_mut(&mut self, arn: &str) -> Result<&mut TgRec> {
        self.tgs.get_mut(arn).ok_or_else(|| tg_not_found(arn))
    }

    pub(crate) fn modify_tg(
        &mut self,
        arn: &str,
        hc: &crate::model::HealthCheck,
    ) -> Result<TargetGroup> {
        self.tg_mut(arn)?;
        check_health_check_fields(hc)?;
        let sent = DescribedHealthCheck::sent(hc)?;
        self.tg_mut(arn)?.tg.health_check.modified_by(&sent);
        Ok(self.tgs[arn].tg.clone())
    }

    pub(crate) fn delete_tg(&mut self, arn: &str) -> Result<()> {
        let Some(rec) = self.tgs.get(arn) else {
            return Ok(());
        };
        if !rec.tg.load_balancer_arns.is_empty() || self.tg_referenced(arn) {
            return Err(invalid(
                "ResourceInUse",
                format!("Target group '{arn}' is currently in use by a listener or a rule"),
            ));
        }
        self.tgs.remove(arn);
        self.elb_tags.remove(arn);
        Ok(())
    }

    pub(crate) fn tg_referenced(&self, arn: &str) -> bool {
        let uses = |acts: &[crate::model::Action]| forward_arns(acts).any(|t| t == arn);
        self.listeners
            .values()
            .any(|l| uses(&l.listener.default_actions))
            || self.rules.values().any(|r| uses(&r.rule.actions))
    }

    /// Recomputes which load balancers use each target group, and the `unused` health of
    /// targets in groups no load balancer uses (AWS: `Target.NotInUse`).
    pub(crate) fn recompute_tg_usage(&mut self) {
        let mut usage: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut add = |acts: &[crate::model::Action], lb: &str| {
            for t in forward_arns(acts) {
                let v = usage.entry(t.to_string()).or_default();
                if !v.iter().any(|x| x == lb) {
                    v.push(lb.to_string());
                }
            }
        };
        for l in self.listeners.values() {
            add(&l.listener.default_actions, &l.listener.load_balancer_arn);
        }
        for r in self.rules.values() {
            if let Some(l) = self.listeners.get(&r.listener_arn) {
                add(&r.rule.actions, &l.listener.load_balancer_arn);
            }
        }
        for (arn, rec) in self.tgs.iter_mut() {
            rec.tg.load_balancer_arns = usage.get(arn).cloned().unwrap_or_default();
            let used = !rec.tg.load_balancer_arns.is_empty();
            for t in rec.targets.values_mut() {
                let not_in_use = t.health.reason.as_deref() == Some("Target.NotInUse");
                if used && not_in_use {
                    t.health = TargetHealth {
                        state: TargetHealthState::Initial,
                        reason: Some("Elb.RegistrationInProgress".into()),
                        description: None,
                    };
                } else if !used && t.health.state != TargetHealthState::Draining {
                    t.health = unused_not_in_use();
                }
            }
        }
    }

    pub(crate) fn register(&mut self, arn: &str, targets: &[TargetDescription]) -> Result<()> {
        if targets.len() > TARGETS_PER_CALL {
            return Err(invalid(
                "TooManyTargets",
                "You can register at most 200 targets per request",
            ));
        }
        let rec = self.tg_mut(arn)?;
        for t in targets {
            match rec.tg.target_type.as_str() {
                "ip" if t.id.parse::<std::net::IpAddr>().is_err() => {
                    return Err(invalid(
                        "InvalidTarget",
                        format!("The IP address '{}' is not a valid IP address", t.id),
                    ))
                }
                "instance" if !t.id.starts_with("i-") => {
                    return Err(invalid(
                        "InvalidTarget",
                        format!("The following targets are not valid instances: '{}'", t.id),
                    ))
                }
                _ => {}
            }
            // A draining target may come back with a new QUIC server id; a live one may not.
            let live = rec
                .targets
                .get(&(t.id.clone(), t.port.or(rec.tg.port)))
                .filter(|x| x.health.state != TargetHealthState::Draining);
            super::elb_quic::check_target(&rec.tg, t, live.map(|x| &x.target))?;
        }
        let used = !rec.tg.load_balancer_arns.is_empty();
        for t in targets {
            let port = t.port.or(rec.tg.port);
            let key = (t.id.clone(), port);
            let fresh = || TargetRec {
                target: TargetDescription {
                    id: t.id.clone(),
                    port,
                    availability_zone: t.availability_zone.clone(),
                    quic_server_id: t.quic_server_id.clone(),
                },
                health: if used {
                    TargetHealth {
                        state: TargetHealthState::Initial,
                        reason: Some("Elb.RegistrationInProgress".into()),
                        description: None,
                    }
                } else {
                    unused_not_in_use()
                },
            };
            let entry = rec.targets.entry(key).or_insert_with(fresh);
            if entry.health.state == TargetHealthState::Draining {
                *entry = fresh();
            }
        }
        Ok(())
    }

    pub(crate) fn deregister(&mut self, arn: &str, targets: &[TargetDescription]) -> Result<()> {
        let drain = self.drain_on_deregister;
        let rec = self.tg_mut(arn)?;
        for t in targets {
            let held = rec.targets.get(&(t.id.clone(), t.port.or(rec.tg.port)));
            super::elb_quic::check_target(&rec.tg, t, held.map(|x| &x.target))?;
        }
        for t in targets {
            let key = (t.id.clone(), t.port.or(rec.tg.port));
            if drain {
                if let Some(x) = rec.targets.get_mut(&key) {
                    x.health = TargetHealth {
                        state: TargetHealthState::Draining,
                        reason: Some("Target.DeregistrationInProgress".into()),
                        description: Some("Target deregistration is in progress".into()),
                    };
                }
            } else {
                rec.targets.remove(&key);
            }
        }
        Ok(())
    }

    pub(crate) fn target_health(
        &self,
        arn: &str,
        targets: &[TargetDescription],
    ) -> Result<Vec<TargetHealthDescription>> {
        let rec = self.tgs.get(arn).ok_or_else(|| tg_not_found(arn))?;
        let hc_port = |port: Option<u16>| match rec.tg.health_check.port.as_deref() {
            Some("traffic-port") | None => port.map(|p| p.to_string()),
            Some(p) => Some(p.to_string()),
        };
        let describe = |t: &TargetRec| TargetHealthDescription {
            target: t.target.clone(),
            health_check_port: hc_port(t.target.port),
            health: t.health.clone(),
        };
        if targets.is_empty() {
            return Ok(rec.targets.values().map(describe).collect());
        }
        Ok(targets
            .iter()
            .map(|t| {
                let port = t.port.or(rec.tg.port);
                match rec.targets.get(&(t.id.clone(), port)) {
                    Some(x) => describe(x),
                    None => TargetHealthDescription {
                        target: TargetDescription {
                            id: t.id.clone(),
                            port,
                            availability_zone: t.availability_zone.clone(),
                            quic_server_id: t.quic_server_id.clone(),
                        },
                        health_check_port: hc_port(port),
                        health: TargetHealth {
                            state: TargetHealthState::Unused,
                            reason: Some("Target.NotRegistered".into()),
                            description: Some(
                                "Target is not registered to the target group".into(),
                            ),
                        },
                    },
                }
            })
            .collect())
    }
}

fn unused_not_in_use() -> TargetHealth {
    TargetHealth {
        state: TargetHealthState::Unused,
        reason: Some("Target.NotInUse".into()),
        description: Some(
            "Target group is not configured to receive traffic from the load balancer".into(),
        ),
    }
}
