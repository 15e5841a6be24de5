//! The fake's data: every resource of the account, ID/ARN/DNS generation in AWS's formats, and
//! the seeding helpers for resources the traits cannot create (VPCs, subnets, instances).

use std::collections::{BTreeMap, BTreeSet};

use rand::Rng;

use super::ga_state::GaState;
use crate::aws::addons::Protection;
use crate::aws::error::{AwsError, Result};
use crate::aws::types::*;

#[derive(Debug, Clone)]
pub(crate) struct LbRec {
    pub lb: LoadBalancer,
    pub attrs: Attributes,
    /// Reserved minimum capacity units (ModifyCapacityReservation).
    pub capacity: Option<i32>,
}

#[derive(Debug, Clone)]
pub(crate) struct TargetRec {
    pub target: TargetDescription,
    pub health: TargetHealth,
}

#[derive(Debug, Clone)]
pub(crate) struct TgRec {
    pub tg: TargetGroup,
    pub attrs: Attributes,
    /// Keyed by (id, port): AWS registers the same IP on two ports as two targets.
    pub targets: BTreeMap<(String, Option<u16>), TargetRec>,
}

#[derive(Debug, Clone)]
pub(crate) struct ListenerRec {
    pub listener: Listener,
    /// The certificate list (AddListenerCertificates); may hold the default once more.
    pub extra_certs: Vec<String>,
    pub attrs: Attributes,
}

#[derive(Debug, Clone)]
pub(crate) struct RuleRec {
    pub listener_arn: String,
    pub rule: Rule,
}

/// One ingress rule with a single source; describes aggregate them per protocol and ports.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SgRule {
    pub proto: String,
    pub from: Option<i32>,
    pub to: Option<i32>,
    pub kind: crate::aws::SourceKind,
    pub source: String,
    pub description: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct SgRec {
    pub sg: SecurityGroup,
    pub rules: Vec<SgRule>,
}

/// The add-on services' data of the fake account (WAFv2, WAF Classic regional, Shield); their
/// calls are in `addons`.
#[derive(Debug, Default)]
pub(crate) struct AddonState {
    /// WAFv2 regional web ACLs: name → ARN.
    pub wafv2_acls: BTreeMap<String, String>,
    /// Load balancer ARN → WAFv2 web ACL ARN.
    pub wafv2_assoc: BTreeMap<String, String>,
    pub waf_regional_acls: BTreeSet<String>,
    /// Load balancer ARN → WAF Classic web ACL id.
    pub waf_regional_assoc: BTreeMap<String, String>,
    pub waf_regional_unavailable: bool,
    pub shield_active: bool,
    /// Protection id → protection.
    pub protections: BTreeMap<String, Protection>,
}

#[derive(Debug)]
pub(crate) struct State {
    pub region: String,
    pub account: String,
    pub lbs: BTreeMap<String, LbRec>,
    pub tgs: BTreeMap<String, TgRec>,
    pub listeners: BTreeMap<String, ListenerRec>,
    pub rules: BTreeMap<String, RuleRec>,
    /// ELBv2 tags by ARN.
    pub elb_tags: BTreeMap<String, Tags>,
    pub vpcs: BTreeMap<String, Vpc>,
    pub subnets: BTreeMap<String, Subnet>,
    pub azs: Vec<AvailabilityZone>,
    pub sgs: BTreeMap<String, SgRec>,
    pub instances: BTreeMap<String, Instance>,
    pub enis: BTreeMap<String, NetworkInterface>,
    pub route_tables: BTreeMap<String, RouteTable>,
    pub drain_on_deregister: bool,
    /// Trust stores by name (ARN values).
    pub trust_stores: BTreeMap<String, String>,
    /// WAFv2, WAF Classic regional and Shield.
    pub(crate) addons: AddonState,
    /// Entries the Resource Groups Tagging index still lists for resources already deleted
    /// (ARN → tags), as its lag behind AWS shows.
    pub tagging_stale: BTreeMap<String, Tags>,
    /// Global Accelerator (a global service: one per account, whatever the region).
    pub(crate) ga: GaState,
}

