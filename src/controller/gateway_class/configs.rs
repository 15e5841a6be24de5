//! The configuration objects' finalizers (upstream's `loadbalancer_configuration_controller.go`,
//! `targetgroup_configuration_controller.go`, `listenerrule_configuration_controller.go`): every
//! LoadBalancerConfiguration, TargetGroupConfiguration and ListenerRuleConfiguration gets its
//! finalizer, and a deleting one keeps it — with upstream's error, as a Warning — while in use:
//! - an LBC while a class (parametersRef) or a Gateway (`spec.infrastructure.parametersRef`) of
//!   either Gateway controller names it;
//! - a default TGC (no `targetReference`) while an LBC in use names it as its default; a TGC of
//!   a Service while that Service exists and a Gateway stack uses it (or an accepted Gateway has
//!   not been recorded since start, see [`super::references`]);
//! - an LRC while an HTTPRoute or GRPCRoute of its namespace references it.
//!
//! An LRC also gets upstream's status: `accepted: false`, `secret [<ns>/<name>] not found`
//! while the Secret of its `authenticate-oidc` action is missing (checked again every 30s), else
//! `accepted: true`, `Accepted`; both at the LRC's generation.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Secret, Service};
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

use super::in_use::{accepted_gateways, lbc_in_use, rule_config_refs};
use super::{Ctx, GatewayClassError};
use crate::controller::skeleton::reason;
use crate::controller::{add_finalizer, remove_finalizer, Events};
use crate::crd::gateway::listener_rule_configuration::ActionType;
use crate::crd::gateway::{
    ListenerRuleConfiguration, LoadBalancerConfiguration, TargetGroupConfiguration,
};
use crate::model::gateway::{
    LISTENER_RULE_CONFIGURATION_FINALIZER, LOAD_BALANCER_CONFIGURATION_FINALIZER,
    TARGET_GROUP_CONFIGURATION_FINALIZER,
};

/// Adding the LoadBalancerConfiguration finalizer failed (upstream's Gateway reconciler error).
#[derive(Debug, thiserror::Error)]
#[error("failed to add finalizers on load balancer configuration {config}")]
pub struct HoldError {
    /// `ns/name` of the configuration.
    pub config: String,
    #[source]
    pub source: kube::Error,
}

/// What upstream's Gateway reconciler does with each LoadBalancerConfiguration it uses (the
/// class's and the Gateway's): make sure it carries the finalizer, so it cannot go while used.
/// Returns whether a patch was sent.
pub async fn hold_config(
    client: &kube::Client,
    lbc: &LoadBalancerConfiguration,
) -> Result<bool, HoldError> {
    let ns = lbc.namespace().unwrap_or_else(|| "default".into());
    let api: Api<LoadBalancerConfiguration> = Api::namespaced(client.clone(), &ns);
    add_finalizer(&api, lbc, LOAD_BALANCER_CONFIGURATION_FINALIZER)
        .await
        .map_err(|source| HoldError {
            config: format!("{ns}/{}", lbc.name_any()),
            source,
        })
}

/// Upstream's errors while a deleting configuration is still used.
pub fn lbc_still_in_use(key: &str) -> String {
    format!("loadbalancer configuration [{key}] is still in use")
}
pub fn tgc_still_in_use(key: &str) -> String {
    format!("targetgroup configuration [{key}] is still in use")
}
pub fn default_tgc_still_in_use(key: &str, lbcs: &str) -> String {
    format!("default targetgroup configuration [{key}] is still in use by LoadBalancerConfiguration [{lbcs}]")
}
pub fn lrc_still_in_use(key: &str) -> String {
    format!("failed to remove finalizers as listener rule configuration [{key}] is still in use")
}

/// Keeps the finalizer on a deleting object with a Warning, or removes it.
async fn release<K>(
    api: &Api<K>,
    obj: &K,
    finalizer: &str,
    events: &Events,
    blocked: Option<String>,
) -> Result<(), GatewayClassError>
where
    K: Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    if let Some(message) = blocked {
        let r = reason::FAILED_REMOVE_FINALIZER;
        events
            .warning(&obj.object_ref(&()), r, message.clone())
            .await;
        return Err(GatewayClassError::InUse(message));
    }
    remove_finalizer(api, obj, finalizer).await?;
    Ok(())
}

/// `None`: not being deleted; else whether our finalizer still holds it.
fn deleting_with<K: Resource>(obj: &K, finalizer: &str) -> Option<bool> {
    let holds = || obj.finalizers().iter().any(|f| f == finalizer);
    obj.meta().deletion_timestamp.as_ref().map(|_| holds())
}

pub(super) async fn load_balancer_config(
    ctx: &Ctx,
    ns: &str,
    name: &str,
) -> Result<(), GatewayClassError> {
    let Some(lbc) = ctx.feed.lb_configs.get(ns, name) else {
        return Ok(());
    };
    let api: Api<LoadBalancerConfiguration> = Api::namespaced(ctx.client.clone(), ns);
    let fin = LOAD_BALANCER_CONFIGURATION_FINALIZER;
    match deleting_with(lbc.as_ref(), fin) {
        None => {
            add_finalizer(&api, lbc.as_ref(), fin).await?;
            Ok(())
        }
        Some(false) => Ok(()),
        Some(true) => {
            let used = lbc_in_use(&lbc, &ctx.feed.classes.state(), &ctx.feed.gateways.state());
            let blocked = used.then(|| lbc_still_in_use(&format!("{ns}/{name}")));
            release(&api, lbc.as_ref(), fin, &ctx.events.lb_config, blocked).await
        }
    }
}

