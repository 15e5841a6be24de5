//! `/validate-elbv2-k8s-aws-v1beta1-ingressclassparams`: `spec.inboundCIDRs` and `spec.subnets`
//! checks, reported as one aggregate of Kubernetes field errors with the apimachinery texts
//! (`<path>: Invalid value: "<v>": <detail>`, several joined as `[e1, e2]`).
//!
//! Works on the raw JSON because upstream tells `ids: []` / `tags: {}` (set, empty) apart from
//! absent ones, which a typed decode with defaults cannot.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde_json::{Map, Value};

use super::{AdmissionRequest, Decision, Handler, Operation};

pub const PATH: &str = "/validate-elbv2-k8s-aws-v1beta1-ingressclassparams";

/// One Kubernetes `field.Error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldError {
    Invalid {
        field: String,
        value: String,
        detail: String,
    },
    Required {
        field: String,
        detail: String,
    },
    Forbidden {
        field: String,
        detail: String,
    },
    Duplicate {
        field: String,
        value: String,
    },
}

/// Go's `%q` (strconv.Quote) for the values we print.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() && (c as u32) <= 0xffff => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\U{:08x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldError::Invalid {
                field,
                value,
                detail,
            } => {
                write!(f, "{field}: Invalid value: {}: {detail}", go_quote(value))
            }
            FieldError::Required { field, detail } => {
                write!(f, "{field}: Required value: {detail}")
            }
            FieldError::Forbidden { field, detail } => write!(f, "{field}: Forbidden: {detail}"),
            FieldError::Duplicate { field, value } => {
                write!(f, "{field}: Duplicate value: {}", go_quote(value))
            }
        }
    }
}

/// `ErrorList.ToAggregate().Error()`: repeated messages once; one alone, several as `[a, b]`.
pub fn aggregate(errors: &[FieldError]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in errors {
        let msg = e.to_string();
        if !seen.contains(&msg) {
            seen.push(msg);
        }
    }
    match seen.len() {
        1 => seen.remove(0),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// Go `net.IP.String()` of a network address (v4-mapped IPv6 prints dotted).
fn go_ip(ip: IpAddr) -> String {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        },
        v4 => v4.to_string(),
    }
}

/// Go `net.ParseCIDR`: `(address, prefix length, network address)`.
fn parse_cidr(s: &str) -> Option<(IpAddr, u32, IpAddr)> {
    let (addr, mask) = s.split_once('/')?;
    let ip: IpAddr = addr.parse().ok()?;
    if mask.is_empty() || mask.len() > 8 || !mask.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = mask.parse().ok()?;
    let network = match ip {
        IpAddr::V4(v4) if n <= 32 => {
            let m = u32::MAX.checked_shl(32 - n).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & m))
        }
        IpAddr::V6(v6) if n <= 128 => {
            let m = u128::MAX.checked_shl(128 - n).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & m))
        }
        _ => return None,
    };
    Some((ip, n, network))
}

fn check_cidr(cidr: &str, field: String) -> Option<FieldError> {
    let invalid = |detail: String| FieldError::Invalid {
        field: field.clone(),
        value: cidr.to_string(),
        detail,
    };
    match parse_cidr(cidr) {
        None => {
            let mut detail = "Could not be parsed as a CIDR".to_string();
            if !cidr.contains('/') {
                match cidr.parse::<IpAddr>() {
                    Ok(IpAddr::V4(_)) => detail += &format!(" (did you mean \"{cidr}/32\")"),
                    Ok(IpAddr::V6(_)) => detail += &format!(" (did you mean \"{cidr}/64\")"),
                    Err(_) => {}
                }
            }
            Some(invalid(detail))
        }
        Some((ip, n, network)) if ip != network => Some(invalid(format!(
            "Network contains bits outside prefix (did you mean \"{}/{n}\")",
            go_ip(network)
        ))),
        Some(_) => None,
    }
}

fn strings(v: &Value, at: &str) -> Result<Option<Vec<String>>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Array(items) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(String::from)
                    .ok_or_else(|| format!("{at} must hold strings"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        _ => Err(format!("{at} must be a list")),
    }
}

