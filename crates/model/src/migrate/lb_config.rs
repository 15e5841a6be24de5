//! The LoadBalancerConfiguration of a group (`translate/lb_config.go`): the load-balancer
//! annotations, and per listener its certificates, SSL policy, attributes and mTLS. None when no
//! such annotation is set. Values the CRD's enums do not take (an Ingress the controller would
//! have refused) are left out with a warning in `notes`.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::annotations::{get_bool, get_string, get_string_map, get_string_slice, ListenPort};
use super::pre_routing::enum_value;
use super::{MIGRATION_TAG_KEY, PROTOCOL_HTTPS};
use crate::annotations::{self as ann, suffix, AnnotationMap};
use crate::crd::gateway::load_balancer_configuration::{
    ListenerConfiguration, MinimumLoadBalancerCapacity, MutualAuthenticationAttributes,
    ShieldConfiguration, SubnetConfiguration, WafV2Configuration,
};
use crate::crd::gateway::{KeyValue, LoadBalancerConfiguration, LoadBalancerConfigurationSpec};

/// The group's LoadBalancerConfiguration, or `None` when no annotation asks for one; the
/// migration tag is added to one that exists.
pub fn build_load_balancer_config_resource(
    name: &str,
    namespace: &str,
    annotations: &AnnotationMap,
    listen_ports: &[ListenPort],
    migration_tag: &str,
    notes: &mut Vec<String>,
) -> Option<LoadBalancerConfiguration> {
    let mut spec = build_load_balancer_config_spec(annotations, listen_ports, notes);
    if spec == LoadBalancerConfigurationSpec::default() {
        return None;
    }
    if !migration_tag.is_empty() {
        spec.tags
            .get_or_insert_with(BTreeMap::new)
            .insert(MIGRATION_TAG_KEY.into(), migration_tag.into());
    }
    let mut lbc = LoadBalancerConfiguration::new(name, spec);
    lbc.metadata.namespace = Some(namespace.to_string());
    Some(lbc)
}

/// A warning for an annotation value the CRD cannot hold.
pub(crate) fn dropped(notes: &mut Vec<String>, sfx: &str, value: &str, field: &str) {
    notes.push(format!(
        "WARNING: {} {} is not a value {field} takes: not translated.\n",
        ann::key(sfx),
        super::go_quote(value)
    ));
}

/// The spec the annotations make.
pub fn build_load_balancer_config_spec(
    a: &AnnotationMap,
    listen_ports: &[ListenPort],
    notes: &mut Vec<String>,
) -> LoadBalancerConfigurationSpec {
    let mut spec = LoadBalancerConfigurationSpec::default();
    let scheme = get_string(a, suffix::SCHEME);
    if !scheme.is_empty() {
        spec.scheme = enum_value(&scheme);
        if spec.scheme.is_none() {
            dropped(
                notes,
                suffix::SCHEME,
                &scheme,
                "LoadBalancerConfiguration scheme",
            );
        }
    }
    let name = get_string(a, suffix::LOAD_BALANCER_NAME);
    if !name.is_empty() {
        spec.load_balancer_name = Some(name);
    }
    let ip_type = get_string(a, suffix::IP_ADDRESS_TYPE);
    if !ip_type.is_empty() {
        spec.ip_address_type = enum_value(&ip_type);
        if spec.ip_address_type.is_none() {
            dropped(
                notes,
                suffix::IP_ADDRESS_TYPE,
                &ip_type,
                "LoadBalancerConfiguration ipAddressType",
            );
        }
    }
    let subnets = get_string_slice(a, suffix::SUBNETS);
    if !subnets.is_empty() {
        spec.load_balancer_subnets = Some(
            subnets
                .into_iter()
                .map(|s| SubnetConfiguration {
                    identifier: s,
                    ..Default::default()
                })
                .collect(),
        );
    }
    let pool = get_string(a, suffix::CUSTOMER_OWNED_IPV4_POOL);
    if !pool.is_empty() {
        spec.customer_owned_ipv4_pool = Some(pool);
    }
    let ipam = get_string(a, suffix::IPAM_IPV4_POOL_ID);
    if !ipam.is_empty() {
        spec.ipv4_ipam_pool_id = Some(ipam);
    }
    let sgs = get_string_slice(a, suffix::SECURITY_GROUPS);
    if !sgs.is_empty() {
        spec.security_groups = Some(sgs);
    }
    if let Some(v) = get_bool(a, suffix::MANAGE_BACKEND_SG_RULES) {
        spec.manage_backend_security_group_rules = Some(v);
    }
    let cidrs = get_string_slice(a, suffix::INBOUND_CIDRS);
    if !cidrs.is_empty() {
        spec.source_ranges = Some(cidrs);
    }
    let prefix_lists = get_string_slice(a, suffix::SECURITY_GROUP_PREFIX_LISTS);
    if !prefix_lists.is_empty() {
        spec.security_group_prefixes = Some(prefix_lists);
    }
    spec.load_balancer_attributes = get_string_map(a, suffix::LOAD_BALANCER_ATTRIBUTES)
        .into_iter()
        .map(|(key, value)| KeyValue { key, value })
        .collect();
    let tags = get_string_map(a, suffix::TAGS);
    if !tags.is_empty() {
        spec.tags = Some(tags);
    }
    if !get_string(a, suffix::MINIMUM_LOAD_BALANCER_CAPACITY).is_empty() {
        let cap = get_string_map(a, suffix::MINIMUM_LOAD_BALANCER_CAPACITY);
        if let Some(units) = cap.get("CapacityUnits") {
            if let Ok(units) = ann::go_parse_int(units, 32) {
                spec.minimum_load_balancer_capacity = Some(MinimumLoadBalancerCapacity {
                    capacity_units: units as i32,
                });
            }
        }
    }
    let arn = get_string(a, suffix::WAFV2_ACL_ARN);
    let acl_name = get_string(a, suffix::WAFV2_ACL_NAME);
    if !arn.is_empty() && arn != "none" {
        spec.waf_v2 = Some(WafV2Configuration { web_acl: arn });
    } else if !acl_name.is_empty() && acl_name != "none" {
        spec.waf_v2 = Some(WafV2Configuration { web_acl: acl_name });
    }
    if let Some(enabled) = get_bool(a, suffix::SHIELD_ADVANCED_PROTECTION) {
        spec.shield_configuration = Some(ShieldConfiguration { enabled });
    }
    let listeners = build_listener_configurations(a, listen_ports, notes);
    if !listeners.is_empty() {
        spec.listener_configurations = Some(listeners);
    }
    spec
}

