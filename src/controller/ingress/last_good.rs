//! A member of a shared group whose own edit is invalid (an annotation or spec that fails to
//! build, or a bad `group.order`) keeps serving what it served: the
//! group is built with that member's last deployed configuration (its annotations and spec as
//! they were at the last successful deploy of the group) while the other members' changes
//! deploy. Its rules, target groups and TargetGroupBindings therefore stay exactly as they are
//! in AWS and in the cluster.
//!
//! The configurations live in memory. After a restart a broken member has none; then, if the
//! member is served (its status shows the load balancer), the whole group waits as upstream
//! does (nothing is written, nothing deleted) until the member is fixed; a member that was
//! never served has nothing to keep and is simply left out. Rebuilding the old configuration
//! from AWS is not possible exactly (rules carry positional ids, not their Ingress), and a
//! guess could delete or rewrite routes, so the group waits instead.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

use k8s_openapi::api::networking::v1::{Ingress, IngressSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::model::group::key_of;
use crate::model::{
    self, BuildEnv, ClusterObjects, ExcludedMember, GroupId, IngressGroup, ModelConfig, ModelError,
    Stack,
};

/// What the model reads of one Ingress.
#[derive(Debug, Clone, PartialEq)]
struct Config {
    annotations: Option<BTreeMap<String, String>>,
    spec: Option<IngressSpec>,
}

impl Config {
    fn of(ing: &Ingress) -> Self {
        Config {
            annotations: ing.metadata.annotations.clone(),
            spec: ing.spec.clone(),
        }
    }
}

/// Last deployed configuration per group and member (`ns/name`).
#[derive(Default)]
pub struct LastGood {
    groups: Mutex<HashMap<GroupId, BTreeMap<String, Config>>>,
}

/// A built stack and what to report.
#[derive(Debug)]
pub struct Built {
    pub stack: Stack,
    /// Members left out or held on their last configuration, with their own error.
    pub failed: Vec<ExcludedMember>,
    /// Members built from their last deployed configuration.
    pub held: BTreeSet<String>,
}

impl LastGood {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<GroupId, BTreeMap<String, Config>>> {
        self.groups.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// After a successful deploy: what each served member was built from (`held` members keep
    /// their earlier entry). Members no longer served are dropped.
    pub fn record(&self, group: &GroupId, served: &[&Ingress], held: &BTreeSet<String>) {
        let mut g = self.lock();
        let before = g.remove(group).unwrap_or_default();
        let mut now = BTreeMap::new();
        for ing in served {
            let key = key_of(&ing.metadata);
            let cfg = match (held.contains(&key), before.get(&key)) {
                (true, Some(old)) => old.clone(),
                _ => Config::of(ing),
            };
            now.insert(key, cfg);
        }
        g.insert(group.clone(), now);
    }

    pub fn forget(&self, group: &GroupId) {
        self.lock().remove(group);
    }

    /// The group's last deployed member configurations, as Ingresses carrying only their name,
    /// namespace, annotations and spec (what a snapshot reads to tell which Services a member
    /// built from one of them may use).
    pub fn earlier(&self, group: &GroupId) -> Vec<Ingress> {
        let g = self.lock();
        let Some(members) = g.get(group) else {
            return Vec::new();
        };
        members
            .iter()
            .map(|(key, cfg)| {
                let (ns, name) = key.split_once('/').unwrap_or(("default", key.as_str()));
                Ingress {
                    metadata: ObjectMeta {
                        name: Some(name.to_string()),
                        namespace: Some(ns.to_string()),
                        annotations: cfg.annotations.clone(),
                        ..Default::default()
                    },
                    spec: cfg.spec.clone(),
                    status: None,
                }
            })
            .collect()
    }

    fn get(&self, group: &GroupId, key: &str) -> Option<Config> {
        self.lock().get(group).and_then(|m| m.get(key)).cloned()
    }

    /// Builds `group`; a member that fails on its own configuration is built from its last
    /// deployed one (see the module docs).
    pub fn build(
        &self,
        group: &IngressGroup<'_>,
        objs: &ClusterObjects,
        cfg: &ModelConfig,
    ) -> Result<Built, ModelError> {
        let env = BuildEnv::default();
        let stack = model::build_stack(group, objs, cfg, &env)?;
        // Left out for their class (no annotation of their own to blame): not held here; the
        // group keeps them as members that block deletion (see the reconciler).
        let unplaced: BTreeSet<&str> = group
            .excluded
            .iter()
            .filter(|e| e.annotation.is_none())
            .map(|e| e.ingress.as_str())
            .collect();
        let failed: Vec<ExcludedMember> = stack
            .excluded_members
            .iter()
            .filter(|e| !unplaced.contains(e.ingress.as_str()))
            .cloned()
            .collect();
        if failed.is_empty() {
            return Ok(Built {
                stack,
                failed,
                held: BTreeSet::new(),
            });
        }
        let mut patched = objs.clone();
        let mut held = BTreeSet::new();
        for ex in &failed {
            let Some(ing) = patched
                .ingresses
                .iter_mut()
                .find(|i| key_of(&i.metadata) == ex.ingress)
            else {
                continue;
            };
            match self.get(&group.id, &ex.ingress) {
                Some(last) => {
                    ing.metadata.annotations = last.annotations;
                    ing.spec = last.spec;
                    held.insert(ex.ingress.clone());
                }
                None if is_served(ing) => return Err(member_error(ex)),
                None => {}
            }
        }
        if held.is_empty() {
            return Ok(Built {
                stack,
                failed,
                held,
            });
        }
        let (groups, _) = model::load_groups(&patched, &cfg.ingress_class);
        let Some(g) = groups.get(&group.id) else {
            // The old configuration names another group: nothing safe to build from.
            return Err(member_error(&failed[0]));
        };
        let stack = model::build_stack(g, &patched, cfg, &env)?;
        if let Some(ex) = stack
            .excluded_members
            .iter()
            .find(|e| held.contains(&e.ingress))
        {
            // Its last configuration no longer builds either (e.g. its Service changed).
            return Err(member_error(ex));
        }
        let served: BTreeSet<&String> = stack.members.iter().collect();
        held.retain(|k| served.contains(k));
        Ok(Built {
            stack,
            failed,
            held,
        })
    }
}

/// Whether the load balancer already serves the Ingress (its status shows it).
fn is_served(ing: &Ingress) -> bool {
    ing.status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|l| l.ingress.as_ref())
        .is_some_and(|v| !v.is_empty())
}

fn member_error(ex: &ExcludedMember) -> ModelError {
    ModelError::Ingress {
        ingress: ex.ingress.clone(),
        annotation: ex.annotation.clone(),
        message: ex.error.clone(),
    }
}