fn check_inbound_cidrs(spec: &Map<String, Value>) -> Result<Vec<FieldError>, String> {
    let cidrs = strings(
        spec.get("inboundCIDRs").unwrap_or(&Value::Null),
        "spec.inboundCIDRs",
    )?;
    Ok(cidrs
        .unwrap_or_default()
        .iter()
        .enumerate()
        .filter_map(|(i, c)| check_cidr(c, format!("spec.inboundCIDRs[{i}]")))
        .collect())
}

fn duplicates(values: &[String], field: impl Fn(usize) -> String) -> Vec<FieldError> {
    let mut seen = std::collections::HashSet::new();
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| !seen.insert(v.as_str()))
        .map(|(i, v)| FieldError::Duplicate {
            field: field(i),
            value: v.clone(),
        })
        .collect()
}

fn check_subnets(spec: &Map<String, Value>) -> Result<Vec<FieldError>, String> {
    let subnets = match spec.get("subnets") {
        None | Some(Value::Null) => return Ok(vec![]),
        Some(Value::Object(m)) => m,
        Some(_) => return Err("spec.subnets must be an object".into()),
    };
    let ids = strings(
        subnets.get("ids").unwrap_or(&Value::Null),
        "spec.subnets.ids",
    )?;
    let tags = match subnets.get("tags") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => return Err("spec.subnets.tags must be an object".into()),
    };
    let (field, tags_field) = ("spec.subnets", "spec.subnets.tags");
    match (ids, tags) {
        (None, None) => Ok(vec![FieldError::Required {
            field: field.into(),
            detail: "must have either `ids` or `tags`".into(),
        }]),
        (Some(_), Some(_)) => Ok(vec![FieldError::Forbidden {
            field: tags_field.into(),
            detail: "may not have both `ids` and `tags` set".into(),
        }]),
        (Some(ids), None) => Ok(duplicates(&ids, |i| format!("spec.subnets.ids[{i}]"))),
        (None, Some(tags)) => {
            let mut errs = Vec::new();
            if tags.is_empty() {
                errs.push(FieldError::Required {
                    field: tags_field.into(),
                    detail: "must have at least one tag key".into(),
                });
            }
            // Go walks the map in random order; key order keeps our answer stable.
            let mut keys: Vec<&String> = tags.keys().collect();
            keys.sort();
            for key in keys {
                let values = strings(&tags[key], "spec.subnets.tags values")?.unwrap_or_default();
                errs.extend(duplicates(&values, |i| format!("{tags_field}[{key}][{i}]")));
            }
            Ok(errs)
        }
    }
}

/// Both checks of upstream, in order, as one list; `Err` = the object does not decode.
pub fn validate(obj: &Value) -> Result<(Vec<FieldError>, Option<&'static str>), String> {
    let empty = Map::new();
    let spec = match obj.get("spec") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(_) => return Err("spec must be an object".into()),
    };
    let cidr_errs = check_inbound_cidrs(spec)?;
    let subnet_errs = check_subnets(spec)?;
    // Upstream counts a metric per failing check; our Decision carries one: the first.
    let category = if !cidr_errs.is_empty() {
        Some("checkInboundCIDRs")
    } else if !subnet_errs.is_empty() {
        Some("checkSubnetSelectors")
    } else {
        None
    };
    Ok(([cidr_errs, subnet_errs].concat(), category))
}

/// The IngressClassParams validator; it needs no state.
#[derive(Clone, Copy, Debug, Default)]
pub struct IcpValidator;

#[async_trait::async_trait]
impl Handler for IcpValidator {
    fn mutating(&self) -> bool {
        false
    }

    async fn admit(&self, req: &AdmissionRequest) -> Decision {
        if !matches!(req.operation, Operation::Create | Operation::Update) {
            return Decision::Allow;
        }
        let Some(obj) = req.object.as_ref().filter(|o| o.is_object()) else {
            return Decision::errored("decode", "admission request carries no IngressClassParams");
        };
        match validate(obj) {
            Err(e) => Decision::errored("decode", format!("cannot decode IngressClassParams: {e}")),
            Ok((_, None)) => Decision::Allow,
            Ok((errs, Some(category))) => Decision::deny(category, aggregate(&errs)),
        }
    }
}

#[cfg(test)]
#[path = "icp_validator_tests.rs"]
mod tests;