/// `n` random lowercase hex digits.
pub(crate) fn hex(n: usize) -> String {
    let mut rng = rand::rng();
    (0..n)
        .map(|_| char::from_digit(rng.random_range(0..16), 16).unwrap_or('0'))
        .collect()
}

pub(crate) fn digits(n: usize) -> String {
    let mut rng = rand::rng();
    (0..n)
        .map(|_| char::from_digit(rng.random_range(0..10), 10).unwrap_or('0'))
        .collect()
}

pub(crate) fn not_found(code: &str, message: String) -> AwsError {
    AwsError::NotFound {
        code: code.into(),
        message,
    }
}

impl State {
    pub fn new(region: &str, account: &str) -> Self {
        let azs = ["a", "b", "c"]
            .iter()
            .enumerate()
            .map(|(i, s)| AvailabilityZone {
                zone_name: format!("{region}{s}"),
                zone_id: format!("usw2-az{}", i + 1),
                zone_type: "availability-zone".into(),
            })
            .collect();
        Self {
            region: region.into(),
            account: account.into(),
            lbs: BTreeMap::new(),
            tgs: BTreeMap::new(),
            listeners: BTreeMap::new(),
            rules: BTreeMap::new(),
            elb_tags: BTreeMap::new(),
            vpcs: BTreeMap::new(),
            subnets: BTreeMap::new(),
            azs,
            sgs: BTreeMap::new(),
            instances: BTreeMap::new(),
            enis: BTreeMap::new(),
            route_tables: BTreeMap::new(),
            drain_on_deregister: false,
            trust_stores: BTreeMap::new(),
            addons: Default::default(),
            tagging_stale: BTreeMap::new(),
            ga: GaState::default(),
        }
    }

    pub fn elb_arn(&self, rest: &str) -> String {
        format!(
            "arn:aws:elasticloadbalancing:{}:{}:{}",
            self.region, self.account, rest
        )
    }

    pub fn add_vpc(&mut self, cidr: &str, tags: Tags) -> String {
        let id = format!("vpc-{}", hex(17));
        self.vpcs.insert(
            id.clone(),
            Vpc {
                id: id.clone(),
                cidr_blocks: vec![cidr.into()],
                ipv6_cidr_blocks: vec![],
                tags,
            },
        );
        id
    }

    pub fn add_subnet(&mut self, vpc_id: &str, cidr: &str, az: &str, tags: Tags) -> Result<String> {
        if !self.vpcs.contains_key(vpc_id) {
            return Err(not_found(
                "InvalidVpcID.NotFound",
                format!("The vpc ID '{vpc_id}' does not exist"),
            ));
        }
        let zone = self
            .azs
            .iter()
            .find(|z| z.zone_name == az)
            .cloned()
            .ok_or_else(|| {
                AwsError::from_code(
                    "InvalidParameterValue",
                    format!("Value ({az}) for parameter availabilityZone is invalid"),
                    Some(400),
                )
            })?;
        let id = format!("subnet-{}", hex(17));
        self.subnets.insert(
            id.clone(),
            Subnet {
                id: id.clone(),
                vpc_id: vpc_id.into(),
                availability_zone: zone.zone_name,
                availability_zone_id: zone.zone_id,
                cidr_block: cidr.into(),
                ipv6_cidr_blocks: vec![],
                available_ip_address_count: 251,
                outpost_arn: None,
                tags,
            },
        );
        Ok(id)
    }

