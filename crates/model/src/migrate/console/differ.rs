//! Field-by-field comparison of the Ingress plan and the Gateway plan
//! (`pkg/ingress2gateway/console/differ.go`): resources matched by their correlation id, every
//! field of a matched pair `same` or `changed` (arrays compared as multisets, as ALB treats
//! security-group rules and the like as unordered), of an unmatched resource `removed` (Ingress
//! only) or `added` (Gateway only); each entry then classified (`classify`).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Service;
use serde::{Deserialize, Serialize};

use super::classify::{classify_entry, UserSpecifiedFields};
use super::correlate::correlation_id_with;
pub use super::entry::{semantic_equal, DiffEntry, DiffStatus};
use super::model::{Fields, ResourceTree};

/// Entries by status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DiffSummary {
    pub same: usize,
    pub changed: usize,
    pub added: usize,
    pub removed: usize,
}

impl DiffSummary {
    pub fn count(&self, status: DiffStatus) -> usize {
        match status {
            DiffStatus::Same => self.same,
            DiffStatus::Changed => self.changed,
            DiffStatus::Added => self.added,
            DiffStatus::Removed => self.removed,
        }
    }

    pub fn total(&self) -> usize {
        self.same + self.changed + self.added + self.removed
    }
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DiffResult {
    pub entries: Vec<DiffEntry>,
    pub summary: DiffSummary,
}

/// A resource of one plan under its correlation id.
#[derive(Debug, Clone, PartialEq)]
pub struct Correlated {
    pub raw_id: String,
    pub fields: Fields,
}

/// Compares the plans: types in order, resources by correlation id, fields by path.
pub fn diff(
    ingress: &ResourceTree,
    gateway: &ResourceTree,
    user_specified: &UserSpecifiedFields,
) -> DiffResult {
    diff_with(ingress, gateway, user_specified, &[])
}

/// [`diff`] with target groups matched through `services` (named ports resolved).
pub fn diff_with(
    ingress: &ResourceTree,
    gateway: &ResourceTree,
    user_specified: &UserSpecifiedFields,
    services: &[Service],
) -> DiffResult {
    let mut entries = Vec::new();
    let kinds: BTreeSet<&String> = ingress.keys().chain(gateway.keys()).collect();
    for kind in kinds {
        let i_by = group_by_correlation_with(kind, ingress, services);
        let g_by = group_by_correlation_with(kind, gateway, services);
        let corrs: BTreeSet<&String> = i_by.keys().chain(g_by.keys()).collect();
        for corr in corrs {
            match (i_by.get(corr), g_by.get(corr)) {
                (Some(i), Some(g)) => entries.extend(diff_fields(kind, corr, i, g)),
                (Some(i), None) => {
                    for (field, v) in &i.fields {
                        let mut e = DiffEntry::new(kind, corr, field, DiffStatus::Removed);
                        e.ingress_resource_id = i.raw_id.clone();
                        e.ingress = Some(v.clone());
                        entries.push(e);
                    }
                }
                (None, Some(g)) => {
                    for (field, v) in &g.fields {
                        let mut e = DiffEntry::new(kind, corr, field, DiffStatus::Added);
                        e.gateway_resource_id = g.raw_id.clone();
                        e.gateway = Some(v.clone());
                        entries.push(e);
                    }
                }
                (None, None) => {}
            }
        }
    }
    let mut summary = DiffSummary::default();
    for e in &mut entries {
        let c = classify_entry(e, user_specified);
        e.known = c.known;
        e.known_cause = c.reason.to_string();
        match e.status {
            DiffStatus::Same => summary.same += 1,
            DiffStatus::Changed => summary.changed += 1,
            DiffStatus::Added => summary.added += 1,
            DiffStatus::Removed => summary.removed += 1,
        }
    }
    DiffResult { entries, summary }
}

/// The resources of one type by correlation id (computed against the whole plan, so a target
/// group finds its binding).
pub fn group_by_correlation(kind: &str, tree: &ResourceTree) -> BTreeMap<String, Correlated> {
    group_by_correlation_with(kind, tree, &[])
}

/// [`group_by_correlation`] with named ports resolved through `services`.
pub fn group_by_correlation_with(
    kind: &str,
    tree: &ResourceTree,
    services: &[Service],
) -> BTreeMap<String, Correlated> {
    let mut out = BTreeMap::new();
    for (raw_id, fields) in tree.get(kind).into_iter().flatten() {
        out.insert(
            correlation_id_with(kind, raw_id, tree, services),
            Correlated {
                raw_id: raw_id.clone(),
                fields: fields.clone(),
            },
        );
    }
    out
}

fn diff_fields(kind: &str, corr: &str, i: &Correlated, g: &Correlated) -> Vec<DiffEntry> {
    let fields: BTreeSet<&String> = i.fields.keys().chain(g.fields.keys()).collect();
    fields
        .into_iter()
        .map(|field| {
            let (iv, gv) = (i.fields.get(field), g.fields.get(field));
            let status = match (iv, gv) {
                (Some(a), Some(b)) if semantic_equal(a, b) => DiffStatus::Same,
                (Some(_), Some(_)) => DiffStatus::Changed,
                (Some(_), None) => DiffStatus::Removed,
                _ => DiffStatus::Added,
            };
            let mut e = DiffEntry::new(kind, corr, field, status);
            e.ingress_resource_id = i.raw_id.clone();
            e.gateway_resource_id = g.raw_id.clone();
            e.ingress = iv.cloned();
            e.gateway = gv.cloned();
            e
        })
        .collect()
}
