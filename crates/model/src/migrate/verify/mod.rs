//! `migrate --verify`: for every generated Gateway, the ALB stack the Ingress controller builds
//! from the Ingresses it replaces and the one the Gateway controller builds from the generated
//! objects — both with the builders `plan` uses — then every request `request` derives from
//! either stack's rules routed through both as ALB routes it (`eval`). A request answered
//! differently (another backend Service port or weight, redirect location, fixed response or
//! authentication) is a difference; so is a Gateway whose stack cannot be compared (a build
//! failure, a group the Ingress controller forms otherwise). The settings of the load balancer,
//! listeners and target groups are compared too and every difference listed (`attributes`); they
//! do not fail the check, since the controllers' defaults differ (health checks) by design.

pub mod attributes;
pub mod eval;
pub mod glob;
pub mod request;
pub mod stacks;

use std::fmt::Write;

use k8s_openapi::api::core::v1::Service;
use serde::Serialize;

use self::eval::{Alb, Evaluation};
use self::request::{derive_requests, Request};
use super::{InputResources, MigrateError, OutputResources};
use crate::model::{ModelConfig, Stack};

/// A request with the answers of both stacks: a difference when they disagree (`differs`).
/// The report keeps the differences only; the migration console shows every request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequestDifference {
    pub request: Request,
    pub ingress: Evaluation,
    pub gateway: Evaluation,
}

impl RequestDifference {
    /// Whether the two stacks answer the request differently.
    pub fn differs(&self) -> bool {
        self.ingress.outcome != self.gateway.outcome
    }
}

/// A setting that differs (`ingress`/`gateway` as shown: `(unset)` when absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttributeDifference {
    /// `load balancer`, `listener <port>` or `target group <ns/svc:port>`.
    pub scope: String,
    pub field: String,
    pub ingress: String,
    pub gateway: String,
}

/// The check of one generated Gateway.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupVerdict {
    /// `Ingress ns/name` or `IngressGroup name`.
    pub label: String,
    /// `ns/name` of the Gateway.
    pub gateway: String,
    /// Why the stacks could not be compared.
    pub problem: Option<String>,
    /// What route status would report (refused attachments, left-out backends).
    pub notes: Vec<String>,
    /// How many requests were compared.
    pub requests: usize,
    pub differences: Vec<RequestDifference>,
    pub attributes: Vec<AttributeDifference>,
}

impl GroupVerdict {
    /// Requests routed differently, or no comparison possible.
    pub fn failed(&self) -> bool {
        self.problem.is_some() || !self.differences.is_empty()
    }
}

/// The whole check.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct VerifyReport {
    pub groups: Vec<GroupVerdict>,
}

impl VerifyReport {
    pub fn failed(&self) -> bool {
        self.groups.iter().any(GroupVerdict::failed)
    }

    /// The report as `--verify` prints it.
    pub fn render(&self) -> String {
        let mut t = String::new();
        for g in &self.groups {
            let _ = write!(t, "verify: {} -> Gateway {}: ", g.label, g.gateway);
            match &g.problem {
                Some(p) => {
                    let _ = writeln!(t, "NOT COMPARED: {p}");
                }
                None => {
                    let _ = writeln!(
                        t,
                        "{} requests, {} routed differently",
                        g.requests,
                        g.differences.len()
                    );
                }
            }
            for n in &g.notes {
                let _ = writeln!(t, "  route status: {n}");
            }
            for d in &g.differences {
                let _ = writeln!(t, "  {}", d.request);
                let _ = writeln!(
                    t,
                    "    Ingress: {}  [{}]",
                    d.ingress.outcome, d.ingress.matched
                );
                let _ = writeln!(
                    t,
                    "    Gateway: {}  [{}]",
                    d.gateway.outcome, d.gateway.matched
                );
            }
            if !g.attributes.is_empty() {
                let _ = writeln!(t, "  settings that differ:");
                for a in &g.attributes {
                    let _ = writeln!(
                        t,
                        "    {} {}: Ingress {}, Gateway {}",
                        a.scope, a.field, a.ingress, a.gateway
                    );
                }
            }
        }
        let failed = self.groups.iter().filter(|g| g.failed()).count();
        let _ = writeln!(
            t,
            "verify: {} Gateway(s) checked, {} with requests routed differently or not compared",
            self.groups.len(),
            failed
        );
        t
    }
}

/// The controller's settings under default flags (what `plan` runs with).
pub fn default_model_config() -> Result<ModelConfig, MigrateError> {
    crate::plan::PlanArgs::from_flags(Vec::<String>::new())
        .map_err(|e| MigrateError::Verify(e.to_string()))?
        .model_config()
        .map_err(|e| MigrateError::Verify(format!("{e:#}")))
}

/// Every derived request through both stacks: how many, and those answered differently.
pub fn compare_stacks(
    ingress: &Stack,
    gateway: &Stack,
    services: &[Service],
) -> (usize, Vec<RequestDifference>) {
    compare_albs(&Alb::new(ingress, services), &Alb::new(gateway, services))
}

/// [`compare_stacks`] for ALBs made otherwise (from dry-run plans, or from the rules ELBv2
/// describes, with [`Alb::with_backends`]).
pub fn compare_albs(ingress: &Alb, gateway: &Alb) -> (usize, Vec<RequestDifference>) {
    let all = route_all(ingress, gateway);
    let n = all.len();
    (
        n,
        all.into_iter().filter(RequestDifference::differs).collect(),
    )
}

/// Every request derived from the rules of both ALBs, with the answer of each (alike or not),
/// in the order of the requests.
pub fn route_all(ingress: &Alb, gateway: &Alb) -> Vec<RequestDifference> {
    derive_requests(&[ingress.stack(), gateway.stack()])
        .into_iter()
        .map(|r| RequestDifference {
            ingress: ingress.evaluate(&r),
            gateway: gateway.evaluate(&r),
            request: r,
        })
        .collect()
}

/// Checks every Gateway of `output` against the Ingresses of `input` (namespaces defaulted).
pub fn verify(
    input: &InputResources,
    output: &OutputResources,
    cfg: &ModelConfig,
) -> Result<VerifyReport, MigrateError> {
    let objs = stacks::objects(input, output, cfg)?;
    let mut report = VerifyReport::default();
    for g in &output.groups {
        let mut verdict = GroupVerdict {
            label: g.label(),
            gateway: g.gateway_key(),
            problem: None,
            notes: Vec::new(),
            requests: 0,
            differences: Vec::new(),
            attributes: Vec::new(),
        };
        let ingress = stacks::ingress_stack(&objs, cfg, g);
        let gateway = stacks::gateway_stack(&objs, cfg, g);
        match (ingress, gateway) {
            (Ok(i), Ok((gw, notes))) => {
                verdict.notes = notes;
                let (n, d) = compare_stacks(&i, &gw, &objs.cluster.services);
                verdict.requests = n;
                verdict.differences = d;
                verdict.attributes = attributes::compare(&i, &gw, &objs.cluster.services);
            }
            (Err(e), _) => verdict.problem = Some(e),
            (Ok(_), Err(e)) => verdict.problem = Some(e),
        }
        report.groups.push(verdict);
    }
    Ok(report)
}

#[cfg(test)]
mod tests;
