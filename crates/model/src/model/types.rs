//! The serialisable desired state of one Ingress group (`Stack`). Every collection is ordered
//! (sorted Vec or BTreeMap) so the JSON is byte-stable. References between resources are
//! `Token`s (e.g. "ARN of target group X") that the deployer resolves after creating things.

use std::collections::BTreeMap;

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
}

/// How the load balancer's subnets are chosen.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub enum Subnets {
    /// Already resolved subnet ids (sorted).
    Resolved(Vec<String>),
    /// `subnets` annotation: ids or `Name` tag values, resolved against the VPC by the deployer.
    NamesOrIds(Vec<String>),
    /// IngressClassParams `spec.subnets` selector (ids or tag filters).
    Selector {
        ids: Vec<String>,
        tags: BTreeMap<String, Vec<String>>,
    },
    /// Auto-discovery; the deployer applies these criteria (see `model::subnets`).
    Discover(DiscoveryCriteria),
}

/// The subnet auto-discovery rules for this load balancer, shown when no subnet data is known.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveryCriteria {
    /// `kubernetes.io/role/elb` or `kubernetes.io/role/internal-elb`, value "" or "1".
    pub role_tag: String,
    /// Subnets tagged for another cluster are skipped unless also tagged for this one.
    pub cluster_tag_check: bool,
    pub min_available_ips: i32,
    pub one_subnet_per_az: bool,
    pub min_subnets: usize,
    pub requires_ipv6_cidr: bool,
    /// Fallback when no subnet has the role tag (gate SubnetDiscoveryByReachability).
    pub fallback_by_reachability: bool,
    /// An existing load balancer of the same scheme keeps its current subnets.
    pub reuse_existing_subnets: bool,
}

/// The Application Load Balancer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LoadBalancer {
    pub id: String,
    pub name: String,
    /// Always `application`.
    #[serde(rename = "type")]
    pub lb_type: String,
    pub scheme: LoadBalancerScheme,
    pub ip_address_type: IpAddressType,
    pub subnets: Subnets,
    pub security_groups: Vec<Token>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security_group_names_or_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_owned_ipv4_pool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv4_ipam_pool_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_capacity_units: Option<i32>,
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    /// NLB: one entry per subnet with its EIP / private addresses (empty for ALBs and when the
    /// subnets are not resolved yet).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subnet_mappings: Vec<SubnetMapping>,
    /// NLB: `on` / `off` (`aws-load-balancer-enable-prefix-for-ipv6-source-nat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_prefix_for_ipv6_source_nat: Option<String>,
    /// NLB: `on` / `off` (`aws-load-balancer-inbound-sg-rules-on-private-link-traffic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_groups_inbound_rules_on_private_link: Option<String>,
}

/// An NLB subnet mapping (`SubnetMapping` of CreateLoadBalancer / SetSubnets).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SubnetMapping {
    pub subnet_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_ipv4_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv6_address: Option<String>,
    /// NLB dualstack with prefix source NAT: a /80 or `auto_assigned`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_nat_ipv6_prefix: Option<String>,
}

impl SubnetMapping {
    /// The bare subnet (no address or EIP).
    pub fn subnet(id: impl Into<String>) -> Self {
        Self {
            subnet_id: id.into(),
            ..Default::default()
        }
    }
}

/// One ingress permission of the managed security group.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub struct IpPermission {
    pub ip_protocol: String,
    pub from_port: i32,
    pub to_port: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cidr_ipv4: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cidr_ipv6: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_list_id: Option<String>,
}

/// The managed (frontend) security group of the load balancer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SecurityGroup {
    pub id: String,
    pub name: String,
    pub description: String,
    pub ingress: Vec<IpPermission>,
    pub tags: BTreeMap<String, String>,
}

/// The cluster-wide backend security group: a known id, or the one the deployer finds/creates.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BackendSecurityGroup {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    pub name: String,
    pub description: String,
    pub tags: BTreeMap<String, String>,
}

/// A listener.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Listener {
    pub id: String,
    pub load_balancer_arn: Token,
    pub port: i32,
    pub protocol: Protocol,
    pub default_actions: Vec<Action>,
    /// First entry is the default certificate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificates: Vec<String>,
    /// HTTPS without explicit certificates: hosts for ACM discovery at deploy time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_discovery_hosts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssl_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutual_authentication: Option<MutualAuthentication>,
    /// NLB TLS listeners: `aws-load-balancer-alpn-policy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpn_policy: Option<String>,
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
}

