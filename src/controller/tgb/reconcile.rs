//! One reconcile of a TargetGroupBinding: finalizer, wanted targets (ip or instance), target
//! sync, readiness gates, status and events; cleanup when the binding is deleted.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource, ResourceExt};

use super::endpoints::{
    find_service_port, select_node_endpoints, select_pod_endpoints, NodeEndpoint, PodEndpoint,
};
use super::eni::PodTarget;
use super::networking::NetError;
use super::quic::{binding_is_quic, ANNOTATION, REASON_MISSING};
use super::sync::{cleanup, sync_targets, update_gates};
use super::targets::ip_targets;
use super::{Ctx, TgbError, FINALIZER};
use crate::aws::TargetDescription;
use crate::controller::skeleton::{reason, Failed, Next};
use crate::controller::{add_finalizer, remove_finalizer};
use crate::crd::target_group_binding::{TargetGroupIpAddressType, TargetType};
use crate::crd::TargetGroupBinding;

/// What a reconcile of a live binding found.
#[derive(Debug, Default)]
struct Outcome {
    /// Targets were registered or deregistered.
    changed: bool,
    /// Some gated pod is not True yet: poll target health soon.
    pending: bool,
    /// The security-group rules could not be reconciled (the targets were): retry later.
    net_failed: bool,
}

/// The Warning on a binding that does not decode; the decode error follows.
pub const UNDECODABLE: &str = "spec has a value this controller does not know; the last version that decoded is reconciled and its security-group rules are never revoked until the binding decodes again";

/// One pass over binding `key` (`ns/name`), wrapped by the skeleton in the pass's log span: a
/// binding no longer stored is left alone, and a failed pass is also upstream's
/// `FailedReconcile` Warning on the binding (on top of the failed step's own).
pub async fn reconcile(ctx: Arc<Ctx>, key: String) -> Result<Next, TgbError> {
    let (ns, name) = key.split_once('/').unwrap_or(("", key.as_str()));
    let Some(tgb) = ctx.bindings.get(&ObjectRef::new(name).within(ns)) else {
        return Ok(Next::Done);
    };
    let passed = reconcile_binding(tgb.clone(), ctx.clone()).await;
    ctx.events
        .warned(&[tgb.as_ref()], Failed::RECONCILE, passed)
        .await
}

