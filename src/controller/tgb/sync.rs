//! The side effects of a reconcile: target (de)registration with the multi-cluster record,
//! readiness-gate patches on pods, and cleanup when a binding goes away.

use std::collections::{BTreeSet, HashMap, HashSet};

use futures::{stream, StreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};

use super::gates::{condition_type, desired_condition, next_condition, status_patch, Desired};
use super::quic::binding_is_quic;
use super::targets::{
    cap_registrations, diff_targets, is_draining, key_of, tracked_from_csv, tracked_to_csv,
};
use super::{Ctx, TgbError};
use crate::aws::{TargetDescription, TargetHealth};
use crate::crd::TargetGroupBinding;

/// Key of the multi-cluster record.
pub const TRACKED_PREFIX: &str = "aws-lbc-targets-";
pub const TRACKED_KEY: &str = "targets";
/// Pod status patches in flight per reconcile.
const PATCH_CONCURRENCY: usize = 16;

/// What one target sync did and saw.
#[derive(Debug, Default)]
pub struct SyncResult {
    /// Keys ([`key_of`]: `id:port`, and the QUIC server id) registered by this sync.
    pub registered: HashSet<String>,
    /// Health of every non-draining target the group held before the sync.
    pub health: HashMap<String, TargetHealth>,
    /// Whether anything was registered or deregistered.
    pub changed: bool,
}

fn ns_name(tgb: &TargetGroupBinding) -> (String, String) {
    (tgb.namespace().unwrap_or_default(), tgb.name_any())
}

/// Brings the target group to `wanted`: deregister first, then register.
pub async fn sync_targets(
    ctx: &Ctx,
    tgb: &TargetGroupBinding,
    wanted: &[TargetDescription],
) -> Result<SyncResult, TgbError> {
    let arn = &tgb.spec.target_group_arn;
    let elbv2 = ctx.elbv2_of(tgb).await?;
    let mut current = elbv2.describe_target_health(arn, &[]).await?;
    let quic = binding_is_quic(tgb);
    let (ns, name) = ns_name(tgb);
    let key = format!("{ns}/{name}");
    if quic {
        ctx.quic_ids.fill(&key, &mut current);
    }
    let mc = tgb.spec.multi_cluster_target_group;
    let tracked = if mc {
        Some(load_tracked(ctx, tgb).await?)
    } else {
        None
    };
    let mut diff = diff_targets(wanted, &current, tracked.as_ref().map(Option::as_ref));
    let live = current
        .iter()
        .filter(|t| !is_draining(t.health.state))
        .count();
    let capped = cap_registrations(&mut diff, live, ctx.cfg.max_targets);
    if capped > 0 {
        tracing::warn!(binding = %tgb.name_any(), capped, max = ctx.cfg.max_targets, "target group is at --max-targets-per-target-group; targets left unregistered");
    }
    if !diff.deregister.is_empty() {
        elbv2.deregister_targets(arn, &diff.deregister).await?;
        if quic {
            ctx.quic_ids.deregistered(&key, &diff.deregister);
        }
    }
    if mc {
        let keys: BTreeSet<String> = wanted.iter().map(key_of).collect();
        if tracked.as_ref().and_then(Option::as_ref) != Some(&keys) {
            save_tracked(ctx, tgb, keys).await?;
        }
    }
    if !diff.register.is_empty() {
        elbv2.register_targets(arn, &diff.register).await?;
        if quic {
            ctx.quic_ids.registered(&key, &diff.register);
        }
    }
    Ok(SyncResult {
        registered: diff.register.iter().map(key_of).collect(),
        health: current
            .into_iter()
            .filter(|t| !is_draining(t.health.state))
            .map(|t| (key_of(&t.target), t.health))
            .collect(),
        changed: !diff.is_empty(),
    })
}

