//! The fake's ELBv2: load balancers, target groups, targets, listeners, rules and tags, with
//! the validation AWS does and moto does not (names, duplicates, deletion protection, in-use,
//! tag limits, ≤ 20 ARNs per DescribeTags, atomic SetRulePriorities).

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::state::{
    digits, hex, lb_not_found, not_found, tg_not_found, LbRec, State, TargetRec, TgRec,
};
use super::FakeAws;
use crate::aws::error::{AwsError, Result};
use crate::aws::types::*;
use crate::aws::{ElbV2, TAG_ARNS_PER_CALL, TARGETS_PER_CALL};

const SVC: Service = Service::ElbV2;
const MAX_TAGS: usize = 50;

pub(super) fn invalid(code: &str, msg: impl Into<String>) -> AwsError {
    AwsError::from_code(code, msg, Some(400))
}

fn check_name(kind: &str, name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 32 {
        return Err(AwsError::validation(format!(
            "{kind} name '{name}' must be between 1 and 32 characters long"
        )));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        || name.starts_with('-')
        || name.ends_with('-')
    {
        return Err(AwsError::validation(format!(
            "{kind} name '{name}' can contain only alphanumeric characters and hyphens, and must not begin or end with a hyphen"
        )));
    }
    if kind == "Load balancer" && name.starts_with("internal-") {
        return Err(AwsError::validation(format!(
            "Load balancer name '{name}' cannot begin with 'internal-'"
        )));
    }
    Ok(())
}

fn hosted_zone(region: &str, lb_type: &str) -> String {
    match (region, lb_type) {
        ("us-west-2", "network") => "Z18D5FSROUN65G".into(),
        ("us-west-2", _) => "Z1H1FL5HABSF5".into(),
        ("us-east-1", "network") => "Z26RNL4JYFTOTI".into(),
        ("us-east-1", _) => "Z35SXDOTRQ7X7K".into(),
        _ => "Z0000000FAKEZONE".into(),
    }
}

fn default_lb_attrs(lb_type: &str) -> Attributes {
    let mut a: Attributes = [
        ("deletion_protection.enabled", "false"),
        ("load_balancing.cross_zone.enabled", "false"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    if lb_type == "application" {
        for (k, v) in [
            ("load_balancing.cross_zone.enabled", "true"),
            ("idle_timeout.timeout_seconds", "60"),
            ("routing.http2.enabled", "true"),
            ("routing.http.drop_invalid_header_fields.enabled", "false"),
            ("access_logs.s3.enabled", "false"),
            ("access_logs.s3.bucket", ""),
            ("access_logs.s3.prefix", ""),
            ("waf.fail_open.enabled", "false"),
            ("client_keep_alive.seconds", "3600"),
        ] {
            a.insert(k.into(), v.into());
        }
    } else {
        a.insert(
            "dns_record.client_routing_policy".into(),
            "any_availability_zone".into(),
        );
    }
    a
}

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

/// AWS echoes forward actions with explicit weights and stickiness; so does the fake, so a
/// caller comparing desired and actual state meets the same normalisation as in AWS.
pub(super) fn normalise(actions: &[Action]) -> Vec<Action> {
    actions
        .iter()
        .map(|a| match a {
            Action::Forward(f) => Action::Forward(ForwardConfig {
                target_groups: f
                    .target_groups
                    .iter()
                    .map(|t| WeightedTargetGroup {
                        arn: t.arn.clone(),
                        weight: Some(t.weight.unwrap_or(1)),
                    })
                    .collect(),
                stickiness: Some(f.stickiness.clone().unwrap_or_default()),
            }),
            other => other.clone(),
        })
        .collect()
}

impl State {
    pub(crate) fn check_subnets(
        &self,
        mappings: &[SubnetMapping],
        lb_type: &str,
    ) -> Result<String> {
        let mut vpc = String::new();
        let mut zones = Vec::new();
        for m in mappings {
            let s = self.subnets.get(&m.subnet_id).ok_or_else(|| {
                not_found(
                    "SubnetNotFound",
                    format!("The subnet ID '{}' is not valid", m.subnet_id),
                )
            })?;
            if !vpc.is_empty() && vpc != s.vpc_id {
                return Err(invalid(
                    "InvalidSubnet",
                    "All subnets must belong to the same VPC",
                ));
            }
            vpc = s.vpc_id.clone();
            if zones.contains(&s.availability_zone) {
                return Err(AwsError::validation(
                    "You cannot specify multiple subnets in the same Availability Zone",
                ));
            }
            zones.push(s.availability_zone.clone());
        }
        if lb_type == "application" && zones.len() < 2 {
            return Err(AwsError::validation(
                "At least two subnets in two different Availability Zones must be specified",
            ));
        }
        if zones.is_empty() {
            return Err(AwsError::validation(
                "At least one subnet must be specified",
            ));
        }
        Ok(vpc)
    }

    pub(crate) fn check_sgs(&self, sgs: &[String]) -> Result<()> {
        if let Some(bad) = sgs.iter().find(|g| !self.sgs.contains_key(*g)) {
            return Err(invalid(
                "InvalidSecurityGroup",
                format!("Security group '{bad}' does not exist"),
            ));
        }
        Ok(())
    }

    pub(crate) fn check_tag_count(&self, arn: &str, extra: &Tags) -> Result<()> {
        let mut all = self.elb_tags.get(arn).cloned().unwrap_or_default();
        all.extend(extra.clone());
        if all.len() > MAX_TAGS {
            return Err(invalid("TooManyTags", format!("The quota for the number of tags that can be assigned to '{arn}' has been reached")));
        }
        Ok(())
    }

    pub(crate) fn create_lb(&mut self, req: &CreateLoadBalancer) -> Result<LoadBalancer> {
        check_name("Load balancer", &req.name)?;
        let lb_type = if req.lb_type.is_empty() {
            "application"
        } else {
            req.lb_type.as_str()
        };
        let scheme = if req.scheme.is_empty() {
            "internet-facing"
        } else {
            req.scheme.as_str()
        };
        if let Some(existing) = self.lbs.values().find(|r| r.lb.name == req.name) {
            if existing.lb.lb_type == lb_type && existing.lb.scheme == scheme {
                return Ok(existing.lb.clone());
            }
            return Err(invalid(
                "DuplicateLoadBalancerName",
                format!(
                    "A load balancer with the same name '{}' exists, but with different settings",
                    req.name
                ),
            ));
        }
        let vpc_id = self.check_subnets(&req.subnet_mappings, lb_type)?;
        self.check_sgs(&req.security_groups)?;
        if req.tags.len() > MAX_TAGS {
            return Err(invalid("TooManyTags", "The quota for the number of tags that can be assigned to a load balancer has been reached"));
        }
        let short = if lb_type == "network" { "net" } else { "app" };
        let arn = self.elb_arn(&format!("loadbalancer/{short}/{}/{}", req.name, hex(16)));
        let prefix = if scheme == "internal" {
            "internal-"
        } else {
            ""
        };
        let dns_name = if lb_type == "network" {
            format!(
                "{prefix}{}-{}.elb.{}.amazonaws.com",
                req.name,
                hex(16),
                self.region
            )
        } else {
            format!(
                "{prefix}{}-{}.{}.elb.amazonaws.com",
                req.name,
                digits(10),
                self.region
            )
        };
        let lb = LoadBalancer {
            arn: arn.clone(),
            name: req.name.clone(),
            dns_name,
            canonical_hosted_zone_id: hosted_zone(&self.region, lb_type),
            scheme: scheme.into(),
            lb_type: lb_type.into(),
            ip_address_type: if req.ip_address_type.is_empty() {
                "ipv4".into()
            } else {
                req.ip_address_type.clone()
            },
            vpc_id,
            state: "active".into(),
            security_groups: req.security_groups.clone(),
            availability_zones: self.zones_of(&req.subnet_mappings),
        };
        self.lbs.insert(
            arn.clone(),
            LbRec {
                lb: lb.clone(),
                attrs: default_lb_attrs(lb_type),
            },
        );
        self.elb_tags.insert(arn, req.tags.clone());
        Ok(lb)
    }

    pub(crate) fn zones_of(&self, mappings: &[SubnetMapping]) -> Vec<LbZone> {
        mappings
            .iter()
            .filter_map(|m| self.subnets.get(&m.subnet_id))
            .map(|s| LbZone {
                zone_name: s.availability_zone.clone(),
                subnet_id: s.id.clone(),
            })
            .collect()
    }

    pub(crate) fn lb_mut(&mut self, arn: &str) -> Result<&mut LbRec> {
        self.lbs.get_mut(arn).ok_or_else(|| lb_not_found(arn))
    }

    pub(crate) fn delete_lb(&mut self, arn: &str) -> Result<()> {
        let Some(rec) = self.lbs.get(arn) else {
            return Ok(());
        };
        if rec
            .attrs
            .get("deletion_protection.enabled")
            .map(String::as_str)
            == Some("true")
        {
            return Err(invalid("OperationNotPermitted", format!("Load balancer '{arn}' cannot be deleted because deletion protection is enabled")));
        }
        self.lbs.remove(arn);
        self.elb_tags.remove(arn);
        let listeners: Vec<String> = self
            .listeners
            .values()
            .filter(|l| l.listener.load_balancer_arn == arn)
            .map(|l| l.listener.arn.clone())
            .collect();
        for l in listeners {
            self.drop_listener(&l);
        }
        self.recompute_tg_usage();
        Ok(())
    }

    pub(crate) fn modify_lb_attrs(&mut self, arn: &str, attrs: &Attributes) -> Result<Attributes> {
        let rec = self.lb_mut(arn)?;
        for (k, v) in attrs {
            if !rec.attrs.contains_key(k)
                && !k.starts_with("access_logs.")
                && !k.starts_with("routing.")
                && !k.starts_with("connection_logs.")
            {
                return Err(invalid(
                    "InvalidConfigurationRequest",
                    format!("Load balancer attribute key '{k}' is not recognized"),
                ));
            }
            if k.ends_with(".enabled") && v != "true" && v != "false" {
                return Err(AwsError::validation(format!(
                    "Load balancer attribute value '{v}' for key '{k}' must be 'true' or 'false'"
                )));
            }
        }
        rec.attrs.extend(attrs.clone());
        Ok(rec.attrs.clone())
    }

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

#[async_trait]
impl ElbV2 for FakeAws {
    async fn describe_load_balancers(&self, q: &LoadBalancerQuery) -> Result<Vec<LoadBalancer>> {
        self.run(SVC, "DescribeLoadBalancers", |st| {
            if !q.arns.is_empty() && !q.names.is_empty() {
                return Err(AwsError::validation("Load balancer names and load balancer ARNs cannot be specified at the same time"));
            }
            for a in &q.arns {
                if !st.lbs.contains_key(a) {
                    return Err(lb_not_found(a));
                }
            }
            for n in &q.names {
                if !st.lbs.values().any(|r| &r.lb.name == n) {
                    return Err(not_found("LoadBalancerNotFound", format!("Load balancers '[{n}]' not found")));
                }
            }
            Ok(st
                .lbs
                .values()
                .filter(|r| (q.arns.is_empty() || q.arns.contains(&r.lb.arn)) && (q.names.is_empty() || q.names.contains(&r.lb.name)))
                .map(|r| r.lb.clone())
                .collect())
        })
        .await
    }

    async fn create_load_balancer(&self, req: &CreateLoadBalancer) -> Result<LoadBalancer> {
        self.run(SVC, "CreateLoadBalancer", |st| st.create_lb(req))
            .await
    }

    async fn delete_load_balancer(&self, arn: &str) -> Result<()> {
        self.run(SVC, "DeleteLoadBalancer", |st| st.delete_lb(arn))
            .await
    }

    async fn describe_load_balancer_attributes(&self, arn: &str) -> Result<Attributes> {
        self.run(SVC, "DescribeLoadBalancerAttributes", |st| {
            Ok(st.lb_mut(arn)?.attrs.clone())
        })
        .await
    }

    async fn modify_load_balancer_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes> {
        self.run(SVC, "ModifyLoadBalancerAttributes", |st| {
            st.modify_lb_attrs(arn, attrs)
        })
        .await
    }

    async fn set_security_groups(&self, arn: &str, security_groups: &[String]) -> Result<()> {
        self.run(SVC, "SetSecurityGroups", |st| {
            st.lb_mut(arn)?;
            st.check_sgs(security_groups)?;
            st.lb_mut(arn)?.lb.security_groups = security_groups.to_vec();
            Ok(())
        })
        .await
    }

    async fn set_subnets(&self, arn: &str, subnets: &[SubnetMapping]) -> Result<()> {
        self.run(SVC, "SetSubnets", |st| {
            let lb_type = st.lb_mut(arn)?.lb.lb_type.clone();
            st.check_subnets(subnets, &lb_type)?;
            let zones = st.zones_of(subnets);
            st.lb_mut(arn)?.lb.availability_zones = zones;
            Ok(())
        })
        .await
    }

    async fn set_ip_address_type(&self, arn: &str, ip_address_type: &str) -> Result<()> {
        self.run(SVC, "SetIpAddressType", |st| {
            if !["ipv4", "dualstack", "dualstack-without-public-ipv4"].contains(&ip_address_type) {
                return Err(AwsError::validation(format!(
                    "IP address type '{ip_address_type}' is not valid"
                )));
            }
            st.lb_mut(arn)?.lb.ip_address_type = ip_address_type.into();
            Ok(())
        })
        .await
    }

    async fn describe_target_groups(&self, q: &TargetGroupQuery) -> Result<Vec<TargetGroup>> {
        self.run(SVC, "DescribeTargetGroups", |st| {
            if let Some(lb) = &q.load_balancer_arn {
                if !st.lbs.contains_key(lb) {
                    return Err(lb_not_found(lb));
                }
            }
            for a in &q.arns {
                if !st.tgs.contains_key(a) {
                    return Err(tg_not_found(a));
                }
            }
            for n in &q.names {
                if !st.tgs.values().any(|r| &r.tg.name == n) {
                    return Err(not_found(
                        "TargetGroupNotFound",
                        format!("One or more target groups not found: '{n}'"),
                    ));
                }
            }
            Ok(st
                .tgs
                .values()
                .map(|r| &r.tg)
                .filter(|t| q.arns.is_empty() || q.arns.contains(&t.arn))
                .filter(|t| q.names.is_empty() || q.names.contains(&t.name))
                .filter(|t| {
                    q.load_balancer_arn
                        .as_ref()
                        .is_none_or(|lb| t.load_balancer_arns.contains(lb))
                })
                .cloned()
                .collect())
        })
        .await
    }

    async fn create_target_group(&self, req: &CreateTargetGroup) -> Result<TargetGroup> {
        self.run(SVC, "CreateTargetGroup", |st| st.create_tg(req))
            .await
    }

    async fn modify_target_group(
        &self,
        arn: &str,
        health_check: &HealthCheck,
    ) -> Result<TargetGroup> {
        self.run(SVC, "ModifyTargetGroup", |st| {
            st.modify_tg(arn, health_check)
        })
        .await
    }

    async fn delete_target_group(&self, arn: &str) -> Result<()> {
        self.run(SVC, "DeleteTargetGroup", |st| st.delete_tg(arn))
            .await
    }

    async fn describe_target_group_attributes(&self, arn: &str) -> Result<Attributes> {
        self.run(SVC, "DescribeTargetGroupAttributes", |st| {
            Ok(st.tg_mut(arn)?.attrs.clone())
        })
        .await
    }

    async fn modify_target_group_attributes(
        &self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes> {
        self.run(SVC, "ModifyTargetGroupAttributes", |st| {
            let rec = st.tg_mut(arn)?;
            if let Some(v) = attrs.get("deregistration_delay.timeout_seconds") {
                if !v.parse::<u32>().is_ok_and(|n| n <= 3600) {
                    return Err(AwsError::validation(format!(
                        "Deregistration delay '{v}' must be an integer between 0 and 3600"
                    )));
                }
            }
            rec.attrs.extend(attrs.clone());
            Ok(rec.attrs.clone())
        })
        .await
    }

    async fn register_targets(&self, tg_arn: &str, targets: &[TargetDescription]) -> Result<()> {
        for chunk in targets.chunks(TARGETS_PER_CALL) {
            self.run(SVC, "RegisterTargets", |st| st.register(tg_arn, chunk))
                .await?;
        }
        Ok(())
    }

    async fn deregister_targets(&self, tg_arn: &str, targets: &[TargetDescription]) -> Result<()> {
        for chunk in targets.chunks(TARGETS_PER_CALL) {
            self.run(SVC, "DeregisterTargets", |st| st.deregister(tg_arn, chunk))
                .await?;
        }
        Ok(())
    }

    async fn describe_target_health(
        &self,
        tg_arn: &str,
        targets: &[TargetDescription],
    ) -> Result<Vec<TargetHealthDescription>> {
        self.run(SVC, "DescribeTargetHealth", |st| {
            st.target_health(tg_arn, targets)
        })
        .await
    }

    async fn describe_listeners(&self, lb_arn: &str) -> Result<Vec<Listener>> {
        self.run(SVC, "DescribeListeners", |st| st.describe_listeners(lb_arn))
            .await
    }

    async fn create_listener(&self, lb_arn: &str, spec: &ListenerSpec) -> Result<Listener> {
        self.run(SVC, "CreateListener", |st| st.create_listener(lb_arn, spec))
            .await
    }

    async fn modify_listener(&self, arn: &str, spec: &ListenerSpec) -> Result<Listener> {
        self.run(SVC, "ModifyListener", |st| st.modify_listener(arn, spec))
            .await
    }

    async fn delete_listener(&self, arn: &str) -> Result<()> {
        self.run(SVC, "DeleteListener", |st| st.delete_listener(arn))
            .await
    }

    async fn describe_listener_certificates(&self, arn: &str) -> Result<Vec<ListenerCertificate>> {
        self.run(SVC, "DescribeListenerCertificates", |st| {
            st.listener_certs(arn)
        })
        .await
    }

    async fn add_listener_certificates(&self, arn: &str, cert_arns: &[String]) -> Result<()> {
        self.run(SVC, "AddListenerCertificates", |st| {
            st.add_certs(arn, cert_arns)
        })
        .await
    }

    async fn remove_listener_certificates(&self, arn: &str, cert_arns: &[String]) -> Result<()> {
        self.run(SVC, "RemoveListenerCertificates", |st| {
            st.remove_certs(arn, cert_arns)
        })
        .await
    }

    async fn describe_rules(&self, listener_arn: &str) -> Result<Vec<Rule>> {
        self.run(SVC, "DescribeRules", |st| st.describe_rules(listener_arn))
            .await
    }

    async fn create_rule(&self, listener_arn: &str, spec: &RuleSpec) -> Result<Rule> {
        self.run(SVC, "CreateRule", |st| st.create_rule(listener_arn, spec))
            .await
    }

    async fn modify_rule(
        &self,
        arn: &str,
        conditions: &[RuleCondition],
        actions: &[Action],
    ) -> Result<Rule> {
        self.run(SVC, "ModifyRule", |st| {
            st.modify_rule(arn, conditions, actions)
        })
        .await
    }

    async fn delete_rule(&self, arn: &str) -> Result<()> {
        self.run(SVC, "DeleteRule", |st| st.delete_rule(arn)).await
    }

    async fn set_rule_priorities(&self, priorities: &[(String, u32)]) -> Result<()> {
        self.run(SVC, "SetRulePriorities", |st| st.set_priorities(priorities))
            .await
    }

    async fn describe_tags(&self, arns: &[String]) -> Result<BTreeMap<String, Tags>> {
        let mut out = BTreeMap::new();
        for chunk in arns.chunks(TAG_ARNS_PER_CALL) {
            out.extend(
                self.run(SVC, "DescribeTags", |st| st.describe_tags(chunk))
                    .await?,
            );
        }
        Ok(out)
    }

    async fn add_tags(&self, arns: &[String], tags: &Tags) -> Result<()> {
        self.run(SVC, "AddTags", |st| st.add_tags(arns, tags)).await
    }

    async fn remove_tags(&self, arns: &[String], keys: &[String]) -> Result<()> {
        self.run(SVC, "RemoveTags", |st| st.remove_tags(arns, keys))
            .await
    }
}
