//! The rules the fake's Global Accelerator enforces, taken from AWS's API reference and
//! developer guide (which errors each call names, the quotas, the port-override rules of
//! "Overriding listener ports"), and what AWS makes of a new accelerator (ARNs, DNS names,
//! static IP sets). The calls that apply them are in `global_accelerator`.
//!
//! Error codes are the ones the API reference lists per call; where it names none for a rule
//! (the port-override rules), `InvalidArgumentException` is used, the code it gives for "an
//! argument that you specified is invalid".

use std::collections::{BTreeMap, BTreeSet};

use rand::Rng;

use super::ga_state::{GaDeployment, GaState};
use super::state::{hex, State};
use crate::aws::error::{AwsError, Result};
use crate::aws::global_accelerator::{
    DescribedAccelerator, EndpointDescription, IpSet, STATUS_DEPLOYED, STATUS_IN_PROGRESS,
};
use crate::aws::types::Tags;
use crate::model::aga::{EndpointConfiguration, PortOverride, PortRange};

const CLUSTER_TAG: &str = "elbv2.k8s.aws/cluster";
const RESOURCE_TAG: &str = "aga.k8s.aws/resource";
const RESOURCE_VALUE: &str = "GlobalAccelerator";
/// AWS's weight of an endpoint added without one.
pub(super) const DEFAULT_WEIGHT: i32 = 128;
/// AWS's traffic dial of an endpoint group created without one.
pub(super) const DEFAULT_TRAFFIC_DIAL: f32 = 100.0;

pub(super) fn err(code: &str, message: impl Into<String>) -> AwsError {
    AwsError::from_code(code, message, Some(400))
}

pub(super) fn invalid(message: impl Into<String>) -> AwsError {
    err("InvalidArgumentException", message)
}

pub(super) fn accelerator_not_found(arn: &str) -> AwsError {
    err(
        "AcceleratorNotFoundException",
        format!("The accelerator that you specified doesn't exist: {arn}"),
    )
}

pub(super) fn listener_not_found(arn: &str) -> AwsError {
    err(
        "ListenerNotFoundException",
        format!("The listener that you specified doesn't exist: {arn}"),
    )
}

pub(super) fn group_not_found(arn: &str) -> AwsError {
    err(
        "EndpointGroupNotFoundException",
        format!("The endpoint group that you specified doesn't exist: {arn}"),
    )
}

pub(super) fn limit(what: &str) -> AwsError {
    err(
        "LimitExceededException",
        format!("Processing your request would exceed a Global Accelerator quota: {what}"),
    )
}

fn invalid_ports(message: impl Into<String>) -> AwsError {
    err("InvalidPortRangeException", message)
}

// ---------------------------------------------------------------- names, tags, addresses

/// Accelerator names: 1 to 64 letters, digits, periods, hyphens (and the underscores
/// upstream's generated names carry), not starting or ending with a hyphen or period.
pub(super) fn check_name(name: &str) -> Result<()> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    let bad_edge = |c: Option<char>| matches!(c, Some('-' | '.'));
    if name.is_empty()
        || name.len() > 64
        || !ok_chars
        || bad_edge(name.chars().next())
        || bad_edge(name.chars().last())
    {
        return Err(invalid(format!(
            "accelerator name '{name}' must be 1-64 letters, digits, periods, hyphens or underscores, not starting or ending with a hyphen or period"
        )));
    }
    Ok(())
}

/// At most 50 tags, none under AWS's reserved `aws:` prefix, keys up to 128 characters and
/// values up to 256.
pub(super) fn check_tags(tags: &Tags) -> Result<()> {
    if tags.len() > 50 {
        return Err(invalid(format!("{} tags exceed 50", tags.len())));
    }
    for (k, v) in tags {
        if k.starts_with("aws:") {
            return Err(invalid(format!("tag key {k}: the aws: prefix is reserved")));
        }
        if k.is_empty() || k.len() > 128 || v.len() > 256 {
            return Err(invalid(format!(
                "tag {k}={v} exceeds AWS's tag length limits"
            )));
        }
    }
    Ok(())
}

