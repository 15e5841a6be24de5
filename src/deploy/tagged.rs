//! Feature gate `EnableRGTAPI`: the load balancers and target groups of a stack found through
//! the Resource Groups Tagging API, as upstream's tagging manager does under the gate: one
//! `GetResources` per tag filter (the stack tags with the current cluster key, then with the
//! legacy one), then one Describe per ARN found, instead of describing every load balancer or
//! target group of the account and reading their tags 20 ARNs at a time.
//!
//! Two departures from upstream, both for the index's lag behind AWS: a resource it lists that
//! Describe no longer finds was just deleted and is skipped (upstream fails the reconcile until
//! the index catches up), and the result is kept to the cluster's VPC as the ELBv2 lookups keep
//! it, so which resources a stack owns does not depend on the gate.

use std::collections::BTreeMap;

use super::error::{Context, Result};
use super::tags::{self, CLUSTER_TAG, LEGACY_CLUSTER_TAG};
use super::Deployer;
use crate::aws::{
    self, LoadBalancerQuery, Tags, TargetGroupQuery, RESOURCE_TYPE_LOAD_BALANCER,
    RESOURCE_TYPE_TARGET_GROUP,
};
use crate::model::StackKind;

impl Deployer {
    /// ARN → tags of the resources of `resource_type` carrying the stack's tags; `None` when the
    /// deployer has no tagging client (gate off).
    async fn tagged_resources(
        &self,
        resource_type: &str,
        kind: StackKind,
        stack_id: &str,
    ) -> Result<Option<BTreeMap<String, Tags>>> {
        let Some(rgt) = &self.tagging else {
            return Ok(None);
        };
        let mut found = BTreeMap::new();
        for cluster_key in [CLUSTER_TAG, LEGACY_CLUSTER_TAG] {
            let filter = Tags::from([
                (cluster_key.to_string(), self.cluster.clone()),
                (kind.stack_tag(), stack_id.to_string()),
            ]);
            let listed = rgt
                .get_resources(resource_type, &filter)
                .await
                .ctx(|| format!("get {resource_type} resources of stack {stack_id}"))?;
            for r in listed {
                if tags::is_owned(&r.tags, &self.cluster, kind, stack_id) {
                    found.entry(r.arn).or_insert(r.tags);
                }
            }
        }
        Ok(Some(found))
    }

    /// The stack's load balancers in the VPC with their tags, found by tag (gate `EnableRGTAPI`);
    /// `None` when the gate is off.
    pub(crate) async fn tagged_lbs(
        &self,
        kind: StackKind,
        stack_id: &str,
    ) -> Result<Option<Vec<(aws::LoadBalancer, Tags)>>> {
        let Some(found) = self
            .tagged_resources(RESOURCE_TYPE_LOAD_BALANCER, kind, stack_id)
            .await?
        else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for (arn, t) in found {
            let q = LoadBalancerQuery {
                arns: vec![arn.clone()],
                ..Default::default()
            };
            match self.elbv2.describe_load_balancers(&q).await {
                Ok(lbs) => out.extend(
                    lbs.into_iter()
                        .filter(|l| l.vpc_id == self.vpc_id)
                        .map(|l| (l, t.clone())),
                ),
                // Deleted since the index listed it.
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e).ctx(|| format!("describe load balancer {arn}")),
            }
        }
        Ok(Some(out))
    }

    /// The stack's target groups in the VPC with their tags, found by tag (gate
    /// `EnableRGTAPI`); `None` when the gate is off.
    pub(crate) async fn tagged_tgs(
        &self,
        kind: StackKind,
        stack_id: &str,
    ) -> Result<Option<Vec<(aws::TargetGroup, Tags)>>> {
        let Some(found) = self
            .tagged_resources(RESOURCE_TYPE_TARGET_GROUP, kind, stack_id)
            .await?
        else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for (arn, t) in found {
            let q = TargetGroupQuery {
                arns: vec![arn.clone()],
                ..Default::default()
            };
            match self.elbv2.describe_target_groups(&q).await {
                Ok(tgs) => out.extend(
                    tgs.into_iter()
                        .filter(|g| g.vpc_id.as_deref() == Some(self.vpc_id.as_str()))
                        .map(|g| (g, t.clone())),
                ),
                // Deleted since the index listed it.
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e).ctx(|| format!("describe target group {arn}")),
            }
        }
        Ok(Some(out))
    }
}
