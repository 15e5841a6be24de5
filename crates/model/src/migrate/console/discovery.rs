//! Which Gateways have a plan to compare and where the Ingress plan is
//! (`pkg/ingress2gateway/console/discovery.go`), over the objects read from the cluster: every
//! Gateway with a `gateway.k8s.aws/dry-run-plan` annotation, paired through the `migrated-from`
//! tag on its plan's load balancer with the Ingress holding `alb.ingress.kubernetes.io/dry-run-plan`
//! — `ingress/<ns>/<name>` names it, `ingress-group/<group>` is resolved to the one member of the
//! group (in any namespace) that holds a plan. Errors carry upstream's texts.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use serde_json::Value;

use super::classify::migrated_from_tag_field;
use super::model::{parse_stack, upstream_plan};
use super::ConsoleError;
use crate::migrate::go_quote;
use crate::model::upstream_json::LOAD_BALANCER;

/// Where the Gateway controller writes a dry-run Gateway's plan.
pub const GATEWAY_DRY_RUN_PLAN: &str = crate::model::gateway::DRY_RUN_PLAN_ANNOTATION;
/// Where the Ingress controller writes its plan (gate `IngressPlanAnnotation`).
pub const INGRESS_DRY_RUN_PLAN: &str = crate::annotations::DRY_RUN_PLAN;
/// The IngressGroup an Ingress belongs to.
pub const INGRESS_GROUP_NAME: &str = "alb.ingress.kubernetes.io/group.name";
/// `migrated-from` of a Gateway replacing one Ingress: `ingress/<ns>/<name>`.
pub const MIGRATED_FROM_INGRESS: &str = "ingress/";
/// `migrated-from` of a Gateway replacing an IngressGroup: `ingress-group/<group>`.
pub const MIGRATED_FROM_INGRESS_GROUP: &str = "ingress-group/";

/// What the console reads of the cluster: the metadata of the Gateways (of the namespaces
/// shown) and of every Ingress (groups span namespaces).
#[derive(Debug, Clone, Default)]
pub struct PlanObjects {
    pub gateways: Vec<ObjectMeta>,
    pub ingresses: Vec<ObjectMeta>,
}

/// A Gateway with a plan, and the Ingress plan it is compared with.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GatewayInfo {
    pub name: String,
    pub namespace: String,
    /// Why the Ingress plan could not be found ("" when it was).
    pub error: String,
    /// The `migrated-from` tag.
    pub migrated_from: String,
    pub gateway_plan: String,
    pub ingress_plan: String,
    /// The annotations of the Ingress holding the plan.
    pub ingress_annotations: BTreeMap<String, String>,
}

/// A namespace with Gateways that have a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceInfo {
    pub namespace: String,
    pub gateway_count: usize,
}

fn annotation<'a>(m: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    m.annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

fn namespace(m: &ObjectMeta) -> &str {
    m.namespace.as_deref().unwrap_or_default()
}

fn name(m: &ObjectMeta) -> &str {
    m.name.as_deref().unwrap_or_default()
}