/// BYOIP: at most two IPv4 addresses.
pub(super) fn check_ip_addresses(ips: &[String]) -> Result<()> {
    if ips.len() > 2 {
        return Err(invalid("at most two IP addresses may be given"));
    }
    match ips
        .iter()
        .find(|ip| ip.parse::<std::net::Ipv4Addr>().is_err())
    {
        Some(ip) => Err(invalid(format!("{ip} is not an IPv4 address"))),
        None => Ok(()),
    }
}

/// `us-west-2`, `ap-southeast-1`, ...
pub(super) fn check_region(region: &str) -> Result<()> {
    let ok = region.contains('-')
        && region
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && region.chars().last().is_some_and(|c| c.is_ascii_digit());
    if !ok {
        return Err(invalid(format!("{region} is not an AWS Region")));
    }
    Ok(())
}

// ---------------------------------------------------------------- upstream's IAM policy

fn policy_tags(tags: &Tags) -> bool {
    tags.contains_key(CLUSTER_TAG)
        && tags.get(RESOURCE_TAG).map(String::as_str) == Some(RESOURCE_VALUE)
}

fn access_denied(action: &str, resource: &str) -> AwsError {
    err(
        "AccessDeniedException",
        format!(
            "User is not authorized to perform: globalaccelerator:{action} on resource: {resource}"
        ),
    )
}

/// Describe / update / delete calls on an accelerator, its listeners and endpoint groups: with
/// the policy on, only on an accelerator carrying the cluster tag and
/// `aga.k8s.aws/resource=GlobalAccelerator`.
pub(super) fn authorize(ga: &GaState, accelerator_arn: &str, action: &str) -> Result<()> {
    match ga.accelerators.get(accelerator_arn) {
        Some(r) if ga.iam_policy && !policy_tags(&r.tags) => {
            Err(access_denied(action, accelerator_arn))
        }
        _ => Ok(()),
    }
}

/// CreateAccelerator: the request must carry both tags.
pub(super) fn authorize_create(ga: &GaState, tags: &Tags) -> Result<()> {
    if ga.iam_policy && !policy_tags(tags) {
        return Err(access_denied("CreateAccelerator", "*"));
    }
    Ok(())
}

/// TagResource: on a tagged accelerator without touching the cluster tag, or with a request
/// that sets both tags (the policy's two tagging statements).
pub(super) fn authorize_tagging(ga: &GaState, arn: &str, request: &Tags) -> Result<()> {
    if !ga.iam_policy {
        return Ok(());
    }
    let resource_ok = ga
        .accelerators
        .get(arn)
        .is_some_and(|r| policy_tags(&r.tags));
    if (resource_ok && !request.contains_key(CLUSTER_TAG)) || policy_tags(request) {
        return Ok(());
    }
    Err(access_denied("TagResource", arn))
}

// ---------------------------------------------------------------- status

/// A change to the accelerator or anything under it propagates: `IN_PROGRESS` until the
/// deployment setting says otherwise.
pub(super) fn touch(ga: &mut GaState, accelerator_arn: &str) {
    let immediate = ga.deployment == GaDeployment::Immediate;
    if let Some(r) = ga.accelerators.get_mut(accelerator_arn) {
        if immediate {
            r.finish_deployment();
        } else {
            r.acc.status = STATUS_IN_PROGRESS.to_string();
            r.describes = 0;
        }
    }
}

/// A DescribeAccelerator answer: under `AfterDescribes(n)` the n-th one after a change is the
/// last to show `IN_PROGRESS`.
pub(super) fn observe(ga: &mut GaState, accelerator_arn: &str) {
    let GaDeployment::AfterDescribes(n) = ga.deployment else {
        return;
    };
    if let Some(r) = ga.accelerators.get_mut(accelerator_arn) {
        if r.acc.status == STATUS_DEPLOYED {
            return;
        }
        if r.describes >= n {
            r.finish_deployment();
        } else {
            r.describes += 1;
        }
    }
}

