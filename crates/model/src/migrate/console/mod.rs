//! `migrate --console`: upstream's migration console (`pkg/ingress2gateway/console`) compares
//! the Ingress controller's dry-run plan of an IngressGroup with the Gateway controller's plan of
//! the Gateway that replaces it, field by field; this build's console shows that and, for the
//! same pair, `--verify`'s table: every request derived from either stack's rules routed
//! through both, each answered differently marked.
//!
//! The pure half: the plans parsed and flattened (`model`), resources matched across them
//! (`correlate`), the field diff (`differ`) and its known migration artifacts (`classify`), which
//! Gateways to show and where their Ingress plan is (`discovery`), a plan's routing read back
//! into the model for the evaluator (`routing`), and the reports of Gateways translated from
//! files (`files`: both stacks built as `--verify` builds them, rendered as the controllers
//! would write their plans). The server, the cluster reads and the page live in the binary.

pub mod classify;
pub mod correlate;
pub mod differ;
pub mod discovery;
pub mod entry;
pub mod files;
pub mod model;
pub mod routing;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Service;

use self::classify::build_user_specified_fields;
use self::differ::{diff_with, DiffResult, DiffSummary};
use self::discovery::{
    GatewayInfo, NamespaceInfo, MIGRATED_FROM_INGRESS, MIGRATED_FROM_INGRESS_GROUP,
};
use self::model::parse_stack;
use self::routing::parse_routing;
use super::go_quote;
use super::verify::{route_all, GroupVerdict, RequestDifference};

/// Errors of the console's pure half; the texts are upstream's where it has them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConsoleError {
    #[error("empty stack JSON")]
    EmptyStack,
    #[error("invalid stack JSON: {0}")]
    InvalidStack(String),
    #[error("failed to parse resource {kind}/{id}: {error}")]
    InvalidResource {
        kind: String,
        id: String,
        error: String,
    },
    #[error("invalid namespaced name: {}", go_quote(.0))]
    NamespacedName(String),
    /// The Ingress holding a Gateway's source plan cannot be told.
    #[error("{0}")]
    PlanHolder(String),
    /// A Gateway or Ingress asked for is not there, or holds no plan.
    #[error("{0}")]
    NotFound(String),
    /// A plan whose routing the evaluator cannot read.
    #[error("{0}")]
    Routing(String),
}

/// The field diff of a Gateway, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum DiffState {
    Ready(DiffResult),
    /// No Ingress plan to compare with (the report's `info.error` says why).
    NoIngressPlan,
    /// A plan that does not parse (upstream's text).
    Invalid(String),
}

/// Everything the console shows of one Gateway.
#[derive(Debug, Clone)]
pub struct GatewayReport {
    pub info: GatewayInfo,
    pub diff: DiffState,
    /// `--verify`'s verdict: requests compared, those answered differently, (files) the
    /// settings that differ and what route status would report.
    pub verdict: GroupVerdict,
    /// Every request compared with both answers, in request order.
    pub requests: Vec<RequestDifference>,
}

impl GatewayReport {
    /// Upstream's per-status counts (zero without a diff).
    pub fn summary(&self) -> DiffSummary {
        match &self.diff {
            DiffState::Ready(d) => d.summary,
            _ => DiffSummary::default(),
        }
    }

    /// `ns/name` of the Gateway.
    pub fn key(&self) -> String {
        format!("{}/{}", self.info.namespace, self.info.name)
    }
}

/// Upstream's diff of the two plans of `info` (`services` resolve the named ports target groups
/// are matched by).
pub fn diff_plans(info: &GatewayInfo, services: &[Service]) -> DiffState {
    if info.ingress_plan.is_empty() || info.gateway_plan.is_empty() {
        return DiffState::NoIngressPlan;
    }
    let ingress = match parse_stack(&info.ingress_plan) {
        Ok(t) => t,
        Err(e) => return DiffState::Invalid(format!("failed to parse ingress plan: {e}")),
    };
    let gateway = match parse_stack(&info.gateway_plan) {
        Ok(t) => t,
        Err(e) => return DiffState::Invalid(format!("failed to parse gateway plan: {e}")),
    };
    DiffState::Ready(diff_with(
        &ingress,
        &gateway,
        &build_user_specified_fields(&info.ingress_annotations),
        services,
    ))
}

/// How the verdict names what the Gateway replaces, from its `migrated-from` tag.
pub fn source_label(migrated_from: &str) -> String {
    if let Some(r) = migrated_from.strip_prefix(MIGRATED_FROM_INGRESS) {
        format!("Ingress {r}")
    } else if let Some(g) = migrated_from.strip_prefix(MIGRATED_FROM_INGRESS_GROUP) {
        format!("IngressGroup {g}")
    } else if migrated_from.is_empty() {
        "(source unknown)".into()
    } else {
        migrated_from.to_string()
    }
}

fn empty_verdict(label: String, gateway: String) -> GroupVerdict {
    GroupVerdict {
        label,
        gateway,
        problem: None,
        notes: Vec::new(),
        requests: 0,
        differences: Vec::new(),
        attributes: Vec::new(),
    }
}

/// The report of a Gateway whose plans were read from the cluster: the field diff, and every
/// derived request routed through both plans (`services` resolve named ports).
pub fn plan_report(info: GatewayInfo, services: &[Service]) -> GatewayReport {
    let mut verdict = empty_verdict(
        source_label(&info.migrated_from),
        format!("{}/{}", info.namespace, info.name),
    );
    let mut requests = Vec::new();
    if !info.error.is_empty() {
        verdict.problem = Some(info.error.clone());
    } else {
        match (
            parse_routing(&info.ingress_plan),
            parse_routing(&info.gateway_plan),
        ) {
            (Ok(i), Ok(g)) => requests = route_all(&i.alb(services), &g.alb(services)),
            (Err(e), _) => {
                verdict.problem = Some(format!("the Ingress plan cannot be routed: {e}"))
            }
            (_, Err(e)) => {
                verdict.problem = Some(format!("the Gateway plan cannot be routed: {e}"))
            }
        }
    }
    finish(info, verdict, requests, services)
}

/// The report with `requests` counted into the verdict.
pub(crate) fn finish(
    info: GatewayInfo,
    mut verdict: GroupVerdict,
    requests: Vec<RequestDifference>,
    services: &[Service],
) -> GatewayReport {
    verdict.requests = requests.len();
    verdict.differences = requests.iter().filter(|r| r.differs()).cloned().collect();
    GatewayReport {
        diff: diff_plans(&info, services),
        info,
        verdict,
        requests,
    }
}

/// The namespaces of `reports`, by name, with how many Gateways each.
pub fn namespaces_of(reports: &[GatewayReport]) -> Vec<NamespaceInfo> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in reports {
        *counts.entry(r.info.namespace.as_str()).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(ns, gateway_count)| NamespaceInfo {
            namespace: ns.to_string(),
            gateway_count,
        })
        .collect()
}

/// The namespaces whose Services the plans of `infos` need (bindings naming a port by name).
pub fn named_port_namespaces(infos: &[GatewayInfo]) -> BTreeSet<String> {
    infos
        .iter()
        .flat_map(|i| [&i.ingress_plan, &i.gateway_plan])
        .filter(|p| !p.is_empty())
        .filter_map(|p| parse_routing(p).ok())
        .flat_map(|r| r.named_port_namespaces())
        .collect()
}

#[cfg(test)]
mod tests;
