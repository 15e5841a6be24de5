//! The frontend NLB upstream puts in front of an ALB (`enable-frontend-nlb`): its load balancer
//! (resource id `FrontendNlb`), listeners and target groups (`FrontendNlb-tg-*`, type `alb`)
//! carry the group's stack tags. While a stack does not model one, a reconcile of the group
//! sets them aside: adopted as they are, never modified, never deleted. Only the deletion of
//! the whole stack takes them apart (as upstream does), the ALB target deregistered first so
//! that the ALB itself can be deleted.

use super::error::{Context, Result};
use super::tags;
use super::Deployer;
use crate::aws::{self, Tags};
use crate::model::Stack;

/// Resource id of upstream's frontend NLB; its listeners and target groups extend it.
pub const RESOURCE_ID: &str = "FrontendNlb";

/// True for any resource of a frontend NLB (the NLB, `FrontendNlb-ls-*`, `FrontendNlb-tg-*`).
pub fn is_frontend_nlb(t: &Tags) -> bool {
    // Ingress stacks only: the Ingress resource tag, read directly.
    t.get(tags::RESOURCE_TAG).is_some_and(|id| {
        id == RESOURCE_ID
            || id
                .strip_prefix(RESOURCE_ID)
                .is_some_and(|rest| rest.starts_with('-'))
    })
}

/// Removes the frontend-NLB resources from the owned lists unless the stack is being deleted
/// (no load balancer in it); returns how many were set aside.
pub(crate) fn set_aside(
    stack: &Stack,
    lbs: &mut Vec<(aws::LoadBalancer, Tags)>,
    tgs: &mut Vec<(aws::TargetGroup, Tags)>,
) -> usize {
    if stack.load_balancer.is_none() {
        return 0;
    }
    let before = lbs.len() + tgs.len();
    lbs.retain(|(_, t)| !is_frontend_nlb(t));
    tgs.retain(|(_, t)| !is_frontend_nlb(t));
    before - lbs.len() - tgs.len()
}

impl Deployer {
    /// Before a stack deletion: deregisters the ALB targets of `alb`-type target groups, which
    /// AWS requires before the ALB can be deleted.
    pub(crate) async fn release_alb_targets(&self, tgs: &[(aws::TargetGroup, Tags)]) -> Result<()> {
        for (tg, _) in tgs.iter().filter(|(t, _)| t.target_type == "alb") {
            let health = match self.elbv2.describe_target_health(&tg.arn, &[]).await {
                Err(e) if e.is_not_found() => continue,
                other => other.ctx(|| format!("describe targets of {}", tg.arn))?,
            };
            let targets: Vec<aws::TargetDescription> =
                health.into_iter().map(|h| h.target).collect();
            if targets.is_empty() {
                continue;
            }
            match self.elbv2.deregister_targets(&tg.arn, &targets).await {
                Err(e) if !e.is_not_found() => {
                    return Err(e).ctx(|| format!("deregister the ALB from {}", tg.arn));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: &str) -> Tags {
        [(tags::RESOURCE_TAG.to_string(), id.to_string())]
            .into_iter()
            .collect()
    }

    #[test]
    fn frontend_nlb_resources_are_recognised_by_resource_id() {
        for id in [
            "FrontendNlb",
            "FrontendNlb-tg-TCP-80",
            "FrontendNlb-ls-TCP-443",
        ] {
            assert!(is_frontend_nlb(&t(id)), "{id}");
        }
        for id in ["LoadBalancer", "FrontendNlbX", "shop/api-api:80"] {
            assert!(!is_frontend_nlb(&t(id)), "{id}");
        }
        assert!(!is_frontend_nlb(&Tags::new()));
    }
}