// ---------------------------------------------------------------- a new accelerator

fn ipv4_set(byoip: &[String]) -> IpSet {
    let mut rng = rand::rng();
    let mut ips = byoip.to_vec();
    // The rest comes from Amazon's pool, one address per network zone.
    for pool in ["75.2", "99.83"].iter().skip(ips.len()) {
        ips.push(format!(
            "{pool}.{}.{}",
            rng.random_range(0..=255u8),
            rng.random_range(1..=254u8)
        ));
    }
    IpSet {
        ip_address_family: "IPv4".into(),
        ip_addresses: ips,
    }
}

fn ipv6_set() -> IpSet {
    let block = hex(3);
    IpSet {
        ip_address_family: "IPv6".into(),
        ip_addresses: vec![
            format!("2600:9000:a{block}::1"),
            format!("2600:9000:b{block}::1"),
        ],
    }
}

/// What CreateAccelerator answers: a fresh ARN, DNS name(s) and static IP sets.
pub(super) fn new_accelerator(
    account: &str,
    name: &str,
    ip_address_type: &str,
    byoip: &[String],
    enabled: bool,
) -> DescribedAccelerator {
    let id = format!("{}-{}-{}-{}-{}", hex(8), hex(4), hex(4), hex(4), hex(12));
    let mut acc = DescribedAccelerator {
        arn: format!("arn:aws:globalaccelerator::{account}:accelerator/{id}"),
        name: name.to_string(),
        ip_address_type: String::new(),
        enabled,
        ip_sets: vec![ipv4_set(byoip)],
        dns_name: format!("a{}.awsglobalaccelerator.com", hex(16)),
        dual_stack_dns_name: None,
        status: STATUS_IN_PROGRESS.to_string(),
    };
    set_ip_address_type(&mut acc, ip_address_type);
    acc
}

/// IPV4 ↔ DUAL_STACK: the IPv6 addresses and the dual-stack DNS name come and go with it.
pub(super) fn set_ip_address_type(acc: &mut DescribedAccelerator, ip_address_type: &str) {
    acc.ip_address_type = ip_address_type.to_string();
    let dual = ip_address_type == "DUAL_STACK";
    acc.ip_sets.retain(|s| s.ip_address_family == "IPv4");
    if dual {
        acc.ip_sets.push(ipv6_set());
        acc.dual_stack_dns_name = Some(acc.dns_name.replace(
            ".awsglobalaccelerator.com",
            ".dualstack.awsglobalaccelerator.com",
        ));
    } else {
        acc.dual_stack_dns_name = None;
    }
}

pub(super) fn check_ip_address_type(t: &str) -> Result<()> {
    match t {
        "IPV4" | "DUAL_STACK" => Ok(()),
        other => Err(invalid(format!(
            "IpAddressType {other} is not IPV4 or DUAL_STACK"
        ))),
    }
}

// ---------------------------------------------------------------- listener ports

pub(super) fn in_ranges(port: i32, ranges: &[PortRange]) -> bool {
    ranges
        .iter()
        .any(|r| r.from_port <= port && port <= r.to_port)
}

fn overlap(a: &PortRange, b: &PortRange) -> bool {
    a.from_port <= b.to_port && b.from_port <= a.to_port
}