/// Listener mTLS settings.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct MutualAuthentication {
    pub mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_store: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_client_certificate_expiry: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advertise_trust_store_ca_names: Option<String>,
}

/// A listener rule.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ListenerRule {
    pub id: String,
    pub listener_arn: Token,
    pub priority: i32,
    /// The Ingress this rule comes from (`ns/name`).
    pub ingress: String,
    pub conditions: Vec<RuleCondition>,
    pub actions: Vec<Action>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transforms: Vec<Transform>,
    pub tags: BTreeMap<String, String>,
}

pub use super::backend::{
    Action, AuthenticateCognitoConfig, AuthenticateOidcConfig, FixedResponseConfig, ForwardConfig,
    JwtValidationConfig, RedirectConfig, RuleCondition, StickinessConfig, TargetGroupTuple,
    Transform,
};

/// Health-check settings of a target group.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HealthCheck {
    /// `traffic-port` or a port number.
    pub port: String,
    pub protocol: Protocol,
    /// Empty for TCP health checks (NLB), which have no path.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// `httpCode` (HTTP1/HTTP2) or `grpcCode` (GRPC); empty for TCP health checks.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub matcher: BTreeMap<String, String>,
    pub interval_seconds: i32,
    pub timeout_seconds: i32,
    pub healthy_threshold_count: i32,
    pub unhealthy_threshold_count: i32,
}

/// A target group.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroup {
    /// `<ingNs>/<ingName>-<svcName>:<svcPort>`.
    pub id: String,
    pub name: String,
    pub target_type: TargetType,
    pub port: i32,
    pub protocol: Protocol,
    /// ALB target groups only (NLB target groups have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<ProtocolVersion>,
    /// `ipv4` or `ipv6`.
    pub ip_address_type: String,
    pub health_check: HealthCheck,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_control_port: Option<i32>,
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    /// The Service UID hashed into `name` (placeholder when unknown, see `plan`).
    pub service_uid: String,
}

/// A TargetGroupBinding object the controller creates for a target group.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroupBindingResource {
    pub id: String,
    pub name: String,
    pub namespace: String,
    pub labels: BTreeMap<String, String>,
    pub spec: TargetGroupBindingModelSpec,
}

/// TargetGroupBinding spec with the target-group ARN and SG ids still as tokens.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TargetGroupBindingModelSpec {
    pub target_group_arn: Token,
    pub target_type: TargetType,
    pub service_name: String,
    /// The port as written in the Ingress (number or name).
    pub service_port: k8s_openapi::apimachinery::pkg::util::intstr::IntOrString,
    /// (source SG token, port or None = all ports); all TCP.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networking: Vec<NetworkingRule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<BTreeMap<String, String>>,
    pub ip_address_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc_id: Option<String>,
    pub multi_cluster_target_group: bool,
    pub target_group_protocol: Protocol,
    /// NLBs without security groups: rules from CIDR blocks instead of a security group
    /// (upstream's legacy TGB networking), in upstream's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networking_from_cidrs: Vec<CidrNetworkingRule>,
    /// Upstream's Service shape: all `networking` ports in one rule (its Ingress and Gateway
    /// builders write one rule per port). The deployer writes whichever the model says.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub networking_one_rule: bool,
}

/// One TGB ingress rule from CIDR blocks (upstream's `ipBlock` peers) to these ports.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CidrNetworkingRule {
    pub from_cidrs: Vec<String>,
    pub ports: Vec<crate::crd::target_group_binding::NetworkingPort>,
}

/// One TGB networking rule: from a security group to a port (None = all ports), TCP unless
/// `protocol` says UDP (NLB UDP / TCP_UDP / QUIC target groups).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NetworkingRule {
    pub from_security_group: Token,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<crate::crd::target_group_binding::NetworkingProtocol>,
}

/// WAF / Shield settings (carried; needs AWS services not yet called: see warnings).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Addons {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wafv2_acl_arn: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wafv2_acl_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waf_regional_acl_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shield_advanced_protection: Option<bool>,
}

impl Addons {
    pub fn is_empty(&self) -> bool {
        *self == Addons::default()
    }
}
