//! What the frontend NLB is built from besides the members' annotations (the group's ALB, its
//! tags and ports), and the tags every frontend NLB resource gets from them.

use std::collections::BTreeMap;

use crate::model::config::ModelConfig;
use crate::model::env::BuildEnv;
use crate::model::tags::TagContext;
use crate::model::types::LoadBalancer;

/// Tags, labels and attributes: key to value.
pub(super) type Tags = BTreeMap<String, String>;

/// What the frontend NLB is built from besides the members' annotations.
pub struct FrontendInputs<'a> {
    pub cfg: &'a ModelConfig,
    pub tags: &'a TagContext<'a>,
    pub env: &'a BuildEnv,
    /// The group's ALB (name, IP address type, security groups).
    pub alb: &'a LoadBalancer,
    /// The ALB's user tags (the NLB's tags without `frontend-nlb-tags`).
    pub alb_user_tags: &'a Tags,
    /// Each member's ALB listen ports, in member order.
    pub ports_per_member: &'a [Vec<i32>],
}

/// AWS tags of a frontend NLB resource: `frontend-nlb-tags` alone (upstream uses them instead
/// of the ALB's user and default tags), else the ALB's; the tracking tags always.
pub(super) fn resource_tags(i: &FrontendInputs<'_>, frontend: Option<&Tags>, id: &str) -> Tags {
    match frontend {
        Some(user) => {
            let mut t = user.clone();
            t.extend(i.tags.stack_tags());
            t.insert(format!("{}/resource", i.tags.prefix), id.to_string());
            t
        }
        None => i.tags.resource_tags(id, i.alb_user_tags.clone()),
    }
}