/// A listener's port ranges: 1 to the quota of them, each within 1-65535 and in order, none
/// overlapping another of the listener or of another listener of the same protocol on the
/// accelerator (`own`, the listener being updated, excepted).
pub(super) fn check_port_ranges(
    ga: &GaState,
    accelerator_arn: &str,
    own: Option<&str>,
    protocol: &str,
    ranges: &[PortRange],
) -> Result<()> {
    if !matches!(protocol, "TCP" | "UDP") {
        return Err(invalid(format!("Protocol {protocol} is not TCP or UDP")));
    }
    if ranges.is_empty() || ranges.len() > ga.limits.port_ranges_per_listener {
        return Err(invalid(format!(
            "a listener takes 1 to {} port ranges, not {}",
            ga.limits.port_ranges_per_listener,
            ranges.len()
        )));
    }
    for r in ranges {
        if r.from_port < 1 || r.to_port > 65535 || r.from_port > r.to_port {
            return Err(invalid_ports(format!(
                "port range {}-{} is not valid",
                r.from_port, r.to_port
            )));
        }
    }
    for (i, a) in ranges.iter().enumerate() {
        if let Some(b) = ranges[i + 1..].iter().find(|b| overlap(a, b)) {
            return Err(invalid_ports(format!(
                "port ranges {}-{} and {}-{} overlap",
                a.from_port, a.to_port, b.from_port, b.to_port
            )));
        }
    }
    let others = ga.listeners.iter().filter(|(arn, l)| {
        l.accelerator == accelerator_arn
            && Some(arn.as_str()) != own
            && l.listener.protocol == protocol
    });
    for (arn, l) in others {
        for a in ranges {
            if let Some(b) = l.listener.port_ranges.iter().find(|b| overlap(a, b)) {
                return Err(invalid_ports(format!(
                    "port range {}-{} is not unique for this accelerator: listener {arn} has {}-{}",
                    a.from_port, a.to_port, b.from_port, b.to_port
                )));
            }
        }
    }
    Ok(())
}

/// The port overrides already on the accelerator must stay valid with a listener's new ranges:
/// no endpoint port inside them, and (for the listener's own endpoint groups) every overridden
/// listener port still inside them.
pub(super) fn check_overrides_against_listener(
    ga: &GaState,
    accelerator_arn: &str,
    own: Option<&str>,
    ranges: &[PortRange],
) -> Result<()> {
    for (group_arn, g) in &ga.groups {
        let on_accelerator = ga
            .listeners
            .get(&g.listener)
            .is_some_and(|l| l.accelerator == accelerator_arn);
        if !on_accelerator {
            continue;
        }
        for o in &g.group.port_overrides {
            if in_ranges(o.endpoint_port, ranges) {
                return Err(invalid(format!(
                    "endpoint port {} of a port override of endpoint group {group_arn} would fall in the listener's port ranges",
                    o.endpoint_port
                )));
            }
            if Some(g.listener.as_str()) == own && !in_ranges(o.listener_port, ranges) {
                return Err(invalid(format!(
                    "listener port {} of a port override of endpoint group {group_arn} would fall outside the listener's port ranges",
                    o.listener_port
                )));
            }
        }
    }
    Ok(())
}