/// The namespaces holding Gateways with a plan, by name, with how many.
pub fn discover_namespaces(objs: &PlanObjects) -> Vec<NamespaceInfo> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for gw in &objs.gateways {
        if annotation(gw, GATEWAY_DRY_RUN_PLAN).is_some() {
            *counts.entry(namespace(gw)).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .map(|(ns, gateway_count)| NamespaceInfo {
            namespace: ns.to_string(),
            gateway_count,
        })
        .collect()
}

/// The Gateways of `ns` with a plan (by name), each with its Ingress plan resolved.
pub fn discover_gateways(objs: &PlanObjects, ns: &str) -> Vec<GatewayInfo> {
    let mut gws: Vec<&ObjectMeta> = objs
        .gateways
        .iter()
        .filter(|g| namespace(g) == ns)
        .collect();
    gws.sort_by(|a, b| name(a).cmp(name(b)));
    gws.into_iter()
        .filter_map(|g| {
            annotation(g, GATEWAY_DRY_RUN_PLAN).map(|plan| resolve_gateway_info(objs, g, plan))
        })
        .collect()
}

/// One Gateway with its Ingress plan resolved.
pub fn load_gateway_info(
    objs: &PlanObjects,
    ns: &str,
    gateway: &str,
) -> Result<GatewayInfo, ConsoleError> {
    let gw = objs
        .gateways
        .iter()
        .find(|g| namespace(g) == ns && name(g) == gateway)
        .ok_or_else(|| {
            ConsoleError::NotFound(format!(
                "failed to get Gateway {ns}/{gateway}: gateways.gateway.networking.k8s.io {} not found",
                go_quote(gateway)
            ))
        })?;
    let plan = annotation(gw, GATEWAY_DRY_RUN_PLAN).ok_or_else(|| {
        ConsoleError::NotFound(format!(
            "Gateway {ns}/{gateway} does not have a dry-run-plan annotation"
        ))
    })?;
    Ok(resolve_gateway_info(objs, gw, plan))
}

fn resolve_gateway_info(objs: &PlanObjects, gw: &ObjectMeta, plan: &str) -> GatewayInfo {
    let plan = upstream_plan(plan);
    let mut info = GatewayInfo {
        name: name(gw).to_string(),
        namespace: namespace(gw).to_string(),
        ..Default::default()
    };
    let tag = read_migrated_from_tag(&plan);
    info.gateway_plan = plan;
    if tag.is_empty() {
        info.error = "could not determine ingress plan holder: no migrated-from tag found on LoadBalancer in gateway model".into();
        return info;
    }
    info.migrated_from = tag.clone();
    let holder = match resolve_plan_holder(&objs.ingresses, &tag) {
        Ok(h) => h,
        Err(e) => {
            info.error = e.to_string();
            return info;
        }
    };
    match read_ingress_plan(&objs.ingresses, &holder) {
        Ok((plan, annotations)) => {
            info.ingress_plan = upstream_plan(&plan);
            info.ingress_annotations = annotations;
        }
        Err(e) => info.error = format!("failed to read ingress plan from {holder}: {e}"),
    }
    info
}

/// `ns/name` of the Ingress holding the plan the `migrated-from` tag points at.
pub fn resolve_plan_holder(ingresses: &[ObjectMeta], tag: &str) -> Result<String, ConsoleError> {
    if let Some(r) = tag.strip_prefix(MIGRATED_FROM_INGRESS) {
        return Ok(r.to_string());
    }
    let Some(group) = tag.strip_prefix(MIGRATED_FROM_INGRESS_GROUP) else {
        return Err(ConsoleError::PlanHolder(format!(
            "unrecognized migrated-from tag {}: expected prefix {} or {}",
            go_quote(tag),
            go_quote(MIGRATED_FROM_INGRESS),
            go_quote(MIGRATED_FROM_INGRESS_GROUP)
        )));
    };
    if group.is_empty() {
        return Err(ConsoleError::PlanHolder(
            "migrated-from tag carries empty ingress-group name".into(),
        ));
    }
    let mut holders: Vec<String> = ingresses
        .iter()
        .filter(|i| {
            i.annotations
                .as_ref()
                .and_then(|a| a.get(INGRESS_GROUP_NAME))
                .map(String::as_str)
                == Some(group)
        })
        .filter(|i| annotation(i, INGRESS_DRY_RUN_PLAN).is_some())
        .map(|i| format!("{}/{}", namespace(i), name(i)))
        .collect();
    holders.sort();
    match holders.len() {
        0 => Err(ConsoleError::PlanHolder(format!(
            "no ingress in group {} carries a dry-run-plan annotation; the ingress controller has not yet reconciled the group, or the IngressPlanAnnotation feature gate is disabled",
            go_quote(group)
        ))),
        1 => Ok(holders.remove(0)),
        _ => Err(ConsoleError::PlanHolder(format!(
            "multiple ingresses in group {} carry a dry-run-plan annotation: {}; this usually means a stale annotation was left behind after group membership changed — manually clear the annotation from all but one member",
            go_quote(group),
            holders.join(", ")
        ))),
    }
}

/// The plan and annotations of the Ingress `ns/name`.
fn read_ingress_plan(
    ingresses: &[ObjectMeta],
    reference: &str,
) -> Result<(String, BTreeMap<String, String>), ConsoleError> {
    let (ns, n) = parse_namespaced_name(reference)?;
    let ing = ingresses
        .iter()
        .find(|i| namespace(i) == ns && name(i) == n)
        .ok_or_else(|| {
            ConsoleError::NotFound(format!(
                "failed to get Ingress {reference}: ingresses.networking.k8s.io {} not found",
                go_quote(&n)
            ))
        })?;
    let plan = annotation(ing, INGRESS_DRY_RUN_PLAN).ok_or_else(|| {
        ConsoleError::NotFound(format!(
            "Ingress {reference} does not have a dry-run-plan annotation"
        ))
    })?;
    Ok((
        plan.to_string(),
        ing.annotations.clone().unwrap_or_default(),
    ))
}

/// Splits `namespace/name` at the first `/` (both parts non-empty).
pub fn parse_namespaced_name(reference: &str) -> Result<(String, String), ConsoleError> {
    match reference.find('/') {
        Some(i) if i > 0 && i < reference.len() - 1 => {
            Ok((reference[..i].to_string(), reference[i + 1..].to_string()))
        }
        _ => Err(ConsoleError::NamespacedName(reference.to_string())),
    }
}

/// The `migrated-from` tag of the plan's load balancer ("" when the plan does not parse or has
/// none).
pub fn read_migrated_from_tag(plan: &str) -> String {
    let Ok(tree) = parse_stack(plan) else {
        return String::new();
    };
    let field = migrated_from_tag_field();
    tree.get(LOAD_BALANCER)
        .into_iter()
        .flat_map(|lbs| lbs.values())
        .filter_map(|fields| fields.get(&field).and_then(Value::as_str))
        .find(|t| !t.is_empty())
        .unwrap_or_default()
        .to_string()
}
