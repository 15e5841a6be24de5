//! The stack itself: which group or object it is for (`GroupId`, `StackKind` and the tag keys
//! that identify its AWS resources), what it leaves out or warns about, and every resource in it.

use serde::{Deserialize, Serialize};

use super::{
    Action, Addons, AlbTargetGroup, BackendSecurityGroup, Certificate, FrontendNlb, Listener,
    ListenerRule, LoadBalancer, SecurityGroup, TargetGroup, TargetGroupBindingResource,
};

/// Tag of every AWS resource the controller manages: the cluster's name.
pub const TAG_CLUSTER: &str = "elbv2.k8s.aws/cluster";
pub const TAG_STACK: &str = "ingress.k8s.aws/stack";
pub const TAG_RESOURCE: &str = "ingress.k8s.aws/resource";
/// Tag / label prefix of Ingress stacks.
pub const INGRESS_TAG_PREFIX: &str = "ingress.k8s.aws";
/// Tag / label prefix of Service (NLB) stacks.
pub const SERVICE_TAG_PREFIX: &str = "service.k8s.aws";
/// Tag / label prefix of ALB Gateway stacks.
pub const ALB_GATEWAY_TAG_PREFIX: &str = "gateway.k8s.aws.alb";
/// Tag / label prefix of NLB Gateway stacks.
pub const NLB_GATEWAY_TAG_PREFIX: &str = "gateway.k8s.aws.nlb";

/// Which IngressGroup this is: explicit (`group.name`) or implicit (one Ingress).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupId {
    /// Empty for explicit groups.
    pub namespace: String,
    pub name: String,
}

impl GroupId {
    pub fn explicit(name: &str) -> Self {
        GroupId {
            namespace: String::new(),
            name: name.to_string(),
        }
    }
    pub fn implicit(namespace: &str, name: &str) -> Self {
        GroupId {
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }
    pub fn is_explicit(&self) -> bool {
        self.namespace.is_empty()
    }
    /// Upstream's string form: `name` (explicit) or `ns/name` (implicit); the stack tag value.
    pub fn as_string(&self) -> String {
        if self.is_explicit() {
            self.name.clone()
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }
    /// Finalizer held by members: `group.ingress.k8s.aws/<name>` or `ingress.k8s.aws/resources`.
    pub fn finalizer(&self) -> String {
        if self.is_explicit() {
            format!("{}{}", crate::crd::names::GROUP_FINALIZER_PREFIX, self.name)
        } else {
            crate::crd::names::INGRESS_FINALIZER.to_string()
        }
    }
}

/// A problem the stack carries to the reconciler (as an event) instead of failing the build.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Warning {
    /// `ns/name` of the Ingress concerned, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<String>,
    /// Full annotation key (or field) concerned, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation: Option<String>,
    pub message: String,
}

/// An Ingress left out of the stack because its own configuration is invalid.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExcludedMember {
    pub ingress: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation: Option<String>,
    pub error: String,
}

/// Which half of the controller a stack belongs to: decides the tag keys (`<prefix>/stack`,
/// `<prefix>/resource`) that identify its AWS resources.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub enum StackKind {
    /// An Ingress group (`ingress.k8s.aws`).
    #[default]
    Ingress,
    /// A LoadBalancer Service (`service.k8s.aws`).
    Service,
    /// A Gateway of an ALB GatewayClass (`gateway.k8s.aws.alb`).
    AlbGateway,
    /// A Gateway of an NLB GatewayClass (`gateway.k8s.aws.nlb`).
    NlbGateway,
}

impl StackKind {
    pub fn is_ingress(&self) -> bool {
        *self == StackKind::Ingress
    }
    /// `ingress.k8s.aws` or `service.k8s.aws`.
    pub fn tag_prefix(&self) -> &'static str {
        match self {
            StackKind::Ingress => INGRESS_TAG_PREFIX,
            StackKind::Service => SERVICE_TAG_PREFIX,
            StackKind::AlbGateway => ALB_GATEWAY_TAG_PREFIX,
            StackKind::NlbGateway => NLB_GATEWAY_TAG_PREFIX,
        }
    }
    /// The tag whose value is the stack id.
    pub fn stack_tag(&self) -> String {
        format!("{}/stack", self.tag_prefix())
    }
    /// The tag whose value is the model resource id.
    pub fn resource_tag(&self) -> String {
        format!("{}/resource", self.tag_prefix())
    }
}

/// Everything that should exist in AWS (and as TargetGroupBindings) for one Ingress group or
/// one LoadBalancer Service (then `stack_id` is `ns/name` and the tags use `service.k8s.aws`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Stack {
    /// The stack id (= group id string; value of the `<prefix>/stack` tag).
    pub stack_id: String,
    /// Ingress group or Service: which tags own its resources.
    #[serde(default, skip_serializing_if = "StackKind::is_ingress")]
    pub kind: StackKind,
    /// Active members in rule-priority order (`ns/name`).
    pub members: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded_members: Vec<ExcludedMember>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// None when the group has no members (everything tagged with the stack must go).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_balancer: Option<LoadBalancer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_security_group: Option<SecurityGroup>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_security_group: Option<BackendSecurityGroup>,
    /// Ingress stacks under gate `EnableCertificateManagement`: the ACM certificates requested
    /// for members with `create-acm-cert`, sorted by resource id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificates: Vec<Certificate>,
    /// Sorted by port.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listeners: Vec<Listener>,
    /// Sorted by (port, priority).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listener_rules: Vec<ListenerRule>,
    /// Sorted by resource id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_groups: Vec<TargetGroup>,
    /// Sorted by resource id (same ids as the target groups).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_group_bindings: Vec<TargetGroupBindingResource>,
    #[serde(default, skip_serializing_if = "Addons::is_empty")]
    pub addons: Addons,
    /// Ingress stacks with `enable-frontend-nlb`: the NLB in front of the ALB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frontend_nlb: Option<FrontendNlb>,
    /// NLB Gateway stacks: the `alb`-type target groups of `Gateway` backends, each with
    /// another Gateway's ALB as its target; sorted by resource id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alb_target_groups: Vec<AlbTargetGroup>,
}

/// Upstream's refusal of a forward to several target groups with gate `WeightedTargetGroups`
/// off (its deployer's text); checked here while building the model, before any AWS write.
pub const WEIGHTED_TARGET_GROUPS_DISABLED: &str = "weighted target groups feature is disabled";

impl Stack {
    /// Whether a listener or a rule forwards to more than one target group (a weighted
    /// forward), which gate `WeightedTargetGroups` off refuses for every kind of stack.
    pub fn forwards_to_several_target_groups(&self) -> bool {
        let several =
            |a: &Action| matches!(a, Action::Forward { config } if config.target_groups.len() > 1);
        self.listeners
            .iter()
            .flat_map(|l| &l.default_actions)
            .chain(self.listener_rules.iter().flat_map(|r| &r.actions))
            .any(several)
    }
}
