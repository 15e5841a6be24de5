//! What the AWS layer reads off the model values the deployer hands it: the model's load
//! balancer and target groups are the requests (no request copy that could lose a field).
//! Shared by the SDK conversions, the fake and the `diff` recorder, so all three refuse the same
//! unfinished values: a reference (`Token`) not resolved yet, subnets not chosen yet, security
//! group names not looked up yet, a health-check matcher key AWS has no field for.

use super::{DescribedHealthCheck, SubnetMapping, Tags};
use crate::aws::error::{AwsError, Result};
use crate::model::{self, AlbTargetGroup, HealthCheck, Protocol, ProtocolVersion, Subnets, Token};

/// A target group CreateTargetGroup makes: one of the model's two kinds, sent as it is (the
/// VPC, known at deploy time only, goes beside it).
#[derive(Debug, Clone, Copy)]
pub enum NewTargetGroup<'a> {
    /// An `instance` or `ip` target group of a Service backend.
    Service(&'a model::TargetGroup),
    /// An `alb`-type target group, whose one target is an ALB (frontend NLB, an NLB Gateway's
    /// `Gateway` backends).
    Alb(&'a AlbTargetGroup),
}

impl<'a> From<&'a model::TargetGroup> for NewTargetGroup<'a> {
    fn from(tg: &'a model::TargetGroup) -> Self {
        NewTargetGroup::Service(tg)
    }
}

impl<'a> From<&'a AlbTargetGroup> for NewTargetGroup<'a> {
    fn from(tg: &'a AlbTargetGroup) -> Self {
        NewTargetGroup::Alb(tg)
    }
}

impl<'a> NewTargetGroup<'a> {
    pub fn name(&self) -> &'a str {
        match self {
            NewTargetGroup::Service(t) => &t.name,
            NewTargetGroup::Alb(t) => &t.name,
        }
    }

    /// `instance`, `ip` or `alb`.
    pub fn target_type(&self) -> &'static str {
        match self {
            NewTargetGroup::Service(t) => t.target_type.as_str(),
            NewTargetGroup::Alb(_) => "alb",
        }
    }

    pub fn protocol(&self) -> Protocol {
        match self {
            NewTargetGroup::Service(t) => t.protocol,
            NewTargetGroup::Alb(t) => t.protocol,
        }
    }

    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        match self {
            NewTargetGroup::Service(t) => t.protocol_version,
            NewTargetGroup::Alb(_) => None,
        }
    }

    pub fn port(&self) -> i32 {
        match self {
            NewTargetGroup::Service(t) => t.port,
            NewTargetGroup::Alb(t) => t.port,
        }
    }

    /// `ipv4` or `ipv6`.
    pub fn ip_address_type(&self) -> &'a str {
        match self {
            NewTargetGroup::Service(t) => &t.ip_address_type,
            NewTargetGroup::Alb(t) => &t.ip_address_type,
        }
    }

    pub fn health_check(&self) -> &'a HealthCheck {
        match self {
            NewTargetGroup::Service(t) => &t.health_check,
            NewTargetGroup::Alb(t) => &t.health_check,
        }
    }

    pub fn target_control_port(&self) -> Option<i32> {
        match self {
            NewTargetGroup::Service(t) => t.target_control_port,
            NewTargetGroup::Alb(_) => None,
        }
    }

    pub fn tags(&self) -> &'a Tags {
        match self {
            NewTargetGroup::Service(t) => &t.tags,
            NewTargetGroup::Alb(t) => &t.tags,
        }
    }
}

/// A model value the AWS layer cannot send: the deployer has not finished it.
fn unfinished(message: String) -> AwsError {
    AwsError::Validation {
        code: "UnresolvedModelValue".into(),
        message,
    }
}

/// The value of a reference the deployer has resolved; a reference still open is refused.
pub fn literal_token<'t>(t: &'t Token, what: &str) -> Result<&'t str> {
    match t {
        Token::Literal(s) => Ok(s),
        other => Err(unfinished(format!(
            "{what} is still a reference ({other:?}): resolve it before the call"
        ))),
    }
}

/// The security group ids of a load balancer to create (literal ids only).
pub fn lb_security_groups(lb: &model::LoadBalancer) -> Result<Vec<String>> {
    if !lb.security_group_names_or_ids.is_empty() {
        return Err(unfinished(format!(
            "load balancer {}: security groups {:?} are not looked up yet",
            lb.name, lb.security_group_names_or_ids
        )));
    }
    let what = format!("a security group of load balancer {}", lb.name);
    lb.security_groups
        .iter()
        .map(|t| literal_token(t, &what).map(str::to_string))
        .collect()
}

/// The subnet mappings of a load balancer to create: its subnets must be chosen (`Resolved`);
/// each gets the model's mapping for it (EIP, addresses, source-NAT prefix), else a bare one.
pub fn lb_subnet_mappings(lb: &model::LoadBalancer) -> Result<Vec<SubnetMapping>> {
    match &lb.subnets {
        Subnets::Resolved(ids) => Ok(lb.subnet_mappings_for(ids)),
        other => Err(unfinished(format!(
            "load balancer {}: subnets are not chosen yet ({other:?})",
            lb.name
        ))),
    }
}