/// Sets each gated pod's condition from its target's health; returns whether any is not True.
/// `targets` are `(pod name, target key)`; `no_quic_id` names the pods a QUIC binding cannot
/// register for want of a server id: their gate is False saying so, and is not polled (a pod's
/// environment never changes; a new pod brings its own watch event).
pub async fn update_gates(
    ctx: &Ctx,
    tgb: &TargetGroupBinding,
    targets: &[(String, String)],
    no_quic_id: &[String],
    sync: &SyncResult,
) -> Result<bool, TgbError> {
    let (ns, name) = ns_name(tgb);
    let gate = condition_type(&name);
    let mut pending = false;
    let mut writes = Vec::new();
    let mut flips = Vec::new();
    {
        let pods = ctx.caches.pods.read();
        for (pod, key) in targets {
            let Some(info) = pods.get(&(ns.clone(), pod.clone())) else {
                continue;
            };
            if !info.gates.contains(&gate) {
                continue;
            }
            let desired = desired_condition(sync.health.get(key), sync.registered.contains(key));
            pending |= !desired.is_true();
            if let Some(c) = next_condition(&gate, info.condition(&gate), &desired, &now()) {
                flips.extend(super::gates::ready_flip_seconds(info.condition(&gate), &c));
                writes.push((pod.clone(), status_patch(&info.uid, &c)));
            }
        }
        let desired = Desired::quic_server_id_missing();
        let mut seen = HashSet::new();
        for pod in no_quic_id.iter().filter(|p| seen.insert(p.as_str())) {
            let Some(info) = pods.get(&(ns.clone(), pod.clone())) else {
                continue;
            };
            if !info.gates.contains(&gate) {
                continue;
            }
            if let Some(c) = next_condition(&gate, info.condition(&gate), &desired, &now()) {
                writes.push((pod.clone(), status_patch(&info.uid, &c)));
            }
        }
    }
    patch_pods(ctx, &ns, writes).await?;
    for secs in flips {
        ctx.rec.gate_ready(&ns, &name, secs);
    }
    Ok(pending)
}

/// Every pod of the namespace gated on this binding gets True: nothing will register it any more.
async fn release_gates(ctx: &Ctx, tgb: &TargetGroupBinding) -> Result<(), TgbError> {
    let (ns, name) = ns_name(tgb);
    let gate = condition_type(&name);
    let desired = Desired::binding_deleted();
    let writes: Vec<_> = ctx
        .caches
        .pods
        .read()
        .iter()
        .filter(|((n, _), info)| *n == ns && info.gates.contains(&gate))
        .filter_map(|((_, pod), info)| {
            next_condition(&gate, info.condition(&gate), &desired, &now())
                .map(|c| (pod.clone(), status_patch(&info.uid, &c)))
        })
        .collect();
    patch_pods(ctx, &ns, writes).await
}

async fn patch_pods(
    ctx: &Ctx,
    ns: &str,
    writes: Vec<(String, serde_json::Value)>,
) -> Result<(), TgbError> {
    let api: Api<Pod> = Api::namespaced(ctx.client.clone(), ns);
    let results: Vec<_> = stream::iter(writes)
        .map(|(pod, body)| {
            let api = api.clone();
            async move {
                match api
                    .patch_status(&pod, &PatchParams::default(), &Patch::Strategic(&body))
                    .await
                {
                    Ok(_) => Ok(()),
                    // Gone or replaced (UID mismatch) pods need no condition.
                    Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => Ok(()),
                    Err(e) => Err(e),
                }
            }
        })
        .buffer_unordered(PATCH_CONCURRENCY)
        .collect()
        .await;
    results.into_iter().collect::<Result<(), _>>()?;
    Ok(())
}

