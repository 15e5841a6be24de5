//! NLB security groups: upstream's decision (existing NLB without SGs, `disable-nlb-sg`,
//! explicit `security-groups`, managed SG + shared backend SG) and the managed SG's ingress
//! rules from the source ranges, prefix lists and the ICMP path-MTU switch.

use super::annotations::{key, sfx};
use super::task::Task;
use crate::model::backend_sg::shared_backend_sg;
use crate::model::env::RefusedGroupsChange;
use crate::model::error::Fail;
use crate::model::naming;
use crate::model::types::*;

/// What the NLB gets and which SG the TargetGroupBindings open node/pod ports to.
#[derive(Debug, Clone, Default)]
pub(super) struct SgDecision {
    /// SGs attached to the NLB (tokens; names to resolve are in `names`).
    pub load_balancer: Vec<Token>,
    /// `security-groups` entries that are names, resolved by the deployer.
    pub names: Vec<String>,
    pub managed: Option<SecurityGroup>,
    pub backend: Option<BackendSecurityGroup>,
    /// Source of the TGB networking rules; None = the user manages node SGs.
    pub networking_source: Option<Token>,
}

impl SgDecision {
    /// An NLB without security groups (upstream's "legacy" networking from IP ranges).
    pub fn without_sgs(&self) -> bool {
        self.load_balancer.is_empty() && self.names.is_empty()
    }
}

pub(super) fn decide(t: &Task<'_>, ip: IpAddressType) -> Result<SgDecision, Fail> {
    let disabled = t.a.bool(sfx::DISABLE_NLB_SG)? == Some(true);
    let wants = t.cfg.gate("NLBSecurityGroup") && !disabled;
    let existing = t.env.existing_load_balancer.as_ref();
    match existing.and_then(|lb| lb.refused_change(wants)) {
        // Upstream keeps an NLB made before NLBs had groups as it is, whatever is asked.
        Some(RefusedGroupsChange::AddToNone) => return Ok(SgDecision::default()),
        Some(RefusedGroupsChange::RemoveAll) => {
            return Err(Fail::msg("conflicting security groups configuration"))
        }
        None if !wants => return Ok(SgDecision::default()),
        None => {}
    }
    let explicit = t.a.list(sfx::SECURITY_GROUPS).unwrap_or_default();
    let mut d = SgDecision::default();
    if explicit.is_empty() {
        d.managed = Some(managed_sg(t, ip)?);
        d.load_balancer.push(Token::ManagedSecurityGroupId);
        if t.cfg.enable_backend_sg {
            d.backend = Some(shared_backend_sg(t.cfg));
            d.load_balancer.push(Token::BackendSecurityGroupId);
            d.networking_source = Some(Token::BackendSecurityGroupId);
        } else {
            d.networking_source = Some(Token::ManagedSecurityGroupId);
        }
        return Ok(d);
    }
    let manage =
        t.a.bool(sfx::MANAGE_SG_RULES)?
            .unwrap_or(t.cfg.enable_manage_backend_sg_rules);
    for sg in explicit {
        if sg.starts_with("sg-") {
            d.load_balancer.push(Token::Literal(sg));
        } else {
            d.names.push(sg);
        }
    }
    if manage {
        if !t.cfg.enable_backend_sg {
            return Err(Fail::at(
                key(sfx::MANAGE_SG_RULES),
                "backendSG feature is required to manage worker node SG rules when frontendSG is manually specified",
            ));
        }
        d.backend = Some(shared_backend_sg(t.cfg));
        d.load_balancer.push(Token::BackendSecurityGroupId);
        d.networking_source = Some(Token::BackendSecurityGroupId);
    }
    Ok(d)
}

/// `spec.loadBalancerSourceRanges`, else the `load-balancer-source-ranges` annotation.
pub(super) fn source_ranges(t: &Task<'_>) -> Vec<String> {
    let spec: Vec<String> = t
        .svc
        .spec
        .as_ref()
        .and_then(|s| s.load_balancer_source_ranges.clone())
        .unwrap_or_default();
    if !spec.is_empty() {
        return spec;
    }
    t.a.list(sfx::SOURCE_RANGES).unwrap_or_default()
}

fn cidrs(t: &Task<'_>, ip: IpAddressType, prefix_lists: bool) -> Result<Vec<String>, Fail> {
    let mut cidrs = source_ranges(t);
    if let Some(c) = cidrs.iter().find(|c| c.contains(':')) {
        if ip != IpAddressType::DualStack {
            return Err(Fail::msg(format!(
                "unsupported v6 cidr {c} when lb is not dualstack"
            )));
        }
    }
    if cidrs.is_empty() && !prefix_lists {
        cidrs.push("0.0.0.0/0".into());
        if ip == IpAddressType::DualStack {
            cidrs.push("::/0".into());
        }
    }
    Ok(cidrs)
}

fn permission(proto: &str, from: i32, to: i32) -> IpPermission {
    IpPermission {
        ip_protocol: proto.into(),
        from_port: from,
        to_port: to,
        cidr_ipv4: None,
        cidr_ipv6: None,
        prefix_list_id: None,
    }
}

/// Per Service port (TCP and UDP entries alike): one rule per CIDR (plus ICMP "fragmentation
/// needed" when asked) and one per prefix list, in upstream's order.
fn ingress_rules(t: &Task<'_>, ip: IpAddressType) -> Result<Vec<IpPermission>, Fail> {
    let icmp = t.a.string(sfx::ICMP_PATH_MTU) == Some("on");
    let prefix_lists = t.a.list(sfx::SG_PREFIX_LISTS);
    let cidrs = cidrs(t, ip, prefix_lists.is_some())?;
    let mut out = Vec::new();
    for p in t.ports() {
        let proto = p.protocol.as_deref().unwrap_or("TCP").to_lowercase();
        for c in &cidrs {
            let v6 = c.contains(':');
            let base = permission(&proto, p.port, p.port);
            let icmp_rule = if v6 {
                permission("icmpv6", 2, 0)
            } else {
                permission("icmp", 3, 4)
            };
            for rule in std::iter::once(base).chain(icmp.then_some(icmp_rule)) {
                out.push(if v6 {
                    IpPermission {
                        cidr_ipv6: Some(c.clone()),
                        ..rule
                    }
                } else {
                    IpPermission {
                        cidr_ipv4: Some(c.clone()),
                        ..rule
                    }
                });
            }
        }
        for pl in prefix_lists.iter().flatten() {
            out.push(IpPermission {
                prefix_list_id: Some(pl.clone()),
                ..permission(&proto, p.port, p.port)
            });
        }
    }
    Ok(out)
}

/// The managed frontend SG (`ManagedLBSecurityGroup`).
fn managed_sg(t: &Task<'_>, ip: IpAddressType) -> Result<SecurityGroup, Fail> {
    let id = "ManagedLBSecurityGroup";
    Ok(SecurityGroup {
        id: id.into(),
        name: naming::service_managed_sg_name(&t.cfg.cluster_name, t.namespace, t.name, t.uid),
        description: "[k8s] Managed SecurityGroup for LoadBalancer".into(),
        ingress: ingress_rules(t, ip)?,
        tags: t.tags.resource_tags(id, t.annotation_tags()?),
    })
}