/// An endpoint group's port overrides ("Overriding listener ports"): each listener port in the
/// listener's ranges and overridden once; no endpoint port inside any listener's ranges on the
/// accelerator; an endpoint port the target of one listener port only, across the accelerator
/// (`replaced`: the group whose overrides these replace).
pub(super) fn check_port_overrides(
    ga: &GaState,
    listener_arn: &str,
    replaced: Option<&str>,
    overrides: &[PortOverride],
) -> Result<()> {
    let Some(listener) = ga.listeners.get(listener_arn) else {
        return Err(listener_not_found(listener_arn));
    };
    let accelerator = listener.accelerator.as_str();
    let all_ranges: Vec<PortRange> = ga
        .listeners
        .values()
        .filter(|l| l.accelerator == accelerator)
        .flat_map(|l| l.listener.port_ranges.iter().copied())
        .collect();
    // Endpoint port → the listener port mapped to it, by the accelerator's other groups.
    let mut targets: BTreeMap<i32, i32> = BTreeMap::new();
    for (arn, g) in &ga.groups {
        let same_accelerator = ga
            .listeners
            .get(&g.listener)
            .is_some_and(|l| l.accelerator == accelerator);
        if same_accelerator && Some(arn.as_str()) != replaced {
            for o in &g.group.port_overrides {
                targets.insert(o.endpoint_port, o.listener_port);
            }
        }
    }
    let mut listener_ports = BTreeSet::new();
    for o in overrides {
        let valid = |p: i32| (1..=65535).contains(&p);
        if !valid(o.listener_port) || !valid(o.endpoint_port) {
            return Err(invalid(format!(
                "port override {}→{} is out of 1-65535",
                o.listener_port, o.endpoint_port
            )));
        }
        if !in_ranges(o.listener_port, &listener.listener.port_ranges) {
            return Err(invalid(format!(
                "listener port {} of a port override is not in the listener's port ranges",
                o.listener_port
            )));
        }
        if in_ranges(o.endpoint_port, &all_ranges) {
            return Err(invalid(format!(
                "endpoint port {} of a port override falls in a listener port range of the accelerator",
                o.endpoint_port
            )));
        }
        if !listener_ports.insert(o.listener_port) {
            return Err(invalid(format!(
                "listener port {} is overridden twice",
                o.listener_port
            )));
        }
        match targets.insert(o.endpoint_port, o.listener_port) {
            Some(other) if other != o.listener_port => {
                return Err(invalid(format!(
                    "endpoint port {} is already the target of listener port {other}",
                    o.endpoint_port
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- endpoints

/// `arn:aws:elasticloadbalancing:<region>:<account>:loadbalancer/...` → (region, account).
fn elb_arn_parts(id: &str) -> Option<(&str, &str)> {
    let rest = id.strip_prefix("arn:aws:elasticloadbalancing:")?;
    let mut parts = rest.splitn(3, ':');
    let region = parts.next()?;
    let account = parts.next()?;
    parts
        .next()?
        .starts_with("loadbalancer/")
        .then_some((region, account))
}

/// Endpoints as a group holds them: AWS's weight (128) and client IP preservation (on for
/// Application Load Balancers, off otherwise) where the request leaves them out. A load
/// balancer must sit in the group's region; one of the fake's own account and region must exist
/// (the fake knows no other region's resources and takes those on trust).
pub(super) fn describe_endpoints(
    st: &State,
    region: &str,
    endpoints: &[EndpointConfiguration],
) -> Result<Vec<EndpointDescription>> {
    let mut ids = BTreeSet::new();
    let mut out = Vec::new();
    for e in endpoints {
        let id = e.endpoint_id.as_str();
        if id.is_empty() {
            return Err(invalid("an endpoint needs an EndpointId"));
        }
        if !ids.insert(id) {
            return Err(invalid(format!("endpoint {id} is given twice")));
        }
        if let Some(w) = e.weight {
            if !(0..=255).contains(&w) {
                return Err(invalid(format!(
                    "weight {w} of endpoint {id} is out of 0-255"
                )));
            }
        }
        if let Some((lb_region, account)) = elb_arn_parts(id) {
            if lb_region != region {
                return Err(invalid(format!(
                    "endpoint {id} is in {lb_region}, not in the endpoint group's Region {region}"
                )));
            }
            if lb_region == st.region && account == st.account && !st.lbs.contains_key(id) {
                return Err(invalid(format!(
                    "endpoint {id} is not a valid and active resource"
                )));
            }
        }
        out.push(EndpointDescription {
            endpoint_id: id.to_string(),
            weight: Some(e.weight.unwrap_or(DEFAULT_WEIGHT)),
            client_ip_preservation_enabled: Some(
                e.client_ip_preservation_enabled
                    .unwrap_or_else(|| id.contains(":loadbalancer/app/")),
            ),
            health_state: Some("INITIAL".into()),
        });
    }
    Ok(out)
}
