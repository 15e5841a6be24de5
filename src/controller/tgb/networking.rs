//! Security-group rules from `spec.networking`, the pure part: the permissions a binding needs,
//! which of an ENI's security groups receives them, how our rules are told apart from everybody
//! else's (a label in the rule description), aggregation across bindings, and the diff against
//! what a security group holds.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use regex::Regex;

use crate::aws::{AwsError, IpPermission, IpRange, SourceKind, Tags};
use crate::crd::target_group_binding::{
    NetworkingPeer, NetworkingPort, NetworkingProtocol, TargetGroupBindingNetworking,
};

/// Label (in the rule description) marking the rules this controller owns; shared by all
/// bindings, so a rule is ours whichever binding wanted it.
pub const RULE_LABEL_KEY: &str = "elbv2.k8s.aws/targetGroupBinding";
pub const RULE_LABEL_VALUE: &str = "shared";
/// Tag key prefix (`kubernetes.io/cluster/<cluster>`) of the cluster's security groups.
pub const CLUSTER_TAG_PREFIX: &str = "kubernetes.io/cluster/";

/// Errors of the networking part of a reconcile.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The rules or the cluster cannot be satisfied as they are (message as upstream words it).
    #[error("{0}")]
    Rule(String),
    #[error("{0}")]
    Aws(#[from] AwsError),
}

/// Where allowed traffic comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Peer {
    Group(String),
    Ipv4(String),
    Ipv6(String),
    PrefixList(String),
}

impl Peer {
    fn new(kind: SourceKind, value: String) -> Peer {
        match kind {
            SourceKind::Ipv4Cidr => Peer::Ipv4(value),
            SourceKind::Ipv6Cidr => Peer::Ipv6(value),
            SourceKind::PrefixList => Peer::PrefixList(value),
            SourceKind::Group => Peer::Group(value),
        }
    }

    fn kind(&self) -> SourceKind {
        match self {
            Peer::Ipv4(_) => SourceKind::Ipv4Cidr,
            Peer::Ipv6(_) => SourceKind::Ipv6Cidr,
            Peer::PrefixList(_) => SourceKind::PrefixList,
            Peer::Group(_) => SourceKind::Group,
        }
    }
}

/// One single-source ingress rule, compared without its description (as AWS does).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Perm {
    pub protocol: String,
    pub from: Option<i32>,
    pub to: Option<i32>,
    pub peer: Peer,
}

impl Perm {
    fn new(protocol: &str, from: i32, to: i32, peer: Peer) -> Perm {
        Perm {
            protocol: protocol.into(),
            from: Some(from),
            to: Some(to),
            peer,
        }
    }

    /// The EC2 permission for this rule with `description` on its one source.
    pub fn to_ip_permission(&self, description: Option<String>) -> IpPermission {
        let range = IpRange {
            value: match &self.peer {
                Peer::Group(v) | Peer::Ipv4(v) | Peer::Ipv6(v) | Peer::PrefixList(v) => v.clone(),
            },
            description,
        };
        IpPermission::single(
            self.protocol.clone(),
            (self.from, self.to),
            self.peer.kind(),
            range,
        )
    }
}

/// The description our rules carry: `key=value` labels, sorted, comma-separated.
pub fn rule_description() -> String {
    format!("{RULE_LABEL_KEY}={RULE_LABEL_VALUE}")
}

static KV_PAIR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"([^\s,=]+)=([^\s,=]+)(?:,|$)").expect("valid pattern"));

/// Whether a rule description carries our label (parsed as upstream parses it, so rules it
/// created are ours too and nobody else's are).
pub fn is_ours(description: Option<&str>) -> bool {
    let Some(d) = description else { return false };
    KV_PAIR
        .captures_iter(d)
        .any(|c| &c[1] == RULE_LABEL_KEY && &c[2] == RULE_LABEL_VALUE)
}

/// Splits EC2 permissions into single-source rules with their descriptions.
pub fn explode(perms: &[IpPermission]) -> Vec<(Perm, Option<String>)> {
    let mut out = Vec::new();
    for p in perms {
        for (kind, r) in p.sources() {
            let perm = Perm {
                protocol: p.ip_protocol.clone(),
                from: p.from_port,
                to: p.to_port,
                peer: Peer::new(kind, r.value.clone()),
            };
            out.push((perm, r.description.clone()));
        }
    }
    out
}

