//! Load balancers and security groups in upstream's schema: subnet mappings (or the plan's
//! subnets), security groups (user's names first, then tokens), attributes, capacity, pools and
//! tags; the frontend NLB without the ALB's plan facts.

use serde_json::{json, Value};

use super::values::{key_values, opt, put, user_tags, PlanFacts, Renderer};
use crate::model::types::*;

fn permission(p: &IpPermission) -> Value {
    let mut o = json!({"ipProtocol": p.ip_protocol, "fromPort": p.from_port, "toPort": p.to_port});
    put(
        &mut o,
        "ipRanges",
        p.cidr_ipv4.as_ref().map(|c| json!([{ "cidrIP": c }])),
    );
    put(
        &mut o,
        "ipv6Ranges",
        p.cidr_ipv6.as_ref().map(|c| json!([{ "cidrIPv6": c }])),
    );
    put(
        &mut o,
        "prefixLists",
        p.prefix_list_id.as_ref().map(|c| json!([{ "listID": c }])),
    );
    o
}

pub(super) fn security_group(sg: &SecurityGroup) -> Value {
    let mut o = json!({"groupName": sg.name, "description": sg.description});
    put(&mut o, "tags", user_tags(&sg.tags));
    if !sg.ingress.is_empty() {
        o["ingress"] = sg.ingress.iter().map(permission).collect();
    }
    o
}

impl Renderer<'_> {
    fn subnet_mapping(&self, lb: &LoadBalancer) -> Option<Value> {
        let ids = |ids: &[String]| ids.iter().map(|s| json!({ "subnetID": s })).collect();
        if !lb.subnet_mappings.is_empty() {
            let all = lb.subnet_mappings.iter().map(|m| {
                let mut s = json!({"subnetID": m.subnet_id});
                put(&mut s, "allocationID", opt(m.allocation_id.as_ref()));
                put(
                    &mut s,
                    "privateIPv4Address",
                    opt(m.private_ipv4_address.as_ref()),
                );
                put(&mut s, "ipv6Address", opt(m.ipv6_address.as_ref()));
                put(
                    &mut s,
                    "sourceNatIpv6Prefix",
                    opt(m.source_nat_ipv6_prefix.as_ref()),
                );
                s
            });
            return Some(all.collect());
        }
        match (&lb.subnets, &self.facts.subnets) {
            (Subnets::Resolved(v), _) if !v.is_empty() => Some(ids(v)),
            (_, Some(v)) if !v.is_empty() => Some(ids(v)),
            _ => None,
        }
    }

    /// The ALB with the plan's facts; the frontend NLB without them (they are the ALB's).
    pub(super) fn lb_or_frontend(&self, lb: &LoadBalancer) -> Value {
        if lb.id != FRONTEND_NLB_ID {
            return self.lb(lb);
        }
        // The ALB's security groups, when the NLB takes them, resolve as the ALB's do.
        let alb_sgs = self
            .stack
            .load_balancer
            .as_ref()
            .map(|a| &a.security_group_names_or_ids);
        let shared_sgs = alb_sgs == Some(&lb.security_group_names_or_ids);
        let bare = Renderer {
            stack: self.stack,
            facts: &PlanFacts {
                backend_sg: self.facts.backend_sg.clone(),
                subnets: None,
                security_groups: self.facts.security_groups.clone().filter(|_| shared_sgs),
            },
        };
        bare.lb(lb)
    }

    fn lb(&self, lb: &LoadBalancer) -> Value {
        let mut o = json!({"name": lb.name, "type": lb.lb_type, "scheme": lb.scheme,
            "ipAddressType": lb.ip_address_type});
        put(
            &mut o,
            "enablePrefixForIpv6SourceNat",
            opt(lb.enable_prefix_for_ipv6_source_nat.as_ref()),
        );
        put(&mut o, "subnetMapping", self.subnet_mapping(lb));
        // Upstream lists the user's groups first, then the shared backend group.
        let named = self.facts.security_groups.as_ref();
        let mut sgs: Vec<Value> = named
            .unwrap_or(&lb.security_group_names_or_ids)
            .iter()
            .map(|n| json!(n))
            .collect();
        sgs.extend(lb.security_groups.iter().map(|t| self.token(t)));
        put(
            &mut o,
            "securityGroups",
            (!sgs.is_empty()).then(|| json!(sgs)),
        );
        put(
            &mut o,
            "securityGroupsInboundRulesOnPrivateLink",
            opt(lb.security_groups_inbound_rules_on_private_link.as_ref()),
        );
        put(
            &mut o,
            "customerOwnedIPv4Pool",
            opt(lb.customer_owned_ipv4_pool.as_ref()),
        );
        put(&mut o, "loadBalancerAttributes", key_values(&lb.attributes));
        put(
            &mut o,
            "minimumLoadBalancerCapacity",
            lb.minimum_capacity_units
                .map(|c| json!({ "capacityUnits": c })),
        );
        put(&mut o, "tags", user_tags(&lb.tags));
        put(&mut o, "ipv4IPAMPool", opt(lb.ipv4_ipam_pool_id.as_ref()));
        o
    }
}
