//! The settings of both stacks side by side: load balancer (scheme, address type, subnets,
//! security groups, pools, capacity, attributes, tags, WAF and Shield), listeners by port
//! (protocol, certificates, SSL policy, mTLS, attributes, tags) and target groups by backend
//! Service port (target type, protocol and version, address type, health check, attributes,
//! tags, node selector). Names and the controllers' own tags differ by design and are left out:
//! what remains is what a user set or a controller default, and every difference is listed.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Service;

use super::eval::backend_key;
use super::AttributeDifference;
use crate::model::{Listener, Stack, TargetGroup, TargetGroupBindingResource, Token};

/// Tags the controllers write themselves (stack, resource, cluster, migration source).
fn user_tags(tags: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    tags.iter()
        .filter(|(k, _)| {
            !(k.starts_with("ingress.k8s.aws/")
                || k.starts_with("gateway.k8s.aws.alb/")
                || k.starts_with("service.k8s.aws/")
                || k.as_str() == crate::model::TAG_CLUSTER
                || k.as_str() == super::super::MIGRATION_TAG_KEY)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn show<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::Null) => "(unset)".into(),
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".into(),
    }
}

struct Diffs<'a> {
    scope: String,
    out: &'a mut Vec<AttributeDifference>,
}

impl Diffs<'_> {
    fn field<T: serde::Serialize + PartialEq>(&mut self, name: &str, ingress: &T, gateway: &T) {
        if ingress != gateway {
            self.out.push(AttributeDifference {
                scope: self.scope.clone(),
                field: name.to_string(),
                ingress: show(ingress),
                gateway: show(gateway),
            });
        }
    }

    /// A map key by key (each key its own line).
    fn map(
        &mut self,
        name: &str,
        ingress: &BTreeMap<String, String>,
        gateway: &BTreeMap<String, String>,
    ) {
        let keys: BTreeSet<&String> = ingress.keys().chain(gateway.keys()).collect();
        for k in keys {
            self.field(&format!("{name}.{k}"), &ingress.get(k), &gateway.get(k));
        }
    }
}

fn security_group(t: &Token) -> String {
    match t {
        Token::Literal(id) => id.clone(),
        Token::ManagedSecurityGroupId => "(managed)".into(),
        Token::BackendSecurityGroupId => "(backend)".into(),
        other => format!("{other:?}"),
    }
}

/// Every setting that differs between the Ingress stack and the Gateway stack.
pub fn compare(ingress: &Stack, gateway: &Stack, services: &[Service]) -> Vec<AttributeDifference> {
    let mut out = Vec::new();
    compare_load_balancer(ingress, gateway, &mut out);
    let ports: BTreeSet<i32> = ingress
        .listeners
        .iter()
        .chain(&gateway.listeners)
        .map(|l| l.port)
        .collect();
    for port in ports {
        let i = ingress.listeners.iter().find(|l| l.port == port);
        let g = gateway.listeners.iter().find(|l| l.port == port);
        compare_listeners(port, i, g, &mut out);
    }
    compare_target_groups(ingress, gateway, services, &mut out);
    out
}

/// The load balancer's settings, its add-ons and who may reach it.
fn compare_load_balancer(ingress: &Stack, gateway: &Stack, out: &mut Vec<AttributeDifference>) {
    match (&ingress.load_balancer, &gateway.load_balancer) {
        (Some(i), Some(g)) => {
            let mut d = Diffs {
                scope: "load balancer".into(),
                out: &mut *out,
            };
            // A generated name differs by design; a name the user chose does not.
            if !i.name.starts_with("k8s-") {
                d.field("name", &i.name, &g.name);
            }
            d.field("scheme", &i.scheme, &g.scheme);
            d.field("ipAddressType", &i.ip_address_type, &g.ip_address_type);
            d.field("subnets", &i.subnets, &g.subnets);
            let sgs = |s: &[Token]| s.iter().map(security_group).collect::<Vec<_>>();
            d.field(
                "securityGroups",
                &sgs(&i.security_groups),
                &sgs(&g.security_groups),
            );
            d.field(
                "securityGroupNamesOrIds",
                &i.security_group_names_or_ids,
                &g.security_group_names_or_ids,
            );
            d.field(
                "customerOwnedIpv4Pool",
                &i.customer_owned_ipv4_pool,
                &g.customer_owned_ipv4_pool,
            );
            d.field("ipv4IpamPoolId", &i.ipv4_ipam_pool_id, &g.ipv4_ipam_pool_id);
            d.field(
                "minimumCapacityUnits",
                &i.minimum_capacity_units,
                &g.minimum_capacity_units,
            );
            d.map("attributes", &i.attributes, &g.attributes);
            d.map("tags", &user_tags(&i.tags), &user_tags(&g.tags));
            d.field(
                "wafv2AclArn",
                &ingress.addons.wafv2_acl_arn,
                &gateway.addons.wafv2_acl_arn,
            );
            d.field(
                "wafv2AclName",
                &ingress.addons.wafv2_acl_name,
                &gateway.addons.wafv2_acl_name,
            );
            d.field(
                "wafRegionalAclId",
                &ingress.addons.waf_regional_acl_id,
                &gateway.addons.waf_regional_acl_id,
            );
            d.field(
                "shieldAdvancedProtection",
                &ingress.addons.shield_advanced_protection,
                &gateway.addons.shield_advanced_protection,
            );
            // Who may reach the load balancer (inbound CIDRs, prefix lists), in any order.
            let inbound = |s: &Stack| {
                s.managed_security_group.as_ref().map(|g| {
                    let mut rules = g.ingress.clone();
                    rules.sort();
                    show(&rules)
                })
            };
            d.field(
                "managedSecurityGroup.ingress",
                &inbound(ingress),
                &inbound(gateway),
            );
        }
        (i, g) => {
            if i.is_some() != g.is_some() {
                out.push(AttributeDifference {
                    scope: "load balancer".into(),
                    field: "(present)".into(),
                    ingress: i.is_some().to_string(),
                    gateway: g.is_some().to_string(),
                });
            }
        }
    }
}

