//! How the Ingresses this controller owns (see `ingress_class`) form IngressGroups: group names
//! (IngressClassParams or annotation) and their validation, `group.order`, inactive members and
//! finalizers.

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::Ingress;

pub use super::cluster::{key_of, ClusterObjects};
pub use super::ingress_class::{
    classify, selector_matches, ClassError, ClassifiedIngress, INGRESS_CLASS_CONTROLLER,
};
use super::types::{ExcludedMember, GroupId};
use crate::annotations::{self as ann, suffix};

const MAX_GROUP_NAME_LEN: usize = 63;

/// One IngressGroup: active members in priority order, and Ingresses that still hold the group's
/// finalizer but left it (class or group changed, or being deleted).
#[derive(Debug, Clone)]
pub struct IngressGroup<'a> {
    pub id: GroupId,
    pub members: Vec<ClassifiedIngress<'a>>,
    pub inactive_members: Vec<&'a Ingress>,
    /// Members that cannot be placed (bad `group.order`, broken class while holding the
    /// finalizer). The reconciler must keep their finalizer and must not treat them as gone.
    pub excluded: Vec<ExcludedMember>,
}

/// Upstream's group-name rule.
pub fn validate_group_name(name: &str) -> Result<(), String> {
    let bytes = name.as_bytes();
    let ok_edge = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let ok_inner = |b: u8| ok_edge(b) || b == b'-' || b == b'.';
    let valid = !bytes.is_empty()
        && ok_edge(bytes[0])
        && ok_edge(bytes[bytes.len() - 1])
        && bytes.iter().all(|b| ok_inner(*b));
    if !valid {
        return Err("groupName must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character".into());
    }
    if name.len() > MAX_GROUP_NAME_LEN {
        return Err(format!(
            "groupName must be no more than {MAX_GROUP_NAME_LEN} characters"
        ));
    }
    Ok(())
}

/// The group of a classified Ingress: IngressClassParams `group.name`, else the annotation, else
/// implicit. `Err` = invalid group name (the Ingress leaves any group).
pub fn group_id(c: &ClassifiedIngress<'_>) -> Result<GroupId, String> {
    let explicit = match c.params.and_then(|p| p.spec.group.as_ref()) {
        Some(g) => Some(g.name.clone()),
        None => ann::string(c.annotations(), suffix::GROUP_NAME).map(String::from),
    };
    match explicit {
        Some(name) => validate_group_name(&name).map(|()| GroupId::explicit(&name)),
        None => Ok(GroupId::implicit(c.namespace(), c.name())),
    }
}

fn is_deleting(ing: &Ingress) -> bool {
    ing.metadata.deletion_timestamp.is_some()
}

/// Groups named by the Ingress's finalizers (it stays a member of those until released).
pub fn finalizer_groups(ing: &Ingress) -> Vec<GroupId> {
    let mut out = Vec::new();
    for f in ing.metadata.finalizers.iter().flatten() {
        if f == crate::crd::names::INGRESS_FINALIZER {
            let ns = ing.metadata.namespace.as_deref().unwrap_or("default");
            out.push(GroupId::implicit(
                ns,
                ing.metadata.name.as_deref().unwrap_or(""),
            ));
        } else if let Some(name) = f.strip_prefix(crate::crd::names::GROUP_FINALIZER_PREFIX) {
            out.push(GroupId::explicit(name));
        }
    }
    out
}

