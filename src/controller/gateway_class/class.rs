//! One GatewayClass reconcile (upstream's `gateway_class_controller.go`): finalizer
//! `gateway.k8s.aws/gatewayclass`; the `parametersRef` checks; the processed-configuration
//! version and time annotations the Gateway reconcilers wait on; then `Accepted` True. A
//! deleting class keeps its finalizer while any Gateway still names it.
//!
//! Upstream only updates an `Accepted` condition that is already there: it relies on the
//! Gateway API CRD defaulting a new class's status to `Accepted: Unknown` (`Waiting for
//! controller`), which every API server serving those CRDs does. A class without that entry
//! (CRDs installed without their defaults) would stay unaccepted forever upstream, and its
//! Gateways would never be reconciled — no user of upstream relies on that, so here the condition
//! is appended in that case; where the entry exists (always, on a real cluster) it is updated in
//! place, keeping its position among the other conditions, as upstream does.

use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde_json::{json, Value};

use super::{Ctx, GatewayClassError};
use crate::controller::skeleton::reason;
use crate::controller::{add_finalizer, remove_finalizer};
use crate::crd::gateway::{
    foreign_parameters_ref, LoadBalancerConfiguration, TargetGroupConfiguration,
};
use crate::model::gateway::{
    processed_config_version, GATEWAY_CLASS_FINALIZER, LAST_PROCESSED_CONFIG_ANNOTATION,
    LAST_PROCESSED_CONFIG_TIMESTAMP_ANNOTATION,
};

/// Upstream's reasons and messages of a refused class.
pub const REASON_INVALID_PARAMETERS_REF: &str = "InvalidParametersRef";
pub const MESSAGE_NAMESPACE_REQUIRED: &str =
    "Namespace must be specified in ParametersRef for LoadBalancerConfiguration";
pub const REASON_CONFIG_NOT_FOUND: &str = "NotFound";

/// Upstream's message of a class whose LoadBalancerConfiguration does not exist.
pub fn config_not_found(name: &str, namespace: &str) -> String {
    format!("LoadBalancerConfiguration ({name},{namespace}) not found")
}

/// Upstream's error while Gateways still name a deleting class.
pub fn still_referenced(class: &str) -> String {
    format!("unable to delete GatewayClass [{class}], as it is still referenced by Gateways")
}

/// Upstream's gate of the Gateway reconcilers (`config_resolver.go`): a Gateway of `class` is
/// built only once the class is Accepted and, when the class names a LoadBalancerConfiguration
/// (`lbc`, with its default TargetGroupConfiguration `default_tgc`), once the class has recorded
/// their current version; otherwise upstream's error, which the Gateway reports.
pub fn gateway_may_build(
    class: &GatewayClass,
    lbc: Option<&LoadBalancerConfiguration>,
    default_tgc: Option<&TargetGroupConfiguration>,
) -> Result<(), String> {
    let name = class.name_any();
    let accepted = class
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Accepted"))
        .is_some_and(|c| c.status == "True");
    if !accepted {
        return Err(format!(
            "Unable to materialize gateway when gateway class [{name}] is not accepted"
        ));
    }
    let Some(lbc) = lbc else {
        return Ok(());
    };
    let latest = processed_config_version(Some(lbc), default_tgc);
    let stored = class.annotations().get(LAST_PROCESSED_CONFIG_ANNOTATION);
    if stored != Some(&latest) {
        let processed = stored.map(String::as_str).unwrap_or_default();
        return Err(format!(
            "GatewayClass [{name}] hasn't processed latest loadbalancer config. Processed version {processed}, Latest version {latest}"
        ));
    }
    Ok(())
}

/// The class's `status.conditions` with `Accepted` set to `(status, reason, message)` at the
/// class's generation, or `None` when it already says exactly that.
pub fn accepted_conditions(
    class: &GatewayClass,
    status: bool,
    reason: &str,
    message: &str,
    now: &str,
) -> Option<Vec<Value>> {
    let mut conditions: Vec<Value> = class
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .map(|cs| {
            cs.iter()
                .filter_map(|c| serde_json::to_value(c).ok())
                .collect()
        })
        .unwrap_or_default();
    let generation = class.metadata.generation.unwrap_or(0);
    let status = if status { "True" } else { "False" };
    let wanted = json!({
        "type": "Accepted",
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
        "lastTransitionTime": now,
    });
    match conditions
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Accepted"))
    {
        Some(c) => {
            let same = c.get("status").and_then(Value::as_str) == Some(status)
                && c.get("reason").and_then(Value::as_str) == Some(reason)
                && c.get("message").and_then(Value::as_str) == Some(message)
                && c.get("observedGeneration")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
                    == generation;
            if same {
                return None;
            }
            *c = wanted;
        }
        None => conditions.push(wanted),
    }
    Some(conditions)
}

fn now_rfc3339() -> String {
    serde_json::to_value(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::now(),
    ))
    .ok()
    .and_then(|v| v.as_str().map(String::from))
    .unwrap_or_default()
}

