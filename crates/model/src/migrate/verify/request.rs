//! The requests `--verify` sends through both stacks: for every rule of either stack, one that
//! meets all its conditions (each value of each condition in turn) and near misses that fail
//! exactly one — the path one character short or long, past a prefix's boundary, in another
//! case; the host in another case, one label off or unmatched; a header or query parameter
//! missing, with another value or in another case; another method, or the method in lower
//! case; a source address outside the CIDRs — plus requests no rule expects, each on every
//! listener port of either stack.

use std::collections::BTreeSet;
use std::fmt;
use std::net::IpAddr;

use serde::Serialize;

use super::glob::{concretize, regex_witness};
use crate::model::action::RuleCondition;
use crate::model::{ListenerRule, Stack};

/// A source address no test CIDR holds (TEST-NET-3).
pub const DEFAULT_SOURCE: &str = "203.0.113.10";
/// Another (TEST-NET-2), for a CIDR that holds the default.
pub const OTHER_SOURCE: &str = "198.51.100.10";
/// A host no rule names.
pub const UNMATCHED_HOST: &str = "unmatched.invalid";

/// One HTTP request to one listener port.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Request {
    pub port: i32,
    pub method: String,
    pub host: String,
    /// Without the query.
    pub path: String,
    /// Name, value.
    pub headers: Vec<(String, String)>,
    /// Key, value.
    pub query: Vec<(String, String)>,
    pub source: String,
}

impl Request {
    fn base(port: i32) -> Request {
        Request {
            port,
            method: "GET".into(),
            host: UNMATCHED_HOST.into(),
            path: "/".into(),
            headers: Vec::new(),
            query: Vec::new(),
            source: DEFAULT_SOURCE.into(),
        }
    }

    /// The query string without `?` (`k=v&k2=v2`).
    pub fn query_string(&self) -> String {
        self.query
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&")
    }

    /// The source address (the default one when it does not parse).
    pub fn source_ip(&self) -> IpAddr {
        self.source
            .parse()
            .unwrap_or_else(|_| DEFAULT_SOURCE.parse().expect("a valid address"))
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}:{}{}",
            self.method, self.host, self.port, self.path
        )?;
        if !self.query.is_empty() {
            write!(f, "?{}", self.query_string())?;
        }
        for (k, v) in &self.headers {
            write!(f, " [{k}: {v}]")?;
        }
        if self.source != DEFAULT_SOURCE {
            write!(f, " from {}", self.source)?;
        }
        Ok(())
    }
}

/// Texts one condition value stands for (its witness first).
fn witnesses(values: &[String], regex_values: &[String]) -> Vec<String> {
    let mut out: Vec<String> = values.iter().map(|v| concretize(v, "w")).collect();
    out.extend(regex_values.iter().filter_map(|r| regex_witness(r)));
    out
}

/// Near misses of a path value.
fn path_misses(value: &str) -> Vec<String> {
    let mut out = vec![
        concretize(value, ""),
        concretize(value, "a/b"),
        concretize(value, "w").to_uppercase(),
        "/".to_string(),
    ];
    if let Some(stem) = value.strip_suffix("/*") {
        out.push(if stem.is_empty() {
            "/".into()
        } else {
            stem.to_string()
        });
        out.push(format!("{stem}/"));
        out.push(format!("{stem}x"));
    }
    if !value.contains(['*', '?']) {
        out.push(format!("{value}/"));
        out.push(format!("{value}x"));
        out.push(format!("{value}/sub"));
        if value.len() > 1 {
            let mut shorter = value.to_string();
            shorter.pop();
            out.push(shorter);
        }
    }
    out.retain(|p| p.starts_with('/'));
    out
}

/// Near misses of a host value.
fn host_misses(value: &str) -> Vec<String> {
    let w = concretize(value, "w");
    let mut out = vec![
        w.to_uppercase(),
        format!("x{w}"),
        format!("sub.{w}"),
        concretize(value, "a.b"),
        UNMATCHED_HOST.to_string(),
    ];
    if let Some((_, parent)) = w.split_once('.') {
        if parent.contains('.') {
            out.push(parent.to_string());
        }
    }
    out
}

