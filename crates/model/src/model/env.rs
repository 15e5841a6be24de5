//! Facts from AWS, outside the Kubernetes objects, that refine a stack: the VPC's subnets and
//! the load balancer the stack already has. All optional: `plan` from manifests has none.

use super::subnets::SubnetInfo;
use super::types::LoadBalancerScheme;

/// Facts from outside the Kubernetes objects that refine the stack (all optional).
#[derive(Debug, Clone, Default)]
pub struct BuildEnv {
    /// Subnets of the VPC; when absent the stack shows the discovery criteria.
    pub subnets: Option<Vec<SubnetInfo>>,
    /// The stack's existing load balancer (scheme, subnet ids): same scheme keeps its subnets.
    pub existing_load_balancer: Option<(LoadBalancerScheme, Vec<String>)>,
}

/// What the model needs to know about an existing NLB of the stack.
#[derive(Debug, Clone, PartialEq)]
pub struct ExistingNlb {
    pub scheme: LoadBalancerScheme,
    pub subnet_ids: Vec<String>,
    /// Its security groups; an NLB created without any can never get one.
    pub security_groups: Vec<String>,
}

/// A security-group change AWS refuses on an NLB that exists (the Service and Gateway models
/// both check it before any write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusedGroupsChange {
    /// Groups asked of an NLB created without any: AWS never adds one.
    AddToNone,
    /// No group asked of an NLB that has some: AWS never takes the last one off.
    RemoveAll,
}

impl ExistingNlb {
    /// The change AWS would refuse when the stack asks for groups (`wants_groups`) or none.
    pub fn refused_change(&self, wants_groups: bool) -> Option<RefusedGroupsChange> {
        match (self.security_groups.is_empty(), wants_groups) {
            (true, true) => Some(RefusedGroupsChange::AddToNone),
            (false, false) => Some(RefusedGroupsChange::RemoveAll),
            _ => None,
        }
    }
}
