//! What upstream's model builder resolves itself and our model leaves to the deployer, read for
//! a dry-run plan (`model::upstream_json`): the load balancer's subnets (as the deploy will find
//! them), the ids of the security groups named by name, and the shared backend security group.
//! One place for the Ingress and the Gateway plans; a fact that cannot be read is left as the
//! model has it (logged), as upstream's plan never fails its reconcile.

use super::Deployer;
use crate::model::upstream_json::PlanFacts;
use crate::model::Stack;

/// How a plan learns the shared backend security group's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendSgInPlan {
    /// Found or created, as upstream's Ingress builder does (the Ingress plan is written beside
    /// a real deploy, which uses it next); a configured id is shown by the model itself.
    FindOrCreate,
    /// Read only, as a Gateway dry run creates nothing: `""` while it does not exist.
    ReadOnly,
}

impl Deployer {
    /// The facts of `stack`'s dry-run plan.
    pub async fn plan_facts(&self, stack: &Stack, backend: BackendSgInPlan) -> PlanFacts {
        let backend_sg = match (&stack.backend_security_group, backend) {
            (Some(b), BackendSgInPlan::FindOrCreate) if b.group_id.is_none() => {
                self.backend_sg(b).await.map(Some)
            }
            (Some(b), BackendSgInPlan::ReadOnly) => self.planned_backend_sg(b).await,
            _ => Ok(None),
        }
        .unwrap_or_else(|error| {
            tracing::warn!(%error, "dry-run plan: cannot resolve the backend security group");
            None
        });
        let subnets = self.planned_subnets(stack).await.unwrap_or_else(|error| {
            tracing::warn!(%error, "dry-run plan: cannot resolve the load balancer's subnets");
            None
        });
        let security_groups = match &stack.load_balancer {
            Some(lb) if !lb.security_group_names_or_ids.is_empty() => {
                match self.planned_security_groups(lb).await {
                    Ok(ids) => Some(ids),
                    Err(error) => {
                        tracing::warn!(%error, "dry-run plan: cannot resolve the security groups");
                        None
                    }
                }
            }
            _ => None,
        };
        PlanFacts {
            backend_sg,
            subnets,
            security_groups,
        }
    }
}