fn now() -> String {
    let t =
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(k8s_openapi::jiff::Timestamp::now());
    match serde_json::to_value(t) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// Deregisters every target this binding owns (all of them, or only the recorded ones for a
/// multi-cluster group), drops the record and releases the pods' gates.
pub async fn cleanup(ctx: &Ctx, tgb: &TargetGroupBinding) -> Result<(), TgbError> {
    let arn = &tgb.spec.target_group_arn;
    if !arn.is_empty() {
        let elbv2 = ctx.elbv2_of(tgb).await?;
        let mut current = match elbv2.describe_target_health(arn, &[]).await {
            Err(e) if e.is_not_found() => Vec::new(),
            other => other?,
        };
        if binding_is_quic(tgb) {
            let (ns, name) = ns_name(tgb);
            ctx.quic_ids.fill(&format!("{ns}/{name}"), &mut current);
        }
        let tracked = if tgb.spec.multi_cluster_target_group {
            Some(load_tracked(ctx, tgb).await?)
        } else {
            None
        };
        let diff = diff_targets(&[], &current, tracked.as_ref().map(Option::as_ref));
        if !diff.deregister.is_empty() {
            match elbv2.deregister_targets(arn, &diff.deregister).await {
                Err(e)
                    if e.is_not_found()
                        || matches!(e.code(), "InvalidTarget" | "ValidationError") => {}
                other => other?,
            }
        }
    }
    if tgb.spec.multi_cluster_target_group {
        let (ns, name) = ns_name(tgb);
        let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
        match api
            .delete(&format!("{TRACKED_PREFIX}{name}"), &Default::default())
            .await
        {
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            other => {
                other?;
            }
        }
    }
    ctx.forget_tracked(tgb);
    // This binding's rules are no longer wanted.
    let (ns, name) = ns_name(tgb);
    let all = ctx.with_networking().await;
    ctx.net
        .reconcile(&format!("{ns}/{name}"), Default::default(), &all)
        .await?;
    release_gates(ctx, tgb).await
}

/// The recorded targets of a multi-cluster binding; `None` before the first record.
async fn load_tracked(
    ctx: &Ctx,
    tgb: &TargetGroupBinding,
) -> Result<Option<BTreeSet<String>>, TgbError> {
    let (ns, name) = ns_name(tgb);
    if let Some(set) = ctx.tracked_get(&ns, &name) {
        return Ok(Some(set));
    }
    let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
    let Some(cm) = api.get_opt(&format!("{TRACKED_PREFIX}{name}")).await? else {
        return Ok(None);
    };
    let set = tracked_from_csv(
        cm.data
            .as_ref()
            .and_then(|d| d.get(TRACKED_KEY))
            .map_or("", |s| s),
    );
    ctx.tracked_put(&ns, &name, set.clone());
    Ok(Some(set))
}

/// Writes the record with the verbs upstream's RBAC grants on ConfigMaps (get, create, update):
/// the live record (upstream's or ours) is replaced with its resourceVersion, or created when
/// there is none. A concurrent change (409) fails this pass and is retried with the next one.
async fn save_tracked(
    ctx: &Ctx,
    tgb: &TargetGroupBinding,
    set: BTreeSet<String>,
) -> Result<(), TgbError> {
    let (ns, name) = ns_name(tgb);
    let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
    let cm_name = format!("{TRACKED_PREFIX}{name}");
    let csv = tracked_to_csv(&set);
    match api.get_opt(&cm_name).await? {
        Some(mut cm) => {
            cm.data
                .get_or_insert_with(Default::default)
                .insert(TRACKED_KEY.to_string(), csv);
            api.replace(&cm_name, &PostParams::default(), &cm).await?;
        }
        None => {
            let cm = ConfigMap {
                metadata: kube::api::ObjectMeta {
                    name: Some(cm_name),
                    namespace: Some(ns.clone()),
                    ..Default::default()
                },
                data: Some([(TRACKED_KEY.to_string(), csv)].into()),
                ..Default::default()
            };
            api.create(&PostParams::default(), &cm).await?;
        }
    }
    ctx.tracked_put(&ns, &name, set);
    Ok(())
}
