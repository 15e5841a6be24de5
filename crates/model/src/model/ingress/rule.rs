//! Listener rules of one Ingress: path ordering (Exact, then Prefix longest first, then the rest)
//! and pattern conversion, host / annotation conditions and upstream's optimiser that drops
//! redirect loops and shadowed rules (a backend's actions come from `enhanced_backend`).

use std::collections::BTreeSet;

use k8s_openapi::api::networking::v1::HTTPIngressPath;

use super::backend::*;
use crate::model::error::Fail;
use crate::model::types::{Protocol, Token};

#[cfg(test)]
pub(super) use super::enhanced_backend::{auth_action, jwt_validation};
pub use super::enhanced_backend::{enhanced_backend, EnhancedBackend, ServiceAnnotations};

/// Paths in upstream's evaluation order; `Err` on an unknown pathType.
pub fn sort_paths(paths: &[HTTPIngressPath]) -> Result<Vec<&HTTPIngressPath>, Fail> {
    let (mut exact, mut prefix, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for p in paths {
        match p.path_type.as_str() {
            "Exact" => exact.push(p),
            "Prefix" => prefix.push(p),
            "ImplementationSpecific" | "" => rest.push(p),
            _ => {
                return Err(Fail::msg(format!(
                    "unknown pathType for path {}",
                    p.path.as_deref().unwrap_or("")
                )))
            }
        }
    }
    // Stable: equal lengths keep their written order.
    prefix.sort_by(|a, b| {
        b.path
            .as_deref()
            .unwrap_or("")
            .len()
            .cmp(&a.path.as_deref().unwrap_or("").len())
    });
    exact.extend(prefix);
    exact.extend(rest);
    Ok(exact)
}

/// ELBv2 path patterns for an Ingress path: (values, regexValues).
pub fn path_patterns(
    path: &str,
    path_type: &str,
    use_regex: bool,
) -> Result<(Vec<String>, Vec<String>), Fail> {
    match path_type {
        "Exact" => {
            if path.contains(['*', '?']) {
                return Err(Fail::msg(format!(
                    "exact path shouldn't contain wildcards: {path}"
                )));
            }
            Ok((vec![path.to_string()], vec![]))
        }
        "Prefix" => {
            if path == "/" {
                return Ok((vec!["/*".into()], vec![]));
            }
            if path.contains(['*', '?']) {
                return Err(Fail::msg(format!(
                    "prefix path shouldn't contain wildcards: {path}"
                )));
            }
            let p = path.strip_suffix('/').unwrap_or(path);
            Ok((vec![p.to_string(), format!("{p}/*")], vec![]))
        }
        _ if use_regex => Ok((vec![], vec![path.get(1..).unwrap_or("").to_string()])),
        _ => Ok((vec![path.to_string()], vec![])),
    }
}

/// Conditions of one rule: host and path from the Ingress plus `conditions.*` entries.
pub fn conditions(
    host: Option<&str>,
    path: Option<(Vec<String>, Vec<String>)>,
    extra: &[ConditionInput],
) -> Result<Vec<RuleCondition>, Fail> {
    let (mut hosts, mut host_re) = (Vec::new(), Vec::new());
    if let Some(h) = host.filter(|h| !h.is_empty()) {
        hosts.push(h.to_string());
    }
    let (mut paths, mut path_re) = path.unwrap_or_default();
    let mut out = Vec::new();
    for c in extra {
        match c.field.as_str() {
            "host-header" => {
                let cfg = c
                    .host_header_config
                    .clone()
                    .ok_or_else(|| Fail::msg("missing HostHeaderConfig"))?;
                hosts.extend(cfg.values);
                host_re.extend(cfg.regex_values);
            }
            "path-pattern" => {
                let cfg = c
                    .path_pattern_config
                    .clone()
                    .ok_or_else(|| Fail::msg("missing PathPatternConfig"))?;
                paths.extend(cfg.values);
                path_re.extend(cfg.regex_values);
            }
            "http-header" => out.push(RuleCondition::HttpHeader {
                config: c
                    .http_header_config
                    .clone()
                    .ok_or_else(|| Fail::msg("missing HTTPHeaderConfig"))?,
            }),
            "http-request-method" => out.push(RuleCondition::HttpRequestMethod {
                config: c
                    .http_request_method_config
                    .clone()
                    .ok_or_else(|| Fail::msg("missing HTTPRequestMethodConfig"))?,
            }),
            "query-string" => out.push(RuleCondition::QueryString {
                config: c
                    .query_string_config
                    .clone()
                    .ok_or_else(|| Fail::msg("missing QueryStringConfig"))?,
            }),
            "source-ip" => out.push(RuleCondition::SourceIp {
                config: c
                    .source_ip_config
                    .clone()
                    .ok_or_else(|| Fail::msg("missing SourceIPConfig"))?,
            }),
            _ => {}
        }
    }
    if !hosts.is_empty() && !host_re.is_empty() {
        return Err(Fail::msg(format!(
            "host condition must specify exactly one of Values and RegexValues, got both Values [{}] and RegexValues [{}]",
            hosts.join(" "),
            host_re.join(" ")
        )));
    }
    if !paths.is_empty() && !path_re.is_empty() {
        return Err(Fail::msg(format!(
            "path condition must specify exactly one of Values and RegexValues, got both Values [{}] and RegexValues [{}]",
            paths.join(" "),
            path_re.join(" ")
        )));
    }
    let vc = |values, regex_values| ValuesConfig {
        values,
        regex_values,
    };
    if !hosts.is_empty() {
        out.push(RuleCondition::HostHeader {
            config: vc(hosts, vec![]),
        });
    }
    if !host_re.is_empty() {
        out.push(RuleCondition::HostHeader {
            config: vc(vec![], host_re),
        });
    }
    if !paths.is_empty() {
        out.push(RuleCondition::PathPattern {
            config: vc(paths, vec![]),
        });
    }
    if !path_re.is_empty() {
        out.push(RuleCondition::PathPattern {
            config: vc(vec![], path_re),
        });
    }
    if out.is_empty() {
        out.push(RuleCondition::PathPattern {
            config: vc(vec!["/*".into()], vec![]),
        });
    }
    Ok(out)
}

/// A rule before priorities are assigned.
#[derive(Debug, Clone)]
pub struct DraftRule {
    pub ingress: String,
    pub conditions: Vec<RuleCondition>,
    pub actions: Vec<Action>,
    pub transforms: Vec<Transform>,
    pub tags: std::collections::BTreeMap<String, String>,
}

fn redirect_of(actions: &[Action]) -> Option<&RedirectConfig> {
    actions.iter().find_map(|a| match a {
        Action::Redirect { config } => Some(config),
        _ => None,
    })
}

fn infinite_redirect(port: i32, protocol: Protocol, r: &DraftRule) -> bool {
    let Some(rc) = redirect_of(&r.actions) else {
        return false;
    };
    let (mut hosts, mut paths) = (BTreeSet::new(), BTreeSet::new());
    for c in &r.conditions {
        match c {
            RuleCondition::HostHeader { config } => hosts.extend(config.values.iter().cloned()),
            RuleCondition::PathPattern { config } => {
                if !config.regex_values.is_empty() {
                    return false;
                }
                paths.extend(config.values.iter().cloned())
            }
            _ => {}
        }
    }
    let differs = |v: &Option<String>, wild: &str, ok: &dyn Fn(&str) -> bool| {
        v.as_deref().is_some_and(|v| v != wild && !ok(v))
    };
    !(differs(&rc.host, "#{host}", &|h| hosts.contains(h))
        || differs(&rc.path, "/#{path}", &|p| paths.contains(p))
        || differs(&rc.port, "#{port}", &|p| p == port.to_string())
        || differs(&rc.protocol, "#{protocol}", &|p| p == protocol.as_str())
        || differs(&rc.query, "#{query}", &|_| false))
}

fn host_path_sets(
    conds: &[RuleCondition],
    strict: bool,
) -> Option<(BTreeSet<&String>, BTreeSet<&String>)> {
    let (mut hosts, mut paths) = (BTreeSet::new(), BTreeSet::new());
    for c in conds {
        match c {
            RuleCondition::HostHeader { config } => hosts.extend(config.values.iter()),
            RuleCondition::PathPattern { config } if !config.regex_values.is_empty() => {
                paths.extend(config.regex_values.iter())
            }
            RuleCondition::PathPattern { config } => paths.extend(config.values.iter()),
            _ if strict => return None,
            _ => {}
        }
    }
    Some((hosts, paths))
}

fn is_superset(lhs: &[RuleCondition], rhs: &[RuleCondition]) -> bool {
    let Some((lh, lp)) = host_path_sets(lhs, true) else {
        return false;
    };
    let Some((rh, rp)) = host_path_sets(rhs, false) else {
        return false;
    };
    let star = "/*".to_string();
    let host_ok = lh.is_empty() || (!rh.is_empty() && lh.is_superset(&rh));
    let path_ok = lp.is_empty() || lp.contains(&star) || (!rp.is_empty() && lp.is_superset(&rp));
    host_ok && path_ok
}

/// Upstream's rule optimiser for one listener.
pub fn optimize(port: i32, protocol: Protocol, rules: Vec<DraftRule>) -> Vec<DraftRule> {
    let mut out: Vec<DraftRule> = Vec::new();
    // Only redirect rules can shadow later ones; remember where they are.
    let mut redirects: Vec<usize> = Vec::new();
    for r in rules
        .into_iter()
        .filter(|r| !infinite_redirect(port, protocol, r))
    {
        let shadowed = redirects
            .iter()
            .any(|i| is_superset(&out[*i].conditions, &r.conditions));
        if !shadowed {
            if redirect_of(&r.actions).is_some() {
                redirects.push(out.len());
            }
            out.push(r);
        }
    }
    out
}

/// The listener token of a rule.
pub fn listener_token(port: i32) -> Token {
    Token::ListenerArn(port)
}

#[cfg(test)]
#[path = "rule_tests.rs"]
mod tests;