/// An address inside the CIDR (`None` when it does not parse).
fn inside(cidr: &str) -> Option<String> {
    let net: ipnet::IpNet = cidr.parse().ok()?;
    let addr = match net {
        ipnet::IpNet::V4(n) => {
            let base = u32::from(n.network());
            let a = if n.prefix_len() >= 31 { base } else { base + 1 };
            IpAddr::V4(a.into())
        }
        ipnet::IpNet::V6(n) => {
            let base = u128::from(n.network());
            let a = if n.prefix_len() >= 127 {
                base
            } else {
                base + 1
            };
            IpAddr::V6(a.into())
        }
    };
    Some(addr.to_string())
}

/// An address outside every CIDR of the list.
fn outside(cidrs: &[String]) -> String {
    let holds = |ip: &str| {
        let ip: IpAddr = match ip.parse() {
            Ok(ip) => ip,
            Err(_) => return false,
        };
        cidrs
            .iter()
            .filter_map(|c| c.parse::<ipnet::IpNet>().ok())
            .any(|n| n.contains(&ip))
    };
    for candidate in [DEFAULT_SOURCE, OTHER_SOURCE, "192.0.2.10", "2001:db8::10"] {
        if !holds(candidate) {
            return candidate.to_string();
        }
    }
    DEFAULT_SOURCE.to_string()
}

/// The request meeting every condition of `rule` (first value of each), and the variations:
/// besides each condition's own, the rule's request on every host either stack names (a rule of
/// one host must not answer for another).
fn rule_requests(rule: &ListenerRule, hosts: &BTreeSet<String>, out: &mut BTreeSet<Request>) {
    let mut base = Request::base(0);
    for c in &rule.conditions {
        match c {
            RuleCondition::HostHeader { config } => {
                if let Some(h) = witnesses(&config.values, &config.regex_values).first() {
                    base.host = h.clone();
                }
            }
            RuleCondition::PathPattern { config } => {
                if let Some(p) = witnesses(&config.values, &config.regex_values).first() {
                    base.path = p.clone();
                }
            }
            RuleCondition::HttpHeader { config } => {
                if let Some(v) = witnesses(&config.values, &config.regex_values).first() {
                    base.headers
                        .push((config.http_header_name.clone(), v.clone()));
                }
            }
            RuleCondition::HttpRequestMethod { config } => {
                if let Some(m) = config.values.first() {
                    base.method = m.clone();
                }
            }
            RuleCondition::QueryString { config } => {
                if let Some(p) = config.values.first() {
                    let key = p
                        .key
                        .as_deref()
                        .map(|k| concretize(k, "w"))
                        .unwrap_or_else(|| "k".into());
                    base.query.push((key, concretize(&p.value, "w")));
                }
            }
            RuleCondition::SourceIp { config } => {
                if let Some(ip) = config.values.first().and_then(|c| inside(c)) {
                    base.source = ip;
                }
            }
        }
    }
    out.insert(base.clone());
    for h in hosts {
        let mut r = base.clone();
        r.host = h.clone();
        out.insert(r);
    }
    // Every other value of each condition, and the near misses of each, one at a time.
    for c in &rule.conditions {
        let mut vary = |f: &dyn Fn(&mut Request)| {
            let mut r = base.clone();
            f(&mut r);
            out.insert(r);
        };
        match c {
            RuleCondition::HostHeader { config } => {
                for h in witnesses(&config.values, &config.regex_values) {
                    vary(&|r| r.host = h.clone());
                }
                for v in &config.values {
                    for h in host_misses(v) {
                        vary(&|r| r.host = h.clone());
                    }
                }
            }
            RuleCondition::PathPattern { config } => {
                for p in witnesses(&config.values, &config.regex_values) {
                    vary(&|r| r.path = p.clone());
                }
                for v in &config.values {
                    for p in path_misses(v) {
                        vary(&|r| r.path = p.clone());
                    }
                }
            }
            RuleCondition::HttpHeader { config } => {
                let name = config.http_header_name.clone();
                for v in witnesses(&config.values, &config.regex_values) {
                    vary(&|r| set_pair(&mut r.headers, &name, &v));
                    vary(&|r| set_pair(&mut r.headers, &name, &v.to_uppercase()));
                }
                vary(&|r| r.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&name)));
                vary(&|r| set_pair(&mut r.headers, &name, "nomatch"));
                vary(&|r| {
                    let value = r
                        .headers
                        .iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case(&name))
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default();
                    r.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&name));
                    r.headers.push((name.to_lowercase(), value));
                });
            }
            RuleCondition::HttpRequestMethod { config } => {
                for m in &config.values {
                    vary(&|r| r.method = m.clone());
                    vary(&|r| r.method = m.to_lowercase());
                }
                let other = ["GET", "POST", "DELETE", "PATCH"]
                    .into_iter()
                    .find(|m| !config.values.iter().any(|v| v.as_str() == *m))
                    .unwrap_or("OPTIONS");
                vary(&|r| r.method = other.to_string());
            }
            RuleCondition::QueryString { config } => {
                for p in &config.values {
                    let key = p
                        .key
                        .as_deref()
                        .map(|k| concretize(k, "w"))
                        .unwrap_or_else(|| "k".into());
                    let value = concretize(&p.value, "w");
                    vary(&|r| set_pair(&mut r.query, &key, &value));
                    vary(&|r| set_pair(&mut r.query, &key, &value.to_uppercase()));
                    vary(&|r| set_pair(&mut r.query, &key, "nomatch"));
                    vary(&|r| r.query.retain(|(k, _)| k != &key));
                    vary(&|r| {
                        r.query.retain(|(k, _)| k != &key);
                        r.query.push(("other".into(), value.clone()));
                    });
                }
            }
            RuleCondition::SourceIp { config } => {
                for cidr in &config.values {
                    if let Some(ip) = inside(cidr) {
                        vary(&|r| r.source = ip.clone());
                    }
                }
                let away = outside(&config.values);
                vary(&|r| r.source = away.clone());
            }
        }
    }
}

