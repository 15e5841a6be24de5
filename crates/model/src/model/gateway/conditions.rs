//! ALB rule conditions of one unit (upstream's `route_rule_condition.go`): the unit's single
//! host-header value, then path, headers, query parameters and method of the HTTPRoute match.

use gateway_api::apis::standard::httproutes::{
    HttpRouteRulesMatches, HttpRouteRulesMatchesHeadersType, HttpRouteRulesMatchesPathType,
};

use crate::model::action::{
    HttpHeaderConfig, ListConfig, QueryStringConfig, QueryStringPair, RuleCondition, ValuesConfig,
};

/// Conditions of an HTTPRoute unit.
pub fn http_conditions(
    hostname: &str,
    m: &HttpRouteRulesMatches,
) -> Result<Vec<RuleCondition>, String> {
    let mut out = Vec::new();
    if !hostname.is_empty() {
        out.push(RuleCondition::HostHeader {
            config: ValuesConfig {
                values: vec![hostname.to_string()],
                regex_values: Vec::new(),
            },
        });
    }
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