/// Each target group's settings, paired by the backend it stands for.
fn compare_target_groups(
    ingress: &Stack,
    gateway: &Stack,
    services: &[Service],
    out: &mut Vec<AttributeDifference>,
) {
    let i_tgs = target_groups(ingress, services);
    let g_tgs = target_groups(gateway, services);
    let keys: BTreeSet<&String> = i_tgs.keys().chain(g_tgs.keys()).collect();
    for k in keys {
        let mut d = Diffs {
            scope: format!("target group {k}"),
            out: &mut *out,
        };
        let (Some((i, ib)), Some((g, gb))) = (i_tgs.get(k), g_tgs.get(k)) else {
            d.field("(present)", &i_tgs.contains_key(k), &g_tgs.contains_key(k));
            continue;
        };
        d.field("targetType", &i.target_type, &g.target_type);
        d.field("protocol", &i.protocol, &g.protocol);
        d.field("protocolVersion", &i.protocol_version, &g.protocol_version);
        d.field("ipAddressType", &i.ip_address_type, &g.ip_address_type);
        d.field(
            "healthCheck.port",
            &i.health_check.port,
            &g.health_check.port,
        );
        d.field(
            "healthCheck.protocol",
            &i.health_check.protocol,
            &g.health_check.protocol,
        );
        d.field(
            "healthCheck.path",
            &i.health_check.path,
            &g.health_check.path,
        );
        d.map(
            "healthCheck.matcher",
            &i.health_check.matcher,
            &g.health_check.matcher,
        );
        d.field(
            "healthCheck.intervalSeconds",
            &i.health_check.interval_seconds,
            &g.health_check.interval_seconds,
        );
        d.field(
            "healthCheck.timeoutSeconds",
            &i.health_check.timeout_seconds,
            &g.health_check.timeout_seconds,
        );
        d.field(
            "healthCheck.healthyThresholdCount",
            &i.health_check.healthy_threshold_count,
            &g.health_check.healthy_threshold_count,
        );
        d.field(
            "healthCheck.unhealthyThresholdCount",
            &i.health_check.unhealthy_threshold_count,
            &g.health_check.unhealthy_threshold_count,
        );
        d.field(
            "targetControlPort",
            &i.target_control_port,
            &g.target_control_port,
        );
        d.map("attributes", &i.attributes, &g.attributes);
        d.map("tags", &user_tags(&i.tags), &user_tags(&g.tags));
        d.field(
            "nodeSelector",
            &ib.spec.node_selector,
            &gb.spec.node_selector,
        );
        d.field(
            "multiClusterTargetGroup",
            &ib.spec.multi_cluster_target_group,
            &gb.spec.multi_cluster_target_group,
        );
    }
}

fn compare_listeners(
    port: i32,
    i: Option<&Listener>,
    g: Option<&Listener>,
    out: &mut Vec<AttributeDifference>,
) {
    let mut d = Diffs {
        scope: format!("listener {port}"),
        out,
    };
    let (Some(i), Some(g)) = (i, g) else {
        d.field("(present)", &i.is_some(), &g.is_some());
        return;
    };
    d.field("protocol", &i.protocol, &g.protocol);
    // The default certificate, then the others as a set (their order means nothing).
    let certs = |l: &Listener| {
        let default = l.certificates.first().cloned();
        let rest: BTreeSet<String> = l.certificates.iter().skip(1).cloned().collect();
        (default, rest)
    };
    let (idef, irest) = certs(i);
    let (gdef, grest) = certs(g);
    d.field("defaultCertificate", &idef, &gdef);
    d.field("certificates", &irest, &grest);
    let hosts = |l: &Listener| {
        l.certificate_discovery
            .iter()
            .flat_map(|m| m.discovery_hosts.iter().flatten().cloned())
            .collect::<BTreeSet<String>>()
    };
    d.field("certificateDiscoveryHosts", &hosts(i), &hosts(g));
    d.field("sslPolicy", &i.ssl_policy, &g.ssl_policy);
    d.field(
        "mutualAuthentication",
        &i.mutual_authentication,
        &g.mutual_authentication,
    );
    d.map("attributes", &i.attributes, &g.attributes);
    d.map("tags", &user_tags(&i.tags), &user_tags(&g.tags));
}

/// A stack's target groups with their bindings, by backend key.
fn target_groups<'s>(
    stack: &'s Stack,
    services: &[Service],
) -> BTreeMap<String, (&'s TargetGroup, &'s TargetGroupBindingResource)> {
    let mut out = BTreeMap::new();
    for b in &stack.target_group_bindings {
        let Some(tg) = stack.target_groups.iter().find(|t| t.id == b.id) else {
            continue;
        };
        let key = backend_key(
            &b.namespace,
            &b.spec.service_name,
            &b.spec.service_port,
            services,
        );
        out.insert(key, (tg, b));
    }
    out
}
