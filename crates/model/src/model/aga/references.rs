//! Which GlobalAccelerators reference which Services, Ingresses, Gateways and endpoint ids
//! (upstream's `reference_tracker.go`), so a change to one of those requeues the accelerators
//! naming it. Plain data: the controller keeps it behind its own lock.

use std::collections::{BTreeMap, BTreeSet};

use super::endpoints::{EndpointReference, ResourceKey};

/// Resource → the GlobalAccelerators (`namespace/name`) referencing it, and back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReferenceTracker {
    by_resource: BTreeMap<ResourceKey, BTreeSet<String>>,
    by_accelerator: BTreeMap<String, BTreeSet<ResourceKey>>,
}

impl ReferenceTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records what `accelerator` (`namespace/name`) references now (its
    /// [`super::endpoints::desired_endpoints`]), forgetting what it no longer does.
    pub fn update(&mut self, accelerator: &str, desired: &[EndpointReference]) {
        let current: BTreeSet<ResourceKey> = desired.iter().map(|d| d.resource_key()).collect();
        for key in &current {
            self.by_resource
                .entry(key.clone())
                .or_default()
                .insert(accelerator.to_string());
        }
        let previous = self
            .by_accelerator
            .insert(accelerator.to_string(), current.clone())
            .unwrap_or_default();
        for stale in previous.difference(&current) {
            self.forget(stale, accelerator);
        }
    }

    /// Forgets every reference of a deleted `accelerator`.
    pub fn remove(&mut self, accelerator: &str) {
        if let Some(previous) = self.by_accelerator.remove(accelerator) {
            for key in &previous {
                self.forget(key, accelerator);
            }
        }
    }

    fn forget(&mut self, key: &ResourceKey, accelerator: &str) {
        if let Some(referencing) = self.by_resource.get_mut(key) {
            referencing.remove(accelerator);
            if referencing.is_empty() {
                self.by_resource.remove(key);
            }
        }
    }

    /// Whether any GlobalAccelerator references `key`.
    pub fn is_referenced(&self, key: &ResourceKey) -> bool {
        self.by_resource.get(key).is_some_and(|r| !r.is_empty())
    }

    /// The GlobalAccelerators referencing `key`, as `(namespace, name)`, in key order.
    pub fn referencing(&self, key: &ResourceKey) -> Vec<(String, String)> {
        self.by_resource
            .get(key)
            .into_iter()
            .flatten()
            .filter_map(|k| k.split_once('/'))
            .map(|(ns, name)| (ns.to_string(), name.to_string()))
            .collect()
    }

    /// The resources `accelerator` references (empty when unknown).
    pub fn references_of(&self, accelerator: &str) -> Vec<ResourceKey> {
        self.by_accelerator
            .get(accelerator)
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }

    /// How many resources are referenced at all.
    pub fn resource_count(&self) -> usize {
        self.by_resource.len()
    }

    /// How many GlobalAccelerators are tracked.
    pub fn accelerator_count(&self) -> usize {
        self.by_accelerator.len()
    }
}

#[cfg(test)]
#[path = "references_tests.rs"]
mod tests;
