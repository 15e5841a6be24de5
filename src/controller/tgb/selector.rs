//! A binding's `nodeSelector` checked as Kubernetes' `LabelSelectorAsSelector` checks it before
//! upstream selects any node: a selector it cannot turn into requirements fails the reconcile,
//! so the registered targets stay as they are (matching nothing would deregister every node).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// Longest label name part and label value.
const MAX_NAME: usize = 63;
/// Longest label key prefix (a DNS subdomain).
const MAX_PREFIX: usize = 253;

/// `Ok` when every `matchLabels` entry and `matchExpressions` requirement is a valid label
/// requirement; else the first problem, in apimachinery's `field: Invalid value: …` form.
pub fn check_selector(s: &LabelSelector) -> Result<(), String> {
    for (k, v) in s.match_labels.iter().flatten() {
        check_key(k)?;
        check_value("values[0]", v)?;
    }
    for e in s.match_expressions.iter().flatten() {
        let values = e.values.as_deref().unwrap_or_default();
        match e.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => {
                return Err(format!(
                    "values: Invalid value: {values:?}: for 'in', 'notin' operators, values set can't be empty"
                ))
            }
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                return Err(format!(
                    "values: Invalid value: {values:?}: values set must be empty for exists and does not exist"
                ))
            }
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            op => return Err(format!("{op:?} is not a valid label selector operator")),
        }
        check_key(&e.key)?;
        for (i, v) in values.iter().enumerate() {
            check_value(&format!("values[{i}]"), v)?;
        }
    }
    Ok(())
}

/// A label key: an optional DNS-subdomain prefix and `/`, then a name part.
fn check_key(key: &str) -> Result<(), String> {
    let invalid = |why: &str| Err(format!("key: Invalid value: {key:?}: {why}"));
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) if !n.contains('/') => (Some(p), n),
        Some(_) => return invalid("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
        None => (None, key),
    };
    match prefix {
        Some("") => return invalid("prefix part must be non-empty"),
        Some(p) if p.len() > MAX_PREFIX => {
            return invalid("prefix part must be no more than 253 characters")
        }
        Some(p) if !p.split('.').all(dns_label) => {
            return invalid("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character")
        }
        _ => {}
    }
    if name.is_empty() {
        return invalid("name part must be non-empty");
    }
    if name.len() > MAX_NAME {
        return invalid("name part must be no more than 63 characters");
    }
    if !qualified_word(name) {
        return invalid("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character");
    }
    Ok(())
}

/// A label value: empty, or up to 63 characters of the name-part alphabet.
fn check_value(field: &str, v: &str) -> Result<(), String> {
    if v.len() > MAX_NAME {
        return Err(format!(
            "{field}: Invalid value: {v:?}: must be no more than 63 characters"
        ));
    }
    if !v.is_empty() && !qualified_word(v) {
        return Err(format!("{field}: Invalid value: {v:?}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"));
    }
    Ok(())
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn qualified_word(s: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    edge(s.chars().next())
        && edge(s.chars().last())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// One label of a lowercase RFC 1123 subdomain: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn dns_label(s: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    edge(s.chars().next())
        && edge(s.chars().last())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sel(v: serde_json::Value) -> LabelSelector {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn selectors_kubernetes_accepts_pass() {
        for s in [
            json!({}),
            json!({"matchLabels": {"pool": "web", "topology.kubernetes.io/zone": "", "a.b-c/x_y.z": "v-1"}}),
            json!({"matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["a", "b"]},
                {"key": "zone", "operator": "NotIn", "values": ["c"]},
                {"key": "spot", "operator": "Exists"},
                {"key": "karpenter.sh/nodepool", "operator": "DoesNotExist", "values": []}]}),
        ] {
            assert_eq!(check_selector(&sel(s.clone())), Ok(()), "{s}");
        }
    }

    #[test]
    fn selectors_kubernetes_refuses_say_why() {
        let expr = |e: serde_json::Value| sel(json!({"matchExpressions": [e]}));
        let cases = [
            (
                expr(json!({"key": "zone", "operator": "in", "values": ["a"]})),
                "\"in\" is not a valid label selector operator",
            ),
            (
                expr(json!({"key": "zone", "operator": "In"})),
                "values set can't be empty",
            ),
            (
                expr(json!({"key": "zone", "operator": "NotIn", "values": []})),
                "values set can't be empty",
            ),
            (
                expr(json!({"key": "zone", "operator": "Exists", "values": ["a"]})),
                "values set must be empty for exists and does not exist",
            ),
            (
                expr(json!({"key": "-zone", "operator": "Exists"})),
                "key: Invalid value: \"-zone\": name part must consist",
            ),
            (
                expr(json!({"key": "Example.com/zone", "operator": "Exists"})),
                "prefix part a lowercase RFC 1123 subdomain",
            ),
            (
                expr(json!({"key": "/zone", "operator": "Exists"})),
                "prefix part must be non-empty",
            ),
            (
                expr(json!({"key": "zone", "operator": "In", "values": ["ok", "not ok"]})),
                "values[1]: Invalid value: \"not ok\"",
            ),
            (
                sel(json!({"matchLabels": {"pool": "x".repeat(64)}})),
                "must be no more than 63 characters",
            ),
            (
                sel(json!({"matchLabels": {"a/b/c": "x"}})),
                "a qualified name must consist",
            ),
        ];
        for (s, want) in cases {
            let err = check_selector(&s).unwrap_err();
            assert!(err.contains(want), "{err} (want {want})");
        }
    }
}
