//! TargetGroupBinding objects of a stack, as upstream's binding synthesizer keeps them: the
//! stack's bindings are found by its labels (`ingress.k8s.aws/stack` for explicit groups,
//! `ingress.k8s.aws/stack-namespace` + `stack-name` for implicit ones), paired with the wanted
//! ones by target-group ARN, created, updated when the spec differs, and deleted when unwanted.
//! A binding without the stack's labels is never touched.

use std::collections::{BTreeMap, HashMap};

use kube::api::{DeleteParams, ListParams, ObjectMeta, PostParams};
use kube::{Api, ResourceExt};
use serde_json::Value;

use crate::aws::metrics::TargetGroupLabels;
use crate::aws::AwsMetrics;
use crate::crd::TargetGroupBinding;
use crate::deploy::ResolvedTargetGroupBinding;
use crate::model::GroupId;

/// Labels that mark a TargetGroupBinding as part of the stack of `group`.
pub fn stack_labels(group: &GroupId) -> BTreeMap<String, String> {
    if group.is_explicit() {
        BTreeMap::from([("ingress.k8s.aws/stack".to_string(), group.name.clone())])
    } else {
        BTreeMap::from([
            (
                "ingress.k8s.aws/stack-namespace".to_string(),
                group.namespace.clone(),
            ),
            ("ingress.k8s.aws/stack-name".to_string(), group.name.clone()),
        ])
    }
}

fn selector(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether every field set in `want` has the same value in `have` (fields only `have` carries,
/// such as webhook defaults, do not count as a difference).
pub fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| h.get(k).is_some_and(|hv| contains(hv, wv))),
        (Value::Array(h), Value::Array(w)) => {
            h.len() == w.len() && h.iter().zip(w).all(|(a, b)| contains(a, b))
        }
        _ => have == want,
    }
}

fn needs_update(have: &TargetGroupBinding, want: &ResolvedTargetGroupBinding) -> bool {
    let labels_ok = want
        .labels
        .iter()
        .all(|(k, v)| have.labels().get(k) == Some(v));
    let (Ok(h), Ok(w)) = (
        serde_json::to_value(&have.spec),
        serde_json::to_value(&want.spec),
    ) else {
        return true;
    };
    !labels_ok || !contains(&h, &w)
}

/// What one sync did (for logs and tests).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct BindingChanges {
    pub created: usize,
    pub updated: usize,
    pub deleted: usize,
}

/// Makes the stack's TargetGroupBinding objects exactly `wanted`. `namespaces` is
/// `--watch-namespace` (empty: all): the stack's bindings live in its members' namespaces.
pub async fn sync(
    client: &kube::Client,
    group: &GroupId,
    wanted: &[ResolvedTargetGroupBinding],
    namespaces: &[String],
    metrics: Option<&AwsMetrics>,
) -> Result<BindingChanges, kube::Error> {
    let info = |ns: &str, spec: &crate::crd::TargetGroupBindingSpec| {
        TargetGroupLabels::new(ns, &spec.service_ref.name, &spec.target_group_arn)
    };
    let labels = stack_labels(group);
    let by_labels = ListParams::default().labels(&selector(&labels));
    let mut existing = Vec::new();
    if namespaces.is_empty() {
        let all: Api<TargetGroupBinding> = Api::all(client.clone());
        existing = all.list(&by_labels).await?.items;
    }
    for ns in namespaces {
        let api: Api<TargetGroupBinding> = Api::namespaced(client.clone(), ns);
        existing.extend(api.list(&by_labels).await?.items);
    }
    let mut by_arn: HashMap<String, TargetGroupBinding> = existing
        .into_iter()
        .map(|b| (b.spec.target_group_arn.clone(), b))
        .collect();
    let mut changes = BindingChanges::default();
    for want in wanted {
        let api: Api<TargetGroupBinding> = Api::namespaced(client.clone(), &want.namespace);
        match by_arn.remove(&want.spec.target_group_arn) {
            Some(have) => {
                if needs_update(&have, want) {
                    replace(&api, have, want).await?;
                    changes.updated += 1;
                }
            }
            None => {
                let obj = TargetGroupBinding {
                    metadata: ObjectMeta {
                        name: Some(want.name.clone()),
                        namespace: Some(want.namespace.clone()),
                        labels: Some(want.labels.clone()),
                        ..Default::default()
                    },
                    spec: want.spec.clone(),
                    status: None,
                };
                match api.create(&PostParams::default(), &obj).await {
                    Ok(_) => changes.created += 1,
                    // Same name already there (an earlier binding of ours for a replaced target
                    // group): take it over only if it carries our labels.
                    Err(kube::Error::Api(e)) if e.code == 409 => {
                        let have = api.get(&want.name).await?;
                        let ours = labels.iter().all(|(k, v)| have.labels().get(k) == Some(v));
                        if !ours {
                            return Err(kube::Error::Api(e));
                        }
                        by_arn.remove(&have.spec.target_group_arn);
                        replace(&api, have, want).await?;
                        changes.updated += 1;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
    // As upstream's binding manager: every binding the stack keeps is reported, new or not.
    if let Some(m) = metrics {
        for want in wanted {
            m.target_group_bound(&info(&want.namespace, &want.spec));
        }
    }
    for (_, stale) in by_arn {
        let ns = stale.namespace().unwrap_or_default();
        let api: Api<TargetGroupBinding> = Api::namespaced(client.clone(), &ns);
        match api
            .delete(&stale.name_any(), &DeleteParams::default())
            .await
        {
            Ok(_) => changes.deleted += 1,
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
        if let Some(m) = metrics {
            m.target_group_unbound(&info(&ns, &stale.spec));
        }
    }
    Ok(changes)
}

async fn replace(
    api: &Api<TargetGroupBinding>,
    mut have: TargetGroupBinding,
    want: &ResolvedTargetGroupBinding,
) -> Result<(), kube::Error> {
    have.spec = want.spec.clone();
    let labels = have.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.extend(want.labels.clone());
    // resourceVersion from the list: a concurrent change makes this fail and the group retry.
    api.replace(&have.name_any(), &PostParams::default(), &have)
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_follow_the_group_kind() {
        assert_eq!(
            selector(&stack_labels(&GroupId::explicit("shop"))),
            "ingress.k8s.aws/stack=shop"
        );
        assert_eq!(
            selector(&stack_labels(&GroupId::implicit("ns", "web"))),
            "ingress.k8s.aws/stack-name=web,ingress.k8s.aws/stack-namespace=ns"
        );
    }

    #[test]
    fn defaults_added_by_others_are_not_a_difference() {
        let want = json!({"serviceRef": {"name": "a", "port": 80}, "targetType": "instance"});
        let have = json!({"serviceRef": {"name": "a", "port": 80}, "targetType": "instance",
            "ipAddressType": "ipv4"});
        assert!(contains(&have, &want));
        let changed = json!({"serviceRef": {"name": "a", "port": 81}, "targetType": "instance"});
        assert!(!contains(&changed, &want));
        assert!(!contains(&json!({"l": [1]}), &json!({"l": [1, 2]})));
    }
}