/// Sets (or adds) the pair named `key` (headers compare names without case).
fn set_pair(pairs: &mut Vec<(String, String)>, key: &str, value: &str) {
    pairs.retain(|(k, _)| !k.eq_ignore_ascii_case(key));
    pairs.push((key.to_string(), value.to_string()));
}

/// Every request derived from both stacks, on every listener port of either.
pub fn derive_requests(stacks: &[&Stack]) -> Vec<Request> {
    let mut shapes = BTreeSet::new();
    let mut hosts = BTreeSet::new();
    for s in stacks {
        for rule in &s.listener_rules {
            for c in &rule.conditions {
                if let RuleCondition::HostHeader { config } = c {
                    hosts.extend(witnesses(&config.values, &config.regex_values));
                }
            }
        }
    }
    for s in stacks {
        for rule in &s.listener_rules {
            rule_requests(rule, &hosts, &mut shapes);
        }
    }
    // Requests no rule expects: an unknown host, and every known host off every path.
    shapes.insert(Request::base(0));
    let mut unknown = Request::base(0);
    unknown.path = "/unmatched/path".into();
    shapes.insert(unknown);
    for h in &hosts {
        for path in ["/", "/unmatched/path"] {
            let mut r = Request::base(0);
            r.host = h.clone();
            r.path = path.into();
            shapes.insert(r);
        }
    }
    let ports: BTreeSet<i32> = stacks
        .iter()
        .flat_map(|s| s.listeners.iter().map(|l| l.port))
        .collect();
    let mut out = BTreeSet::new();
    for shape in shapes {
        for &port in &ports {
            let mut r = shape.clone();
            r.port = port;
            out.insert(r);
        }
    }
    out.into_iter().collect()
}