/// A `mutual-authentication` entry as users write it.
#[derive(Deserialize, Default, Debug, Clone)]
#[serde(rename_all = "camelCase")]
struct MutualAuthEntry {
    #[serde(default)]
    port: i32,
    #[serde(default)]
    mode: String,
    #[serde(default)]
    trust_store: String,
    #[serde(default)]
    ignore_client_certificate_expiry: bool,
    #[serde(default)]
    advertise_trust_store_ca_names: String,
}

/// One configuration per listen port that has something to say: certificates and SSL policy
/// (HTTPS), `listener-attributes.<PROTOCOL>-<port>`, mTLS.
pub fn build_listener_configurations(
    a: &AnnotationMap,
    listen_ports: &[ListenPort],
    notes: &mut Vec<String>,
) -> Vec<ListenerConfiguration> {
    let certs = get_string_slice(a, suffix::CERTIFICATE_ARN);
    let ssl_policy = get_string(a, suffix::SSL_POLICY);
    // Upstream reads it as it can and ignores a malformed value (`unsupported` warns of it).
    let mtls: Vec<MutualAuthEntry> = ann::json(a, suffix::MUTUAL_AUTHENTICATION)
        .ok()
        .flatten()
        .unwrap_or_default();
    let mut out = Vec::new();
    for lp in listen_ports {
        let mut lc = ListenerConfiguration {
            protocol_port: format!("{}:{}", lp.protocol, lp.port),
            ..Default::default()
        };
        let secure = lp.protocol == PROTOCOL_HTTPS;
        if secure && !certs.is_empty() {
            lc.default_certificate = Some(certs[0].clone());
            lc.certificates = certs[1..].to_vec();
        }
        if secure && !ssl_policy.is_empty() {
            lc.ssl_policy = Some(ssl_policy.clone());
        }
        let attrs_suffix = format!(
            "{}.{}-{}",
            suffix::LISTENER_ATTRIBUTES_PREFIX,
            lp.protocol,
            lp.port
        );
        lc.listener_attributes = get_string_map(a, &attrs_suffix)
            .into_iter()
            .map(|(key, value)| KeyValue { key, value })
            .collect();
        if let Some(m) = mtls.iter().find(|m| m.port == lp.port) {
            match enum_value(&m.mode) {
                Some(mode) => {
                    let mut ma = MutualAuthenticationAttributes {
                        mode,
                        ..Default::default()
                    };
                    if !m.trust_store.is_empty() {
                        ma.trust_store = Some(m.trust_store.clone());
                    }
                    if m.ignore_client_certificate_expiry {
                        ma.ignore_client_certificate_expiry = Some(true);
                    }
                    if !m.advertise_trust_store_ca_names.is_empty() {
                        ma.advertise_trust_store_ca_names =
                            enum_value(&m.advertise_trust_store_ca_names);
                        if ma.advertise_trust_store_ca_names.is_none() {
                            dropped(
                                notes,
                                suffix::MUTUAL_AUTHENTICATION,
                                &m.advertise_trust_store_ca_names,
                                "mutualAuthentication advertiseTrustStoreCaNames",
                            );
                        }
                    }
                    lc.mutual_authentication = Some(ma);
                }
                None => dropped(
                    notes,
                    suffix::MUTUAL_AUTHENTICATION,
                    &m.mode,
                    "mutualAuthentication mode",
                ),
            }
        }
        if lc.default_certificate.is_some()
            || lc.ssl_policy.is_some()
            || !lc.certificates.is_empty()
            || !lc.listener_attributes.is_empty()
            || lc.mutual_authentication.is_some()
        {
            out.push(lc);
        }
    }
    out
}
