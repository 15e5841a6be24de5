//! EC2 `Filter` evaluation for the fake: each resource names the values of the filters it
//! supports; unknown filters are an error as in AWS (moto answers them with HTTP 500).

use crate::aws::error::{AwsError, Result};
use crate::aws::types::{Ec2Query, Tags};

/// A resource the fake can filter.
pub(crate) trait Filterable {
    /// The non-tag filter names this kind supports (checked even when nothing exists yet).
    const FILTERS: &'static [&'static str];
    fn id(&self) -> &str;
    fn tags(&self) -> &Tags;
    /// Values of a non-tag filter, or `None` when the filter is not supported.
    fn field(&self, name: &str) -> Option<Vec<String>>;
}

/// AWS filter wildcards: `*` any run, `?` one character.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn values_of<R: Filterable>(r: &R, name: &str) -> Result<Vec<String>> {
    if let Some(key) = name.strip_prefix("tag:") {
        return Ok(r.tags().get(key).cloned().into_iter().collect());
    }
    match name {
        "tag-key" => Ok(r.tags().keys().cloned().collect()),
        "tag-value" => Ok(r.tags().values().cloned().collect()),
        _ => r.field(name).ok_or_else(|| AwsError::Validation {
            code: "InvalidParameterValue".into(),
            message: format!("The filter '{name}' is invalid"),
        }),
    }
}

/// The resources matching the query; `not_found` builds the error for an unknown ID.
pub(crate) fn select<'a, R: Filterable + Clone + 'a>(
    all: impl Iterator<Item = &'a R>,
    q: &Ec2Query,
    not_found: impl Fn(&str) -> AwsError,
) -> Result<Vec<R>> {
    for (name, _) in &q.filters {
        let tag = name.starts_with("tag:") || name == "tag-key" || name == "tag-value";
        if !tag && !R::FILTERS.contains(&name.as_str()) {
            return Err(AwsError::Validation {
                code: "InvalidParameterValue".into(),
                message: format!("The filter '{name}' is invalid"),
            });
        }
    }
    let all: Vec<&R> = all.collect();
    for id in &q.ids {
        if !all.iter().any(|r| r.id() == id) {
            return Err(not_found(id));
        }
    }
    let mut out = Vec::new();
    for r in all {
        if !q.ids.is_empty() && !q.ids.iter().any(|i| i == r.id()) {
            continue;
        }
        let mut keep = true;
        for (name, wanted) in &q.filters {
            let have = values_of(r, name)?;
            if !wanted.iter().any(|w| have.iter().any(|h| glob(w, h))) {
                keep = false;
                break;
            }
        }
        if keep {
            out.push(r.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn wildcards() {
        assert!(glob("kubernetes.io/cluster/*", "kubernetes.io/cluster/c1"));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "abbc"));
        assert!(glob("*", ""));
        assert!(!glob("abc", "abcd"));
        assert!(glob("1", "1"));
    }
}