pub(super) async fn target_group_config(
    ctx: &Ctx,
    ns: &str,
    name: &str,
) -> Result<(), GatewayClassError> {
    let Some(tgc) = ctx.feed.tg_configs.get(ns, name) else {
        return Ok(());
    };
    let api: Api<TargetGroupConfiguration> = Api::namespaced(ctx.client.clone(), ns);
    let fin = TARGET_GROUP_CONFIGURATION_FINALIZER;
    match deleting_with(tgc.as_ref(), fin) {
        None => {
            add_finalizer(&api, tgc.as_ref(), fin).await?;
            return Ok(());
        }
        Some(false) => return Ok(()),
        Some(true) => {}
    }
    let key = format!("{ns}/{name}");
    let (classes, gateways) = (ctx.feed.classes.state(), ctx.feed.gateways.state());
    let blocked = match &tgc.spec.target_reference {
        None => {
            let users: Vec<String> = ctx
                .feed
                .lb_configs
                .state()
                .iter()
                .filter(|l| l.namespace().as_deref() == Some(ns))
                .filter(|l| {
                    l.spec
                        .default_target_group_configuration
                        .as_ref()
                        .is_some_and(|d| d.name == name)
                })
                .filter(|l| lbc_in_use(l, &classes, &gateways))
                .map(|l| format!("{ns}/{}", l.name_any()))
                .collect();
            (!users.is_empty()).then(|| default_tgc_still_in_use(&key, &users.join(", ")))
        }
        Some(target) => {
            let services: Api<Service> = Api::namespaced(ctx.client.clone(), ns);
            let exists = services.get_opt(&target.name).await?.is_some();
            let accepted = accepted_gateways(&gateways, &classes);
            let svc = format!("{ns}/{}", target.name);
            let held = exists && !ctx.feed.references.eligible_for_removal(&svc, &accepted);
            held.then(|| tgc_still_in_use(&key))
        }
    };
    release(&api, tgc.as_ref(), fin, &ctx.events.tg_config, blocked).await
}

/// Upstream's re-check period of an LRC whose OIDC Secret is missing.
const SECRET_RETRY: Duration = Duration::from_secs(30);

pub(super) async fn rule_config(
    ctx: &Ctx,
    ns: &str,
    name: &str,
) -> Result<Option<Duration>, GatewayClassError> {
    let Some(lrc) = ctx.feed.rule_configs.get(ns, name) else {
        return Ok(None);
    };
    let api: Api<ListenerRuleConfiguration> = Api::namespaced(ctx.client.clone(), ns);
    let fin = LISTENER_RULE_CONFIGURATION_FINALIZER;
    match deleting_with(lrc.as_ref(), fin) {
        None => {
            add_finalizer(&api, lrc.as_ref(), fin).await?;
            rule_config_status(ctx, &api, &lrc, ns).await
        }
        Some(false) => Ok(None),
        Some(true) => {
            let refers = |route_ns: Option<String>, refs: Vec<String>| {
                route_ns.as_deref() == Some(ns) && refs.iter().any(|r| r == name)
            };
            let used = ctx
                .feed
                .http_routes
                .state()
                .iter()
                .any(|r| refers(r.namespace(), rule_config_refs(&r.spec)))
                || ctx
                    .feed
                    .grpc_routes
                    .state()
                    .iter()
                    .any(|r| refers(r.namespace(), rule_config_refs(&r.spec)));
            let blocked = used.then(|| lrc_still_in_use(&format!("{ns}/{name}")));
            release(&api, lrc.as_ref(), fin, &ctx.events.rule_config, blocked).await?;
            Ok(None)
        }
    }
}

/// Upstream's LRC status: whether the Secret of its (first) `authenticate-oidc` action exists.
async fn rule_config_status(
    ctx: &Ctx,
    api: &Api<ListenerRuleConfiguration>,
    lrc: &ListenerRuleConfiguration,
    ns: &str,
) -> Result<Option<Duration>, GatewayClassError> {
    let secret = lrc
        .spec
        .actions
        .iter()
        .filter(|a| a.type_ == ActionType::AuthenticateOidc)
        .find_map(|a| a.authenticate_oidc_config.as_ref())
        .map(|c| c.secret.name.clone());
    let (accepted, message, retry) = match secret {
        Some(s) => {
            let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), ns);
            if secrets.get_opt(&s).await?.is_some() {
                (true, "Accepted".to_string(), None)
            } else {
                (
                    false,
                    format!("secret [{ns}/{s}] not found"),
                    Some(SECRET_RETRY),
                )
            }
        }
        None => (true, "Accepted".to_string(), None),
    };
    let generation = lrc.metadata.generation;
    let current = lrc.status.as_ref().is_some_and(|s| {
        s.accepted == Some(accepted)
            && s.message.as_deref() == Some(message.as_str())
            && s.observed_generation == generation
    });
    if !current {
        let patch = json!({"status": {
            "accepted": accepted, "message": message, "observedGeneration": generation,
        }});
        api.patch_status(
            &lrc.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await?;
    }
    Ok(retry)
}
