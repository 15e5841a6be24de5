//! Annotation parsing with upstream's rules and error texts: `<prefix>/<suffix>` lookup, Go
//! `strconv` bool/int syntax, comma lists, `k=v` maps with backslash escapes, and JSON values.
//! Upstream's texts embed Go `strconv` errors, which we reproduce so messages match.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;

pub mod go_json;

/// Prefix of every Ingress (and Service, for target-group settings) annotation.
pub const INGRESS_PREFIX: &str = "alb.ingress.kubernetes.io";
/// The legacy class annotation.
pub const INGRESS_CLASS: &str = "kubernetes.io/ingress.class";
/// IngressClass annotation that marks the cluster default class.
pub const DEFAULT_CLASS: &str = "ingressclass.kubernetes.io/is-default-class";
/// Written by the controller, not read: the group's stack in upstream's schema on its first
/// member (feature gate `IngressPlanAnnotation`), for upstream's migration console.
pub const DRY_RUN_PLAN: &str = "alb.ingress.kubernetes.io/dry-run-plan";

/// Annotation suffixes (after `alb.ingress.kubernetes.io/`), spelled as upstream.
pub mod suffix {
    pub const LOAD_BALANCER_NAME: &str = "load-balancer-name";
    pub const GROUP_NAME: &str = "group.name";
    pub const GROUP_ORDER: &str = "group.order";
    pub const TAGS: &str = "tags";
    pub const IP_ADDRESS_TYPE: &str = "ip-address-type";
    pub const SCHEME: &str = "scheme";
    pub const SUBNETS: &str = "subnets";
    pub const CUSTOMER_OWNED_IPV4_POOL: &str = "customer-owned-ipv4-pool";
    pub const LOAD_BALANCER_ATTRIBUTES: &str = "load-balancer-attributes";
    pub const WAFV2_ACL_ARN: &str = "wafv2-acl-arn";
    pub const WAFV2_ACL_NAME: &str = "wafv2-acl-name";
    pub const WAF_ACL_ID: &str = "waf-acl-id";
    pub const WEB_ACL_ID: &str = "web-acl-id";
    pub const SHIELD_ADVANCED_PROTECTION: &str = "shield-advanced-protection";
    pub const SECURITY_GROUPS: &str = "security-groups";
    pub const LISTEN_PORTS: &str = "listen-ports";
    pub const SSL_REDIRECT: &str = "ssl-redirect";
    pub const INBOUND_CIDRS: &str = "inbound-cidrs";
    pub const CERTIFICATE_ARN: &str = "certificate-arn";
    pub const SSL_POLICY: &str = "ssl-policy";
    pub const TARGET_TYPE: &str = "target-type";
    pub const BACKEND_PROTOCOL: &str = "backend-protocol";
    pub const BACKEND_PROTOCOL_VERSION: &str = "backend-protocol-version";
    pub const TARGET_GROUP_ATTRIBUTES: &str = "target-group-attributes";
    pub const HEALTHCHECK_PORT: &str = "healthcheck-port";
    pub const HEALTHCHECK_PROTOCOL: &str = "healthcheck-protocol";
    pub const HEALTHCHECK_PATH: &str = "healthcheck-path";
    pub const HEALTHCHECK_INTERVAL_SECONDS: &str = "healthcheck-interval-seconds";
    pub const HEALTHCHECK_TIMEOUT_SECONDS: &str = "healthcheck-timeout-seconds";
    pub const HEALTHY_THRESHOLD_COUNT: &str = "healthy-threshold-count";
    pub const UNHEALTHY_THRESHOLD_COUNT: &str = "unhealthy-threshold-count";
    pub const SUCCESS_CODES: &str = "success-codes";
    pub const AUTH_TYPE: &str = "auth-type";
    pub const AUTH_IDP_COGNITO: &str = "auth-idp-cognito";
    pub const AUTH_IDP_OIDC: &str = "auth-idp-oidc";
    pub const AUTH_ON_UNAUTHENTICATED_REQUEST: &str = "auth-on-unauthenticated-request";
    pub const AUTH_SCOPE: &str = "auth-scope";
    pub const AUTH_SESSION_COOKIE: &str = "auth-session-cookie";
    pub const AUTH_SESSION_TIMEOUT: &str = "auth-session-timeout";
    pub const JWT_VALIDATION: &str = "jwt-validation";
    pub const TARGET_NODE_LABELS: &str = "target-node-labels";
    pub const MANAGE_BACKEND_SG_RULES: &str = "manage-backend-security-group-rules";
    pub const MUTUAL_AUTHENTICATION: &str = "mutual-authentication";
    pub const SECURITY_GROUP_PREFIX_LISTS: &str = "security-group-prefix-lists";
    pub const LISTENER_ATTRIBUTES_PREFIX: &str = "listener-attributes";
    pub const MULTI_CLUSTER_TARGET_GROUP: &str = "multi-cluster-target-group";
    pub const MINIMUM_LOAD_BALANCER_CAPACITY: &str = "minimum-load-balancer-capacity";
    pub const IPAM_IPV4_POOL_ID: &str = "ipam-ipv4-pool-id";
    pub const ENABLE_FRONTEND_NLB: &str = "enable-frontend-nlb";
    pub const FRONTEND_NLB_SCHEME: &str = "frontend-nlb-scheme";
    pub const FRONTEND_NLB_SUBNETS: &str = "frontend-nlb-subnets";
    pub const FRONTEND_NLB_SECURITY_GROUPS: &str = "frontend-nlb-security-groups";
    pub const FRONTEND_NLB_EIP_ALLOCATIONS: &str = "frontend-nlb-eip-allocations";
    pub const FRONTEND_NLB_LISTENER_PORT_MAPPING: &str = "frontend-nlb-listener-port-mapping";
    pub const FRONTEND_NLB_HEALTHCHECK_PORT: &str = "frontend-nlb-healthcheck-port";
    pub const FRONTEND_NLB_HEALTHCHECK_PROTOCOL: &str = "frontend-nlb-healthcheck-protocol";
    pub const FRONTEND_NLB_HEALTHCHECK_PATH: &str = "frontend-nlb-healthcheck-path";
    pub const FRONTEND_NLB_HEALTHCHECK_INTERVAL_SECONDS: &str =
        "frontend-nlb-healthcheck-interval-seconds";
    pub const FRONTEND_NLB_HEALTHCHECK_TIMEOUT_SECONDS: &str =
        "frontend-nlb-healthcheck-timeout-seconds";
    pub const FRONTEND_NLB_HEALTHY_THRESHOLD_COUNT: &str =
        "frontend-nlb-healthcheck-healthy-threshold-count";
    pub const FRONTEND_NLB_UNHEALTHY_THRESHOLD_COUNT: &str =
        "frontend-nlb-healthcheck-unhealthy-threshold-count";
    pub const FRONTEND_NLB_SUCCESS_CODES: &str = "frontend-nlb-healthcheck-success-codes";
    pub const FRONTEND_NLB_ATTRIBUTES: &str = "frontend-nlb-attributes";
    pub const FRONTEND_NLB_TAGS: &str = "frontend-nlb-tags";
    pub const USE_REGEX_PATH_MATCH: &str = "use-regex-path-match";
    pub const TARGET_CONTROL_PORT: &str = "target-control-port";
    pub const CREATE_ACM_CERT: &str = "create-acm-cert";
    pub const ACM_PCA_ARN: &str = "acm-pca-arn";
    pub const ACTIONS_PREFIX: &str = "actions";
    pub const CONDITIONS_PREFIX: &str = "conditions";
    pub const TRANSFORMS_PREFIX: &str = "transforms";
}

