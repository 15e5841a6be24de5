//! TargetGroupBinding objects of a stack, as upstream's binding synthesizer keeps them: the
//! stack's bindings are found by its labels (`ingress.k8s.aws/stack` for explicit groups,
//! `ingress.k8s.aws/stack-namespace` + `stack-name` for implicit ones), paired with the wanted
//! ones by target-group ARN, created, updated when the spec differs, and deleted when unwanted.
//! A binding without the stack's labels is never touched.

use std::collections::{BTreeMap, HashMap};

use kube::api::{DeleteParams, ListParams, ObjectMeta, PostParams};
use kube::{Api, ResourceExt};

use crate::aws::metrics::TargetGroupLabels;
use crate::aws::AwsMetrics;
use crate::crd::names::{
    INGRESS_STACK_LABEL, INGRESS_STACK_NAMESPACE_LABEL, INGRESS_STACK_NAME_LABEL,
};
use crate::crd::{tgb_shape, TargetGroupBinding};
use crate::deploy::ResolvedTargetGroupBinding;
use crate::model::GroupId;

/// Labels that mark a TargetGroupBinding as part of the stack of `group`.
pub fn stack_labels(group: &GroupId) -> BTreeMap<String, String> {
    if group.is_explicit() {
        BTreeMap::from([(INGRESS_STACK_LABEL.to_string(), group.name.clone())])
    } else {
        BTreeMap::from([
            (
                INGRESS_STACK_NAMESPACE_LABEL.to_string(),
                group.namespace.clone(),
            ),
            (INGRESS_STACK_NAME_LABEL.to_string(), group.name.clone()),
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

/// Annotations upstream's binding controller keeps on a binding (its last reconcile): never
/// counted nor removed.
const CHECKPOINT_ANNOTATIONS: [&str; 2] = [
    "elbv2.k8s.aws/checkpoint",
    "elbv2.k8s.aws/checkpoint-timestamp",
];

/// `have`'s annotations without the checkpoint ones.
fn own_annotations(have: &TargetGroupBinding) -> BTreeMap<String, String> {
    let mut a = have.annotations().clone();
    a.retain(|k, _| !CHECKPOINT_ANNOTATIONS.contains(&k.as_str()));
    a
}

/// Whether `have` needs a write to become `want`: our labels missing, or a spec that means
/// something else (grouping and order of rules, and webhook defaults, do not count; see
/// [`tgb_shape::same_meaning`]). Labels and annotations others added are left alone, except
/// on a binding whose annotations the stack owns (a Gateway's): there, as upstream's binding
/// manager, labels and annotations (checkpoints aside) must be exactly the stack's.
pub fn needs_update(have: &TargetGroupBinding, want: &ResolvedTargetGroupBinding) -> bool {
    let meta_ok = match &want.annotations {
        Some(annotations) => *have.labels() == want.labels && own_annotations(have) == *annotations,
        None => want
            .labels
            .iter()
            .all(|(k, v)| have.labels().get(k) == Some(v)),
    };
    !meta_ok || !tgb_shape::same_meaning(&have.spec, &want.spec)
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
    sync_labeled(client, &stack_labels(group), wanted, namespaces, metrics).await
}

/// [`sync`] for the stack whose bindings carry `labels` (a Service's stack uses
/// `service.k8s.aws/stack-namespace` + `stack-name`).
pub async fn sync_labeled(
    client: &kube::Client,
    labels: &BTreeMap<String, String>,
    wanted: &[ResolvedTargetGroupBinding],
    namespaces: &[String],
    metrics: Option<&AwsMetrics>,
) -> Result<BindingChanges, kube::Error> {
    let info = |ns: &str, spec: &crate::crd::TargetGroupBindingSpec| {
        TargetGroupLabels::new(ns, &spec.service_ref.name, &spec.target_group_arn)
    };
    let by_labels = ListParams::default().labels(&selector(labels));
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
                        annotations: want.annotations.clone().filter(|a| !a.is_empty()),
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
                        if needs_update(&have, want) {
                            replace(&api, have, want).await?;
                            changes.updated += 1;
                        }
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
    match &want.annotations {
        Some(annotations) => {
            let mut kept = have.annotations().clone();
            kept.retain(|k, _| CHECKPOINT_ANNOTATIONS.contains(&k.as_str()));
            kept.extend(annotations.clone());
            have.metadata.annotations = Some(kept);
            have.metadata.labels = Some(want.labels.clone());
        }
        None => have
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .extend(want.labels.clone()),
    }
    // resourceVersion from the list: a concurrent change makes this fail and the group retry.
    api.replace(&have.name_any(), &PostParams::default(), &have)
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

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

    fn ours(spec: Value) -> ResolvedTargetGroupBinding {
        ResolvedTargetGroupBinding {
            id: "ns-1/ing-1-svc-3:https".into(),
            name: "k8s-ns1-svc3-bf42870fba".into(),
            namespace: "ns-1".into(),
            labels: stack_labels(&GroupId::implicit("ns-1", "ing-1")),
            annotations: None,
            spec: serde_json::from_value(spec).unwrap(),
        }
    }

    /// What our model and deployer make of upstream's test-table Service `svc-3` (ip targets,
    /// target port 8443, `healthcheck-port: 9090`) behind Ingress `ns-1/ing-1`.
    fn ours_for_svc3() -> ResolvedTargetGroupBinding {
        let yaml = r#"
apiVersion: v1
kind: Service
metadata:
  name: svc-3
  namespace: ns-1
  annotations:
    alb.ingress.kubernetes.io/target-type: ip
    alb.ingress.kubernetes.io/backend-protocol: HTTPS
    alb.ingress.kubernetes.io/healthcheck-port: "9090"
spec: {ports: [{name: https, port: 443, targetPort: 8443, nodePort: 32768}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ing-1
  namespace: ns-1
  annotations: {kubernetes.io/ingress.class: alb}
spec:
  rules:
  - http:
      paths:
      - {path: /svc-3, pathType: Exact, backend: {service: {name: svc-3, port: {name: https}}}}
"#;
        let mut objs = crate::model::ClusterObjects::default();
        for d in crate::plan::parse_documents(yaml).unwrap() {
            match d["kind"].as_str() {
                Some("Service") => objs.services.push(serde_json::from_value(d).unwrap()),
                _ => objs.ingresses.push(serde_json::from_value(d).unwrap()),
            }
        }
        let (groups, _) = crate::model::load_groups(&objs, "alb");
        let cfg = crate::model::ModelConfig {
            cluster_name: "cluster-name".into(),
            vpc_id: Some("vpc-1".into()),
            ..Default::default()
        };
        let stack = crate::model::build_stack(
            groups.values().next().unwrap(),
            &objs,
            &cfg,
            &Default::default(),
        )
        .unwrap();
        let b = &stack.target_group_bindings[0];
        let mut r = crate::deploy::resolve::Resolved {
            backend_sg: Some("sg-backend".into()),
            ..Default::default()
        };
        r.target_group_arns.insert(b.id.clone(), "arn:tg/1".into());
        crate::deploy::tgb::resolve(b, &r, "vpc-1").unwrap()
    }

    /// Upstream's binding for a target port 8443 with health-check port 9090 (one rule per
    /// port) against what our deployer resolves for the same target group: equal, no patch.
    #[test]
    fn upstreams_two_rule_binding_needs_no_patch() {
        let upstream: TargetGroupBinding = serde_json::from_value(json!({
            "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
            "metadata": {"name": "k8s-ns1-svc3-bf42870fba", "namespace": "ns-1",
                "labels": {"ingress.k8s.aws/stack-namespace": "ns-1", "ingress.k8s.aws/stack-name": "ing-1"},
                "annotations": {"elbv2.k8s.aws/checkpoint": "x", "elbv2.k8s.aws/checkpoint-timestamp": "1"},
                "finalizers": ["elbv2.k8s.aws/resources"]},
            "spec": {
                "targetGroupARN": "arn:tg/1", "targetGroupProtocol": "HTTPS", "targetType": "ip",
                "serviceRef": {"name": "svc-3", "port": "https"},
                "networking": {"ingress": [
                    {"from": [{"securityGroup": {"groupID": "sg-backend"}}], "ports": [{"protocol": "TCP", "port": 8443}]},
                    {"from": [{"securityGroup": {"groupID": "sg-backend"}}], "ports": [{"protocol": "TCP", "port": 9090}]}
                ]},
                "ipAddressType": "ipv4", "vpcID": "vpc-1"
            },
            "status": {"observedGeneration": 1}
        }))
        .unwrap();
        let mut ours = ours_for_svc3();
        assert_eq!(upstream.spec, ours.spec, "same shape, field for field");
        assert!(!needs_update(&upstream, &ours));
        // The merged shape older versions of ours wrote means the same: no patch either.
        ours.spec.networking = serde_json::from_value(json!({"ingress": [
            {"from": [{"securityGroup": {"groupID": "sg-backend"}}],
             "ports": [{"protocol": "TCP", "port": 8443}, {"protocol": "TCP", "port": 9090}]}
        ]}))
        .unwrap();
        assert!(!needs_update(&upstream, &ours));
        // A real change (the health-check port moved) is written.
        ours.spec.networking.as_mut().unwrap().ingress[0].ports[1].port =
            Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(9091));
        assert!(needs_update(&upstream, &ours));
    }

    /// A Gateway's binding: its labels and annotations are exactly the stack's, as upstream's
    /// binding manager keeps them; the binding controller's checkpoints do not count.
    #[test]
    fn a_gateway_bindings_labels_and_annotations_are_exactly_the_stacks() {
        let mut want =
            ours(json!({"targetGroupARN": "arn:tg/1", "serviceRef": {"name": "a", "port": 80}}));
        want.annotations = Some(BTreeMap::from([("team".to_string(), "a".to_string())]));
        let have = |extra_label: Option<&str>, annotations: Value| -> TargetGroupBinding {
            let mut labels = json!({"ingress.k8s.aws/stack-namespace": "ns-1",
                "ingress.k8s.aws/stack-name": "ing-1"});
            if let Some(l) = extra_label {
                labels[l] = json!("x");
            }
            serde_json::from_value(json!({
                "metadata": {"name": "b", "labels": labels, "annotations": annotations},
                "spec": {"targetGroupARN": "arn:tg/1", "serviceRef": {"name": "a", "port": 80}}
            }))
            .unwrap()
        };
        let checkpoint = json!({"team": "a", "elbv2.k8s.aws/checkpoint": "x",
            "elbv2.k8s.aws/checkpoint-timestamp": "1"});
        assert!(!needs_update(&have(None, checkpoint.clone()), &want));
        assert!(
            needs_update(&have(None, json!({"team": "b"})), &want),
            "changed"
        );
        assert!(needs_update(&have(None, json!({})), &want), "missing");
        let by_hand = json!({"team": "a", "mine": "y"});
        assert!(
            needs_update(&have(None, by_hand.clone()), &want),
            "added by hand"
        );
        assert!(
            needs_update(&have(Some("mine"), checkpoint), &want),
            "label by hand"
        );
        // An Ingress's binding (annotations not the stack's) keeps what others added.
        want.annotations = None;
        assert!(!needs_update(&have(Some("mine"), by_hand), &want));
    }

    #[test]
    fn missing_stack_labels_need_a_write() {
        let mut have: TargetGroupBinding = serde_json::from_value(json!({
            "metadata": {"name": "b", "labels": {"ingress.k8s.aws/stack-namespace": "ns-1", "other": "x"}},
            "spec": {"targetGroupARN": "arn:tg/1", "serviceRef": {"name": "a", "port": 80}}
        }))
        .unwrap();
        let want =
            ours(json!({"targetGroupARN": "arn:tg/1", "serviceRef": {"name": "a", "port": 80}}));
        assert!(needs_update(&have, &want));
        have.metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("ingress.k8s.aws/stack-name".into(), "ing-1".into());
        assert!(!needs_update(&have, &want));
    }
}