/// A pod whose named ports a rule may refer to: `ns/name` (for errors) and its named
/// container ports.
#[derive(Debug, Clone, Copy)]
pub struct PodPorts<'a> {
    pub key: &'a str,
    pub container_ports: &'a [(String, i32)],
}

/// The permissions one binding needs on one endpoint security group. `pods` are the pods
/// behind that group (ip mode) or `None` for node endpoints, where named ports are refused.
///
/// A rule without ports grants nothing, as upstream (its every-TCP-port branch appends to a
/// shadowed variable); its peers are still checked, so a bad CIDR or an empty peer stays an
/// error as there.
pub fn permissions(
    networking: &TargetGroupBindingNetworking,
    pods: Option<&[PodPorts<'_>]>,
) -> Result<Vec<Perm>, NetError> {
    let all_tcp = NetworkingPort {
        protocol: Some(NetworkingProtocol::Tcp),
        port: None,
    };
    let mut out = Vec::new();
    for rule in &networking.ingress {
        for peer in &rule.from {
            for port in &rule.ports {
                out.extend(peer_port(peer, port, pods)?);
            }
            if rule.ports.is_empty() {
                peer_port(peer, &all_tcp, pods)?;
            }
        }
    }
    Ok(out)
}

fn peer_port(
    peer: &NetworkingPeer,
    port: &NetworkingPort,
    pods: Option<&[PodPorts<'_>]>,
) -> Result<Vec<Perm>, NetError> {
    let protocol = match port.protocol {
        Some(NetworkingProtocol::Udp) => "udp",
        _ => "tcp",
    };
    let ranges: Vec<(i32, i32)> = match &port.port {
        None => vec![(0, 65535)],
        Some(p) => numeric_ports(p, pods)?
            .into_iter()
            .map(|n| (n, n))
            .collect(),
    };
    let make: Box<dyn Fn(i32, i32) -> Perm> = if let Some(sg) = &peer.security_group {
        let id = sg.group_id.clone();
        Box::new(move |f, t| Perm::new(protocol, f, t, Peer::Group(id.clone())))
    } else if let Some(block) = &peer.ip_block {
        let cidr = block.cidr.clone();
        if cidr.parse::<ipnet::IpNet>().is_err() {
            return Err(NetError::Rule(format!("invalid CIDR address: {cidr}")));
        }
        if cidr.contains(':') {
            Box::new(move |f, t| Perm::new(protocol, f, t, Peer::Ipv6(cidr.clone())))
        } else {
            Box::new(move |f, t| Perm::new(protocol, f, t, Peer::Ipv4(cidr.clone())))
        }
    } else {
        return Err(NetError::Rule(
            "either ipBlock or securityGroup should be specified".into(),
        ));
    };
    Ok(ranges.into_iter().map(|(f, t)| make(f, t)).collect())
}

/// A port number as is; a port name resolved on every pod (one name may be different numbers
/// on different pods).
fn numeric_ports(port: &IntOrString, pods: Option<&[PodPorts<'_>]>) -> Result<Vec<i32>, NetError> {
    let name = match port {
        IntOrString::Int(n) => return Ok(vec![*n]),
        IntOrString::String(s) => s,
    };
    let pods = match pods {
        Some(p) if !p.is_empty() => p,
        _ => {
            return Err(NetError::Rule(
                "named ports can only be used with pod endpoints".into(),
            ))
        }
    };
    let mut found = BTreeSet::new();
    for pod in pods {
        let n = pod
            .container_ports
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| *p)
            .ok_or_else(|| {
                NetError::Rule(format!("unable to find port {name} on pod {}", pod.key))
            })?;
        found.insert(n);
    }
    Ok(found.into_iter().collect())
}

/// The security group of an ENI that receives the rules: its only group, else the single one
/// tagged for the cluster (and with every `required_tags` pair).
pub fn select_endpoint_sg(
    eni_id: &str,
    groups: &[String],
    tags_of: impl Fn(&str) -> Option<Tags>,
    cluster: &str,
    required_tags: &BTreeMap<String, String>,
) -> Result<String, NetError> {
    if let [only] = groups {
        return Ok(only.clone());
    }
    let cluster_tag = format!("{CLUSTER_TAG_PREFIX}{cluster}");
    let matching: BTreeSet<&String> = groups
        .iter()
        .filter(|g| {
            tags_of(g).is_some_and(|t| {
                t.contains_key(&cluster_tag)
                    && required_tags.iter().all(|(k, v)| t.get(k) == Some(v))
            })
        })
        .collect();
    if let [only] = matching.iter().collect::<Vec<_>>()[..] {
        return Ok((*only).clone());
    }
    // Go's %v of a string slice and of a map, as upstream prints them.
    let got: Vec<&str> = matching.iter().map(|s| s.as_str()).collect();
    let got = format!("[{}]", got.join(" "));
    let msg = if required_tags.is_empty() {
        format!("expected exactly one securityGroup tagged with {cluster_tag} for eni {eni_id}, got: {got} (clusterName: {cluster})")
    } else {
        let tags: Vec<String> = required_tags
            .iter()
            .map(|(k, v)| format!("{k}:{v}"))
            .collect();
        format!(
            "expected exactly one securityGroup tagged with {cluster_tag} and map[{}] for eni {eni_id}, got: {got} (clusterName: {cluster})",
            tags.join(" ")
        )
    };
    Err(NetError::Rule(msg))
}

/// The rules each security group should hold, from every binding's contribution. Restricted
/// (upstream's default): rules from one security group and protocol become one port range
/// spanning all the ports wanted; CIDR rules are kept as they are. Every group any binding
/// mentions is present, possibly with no rules (so ours are revoked there).
pub fn aggregate<'a>(
    contributions: impl IntoIterator<Item = &'a BTreeMap<String, Vec<Perm>>>,
    restricted: bool,
) -> BTreeMap<String, BTreeSet<Perm>> {
    let mut out: BTreeMap<String, BTreeSet<Perm>> = BTreeMap::new();
    // (sg, protocol, group) -> (min from, max to)
    let mut spans: BTreeMap<(String, String, String), (i32, i32)> = BTreeMap::new();
    for per_sg in contributions {
        for (sg, perms) in per_sg {
            let set = out.entry(sg.clone()).or_default();
            for p in perms {
                let group = match &p.peer {
                    Peer::Group(g) if restricted => g,
                    _ => {
                        set.insert(p.clone());
                        continue;
                    }
                };
                let (from, to) = (p.from.unwrap_or(0), p.to.unwrap_or(0));
                // A 0-0 rule stands for every port.
                let (from, to) = if from == 0 && to == 0 {
                    (0, 65535)
                } else {
                    (from, to)
                };
                let key = (sg.clone(), p.protocol.clone(), group.clone());
                let span = spans.entry(key).or_insert((from, to));
                *span = (span.0.min(from), span.1.max(to));
            }
        }
    }
    for ((sg, protocol, group), (from, to)) in spans {
        let perm = Perm::new(&protocol, from, to, Peer::Group(group));
        out.entry(sg).or_default().insert(perm);
    }
    out
}

/// Whether one of our rules in `current` already allows `p`: same protocol and peer, and a port
/// range holding p's. Used while only authorizing after a restart: the bindings seen so far make
/// a partial aggregate, and in restricted mode (one range per source group) its range for a
/// group is narrower than the one the full aggregate put there before the restart; granting it
/// would add a rule that the first full pass revokes again.
pub fn covered(p: &Perm, current: &[(Perm, Option<String>)]) -> bool {
    // Ports only: for ICMP `from` and `to` are a type and a code, not a range.
    if !matches!(p.protocol.as_str(), "tcp" | "udp") {
        return false;
    }
    let (Some(from), Some(to)) = (p.from, p.to) else {
        return false;
    };
    current.iter().any(|(c, description)| {
        is_ours(description.as_deref())
            && c.protocol == p.protocol
            && c.peer == p.peer
            && matches!((c.from, c.to), (Some(cf), Some(ct)) if cf <= from && to <= ct)
    })
}

/// What to change on a group holding `current` so it holds `desired`: rules to authorize, and
/// rules of ours (by label) to revoke, with the description they carry.
pub fn diff(
    current: &[IpPermission],
    desired: &BTreeSet<Perm>,
) -> (Vec<Perm>, Vec<(Perm, Option<String>)>) {
    let current = explode(current);
    let have: BTreeSet<&Perm> = current.iter().map(|(p, _)| p).collect();
    let grant = desired
        .iter()
        .filter(|p| !have.contains(p))
        .cloned()
        .collect();
    let revoke = current
        .iter()
        .filter(|(p, d)| is_ours(d.as_deref()) && !desired.contains(p))
        .cloned()
        .collect();
    (grant, revoke)
}
