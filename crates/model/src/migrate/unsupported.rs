//! What upstream's translation leaves behind without a word, warned about here instead (this
//! build's addition; upstream's own warnings are in `warnings`): annotations with no Gateway API
//! form (WAF Classic, the frontend NLB, ACM certificate creation), values that do not parse
//! (upstream's readers take them as unset), annotations no reader knows, authentication set on
//! a Service (the Ingress controller honours it, the translation reads the Ingress's only),
//! backends that are no Service, listener attributes of a multi-member group, and the
//! IngressClassParams fields the translation never applies.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;

use super::{annotations_of, key_of};
use crate::annotations::{self as ann, suffix, INGRESS_PREFIX};
use crate::crd::IngressClassParams;

/// Suffixes the translation carries as they are (strings and lists).
const TRANSLATED: &[&str] = &[
    suffix::LOAD_BALANCER_NAME,
    suffix::GROUP_NAME,
    suffix::IP_ADDRESS_TYPE,
    suffix::SCHEME,
    suffix::SUBNETS,
    suffix::CUSTOMER_OWNED_IPV4_POOL,
    suffix::WAFV2_ACL_ARN,
    suffix::WAFV2_ACL_NAME,
    suffix::SECURITY_GROUPS,
    suffix::INBOUND_CIDRS,
    suffix::CERTIFICATE_ARN,
    suffix::SSL_POLICY,
    suffix::TARGET_TYPE,
    suffix::BACKEND_PROTOCOL,
    suffix::BACKEND_PROTOCOL_VERSION,
    suffix::HEALTHCHECK_PORT,
    suffix::HEALTHCHECK_PROTOCOL,
    suffix::HEALTHCHECK_PATH,
    suffix::SUCCESS_CODES,
    suffix::AUTH_TYPE,
    suffix::AUTH_ON_UNAUTHENTICATED_REQUEST,
    suffix::AUTH_SCOPE,
    suffix::AUTH_SESSION_COOKIE,
    suffix::SECURITY_GROUP_PREFIX_LISTS,
    suffix::IPAM_IPV4_POOL_ID,
    suffix::USE_REGEX_PATH_MATCH,
];

/// Go-syntax booleans the translation reads.
const BOOLS: &[&str] = &[
    suffix::MANAGE_BACKEND_SG_RULES,
    suffix::SHIELD_ADVANCED_PROTECTION,
    suffix::MULTI_CLUSTER_TARGET_GROUP,
];

/// int32 values.
const INT32S: &[&str] = &[
    suffix::GROUP_ORDER,
    suffix::SSL_REDIRECT,
    suffix::HEALTHCHECK_INTERVAL_SECONDS,
    suffix::HEALTHCHECK_TIMEOUT_SECONDS,
    suffix::HEALTHY_THRESHOLD_COUNT,
    suffix::UNHEALTHY_THRESHOLD_COUNT,
];

/// `k=v` maps.
const MAPS: &[&str] = &[
    suffix::TAGS,
    suffix::LOAD_BALANCER_ATTRIBUTES,
    suffix::TARGET_GROUP_ATTRIBUTES,
    suffix::TARGET_NODE_LABELS,
    suffix::MINIMUM_LOAD_BALANCER_CAPACITY,
];

/// JSON values (their parse errors fail the translation when it reads them, except
/// `mutual-authentication`, which upstream reads as unset).
const JSONS: &[&str] = &[
    suffix::LISTEN_PORTS,
    suffix::MUTUAL_AUTHENTICATION,
    suffix::AUTH_IDP_COGNITO,
    suffix::AUTH_IDP_OIDC,
    suffix::JWT_VALIDATION,
];

/// Suffixes with no Gateway API form in upstream's translation.
pub const NOT_TRANSLATED: &[&str] = &[
    suffix::WAF_ACL_ID,
    suffix::WEB_ACL_ID,
    suffix::ENABLE_FRONTEND_NLB,
    suffix::FRONTEND_NLB_SCHEME,
    suffix::FRONTEND_NLB_SUBNETS,
    suffix::FRONTEND_NLB_SECURITY_GROUPS,
    suffix::FRONTEND_NLB_EIP_ALLOCATIONS,
    suffix::FRONTEND_NLB_LISTENER_PORT_MAPPING,
    suffix::FRONTEND_NLB_HEALTHCHECK_PORT,
    suffix::FRONTEND_NLB_HEALTHCHECK_PROTOCOL,
    suffix::FRONTEND_NLB_HEALTHCHECK_PATH,
    suffix::FRONTEND_NLB_HEALTHCHECK_INTERVAL_SECONDS,
    suffix::FRONTEND_NLB_HEALTHCHECK_TIMEOUT_SECONDS,
    suffix::FRONTEND_NLB_HEALTHY_THRESHOLD_COUNT,
    suffix::FRONTEND_NLB_UNHEALTHY_THRESHOLD_COUNT,
    suffix::FRONTEND_NLB_SUCCESS_CODES,
    suffix::FRONTEND_NLB_ATTRIBUTES,
    suffix::FRONTEND_NLB_TAGS,
    suffix::CREATE_ACM_CERT,
    suffix::ACM_PCA_ARN,
];