async fn reconcile_binding(tgb: Arc<TargetGroupBinding>, ctx: Arc<Ctx>) -> Result<Next, TgbError> {
    let ns = tgb.namespace().unwrap_or_default();
    let name = tgb.name_any();
    let api: Api<TargetGroupBinding> = Api::namespaced(ctx.client.clone(), &ns);
    let me: &TargetGroupBinding = tgb.as_ref();
    let oref = tgb.object_ref(&());
    let key = format!("{ns}/{name}");
    if let Some(error) = ctx.caches.undecodable_news(&key) {
        // Never silent: the binding as written is not what is reconciled.
        let note = format!("{UNDECODABLE}: {error}");
        ctx.events.warning(&oref, "UnsupportedValue", note).await;
    }

    if tgb.metadata.deletion_timestamp.is_some() {
        if !tgb.finalizers().iter().any(|f| f == FINALIZER) {
            return Ok(Next::Done);
        }
        ctx.caches.wait_synced().await;
        let cleaned = cleanup(&ctx, &tgb).await;
        ctx.events.warned(&[me], Failed::CLEANUP, cleaned).await?;
        let released = remove_finalizer(&api, me, FINALIZER).await;
        ctx.events
            .warned(&[me], Failed::REMOVE_FINALIZER, released)
            .await?;
        ctx.caches.index.set(&ns, &name, Vec::new());
        ctx.polls.settled(&key);
        return Ok(Next::Done);
    }

    let rec = &ctx.rec;
    let added = rec
        .staged(
            "add_finalizers",
            add_finalizer(&api, tgb.as_ref(), FINALIZER),
        )
        .await;
    ctx.events
        .warned(&[me], Failed::ADD_FINALIZER, added)
        .await?;
    ctx.caches.wait_synced().await;

    let outcome = rec
        .staged("reconcile_targetgroupbinding", async {
            match tgb.spec.target_type {
                Some(TargetType::Ip) => reconcile_ip(&ctx, &tgb).await,
                Some(TargetType::Instance) => reconcile_instance(&ctx, &tgb).await,
                None => Err(TgbError::Invalid(format!(
                    "targetType is not specified: {key}"
                ))),
            }
        })
        .await?;

    let generation = tgb.metadata.generation;
    let observed = tgb.status.as_ref().and_then(|s| s.observed_generation);
    if generation.is_some() && observed != generation {
        let body = serde_json::json!({ "status": { "observedGeneration": generation } });
        let patched = rec
            .staged(
                "update_status",
                api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&body)),
            )
            .await;
        ctx.events
            .warned(&[me], Failed::UPDATE_STATUS, patched)
            .await?;
    }
    // Health polls re-run this often; an event per poll would only flood the API.
    if outcome.changed || observed != generation {
        ctx.events
            .normal(
                &oref,
                reason::SUCCESSFULLY_RECONCILED,
                "Successfully reconciled".into(),
            )
            .await;
    }
    if outcome.net_failed {
        // The targets are in step; the rules are retried after the binding's growing backoff.
        return Ok(Next::Backoff);
    }
    Ok(Next::After(if outcome.pending {
        // Fresh registrations may turn healthy within seconds: their schedule starts over.
        ctx.polls
            .waiting(&key, outcome.changed, std::time::Instant::now())
    } else {
        ctx.polls.settled(&key);
        ctx.cfg.resync
    }))
}

