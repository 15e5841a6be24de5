//! The Ingress-group producer of `diff`: for each group, the writes the Ingress reconciler would
//! make, in its order (finalizers on members → AWS → TargetGroupBindings → status → finalizers
//! off former members), or the deletion of a group without active members. Only reads reach
//! the cluster; the comparisons are the reconciler's own (`binding_needs_update`,
//! `status_is_current`).

use std::collections::{BTreeMap, HashMap};

use anyhow::Context;
use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::networking::v1::{Ingress, IngressClass, IngressStatus};
use kube::api::ListParams;
use kube::{Api, ResourceExt};
use serde::de::DeserializeOwned;

use super::{Change, Recorder, Sink, StackDiff, Write};
use crate::annotations::DRY_RUN_PLAN;
use crate::config::Config;
use crate::controller::ingress::secrets::get_oidc_secret;
use crate::controller::ingress::{
    binding_needs_update, desired_status, planned_annotation, stack_labels, status_is_current,
    with_frontend_nlb, IngressConfig, PLAN_GATE,
};
use crate::crd::{IngressClassParams, TargetGroupBinding};
use crate::deploy::{Deployer, ResolvedTargetGroupBinding};
use crate::model::group::key_of;
use crate::model::{self, BuildEnv, ClusterObjects, GroupId, IngressGroup};

/// What a group diff needs.
pub struct Env<'a> {
    pub recorder: &'a Recorder,
    pub deployer: &'a Deployer,
    pub cfg: &'a IngressConfig,
    /// None when the objects came from manifests.
    pub client: Option<&'a kube::Client>,
}

/// Lists a namespaced kind as the controller watches it: every namespace, or each of
/// `--watch-namespace`'s.
pub async fn list<K>(client: &kube::Client, namespaces: &[String]) -> anyhow::Result<Vec<K>>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    if namespaces.is_empty() {
        return Ok(Api::<K>::all(client.clone())
            .list(&ListParams::default())
            .await?
            .items);
    }
    let mut out = Vec::new();
    for ns in namespaces {
        let api: Api<K> = Api::namespaced(client.clone(), ns);
        out.extend(api.list(&ListParams::default()).await?.items);
    }
    Ok(out)
}

/// Everything the model reads, listed once (the controller's caches, without the watch). Secrets
/// are read one by one, only those `auth-idp-oidc` names, as the controller reads them (a
/// NotFound, or a Secret without `--required-secrets-label`, is left to the model's error); only the keys OIDC reads are kept, and never shown.
/// Every IngressClassParams, decoded as upstream does (a missing `spec` is the empty one: see
/// [`IngressClassParams::decode`]).
async fn list_ingress_class_params(
    client: &kube::Client,
) -> anyhow::Result<Vec<IngressClassParams>> {
    let ar = kube::api::ApiResource::erase::<IngressClassParams>(&());
    let api = Api::<kube::api::DynamicObject>::all_with(client.clone(), &ar);
    api.list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .map(|o| {
            let name = o.name_any();
            IngressClassParams::decode(serde_json::to_value(o)?)
                .with_context(|| format!("decoding IngressClassParams {name}"))
        })
        .collect()
}

pub async fn list_objects(client: &kube::Client, cfg: &Config) -> anyhow::Result<ClusterObjects> {
    let mut objs = list_without_secrets(client, cfg).await?;
    let metas = objs.ingresses.iter().map(|i| &i.metadata);
    let refs = model::oidc::secret_refs(metas.chain(objs.services.iter().map(|s| &s.metadata)));
    for (ns, name) in refs {
        // As the controller reads it.
        let required = cfg.required_secrets_label.as_ref();
        let got = get_oidc_secret(client, &ns, &name, required)
            .await
            .with_context(|| format!("reading Secret {ns}/{name} (auth-idp-oidc)"))?;
        objs.secrets.extend(got);
    }
    Ok(objs)
}

