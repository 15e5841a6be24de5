//! The Gateway producer of `diff`: for each Gateway of a `gateway.k8s.aws/alb` class (gate
//! `ALBGatewayAPI`) or `gateway.k8s.aws/nlb` class (gate `NLBGatewayAPI`), the writes the Gateway
//! controller would make, in its order: configuration finalizers → Gateway finalizer → add-on
//! annotations → AWS → TargetGroupBindings → Gateway status; a dry-run Gateway's plan annotation
//! instead; a deleted Gateway's teardown (bindings → AWS → finalizer). Inputs are resolved and
//! gathered by the controller's own functions over its own stores ([`super::gateway_objects`]);
//! the model is the controller's, and the AWS side goes through the shared recording deployer,
//! which finds the existing stack by upstream's `gateway.k8s.aws.{alb,nlb}/stack` tag. Route and
//! ListenerSet status and the release of the shared backend security group are not shown.

use std::sync::Arc;

use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::{Gateway, GatewayStatus};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;

use super::groups::{bindings_labeled, kube_write, one, Env};
use super::{Sink, StackDiff, Write};
use crate::controller::gateway::config::{self, Configs};
use crate::controller::gateway::inputs::Owned;
use crate::controller::gateway::kind::{kind, Kind};
use crate::controller::gateway::status;
use crate::controller::gateway::{controller_name, Stores, TARGET_GROUP_NAME_TTL};
use crate::controller::service::EnvReader;
use crate::model::gateway::addons::ActiveAddons;
use crate::model::gateway::listeners::LbKind;
use crate::model::gateway::{
    build_alb_gateway_stack, build_nlb_gateway_stack, GatewayInputs, DRY_RUN_ANNOTATION,
    DRY_RUN_PLAN_ANNOTATION, LOAD_BALANCER_CONFIGURATION_FINALIZER,
};
use crate::model::tags::TagContext;
use crate::model::{ClusterObjects, GroupId, Stack};
use crate::webhook::tg_cache::TgCache;

/// What the Gateway producer reads besides [`Env`].
pub struct GatewayEnv<'a> {
    pub stores: &'a Stores,
    /// Subnets and VPC CIDRs, as the Gateway controllers read them.
    pub reader: &'a EnvReader,
    /// Target groups named by `TargetGroupName` backends (reads through the recorder).
    pub target_groups: &'a TgCache,
    /// From manifests: the Secrets OIDC rule configurations read (the cluster is read by GET).
    pub objs: &'a ClusterObjects,
    /// `--required-secrets-label`: a Secret read from the cluster without it counts as absent.
    pub required_secrets_label: Option<&'a crate::config::RequiredLabel>,
}

impl GatewayEnv<'_> {
    /// A cache for [`GatewayEnv::target_groups`] over `elbv2` (the recorder: reads only).
    pub fn target_group_cache(elbv2: std::sync::Arc<dyn crate::aws::ElbV2>) -> TgCache {
        TgCache::new(elbv2, TARGET_GROUP_NAME_TTL)
    }
}

fn key_of(gw: &Gateway) -> String {
    format!(
        "{}/{}",
        gw.namespace().unwrap_or_else(|| "default".into()),
        gw.name_any()
    )
}

/// A Gateway a Gateway controller would reconcile: with its class and that controller's kind.
pub struct Planned {
    gateway: Arc<Gateway>,
    class: Arc<GatewayClass>,
    lb: LbKind,
}

/// Every Gateway a Gateway controller would reconcile, in `ns/name` order: those of a class of
/// `gateway.k8s.aws/alb` while `alb` (gate `ALBGatewayAPI`) is on, of `gateway.k8s.aws/nlb`
/// while `nlb` (gate `NLBGatewayAPI`) is.
pub fn plan(stores: &Stores, alb: bool, nlb: bool) -> Vec<Planned> {
    let mut gateways = stores.gateways.state();
    gateways.sort_by_key(|g| key_of(g));
    gateways
        .into_iter()
        .filter_map(|gateway| {
            let class = stores.classes.get("", &gateway.spec.gateway_class_name)?;
            let lb = match class.spec.controller_name.as_str() {
                c if c == controller_name(LbKind::Alb) && alb => LbKind::Alb,
                c if c == controller_name(LbKind::Nlb) && nlb => LbKind::Nlb,
                _ => return None,
            };
            Some(Planned { gateway, class, lb })
        })
        .collect()
}

/// Each of `gateways` ([`plan`]) in turn, handed to `sink` as soon as it is computed.
pub async fn diff_gateways(
    env: &Env<'_>,
    genv: &GatewayEnv<'_>,
    gateways: &[Planned],
    sink: &mut Sink<'_>,
) -> std::io::Result<()> {
    for Planned { gateway, class, lb } in gateways {
        let mut d = StackDiff {
            kind: "gateway",
            stack: key_of(gateway),
            writes: Vec::new(),
            error: None,
        };
        if let Err(e) = one_gateway(env, genv, *lb, gateway, class, &mut d.writes).await {
            d.writes.append(&mut env.recorder.take());
            d.error = Some(e);
        }
        sink.stack(d)?;
    }
    Ok(())
}

