//! IngressGroups as upstream's translation forms them (`translate/group.go`): Ingresses with one
//! `group.name` share a Gateway, every other Ingress is a group of its own. A group's
//! load-balancer annotations must agree (certificates, tags and attributes are unioned), its
//! listen ports are the union of its members', and `ssl-redirect` applies group-wide.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::networking::v1::Ingress;

use super::annotations::{get_int32, get_string, parse_listen_ports, ListenPort};
use super::names::section_name;
use super::objects::ParentReference;
use super::{annotations_of, go_quote, key_of, MigrateError, PROTOCOL_HTTP, PROTOCOL_HTTPS};
use crate::annotations::{self as ann, suffix, AnnotationMap};
use crate::crd::IngressClassParams;

/// Ingresses that share one ALB: an explicit group (`group.name`) or one Ingress.
#[derive(Debug, Clone)]
pub struct IngressGroup {
    /// `group.name`, or the Ingress's name.
    pub name: String,
    /// The first member's namespace: where the Gateway goes.
    pub namespace: String,
    pub is_explicit: bool,
    pub cross_namespace: bool,
    /// In upstream's order (see [`sort_members`]).
    pub members: Vec<Ingress>,
}

/// Splits Ingresses into groups: explicit groups sorted by name first, then one group per
/// Ingress without `group.name`, in input order.
pub fn partition_by_group(ingresses: &[Ingress]) -> Vec<IngressGroup> {
    let mut explicit: BTreeMap<String, Vec<Ingress>> = BTreeMap::new();
    let mut ungrouped = Vec::new();
    for ing in ingresses {
        let name = get_string(&annotations_of(&ing.metadata), suffix::GROUP_NAME);
        if name.is_empty() {
            ungrouped.push(ing.clone());
        } else {
            explicit.entry(name).or_default().push(ing.clone());
        }
    }
    let mut groups = Vec::new();
    for (name, mut members) in explicit {
        sort_members(&mut members);
        let cross_namespace = is_cross_namespace(&members);
        groups.push(IngressGroup {
            namespace: namespace_of(&members[0]),
            name,
            is_explicit: true,
            cross_namespace,
            members,
        });
    }
    for ing in ungrouped {
        groups.push(IngressGroup {
            name: ing.metadata.name.clone().unwrap_or_default(),
            namespace: namespace_of(&ing),
            is_explicit: false,
            cross_namespace: false,
            members: vec![ing],
        });
    }
    groups
}

pub(crate) fn namespace_of(ing: &Ingress) -> String {
    ing.metadata.namespace.clone().unwrap_or_default()
}

/// Sorts members by `group.order` (default 0, ascending), then `ns/name`: the controller's
/// order, which also decides the Gateway's namespace (the first member's).
pub fn sort_members(members: &mut [Ingress]) {
    members.sort_by(|a, b| {
        let order =
            |i: &Ingress| get_int32(&annotations_of(&i.metadata), suffix::GROUP_ORDER).unwrap_or(0);
        order(a)
            .cmp(&order(b))
            .then_with(|| key_of(&a.metadata).cmp(&key_of(&b.metadata)))
    });
}

fn is_cross_namespace(members: &[Ingress]) -> bool {
    let Some(first) = members.first() else {
        return false;
    };
    let ns = namespace_of(first);
    members[1..].iter().any(|m| namespace_of(m) != ns)
}

/// The load-balancer annotations every member of a group must agree on (the controller refuses
/// the group otherwise).
pub const LB_LEVEL_ANNOTATION_SUFFIXES: &[&str] = &[
    suffix::SCHEME,
    suffix::LOAD_BALANCER_NAME,
    suffix::IP_ADDRESS_TYPE,
    suffix::SUBNETS,
    suffix::CUSTOMER_OWNED_IPV4_POOL,
    suffix::IPAM_IPV4_POOL_ID,
    suffix::SECURITY_GROUPS,
    suffix::MANAGE_BACKEND_SG_RULES,
    suffix::INBOUND_CIDRS,
    suffix::SECURITY_GROUP_PREFIX_LISTS,
    suffix::SSL_POLICY,
    suffix::WAFV2_ACL_ARN,
    suffix::WAFV2_ACL_NAME,
    suffix::SHIELD_ADVANCED_PROTECTION,
    suffix::MINIMUM_LOAD_BALANCER_CAPACITY,
    suffix::MUTUAL_AUTHENTICATION,
];

