//! The plan as the text Go's `encoding/json` makes of upstream's stack schema: struct fields in
//! their declaration order (`pkg/model/elbv2`, `pkg/model/ec2`, `pkg/model/elbv2/k8s`,
//! `pkg/model/acm`, `pkg/model/wafv2`, `pkg/model/wafregional`, `pkg/model/shield`,
//! `apis/elbv2/v1beta1`, Kubernetes' `ObjectMeta` and `LabelSelector`), map keys sorted. The
//! rendered `Value` holds every object with sorted keys; [`write`] puts each struct's fields
//! back in upstream's order, so the annotation is byte-for-byte what upstream writes for the
//! same stack. A key the shapes below do not know (none is rendered today) is written after the
//! known ones, sorted, never dropped.

use serde_json::Value;

use super::values::*;

/// How Go marshals one value of upstream's schema.
pub(super) enum Shape {
    /// A scalar, a token (`{"$ref": ...}`) or a Go map of scalars: keys sorted.
    Any,
    /// A Go struct: its JSON field names in declaration order, with their shapes.
    Struct(&'static [(&'static str, &'static Shape)]),
    /// A slice of one shape.
    List(&'static Shape),
    /// A Go map (keys sorted) of one shape.
    Map(&'static Shape),
    /// A Go map (keys sorted) whose values' shape depends on the key (the plan's resource types).
    Keyed(&'static [(&'static str, &'static Shape)]),
}

use Shape::{Any, Keyed, List, Map, Struct};

const ANY: Shape = Any;

// --- pkg/model/elbv2: load balancers (load_balancer.go)
const SUBNET_MAPPING: Shape = Struct(&[
    ("allocationID", &ANY),
    ("privateIPv4Address", &ANY),
    ("ipv6Address", &ANY),
    ("sourceNatIpv6Prefix", &ANY),
    ("subnetID", &ANY),
]);
const SUBNET_MAPPINGS: Shape = List(&SUBNET_MAPPING);
/// `LoadBalancerAttribute`, `TargetGroupAttribute`.
const KEY_VALUE: Shape = Struct(&[("key", &ANY), ("value", &ANY)]);
const KEY_VALUES: Shape = List(&KEY_VALUE);
const LOAD_BALANCER_SPEC: Shape = Struct(&[
    ("name", &ANY),
    ("type", &ANY),
    ("scheme", &ANY),
    ("ipAddressType", &ANY),
    ("enablePrefixForIpv6SourceNat", &ANY),
    ("subnetMapping", &SUBNET_MAPPINGS),
    ("securityGroups", &ANY),
    ("securityGroupsInboundRulesOnPrivateLink", &ANY),
    ("customerOwnedIPv4Pool", &ANY),
    ("loadBalancerAttributes", &KEY_VALUES),
    ("minimumLoadBalancerCapacity", &ANY),
    ("tags", &ANY),
    ("ipv4IPAMPool", &ANY),
]);

// --- pkg/model/elbv2: listeners and actions (listener.go)
const AUTHENTICATE_COGNITO: Shape = Struct(&[
    ("authenticationRequestExtraParams", &ANY),
    ("onUnauthenticatedRequest", &ANY),
    ("scope", &ANY),
    ("sessionCookieName", &ANY),
    ("sessionTimeout", &ANY),
    ("userPoolARN", &ANY),
    ("userPoolClientID", &ANY),
    ("userPoolDomain", &ANY),
]);
const AUTHENTICATE_OIDC: Shape = Struct(&[
    ("authenticationRequestExtraParams", &ANY),
    ("onUnauthenticatedRequest", &ANY),
    ("scope", &ANY),
    ("sessionCookieName", &ANY),
    ("sessionTimeout", &ANY),
    ("issuer", &ANY),
    ("authorizationEndpoint", &ANY),
    ("tokenEndpoint", &ANY),
    ("userInfoEndpoint", &ANY),
    ("clientID", &ANY),
    ("clientSecret", &ANY),
]);
const JWT_CLAIM: Shape = Struct(&[("format", &ANY), ("name", &ANY), ("values", &ANY)]);
const JWT_CLAIMS: Shape = List(&JWT_CLAIM);
const JWT_VALIDATION: Shape = Struct(&[
    ("jwksEndpoint", &ANY),
    ("issuer", &ANY),
    ("additionalClaims", &JWT_CLAIMS),
]);
const FIXED_RESPONSE: Shape = Struct(&[
    ("contentType", &ANY),
    ("messageBody", &ANY),
    ("statusCode", &ANY),
]);
const REDIRECT: Shape = Struct(&[
    ("host", &ANY),
    ("path", &ANY),
    ("port", &ANY),
    ("protocol", &ANY),
    ("query", &ANY),
    ("statusCode", &ANY),
]);
const TARGET_GROUP_TUPLE: Shape = Struct(&[("targetGroupARN", &ANY), ("weight", &ANY)]);
const TARGET_GROUP_TUPLES: Shape = List(&TARGET_GROUP_TUPLE);
const STICKINESS: Shape = Struct(&[("enabled", &ANY), ("durationSeconds", &ANY)]);
const FORWARD: Shape = Struct(&[
    ("targetGroups", &TARGET_GROUP_TUPLES),
    ("targetGroupStickinessConfig", &STICKINESS),
]);
const ACTION: Shape = Struct(&[
    ("type", &ANY),
    ("authenticateCognitoConfig", &AUTHENTICATE_COGNITO),
    ("authenticateOIDCConfig", &AUTHENTICATE_OIDC),
    ("jwtValidationConfig", &JWT_VALIDATION),
    ("fixedResponseConfig", &FIXED_RESPONSE),
    ("redirectConfig", &REDIRECT),
    ("forwardConfig", &FORWARD),
]);
const ACTIONS: Shape = List(&ACTION);
const MUTUAL_AUTHENTICATION: Shape = Struct(&[
    ("mode", &ANY),
    ("trustStoreArn", &ANY),
    ("ignoreClientCertificateExpiry", &ANY),
    ("advertiseTrustStoreCaNames", &ANY),
]);
/// `ListenerAttribute` has no JSON tags: Go writes its field names.
const LISTENER_ATTRIBUTE: Shape = Struct(&[("Key", &ANY), ("Value", &ANY)]);
const LISTENER_ATTRIBUTES: Shape = List(&LISTENER_ATTRIBUTE);
const LISTENER_SPEC: Shape = Struct(&[
    ("loadBalancerARN", &ANY),
    ("port", &ANY),
    ("protocol", &ANY),
    ("defaultActions", &ACTIONS),
    ("certificates", &ANY),
    ("sslPolicy", &ANY),
    ("alpnPolicy", &ANY),
    ("mutualAuthentication", &MUTUAL_AUTHENTICATION),
    ("tags", &ANY),
    ("listenerAttributes", &LISTENER_ATTRIBUTES),
]);

// --- pkg/model/elbv2: listener rules (listener_rule.go)
/// Host-header and path-pattern configurations.
const REGEX_VALUES: Shape = Struct(&[("regexValues", &ANY), ("values", &ANY)]);
const HTTP_HEADER: Shape = Struct(&[
    ("httpHeaderName", &ANY),
    ("regexValues", &ANY),
    ("values", &ANY),
]);
const QUERY_STRING_PAIR: Shape = Struct(&[("key", &ANY), ("value", &ANY)]);
const QUERY_STRING_PAIRS: Shape = List(&QUERY_STRING_PAIR);
const QUERY_STRING: Shape = Struct(&[("values", &QUERY_STRING_PAIRS)]);
const CONDITION: Shape = Struct(&[
    ("field", &ANY),
    ("hostHeaderConfig", &REGEX_VALUES),
    ("httpHeaderConfig", &HTTP_HEADER),
    ("httpRequestMethodConfig", &ANY),
    ("pathPatternConfig", &REGEX_VALUES),
    ("queryStringConfig", &QUERY_STRING),
    ("sourceIPConfig", &ANY),
]);
const CONDITIONS: Shape = List(&CONDITION);
const REWRITE: Shape = Struct(&[("regex", &ANY), ("replace", &ANY)]);
const REWRITES: Shape = List(&REWRITE);
const REWRITE_CONFIG: Shape = Struct(&[("rewrites", &REWRITES)]);
const TRANSFORM: Shape = Struct(&[
    ("type", &ANY),
    ("hostHeaderRewriteConfig", &REWRITE_CONFIG),
    ("urlRewriteConfig", &REWRITE_CONFIG),
]);
const TRANSFORMS: Shape = List(&TRANSFORM);
const LISTENER_RULE_SPEC: Shape = Struct(&[
    ("listenerARN", &ANY),
    ("priority", &ANY),
    ("actions", &ACTIONS),
    ("conditions", &CONDITIONS),
    ("transforms", &TRANSFORMS),
    ("tags", &ANY),
]);

// --- pkg/model/elbv2: target groups (target_group.go, frontend_nlb_target_group.go)
const MATCHER: Shape = Struct(&[("httpCode", &ANY), ("grpcCode", &ANY)]);
const HEALTH_CHECK: Shape = Struct(&[
    ("port", &ANY),
    ("protocol", &ANY),
    ("path", &ANY),
    ("matcher", &MATCHER),
    ("intervalSeconds", &ANY),
    ("timeoutSeconds", &ANY),
    ("healthyThresholdCount", &ANY),
    ("unhealthyThresholdCount", &ANY),
]);
const TARGET_GROUP_SPEC: Shape = Struct(&[
    ("name", &ANY),
    ("targetType", &ANY),
    ("port", &ANY),
    ("protocol", &ANY),
    ("protocolVersion", &ANY),
    ("ipAddressType", &ANY),
    ("healthCheckConfig", &HEALTH_CHECK),
    ("targetGroupAttributes", &KEY_VALUES),
    ("tags", &ANY),
    ("targetControlPort", &ANY),
]);
/// `FrontendNlbTargetGroupState` has no JSON tags: Go writes its field names.
const FRONTEND_STATE: Shape = Struct(&[
    ("Name", &ANY),
    ("ARN", &ANY),
    ("Port", &ANY),
    ("TargetARN", &ANY),
    ("TargetPort", &ANY),
]);
const FRONTEND_STATES: Shape = Map(&FRONTEND_STATE);
/// `FrontendNlbTargetGroupDesiredState`: the struct itself, not a `spec`.
const FRONTEND_DESIRED_STATE: Shape = Struct(&[("TargetGroups", &FRONTEND_STATES)]);

// --- pkg/model/ec2 (security_group.go, security_group_ingress.go)
const IP_RANGE: Shape = Struct(&[("cidrIP", &ANY), ("description", &ANY)]);
const IP_RANGES: Shape = List(&IP_RANGE);
const IPV6_RANGE: Shape = Struct(&[("cidrIPv6", &ANY), ("description", &ANY)]);
const IPV6_RANGES: Shape = List(&IPV6_RANGE);
const GROUP_PAIR: Shape = Struct(&[("groupID", &ANY), ("description", &ANY)]);
const GROUP_PAIRS: Shape = List(&GROUP_PAIR);
const PREFIX_LIST: Shape = Struct(&[("listID", &ANY), ("description", &ANY)]);
const PREFIX_LISTS: Shape = List(&PREFIX_LIST);
const IP_PERMISSION: Shape = Struct(&[
    ("ipProtocol", &ANY),
    ("fromPort", &ANY),
    ("toPort", &ANY),
    ("ipRanges", &IP_RANGES),
    ("ipv6Ranges", &IPV6_RANGES),
    ("userIDGroupPairs", &GROUP_PAIRS),
    ("prefixLists", &PREFIX_LISTS),
]);
const IP_PERMISSIONS: Shape = List(&IP_PERMISSION);
const SECURITY_GROUP_SPEC: Shape = Struct(&[
    ("groupName", &ANY),
    ("description", &ANY),
    ("tags", &ANY),
    ("ingress", &IP_PERMISSIONS),
]);

// --- pkg/model/elbv2/k8s (target_group_binding.go), apis/elbv2/v1beta1, metav1
const OBJECT_META: Shape = Struct(&[
    ("name", &ANY),
    ("generateName", &ANY),
    ("namespace", &ANY),
    ("selfLink", &ANY),
    ("uid", &ANY),
    ("resourceVersion", &ANY),
    ("generation", &ANY),
    ("creationTimestamp", &ANY),
    ("deletionTimestamp", &ANY),
    ("deletionGracePeriodSeconds", &ANY),
    ("labels", &ANY),
    ("annotations", &ANY),
    ("ownerReferences", &ANY),
    ("finalizers", &ANY),
    ("managedFields", &ANY),
]);
const SERVICE_REF: Shape = Struct(&[("name", &ANY), ("port", &ANY)]);
const IP_BLOCK: Shape = Struct(&[("cidr", &ANY)]);
const PEER_GROUP: Shape = Struct(&[("groupID", &ANY)]);
const PEER: Shape = Struct(&[("ipBlock", &IP_BLOCK), ("securityGroup", &PEER_GROUP)]);
const PEERS: Shape = List(&PEER);
const NETWORKING_PORT: Shape = Struct(&[("protocol", &ANY), ("port", &ANY)]);
const NETWORKING_PORTS: Shape = List(&NETWORKING_PORT);
const INGRESS_RULE: Shape = Struct(&[("from", &PEERS), ("ports", &NETWORKING_PORTS)]);
const INGRESS_RULES: Shape = List(&INGRESS_RULE);
const NETWORKING: Shape = Struct(&[("ingress", &INGRESS_RULES)]);
const REQUIREMENT: Shape = Struct(&[("key", &ANY), ("operator", &ANY), ("values", &ANY)]);
const REQUIREMENTS: Shape = List(&REQUIREMENT);
const LABEL_SELECTOR: Shape = Struct(&[("matchLabels", &ANY), ("matchExpressions", &REQUIREMENTS)]);
const BINDING_SPEC: Shape = Struct(&[
    ("targetGroupARN", &ANY),
    ("targetType", &ANY),
    ("serviceRef", &SERVICE_REF),
    ("networking", &NETWORKING),
    ("nodeSelector", &LABEL_SELECTOR),
    ("ipAddressType", &ANY),
    ("vpcID", &ANY),
    ("multiClusterTargetGroup", &ANY),
    ("targetGroupProtocol", &ANY),
]);
const BINDING_TEMPLATE: Shape = Struct(&[("metadata", &OBJECT_META), ("spec", &BINDING_SPEC)]);
const BINDING_RESOURCE_SPEC: Shape = Struct(&[("template", &BINDING_TEMPLATE)]);

// --- pkg/model/acm, wafv2, wafregional, shield
const CERTIFICATE_SPEC: Shape = Struct(&[
    ("type", &ANY),
    ("certificateAuthorityARN", &ANY),
    ("domainName", &ANY),
    ("subjectAlternativeNames", &ANY),
    ("validationMethod", &ANY),
    ("keyAlgorithm", &ANY),
    ("tags", &ANY),
]);
const WAFV2_SPEC: Shape = Struct(&[("webACLARN", &ANY), ("resourceARN", &ANY)]);
const WAF_REGIONAL_SPEC: Shape = Struct(&[("webACLID", &ANY), ("resourceARN", &ANY)]);
const SHIELD_SPEC: Shape = Struct(&[("enabled", &ANY), ("resourceARN", &ANY)]);

// --- The resources: `{"spec": ..., "status": ...}` (status is nil in a plan), by id.
const LOAD_BALANCERS: Shape = Map(&Struct(&[("spec", &LOAD_BALANCER_SPEC), ("status", &ANY)]));
const LISTENERS: Shape = Map(&Struct(&[("spec", &LISTENER_SPEC), ("status", &ANY)]));
const LISTENER_RULES: Shape = Map(&Struct(&[("spec", &LISTENER_RULE_SPEC), ("status", &ANY)]));
const TARGET_GROUPS: Shape = Map(&Struct(&[("spec", &TARGET_GROUP_SPEC), ("status", &ANY)]));
const SECURITY_GROUPS: Shape = Map(&Struct(&[("spec", &SECURITY_GROUP_SPEC), ("status", &ANY)]));
const BINDINGS: Shape = Map(&Struct(&[
    ("spec", &BINDING_RESOURCE_SPEC),
    ("status", &ANY),
]));
const CERTIFICATES: Shape = Map(&Struct(&[("spec", &CERTIFICATE_SPEC), ("status", &ANY)]));
const WAFV2_ASSOCIATIONS: Shape = Map(&Struct(&[("spec", &WAFV2_SPEC)]));
const WAF_REGIONAL_ASSOCIATIONS: Shape = Map(&Struct(&[("spec", &WAF_REGIONAL_SPEC)]));
const SHIELD_PROTECTIONS: Shape = Map(&Struct(&[("spec", &SHIELD_SPEC)]));
const FRONTEND_NLB_STATES: Shape = Map(&FRONTEND_DESIRED_STATE);

const RESOURCES: Shape = Keyed(&[
    (LOAD_BALANCER, &LOAD_BALANCERS),
    (LISTENER, &LISTENERS),
    (LISTENER_RULE, &LISTENER_RULES),
    (TARGET_GROUP, &TARGET_GROUPS),
    (SECURITY_GROUP, &SECURITY_GROUPS),
    (TARGET_GROUP_BINDING, &BINDINGS),
    (CERTIFICATE, &CERTIFICATES),
    (WAFV2_ASSOCIATION, &WAFV2_ASSOCIATIONS),
    (WAF_REGIONAL_ASSOCIATION, &WAF_REGIONAL_ASSOCIATIONS),
    (SHIELD_PROTECTION, &SHIELD_PROTECTIONS),
    (FRONTEND_NLB_TARGET_GROUP, &FRONTEND_NLB_STATES),
]);

/// `deploy.StackSchema`: `{"id", "resources"}`.
pub(super) const PLAN: Shape = Struct(&[("id", &ANY), ("resources", &RESOURCES)]);

/// `v` as compact JSON text, objects' keys in the order `shape` gives (no HTML escaping: the
/// caller adds Go's).
pub(super) fn write(v: &Value, shape: &Shape, out: &mut String) {
    match v {
        Value::Object(m) => {
            out.push('{');
            let mut first = true;
            let mut field = |k: &str, v: &Value, s: &Shape, out: &mut String| {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&Value::from(k).to_string());
                out.push(':');
                write(v, s, out);
            };
            match shape {
                Struct(fields) => {
                    for &(name, s) in fields.iter() {
                        if let Some(v) = m.get(name) {
                            field(name, v, s, &mut *out);
                        }
                    }
                    let known = |k: &str| fields.iter().any(|&(name, _)| name == k);
                    for (k, v) in m.iter().filter(|(k, _)| !known(k.as_str())) {
                        field(k.as_str(), v, &ANY, &mut *out);
                    }
                }
                Map(s) => {
                    for (k, v) in m {
                        field(k.as_str(), v, s, &mut *out);
                    }
                }
                Keyed(by_key) => {
                    for (k, v) in m {
                        let s = by_key
                            .iter()
                            .find(|&&(name, _)| name == k.as_str())
                            .map_or(&ANY, |&(_, s)| s);
                        field(k.as_str(), v, s, &mut *out);
                    }
                }
                Any | List(_) => {
                    for (k, v) in m {
                        field(k.as_str(), v, &ANY, &mut *out);
                    }
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            let item = match shape {
                List(s) => *s,
                _ => &ANY,
            };
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(v, item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}