async fn set_accepted(
    api: &Api<GatewayClass>,
    class: &GatewayClass,
    status: bool,
    reason: &str,
    message: &str,
) -> Result<(), kube::Error> {
    let Some(conditions) = accepted_conditions(class, status, reason, message, &now_rfc3339())
    else {
        return Ok(());
    };
    let patch = json!({"status": {"conditions": conditions}});
    api.patch_status(
        &class.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map(|_| ())
}

/// Reconciles GatewayClass `name`.
pub(super) async fn reconcile(ctx: &Ctx, name: &str) -> Result<(), GatewayClassError> {
    let Some(class) = ctx.feed.classes.get("", name) else {
        return Ok(());
    };
    if !ctx.feed.handles(&class.spec.controller_name) {
        return Ok(());
    }
    let api: Api<GatewayClass> = Api::all(ctx.client.clone());
    if class.meta().deletion_timestamp.is_some() {
        return delete(ctx, &api, &class).await;
    }
    add_finalizer(&api, class.as_ref(), GATEWAY_CLASS_FINALIZER).await?;
    let Some(pref) = &class.spec.parameters_ref else {
        record_version(&api, &class, String::new()).await?;
        set_accepted(&api, &class, true, "Accepted", "Accepted").await?;
        return Ok(());
    };
    // Read by name as a LoadBalancerConfiguration whatever it names, as upstream; said aloud.
    if let Some(note) = foreign_parameters_ref("parametersRef", &pref.group, &pref.kind, &pref.name)
    {
        let r = reason::UNSUPPORTED_CONFIGURATION;
        ctx.events
            .class
            .warning(&class.object_ref(&()), r, note)
            .await;
    }
    let Some(ns) = &pref.namespace else {
        let r = REASON_INVALID_PARAMETERS_REF;
        set_accepted(&api, &class, false, r, MESSAGE_NAMESPACE_REQUIRED).await?;
        return Ok(());
    };
    let Some(lbc) = ctx.feed.lb_configs.get(ns, &pref.name) else {
        let message = config_not_found(&pref.name, ns);
        set_accepted(&api, &class, false, REASON_CONFIG_NOT_FOUND, &message).await?;
        // Its creation queues the class again.
        return Ok(());
    };
    let tgc = match &lbc.spec.default_target_group_configuration {
        None => None,
        Some(d) => Some(default_tgc(ctx, ns, &d.name)?),
    };
    let version = processed_config_version(Some(lbc.as_ref()), tgc.as_deref());
    record_version(&api, &class, version).await?;
    set_accepted(&api, &class, true, "Accepted", "Accepted").await?;
    Ok(())
}

/// The default TargetGroupConfiguration an LBC names (upstream's `lookUpDefaultTGCByName`).
fn default_tgc(
    ctx: &Ctx,
    ns: &str,
    name: &str,
) -> Result<std::sync::Arc<TargetGroupConfiguration>, GatewayClassError> {
    let tgc = ctx.feed.tg_configs.get(ns, name).ok_or_else(|| {
        GatewayClassError::Config(format!(
            "targetgroupconfigurations.gateway.k8s.aws \"{name}\" not found"
        ))
    })?;
    if tgc.spec.target_reference.is_some() {
        return Err(GatewayClassError::Config(format!(
            "TargetGroupConfiguration \"{name}\" in namespace \"{ns}\" has targetReference set and cannot be used as a defaultTargetGroupConfiguration — a default TGC must not have targetReference"
        )));
    }
    Ok(tgc)
}

/// Upstream's `updateGatewayClassLastProcessedConfig`: the version and the time it was
/// recorded, written only when the version changed.
async fn record_version(
    api: &Api<GatewayClass>,
    class: &GatewayClass,
    version: String,
) -> Result<(), kube::Error> {
    if class.annotations().get(LAST_PROCESSED_CONFIG_ANNOTATION) == Some(&version) {
        return Ok(());
    }
    let secs = k8s_openapi::jiff::Timestamp::now().as_second().to_string();
    let patch = json!({"metadata": {"annotations": {
        LAST_PROCESSED_CONFIG_ANNOTATION: version,
        LAST_PROCESSED_CONFIG_TIMESTAMP_ANNOTATION: secs,
    }}});
    api.patch(
        &class.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map(|_| ())
}

async fn delete(
    ctx: &Ctx,
    api: &Api<GatewayClass>,
    class: &GatewayClass,
) -> Result<(), GatewayClassError> {
    if !class
        .finalizers()
        .iter()
        .any(|f| f == GATEWAY_CLASS_FINALIZER)
    {
        return Ok(());
    }
    let name = class.name_any();
    let used = ctx
        .feed
        .gateways
        .state()
        .iter()
        .any(|gw| gw.spec.gateway_class_name == name);
    if used {
        let message = still_referenced(&name);
        let r = reason::FAILED_REMOVE_FINALIZER;
        ctx.events
            .class
            .warning(&class.object_ref(&()), r, message.clone())
            .await;
        return Err(GatewayClassError::InUse(message));
    }
    remove_finalizer(api, class, GATEWAY_CLASS_FINALIZER).await?;
    Ok(())
}
