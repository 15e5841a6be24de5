//! Both stacks of one migrated group, built by the builders `plan` uses: the Ingress stack
//! from the input (the chart's IngressClass when the input has none of `--ingress-class`'s
//! name, placeholder node ports, placeholder OIDC Secrets), the Gateway stack from the written
//! documents read back as `plan` reads manifests, after the defaults the API server would apply
//! to them (an HTTPRoute without `rules` gets the CRD's default rule: `PathPrefix /`, no backend).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use k8s_openapi::api::core::v1::Secret;
use serde_json::{json, Value};

use super::super::objects::MigratedGateway;
use super::super::writer::all_documents;
use super::super::{InputResources, MigrateError, OutputResources};
use crate::model::gateway::{build_alb_gateway_stack, GatewayBuild, GatewayInputs};
use crate::model::{self, BuildEnv, ClusterObjects, GroupId, ModelConfig, Stack};
use crate::plan::{
    accept_rule_configs, add_chart_ingress_class, placeholder_node_ports, GatewayManifests,
};

/// What both builders read.
pub struct Objects {
    pub cluster: ClusterObjects,
    pub(crate) gateways: GatewayManifests,
}

/// The placeholder both stacks read OIDC client credentials from (the input holds no Secret).
const PLACEHOLDER_CREDENTIAL: &str = "migrate-verify-placeholder";

/// The objects of both sides.
pub fn objects(
    input: &InputResources,
    output: &OutputResources,
    cfg: &ModelConfig,
) -> Result<Objects, MigrateError> {
    objects_from_documents(input, all_documents(output), cfg)
}

/// [`objects`] with the Gateway side read from `documents` (the generated objects as written,
/// possibly edited since) rather than from a translation.
pub fn objects_from_documents(
    input: &InputResources,
    documents: Vec<Value>,
    cfg: &ModelConfig,
) -> Result<Objects, MigrateError> {
    let mut cluster = ClusterObjects {
        ingresses: input.ingresses.clone(),
        services: input.services.clone(),
        ingress_classes: input.ingress_classes.clone(),
        ingress_class_params: input.ingress_class_params.clone(),
        namespaces: Vec::new(),
        secrets: Vec::new(),
    };
    add_chart_ingress_class(&mut cluster, &cfg.ingress_class);
    placeholder_node_ports(&mut cluster);
    let metas = cluster
        .ingresses
        .iter()
        .map(|i| &i.metadata)
        .chain(cluster.services.iter().map(|s| &s.metadata));
    let refs = model::oidc::secret_refs(metas);
    cluster.secrets = refs
        .into_iter()
        .map(|(ns, name)| placeholder_secret(&ns, &name))
        .collect();
    let mut gateways = GatewayManifests::default();
    for mut doc in documents {
        admit(&mut doc);
        gateways.take(&doc, Path::new("(generated)")).map_err(|e| {
            MigrateError::Verify(format!("reading the generated objects back: {e:#}"))
        })?;
    }
    Ok(Objects { cluster, gateways })
}

fn placeholder_secret(namespace: &str, name: &str) -> Secret {
    let mut s = Secret::default();
    s.metadata.name = Some(name.to_string());
    s.metadata.namespace = Some(namespace.to_string());
    s.string_data = Some(BTreeMap::from([
        ("clientID".to_string(), PLACEHOLDER_CREDENTIAL.to_string()),
        (
            "clientSecret".to_string(),
            PLACEHOLDER_CREDENTIAL.to_string(),
        ),
    ]));
    s
}

/// The API server's defaulting of what `migrate` writes: an HTTPRoute without `rules` gets the
/// CRD's default rule.
pub fn admit(doc: &mut Value) {
    if doc.get("kind").and_then(Value::as_str) != Some("HTTPRoute") {
        return;
    }
    let Some(spec) = doc.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if !spec.contains_key("rules") {
        spec.insert(
            "rules".into(),
            json!([{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}]),
        );
    }
}