async fn list_without_secrets(
    client: &kube::Client,
    cfg: &Config,
) -> anyhow::Result<ClusterObjects> {
    let ns = &cfg.watch_namespaces;
    Ok(ClusterObjects {
        ingresses: list::<Ingress>(client, ns).await?,
        services: list::<Service>(client, ns).await?,
        ingress_classes: Api::<IngressClass>::all(client.clone())
            .list(&ListParams::default())
            .await?
            .items,
        ingress_class_params: list_ingress_class_params(client).await?,
        namespaces: Api::<Namespace>::all(client.clone())
            .list(&ListParams::default())
            .await?
            .items,
        secrets: Vec::new(),
    })
}

/// A finalizer `finalizer` added to (`add`) or removed from the object `resource` of `kind`.
pub(super) fn finalizer_write(kind: &str, resource: String, finalizer: &str, add: bool) -> Write {
    let f = Some(finalizer.to_string());
    let (before, after) = if add { (None, f) } else { (f, None) };
    kube_write(
        &format!("patch {kind}"),
        resource,
        one("metadata.finalizers", before, after),
    )
}

pub(super) fn kube_write(call: &str, resource: String, changes: Vec<Change>) -> Write {
    Write {
        call: format!("kubernetes:{call}"),
        resource,
        changes,
    }
}

pub(super) fn one(field: &str, before: Option<String>, after: Option<String>) -> Vec<Change> {
    vec![Change {
        field: field.into(),
        before,
        after,
    }]
}

/// Every group the controller would reconcile, in group-id order.
pub fn plan<'o>(env: &Env<'_>, objs: &'o ClusterObjects) -> BTreeMap<GroupId, IngressGroup<'o>> {
    model::load_groups(objs, &env.cfg.model.ingress_class).0
}

/// Each of `groups` ([`plan`]) in turn, handed to `sink` as soon as it is computed.
pub async fn diff_groups(
    env: &Env<'_>,
    objs: &ClusterObjects,
    groups: &BTreeMap<GroupId, IngressGroup<'_>>,
    sink: &mut Sink<'_>,
) -> std::io::Result<()> {
    for (id, g) in groups {
        let mut d = StackDiff {
            kind: "ingress",
            stack: id.as_string(),
            writes: Vec::new(),
            error: None,
        };
        let result = if g.members.is_empty() {
            delete_group(env, g, objs, &mut d.writes).await
        } else {
            deploy_group(env, g, objs, &mut d.writes).await
        };
        if let Err(e) = result {
            // Writes recorded before the failure are part of what a reconcile would do.
            let mut aws = env.recorder.take();
            d.writes.append(&mut aws);
            d.error = Some(e);
        }
        sink.stack(d)?;
    }
    Ok(())
}

fn finalizer_adds(members: &[&Ingress], finalizer: &str, writes: &mut Vec<Write>) {
    for ing in members {
        if !ing.finalizers().iter().any(|f| f == finalizer) {
            writes.push(finalizer_write(
                "Ingress",
                key_of(&ing.metadata),
                finalizer,
                true,
            ));
        }
    }
}

fn finalizer_removals(former: &[&Ingress], finalizer: &str, writes: &mut Vec<Write>) {
    for ing in former {
        if ing.finalizers().iter().any(|f| f == finalizer) {
            writes.push(finalizer_write(
                "Ingress",
                key_of(&ing.metadata),
                finalizer,
                false,
            ));
        }
    }
}

async fn deploy_group(
    env: &Env<'_>,
    g: &IngressGroup<'_>,
    objs: &ClusterObjects,
    writes: &mut Vec<Write>,
) -> Result<(), String> {
    let finalizer = g.id.finalizer();
    let members: Vec<&Ingress> = g.members.iter().map(|m| m.ingress).collect();
    if env.client.is_some() {
        finalizer_adds(&members, &finalizer, writes);
    }
    let stack = model::build_stack(g, objs, &env.cfg.model, &BuildEnv::default())
        .map_err(|e| format!("Failed build model due to {e}"))?;
    // ACM discovery is part of upstream's model build (real reads, nothing written).
    let stack = env
        .deployer
        .resolve_certificates(&stack)
        .await
        .map_err(|e| format!("Failed build model due to {e}"))?
        .into_owned();
    if env.client.is_some() {
        plan_annotations(env, &members, &stack, writes).await;
    }
    let deployed = env
        .deployer
        .deploy(&stack)
        .await
        .map_err(|e| format!("Failed deploy model due to {e}"))?;
    writes.append(&mut env.recorder.take());
    let Some(client) = env.client else {
        return Ok(());
    };
    bindings(
        client,
        &g.id,
        &env.cfg.namespaces,
        &deployed.target_group_bindings,
        writes,
    )
    .await?;
    if let Some(lb) = &deployed.load_balancer {
        let fe = deployed.frontend_nlb.as_ref().map(|f| f.dns_name.as_str());
        let want = with_frontend_nlb(desired_status(&lb.dns_name, &deployed.listener_ports), fe);
        for ing in members
            .iter()
            .filter(|i| stack.members.contains(&key_of(&i.metadata)))
        {
            if !status_is_current(ing, &want) {
                writes.push(kube_write(
                    "patch Ingress/status",
                    key_of(&ing.metadata),
                    one(
                        "status.loadBalancer",
                        ing.status.as_ref().map(show_status),
                        Some(show_status(&want)),
                    ),
                ));
            }
        }
    }
    finalizer_removals(&g.inactive_members, &finalizer, writes);
    Ok(())
}