fn port_text(p: &IntOrString) -> String {
    match p {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// The Service or its port is gone: tell the user and take every target out.
async fn backend_not_found(
    ctx: &Ctx,
    tgb: &TargetGroupBinding,
    msg: String,
) -> Result<Outcome, TgbError> {
    ctx.events
        .warning(&tgb.object_ref(&()), "BackendNotFound", msg)
        .await;
    cleanup(ctx, tgb).await?;
    Ok(Outcome {
        changed: true,
        ..Outcome::default()
    })
}

async fn reconcile_ip(ctx: &Ctx, tgb: &TargetGroupBinding) -> Result<Outcome, TgbError> {
    let ns = tgb.namespace().unwrap_or_default();
    let name = tgb.name_any();
    let svc_name = &tgb.spec.service_ref.name;
    let Some(svc) = ctx.caches.services.get(&ns, svc_name) else {
        ctx.caches.index.set(&ns, &name, Vec::new());
        let msg = format!("backend not found: services \"{svc_name}\" not found");
        return backend_not_found(ctx, tgb, msg).await;
    };
    let Some(port) = find_service_port(&svc, &tgb.spec.service_ref.port) else {
        let p = port_text(&tgb.spec.service_ref.port);
        let msg = format!("backend not found: unable to find port {p} on service {ns}/{svc_name}");
        return backend_not_found(ctx, tgb, msg).await;
    };
    // Pods this binding newly brings into the cache's scope are listed first (see `scope`):
    // acting without them would deregister their targets, so a list that does not come in
    // time fails the pass (retried with backoff) instead.
    if !ctx.caches.scope.covered(&ns, svc_name).await {
        return Err(TgbError::PodsNotListed(format!(
            "the pods of service {ns}/{svc_name} are not listed yet"
        )));
    }
    let slices = ctx.caches.slices_of(&ns, svc_name);
    let ipv6 = tgb.spec.ip_address_type == Some(TargetGroupIpAddressType::Ipv6);
    let endpoints = {
        let pods = ctx.caches.pods.read();
        let nodes = ctx.caches.nodes.read();
        select_pod_endpoints(
            port,
            &slices,
            ipv6,
            ctx.cfg.fail_open,
            |p| pods.get(&(ns.clone(), p.to_string())),
            |n| nodes.get(&(String::new(), n.to_string())),
        )
    };
    // Every pod the Service's slices mention, selected or not: its changes concern us.
    let mut referenced: Vec<String> = slices
        .iter()
        .flat_map(|s| {
            s.endpoints
                .iter()
                .filter_map(|e| e.pod.as_deref().map(str::to_string))
        })
        .collect();
    referenced.sort();
    referenced.dedup();
    ctx.caches.index.set(&ns, &name, referenced);

    let wanted = {
        let pods = ctx.caches.pods.read();
        ip_targets(&endpoints, binding_is_quic(tgb), &ctx.cfg.vpc_cidrs, |p| {
            pods.get(&(ns.clone(), p.to_string()))
        })
    };
    warn_missing_quic_ids(ctx, tgb, &wanted.missing_quic_id).await;
    // Rules for every endpoint, registered or not, as upstream.
    let net_failed = !net_pods(ctx, tgb, &endpoints).await;
    let sync = sync_targets(ctx, tgb, &wanted.targets).await?;
    let no_id: Vec<String> = wanted
        .missing_quic_id
        .iter()
        .map(|e| e.pod.clone())
        .collect();
    let pending = update_gates(ctx, tgb, &wanted.pairs, &no_id, &sync).await?;
    Ok(Outcome {
        changed: sync.changed,
        pending,
        net_failed,
    })
}

async fn reconcile_instance(ctx: &Ctx, tgb: &TargetGroupBinding) -> Result<Outcome, TgbError> {
    let ns = tgb.namespace().unwrap_or_default();
    let svc_name = &tgb.spec.service_ref.name;
    let Some(svc) = ctx.caches.services.get(&ns, svc_name) else {
        let msg = format!("backend not found: services \"{svc_name}\" not found");
        return backend_not_found(ctx, tgb, msg).await;
    };
    if svc.type_ != "NodePort" && svc.type_ != "LoadBalancer" {
        return Err(TgbError::Invalid(format!(
            "service type must be either 'NodePort' or 'LoadBalancer': {ns}/{svc_name}"
        )));
    }
    let Some(port) = find_service_port(&svc, &tgb.spec.service_ref.port) else {
        let p = port_text(&tgb.spec.service_ref.port);
        let msg = format!("backend not found: unable to find port {p} on service {ns}/{svc_name}");
        return backend_not_found(ctx, tgb, msg).await;
    };
    let node_port = port
        .node_port
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p > 0)
        .ok_or_else(|| {
            TgbError::Invalid(format!(
                "service port {} of {ns}/{svc_name} has no nodePort",
                port.port
            ))
        })?;
    let nodes = {
        let nodes = ctx.caches.nodes.read();
        select_node_endpoints(
            node_port,
            nodes.iter().map(|((_, n), info)| (n.as_str(), info)),
            tgb.spec.node_selector.as_ref(),
            ctx.cfg.fail_open,
        )
        .map_err(|e| TgbError::Invalid(e.to_string()))?
    };
    let wanted: Vec<TargetDescription> = nodes
        .iter()
        .map(|n| TargetDescription::new(n.instance_id.clone(), n.port))
        .collect();
    let net_failed = !net_nodes(ctx, tgb, &nodes).await;
    let sync = sync_targets(ctx, tgb, &wanted).await?;
    Ok(Outcome {
        changed: sync.changed,
        pending: false,
        net_failed,
    })
}

/// The Warning for the pods a QUIC binding leaves unregistered for want of a server id: sent
/// when the pods it names change (not on every pass), forgotten once none is missing.
async fn warn_missing_quic_ids(ctx: &Ctx, tgb: &TargetGroupBinding, missing: &[PodEndpoint]) {
    let key = binding_key(tgb);
    if missing.is_empty() {
        ctx.quic_news(&key, None);
        return;
    }
    let note = missing_note(missing, &ctx.cfg.quic_env);
    if ctx.quic_news(&key, Some(&note)) {
        tracing::warn!(binding = %key, targets = missing.len(), "Dropping registration request for QUIC enabled target with no server ID");
        ctx.events
            .warning(&tgb.object_ref(&()), REASON_MISSING, note)
            .await;
    }
}

/// Pods named in one Warning; the rest are counted.
const NAMED_IN_NOTE: usize = 5;

/// The Warning's note for endpoints left out for want of a server id (a few named, the rest
/// counted), with upstream's log line first and where the id comes from.
pub(super) fn missing_note(missing: &[PodEndpoint], env_name: &str) -> String {
    let mut named: Vec<String> = missing
        .iter()
        .take(NAMED_IN_NOTE)
        .map(|e| format!("pod {} ({}:{})", e.pod, e.ip, e.port))
        .collect();
    if missing.len() > NAMED_IN_NOTE {
        named.push(format!("and {} more", missing.len() - NAMED_IN_NOTE));
    }
    format!(
        "Dropping registration request for QUIC enabled target with no server ID: {}. A QUIC target group needs each target's server ID: the pod's {env_name} variable (8 bytes in standard base64), which the pod webhook sets in the containers named by the pod annotation {ANNOTATION}",
        named.join(", ")
    )
}

fn binding_key(tgb: &TargetGroupBinding) -> String {
    format!("{}/{}", tgb.namespace().unwrap_or_default(), tgb.name_any())
}

/// Reports a networking failure; targets are reconciled regardless (as upstream does).
async fn net_outcome(ctx: &Ctx, tgb: &TargetGroupBinding, r: Result<(), NetError>) -> bool {
    match r {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(binding = %binding_key(tgb), error = %e, "networking reconcile failed");
            ctx.events
                .warning(
                    &tgb.object_ref(&()),
                    "FailedNetworkReconcile",
                    e.to_string(),
                )
                .await;
            false
        }
    }
}