/// The group's load-balancer annotations: a single member's as they are; for several, the
/// agreed values of [`LB_LEVEL_ANNOTATION_SUFFIXES`] (a conflict is an error), certificate ARNs
/// unioned, and tags and attributes unioned key by key (a key with two values is an error).
/// Upstream carries no other annotation of a multi-member group to its load balancer.
pub fn merge_group_lb_annotations(members: &[Ingress]) -> Result<AnnotationMap, MigrateError> {
    if members.len() == 1 {
        return Ok(annotations_of(&members[0].metadata));
    }
    let mut merged = AnnotationMap::new();
    for sfx in LB_LEVEL_ANNOTATION_SUFFIXES {
        merge_exact_match_annotation(members, &mut merged, sfx)?;
    }
    merge_certificate_arns(members, &mut merged);
    merge_string_map_annotation(members, &mut merged, suffix::TAGS)?;
    merge_string_map_annotation(members, &mut merged, suffix::LOAD_BALANCER_ATTRIBUTES)?;
    Ok(merged)
}

fn merge_exact_match_annotation(
    members: &[Ingress],
    merged: &mut AnnotationMap,
    sfx: &str,
) -> Result<(), MigrateError> {
    let key = ann::key(sfx);
    let mut agreed: Option<String> = None;
    for ing in members {
        let a = annotations_of(&ing.metadata);
        let Some(value) = a.get(&key).filter(|v| !v.is_empty()) else {
            continue;
        };
        match &agreed {
            None => agreed = Some(value.clone()),
            Some(first) if first != value => {
                return Err(MigrateError::Translate(format!(
                    "conflicting annotation {key} in group: {} vs {}",
                    go_quote(first),
                    go_quote(value)
                )))
            }
            Some(_) => {}
        }
    }
    if let Some(v) = agreed {
        merged.insert(key, v);
    }
    Ok(())
}

fn merge_certificate_arns(members: &[Ingress], merged: &mut AnnotationMap) {
    let key = ann::key(suffix::CERTIFICATE_ARN);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for ing in members {
        let a = annotations_of(&ing.metadata);
        let Some(value) = a.get(&key).filter(|v| !v.is_empty()) else {
            continue;
        };
        for cert in value.split(',').map(str::trim).filter(|c| !c.is_empty()) {
            if seen.insert(cert.to_string()) {
                out.push(cert.to_string());
            }
        }
    }
    if !out.is_empty() {
        merged.insert(key, out.join(","));
    }
}

fn merge_string_map_annotation(
    members: &[Ingress],
    merged: &mut AnnotationMap,
    sfx: &str,
) -> Result<(), MigrateError> {
    let key = ann::key(sfx);
    let mut union: BTreeMap<String, String> = BTreeMap::new();
    for ing in members {
        let a = annotations_of(&ing.metadata);
        let parsed = ann::string_map(&a, sfx).map_err(|e| {
            MigrateError::Translate(format!(
                "failed to parse {key} on {}: {}",
                key_of(&ing.metadata),
                e.message
            ))
        })?;
        for (k, v) in parsed.into_iter().flatten() {
            if let Some(existing) = union.get(&k) {
                if *existing != v {
                    return Err(MigrateError::Translate(format!(
                        "conflicting {sfx} key {} in group: {} vs {}",
                        go_quote(&k),
                        go_quote(existing),
                        go_quote(&v)
                    )));
                }
            }
            union.insert(k, v);
        }
    }
    if !union.is_empty() {
        // Sorted `k=v` pairs, as upstream joins them.
        let mut parts: Vec<String> = union.iter().map(|(k, v)| format!("{k}={v}")).collect();
        parts.sort();
        merged.insert(key, parts.join(","));
    }
    Ok(())
}

/// Each member's listen ports by `ns/name`.
pub type MemberPorts = BTreeMap<String, Vec<ListenPort>>;

/// The union of the members' listen ports (sorted by port, then protocol) and each member's
/// own (`ns/name` → ports): a member without `listen-ports` listens on HTTPS:443 when it names
/// certificates itself, else HTTP:80.
pub fn merge_group_listen_ports(
    members: &[Ingress],
) -> Result<(Vec<ListenPort>, MemberPorts), MigrateError> {
    let mut seen = BTreeSet::new();
    let mut all = Vec::new();
    let mut per_member = BTreeMap::new();
    for ing in members {
        let a = annotations_of(&ing.metadata);
        let mut ports = parse_listen_ports(&a).map_err(|e| {
            e.context(&format!(
                "failed to parse listen-ports for {}",
                key_of(&ing.metadata)
            ))
        })?;
        if ports.is_empty() {
            ports = default_listen_ports(&a);
        }
        for p in &ports {
            if seen.insert(p.clone()) {
                all.push(p.clone());
            }
        }
        per_member.insert(key_of(&ing.metadata), ports);
    }
    all.sort_by(|a: &ListenPort, b: &ListenPort| {
        a.port
            .cmp(&b.port)
            .then_with(|| a.protocol.cmp(&b.protocol))
    });
    Ok((all, per_member))
}