/// Prefixes of the suffixes that carry a name (`actions.<name>`, ...).
const PREFIXED: &[&str] = &[
    suffix::ACTIONS_PREFIX,
    suffix::CONDITIONS_PREFIX,
    suffix::TRANSFORMS_PREFIX,
    suffix::LISTENER_ATTRIBUTES_PREFIX,
    suffix::TARGET_CONTROL_PORT,
];

/// How the translation treats an annotation suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Carried into the output.
    Translated,
    /// Left out: no Gateway API form (warned).
    NotTranslated,
    /// Written by the controller, not read (`dry-run-plan`).
    ControllerWritten,
    /// No reader knows it (warned).
    Unknown,
}

/// How `sfx` (after `alb.ingress.kubernetes.io/`) is treated.
pub fn handling(sfx: &str) -> Handling {
    if ann::key(sfx) == ann::DRY_RUN_PLAN {
        return Handling::ControllerWritten;
    }
    if NOT_TRANSLATED.contains(&sfx) {
        return Handling::NotTranslated;
    }
    let prefixed = PREFIXED.iter().any(|p| {
        sfx.strip_prefix(p)
            .is_some_and(|rest| rest.starts_with('.'))
    });
    let auth = sfx == suffix::AUTH_SESSION_TIMEOUT;
    if prefixed
        || auth
        || TRANSLATED.contains(&sfx)
        || BOOLS.contains(&sfx)
        || INT32S.contains(&sfx)
        || MAPS.contains(&sfx)
        || JSONS.contains(&sfx)
    {
        Handling::Translated
    } else {
        Handling::Unknown
    }
}

/// The warnings about one Ingress's annotations, and about the authentication annotations of
/// the Services it routes to.
pub fn annotation_warnings(ing: &Ingress, services: &BTreeMap<String, Service>) -> Vec<String> {
    let key = key_of(&ing.metadata);
    let a = annotations_of(&ing.metadata);
    let prefix = format!("{INGRESS_PREFIX}/");
    let mut out = Vec::new();
    for (k, v) in &a {
        let Some(sfx) = k.strip_prefix(&prefix) else {
            continue;
        };
        match handling(sfx) {
            Handling::NotTranslated => out.push(format!(
                "WARNING: Ingress {key:?} sets {k}, which has no Gateway API equivalent: not translated.\n"
            )),
            Handling::Unknown => out.push(format!(
                "WARNING: Ingress {key:?} sets {k}, which is no annotation the controller reads: not translated.\n"
            )),
            Handling::ControllerWritten => {}
            Handling::Translated => {
                if let Some(problem) = parse_problem(&a, sfx, v) {
                    out.push(format!(
                        "WARNING: Ingress {key:?}: {problem}; the translation reads it as unset.\n"
                    ));
                }
            }
        }
    }
    out.extend(backend_warnings(ing, &key));
    out.extend(service_auth_warnings(ing, &key, services));
    out
}

/// Why a typed annotation's value does not parse, if it does not.
fn parse_problem(a: &ann::AnnotationMap, sfx: &str, value: &str) -> Option<String> {
    let k = ann::key(sfx);
    if BOOLS.contains(&sfx) {
        return ann::bool(a, sfx).err().map(|e| e.message);
    }
    if INT32S.contains(&sfx) || sfx.starts_with(&format!("{}.", suffix::TARGET_CONTROL_PORT)) {
        return ann::int32_at(a, &k).err().map(|e| e.message);
    }
    if sfx == suffix::AUTH_SESSION_TIMEOUT {
        return ann::int64(a, sfx).err().map(|e| e.message);
    }
    if MAPS.contains(&sfx) || sfx.starts_with(&format!("{}.", suffix::LISTENER_ATTRIBUTES_PREFIX)) {
        return ann::string_map_at(a, &k).err().map(|e| e.message);
    }
    if sfx == suffix::MUTUAL_AUTHENTICATION {
        return crate::annotations::go_json::from_str::<serde_json::Value>(value)
            .err()
            .map(|e| format!("failed to parse json annotation, {k}: {value}: {e}"));
    }
    None
}