    pub fn add_instance(&mut self, subnet_id: &str, ip: &str, sgs: &[String]) -> Result<String> {
        let subnet = self.subnets.get(subnet_id).cloned().ok_or_else(|| {
            not_found(
                "InvalidSubnetID.NotFound",
                format!("The subnet ID '{subnet_id}' does not exist"),
            )
        })?;
        let id = format!("i-{}", hex(17));
        let eni = format!("eni-{}", hex(17));
        self.enis.insert(
            eni.clone(),
            NetworkInterface {
                id: eni.clone(),
                vpc_id: subnet.vpc_id.clone(),
                subnet_id: subnet_id.into(),
                availability_zone: subnet.availability_zone.clone(),
                private_ip_addresses: vec![ip.into()],
                ipv6_addresses: vec![],
                security_groups: sgs.to_vec(),
                instance_id: Some(id.clone()),
                tags: Tags::new(),
            },
        );
        self.instances.insert(
            id.clone(),
            Instance {
                id: id.clone(),
                vpc_id: Some(subnet.vpc_id),
                subnet_id: Some(subnet_id.into()),
                private_ip_address: Some(ip.into()),
                availability_zone: Some(subnet.availability_zone),
                state: "running".into(),
                network_interfaces: vec![InstanceNetworkInterface {
                    id: eni,
                    device_index: 0,
                    security_groups: sgs.to_vec(),
                }],
                tags: Tags::new(),
            },
        );
        Ok(id)
    }

    pub fn add_route_table(&mut self, vpc_id: &str, subnet_ids: &[String], igw: bool) -> String {
        let id = format!("rtb-{}", hex(17));
        let mut routes = vec![Route {
            destination: self
                .vpcs
                .get(vpc_id)
                .and_then(|v| v.cidr_blocks.first().cloned()),
            gateway_id: Some("local".into()),
        }];
        if igw {
            routes.push(Route {
                destination: Some("0.0.0.0/0".into()),
                gateway_id: Some(format!("igw-{}", hex(17))),
            });
        }
        self.route_tables.insert(
            id.clone(),
            RouteTable {
                id: id.clone(),
                vpc_id: vpc_id.into(),
                main: subnet_ids.is_empty(),
                subnet_ids: subnet_ids.to_vec(),
                routes,
            },
        );
        id
    }

    pub fn set_target_health(
        &mut self,
        tg: &str,
        t: &TargetDescription,
        state: TargetHealthState,
        reason: Option<&str>,
    ) -> Result<()> {
        let rec = self.tgs.get_mut(tg).ok_or_else(|| tg_not_found(tg))?;
        let key = (t.id.clone(), t.port.or(rec.tg.port));
        let target = rec.targets.get_mut(&key).ok_or_else(|| {
            AwsError::from_code(
                "InvalidTarget",
                format!("target {} is not registered", t.id),
                Some(400),
            )
        })?;
        target.health = TargetHealth {
            state,
            reason: reason.map(Into::into),
            description: None,
        };
        Ok(())
    }

    pub fn set_all_targets_health(&mut self, tg: &str, state: TargetHealthState) -> Result<()> {
        let rec = self.tgs.get_mut(tg).ok_or_else(|| tg_not_found(tg))?;
        for t in rec.targets.values_mut() {
            t.health = TargetHealth {
                state,
                reason: None,
                description: None,
            };
        }
        Ok(())
    }

    pub fn finish_draining(&mut self) {
        for rec in self.tgs.values_mut() {
            rec.targets
                .retain(|_, t| t.health.state != TargetHealthState::Draining);
        }
    }
}

pub(crate) fn group_not_found(id: &str) -> AwsError {
    not_found(
        "InvalidGroup.NotFound",
        format!("The security group '{id}' does not exist"),
    )
}

pub(crate) fn listener_not_found(arn: &str) -> AwsError {
    not_found(
        "ListenerNotFound",
        format!("One or more listeners not found: '{arn}'"),
    )
}

pub(crate) fn rule_not_found(arn: &str) -> AwsError {
    not_found(
        "RuleNotFound",
        format!("One or more rules not found: '{arn}'"),
    )
}

pub(crate) fn tg_not_found(arn: &str) -> AwsError {
    not_found(
        "TargetGroupNotFound",
        format!("Target groups '{arn}' not found"),
    )
}

pub(crate) fn lb_not_found(arn: &str) -> AwsError {
    not_found(
        "LoadBalancerNotFound",
        format!("Load balancers '{arn}' not found"),
    )
}
