//! The fake's ELBv2: load balancers, target groups, targets, listeners, rules and tags, with
//! the validation AWS does and moto does not (names, duplicates, deletion protection, in-use,
//! tag limits, ≤ 20 ARNs per DescribeTags, atomic SetRulePriorities).

use super::state::{digits, hex, lb_not_found, not_found, LbRec, State};
use crate::aws::error::{AwsError, Result};
use crate::aws::types::*;

pub(super) const MAX_TAGS: usize = 50;

pub(super) fn invalid(code: &str, msg: impl Into<String>) -> AwsError {
    AwsError::from_code(code, msg, Some(400))
}

pub(super) fn check_name(kind: &str, name: &str) -> Result<()> {
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

/// Whether an IPv4 address lies inside an IPv4 CIDR (false on anything unparsable).
fn cidr_contains(cidr: &str, ip: &str) -> bool {
    match (cidr.parse::<ipnet::IpNet>(), ip.parse::<std::net::IpAddr>()) {
        (Ok(net), Ok(addr)) => net.contains(&addr),
        _ => false,
    }
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

    /// What AWS refuses in NLB subnet mappings: EIPs on internal / application load
    /// balancers, IPv6 addresses without dualstack, dualstack in subnets without IPv6, and
    /// addresses outside their subnet.
    pub(crate) fn check_nlb_mappings(
        &self,
        mappings: &[SubnetMapping],
        lb_type: &str,
        scheme: &str,
        ip_address_type: &str,
    ) -> Result<()> {
        let dualstack = ip_address_type.starts_with("dualstack");
        for m in mappings {
            let Some(s) = self.subnets.get(&m.subnet_id) else {
                continue;
            };
            let nlb_only = m.allocation_id.is_some()
                || m.private_ipv4_address.is_some()
                || m.ipv6_address.is_some()
                || m.source_nat_ipv6_prefix.is_some();
            if nlb_only && lb_type != "network" {
                return Err(invalid(
                    "InvalidConfigurationRequest",
                    "Subnet mappings with addresses are only supported by Network Load Balancers",
                ));
            }
            if m.allocation_id.is_some() && scheme == "internal" {
                return Err(invalid(
                    "InvalidConfigurationRequest",
                    "Elastic IP addresses cannot be assigned to an internal load balancer",
                ));
            }
            if let Some(ip) = &m.private_ipv4_address {
                if !cidr_contains(&s.cidr_block, ip) {
                    return Err(invalid(
                        "InvalidConfigurationRequest",
                        format!("Private IPv4 address '{ip}' is not in subnet '{}'", s.id),
                    ));
                }
            }
            if dualstack && s.ipv6_cidr_blocks.is_empty() {
                return Err(invalid(
                    "InvalidSubnet",
                    format!("Subnet '{}' does not have an IPv6 CIDR block", s.id),
                ));
            }
            if (m.ipv6_address.is_some() || m.source_nat_ipv6_prefix.is_some()) && !dualstack {
                return Err(invalid(
                    "InvalidConfigurationRequest",
                    "IPv6 addresses can only be assigned to dualstack load balancers",
                ));
            }
        }
        Ok(())
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

    /// CreateLoadBalancer of the model's load balancer, read as the SDK conversion reads it.
    pub(crate) fn create_lb(&mut self, want: &crate::model::LoadBalancer) -> Result<LoadBalancer> {
        check_name("Load balancer", &want.name)?;
        let mappings = lb_subnet_mappings(want)?;
        let security_groups = lb_security_groups(want)?;
        let lb_type = want.lb_type.as_str();
        let scheme = want.scheme.as_str();
        let ip_address_type = want.ip_address_type.as_str();
        if let Some(existing) = self.lbs.values().find(|r| r.lb.name == want.name) {
            if existing.lb.lb_type == lb_type && existing.lb.scheme == scheme {
                return Ok(existing.lb.clone());
            }
            return Err(invalid(
                "DuplicateLoadBalancerName",
                format!(
                    "A load balancer with the same name '{}' exists, but with different settings",
                    want.name
                ),
            ));
        }
        let vpc_id = self.check_subnets(&mappings, lb_type)?;
        self.check_nlb_mappings(&mappings, lb_type, scheme, ip_address_type)?;
        self.check_sgs(&security_groups)?;
        if want.tags.len() > MAX_TAGS {
            return Err(invalid("TooManyTags", "The quota for the number of tags that can be assigned to a load balancer has been reached"));
        }
        let short = if lb_type == "network" { "net" } else { "app" };
        let arn = self.elb_arn(&format!("loadbalancer/{short}/{}/{}", want.name, hex(16)));
        let prefix = if scheme == "internal" {
            "internal-"
        } else {
            ""
        };
        let dns_name = if lb_type == "network" {
            format!(
                "{prefix}{}-{}.elb.{}.amazonaws.com",
                want.name,
                hex(16),
                self.region
            )
        } else {
            format!(
                "{prefix}{}-{}.{}.elb.amazonaws.com",
                want.name,
                digits(10),
                self.region
            )
        };
        let lb = LoadBalancer {
            arn: arn.clone(),
            name: want.name.clone(),
            dns_name,
            canonical_hosted_zone_id: hosted_zone(&self.region, lb_type),
            scheme: scheme.into(),
            lb_type: lb_type.into(),
            ip_address_type: ip_address_type.into(),
            vpc_id,
            state: "active".into(),
            availability_zones: self.zones_of(&mappings),
            enable_prefix_for_ipv6_source_nat: (lb_type == "network").then(|| {
                want.enable_prefix_for_ipv6_source_nat
                    .clone()
                    .unwrap_or_else(|| "off".into())
            }),
            enforce_private_link_inbound_rules: (lb_type == "network"
                && !security_groups.is_empty())
            .then(|| "on".into()),
            customer_owned_ipv4_pool: want.customer_owned_ipv4_pool.clone(),
            ipv4_ipam_pool_id: want.ipv4_ipam_pool_id.clone().filter(|id| !id.is_empty()),
            security_groups,
        };
        self.lbs.insert(
            arn.clone(),
            LbRec {
                lb: lb.clone(),
                attrs: default_lb_attrs(lb_type),
                capacity: None,
            },
        );
        self.elb_tags.insert(arn, want.tags.clone());
        Ok(lb)
    }

    pub(crate) fn zones_of(&self, mappings: &[SubnetMapping]) -> Vec<LbZone> {
        mappings
            .iter()
            .filter_map(|m| Some((m, self.subnets.get(&m.subnet_id)?)))
            .map(|(m, s)| {
                let addr = LbAddress {
                    allocation_id: m.allocation_id.clone(),
                    private_ipv4_address: m.private_ipv4_address.clone(),
                    ipv6_address: m.ipv6_address.clone(),
                };
                LbZone {
                    zone_name: s.availability_zone.clone(),
                    subnet_id: s.id.clone(),
                    addresses: (addr != LbAddress::default())
                        .then_some(addr)
                        .into_iter()
                        .collect(),
                }
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
}