/// Backends that are no Service (`resource` backends): the translation routes nowhere for them.
fn backend_warnings(ing: &Ingress, key: &str) -> Vec<String> {
    let Some(spec) = &ing.spec else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if spec
        .default_backend
        .as_ref()
        .is_some_and(|b| b.service.is_none())
    {
        out.push(format!(
            "WARNING: Ingress {key:?}: spec.defaultBackend names no Service: not translated.\n"
        ));
    }
    for rule in spec.rules.iter().flatten() {
        for p in rule.http.iter().flat_map(|h| &h.paths) {
            if p.backend.service.is_none() {
                out.push(format!(
                    "WARNING: Ingress {key:?}: the backend of path {:?} names no Service: its rule gets no backend.\n",
                    p.path.as_deref().unwrap_or_default()
                ));
            }
        }
    }
    out
}

/// The Services an Ingress routes to directly that set `auth-*` annotations.
fn service_auth_warnings(
    ing: &Ingress,
    key: &str,
    services: &BTreeMap<String, Service>,
) -> Vec<String> {
    let ns = ing.metadata.namespace.clone().unwrap_or_default();
    let auth_prefix = ann::key("auth-");
    let mut names = std::collections::BTreeSet::new();
    let spec = ing.spec.as_ref();
    let default = spec
        .and_then(|s| s.default_backend.as_ref())
        .and_then(|b| b.service.as_ref());
    let paths = spec
        .and_then(|s| s.rules.as_ref())
        .into_iter()
        .flatten()
        .flat_map(|r| r.http.iter().flat_map(|h| &h.paths))
        .filter_map(|p| p.backend.service.as_ref());
    for svc in default.into_iter().chain(paths) {
        names.insert(svc.name.clone());
    }
    let mut out = Vec::new();
    for name in names {
        let Some(svc) = services.get(&format!("{ns}/{name}")) else {
            continue;
        };
        let has_auth = svc
            .metadata
            .annotations
            .iter()
            .flatten()
            .any(|(k, _)| k.starts_with(&auth_prefix));
        if has_auth {
            out.push(format!(
                "WARNING: Service \"{ns}/{name}\" (a backend of Ingress {key:?}) sets auth-* annotations: the translation takes authentication from the Ingress only, so they are not translated.\n"
            ));
        }
    }
    out
}

/// Listener attributes of a member of a multi-member group: upstream merges only the
/// load-balancer annotations every member must agree on, so these do not reach the output.
pub fn group_member_warnings(members: &[Ingress]) -> Vec<String> {
    if members.len() < 2 {
        return Vec::new();
    }
    let prefix = ann::key(&format!("{}.", suffix::LISTENER_ATTRIBUTES_PREFIX));
    let mut out = Vec::new();
    for m in members {
        for k in annotations_of(&m.metadata).keys() {
            if k.starts_with(&prefix) {
                out.push(format!(
                    "WARNING: Ingress {:?} sets {k}: the translation carries no listener attributes of an IngressGroup with several members: not translated.\n",
                    key_of(&m.metadata)
                ));
            }
        }
    }
    out
}

/// The IngressClassParams fields the translation never applies: `group` (it groups by
/// `group.name` only), `namespaceSelector` (cluster policy), and `certificateArn`, `sslPolicy`
/// and `listeners`, which upstream applies to the listener configurations of the merged
/// IngressClassParams spec, which has none.
pub fn icp_warnings(icp: &IngressClassParams) -> Vec<String> {
    let name = icp.metadata.name.clone().unwrap_or_default();
    let mut fields = Vec::new();
    if icp.spec.group.is_some() {
        fields.push("group");
    }
    if icp.spec.namespace_selector.is_some() {
        fields.push("namespaceSelector");
    }
    if !icp.spec.certificate_arn.is_empty() {
        fields.push("certificateArn");
    }
    if !icp.spec.ssl_policy.is_empty() {
        fields.push("sslPolicy");
    }
    if !icp.spec.listeners.is_empty() {
        fields.push("listeners");
    }
    fields
        .into_iter()
        .map(|f| {
            format!(
                "WARNING: IngressClassParams {name:?} sets spec.{f}, which the translation does not apply: not translated.\n"
            )
        })
        .collect()
}