fn labels(env: &Env<'_>, k: &Kind, gw: &Gateway) -> std::collections::BTreeMap<String, String> {
    let ns = gw.namespace().unwrap_or_else(|| "default".into());
    let group = GroupId::implicit(&ns, &gw.name_any());
    TagContext {
        cfg: &env.cfg.model,
        group: &group,
        prefix: k.prefix,
    }
    .stack_labels()
}

fn finalizer_write(gw: &Gateway, finalizer: &str, add: bool) -> Write {
    super::groups::finalizer_write("Gateway", key_of(gw), finalizer, add)
}

/// A Gateway status as the report shows it: conditions, addresses, listeners' attached routes.
fn status_text(st: &GatewayStatus) -> String {
    let mut parts: Vec<String> = st
        .conditions
        .iter()
        .flatten()
        .map(|c| format!("{}={} ({})", c.type_, c.status, c.reason))
        .collect();
    parts.sort();
    for a in st.addresses.iter().flatten() {
        parts.push(format!("address {}", a.value));
    }
    for l in st.listeners.iter().flatten() {
        let conds: Vec<String> = l
            .conditions
            .iter()
            .map(|c| format!("{}={}", c.type_, c.status))
            .collect();
        parts.push(format!(
            "listener {} routes={} [{}]",
            l.name,
            l.attached_routes,
            conds.join(" ")
        ));
    }
    parts.join("; ")
}