/// A malformed annotation value. `key` is the full annotation key; the Display text is upstream's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AnnotationError {
    pub key: String,
    pub message: String,
}

/// Annotations as found on an object (absent map = empty).
pub type AnnotationMap = BTreeMap<String, String>;

/// Full key for a suffix: `alb.ingress.kubernetes.io/<suffix>`.
pub fn key(suffix: &str) -> String {
    format!("{INGRESS_PREFIX}/{suffix}")
}

/// Raw string value, if present (an empty string counts as present).
pub fn string<'a>(map: &'a AnnotationMap, suffix: &str) -> Option<&'a str> {
    map.get(&key(suffix)).map(String::as_str)
}

/// Go-style `%q` quoting, close enough for annotation values (ASCII escapes).
fn go_quote(s: &str) -> String {
    format!("{s:?}")
}

/// Go `strconv.ParseBool` accepted spellings.
pub fn go_parse_bool(raw: &str) -> Option<bool> {
    match raw {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Go `strconv.ParseInt(raw, 10, bits)` with its error text (`strconv.ParseInt: parsing ...`).
pub fn go_parse_int(raw: &str, bits: u32) -> Result<i64, String> {
    let digits = raw.strip_prefix(['+', '-']).unwrap_or(raw);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.ParseInt: parsing {}: invalid syntax",
            go_quote(raw)
        ));
    }
    let out_of_range = || {
        format!(
            "strconv.ParseInt: parsing {}: value out of range",
            go_quote(raw)
        )
    };
    let v: i64 = raw.parse().map_err(|_| out_of_range())?;
    let (min, max) = if bits == 32 {
        (i32::MIN as i64, i32::MAX as i64)
    } else {
        (i64::MIN, i64::MAX)
    };
    if v < min || v > max {
        return Err(out_of_range());
    }
    Ok(v)
}

/// Bool annotation; Go syntax (`true`, `1`, `T`, ...).
pub fn bool(map: &AnnotationMap, suffix: &str) -> Result<Option<bool>, AnnotationError> {
    bool_at(map, &key(suffix))
}

