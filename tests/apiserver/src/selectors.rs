//! Label selectors (string form and `LabelSelector` objects) and field selectors.

use crate::error::ApiError;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Req {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<Req>);

/// Splits on commas that are not inside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
}

fn parse_set(rest: &str, sel: &str) -> Result<Vec<String>, ApiError> {
    let rest = rest.trim();
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| {
            ApiError::BadRequest(format!(
                "unable to parse requirement: found '{rest}', expected: '(' in \"{sel}\""
            ))
        })?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
}

impl LabelSelector {
    pub fn parse(sel: &str) -> Result<Self, ApiError> {
        let mut reqs = Vec::new();
        if sel.trim().is_empty() {
            return Ok(LabelSelector(reqs));
        }
        let bad = |why: &str| {
            ApiError::BadRequest(format!(
                "unable to parse requirement: {why} in selector \"{sel}\""
            ))
        };
        for part in split_top(sel) {
            let p = part.trim();
            if p.is_empty() {
                return Err(bad("empty requirement"));
            }
            let req = if let Some(k) = p.strip_prefix('!') {
                Req::NotExists(k.trim().to_string())
            } else if let Some((k, v)) = p.split_once("!=") {
                Req::NotEq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = p.split_once("==") {
                Req::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = p.split_once('=') {
                Req::Eq(k.trim().into(), v.trim().into())
            } else if let Some(i) = p.find(" notin ").or_else(|| p.find(" notin(")) {
                Req::NotIn(p[..i].trim().into(), parse_set(&p[i + 6..], sel)?)
            } else if let Some(i) = p.find(" in ").or_else(|| p.find(" in(")) {
                Req::In(p[..i].trim().into(), parse_set(&p[i + 3..], sel)?)
            } else {
                Req::Exists(p.to_string())
            };
            let key = match &req {
                Req::Eq(k, _) | Req::NotEq(k, _) | Req::In(k, _) | Req::NotIn(k, _) => k,
                Req::Exists(k) | Req::NotExists(k) => k,
            };
            if !valid_key(key) {
                return Err(bad(&format!("invalid label key \"{key}\"")));
            }
            reqs.push(req);
        }
        Ok(LabelSelector(reqs))
    }

    /// Builds a selector from a `LabelSelector` object (`matchLabels`, `matchExpressions`).
    pub fn from_object(obj: Option<&Value>) -> Result<Self, String> {
        let mut reqs = Vec::new();
        let Some(obj) = obj.filter(|o| !o.is_null()) else {
            return Ok(LabelSelector(reqs));
        };
        if let Some(m) = obj.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in m {
                reqs.push(Req::Eq(k.clone(), v.as_str().unwrap_or("").to_string()));
            }
        }
        for e in obj
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = e
                .get("key")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let values: Vec<String> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            reqs.push(
                match e.get("operator").and_then(Value::as_str).unwrap_or("") {
                    "In" => Req::In(key, values),
                    "NotIn" => Req::NotIn(key, values),
                    "Exists" => Req::Exists(key),
                    "DoesNotExist" => Req::NotExists(key),
                    other => {
                        return Err(format!("{other:?} is not a valid label selector operator"))
                    }
                },
            );
        }
        Ok(LabelSelector(reqs))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Matches against `metadata.labels` of `obj` (an object without labels has none).
    pub fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels");
        self.matches_labels(labels)
    }

    pub fn matches_labels(&self, labels: Option<&Value>) -> bool {
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Req::Eq(k, v) => get(k) == Some(v.as_str()),
            Req::NotEq(k, v) => get(k) != Some(v.as_str()),
            Req::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Req::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Req::Exists(k) => get(k).is_some(),
            Req::NotExists(k) => get(k).is_none(),
        })
    }
}

/// A field selector: `path=value`, `path==value`, `path!=value`, comma-separated. Any dotted path
/// of the object works (`metadata.name`, `spec.nodeName`, `status.phase`); a missing field is "".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector(Vec<(Vec<String>, bool, String)>);

impl FieldSelector {
    pub fn parse(sel: &str) -> Result<Self, ApiError> {
        let mut reqs = Vec::new();
        for part in sel.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (path, eq, value) = if let Some((k, v)) = part.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = part.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = part.split_once('=') {
                (k, true, v)
            } else {
                return Err(ApiError::BadRequest(format!(
                    "invalid selector: '{sel}'; can't understand '{part}'"
                )));
            };
            let path = path.trim().split('.').map(String::from).collect();
            reqs.push((path, eq, value.trim().to_string()));
        }
        Ok(FieldSelector(reqs))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(path, eq, want)| {
            let mut cur = Some(obj);
            for seg in path {
                cur = cur.and_then(|c| c.get(seg));
            }
            let got = match cur {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(v) => v.to_string(),
            };
            (got == *want) == *eq
        })
    }

    /// The name a selector pins down with `metadata.name=x`, used to skip scans.
    pub fn pinned_name(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|(p, eq, _)| *eq && p.len() == 2 && p[0] == "metadata" && p[1] == "name")
            .map(|(_, _, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "a", "namespace": "ns1", "labels": labels}, "status": {"phase": "Running"}})
    }

    #[test]
    fn label_operators() {
        let o = obj(json!({"app": "web", "tier": "front"}));
        let m = |s: &str| LabelSelector::parse(s).unwrap().matches(&o);
        assert!(m("app=web") && m("app==web") && m("app!=db") && m("app"));
        assert!(!m("app=db") && !m("app!=web") && !m("!app") && m("!missing"));
        assert!(m("app in (web, db),tier notin (back)"));
        assert!(!m("app in (db)") && !m("tier notin (front,back)"));
        assert!(m("missing notin (x)") && !m("missing in (x)"));
        assert!(m("") && m("app=web,tier=front") && !m("app=web,tier=back"));
    }

    #[test]
    fn bad_label_selector_is_an_error() {
        assert!(LabelSelector::parse("a in x").is_err());
        assert!(LabelSelector::parse("a,,b").is_err());
        assert!(LabelSelector::parse("sp ace=1").is_err());
    }

    #[test]
    fn selector_objects() {
        let o = obj(json!({"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}));
        let s = json!({"matchExpressions": [{"key": "elbv2.k8s.aws/pod-readiness-gate-inject", "operator": "In", "values": ["enabled"]}]});
        assert!(LabelSelector::from_object(Some(&s)).unwrap().matches(&o));
        let s = json!({"matchLabels": {"x": "y"}});
        assert!(!LabelSelector::from_object(Some(&s)).unwrap().matches(&o));
        assert!(LabelSelector::from_object(None).unwrap().matches(&o));
        assert!(LabelSelector::from_object(Some(
            &json!({"matchExpressions": [{"key": "a", "operator": "Nope"}]})
        ))
        .is_err());
    }

    #[test]
    fn field_selectors() {
        let o = obj(json!({}));
        let m = |s: &str| FieldSelector::parse(s).unwrap().matches(&o);
        assert!(m("metadata.name=a") && m("metadata.namespace==ns1") && m("status.phase!=Pending"));
        assert!(!m("metadata.name=b") && !m("metadata.name=a,metadata.namespace=x"));
        assert!(m("spec.nodeName="));
        assert_eq!(
            FieldSelector::parse("metadata.name=a")
                .unwrap()
                .pinned_name(),
            Some("a")
        );
        assert!(FieldSelector::parse("nonsense").is_err());
    }
}
