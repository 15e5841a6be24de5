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
fn check_health_check_fields(effective: &HealthCheck, req: &HealthCheck) -> Result<()> {
    let http = matches!(effective.protocol.as_deref(), Some("HTTP") | Some("HTTPS"));
    if http {
        return Ok(());
    }
    let proto = effective.protocol.clone().unwrap_or_default();
    if req.path.is_some() {
        return Err(AwsError::validation(format!(
            "Health check path is not supported for health check protocol '{proto}'"
        )));
    }
    if req.matcher_http_code.is_some() || req.matcher_grpc_code.is_some() {
        return Err(AwsError::validation(format!(
            "Health check matcher is not supported for health check protocol '{proto}'"
        )));
    }
    Ok(())
}

// AWS echoes forward actions with explicit weights and stickiness; so does the fake, so a
// caller comparing desired and actual state meets the same normalisation as in AWS.

impl State {
    pub(crate) fn create_tg(&mut self, req: &CreateTargetGroup) -> Result<TargetGroup> {
        check_name("Target group", &req.name)?;
        let target_type = if req.target_type.is_empty() {
            "instance"
        } else {
            req.target_type.as_str()
        };
        if let Some(existing) = self.tgs.values().find(|r| r.tg.name == req.name) {
            let t = &existing.tg;
            if t.protocol == req.protocol
                && t.port == req.port
                && t.vpc_id == req.vpc_id
                && t.target_type == target_type
            {
                return Ok(t.clone());
            }
            return Err(invalid(
                "DuplicateTargetGroupName",
                format!(
                    "A target group with the same name '{}' exists, but with different settings",
                    req.name
                ),
            ));
        }
        if target_type != "lambda" {
            if req.protocol.is_none() || req.port.is_none() || req.vpc_id.is_none() {
                return Err(AwsError::validation("A protocol, port and VPC ID must be specified for target groups of this target type"));
            }
            let vpc = req.vpc_id.as_deref().unwrap_or_default();
            if !self.vpcs.contains_key(vpc) {
                return Err(AwsError::validation(format!(
                    "The VPC ID '{vpc}' is not found"
                )));
            }
        }
        if req.tags.len() > MAX_TAGS {
            return Err(invalid("TooManyTags", "The quota for the number of tags that can be assigned to a target group has been reached"));
        }
        let http = matches!(req.protocol.as_deref(), Some("HTTP") | Some("HTTPS"));
        let h = &req.health_check;
        let health_check = HealthCheck {
            enabled: Some(h.enabled.unwrap_or(true)),
            protocol: h.protocol.clone().or_else(|| {
                req.protocol
                    .clone()
                    .map(|p| if http { p } else { "TCP".into() })
            }),
            port: Some(h.port.clone().unwrap_or_else(|| "traffic-port".into())),
            path: h.path.clone().or_else(|| http.then(|| "/".into())),
            interval_seconds: Some(h.interval_seconds.unwrap_or(30)),
            timeout_seconds: Some(h.timeout_seconds.unwrap_or(if http { 5 } else { 10 })),
            healthy_threshold: Some(h.healthy_threshold.unwrap_or(5)),
            unhealthy_threshold: Some(h.unhealthy_threshold.unwrap_or(2)),
            matcher_http_code: h
                .matcher_http_code
                .clone()
                .or_else(|| (http && h.matcher_grpc_code.is_none()).then(|| "200".into())),
            matcher_grpc_code: h.matcher_grpc_code.clone(),
        };
        check_health_check_fields(&health_check, h)?;
        let arn = self.elb_arn(&format!("targetgroup/{}/{}", req.name, hex(16)));
        let tg = TargetGroup {
            arn: arn.clone(),
            name: req.name.clone(),
            protocol: req.protocol.clone(),
            protocol_version: req
                .protocol_version
                .clone()
                .or_else(|| http.then(|| "HTTP1".into())),
            port: req.port,
            vpc_id: req.vpc_id.clone(),
            target_type: target_type.into(),
            ip_address_type: Some(req.ip_address_type.clone().unwrap_or_else(|| "ipv4".into())),
            health_check,
            load_balancer_arns: vec![],
        };
        self.tgs.insert(
            arn.clone(),
            TgRec {
                tg: tg.clone(),
                attrs: default_tg_attrs(req.protocol.as_deref()),
                targets: BTreeMap::new(),
            },
        );
        self.elb_tags.insert(arn, req.tags.clone());
        Ok(tg)
    }

    pub(crate) fn tg_mut(&mut self, arn: &str) -> Result<&mut TgRec> {
        self.tgs.get_mut(arn).ok_or_else(|| tg_not_found(arn))
    }

    pub(crate) fn modify_tg(&mut self, arn: &str, h: &HealthCheck) -> Result<TargetGroup> {
        let mut after = self.tg_mut(arn)?.tg.health_check.clone();
        if h.protocol.is_some() {
            after.protocol.clone_from(&h.protocol);
        }
        check_health_check_fields(&after, h)?;
        let hc = &mut self.tg_mut(arn)?.tg.health_check;
        macro_rules! set { ($($f:ident),*) => { $( if h.$f.is_some() { hc.$f = h.$f.clone(); } )* } }
        set!(
            enabled,
            protocol,
            port,
            path,
            interval_seconds,
            timeout_seconds,
            healthy_threshold,
            unhealthy_threshold,
            matcher_http_code,
            matcher_grpc_code
        );
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
        let uses = |acts: &[Action]| {
            acts.iter().any(
                |a| matches!(a, Action::Forward(f) if f.target_groups.iter().any(|t| t.arn == arn)),
            )
        };
        self.listeners
            .values()
            .any(|l| uses(&l.listener.default_actions))
            || self.rules.values().any(|r| uses(&r.rule.actions))
    }

    /// Recomputes which load balancers use each target group, and the `unused` health of
    /// targets in groups no load balancer uses (AWS: `Target.NotInUse`).
    pub(crate) fn recompute_tg_usage(&mut self) {
        let mut usage: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut add = |acts: &[Action], lb: &str| {
            for a in acts {
                if let Action::Forward(f) = a {
                    for t in &f.target_groups {
                        let v = usage.entry(t.arn.clone()).or_default();
                        if !v.iter().any(|x| x == lb) {
                            v.push(lb.to_string());
                        }
                    }
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