/// Security-group rules for pod targets; false when they failed (event sent).
async fn net_pods(ctx: &Ctx, tgb: &TargetGroupBinding, endpoints: &[PodEndpoint]) -> bool {
    let r = async {
        let wanted = match &tgb.spec.networking {
            Some(n) => {
                let ns = tgb.namespace().unwrap_or_default();
                let pods: Vec<(PodTarget, Vec<(String, i32)>)> = {
                    let cache = ctx.caches.pods.read();
                    let mut seen = std::collections::HashSet::new();
                    endpoints
                        .iter()
                        .filter(|e| seen.insert(e.pod.as_str()))
                        .filter_map(|e| {
                            let p = cache.get(&(ns.clone(), e.pod.clone()))?;
                            let t = PodTarget {
                                key: format!("{ns}/{}", e.pod),
                                uid: p.uid.to_string(),
                                ip: e.ip.clone(),
                                branch_eni: p.branch_eni.as_deref().map(String::from),
                            };
                            Some((t, p.container_ports.to_vec()))
                        })
                        .collect()
                };
                ctx.net.for_pods(n, &pods).await?
            }
            None => Default::default(),
        };
        let all = ctx.with_networking().await;
        ctx.net.reconcile(&binding_key(tgb), wanted, &all).await
    }
    .await;
    net_outcome(ctx, tgb, r).await
}

/// Security-group rules for node targets; false when they failed (event sent).
async fn net_nodes(ctx: &Ctx, tgb: &TargetGroupBinding, nodes: &[NodeEndpoint]) -> bool {
    let r = async {
        let wanted = match &tgb.spec.networking {
            Some(n) => {
                let pairs: Vec<(String, String)> = nodes
                    .iter()
                    .map(|e| (e.node.clone(), e.instance_id.clone()))
                    .collect();
                ctx.net.for_nodes(n, &pairs).await?
            }
            None => Default::default(),
        };
        let all = ctx.with_networking().await;
        ctx.net.reconcile(&binding_key(tgb), wanted, &all).await
    }
    .await;
    net_outcome(ctx, tgb, r).await
}