/// Bool annotation under a full key (any prefix).
pub fn bool_at(map: &AnnotationMap, k: &str) -> Result<Option<bool>, AnnotationError> {
    let Some(raw) = map.get(k) else {
        return Ok(None);
    };
    go_parse_bool(raw).map(Some).ok_or_else(|| AnnotationError {
        message: format!(
            "failed to parse bool annotation, {k}: {raw}: strconv.ParseBool: parsing {}: invalid syntax",
            go_quote(raw)
        ),
        key: k.to_string(),
    })
}

fn int(map: &AnnotationMap, suffix: &str, bits: u32) -> Result<Option<i64>, AnnotationError> {
    int_at(map, &key(suffix), bits)
}

fn int_at(map: &AnnotationMap, k: &str, bits: u32) -> Result<Option<i64>, AnnotationError> {
    let Some(raw) = map.get(k) else {
        return Ok(None);
    };
    go_parse_int(raw, bits)
        .map(Some)
        .map_err(|e| AnnotationError {
            message: format!("failed to parse int{bits} annotation, {k}: {raw}: {e}"),
            key: k.to_string(),
        })
}

/// int32 annotation under a full key (any prefix).
pub fn int32_at(map: &AnnotationMap, k: &str) -> Result<Option<i32>, AnnotationError> {
    Ok(int_at(map, k, 32)?.map(|v| v as i32))
}

/// int32 annotation.
pub fn int32(map: &AnnotationMap, suffix: &str) -> Result<Option<i32>, AnnotationError> {
    Ok(int(map, suffix, 32)?.map(|v| v as i32))
}

/// int64 annotation.
pub fn int64(map: &AnnotationMap, suffix: &str) -> Result<Option<i64>, AnnotationError> {
    int(map, suffix, 64)
}

/// Comma-separated list: items trimmed, empty items dropped.
pub fn string_list(map: &AnnotationMap, suffix: &str) -> Option<Vec<String>> {
    string(map, suffix).map(split_comma_list)
}

/// Upstream's comma-list splitting.
pub fn split_comma_list(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// `k1=v1,k2=v2` map. A backslash escapes the next character; a comma only separates pairs
/// when some `=` follows it (upstream's rule, so `a=b,c` keeps the trailing text as a pair).
pub fn string_map(
    map: &AnnotationMap,
    suffix: &str,
) -> Result<Option<BTreeMap<String, String>>, AnnotationError> {
    string_map_at(map, &key(suffix))
}

/// `k=v` map annotation under a full key (any prefix).
pub fn string_map_at(
    map: &AnnotationMap,
    k: &str,
) -> Result<Option<BTreeMap<String, String>>, AnnotationError> {
    let Some(raw) = map.get(k) else {
        return Ok(None);
    };
    parse_string_map(raw)
        .map(Some)
        .ok_or_else(|| AnnotationError {
            message: format!("failed to parse stringMap annotation, {k}: {raw}"),
            key: k.to_string(),
        })
}

/// Parses a `k=v,...` string; `None` on a pair without `=` or with an empty key.
pub fn parse_string_map(raw: &str) -> Option<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for pair in split_key_value_pairs(raw) {
        let (k, v) = pair.split_once('=')?;
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() {
            return None;
        }
        out.insert(k.to_string(), v.to_string());
    }
    Some(out)
}

fn split_key_value_pairs(s: &str) -> Vec<String> {
    let mut result = Vec::new();
    let mut current = String::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\\' {
            if let Some((_, next)) = chars.next() {
                current.push(next);
            } else {
                current.push(c);
            }
        } else if c == ',' {
            let remaining = s[i + 1..].trim();
            if remaining.contains('=') {
                result.push(current.trim().to_string());
                current.clear();
            } else if !remaining.is_empty() {
                result.push(current.trim().to_string());
                result.push(remaining.to_string());
                return result;
            } else {
                current.push(c);
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        result.push(current.trim().to_string());
    }
    result
}

/// JSON annotation decoded into `T` with Go `encoding/json` key rules (see [`go_json`]).
pub fn json<T: DeserializeOwned>(
    map: &AnnotationMap,
    suffix: &str,
) -> Result<Option<T>, AnnotationError> {
    let k = key(suffix);
    let Some(raw) = map.get(&k) else {
        return Ok(None);
    };
    go_json::from_str(raw)
        .map(Some)
        .map_err(|e| AnnotationError {
            message: format!("failed to parse json annotation, {k}: {raw}: {e}"),
            key: k,
        })
}

/// Service annotations merged over Ingress annotations: the Service wins on conflicts.
pub fn merge_service_over_ingress(svc: &AnnotationMap, ing: &AnnotationMap) -> AnnotationMap {
    let mut out = ing.clone();
    for (k, v) in svc {
        out.insert(k.clone(), v.clone());
    }
    out
}

#[cfg(test)]
mod tests;