/// HTTPS:443 when the Ingress itself names certificates, else HTTP:80.
pub fn default_listen_ports(a: &AnnotationMap) -> Vec<ListenPort> {
    if !get_string(a, suffix::CERTIFICATE_ARN).is_empty() {
        vec![ListenPort::new(PROTOCOL_HTTPS, 443)]
    } else {
        vec![ListenPort::new(PROTOCOL_HTTP, 80)]
    }
}

/// Every distinct IngressClassParams the members' classes name, in member order.
pub fn resolve_group_icps<'a>(
    members: &[Ingress],
    icp_by_class: &BTreeMap<String, &'a IngressClassParams>,
) -> Vec<&'a IngressClassParams> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for ing in members {
        let Some(class) = class_name(ing) else {
            continue;
        };
        let Some(icp) = icp_by_class.get(&class) else {
            continue;
        };
        if seen.insert(icp.metadata.name.clone().unwrap_or_default()) {
            out.push(*icp);
        }
    }
    out
}

/// `spec.ingressClassName`.
pub(crate) fn class_name(ing: &Ingress) -> Option<String> {
    ing.spec.as_ref().and_then(|s| s.ingress_class_name.clone())
}

/// The group's `ssl-redirect` port: per member the IngressClassParams' `sslRedirectPort`, else
/// its annotation; two members with different ports are an error.
pub fn resolve_group_ssl_redirect(
    members: &[Ingress],
    icp_by_class: &BTreeMap<String, &IngressClassParams>,
) -> Result<Option<i32>, MigrateError> {
    let mut result: Option<i32> = None;
    for ing in members {
        let mut port = None;
        if let Some(icp) = class_name(ing).and_then(|c| icp_by_class.get(&c).copied()) {
            if !icp.spec.ssl_redirect_port.is_empty() {
                let raw = &icp.spec.ssl_redirect_port;
                let v = ann::go_parse_int(raw, 32).map_err(|e| {
                    MigrateError::Translate(format!(
                        "invalid ICP ssl-redirect port {}: {e}",
                        go_quote(raw)
                    ))
                })?;
                port = Some(v as i32);
            }
        }
        if port.is_none() {
            port = get_int32(&annotations_of(&ing.metadata), suffix::SSL_REDIRECT);
        }
        let Some(p) = port else {
            continue;
        };
        match result {
            None => result = Some(p),
            Some(r) if r != p => {
                return Err(MigrateError::Translate(format!(
                    "conflicting ssl-redirect ports in group: {r} vs {p}"
                )))
            }
            Some(_) => {}
        }
    }
    Ok(result)
}

/// A member's parentRefs: with `ssl-redirect`, the HTTPS listener of that port only; else one
/// per listen port of the member, each naming its listener.
pub fn build_member_parent_refs(
    gateway_name: &str,
    gateway_namespace: &str,
    member_namespace: &str,
    member_ports: &[ListenPort],
    ssl_redirect_port: Option<i32>,
) -> Vec<ParentReference> {
    if let Some(port) = ssl_redirect_port {
        let sn = section_name(PROTOCOL_HTTPS, port);
        return vec![build_parent_ref(
            gateway_name,
            gateway_namespace,
            member_namespace,
            Some(&sn),
        )];
    }
    member_ports
        .iter()
        .map(|p| {
            let sn = section_name(&p.protocol, p.port);
            build_parent_ref(gateway_name, gateway_namespace, member_namespace, Some(&sn))
        })
        .collect()
}

/// One parentRef; it names the Gateway's namespace when the route lives elsewhere.
pub fn build_parent_ref(
    gateway_name: &str,
    gateway_namespace: &str,
    member_namespace: &str,
    section: Option<&str>,
) -> ParentReference {
    ParentReference {
        name: gateway_name.to_string(),
        namespace: (gateway_namespace != member_namespace).then(|| gateway_namespace.to_string()),
        section_name: section.map(String::from),
    }
}
