//! One reconcile of one Ingress group, in upstream's order: finalizers on members → build the
//! model → deploy → TargetGroupBinding objects → status on members → finalizers off former
//! members → `SuccessfullyReconciled`. A member whose own edit fails to build keeps its last
//! deployed configuration while the others deploy (see `last_good`). A group without active
//! members is deleted (bindings, then every AWS resource of the stack, then the finalizers)
//! unless a member that only failed to classify still holds the finalizer, or a load balancer
//! of the stack has deletion protection on (then nothing is taken apart and a Warning names
//! it). A model that fails to build never deletes anything. With the gate
//! `IngressPlanAnnotation` the built stack is published on the first member before the deploy
//! (see `plan_annotation`).

pub(super) mod plan_annotation;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::networking::v1::Ingress;
use kube::{Api, Resource};

use super::{bindings, status, Ctx, IngressError};
use crate::controller::skeleton::{self, reason, Failed};
use crate::controller::{add_finalizer, remove_finalizer};
use crate::deploy::Error as DeployError;
use crate::model::group::key_of;
use crate::model::{self, BuildEnv, ClusterObjects, GroupId, IngressGroup};

fn api_of(ctx: &Ctx, ing: &Ingress) -> Api<Ingress> {
    skeleton::api_of(&ctx.client, ing)
}

async fn warn_all(ctx: &Ctx, on: &[&Ingress], reason: &str, note: &str) {
    for ing in on {
        ctx.events.warn_on(*ing, reason, note.to_string()).await;
    }
}

/// Passes `result` through; on an error first warns every Ingress of `on` with upstream's
/// reason and note for the failed step.
async fn warned<T, E: std::fmt::Display>(
    ctx: &Ctx,
    on: &[&Ingress],
    step: Failed,
    result: Result<T, E>,
) -> Result<T, E> {
    ctx.events.warned(on, step, result).await
}

fn find<'a>(objs: &'a ClusterObjects, key: &str) -> Option<&'a Ingress> {
    objs.ingresses.iter().find(|i| key_of(&i.metadata) == key)
}

/// Times `work` as upstream's reconcile stage `stage` (see `Reconciles::staged`).
async fn staged<T, E>(
    ctx: &Ctx,
    stage: &str,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    ctx.rec.staged(stage, work).await
}

/// Reconciles group `id`; `Ok(Some(d))` asks for a resync after `d`.
/// The caller wraps the pass in its log span ([`crate::telemetry::reconcile_span`]).
pub async fn reconcile(ctx: &Ctx, id: &GroupId) -> Result<Option<Duration>, IngressError> {
    let class = &ctx.cfg.model.ingress_class;
    let start = std::time::Instant::now();
    let earlier = ctx.last_good.earlier(id);
    let mut objs = ctx.stores.snapshot(id, class, &earlier);
    // The Secrets OIDC actions read are an input like the Services (upstream's GetSecret: the
    // watched copy, else the API server; a failure other than NotFound fails the build).
    match super::secrets::inputs(&ctx.stores.secrets, &ctx.client, &objs).await {
        Ok(secrets) => objs.secrets = secrets,
        Err(e) => {
            let live: Vec<&Ingress> = objs
                .ingresses
                .iter()
                .filter(|i| i.metadata.deletion_timestamp.is_none())
                .collect();
            warn_all(
                ctx,
                &live,
                reason::FAILED_BUILD_MODEL,
                &Failed::BUILD_MODEL.note(&e),
            )
            .await;
            return Err(e.into());
        }
    }
    let (groups, _) = model::load_groups(&objs, class);
    ctx.rec.stage_took("fetch_ingress", start.elapsed());
    let group = groups.get(id);
    match group {
        Some(g) if !g.members.is_empty() => deploy_group(ctx, g, &objs).await,
        _ => delete_group(ctx, id, group, &objs).await,
    }
}

