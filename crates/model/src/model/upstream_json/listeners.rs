//! Listeners and listener rules in upstream's schema: actions (forward targets as
//! references, upstream's Cognito/OIDC field names with the OIDC client redacted as upstream
//! marshals it), certificates (created ones as references), mTLS and attributes with upstream's
//! names; and the ACM certificates the stack creates.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::values::{opt, put, user_tags, Renderer};
use crate::model::types::*;

impl Renderer<'_> {
    fn action(&self, a: &Action) -> Value {
        match a {
            Action::Forward { config } => {
                let tgs: Vec<Value> = config
                    .target_groups
                    .iter()
                    .map(|t| {
                        let mut o = json!({"targetGroupARN": self.token(&t.target_group_arn)});
                        put(&mut o, "weight", opt(t.weight.as_ref()));
                        o
                    })
                    .collect();
                let mut f = json!({ "targetGroups": tgs });
                put(
                    &mut f,
                    "targetGroupStickinessConfig",
                    opt(config.target_group_stickiness_config.as_ref()),
                );
                json!({"type": "forward", "forwardConfig": f})
            }
            Action::AuthenticateCognito { config: c } => {
                let mut o = json!({"userPoolARN": c.user_pool_arn,
                    "userPoolClientID": c.user_pool_client_id, "userPoolDomain": c.user_pool_domain});
                auth_common(
                    &mut o,
                    &c.authentication_request_extra_params,
                    &c.on_unauthenticated_request,
                    &c.scope,
                    &c.session_cookie_name,
                    c.session_timeout,
                );
                json!({"type": "authenticate-cognito", "authenticateCognitoConfig": o})
            }
            Action::AuthenticateOidc { config: c } => {
                // Upstream redacts the client credentials when marshalling.
                let mut o = json!({"issuer": c.issuer, "authorizationEndpoint": c.authorization_endpoint,
                    "tokenEndpoint": c.token_endpoint, "userInfoEndpoint": c.user_info_endpoint,
                    "clientID": "[REDACTED]", "clientSecret": "[REDACTED]"});
                auth_common(
                    &mut o,
                    &c.authentication_request_extra_params,
                    &c.on_unauthenticated_request,
                    &c.scope,
                    &c.session_cookie_name,
                    c.session_timeout,
                );
                json!({"type": "authenticate-oidc", "authenticateOIDCConfig": o})
            }
            // Fixed response, redirect and JWT validation carry upstream's field names already.
            other => json!(other),
        }
    }

    pub(super) fn listener(&self, l: &Listener) -> Value {
        let mut o = json!({"loadBalancerARN": self.token(&l.load_balancer_arn), "port": l.port,
            "protocol": l.protocol});
        if !l.default_actions.is_empty() {
            o["defaultActions"] = l.default_actions.iter().map(|a| self.action(a)).collect();
        }
        // Upstream wraps an existing certificate's ARN in a resource without type or id, so
        // its marshalled reference carries neither (and no ARN); a certificate it creates is
        // referenced by its resource.
        let existing = json!({"$ref": "#/resources///status/certificateARN"});
        let tokens = self
            .stack
            .listener_certificate_tokens(l)
            .unwrap_or_else(|| {
                l.certificates
                    .iter()
                    .map(|a| Token::Literal(a.clone()))
                    .collect()
            });
        let certs: Vec<Value> = tokens
            .iter()
            .map(|t| match t {
                Token::Literal(_) => json!({"certificateARN": existing.clone()}),
                other => json!({"certificateARN": self.token(other)}),
            })
            .collect();
        put(
            &mut o,
            "certificates",
            (!certs.is_empty()).then(|| json!(certs)),
        );
        put(&mut o, "sslPolicy", opt(l.ssl_policy.as_ref()));
        put(
            &mut o,
            "alpnPolicy",
            l.alpn_policy.as_ref().map(|v| json!([v])),
        );
        put(
            &mut o,
            "mutualAuthentication",
            l.mutual_authentication.as_ref().map(|m| {
                let mut a = json!({"mode": m.mode});
                put(&mut a, "trustStoreArn", opt(m.trust_store.as_ref()));
                put(
                    &mut a,
                    "ignoreClientCertificateExpiry",
                    opt(m.ignore_client_certificate_expiry.as_ref()),
                );
                put(
                    &mut a,
                    "advertiseTrustStoreCaNames",
                    opt(m.advertise_trust_store_ca_names.as_ref()),
                );
                a
            }),
        );
        put(&mut o, "tags", user_tags(&l.tags));
        // Upstream's listener attribute has no JSON tags: Go writes the field names.
        put(
            &mut o,
            "listenerAttributes",
            (!l.attributes.is_empty()).then(|| {
                l.attributes
                    .iter()
                    .map(|(k, v)| json!({"Key": k, "Value": v}))
                    .collect()
            }),
        );
        o
    }

    pub(super) fn rule(&self, r: &ListenerRule) -> Value {
        let mut o = json!({"listenerARN": self.token(&r.listener_arn), "priority": r.priority,
            "actions": r.actions.iter().map(|a| self.action(a)).collect::<Vec<_>>(),
            "conditions": r.conditions});
        put(
            &mut o,
            "transforms",
            (!r.transforms.is_empty()).then(|| json!(r.transforms)),
        );
        put(&mut o, "tags", user_tags(&r.tags));
        o
    }
}

/// The optional fields Cognito and OIDC share; upstream's builder always sets scope, cookie
/// name and timeout, and leaves an empty `onUnauthenticatedRequest` out.
fn auth_common(
    o: &mut Value,
    extra: &BTreeMap<String, String>,
    on_unauthenticated: &str,
    scope: &str,
    cookie: &str,
    timeout: i64,
) {
    put(
        o,
        "authenticationRequestExtraParams",
        (!extra.is_empty()).then(|| json!(extra)),
    );
    put(
        o,
        "onUnauthenticatedRequest",
        (!on_unauthenticated.is_empty()).then(|| json!(on_unauthenticated)),
    );
    o["scope"] = json!(scope);
    o["sessionCookieName"] = json!(cookie);
    o["sessionTimeout"] = json!(timeout);
}

/// A certificate's spec as upstream marshals it: the CA and key algorithm always present
/// (empty when unset), tags only when any.
pub(super) fn certificate(c: &Certificate) -> Value {
    let mut o = json!({
        "type": c.cert_type.as_str(),
        "certificateAuthorityARN": c.certificate_authority_arn.clone().unwrap_or_default(),
        "domainName": c.domain_name,
        "subjectAlternativeNames": c.subject_alternative_names,
        "validationMethod": c.validation_method,
        "keyAlgorithm": c.key_algorithm.clone().unwrap_or_default(),
    });
    put(&mut o, "tags", user_tags(&c.tags));
    o
}
