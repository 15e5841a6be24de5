//! Upstream's one rule for group-wide settings: every member that sets a value must set the same
//! one, else the whole group fails with upstream's conflict message (a member-local parse error
//! only excludes that member, see `build`).

use std::collections::BTreeMap;

use super::error::{Fail, ModelError};
use super::group::ClassifiedIngress;
use crate::annotations as ann;

/// A member's annotation error, attributed to that member (it is excluded, not the group failed).
pub(crate) fn member_err<'b>(
    m: &'b ClassifiedIngress<'_>,
) -> impl Fn(ann::AnnotationError) -> ModelError + 'b {
    move |e| Fail::from(e).on(&m.key())
}

/// A failure of the group as a whole.
pub(crate) fn group(msg: String) -> ModelError {
    ModelError::Group(msg)
}

/// Go's `%v` of a string slice: `[a b]`.
pub(crate) fn go_list<'a>(items: impl IntoIterator<Item = &'a String>) -> String {
    format!(
        "[{}]",
        items.into_iter().cloned().collect::<Vec<_>>().join(" ")
    )
}

/// Go's `%v` of a `sets.Set[string]` (a `map[string]struct{}`): `map[a:{} b:{}]`.
pub(crate) fn go_set_map(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|s| format!("{s}:{{}}")).collect();
    format!("map[{}]", items.join(" "))
}

/// The one rule: the values members set (in member order, or sorted when upstream collects a
/// set) must all be equal. `conflict(first, other, all)` words upstream's error otherwise.
pub(crate) fn ensure_same<T: PartialEq + Clone>(
    values: impl IntoIterator<Item = T>,
    conflict: impl FnOnce(&T, &T, &[T]) -> String,
) -> Result<Option<T>, ModelError> {
    agree(values, conflict).map_err(group)
}

/// [`ensure_same`] for layers whose errors are plain texts.
pub(crate) fn agree<T: PartialEq + Clone>(
    values: impl IntoIterator<Item = T>,
    conflict: impl FnOnce(&T, &T, &[T]) -> String,
) -> Result<Option<T>, String> {
    let values: Vec<T> = values.into_iter().collect();
    let Some(first) = values.first() else {
        return Ok(None);
    };
    match values.iter().find(|v| *v != first) {
        Some(other) => Err(conflict(first, other, &values)),
        None => Ok(Some(first.clone())),
    }
}

/// The same rule per key of a map-valued setting: a key two members set must agree, unless
/// `settled` (the IngressClassParams value, which wins anyway) holds it.
pub(crate) fn merge_key(
    out: &mut BTreeMap<String, String>,
    (k, v): (String, String),
    settled: &BTreeMap<String, String>,
    conflict: impl FnOnce(&str, &str, &str) -> String,
) -> Result<(), String> {
    if let Some(existing) = out.get(&k).filter(|_| !settled.contains_key(&k)) {
        agree([existing.clone(), v.clone()], |a, b, _| conflict(&k, a, b))?;
    }
    out.insert(k, v);
    Ok(())
}

/// The same rule member by member, as upstream merges listen-port settings: the first member
/// that sets a value fixes it, and a later one that differs fails naming both members.
pub(crate) struct FirstSetter<T> {
    first: Option<(String, T)>,
}

impl<T> Default for FirstSetter<T> {
    fn default() -> Self {
        FirstSetter { first: None }
    }
}

impl<T> FirstSetter<T> {
    /// `member` sets `value`; `conflict(first member, its value, this value)` words the error.
    pub(crate) fn offer(
        &mut self,
        member: &str,
        value: T,
        same: impl Fn(&T, &T) -> bool,
        conflict: impl FnOnce(&str, &T, &T) -> String,
    ) -> Result<(), String> {
        match &self.first {
            None => self.first = Some((member.to_string(), value)),
            Some((by, first)) if !same(first, &value) => return Err(conflict(by, first, &value)),
            Some(_) => {}
        }
        Ok(())
    }

    pub(crate) fn value(self) -> Option<T> {
        self.first.map(|(_, v)| v)
    }
}