async fn deploy_group(
    ctx: &Ctx,
    group: &IngressGroup<'_>,
    objs: &ClusterObjects,
) -> Result<Option<Duration>, IngressError> {
    let finalizer = group.id.finalizer();
    let members: Vec<&Ingress> = group.members.iter().map(|m| m.ingress).collect();
    // 1. Finalizers first: from here on, deleting a member cannot leak the stack.
    let added = staged(ctx, "add_group_finalizer", async {
        for ing in &members {
            add_finalizer(&api_of(ctx, ing), *ing, &finalizer).await?;
        }
        Ok::<_, kube::Error>(())
    })
    .await;
    warned(ctx, &members, Failed::ADD_FINALIZER, added).await?;
    // 2. Model; a member whose own edit fails keeps its last deployed configuration.
    // ACM certificate discovery belongs to upstream's model build (reads only): a host without
    // a certificate is a `FailedBuildModel` of the whole group, before any AWS write.
    let built = staged(ctx, "build_model", async {
        let mut built = ctx.last_good.build(group, objs, &ctx.cfg.model)?;
        let discovered = match ctx.deployer.resolve_certificates(&built.stack).await? {
            Cow::Owned(s) => Some(s),
            Cow::Borrowed(_) => None,
        };
        if let Some(s) = discovered {
            built.stack = s;
        }
        Ok::<_, IngressError>(built)
    })
    .await;
    let built = warned(ctx, &members, Failed::BUILD_MODEL, built).await?;
    let stack = &built.stack;
    let mut reported = BTreeSet::new();
    for ex in built.failed.iter().chain(&stack.excluded_members) {
        if !reported.insert(ex.ingress.clone()) {
            continue;
        }
        if let Some(ing) = find(objs, &ex.ingress) {
            let mut note = Failed::BUILD_MODEL.note(&ex.error);
            if built.held.contains(&ex.ingress) {
                note.push_str("; its last deployed configuration stays in place");
            }
            warn_all(ctx, &[ing], reason::FAILED_BUILD_MODEL, &note).await;
        }
    }
    // Nothing accepted and ignored silently: the warnings go where users look, on the Ingress
    // they are about (every member when about the group), before AWS can fail the deploy. One
    // event per Ingress: the recorder folds events of one reason into one series.
    let mut notes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for w in &stack.warnings {
        tracing::warn!(group = %group.id.as_string(), ingress = ?w.ingress, annotation = ?w.annotation, "{}", w.message);
        let note = match &w.annotation {
            Some(a) => format!("{a}: {}", w.message),
            None => w.message.clone(),
        };
        let about: Vec<String> = match &w.ingress {
            Some(key) => vec![key.clone()],
            None => members.iter().map(|i| key_of(&i.metadata)).collect(),
        };
        for key in about {
            notes.entry(key).or_default().push(note.clone());
        }
    }
    for (key, list) in &notes {
        if let Some(ing) = find(objs, key) {
            let note = list.join("; ");
            warn_all(ctx, &[ing], reason::UNSUPPORTED_CONFIGURATION, &note).await;
        }
    }
    tracing::debug!(group = %group.id.as_string(), "built model");
    plan_annotation::publish(ctx, &members, stack).await;
    // 3. AWS, 4. TargetGroupBinding objects.
    let deploy = async {
        let deployed = ctx.deployer.deploy(stack).await?;
        bindings::sync(
            &ctx.client,
            &group.id,
            &deployed.target_group_bindings,
            &ctx.cfg.namespaces,
            ctx.cfg.metrics.as_ref(),
        )
        .await?;
        Ok::<_, IngressError>(deployed)
    };
    let deployed = ctx
        .rec
        .staged_unless("deploy_model", deploy, |e| {
            matches!(e, IngressError::Deploy(DeployError::NotReady { .. }))
        })
        .await;
    // A load balancer still provisioning before its capacity reservation (or an ALB not yet
    // registrable behind its frontend NLB) is waited for as upstream's `RequeueNeededAfter`:
    // queued again after the step's delay, no Warning.
    if let Err(IngressError::Deploy(DeployError::NotReady {
        reason,
        retry_after,
    })) = &deployed
    {
        tracing::info!(group = %group.id.as_string(), %reason, retry_in = ?retry_after, "requeue after");
        return Ok(Some(*retry_after));
    }
    let deployed = warned(ctx, &members, Failed::DEPLOY_MODEL, deployed).await?;
    // 5. Status on the members the stack serves.
    // (Members held on their last configuration may be outside `members`: a bad group.order.)
    let served: Vec<&Ingress> = stack.members.iter().filter_map(|k| find(objs, k)).collect();
    if let Some(lb) = &deployed.load_balancer {
        let fe = deployed.frontend_nlb.as_ref().map(|f| f.dns_name.as_str());
        let want =
            status::with_frontend_nlb(status::desired(&lb.dns_name, &deployed.listener_ports), fe);
        let updated = staged(ctx, "dns_resolve_and_update_status", async {
            for ing in &served {
                status::update(&ctx.client, ing, &want).await?;
            }
            Ok::<_, kube::Error>(())
        })
        .await;
        warned(ctx, &members, Failed::UPDATE_STATUS, updated).await?;
    }
    ctx.last_good.record(&group.id, &served, &built.held);
    // 6. Former members let go only now that the stack no longer needs them.
    remove_finalizers(ctx, &group.inactive_members, &finalizer, &members).await?;
    for ing in served
        .iter()
        .filter(|i| !built.held.contains(&key_of(&i.metadata)))
    {
        ctx.events
            .normal(
                &ing.object_ref(&()),
                reason::SUCCESSFULLY_RECONCILED,
                "Successfully reconciled".into(),
            )
            .await;
    }
    tracing::info!(group = %group.id.as_string(), "successfully deployed model");
    Ok(Some(ctx.cfg.sync_period))
}

