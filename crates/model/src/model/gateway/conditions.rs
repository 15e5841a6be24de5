//! ALB rule conditions of one unit (upstream's `route_rule_condition.go`): the unit's single
//! host-header value, then path, headers, query parameters and method of the HTTPRoute match,
//! or the GRPCRoute match's method as a path and its headers; then the ListenerRuleConfiguration's
//! `source-ip` conditions.

use gateway_api::apis::standard::grpcroutes::GrpcRouteRulesMatches;
use gateway_api::apis::standard::httproutes::{
    HttpRouteRulesMatches, HttpRouteRulesMatchesHeadersType, HttpRouteRulesMatchesPathType,
};

use crate::crd::gateway::listener_rule_configuration::ConditionField;
use crate::crd::gateway::ListenerRuleConfiguration;

use crate::model::action::{
    HttpHeaderConfig, ListConfig, QueryStringConfig, QueryStringPair, RuleCondition, ValuesConfig,
};

fn host_header(hostname: &str) -> Vec<RuleCondition> {
    if hostname.is_empty() {
        return Vec::new();
    }
    vec![RuleCondition::HostHeader {
        config: ValuesConfig {
            values: vec![hostname.to_string()],
            regex_values: Vec::new(),
        },
    }]
}

fn path_values(values: Vec<String>) -> RuleCondition {
    RuleCondition::PathPattern {
        config: ValuesConfig {
            values,
            regex_values: Vec::new(),
        },
    }
}

/// Conditions of a GRPCRoute unit (`m` is `None` for a rule without matches): the method as
/// `/<service>/<method>`, `/<service>/*` or `/*/<method>` (`/*` without a method), exact or
/// regular-expression alike; headers as values whatever their match type, as upstream.
pub fn grpc_conditions(
    hostname: &str,
    m: Option<&GrpcRouteRulesMatches>,
) -> Result<Vec<RuleCondition>, String> {
    let mut out = host_header(hostname);
    let path = match m.and_then(|m| m.method.as_ref()) {
        None => "/*".to_string(),
        Some(method) => match (&method.service, &method.method) {
            (Some(s), Some(m)) => format!("/{s}/{m}"),
            (Some(s), None) => format!("/{s}/*"),
            (None, Some(m)) => format!("/*/{m}"),
            (None, None) => return Err(format!("Invalid grpc method match: {method:?}")),
        },
    };
    out.push(path_values(vec![path]));
    for h in m.and_then(|m| m.headers.as_ref()).into_iter().flatten() {
        out.push(RuleCondition::HttpHeader {
            config: HttpHeaderConfig {
                http_header_name: h.name.clone(),
                values: header_values(&h.value),
                regex_values: Vec::new(),
            },
        });
    }
    Ok(out)
}

/// The configuration's `source-ip` conditions that apply to the unit's match (all, or those
/// listing its index in `matchIndexes`; a rule without matches has no index).
pub fn source_ip_conditions(
    config: Option<&ListenerRuleConfiguration>,
    match_index: usize,
) -> Vec<RuleCondition> {
    let mut out = Vec::new();
    for c in config.iter().flat_map(|c| &c.spec.conditions) {
        if c.field != ConditionField::SourceIp {
            continue;
        }
        let condition = RuleCondition::SourceIp {
            config: ListConfig {
                values: c
                    .source_ip_config
                    .as_ref()
                    .map(|s| s.values.clone())
                    .unwrap_or_default(),
            },
        };
        match &c.match_indexes {
            None => out.push(condition),
            Some(indexes) => {
                let hits = indexes
                    .iter()
                    .filter(|&&i| usize::try_from(i).is_ok_and(|i| i == match_index))
                    .count();
                out.extend(std::iter::repeat_n(condition, hits));
            }
        }
    }
    out
}

/// Conditions of an HTTPRoute unit.
pub fn http_conditions(
    hostname: &str,
    m: &HttpRouteRulesMatches,
) -> Result<Vec<RuleCondition>, String> {
    let mut out = host_header(hostname);
    if let Some(path) = &m.path {
        let value = path.value.clone().unwrap_or_else(|| "/".into());
        let config = match path.r#type.as_ref() {
            Some(HttpRouteRulesMatchesPathType::RegularExpression) => ValuesConfig {
                values: Vec::new(),
                regex_values: vec![value],
            },
            Some(HttpRouteRulesMatchesPathType::Exact) => ValuesConfig {
                values: vec![value],
                regex_values: Vec::new(),
            },
            _ => ValuesConfig {
                values: prefix_patterns(&value)?,
                regex_values: Vec::new(),
            },
        };
        out.push(RuleCondition::PathPattern { config });
    }
    for h in m.headers.iter().flatten() {
        let regex = h.r#type == Some(HttpRouteRulesMatchesHeadersType::RegularExpression);
        out.push(RuleCondition::HttpHeader {
            config: HttpHeaderConfig {
                http_header_name: h.name.clone(),
                values: if regex {
                    Vec::new()
                } else {
                    header_values(&h.value)
                },
                regex_values: if regex {
                    vec![h.value.clone()]
                } else {
                    Vec::new()
                },
            },
        });
    }
    for q in m.query_params.iter().flatten() {
        out.push(RuleCondition::QueryString {
            config: QueryStringConfig {
                values: vec![QueryStringPair {
                    key: Some(q.name.clone()),
                    value: q.value.clone(),
                }],
            },
        });
    }
    if let Some(method) = &m.method {
        let name = serde_json::to_value(method)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        out.push(RuleCondition::HttpRequestMethod {
            config: ListConfig { values: vec![name] },
        });
    }
    // Only a rule with `matches: []` and no hostname gets here: upstream sends a rule without
    // conditions, which the ALB refuses; a rule without matches matches every request.
    if out.is_empty() {
        out.push(path_values(vec!["/*".into()]));
    }
    Ok(out)
}

/// `PathPrefix /` ⇒ `/*`; `/x` or `/x/` ⇒ `/x`, `/x/*`; wildcards are refused.
fn prefix_patterns(value: &str) -> Result<Vec<String>, String> {
    if value.contains(['*', '?']) {
        return Err(format!("prefix path shouldn't contain wildcards: {value}"));
    }
    if value == "/" {
        return Ok(vec!["/*".into()]);
    }
    let trimmed = value.strip_suffix('/').unwrap_or(value);
    Ok(vec![trimmed.to_string(), format!("{trimmed}/*")])
}

/// A header match value split at unescaped commas, `\x` standing for `x` (upstream's
/// `generateValuesFromMatchHeaderValue`).
pub fn header_values(value: &str) -> Vec<String> {
    let mut values = Vec::new();
    let mut current = String::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped) => current.push(escaped),
                None => current.push('\\'),
            },
            ',' => values.push(std::mem::take(&mut current)),
            other => current.push(other),
        }
    }
    values.push(current);
    values
}