/// Every group found in `objs`, keyed by id, plus classification errors of Ingresses that
/// belong to no group yet (reported, not fatal).
pub fn load_groups<'a>(
    objs: &'a ClusterObjects,
    ingress_class_flag: &str,
) -> (BTreeMap<GroupId, IngressGroup<'a>>, Vec<ExcludedMember>) {
    let mut groups: BTreeMap<GroupId, IngressGroup<'a>> = BTreeMap::new();
    let mut errors = Vec::new();
    let mut orders: BTreeMap<String, i32> = BTreeMap::new();
    let entry = |groups: &mut BTreeMap<GroupId, IngressGroup<'a>>, id: &GroupId| {
        groups.entry(id.clone()).or_insert_with(|| IngressGroup {
            id: id.clone(),
            members: Vec::new(),
            inactive_members: Vec::new(),
            excluded: Vec::new(),
        });
    };
    for ing in &objs.ingresses {
        let key = key_of(&ing.metadata);
        let held = finalizer_groups(ing);
        let active: Option<GroupId> = if is_deleting(ing) {
            None
        } else {
            match classify(ing, objs, ingress_class_flag) {
                Ok(None) => None,
                Ok(Some(params)) => {
                    let c = ClassifiedIngress {
                        ingress: ing,
                        params,
                    };
                    match group_id(&c) {
                        Ok(id) => {
                            match ann::int32(c.annotations(), suffix::GROUP_ORDER) {
                                Ok(order) if order.is_none_or(|o| (-1000..=1000).contains(&o)) => {
                                    orders.insert(key.clone(), order.unwrap_or(0));
                                    entry(&mut groups, &id);
                                    if let Some(g) = groups.get_mut(&id) {
                                        g.members.push(c);
                                    }
                                    Some(id)
                                }
                                Ok(order) => {
                                    let msg = format!(
                                    "explicit Ingress group order must be within [-1000:1000], Ingress: {key}, order: {}",
                                    order.unwrap_or_default()
                                );
                                    exclude(
                                        &mut groups,
                                        &id,
                                        &key,
                                        Some(ann::key(suffix::GROUP_ORDER)),
                                        msg,
                                    );
                                    Some(id)
                                }
                                Err(e) => {
                                    let msg = format!("failed to load Ingress group order for ingress: {key}: {e}");
                                    exclude(&mut groups, &id, &key, Some(e.key), msg);
                                    Some(id)
                                }
                            }
                        }
                        // An invalid group name means leaving the group: inactive where held.
                        Err(_) => None,
                    }
                }
                Err(e) => {
                    let msg = e.to_string();
                    let mut placed = false;
                    for id in &held {
                        if matches!(e, ClassError::InvalidClass(_)) {
                            let m =
                                format!("Ingress has invalid IngressClass configuration: {msg}");
                            exclude(&mut groups, id, &key, None, m);
                            placed = true;
                        }
                    }
                    if !placed {
                        errors.push(ExcludedMember {
                            ingress: key.clone(),
                            annotation: None,
                            error: msg,
                        });
                    }
                    // Treat as member of every held group so it is not finalized away.
                    held.first().cloned()
                }
            }
        };
        for id in held {
            if Some(&id) != active.as_ref() {
                entry(&mut groups, &id);
                if let Some(g) = groups.get_mut(&id) {
                    g.inactive_members.push(ing);
                }
            }
        }
    }
    for g in groups.values_mut() {
        g.members.sort_by(|a, b| {
            let (ka, kb) = (a.key(), b.key());
            orders.get(&ka).cmp(&orders.get(&kb)).then(ka.cmp(&kb))
        });
    }
    (groups, errors)
}

fn exclude(
    groups: &mut BTreeMap<GroupId, IngressGroup<'_>>,
    id: &GroupId,
    key: &str,
    annotation: Option<String>,
    msg: String,
) {
    let ex = ExcludedMember {
        ingress: key.to_string(),
        annotation,
        error: msg,
    };
    match groups.get_mut(id) {
        Some(g) => g.excluded.push(ex),
        None => {
            groups.insert(
                id.clone(),
                IngressGroup {
                    id: id.clone(),
                    members: Vec::new(),
                    inactive_members: Vec::new(),
                    excluded: vec![ex],
                },
            );
        }
    }
}

#[cfg(test)]
#[path = "group_tests.rs"]
mod tests;