async fn remove_finalizers(
    ctx: &Ctx,
    from: &[&Ingress],
    finalizer: &str,
    report_on: &[&Ingress],
) -> Result<(), IngressError> {
    if from.is_empty() {
        return Ok(());
    }
    for ing in from {
        let removed = staged(
            ctx,
            "remove_group_finalizer",
            remove_finalizer(&api_of(ctx, ing), *ing, finalizer),
        )
        .await;
        let mut on: Vec<&Ingress> = report_on.to_vec();
        on.push(ing);
        warned(ctx, &on, Failed::REMOVE_FINALIZER, removed).await?;
    }
    Ok(())
}

/// No active member: delete the stack and release the former members. Only the former
/// members' own settings (deletion protection) can stop this, never other Ingresses' models.
async fn delete_group(
    ctx: &Ctx,
    id: &GroupId,
    group: Option<&IngressGroup<'_>>,
    objs: &ClusterObjects,
) -> Result<Option<Duration>, IngressError> {
    let inactive: Vec<&Ingress> = group
        .map(|g| g.inactive_members.clone())
        .unwrap_or_default();
    if let Some(g) = group {
        if !g.excluded.is_empty() {
            // A member we cannot classify right now still holds the finalizer: it may come back
            // once its class is fixed, so its load balancer stays.
            for ex in &g.excluded {
                if let Some(ing) = find(objs, &ex.ingress) {
                    let note = Failed::BUILD_MODEL.note(&ex.error);
                    warn_all(ctx, &[ing], reason::FAILED_BUILD_MODEL, &note).await;
                }
            }
            return Ok(Some(ctx.cfg.sync_period));
        }
        // Checks deletion protection on the members being deleted; nothing else is built.
        let built = staged(ctx, "build_model", async {
            model::build_stack(g, objs, &ctx.cfg.model, &BuildEnv::default())
        })
        .await;
        warned(ctx, &inactive, Failed::BUILD_MODEL, built).await?;
    }
    // A protected load balancer stays serving: its bindings are kept too.
    if let Err(e) = ctx.deployer.check_deletable(&id.as_string()).await {
        if inactive.is_empty() && matches!(e, DeployError::DeletionProtected { .. }) {
            // No Ingress waits on it (finalizers removed by hand): it stays, said once.
            tracing::warn!(group = %id.as_string(), error = %e, "leaving the protected load balancer of a group without Ingresses");
            return Ok(None);
        }
        let step = Failed::DEPLOY_MODEL;
        warn_all(ctx, &inactive, step.reason(), &step.note(&e)).await;
        return Err(e.into());
    }
    let unbound = bindings::sync(
        &ctx.client,
        id,
        &[],
        &ctx.cfg.namespaces,
        ctx.cfg.metrics.as_ref(),
    )
    .await;
    warned(ctx, &inactive, Failed::DEPLOY_MODEL, unbound).await?;
    let deleted = staged(
        ctx,
        "deploy_model",
        ctx.deployer.delete_stack(&id.as_string()),
    )
    .await;
    warned(ctx, &inactive, Failed::DEPLOY_MODEL, deleted).await?;
    ctx.last_good.forget(id);
    // Before the finalizers go: a crash in between re-runs this deletion, so the shared
    // backend SG cannot be left behind by the last group.
    if !inactive.is_empty() {
        tracing::info!(group = %id.as_string(), "deleted the group's resources");
        release_backend_sg(ctx, id).await;
    }
    remove_finalizers(ctx, &inactive, &id.finalizer(), &[]).await?;
    Ok(None)
}

/// After the last group is deleted, the auto-created backend SG goes too (never a configured
/// one). Best effort: a failure is logged and retried at the next last-group deletion.
async fn release_backend_sg(ctx: &Ctx, id: &GroupId) {
    let m = &ctx.cfg.model;
    if !m.enable_backend_sg || m.backend_sg_id.is_some() {
        return;
    }
    if ctx.stores.other_groups_exist(id, &m.ingress_class) {
        return;
    }
    match ctx.deployer.release_backend_sg().await {
        Ok(true) => tracing::info!("deleted the backend security group: no Ingress group uses it"),
        Ok(false) => {}
        Err(error) => tracing::warn!(%error, "cannot delete the unused backend security group"),
    }
}
