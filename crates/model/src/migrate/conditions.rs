//! `conditions.*` (`translate/translate_condition_helper.go`): host-header values become the
//! hostnames of a route of their own, path patterns extra matches, headers match headers (values
//! joined with commas, which the Gateway controller splits back), methods and query strings one
//! match per value (ALB ORs the values of one condition), source IPs ListenerRuleConfiguration
//! conditions.

use crate::crd::gateway::listener_rule_configuration::{
    ConditionField, ListenerRuleCondition, SourceIpConditionConfig,
};
use crate::model::action::QueryStringPair;
use crate::model::backend::ConditionInput;

use super::objects::{
    HttpHeaderMatch, HttpPathMatch, HttpQueryParamMatch, HttpRouteMatch, HEADER_EXACT,
    HEADER_REGEX, PATH_EXACT, PATH_REGEX, QUERY_EXACT,
};

/// What a rule's conditions become.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConditionResult {
    /// Hostnames for a route of the rule's own (host-header values).
    pub additional_hostnames: Vec<String>,
    /// The rule's matches with the conditions applied.
    pub matches: Vec<HttpRouteMatch>,
    /// Conditions only a ListenerRuleConfiguration can carry (source-ip).
    pub listener_rule_conditions: Vec<ListenerRuleCondition>,
}

/// `None` without conditions; an unknown `field` is skipped, as upstream skips it.
pub fn translate_conditions(
    conditions: &[ConditionInput],
    matches: Vec<HttpRouteMatch>,
) -> Option<ConditionResult> {
    if conditions.is_empty() {
        return None;
    }
    let mut matches = matches;
    let mut result = ConditionResult::default();
    for c in conditions {
        match c.field.as_str() {
            "host-header" => {
                let Some(cfg) = &c.host_header_config else {
                    continue;
                };
                result
                    .additional_hostnames
                    .extend(cfg.values.iter().cloned());
                result
                    .additional_hostnames
                    .extend(cfg.regex_values.iter().cloned());
            }
            "path-pattern" => {
                let Some(cfg) = &c.path_pattern_config else {
                    continue;
                };
                if !cfg.values.is_empty() {
                    matches = expand_matches_with_paths(matches, &cfg.values, PATH_EXACT);
                }
                if !cfg.regex_values.is_empty() {
                    matches = expand_matches_with_paths(matches, &cfg.regex_values, PATH_REGEX);
                }
            }
            "http-header" => {
                let Some(cfg) = &c.http_header_config else {
                    continue;
                };
                if !cfg.values.is_empty() {
                    add_headers_to_matches(
                        &mut matches,
                        &cfg.http_header_name,
                        &cfg.values,
                        HEADER_EXACT,
                    );
                }
                if !cfg.regex_values.is_empty() {
                    add_headers_to_matches(
                        &mut matches,
                        &cfg.http_header_name,
                        &cfg.regex_values,
                        HEADER_REGEX,
                    );
                }
            }
            "http-request-method" => {
                let Some(cfg) = &c.http_request_method_config else {
                    continue;
                };
                matches = expand_matches_with_methods(matches, &cfg.values);
            }
            "query-string" => {
                let Some(cfg) = &c.query_string_config else {
                    continue;
                };
                matches = expand_matches_with_query_params(matches, &cfg.values);
            }
            "source-ip" => {
                let Some(cfg) = &c.source_ip_config else {
                    continue;
                };
                result.listener_rule_conditions.push(ListenerRuleCondition {
                    field: ConditionField::SourceIp,
                    source_ip_config: Some(SourceIpConditionConfig {
                        values: cfg.values.clone(),
                    }),
                    match_indexes: None,
                });
            }
            _ => {}
        }
    }
    result.matches = matches;
    Some(result)
}

/// The matches, then a copy of each with its path replaced by each value (OR).
pub fn expand_matches_with_paths(
    matches: Vec<HttpRouteMatch>,
    values: &[String],
    path_type: &str,
) -> Vec<HttpRouteMatch> {
    let mut additional = Vec::new();
    for m in &matches {
        for v in values {
            let mut copy = m.clone();
            copy.path = Some(HttpPathMatch {
                type_: Some(path_type.to_string()),
                value: Some(v.clone()),
            });
            additional.push(copy);
        }
    }
    let mut out = matches;
    out.extend(additional);
    out
}

/// The header on every match, its values joined with commas (one ALB condition, values ORed).
pub fn add_headers_to_matches(
    matches: &mut [HttpRouteMatch],
    name: &str,
    values: &[String],
    match_type: &str,
) {
    let joined = values.join(",");
    for m in matches.iter_mut() {
        m.headers.push(HttpHeaderMatch {
            type_: Some(match_type.to_string()),
            name: name.to_string(),
            value: joined.clone(),
        });
    }
}

/// One match per (match, pair): the Gateway controller ANDs a match's query parameters, ALB
/// ORs one condition's pairs.
pub fn expand_matches_with_query_params(
    matches: Vec<HttpRouteMatch>,
    values: &[QueryStringPair],
) -> Vec<HttpRouteMatch> {
    let mut out = Vec::new();
    for m in &matches {
        for kv in values {
            let mut copy = m.clone();
            copy.query_params.push(HttpQueryParamMatch {
                type_: Some(QUERY_EXACT.into()),
                name: kv.key.clone().unwrap_or_default(),
                value: kv.value.clone(),
            });
            out.push(copy);
        }
    }
    out
}

/// One match per (match, method).
pub fn expand_matches_with_methods(
    matches: Vec<HttpRouteMatch>,
    methods: &[String],
) -> Vec<HttpRouteMatch> {
    let mut out = Vec::new();
    for m in &matches {
        for method in methods {
            let mut copy = m.clone();
            copy.method = Some(method.clone());
            out.push(copy);
        }
    }
    out
}
