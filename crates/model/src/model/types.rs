//! The serialisable desired state of one Ingress group (`Stack`). Every collection is ordered
//! (sorted Vec or BTreeMap) so the JSON is byte-stable. References between resources are
//! `Token`s (e.g. "ARN of target group X") that the deployer resolves after creating things.

use serde::{Deserialize, Serialize};

pub use crate::crd::target_group_binding::TargetType;

/// Load balancer scheme.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LoadBalancerScheme {
    #[serde(rename = "internal")]
    Internal,
    #[serde(rename = "internet-facing")]
    InternetFacing,
}

impl LoadBalancerScheme {
    pub fn as_str(&self) -> &'static str {
        match self {
            LoadBalancerScheme::Internal => "internal",
            LoadBalancerScheme::InternetFacing => "internet-facing",
        }
    }
}

/// Load balancer IP address type.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IpAddressType {
    #[serde(rename = "ipv4")]
    Ipv4,
    #[serde(rename = "dualstack")]
    DualStack,
    #[serde(rename = "dualstack-without-public-ipv4")]
    DualStackWithoutPublicIpv4,
}

impl IpAddressType {
    /// The wire value (`ipv4`, `dualstack`, `dualstack-without-public-ipv4`).
    pub fn as_str(&self) -> &'static str {
        match self {
            IpAddressType::Ipv4 => "ipv4",
            IpAddressType::DualStack => "dualstack",
            IpAddressType::DualStackWithoutPublicIpv4 => "dualstack-without-public-ipv4",
        }
    }

    pub fn is_dual_stack(&self) -> bool {
        !matches!(self, IpAddressType::Ipv4)
    }
}

/// Listener / target-group / health-check protocol: HTTP and HTTPS for ALBs, the rest for NLBs.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Protocol {
    #[serde(rename = "HTTP")]
    Http,
    #[serde(rename = "HTTPS")]
    Https,
    #[serde(rename = "TCP")]
    Tcp,
    #[serde(rename = "UDP")]
    Udp,
    #[serde(rename = "TCP_UDP")]
    TcpUdp,
    #[serde(rename = "TLS")]
    Tls,
    #[serde(rename = "QUIC")]
    Quic,
    #[serde(rename = "TCP_QUIC")]
    TcpQuic,
}

impl Protocol {
    pub fn as_str(&self) -> &'static str {
        match self {
            Protocol::Http => "HTTP",
            Protocol::Https => "HTTPS",
            Protocol::Tcp => "TCP",
            Protocol::Udp => "UDP",
            Protocol::TcpUdp => "TCP_UDP",
            Protocol::Tls => "TLS",
            Protocol::Quic => "QUIC",
            Protocol::TcpQuic => "TCP_QUIC",
        }
    }

    /// Whether the protocol carries UDP (the TGB then needs UDP rules).
    pub fn carries_udp(&self) -> bool {
        matches!(
            self,
            Protocol::Udp | Protocol::TcpUdp | Protocol::Quic | Protocol::TcpQuic
        )
    }
}

impl From<Protocol> for crate::crd::target_group_binding::TargetGroupProtocol {
    fn from(p: Protocol) -> Self {
        use crate::crd::target_group_binding::TargetGroupProtocol as T;
        match p {
            Protocol::Http => T::Http,
            Protocol::Https => T::Https,
            Protocol::Tcp => T::Tcp,
            Protocol::Udp => T::Udp,
            Protocol::TcpUdp => T::TcpUdp,
            Protocol::Tls => T::Tls,
            Protocol::Quic => T::Quic,
            Protocol::TcpQuic => T::TcpQuic,
        }
    }
}

/// Target group protocol version.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    HTTP1,
    HTTP2,
    GRPC,
}

impl ProtocolVersion {
    pub fn as_str(&self) -> &'static str {
        match self {
            ProtocolVersion::HTTP1 => "HTTP1",
            ProtocolVersion::HTTP2 => "HTTP2",
            ProtocolVersion::GRPC => "GRPC",
        }
    }
}

/// A value known now (`literal`) or produced by another resource when it is deployed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "camelCase")]
pub enum Token {
    Literal(String),
    /// ARN of the stack's load balancer.
    LoadBalancerArn,
    /// ARN of the listener with this port.
    ListenerArn(i32),
    /// ARN of the target group with this resource id.
    TargetGroupArn(String),
    /// Group id of the stack's managed security group.
    ManagedSecurityGroupId,
    /// Group id of the cluster's shared backend security group (auto-created when unknown).
    BackendSecurityGroupId,
    /// ARN of the stack's frontend NLB (`enable-frontend-nlb`).
    FrontendNlbArn,
}

impl Token {
    /// The value of a `Literal`: what the deployer turns every other token into before it
    /// hands a resource to the AWS layer (which refuses anything else).
    pub fn literal(&self) -> Option<&str> {
        match self {
            Token::Literal(s) => Some(s),
            _ => None,
        }
    }
}

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
            StackKind::Ingress => super::tags::INGRESS_TAG_PREFIX,
            StackKind::Service => super::tags::SERVICE_TAG_PREFIX,
            StackKind::AlbGateway => super::tags::ALB_GATEWAY_TAG_PREFIX,
            StackKind::NlbGateway => super::tags::NLB_GATEWAY_TAG_PREFIX,
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

pub use super::backend::{
    Action, AuthenticateCognitoConfig, AuthenticateOidcConfig, FixedResponseConfig, ForwardConfig,
    JwtValidationConfig, Redacted, RedirectConfig, RuleCondition, StickinessConfig,
    TargetGroupTuple, Transform,
};

// One file per AWS kind, as `deploy/` has them.
mod frontend_nlb;
mod listener;
mod load_balancer;
mod security_group;
mod target_group;

pub use frontend_nlb::*;
pub use listener::*;
pub use load_balancer::*;
pub use security_group::*;
pub use target_group::*;