/// The Ingress controller's stack of the group the Gateway stands for; `Err` says why there is
/// none to compare with.
pub fn ingress_stack(
    objs: &Objects,
    cfg: &ModelConfig,
    g: &MigratedGateway,
) -> Result<Stack, String> {
    let (groups, excluded) = model::load_groups(&objs.cluster, &cfg.ingress_class);
    let id = if g.explicit {
        GroupId::explicit(&g.group)
    } else {
        GroupId::implicit(&g.namespace, &g.group)
    };
    let wanted: BTreeSet<&String> = g.members.iter().collect();
    let Some(group) = groups.get(&id) else {
        if let Some(e) = excluded.iter().find(|e| wanted.contains(&e.ingress)) {
            return Err(format!(
                "the Ingress controller leaves {} out of every group: {}",
                e.ingress, e.error
            ));
        }
        let elsewhere = groups
            .values()
            .find(|ig| ig.members.iter().any(|m| wanted.contains(&m.key())));
        return Err(match elsewhere {
            Some(other) => format!(
                "the Ingress controller puts these Ingresses in group {} (IngressClassParams spec.group?), not in one of their own",
                other.id.as_string()
            ),
            None => format!(
                "the Ingress controller does not handle these Ingresses (not of IngressClass {:?} or its controller ingress.k8s.aws/alb)",
                cfg.ingress_class
            ),
        });
    };
    let members: BTreeSet<String> = group.members.iter().map(|m| m.key()).collect();
    let translated: BTreeSet<String> = g.members.iter().cloned().collect();
    if members != translated {
        return Err(format!(
            "the Ingress controller's group {} has members {:?}, the Gateway replaces {:?}",
            id.as_string(),
            members,
            translated
        ));
    }
    model::build_stack(group, &objs.cluster, cfg, &BuildEnv::default())
        .map_err(|e| format!("the Ingresses do not build: {e}"))
}

/// A made-up ARN for an existing target group the routes name (no AWS to look it up); its
/// name part is what both stacks are compared by.
fn target_group_arn(name: &str) -> String {
    format!("arn:aws:elasticloadbalancing:us-east-1:000000000000:targetgroup/{name}/migrate-verify")
}

/// The Gateway controller's stack of the generated Gateway, with what route status would
/// report.
pub fn gateway_stack(
    objs: &Objects,
    cfg: &ModelConfig,
    g: &MigratedGateway,
) -> Result<(Stack, Vec<String>), String> {
    let m = &objs.gateways;
    let gw = m
        .gateways
        .iter()
        .find(|gw| {
            gw.metadata.namespace.as_deref() == Some(g.namespace.as_str())
                && gw.metadata.name.as_deref() == Some(g.gateway.as_str())
        })
        .ok_or_else(|| {
            format!(
                "Gateway {} is not among the generated objects",
                g.gateway_key()
            )
        })?;
    let gateway_config = gw
        .spec
        .infrastructure
        .as_ref()
        .and_then(|i| i.parameters_ref.as_ref())
        .and_then(|p| m.lb_config(Some(g.namespace.as_str()), &p.name));
    let mut arns: BTreeMap<String, Result<String, String>> = BTreeMap::new();
    for route in &m.http_routes {
        for rule in route.spec.rules.iter().flatten() {
            for b in rule.backend_refs.iter().flatten() {
                if b.kind.as_deref() == Some(super::super::TARGET_GROUP_NAME_BACKEND_KIND) {
                    arns.insert(b.name.clone(), Ok(target_group_arn(&b.name)));
                }
            }
        }
    }
    let rule_configs = accept_rule_configs(&m.rule_configs, &objs.cluster);
    let inputs = GatewayInputs {
        gateway: gw,
        class_config: None,
        gateway_config,
        http_routes: &m.http_routes,
        grpc_routes: &m.grpc_routes,
        services: &objs.cluster.services,
        namespaces: &objs.cluster.namespaces,
        tg_configs: &m.tg_configs,
        reference_grants: &m.reference_grants,
        rule_configs: &rule_configs,
        secrets: &objs.cluster.secrets,
        gateways: &m.gateways,
        target_group_arns: &arns,
        ..GatewayInputs::new(gw)
    };
    let built: GatewayBuild = build_alb_gateway_stack(&inputs, cfg, None)
        .map_err(|e| format!("the Gateway does not build: {e}"))?;
    let mut notes: Vec<String> = built
        .attachment
        .refusals
        .iter()
        .map(|r| {
            format!(
                "{} {} refused: {}: {}",
                r.kind.as_str(),
                r.route,
                r.reason,
                r.message
            )
        })
        .collect();
    notes.extend(built.route_problems.iter().map(|p| {
        format!(
            "{} {}/{}: {}: {}",
            p.route.kind.as_str(),
            p.route.namespace,
            p.route.name,
            p.reason,
            p.message
        )
    }));
    Ok((built.stack, notes))
}
