//! Service annotations (`service.beta.kubernetes.io/<suffix>`) read with upstream's parser rules
//! and error texts, through the shared Go-syntax parsers in `crate::annotations`.

use std::collections::BTreeMap;

use crate::annotations::{self as ann, AnnotationMap};
use crate::model::error::Fail;

/// The only prefix upstream reads on Services.
pub const PREFIX: &str = "service.beta.kubernetes.io";

/// Annotation suffixes, spelled as upstream's `pkg/annotations/constants.go`.
pub mod sfx {
    pub const SOURCE_RANGES: &str = "load-balancer-source-ranges";
    pub const LB_TYPE: &str = "aws-load-balancer-type";
    pub const TARGET_TYPE: &str = "aws-load-balancer-nlb-target-type";
    pub const NAME: &str = "aws-load-balancer-name";
    pub const SCHEME: &str = "aws-load-balancer-scheme";
    pub const INTERNAL: &str = "aws-load-balancer-internal";
    pub const PROXY_PROTOCOL: &str = "aws-load-balancer-proxy-protocol";
    pub const PROXY_PROTOCOL_PER_TG: &str = "aws-load-balancer-proxy-protocol-per-target-group";
    pub const IP_ADDRESS_TYPE: &str = "aws-load-balancer-ip-address-type";
    pub const ACCESS_LOG_ENABLED: &str = "aws-load-balancer-access-log-enabled";
    pub const ACCESS_LOG_BUCKET: &str = "aws-load-balancer-access-log-s3-bucket-name";
    pub const ACCESS_LOG_PREFIX: &str = "aws-load-balancer-access-log-s3-bucket-prefix";
    pub const CROSS_ZONE: &str = "aws-load-balancer-cross-zone-load-balancing-enabled";
    pub const SSL_CERT: &str = "aws-load-balancer-ssl-cert";
    pub const SSL_PORTS: &str = "aws-load-balancer-ssl-ports";
    pub const SSL_POLICY: &str = "aws-load-balancer-ssl-negotiation-policy";
    pub const BACKEND_PROTOCOL: &str = "aws-load-balancer-backend-protocol";
    pub const ADDITIONAL_TAGS: &str = "aws-load-balancer-additional-resource-tags";
    pub const HC_HEALTHY: &str = "aws-load-balancer-healthcheck-healthy-threshold";
    pub const HC_UNHEALTHY: &str = "aws-load-balancer-healthcheck-unhealthy-threshold";
    pub const HC_TIMEOUT: &str = "aws-load-balancer-healthcheck-timeout";
    pub const HC_INTERVAL: &str = "aws-load-balancer-healthcheck-interval";
    pub const HC_PROTOCOL: &str = "aws-load-balancer-healthcheck-protocol";
    pub const HC_PORT: &str = "aws-load-balancer-healthcheck-port";
    pub const HC_PATH: &str = "aws-load-balancer-healthcheck-path";
    pub const HC_SUCCESS_CODES: &str = "aws-load-balancer-healthcheck-success-codes";
    pub const TG_ATTRIBUTES: &str = "aws-load-balancer-target-group-attributes";
    pub const SUBNETS: &str = "aws-load-balancer-subnets";
    pub const EIP_ALLOCATIONS: &str = "aws-load-balancer-eip-allocations";
    pub const PRIVATE_IPV4: &str = "aws-load-balancer-private-ipv4-addresses";
    pub const IPV6_ADDRESSES: &str = "aws-load-balancer-ipv6-addresses";
    pub const ALPN_POLICY: &str = "aws-load-balancer-alpn-policy";
    pub const TARGET_NODE_LABELS: &str = "aws-load-balancer-target-node-labels";
    pub const LB_ATTRIBUTES: &str = "aws-load-balancer-attributes";
    pub const SECURITY_GROUPS: &str = "aws-load-balancer-security-groups";
    pub const MANAGE_SG_RULES: &str = "aws-load-balancer-manage-backend-security-group-rules";
    pub const PRIVATE_LINK_SG_RULES: &str =
        "aws-load-balancer-inbound-sg-rules-on-private-link-traffic";
    pub const SG_PREFIX_LISTS: &str = "aws-load-balancer-security-group-prefix-lists";
    pub const LISTENER_ATTRIBUTES_PREFIX: &str = "aws-load-balancer-listener-attributes";
    pub const MULTI_CLUSTER_TG: &str = "aws-load-balancer-multi-cluster-target-group";
    pub const PREFIX_FOR_IPV6_SOURCE_NAT: &str =
        "aws-load-balancer-enable-prefix-for-ipv6-source-nat";
    pub const SOURCE_NAT_IPV6_PREFIXES: &str = "aws-load-balancer-source-nat-ipv6-prefixes";
    pub const CAPACITY: &str = "aws-load-balancer-minimum-load-balancer-capacity";
    pub const ICMP_PATH_MTU: &str = "aws-load-balancer-enable-icmp-for-path-mtu-discovery";
    pub const TCP_UDP_LISTENER: &str = "aws-load-balancer-enable-tcp-udp-listener";
    pub const DISABLE_NLB_SG: &str = "aws-load-balancer-disable-nlb-sg";
    pub const QUIC_PORTS: &str = "aws-load-balancer-quic-enabled-ports";
    pub const ACTIONS_PREFIX: &str = "actions";
}

/// Full key `service.beta.kubernetes.io/<suffix>`.
pub fn key(suffix: &str) -> String {
    format!("{PREFIX}/{suffix}")
}

/// A Service's annotations with typed, upstream-compatible getters.
#[derive(Clone, Copy)]
pub struct SvcAnnotations<'a>(pub &'a AnnotationMap);

impl<'a> SvcAnnotations<'a> {
    /// Raw value (an empty string counts as present, as upstream).
    pub fn string(&self, suffix: &str) -> Option<&'a str> {
        self.0.get(&key(suffix)).map(String::as_str)
    }

    /// Comma list, trimmed, empty items dropped; `None` when absent.
    pub fn list(&self, suffix: &str) -> Option<Vec<String>> {
        self.string(suffix).map(ann::split_comma_list)
    }

    pub fn bool(&self, suffix: &str) -> Result<Option<bool>, Fail> {
        Ok(ann::bool_at(self.0, &key(suffix))?)
    }

    pub fn int32(&self, suffix: &str) -> Result<Option<i32>, Fail> {
        Ok(ann::int32_at(self.0, &key(suffix))?)
    }

    pub fn map(&self, suffix: &str) -> Result<Option<BTreeMap<String, String>>, Fail> {
        Ok(ann::string_map_at(self.0, &key(suffix))?)
    }
}