/// The health check's matcher as AWS takes it: (`HttpCode`, `GrpcCode`). The model keys them
/// `httpCode` / `grpcCode`; any other key has no AWS field and is refused.
pub fn matcher_codes(hc: &HealthCheck) -> Result<(Option<String>, Option<String>)> {
    if let Some(k) = hc
        .matcher
        .keys()
        .find(|k| *k != "httpCode" && *k != "grpcCode")
    {
        return Err(unfinished(format!(
            "health check matcher key {k:?} is neither httpCode nor grpcCode"
        )));
    }
    Ok((
        hc.matcher.get("httpCode").cloned(),
        hc.matcher.get("grpcCode").cloned(),
    ))
}

/// The health check path to send: none for TCP health checks, which AWS refuses one.
pub fn health_check_path(hc: &HealthCheck) -> Option<String> {
    (!hc.path.is_empty()).then(|| hc.path.clone())
}

impl DescribedHealthCheck {
    /// The health check AWS keeps after a create or modify sending the model's `hc` (every
    /// field is sent, as the SDK conversion sends it); the fake and the `diff` recorder describe
    /// what they were sent with it.
    pub fn sent(hc: &HealthCheck) -> Result<Self> {
        let (http, grpc) = matcher_codes(hc)?;
        Ok(DescribedHealthCheck {
            enabled: Some(true),
            protocol: Some(hc.protocol.as_str().to_string()),
            port: Some(hc.port.clone()),
            path: health_check_path(hc),
            interval_seconds: Some(hc.interval_seconds),
            timeout_seconds: Some(hc.timeout_seconds),
            healthy_threshold: Some(hc.healthy_threshold_count),
            unhealthy_threshold: Some(hc.unhealthy_threshold_count),
            matcher_http_code: http,
            matcher_grpc_code: grpc,
        })
    }

    /// This health check after a ModifyTargetGroup that `sent` it: what the request leaves out
    /// (a TCP check's path and matcher) stays as it is.
    pub fn modified_by(&mut self, sent: &DescribedHealthCheck) {
        let DescribedHealthCheck {
            enabled,
            protocol,
            port,
            path,
            interval_seconds,
            timeout_seconds,
            healthy_threshold,
            unhealthy_threshold,
            matcher_http_code,
            matcher_grpc_code,
        } = sent;
        fn keep<T: Clone>(have: &mut Option<T>, sent: &Option<T>) {
            if sent.is_some() {
                have.clone_from(sent);
            }
        }
        keep(&mut self.enabled, enabled);
        keep(&mut self.protocol, protocol);
        keep(&mut self.port, port);
        keep(&mut self.path, path);
        keep(&mut self.interval_seconds, interval_seconds);
        keep(&mut self.timeout_seconds, timeout_seconds);
        keep(&mut self.healthy_threshold, healthy_threshold);
        keep(&mut self.unhealthy_threshold, unhealthy_threshold);
        keep(&mut self.matcher_http_code, matcher_http_code);
        keep(&mut self.matcher_grpc_code, matcher_grpc_code);
    }
}

/// The target group `IpAddressType` to send: upstream leaves out the default `ipv4`.
pub fn tg_ip_address_type(t: &str) -> Option<&str> {
    (!t.is_empty() && t != "ipv4").then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lb() -> model::LoadBalancer {
        serde_json::from_value(serde_json::json!({
            "id": "LoadBalancer", "name": "k8s-x", "type": "network",
            "scheme": "internal", "ipAddressType": "ipv4",
            "subnets": {"resolved": ["s-1", "s-2"]},
            "securityGroups": [{"literal": "sg-1"}], "attributes": {}, "tags": {},
            "subnetMappings": [{"subnetId": "s-2", "allocationId": "eip-2"}]
        }))
        .unwrap()
    }

    #[test]
    fn load_balancer_values_must_be_finished() {
        let mut l = lb();
        assert_eq!(lb_security_groups(&l).unwrap(), vec!["sg-1".to_string()]);
        let m = lb_subnet_mappings(&l).unwrap();
        assert_eq!(m[0], SubnetMapping::subnet("s-1"));
        assert_eq!(m[1].allocation_id.as_deref(), Some("eip-2"));

        l.security_groups.push(Token::ManagedSecurityGroupId);
        let err = lb_security_groups(&l).unwrap_err().to_string();
        assert!(err.contains("still a reference"), "{err}");
        l.security_groups.pop();
        l.security_group_names_or_ids = vec!["web".into()];
        assert!(lb_security_groups(&l).is_err());

        l.subnets = Subnets::NamesOrIds(vec!["public-a".into()]);
        let err = lb_subnet_mappings(&l).unwrap_err().to_string();
        assert!(err.contains("not chosen yet"), "{err}");
    }

    #[test]
    fn matcher_keys_are_aws_fields_or_refused() {
        let mut hc = HealthCheck {
            port: "traffic-port".into(),
            protocol: Protocol::Http,
            path: "/".into(),
            matcher: [("grpcCode".to_string(), "12".to_string())].into(),
            interval_seconds: 15,
            timeout_seconds: 5,
            healthy_threshold_count: 2,
            unhealthy_threshold_count: 2,
        };
        assert_eq!(matcher_codes(&hc).unwrap(), (None, Some("12".into())));
        hc.matcher.insert("HttpCode".into(), "200".into());
        assert!(matcher_codes(&hc).is_err());
    }
}