/// The controller's dry-run plan patches (gate `IngressPlanAnnotation`): the plan on the first
/// member, none on the others (all cleared with the gate off); after the AWS reads (and the
/// backend security group it may create) the plan needs.
async fn plan_annotations(
    env: &Env<'_>,
    members: &[&Ingress],
    stack: &crate::model::Stack,
    writes: &mut Vec<Write>,
) {
    let gate = env.cfg.model.gate(PLAN_GATE);
    let plan = planned_annotation(env.deployer, gate, stack).await;
    writes.append(&mut env.recorder.take());
    for (i, ing) in members.iter().enumerate() {
        let want = if i == 0 { plan.as_deref() } else { None };
        let have = ing.annotations().get(DRY_RUN_PLAN).map(String::as_str);
        if have != want {
            writes.push(kube_write(
                "patch Ingress",
                key_of(&ing.metadata),
                one(
                    &format!("metadata.annotations.{DRY_RUN_PLAN}"),
                    have.map(str::to_string),
                    want.map(str::to_string),
                ),
            ));
        }
    }
}

async fn delete_group(
    env: &Env<'_>,
    g: &IngressGroup<'_>,
    objs: &ClusterObjects,
    writes: &mut Vec<Write>,
) -> Result<(), String> {
    if !g.excluded.is_empty() {
        // The controller keeps the stack while a member it cannot classify holds the finalizer.
        return Ok(());
    }
    model::build_stack(g, objs, &env.cfg.model, &BuildEnv::default())
        .map_err(|e| format!("Failed build model due to {e}"))?;
    // As the controller: a protected load balancer stays serving, and so do its bindings.
    if let Err(e) = env.deployer.check_deletable(&g.id.as_string()).await {
        if g.inactive_members.is_empty()
            && matches!(e, crate::deploy::Error::DeletionProtected { .. })
        {
            return Ok(());
        }
        return Err(format!("Failed deploy model due to {e}"));
    }
    if let Some(client) = env.client {
        bindings(client, &g.id, &env.cfg.namespaces, &[], writes).await?;
    }
    env.deployer
        .delete_stack(&g.id.as_string())
        .await
        .map_err(|e| format!("Failed deploy model due to {e}"))?;
    writes.append(&mut env.recorder.take());
    if env.client.is_some() {
        finalizer_removals(&g.inactive_members, &g.id.finalizer(), writes);
    }
    Ok(())
}