async fn one_gateway(
    env: &Env<'_>,
    genv: &GatewayEnv<'_>,
    lb: LbKind,
    gw: &Gateway,
    class: &GatewayClass,
    writes: &mut Vec<Write>,
) -> Result<(), String> {
    let configs = config::resolve(genv.stores, gw, class)?;
    if env.client.is_some() {
        for lbc in configs.class.iter().chain(&configs.gateway) {
            if !lbc
                .finalizers()
                .iter()
                .any(|f| f == LOAD_BALANCER_CONFIGURATION_FINALIZER)
            {
                writes.push(super::groups::finalizer_write(
                    "LoadBalancerConfiguration",
                    format!("{}/{}", lbc.namespace().unwrap_or_default(), lbc.name_any()),
                    LOAD_BALANCER_CONFIGURATION_FINALIZER,
                    true,
                ));
            }
        }
    }
    let k = &kind(lb);
    if gw.metadata.deletion_timestamp.is_some() {
        return delete_gateway(env, k, gw, &configs, writes).await;
    }
    let mut owned = Owned::gather(genv.stores, lb, &key_of(gw));
    match env.client {
        Some(client) => {
            owned.secrets = read_secrets(client, &owned, genv.required_secrets_label).await?
        }
        None => owned.secrets = genv.objs.secrets.clone(),
    }
    owned.look_up_target_groups(genv.target_groups).await;
    let subnets = genv
        .reader
        .subnets()
        .await
        .map_err(|e| format!("Failed build model due to {e}"))?;
    let existing = match lb {
        LbKind::Alb => None,
        LbKind::Nlb => env
            .deployer
            .existing_nlb_of(k.stack, &key_of(gw))
            .await
            .map_err(|e| format!("Failed build model due to {e}"))?,
    };
    let inputs = GatewayInputs {
        vpc_cidrs: Some(genv.reader.vpc_cidrs.as_slice()),
        existing_load_balancer: existing.as_ref(),
        ..owned.inputs(gw, &configs)
    };
    let built = match lb {
        LbKind::Alb => build_alb_gateway_stack(&inputs, &env.cfg.model, Some(subnets.as_slice())),
        LbKind::Nlb => build_nlb_gateway_stack(&inputs, &env.cfg.model, Some(subnets.as_slice())),
    }
    .map_err(|e| format!("Failed build model due to {e}"))?;
    // ACM discovery is part of upstream's model build (real reads, nothing written).
    let stack = env
        .deployer
        .resolve_certificates(&built.stack)
        .await
        .map_err(|e| format!("Failed build model due to {e}"))?
        .into_owned();
    let has_finalizer = gw.finalizers().iter().any(|f| f == k.finalizer);
    let annotations = gw.annotations();
    if annotations.get(DRY_RUN_ANNOTATION).map(String::as_str) == Some("true") && !has_finalizer {
        // Upstream's dry run: the plan (upstream's stack schema, as the controller writes it)
        // goes into an annotation, nothing is deployed.
        let plan = crate::controller::gateway::plan::text(env.deployer, &stack).await;
        let have = annotations.get(DRY_RUN_PLAN_ANNOTATION);
        if env.client.is_some() && have != Some(&plan) {
            writes.push(kube_write(
                "patch Gateway",
                key_of(gw),
                one(
                    &format!("metadata.annotations.{DRY_RUN_PLAN_ANNOTATION}"),
                    have.cloned(),
                    Some(plan),
                ),
            ));
        }
        return Ok(());
    }
    if env.client.is_some() {
        if let Some(have) = annotations.get(DRY_RUN_PLAN_ANNOTATION) {
            writes.push(kube_write(
                "patch Gateway",
                key_of(gw),
                one(
                    &format!("metadata.annotations.{DRY_RUN_PLAN_ANNOTATION}"),
                    Some(have.clone()),
                    None,
                ),
            ));
        }
        if !has_finalizer {
            writes.push(finalizer_write(gw, k.finalizer, true));
        }
        // Newly enabled add-ons are recorded before the deploy.
        let added = built.addons.keys_not_in(&ActiveAddons::of(gw));
        writes.extend(addon_writes(gw, &added, true));
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
    bindings_labeled(
        client,
        &labels(env, k, gw),
        &env.cfg.namespaces,
        &deployed.target_group_bindings,
        writes,
    )
    .await?;
    if let Some(made) = &deployed.load_balancer {
        let sets_on = genv.stores.listener_sets_on;
        let (_, st) = status::after_deploy(gw, lb, &built, made, sets_on);
        if let Some(st) = st {
            writes.push(kube_write(
                "patch Gateway/status",
                key_of(gw),
                one(
                    "status",
                    gw.status.as_ref().map(status_text),
                    Some(status_text(&st)),
                ),
            ));
        }
    }
    // Removed add-ons are recorded off only after the deploy that removed them.
    let removed = ActiveAddons::of(gw).keys_not_in(&built.addons);
    writes.extend(addon_writes(gw, &removed, false));
    Ok(())
}

/// The Gateway's add-on annotations `keys` set to `"true"` (`on`) or `"false"`.
fn addon_writes(gw: &Gateway, keys: &[&str], on: bool) -> Vec<Write> {
    let after = if on { "true" } else { "false" };
    keys.iter()
        .map(|key| {
            let field = format!("metadata.annotations.{key}");
            let have = gw.annotations().get(*key).cloned();
            kube_write(
                "patch Gateway",
                key_of(gw),
                one(&field, have, Some(after.into())),
            )
        })
        .collect()
}

/// The OIDC Secrets the routes' rule configurations name, one GET each as the controller reads
/// one its watch has not reported (a NotFound, or a Secret without `required`, is left to the
/// model's error).
async fn read_secrets(
    client: &kube::Client,
    owned: &Owned,
    required: Option<&crate::config::RequiredLabel>,
) -> Result<Vec<Secret>, String> {
    let mut out = Vec::new();
    for (ns, name) in crate::controller::gateway::secrets::refs_of(owned) {
        let got =
            crate::controller::ingress::secrets::get_oidc_secret(client, &ns, &name, required)
                .await
                .map_err(|e| format!("Failed build model due to {e}"))?;
        out.extend(got);
    }
    Ok(out)
}

/// A deleted Gateway holding the finalizer: refused while its configuration protects the load
/// balancer; else bindings, then the stack, go, and the finalizer is released.
async fn delete_gateway(
    env: &Env<'_>,
    k: &Kind,
    gw: &Gateway,
    configs: &Configs,
    writes: &mut Vec<Write>,
) -> Result<(), String> {
    let merged = crate::model::gateway::build::merged_config(&configs.inputs(gw));
    if config::deletion_protected(&merged) {
        let (ns, name) = (
            gw.namespace().unwrap_or_else(|| "default".into()),
            gw.name_any(),
        );
        return Err(format!(
            "Failed build model due to Unable to delete gateway {{Namespace:{ns} Name:{name}}} because deletion protection is enabled."
        ));
    }
    if !gw.finalizers().iter().any(|f| f == k.finalizer) {
        return Ok(());
    }
    let stack_id = key_of(gw);
    env.deployer
        .check_deletable_of(k.stack, &stack_id)
        .await
        .map_err(|e| format!("Failed deploy model due to {e}"))?;
    if let Some(client) = env.client {
        let ns = &env.cfg.namespaces;
        bindings_labeled(client, &labels(env, k, gw), ns, &[], writes).await?;
    }
    let empty = Stack {
        stack_id,
        kind: k.stack,
        ..Default::default()
    };
    env.deployer
        .deploy(&empty)
        .await
        .map_err(|e| format!("Failed deploy model due to {e}"))?;
    writes.append(&mut env.recorder.take());
    if env.client.is_some() {
        writes.push(finalizer_write(gw, k.finalizer, false));
    }
    Ok(())
}
