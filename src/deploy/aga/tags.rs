//! Which accelerators a stack owns (upstream's AGA tracking tags: `elbv2.k8s.aws/cluster`,
//! `aga.k8s.aws/stack`, `aga.k8s.aws/resource`) and the reconciliation of an accelerator's tags
//! (upstream's `tagging_manager.go`): TagResource with what is new or changed, then
//! UntagResource with what is gone; keys under AWS's reserved `aws:` prefix (CloudFormation's,
//! say) and `--external-managed-tags` are never touched. Listeners and endpoint groups carry
//! no tags: they are ours when their accelerator is.

use super::Ctx;
use crate::aws::Tags;
use crate::deploy::error::{Context, Result};
use crate::model::aga::RESOURCE_ID_ACCELERATOR;

pub use crate::deploy::tags::CLUSTER_TAG;
/// The stack tag of Global Accelerator stacks (`<namespace>/<name>`).
pub const STACK_TAG: &str = "aga.k8s.aws/stack";
/// The resource tag; `GlobalAccelerator` on the one accelerator of a stack.
pub const RESOURCE_TAG: &str = "aga.k8s.aws/resource";
/// AWS's reserved prefix: such tags cannot be changed by anyone but AWS.
const AWS_PREFIX: &str = "aws:";

/// Why `tags` do not say "cluster `cluster`, stack `stack_id`"; `None` when they do.
pub fn ownership_problem(tags: &Tags, cluster: &str, stack_id: &str) -> Option<String> {
    let has = |k: &str, v: &str| tags.get(k).map(String::as_str) == Some(v);
    if !has(CLUSTER_TAG, cluster) {
        return Some(format!("it is not tagged {CLUSTER_TAG}={cluster}"));
    }
    if !has(STACK_TAG, stack_id) {
        return Some(format!("it is not tagged {STACK_TAG}={stack_id}"));
    }
    None
}

/// The accelerator belongs to this cluster's stack `stack_id`.
pub fn is_owned(tags: &Tags, cluster: &str, stack_id: &str) -> bool {
    ownership_problem(tags, cluster, stack_id).is_none()
}

/// Why the model's accelerator would not be recognised as ours once created; `None` when its
/// tags carry the cluster, stack and resource tags (the model builder merges them in, as
/// upstream's tracking provider does, and upstream's IAM policy requires them).
pub fn model_tags_problem(tags: &Tags, cluster: &str, stack_id: &str) -> Option<String> {
    if let Some(p) = ownership_problem(tags, cluster, stack_id) {
        return Some(p);
    }
    (tags.get(RESOURCE_TAG).map(String::as_str) != Some(RESOURCE_ID_ACCELERATOR))
        .then(|| format!("it is not tagged {RESOURCE_TAG}={RESOURCE_ID_ACCELERATOR}"))
}

/// What TagResource and UntagResource get to go from `current` to `desired`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagChanges {
    pub add: Tags,
    pub remove: Vec<String>,
}

impl TagChanges {
    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.remove.is_empty()
    }
}

/// The changes, leaving `aws:` keys and `ignored` keys (`--external-managed-tags`) alone.
pub fn tag_changes(desired: &Tags, current: &Tags, ignored: &[String]) -> TagChanges {
    let skip = |k: &String| k.starts_with(AWS_PREFIX) || ignored.contains(k);
    TagChanges {
        add: desired
            .iter()
            .filter(|(k, v)| !skip(k) && current.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        remove: current
            .keys()
            .filter(|k| !skip(k) && !desired.contains_key(*k))
            .cloned()
            .collect(),
    }
}

/// Makes the accelerator's tags `desired` (TagResource, then UntagResource).
pub(super) async fn reconcile_tags(
    ctx: &mut Ctx<'_>,
    arn: &str,
    desired: &Tags,
    current: &Tags,
) -> Result<()> {
    let changes = tag_changes(desired, current, ctx.external_managed_tags);
    if !changes.add.is_empty() {
        tracing::info!(arn, change = ?changes.add, "adding accelerator tags");
        ctx.ga
            .tag_resource(arn, &changes.add)
            .await
            .ctx(|| format!("tag accelerator {arn}"))?;
        ctx.wrote();
    }
    if !changes.remove.is_empty() {
        tracing::info!(arn, change = ?changes.remove, "removing accelerator tags");
        ctx.ga
            .untag_resource(arn, &changes.remove)
            .await
            .ctx(|| format!("untag accelerator {arn}"))?;
        ctx.wrote();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(kv: &[(&str, &str)]) -> Tags {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Upstream's ReconcileTags "standard case - add and remove tags".
    #[test]
    fn changed_and_new_tags_are_added_gone_ones_removed() {
        let c = tag_changes(
            &tags(&[("keyA", "valueA"), ("keyB", "valueB2"), ("keyD", "valueD")]),
            &tags(&[("keyA", "valueA"), ("keyB", "valueB"), ("keyC", "valueC")]),
            &[],
        );
        assert_eq!(c.add, tags(&[("keyB", "valueB2"), ("keyD", "valueD")]));
        assert_eq!(c.remove, vec!["keyC".to_string()]);
    }

    /// Upstream's ReconcileTags "aws: prefixed tags on current resource are not removed".
    #[test]
    fn aws_reserved_tags_stay() {
        let c = tag_changes(
            &tags(&[
                ("elbv2.k8s.aws/cluster", "my-cluster"),
                ("aga.k8s.aws/stack", "default/my-accelerator"),
            ]),
            &tags(&[
                ("elbv2.k8s.aws/cluster", "my-cluster"),
                ("aws:cloudformation:stack-name", "my-stack"),
                ("aws:cloudformation:logical-id", "Accelerator"),
            ]),
            &[],
        );
        assert_eq!(
            c.add,
            tags(&[("aga.k8s.aws/stack", "default/my-accelerator")])
        );
        assert!(c.remove.is_empty());
    }

    #[test]
    fn external_managed_tags_stay() {
        let c = tag_changes(
            &tags(&[("team", "a")]),
            &tags(&[("team", "b"), ("cost-center", "x")]),
            &["team".to_string(), "cost-center".to_string()],
        );
        assert!(c.is_empty(), "{c:?}");
    }

    #[test]
    fn ownership_needs_cluster_and_stack() {
        let mine = tags(&[(CLUSTER_TAG, "c1"), (STACK_TAG, "ns/ga")]);
        assert!(is_owned(&mine, "c1", "ns/ga"));
        assert!(!is_owned(&mine, "c2", "ns/ga"));
        assert!(!is_owned(&mine, "c1", "ns/other"));
        assert!(!is_owned(&Tags::new(), "c1", "ns/ga"));
        assert_eq!(
            ownership_problem(&Tags::new(), "c1", "ns/ga").unwrap(),
            "it is not tagged elbv2.k8s.aws/cluster=c1"
        );
        // The model's tags also need the resource tag.
        assert!(model_tags_problem(&mine, "c1", "ns/ga").is_some());
        let mut full = mine.clone();
        full.insert(RESOURCE_TAG.into(), "GlobalAccelerator".into());
        assert_eq!(model_tags_problem(&full, "c1", "ns/ga"), None);
    }
}