fn show_status(s: &IngressStatus) -> String {
    let entries = s
        .load_balancer
        .as_ref()
        .and_then(|l| l.ingress.clone())
        .unwrap_or_default();
    entries
        .iter()
        .map(|e| {
            let ports: Vec<String> = e
                .ports
                .iter()
                .flatten()
                .map(|p| p.port.to_string())
                .collect();
            format!(
                "{}[{}]",
                e.hostname
                    .clone()
                    .or_else(|| e.ip.clone())
                    .unwrap_or_default(),
                ports.join(",")
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The binding named as `want`, if any.
async fn named(
    client: &kube::Client,
    want: &ResolvedTargetGroupBinding,
) -> Result<Option<TargetGroupBinding>, String> {
    Api::<TargetGroupBinding>::namespaced(client.clone(), &want.namespace)
        .get_opt(&want.name)
        .await
        .map_err(|e| {
            format!(
                "reading TargetGroupBinding {}/{}: {e}",
                want.namespace, want.name
            )
        })
}

fn has_labels(b: &TargetGroupBinding, labels: &std::collections::BTreeMap<String, String>) -> bool {
    labels.iter().all(|(k, v)| b.labels().get(k) == Some(v))
}

fn spec_json(b: &TargetGroupBinding) -> String {
    serde_json::to_string(&b.spec).unwrap_or_default()
}

/// The TargetGroupBinding writes of the bindings sync: by target-group ARN, create the missing,
/// update those that mean something else, delete the stack's unwanted ones.
async fn bindings(
    client: &kube::Client,
    id: &GroupId,
    namespaces: &[String],
    wanted: &[ResolvedTargetGroupBinding],
    writes: &mut Vec<Write>,
) -> Result<(), String> {
    bindings_labeled(client, &stack_labels(id), namespaces, wanted, writes).await
}

/// [`bindings`] of the stack whose bindings carry `labels` (a Service's stack), looked for in
/// `namespaces` (empty: all) as the controller's sync looks: `--watch-namespace` for Ingress
/// groups and Gateways, the Service's own namespace for a Service.
pub(super) async fn bindings_labeled(
    client: &kube::Client,
    labels: &std::collections::BTreeMap<String, String>,
    namespaces: &[String],
    wanted: &[ResolvedTargetGroupBinding],
    writes: &mut Vec<Write>,
) -> Result<(), String> {
    let selector = labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let by_labels = ListParams::default().labels(&selector);
    let mut existing = Vec::new();
    let apis: Vec<Api<TargetGroupBinding>> = if namespaces.is_empty() {
        vec![Api::all(client.clone())]
    } else {
        namespaces
            .iter()
            .map(|ns| Api::namespaced(client.clone(), ns))
            .collect()
    };
    for api in apis {
        let items = api
            .list(&by_labels)
            .await
            .map_err(|e| format!("listing TargetGroupBindings: {e}"))?
            .items;
        existing.extend(items);
    }
    let mut by_arn: HashMap<String, TargetGroupBinding> = existing
        .into_iter()
        .map(|b| (b.spec.target_group_arn.clone(), b))
        .collect();
    for want in wanted {
        let resource = format!("{}/{}", want.namespace, want.name);
        let want_spec = serde_json::to_string(&want.spec).unwrap_or_default();
        match by_arn.remove(&want.spec.target_group_arn) {
            Some(have) if binding_needs_update(&have, want) => writes.push(kube_write(
                "update TargetGroupBinding",
                format!(
                    "{}/{}",
                    have.namespace().unwrap_or_default(),
                    have.name_any()
                ),
                one("spec", Some(spec_json(&have)), Some(want_spec)),
            )),
            Some(_) => {}
            // As the controller's create: a binding of that name already there is taken over
            // (updated in place) when it carries the stack's labels, else the create fails.
            None => match named(client, want).await? {
                Some(have) if !has_labels(&have, labels) => {
                    return Err(format!(
                        "Failed deploy model due to targetgroupbindings.elbv2.k8s.aws \"{}\" already exists",
                        want.name
                    ))
                }
                Some(have) => {
                    by_arn.remove(&have.spec.target_group_arn);
                    if binding_needs_update(&have, want) {
                        writes.push(kube_write(
                            "update TargetGroupBinding",
                            resource,
                            one("spec", Some(spec_json(&have)), Some(want_spec)),
                        ));
                    }
                }
                None => writes.push(kube_write(
                    "create TargetGroupBinding",
                    resource,
                    one("spec", None, Some(want_spec)),
                )),
            },
        }
    }
    let mut stale: Vec<_> = by_arn.into_values().collect();
    stale.sort_by_key(|b| (b.namespace(), b.name_any()));
    for b in stale {
        writes.push(kube_write(
            "delete TargetGroupBinding",
            format!("{}/{}", b.namespace().unwrap_or_default(), b.name_any()),
            one("spec", Some(spec_json(&b)), None),
        ));
    }
    Ok(())
}
