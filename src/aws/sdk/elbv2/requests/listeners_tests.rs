//! Every field reaches the SDK. For each listener and rule write, a table of the model's fields
//! and where each goes: the SDK parameter upstream sends it as (`pkg/deploy/elbv2/
//! listener_manager.go`, `listener_rule_manager.go`, `listener_utils.go`), or why it is not part
//! of that call. A model value with every field set to a non-default value goes through the
//! call's one request builder and each sent field is read back from the SDK input. The model
//! structs are destructured here without `..` as well: a new field does not compile until it
//! is placed in a table and checked, and the tables must name exactly the fields checked.

use std::collections::BTreeMap;

use aws_sdk_elasticloadbalancingv2::types as et;

use super::*;
use crate::model::action::{
    HttpHeaderConfig, JwtAdditionalClaim, ListConfig, QueryStringConfig, QueryStringPair, Rewrite,
    RewriteConfigObject, ValuesConfig,
};
use crate::model::{
    Action, AuthenticateCognitoConfig, AuthenticateOidcConfig, FixedResponseConfig, ForwardConfig,
    JwtValidationConfig, MutualAuthentication, Protocol, Redacted, RedirectConfig, RuleCondition,
    StickinessConfig, TargetGroupTuple, Token,
};

/// Where a model field goes in a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum To {
    /// Sent as this SDK parameter.
    Sdk(&'static str),
    /// Not part of the call, and why.
    Not(&'static str),
}

const CREATE_LISTENER: &[(&str, To)] = &[
    (
        "id",
        To::Not("the model's resource id: the resource tag carries it"),
    ),
    ("load_balancer_arn", To::Sdk("LoadBalancerArn")),
    ("port", To::Sdk("Port")),
    ("protocol", To::Sdk("Protocol")),
    ("default_actions", To::Sdk("DefaultActions")),
    ("certificates", To::Sdk("Certificates")),
    (
        "certificate_discovery",
        To::Not("must be empty: ACM discovery completes `certificates` before any write"),
    ),
    ("ssl_policy", To::Sdk("SslPolicy")),
    ("mutual_authentication", To::Sdk("MutualAuthentication")),
    ("alpn_policy", To::Sdk("AlpnPolicy")),
    ("attributes", To::Not("ModifyListenerAttributes")),
    ("tags", To::Sdk("Tags")),
];

const MODIFY_LISTENER: &[(&str, To)] = &[
    (
        "id",
        To::Not("the model's resource id: the resource tag carries it"),
    ),
    (
        "load_balancer_arn",
        To::Not("a listener does not move: ListenerArn names it"),
    ),
    ("port", To::Sdk("Port")),
    ("protocol", To::Sdk("Protocol")),
    ("default_actions", To::Sdk("DefaultActions")),
    ("certificates", To::Sdk("Certificates")),
    (
        "certificate_discovery",
        To::Not("must be empty: ACM discovery completes `certificates` before any write"),
    ),
    ("ssl_policy", To::Sdk("SslPolicy")),
    ("mutual_authentication", To::Sdk("MutualAuthentication")),
    ("alpn_policy", To::Sdk("AlpnPolicy")),
    ("attributes", To::Not("ModifyListenerAttributes")),
    ("tags", To::Not("AddTags / RemoveTags")),
];

const CREATE_RULE: &[(&str, To)] = &[
    (
        "id",
        To::Not("the model's resource id: the resource tag carries it"),
    ),
    ("listener_arn", To::Sdk("ListenerArn")),
    ("priority", To::Sdk("Priority")),
    ("ingress", To::Not("the Ingress the rule comes from")),
    ("conditions", To::Sdk("Conditions")),
    ("actions", To::Sdk("Actions")),
    ("transforms", To::Sdk("Transforms")),
    ("tags", To::Sdk("Tags")),
];

const MODIFY_RULE: &[(&str, To)] = &[
    (
        "id",
        To::Not("the model's resource id: the resource tag carries it"),
    ),
    (
        "listener_arn",
        To::Not("a rule does not move: RuleArn names it"),
    ),
    ("priority", To::Not("SetRulePriorities")),
    ("ingress", To::Not("the Ingress the rule comes from")),
    ("conditions", To::Sdk("Conditions")),
    ("actions", To::Sdk("Actions")),
    (
        "transforms",
        To::Sdk("Transforms (ResetTransforms when none)"),
    ),
    ("tags", To::Not("AddTags / RemoveTags")),
];

/// Every action's fields (DefaultActions of CreateListener / ModifyListener, Actions of
/// CreateRule / ModifyRule; `Order` is the position, not a field).
const ACTION: &[(&str, To)] = &[
    (
        "forward.target_groups[].target_group_arn",
        To::Sdk("ForwardConfig.TargetGroups[].TargetGroupArn"),
    ),
    (
        "forward.target_groups[].weight",
        To::Sdk("ForwardConfig.TargetGroups[].Weight"),
    ),
    (
        "forward.target_group_stickiness_config.enabled",
        To::Sdk("ForwardConfig.TargetGroupStickinessConfig.Enabled"),
    ),
    (
        "forward.target_group_stickiness_config.duration_seconds",
        To::Sdk("ForwardConfig.TargetGroupStickinessConfig.DurationSeconds"),
    ),
    ("redirect.host", To::Sdk("RedirectConfig.Host")),
    ("redirect.path", To::Sdk("RedirectConfig.Path")),
    ("redirect.port", To::Sdk("RedirectConfig.Port")),
    ("redirect.protocol", To::Sdk("RedirectConfig.Protocol")),
    ("redirect.query", To::Sdk("RedirectConfig.Query")),
    ("redirect.status_code", To::Sdk("RedirectConfig.StatusCode")),
    (
        "fixed_response.content_type",
        To::Sdk("FixedResponseConfig.ContentType"),
    ),
    (
        "fixed_response.message_body",
        To::Sdk("FixedResponseConfig.MessageBody"),
    ),
    (
        "fixed_response.status_code",
        To::Sdk("FixedResponseConfig.StatusCode"),
    ),
    (
        "authenticate_cognito.user_pool_arn",
        To::Sdk("AuthenticateCognitoConfig.UserPoolArn"),
    ),
    (
        "authenticate_cognito.user_pool_client_id",
        To::Sdk("AuthenticateCognitoConfig.UserPoolClientId"),
    ),
    (
        "authenticate_cognito.user_pool_domain",
        To::Sdk("AuthenticateCognitoConfig.UserPoolDomain"),
    ),
    (
        "authenticate_cognito.authentication_request_extra_params",
        To::Sdk("AuthenticateCognitoConfig.AuthenticationRequestExtraParams"),
    ),
    (
        "authenticate_cognito.on_unauthenticated_request",
        To::Sdk("AuthenticateCognitoConfig.OnUnauthenticatedRequest"),
    ),
    (
        "authenticate_cognito.scope",
        To::Sdk("AuthenticateCognitoConfig.Scope"),
    ),
    (
        "authenticate_cognito.session_cookie_name",
        To::Sdk("AuthenticateCognitoConfig.SessionCookieName"),
    ),
    (
        "authenticate_cognito.session_timeout",
        To::Sdk("AuthenticateCognitoConfig.SessionTimeout"),
    ),
    (
        "authenticate_oidc.issuer",
        To::Sdk("AuthenticateOidcConfig.Issuer"),
    ),
    (
        "authenticate_oidc.authorization_endpoint",
        To::Sdk("AuthenticateOidcConfig.AuthorizationEndpoint"),
    ),
    (
        "authenticate_oidc.token_endpoint",
        To::Sdk("AuthenticateOidcConfig.TokenEndpoint"),
    ),
    (
        "authenticate_oidc.user_info_endpoint",
        To::Sdk("AuthenticateOidcConfig.UserInfoEndpoint"),
    ),
    (
        "authenticate_oidc.secret",
        To::Not("the Secret the client id and secret were read from"),
    ),
    (
        "authenticate_oidc.client_id",
        To::Sdk("AuthenticateOidcConfig.ClientId"),
    ),
    (
        "authenticate_oidc.client_secret",
        To::Sdk("AuthenticateOidcConfig.ClientSecret"),
    ),
    (
        "authenticate_oidc.authentication_request_extra_params",
        To::Sdk("AuthenticateOidcConfig.AuthenticationRequestExtraParams"),
    ),
    (
        "authenticate_oidc.on_unauthenticated_request",
        To::Sdk("AuthenticateOidcConfig.OnUnauthenticatedRequest"),
    ),
    (
        "authenticate_oidc.scope",
        To::Sdk("AuthenticateOidcConfig.Scope"),
    ),
    (
        "authenticate_oidc.session_cookie_name",
        To::Sdk("AuthenticateOidcConfig.SessionCookieName"),
    ),
    (
        "authenticate_oidc.session_timeout",
        To::Sdk("AuthenticateOidcConfig.SessionTimeout"),
    ),
    (
        "authenticate_oidc.use_existing_client_secret",
        To::Sdk("AuthenticateOidcConfig.UseExistingClientSecret"),
    ),
    (
        "jwt_validation.jwks_endpoint",
        To::Sdk("JwtValidationConfig.JwksEndpoint"),
    ),
    (
        "jwt_validation.issuer",
        To::Sdk("JwtValidationConfig.Issuer"),
    ),
    (
        "jwt_validation.additional_claims[].format",
        To::Sdk("JwtValidationConfig.AdditionalClaims[].Format"),
    ),
    (
        "jwt_validation.additional_claims[].name",
        To::Sdk("JwtValidationConfig.AdditionalClaims[].Name"),
    ),
    (
        "jwt_validation.additional_claims[].values",
        To::Sdk("JwtValidationConfig.AdditionalClaims[].Values"),
    ),
];

/// Every condition's fields (Conditions of CreateRule / ModifyRule; `Field` is the kind).
const CONDITION: &[(&str, To)] = &[
    ("host_header.values", To::Sdk("HostHeaderConfig.Values")),
    (
        "host_header.regex_values",
        To::Sdk("HostHeaderConfig.RegexValues"),
    ),
    ("path_pattern.values", To::Sdk("PathPatternConfig.Values")),
    (
        "path_pattern.regex_values",
        To::Sdk("PathPatternConfig.RegexValues"),
    ),
    (
        "http_header.http_header_name",
        To::Sdk("HttpHeaderConfig.HttpHeaderName"),
    ),
    ("http_header.values", To::Sdk("HttpHeaderConfig.Values")),
    (
        "http_header.regex_values",
        To::Sdk("HttpHeaderConfig.RegexValues"),
    ),
    (
        "http_request_method.values",
        To::Sdk("HttpRequestMethodConfig.Values"),
    ),
    (
        "query_string.values[].key",
        To::Sdk("QueryStringConfig.Values[].Key"),
    ),
    (
        "query_string.values[].value",
        To::Sdk("QueryStringConfig.Values[].Value"),
    ),
    ("source_ip.values", To::Sdk("SourceIpConfig.Values")),
];

/// Every transform's fields (Transforms of CreateRule / ModifyRule).
const TRANSFORM: &[(&str, To)] = &[
    ("transform_type", To::Sdk("Type")),
    (
        "host_header_rewrite_config.rewrites[].regex",
        To::Sdk("HostHeaderRewriteConfig.Rewrites[].Regex"),
    ),
    (
        "host_header_rewrite_config.rewrites[].replace",
        To::Sdk("HostHeaderRewriteConfig.Rewrites[].Replace"),
    ),
    (
        "url_rewrite_config.rewrites[].regex",
        To::Sdk("UrlRewriteConfig.Rewrites[].Regex"),
    ),
    (
        "url_rewrite_config.rewrites[].replace",
        To::Sdk("UrlRewriteConfig.Rewrites[].Replace"),
    ),
];

/// The listener's mutual authentication (MutualAuthentication of CreateListener /
/// ModifyListener); the trust store is an ARN by the time it is sent.
const MUTUAL_AUTHENTICATION: &[(&str, To)] = &[
    ("mode", To::Sdk("Mode")),
    ("trust_store", To::Sdk("TrustStoreArn")),
    (
        "ignore_client_certificate_expiry",
        To::Sdk("IgnoreClientCertificateExpiry"),
    ),
    (
        "advertise_trust_store_ca_names",
        To::Sdk("AdvertiseTrustStoreCaNames"),
    ),
];

/// The fields a check went through, each once, sent or not.
#[derive(Default, Debug)]
struct Checked(Vec<(&'static str, bool)>);

impl Checked {
    fn sent(&mut self, field: &'static str) {
        self.note(field, true);
    }

    fn not_sent(&mut self, field: &'static str) {
        self.note(field, false);
    }

    fn note(&mut self, field: &'static str, sent: bool) {
        if !self.0.iter().any(|(f, _)| *f == field) {
            self.0.push((field, sent));
        }
    }

    /// Exactly the table's fields were checked, each sent or not as the table says.
    fn covers(&self, table: &[(&'static str, To)]) {
        let mut got = self.0.clone();
        got.sort();
        let mut want: Vec<(&str, bool)> = table
            .iter()
            .map(|(f, to)| (*f, matches!(to, To::Sdk(_))))
            .collect();
        want.sort();
        want.dedup();
        assert_eq!(want.len(), table.len(), "a field is twice in the table");
        assert_eq!(got, want);
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// One action of each kind, every field set to something other than its default.
fn full_actions() -> Vec<Action> {
    vec![
        Action::JwtValidation {
            config: JwtValidationConfig {
                jwks_endpoint: "https://idp.example.com/jwks".into(),
                issuer: "https://idp.example.com".into(),
                additional_claims: vec![JwtAdditionalClaim {
                    format: "string-array".into(),
                    name: "groups".into(),
                    values: strings(&["admins", "devs"]),
                }],
            },
        },
        Action::AuthenticateOidc {
            config: AuthenticateOidcConfig {
                issuer: "https://idp.example.com".into(),
                authorization_endpoint: "https://idp.example.com/auth".into(),
                token_endpoint: "https://idp.example.com/token".into(),
                user_info_endpoint: "https://idp.example.com/me".into(),
                secret: "shop/oidc".into(),
                client_id: Redacted::new("client-1"),
                client_secret: Redacted::new("hunter2"),
                authentication_request_extra_params: map(&[("prompt", "login")]),
                on_unauthenticated_request: "allow".into(),
                scope: "openid email".into(),
                session_cookie_name: "oidc-session".into(),
                session_timeout: 900,
                use_existing_client_secret: Some(true),
            },
        },
        Action::AuthenticateCognito {
            config: AuthenticateCognitoConfig {
                user_pool_arn: "arn:aws:cognito-idp:us-west-2:1:userpool/p".into(),
                user_pool_client_id: "pool-client".into(),
                user_pool_domain: "shop-auth".into(),
                authentication_request_extra_params: map(&[("display", "page")]),
                on_unauthenticated_request: "deny".into(),
                scope: "email".into(),
                session_cookie_name: "cognito-session".into(),
                session_timeout: 600,
            },
        },
        Action::Redirect {
            config: RedirectConfig {
                host: Some("www.example.com".into()),
                path: Some("/new".into()),
                port: Some("8443".into()),
                protocol: Some("HTTPS".into()),
                query: Some("from=old".into()),
                status_code: "HTTP_302".into(),
            },
        },
        Action::FixedResponse {
            config: FixedResponseConfig {
                content_type: Some("application/json".into()),
                message_body: Some("{}".into()),
                status_code: "418".into(),
            },
        },
        Action::Forward {
            config: ForwardConfig {
                target_groups: vec![
                    TargetGroupTuple {
                        target_group_arn: Token::Literal("arn:tg/blue".into()),
                        weight: Some(30),
                    },
                    TargetGroupTuple {
                        target_group_arn: Token::Literal("arn:tg/green".into()),
                        weight: Some(70),
                    },
                ],
                target_group_stickiness_config: Some(StickinessConfig {
                    enabled: Some(true),
                    duration_seconds: Some(120),
                }),
            },
        },
    ]
}

fn full_mtls() -> MutualAuthentication {
    MutualAuthentication {
        mode: "verify".into(),
        trust_store: Some("arn:aws:elasticloadbalancing:us-west-2:1:truststore/ca/1".into()),
        ignore_client_certificate_expiry: Some(true),
        advertise_trust_store_ca_names: Some("on".into()),
    }
}

fn full_listener() -> Listener {
    Listener {
        id: "443".into(),
        load_balancer_arn: Token::Literal("arn:lb/app/shop/1".into()),
        port: 8443,
        protocol: Protocol::Https,
        default_actions: full_actions(),
        certificates: strings(&["arn:cert/default", "arn:cert/sni"]),
        // Must be empty when sent (see the table).
        certificate_discovery: vec![],
        ssl_policy: Some("ELBSecurityPolicy-TLS13-1-2-2021-06".into()),
        mutual_authentication: Some(full_mtls()),
        alpn_policy: Some("HTTP2Preferred".into()),
        attributes: map(&[("routing.http.response.server.enabled", "false")]),
        tags: map(&[("team", "shop")]),
    }
}

fn full_conditions() -> Vec<RuleCondition> {
    vec![
        RuleCondition::HostHeader {
            config: ValuesConfig {
                values: strings(&["shop.example.com"]),
                regex_values: strings(&["^api\\."]),
            },
        },
        RuleCondition::PathPattern {
            config: ValuesConfig {
                values: strings(&["/cart/*"]),
                regex_values: strings(&["^/v[0-9]+/"]),
            },
        },
        RuleCondition::HttpHeader {
            config: HttpHeaderConfig {
                http_header_name: "X-Env".into(),
                values: strings(&["blue"]),
                regex_values: strings(&["^gr"]),
            },
        },
        RuleCondition::HttpRequestMethod {
            config: ListConfig {
                values: strings(&["POST"]),
            },
        },
        RuleCondition::QueryString {
            config: QueryStringConfig {
                values: vec![QueryStringPair {
                    key: Some("version".into()),
                    value: "2".into(),
                }],
            },
        },
        RuleCondition::SourceIp {
            config: ListConfig {
                values: strings(&["10.0.0.0/8"]),
            },
        },
    ]
}

fn rewrites(regex: &str, replace: &str) -> Option<RewriteConfigObject> {
    Some(RewriteConfigObject {
        rewrites: vec![Rewrite {
            regex: regex.into(),
            replace: replace.into(),
        }],
    })
}

/// Both kinds, each with its rewrites (between them every field is set).
fn full_transforms() -> Vec<Transform> {
    vec![
        Transform {
            transform_type: "host-header-rewrite".into(),
            host_header_rewrite_config: rewrites("^shop\\.", "store."),
            url_rewrite_config: None,
        },
        Transform {
            transform_type: "url-rewrite".into(),
            host_header_rewrite_config: None,
            url_rewrite_config: rewrites("^/old/(.*)$", "/new/$1"),
        },
    ]
}

fn full_rule() -> ListenerRule {
    ListenerRule {
        id: "443:7".into(),
        listener_arn: Token::Literal("arn:listener/app/shop/1/2".into()),
        priority: 7,
        ingress: "shop/web".into(),
        conditions: full_conditions(),
        actions: full_actions(),
        transforms: full_transforms(),
        tags: map(&[("team", "shop")]),
    }
}

fn sorted(m: Option<&std::collections::HashMap<String, String>>) -> BTreeMap<String, String> {
    m.into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn check_actions(want: &[Action], got: &[et::Action], c: &mut Checked) {
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        assert_eq!(g.order(), Some(i as i32 + 1), "actions keep their order");
        match w {
            Action::Forward { config } => {
                assert_eq!(g.r#type(), Some(&et::ActionTypeEnum::Forward));
                let f = g.forward_config().expect("ForwardConfig");
                let ForwardConfig {
                    target_groups,
                    target_group_stickiness_config,
                } = config;
                assert_eq!(f.target_groups().len(), target_groups.len());
                for (t, s) in target_groups.iter().zip(f.target_groups()) {
                    let TargetGroupTuple {
                        target_group_arn,
                        weight,
                    } = t;
                    assert_eq!(s.target_group_arn(), target_group_arn.literal());
                    c.sent("forward.target_groups[].target_group_arn");
                    assert_eq!(s.weight(), *weight);
                    c.sent("forward.target_groups[].weight");
                }
                let StickinessConfig {
                    enabled,
                    duration_seconds,
                } = target_group_stickiness_config
                    .as_ref()
                    .expect("the full forward has stickiness");
                let st = f
                    .target_group_stickiness_config()
                    .expect("TargetGroupStickinessConfig");
                assert_eq!(st.enabled(), *enabled);
                c.sent("forward.target_group_stickiness_config.enabled");
                assert_eq!(st.duration_seconds(), *duration_seconds);
                c.sent("forward.target_group_stickiness_config.duration_seconds");
            }
            Action::Redirect { config } => {
                assert_eq!(g.r#type(), Some(&et::ActionTypeEnum::Redirect));
                let r = g.redirect_config().expect("RedirectConfig");
                let RedirectConfig {
                    host,
                    path,
                    port,
                    protocol,
                    query,
                    status_code,
                } = config;
                assert_eq!(r.host(), host.as_deref());
                c.sent("redirect.host");
                assert_eq!(r.path(), path.as_deref());
                c.sent("redirect.path");
                assert_eq!(r.port(), port.as_deref());
                c.sent("redirect.port");
                assert_eq!(r.protocol(), protocol.as_deref());
                c.sent("redirect.protocol");
                assert_eq!(r.query(), query.as_deref());
                c.sent("redirect.query");
                assert_eq!(
                    r.status_code().map(|s| s.as_str()),
                    Some(status_code.as_str())
                );
                c.sent("redirect.status_code");
            }
            Action::FixedResponse { config } => {
                assert_eq!(g.r#type(), Some(&et::ActionTypeEnum::FixedResponse));
                let f = g.fixed_response_config().expect("FixedResponseConfig");
                let FixedResponseConfig {
                    content_type,
                    message_body,
                    status_code,
                } = config;
                assert_eq!(f.content_type(), content_type.as_deref());
                c.sent("fixed_response.content_type");
                assert_eq!(f.message_body(), message_body.as_deref());
                c.sent("fixed_response.message_body");
                assert_eq!(f.status_code(), Some(status_code.as_str()));
                c.sent("fixed_response.status_code");
            }
            Action::AuthenticateCognito { config } => {
                assert_eq!(g.r#type(), Some(&et::ActionTypeEnum::AuthenticateCognito));
                let a = g
                    .authenticate_cognito_config()
                    .expect("AuthenticateCognitoConfig");
                let AuthenticateCognitoConfig {
                    user_pool_arn,
                    user_pool_client_id,
                    user_pool_domain,
                    authentication_request_extra_params,
                    on_unauthenticated_request,
                    scope,
                    session_cookie_name,
                    session_timeout,
                } = config;
                assert_eq!(a.user_pool_arn(), Some(user_pool_arn.as_str()));
                c.sent("authenticate_cognito.user_pool_arn");
                assert_eq!(a.user_pool_client_id(), Some(user_pool_client_id.as_str()));
                c.sent("authenticate_cognito.user_pool_client_id");
                assert_eq!(a.user_pool_domain(), Some(user_pool_domain.as_str()));
                c.sent("authenticate_cognito.user_pool_domain");
                assert_eq!(
                    &sorted(a.authentication_request_extra_params()),
                    authentication_request_extra_params
                );
                c.sent("authenticate_cognito.authentication_request_extra_params");
                assert_eq!(
                    a.on_unauthenticated_request().map(|v| v.as_str()),
                    Some(on_unauthenticated_request.as_str())
                );
                c.sent("authenticate_cognito.on_unauthenticated_request");
                assert_eq!(a.scope(), Some(scope.as_str()));
                c.sent("authenticate_cognito.scope");
                assert_eq!(a.session_cookie_name(), Some(session_cookie_name.as_str()));
                c.sent("authenticate_cognito.session_cookie_name");
                assert_eq!(a.session_timeout(), Some(*session_timeout));
                c.sent("authenticate_cognito.session_timeout");
            }
            Action::AuthenticateOidc { config } => {
                assert_eq!(g.r#type(), Some(&et::ActionTypeEnum::AuthenticateOidc));
                let o = g
                    .authenticate_oidc_config()
                    .expect("AuthenticateOidcConfig");
                let AuthenticateOidcConfig {
                    issuer,
                    authorization_endpoint,
                    token_endpoint,
                    user_info_endpoint,
                    secret: _,
                    client_id,
                    client_secret,
                    authentication_request_extra_params,
                    on_unauthenticated_request,
                    scope,
                    session_cookie_name,
                    session_timeout,
                    use_existing_client_secret,
                } = config;
                assert_eq!(o.issuer(), Some(issuer.as_str()));
                c.sent("authenticate_oidc.issuer");
                assert_eq!(
                    o.authorization_endpoint(),
                    Some(authorization_endpoint.as_str())
                );
                c.sent("authenticate_oidc.authorization_endpoint");
                assert_eq!(o.token_endpoint(), Some(token_endpoint.as_str()));
                c.sent("authenticate_oidc.token_endpoint");
                assert_eq!(o.user_info_endpoint(), Some(user_info_endpoint.as_str()));
                c.sent("authenticate_oidc.user_info_endpoint");
                c.not_sent("authenticate_oidc.secret");
                assert_eq!(o.client_id(), Some(client_id.expose()));
                c.sent("authenticate_oidc.client_id");
                assert_eq!(o.client_secret(), Some(client_secret.expose()));
                c.sent("authenticate_oidc.client_secret");
                assert_eq!(
                    &sorted(o.authentication_request_extra_params()),
                    authentication_request_extra_params
                );
                c.sent("authenticate_oidc.authentication_request_extra_params");
                assert_eq!(
                    o.on_unauthenticated_request().map(|v| v.as_str()),
                    Some(on_unauthenticated_request.as_str())
                );
                c.sent("authenticate_oidc.on_unauthenticated_request");
                assert_eq!(o.scope(), Some(scope.as_str()));
                c.sent("authenticate_oidc.scope");
                assert_eq!(o.session_cookie_name(), Some(session_cookie_name.as_str()));
                c.sent("authenticate_oidc.session_cookie_name");
                assert_eq!(o.session_timeout(), Some(*session_timeout));
                c.sent("authenticate_oidc.session_timeout");
                assert_eq!(o.use_existing_client_secret(), *use_existing_client_secret);
                c.sent("authenticate_oidc.use_existing_client_secret");
            }
            Action::JwtValidation { config } => {
                assert_eq!(g.r#type(), Some(&et::ActionTypeEnum::JwtValidation));
                let j = g.jwt_validation_config().expect("JwtValidationConfig");
                let JwtValidationConfig {
                    jwks_endpoint,
                    issuer,
                    additional_claims,
                } = config;
                assert_eq!(j.jwks_endpoint(), Some(jwks_endpoint.as_str()));
                c.sent("jwt_validation.jwks_endpoint");
                assert_eq!(j.issuer(), Some(issuer.as_str()));
                c.sent("jwt_validation.issuer");
                assert_eq!(j.additional_claims().len(), additional_claims.len());
                for (claim, sent) in additional_claims.iter().zip(j.additional_claims()) {
                    let JwtAdditionalClaim {
                        format,
                        name,
                        values,
                    } = claim;
                    assert_eq!(sent.format().map(|f| f.as_str()), Some(format.as_str()));
                    c.sent("jwt_validation.additional_claims[].format");
                    assert_eq!(sent.name(), Some(name.as_str()));
                    c.sent("jwt_validation.additional_claims[].name");
                    assert_eq!(sent.values(), values.as_slice());
                    c.sent("jwt_validation.additional_claims[].values");
                }
            }
        }
    }
}

fn check_conditions(want: &[RuleCondition], got: &[et::RuleCondition], c: &mut Checked) {
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (w, g) in want.iter().zip(got) {
        assert_eq!(g.field(), Some(w.field()));
        match w {
            RuleCondition::HostHeader { config } => {
                let s = g.host_header_config().expect("HostHeaderConfig");
                let ValuesConfig {
                    values,
                    regex_values,
                } = config;
                assert_eq!(s.values(), values.as_slice());
                c.sent("host_header.values");
                assert_eq!(s.regex_values(), regex_values.as_slice());
                c.sent("host_header.regex_values");
            }
            RuleCondition::PathPattern { config } => {
                let s = g.path_pattern_config().expect("PathPatternConfig");
                let ValuesConfig {
                    values,
                    regex_values,
                } = config;
                assert_eq!(s.values(), values.as_slice());
                c.sent("path_pattern.values");
                assert_eq!(s.regex_values(), regex_values.as_slice());
                c.sent("path_pattern.regex_values");
            }
            RuleCondition::HttpHeader { config } => {
                let s = g.http_header_config().expect("HttpHeaderConfig");
                let HttpHeaderConfig {
                    http_header_name,
                    values,
                    regex_values,
                } = config;
                assert_eq!(s.http_header_name(), Some(http_header_name.as_str()));
                c.sent("http_header.http_header_name");
                assert_eq!(s.values(), values.as_slice());
                c.sent("http_header.values");
                assert_eq!(s.regex_values(), regex_values.as_slice());
                c.sent("http_header.regex_values");
            }
            RuleCondition::HttpRequestMethod { config } => {
                let s = g
                    .http_request_method_config()
                    .expect("HttpRequestMethodConfig");
                let ListConfig { values } = config;
                assert_eq!(s.values(), values.as_slice());
                c.sent("http_request_method.values");
            }
            RuleCondition::QueryString { config } => {
                let s = g.query_string_config().expect("QueryStringConfig");
                let QueryStringConfig { values } = config;
                assert_eq!(s.values().len(), values.len());
                for (p, sent) in values.iter().zip(s.values()) {
                    let QueryStringPair { key, value } = p;
                    assert_eq!(sent.key(), key.as_deref());
                    c.sent("query_string.values[].key");
                    assert_eq!(sent.value(), Some(value.as_str()));
                    c.sent("query_string.values[].value");
                }
            }
            RuleCondition::SourceIp { config } => {
                let s = g.source_ip_config().expect("SourceIpConfig");
                let ListConfig { values } = config;
                assert_eq!(s.values(), values.as_slice());
                c.sent("source_ip.values");
            }
        }
    }
}

fn check_rewrites(
    want: &Option<RewriteConfigObject>,
    got: Option<&[et::RewriteConfig]>,
    names: (&'static str, &'static str),
    c: &mut Checked,
) {
    let Some(RewriteConfigObject { rewrites }) = want else {
        assert!(got.is_none(), "a config the transform lacks is not sent");
        return;
    };
    let got = got.expect("the transform's rewrite config");
    assert_eq!(got.len(), rewrites.len());
    for (w, g) in rewrites.iter().zip(got) {
        let Rewrite { regex, replace } = w;
        assert_eq!(g.regex(), Some(regex.as_str()));
        c.sent(names.0);
        assert_eq!(g.replace(), Some(replace.as_str()));
        c.sent(names.1);
    }
}

fn check_transforms(want: &[Transform], got: &[et::RuleTransform], c: &mut Checked) {
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (w, g) in want.iter().zip(got) {
        let Transform {
            transform_type,
            host_header_rewrite_config,
            url_rewrite_config,
        } = w;
        assert_eq!(
            g.r#type().map(|t| t.as_str()),
            Some(transform_type.as_str())
        );
        c.sent("transform_type");
        check_rewrites(
            host_header_rewrite_config,
            g.host_header_rewrite_config().map(|h| h.rewrites()),
            (
                "host_header_rewrite_config.rewrites[].regex",
                "host_header_rewrite_config.rewrites[].replace",
            ),
            c,
        );
        check_rewrites(
            url_rewrite_config,
            g.url_rewrite_config().map(|u| u.rewrites()),
            (
                "url_rewrite_config.rewrites[].regex",
                "url_rewrite_config.rewrites[].replace",
            ),
            c,
        );
    }
}

fn check_mtls(
    want: &MutualAuthentication,
    got: Option<&et::MutualAuthenticationAttributes>,
    c: &mut Checked,
) {
    let got = got.expect("MutualAuthentication");
    let MutualAuthentication {
        mode,
        trust_store,
        ignore_client_certificate_expiry,
        advertise_trust_store_ca_names,
    } = want;
    assert_eq!(got.mode(), Some(mode.as_str()));
    c.sent("mode");
    assert_eq!(got.trust_store_arn(), trust_store.as_deref());
    c.sent("trust_store");
    assert_eq!(
        got.ignore_client_certificate_expiry(),
        *ignore_client_certificate_expiry
    );
    c.sent("ignore_client_certificate_expiry");
    assert_eq!(
        got.advertise_trust_store_ca_names().map(|v| v.as_str()),
        advertise_trust_store_ca_names.as_deref()
    );
    c.sent("advertise_trust_store_ca_names");
}

fn sent_tags(tags: &Option<Vec<et::Tag>>) -> BTreeMap<String, String> {
    tags.iter()
        .flatten()
        .map(|t| {
            (
                t.key().unwrap_or_default().to_string(),
                t.value().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn cert_arns(certs: &Option<Vec<et::Certificate>>) -> Vec<String> {
    certs
        .iter()
        .flatten()
        .filter_map(|c| c.certificate_arn().map(String::from))
        .collect()
}

/// What CreateListener and ModifyListener both carry.
struct ListenerParams<'a> {
    port: &'a Option<i32>,
    protocol: &'a Option<et::ProtocolEnum>,
    ssl_policy: &'a Option<String>,
    certificates: &'a Option<Vec<et::Certificate>>,
    alpn_policy: &'a Option<Vec<String>>,
    default_actions: &'a Option<Vec<et::Action>>,
    mutual_authentication: &'a Option<et::MutualAuthenticationAttributes>,
}

/// The fields both listener calls send; `load_balancer_arn` and `tags` are the callers'.
fn check_listener(
    l: &Listener,
    p: ListenerParams<'_>,
    c: &mut Checked,
    actions: &mut Checked,
    mtls: &mut Checked,
) {
    let Listener {
        id,
        load_balancer_arn: _,
        port,
        protocol,
        default_actions,
        certificates,
        certificate_discovery,
        ssl_policy,
        mutual_authentication,
        alpn_policy,
        attributes,
        tags: _,
    } = l;
    assert!(!id.is_empty() && !attributes.is_empty());
    c.not_sent("id");
    assert!(certificate_discovery.is_empty(), "refused otherwise");
    c.not_sent("certificate_discovery");
    c.not_sent("attributes");
    assert_eq!(p.port, &Some(*port));
    c.sent("port");
    assert_eq!(
        p.protocol.as_ref().map(|v| v.as_str()),
        Some(protocol.as_str())
    );
    c.sent("protocol");
    check_actions(
        default_actions,
        p.default_actions.as_deref().unwrap_or_default(),
        actions,
    );
    c.sent("default_actions");
    assert_eq!(&cert_arns(p.certificates), certificates);
    c.sent("certificates");
    assert_eq!(p.ssl_policy, ssl_policy);
    c.sent("ssl_policy");
    check_mtls(
        mutual_authentication
            .as_ref()
            .expect("full listener has mTLS"),
        p.mutual_authentication.as_ref(),
        mtls,
    );
    c.sent("mutual_authentication");
    assert_eq!(
        p.alpn_policy,
        &alpn_policy.as_ref().map(|a| vec![a.clone()])
    );
    c.sent("alpn_policy");
}

/// `(call, fields sent, fields not part of the call, nested fields sent)` for each write.
fn coverage() -> Vec<(&'static str, usize, usize, usize)> {
    let sent = |t: &[(&str, To)]| t.iter().filter(|(_, to)| matches!(to, To::Sdk(_))).count();
    let not = |t: &[(&str, To)]| t.len() - sent(t);
    let listener_nested = sent(ACTION) + sent(MUTUAL_AUTHENTICATION);
    let rule_nested = sent(ACTION) + sent(CONDITION) + sent(TRANSFORM);
    vec![
        (
            "CreateListener",
            sent(CREATE_LISTENER),
            not(CREATE_LISTENER),
            listener_nested,
        ),
        (
            "ModifyListener",
            sent(MODIFY_LISTENER),
            not(MODIFY_LISTENER),
            listener_nested,
        ),
        (
            "CreateRule",
            sent(CREATE_RULE),
            not(CREATE_RULE),
            rule_nested,
        ),
        (
            "ModifyRule",
            sent(MODIFY_RULE),
            not(MODIFY_RULE),
            rule_nested,
        ),
    ]
}

#[test]
fn create_listener_sends_every_field() {
    let l = full_listener();
    let b = create_listener(&l).unwrap();
    let (mut c, mut actions, mut mtls) =
        (Checked::default(), Checked::default(), Checked::default());
    check_listener(
        &l,
        ListenerParams {
            port: b.get_port(),
            protocol: b.get_protocol(),
            ssl_policy: b.get_ssl_policy(),
            certificates: b.get_certificates(),
            alpn_policy: b.get_alpn_policy(),
            default_actions: b.get_default_actions(),
            mutual_authentication: b.get_mutual_authentication(),
        },
        &mut c,
        &mut actions,
        &mut mtls,
    );
    let Listener {
        load_balancer_arn,
        tags,
        ..
    } = &l;
    assert_eq!(
        b.get_load_balancer_arn().as_deref(),
        load_balancer_arn.literal()
    );
    c.sent("load_balancer_arn");
    assert_eq!(&sent_tags(b.get_tags()), tags);
    c.sent("tags");
    c.covers(CREATE_LISTENER);
    actions.covers(ACTION);
    mtls.covers(MUTUAL_AUTHENTICATION);
}

#[test]
fn modify_listener_sends_every_field_it_changes() {
    let l = full_listener();
    let b = modify_listener("arn:listener/1", &l).unwrap();
    assert_eq!(b.get_listener_arn().as_deref(), Some("arn:listener/1"));
    let (mut c, mut actions, mut mtls) =
        (Checked::default(), Checked::default(), Checked::default());
    check_listener(
        &l,
        ListenerParams {
            port: b.get_port(),
            protocol: b.get_protocol(),
            ssl_policy: b.get_ssl_policy(),
            certificates: b.get_certificates(),
            alpn_policy: b.get_alpn_policy(),
            default_actions: b.get_default_actions(),
            mutual_authentication: b.get_mutual_authentication(),
        },
        &mut c,
        &mut actions,
        &mut mtls,
    );
    c.not_sent("load_balancer_arn");
    c.not_sent("tags");
    c.covers(MODIFY_LISTENER);
    actions.covers(ACTION);
    mtls.covers(MUTUAL_AUTHENTICATION);
}

#[test]
fn create_rule_sends_every_field() {
    let r = full_rule();
    let b = create_rule(&r).unwrap();
    let mut c = Checked::default();
    let (mut conditions, mut actions, mut transforms) =
        (Checked::default(), Checked::default(), Checked::default());
    let ListenerRule {
        id,
        listener_arn,
        priority,
        ingress,
        conditions: want_conditions,
        actions: want_actions,
        transforms: want_transforms,
        tags,
    } = &r;
    assert!(!id.is_empty() && !ingress.is_empty());
    c.not_sent("id");
    c.not_sent("ingress");
    assert_eq!(b.get_listener_arn().as_deref(), listener_arn.literal());
    c.sent("listener_arn");
    assert_eq!(b.get_priority(), &Some(*priority));
    c.sent("priority");
    check_conditions(
        want_conditions,
        b.get_conditions().as_deref().unwrap_or_default(),
        &mut conditions,
    );
    c.sent("conditions");
    check_actions(
        want_actions,
        b.get_actions().as_deref().unwrap_or_default(),
        &mut actions,
    );
    c.sent("actions");
    check_transforms(
        want_transforms,
        b.get_transforms().as_deref().unwrap_or_default(),
        &mut transforms,
    );
    c.sent("transforms");
    assert_eq!(&sent_tags(b.get_tags()), tags);
    c.sent("tags");
    c.covers(CREATE_RULE);
    conditions.covers(CONDITION);
    actions.covers(ACTION);
    transforms.covers(TRANSFORM);
}

#[test]
fn modify_rule_sends_every_field_it_changes() {
    let r = full_rule();
    let b = modify_rule("arn:rule/1", &r).unwrap();
    assert_eq!(b.get_rule_arn().as_deref(), Some("arn:rule/1"));
    let mut c = Checked::default();
    let (mut conditions, mut actions, mut transforms) =
        (Checked::default(), Checked::default(), Checked::default());
    let ListenerRule {
        id: _,
        listener_arn: _,
        priority: _,
        ingress: _,
        conditions: want_conditions,
        actions: want_actions,
        transforms: want_transforms,
        tags: _,
    } = &r;
    for f in ["id", "listener_arn", "priority", "ingress", "tags"] {
        c.not_sent(f);
    }
    check_conditions(
        want_conditions,
        b.get_conditions().as_deref().unwrap_or_default(),
        &mut conditions,
    );
    c.sent("conditions");
    check_actions(
        want_actions,
        b.get_actions().as_deref().unwrap_or_default(),
        &mut actions,
    );
    c.sent("actions");
    check_transforms(
        want_transforms,
        b.get_transforms().as_deref().unwrap_or_default(),
        &mut transforms,
    );
    assert_eq!(b.get_reset_transforms(), &None);
    c.sent("transforms");
    c.covers(MODIFY_RULE);
    conditions.covers(CONDITION);
    actions.covers(ACTION);
    transforms.covers(TRANSFORM);

    // No transforms: ModifyRule takes an empty list as "keep", so they are reset instead.
    let bare = ListenerRule {
        transforms: vec![],
        ..full_rule()
    };
    let b = modify_rule("arn:rule/1", &bare).unwrap();
    assert_eq!(b.get_transforms(), &None);
    assert_eq!(b.get_reset_transforms(), &Some(true));
}

#[test]
fn every_table_entry_names_its_parameter_or_its_reason() {
    let tables = [
        ("CreateListener", CREATE_LISTENER),
        ("ModifyListener", MODIFY_LISTENER),
        ("CreateRule", CREATE_RULE),
        ("ModifyRule", MODIFY_RULE),
        ("actions", ACTION),
        ("conditions", CONDITION),
        ("transforms", TRANSFORM),
        ("mutual authentication", MUTUAL_AUTHENTICATION),
    ];
    for (call, table) in tables {
        for (field, to) in table {
            let (kind, text) = match to {
                To::Sdk(p) => ("->", *p),
                To::Not(why) => ("not sent:", *why),
            };
            assert!(!text.is_empty(), "{call}.{field}");
            println!("{call}: {field} {kind} {text}");
        }
    }
}

#[test]
fn field_counts_per_call() {
    let counts = coverage();
    for (call, sent, not, nested) in &counts {
        println!(
            "{call}: {sent} fields sent, {not} not part of the call, {nested} nested fields sent"
        );
    }
    let get = |name: &str| *counts.iter().find(|c| c.0 == name).unwrap();
    // Tables name every field of the model struct the call takes.
    assert_eq!(get("CreateListener").1 + get("CreateListener").2, 12);
    assert_eq!(get("ModifyListener").1 + get("ModifyListener").2, 12);
    assert_eq!(get("CreateRule").1 + get("CreateRule").2, 8);
    assert_eq!(get("ModifyRule").1 + get("ModifyRule").2, 8);
    assert_eq!((get("CreateListener").1, get("ModifyListener").1), (9, 7));
    assert_eq!((get("CreateRule").1, get("ModifyRule").1), (6, 3));
    assert_eq!(get("CreateListener").3, 38 + 4);
    assert_eq!(get("CreateRule").3, 38 + 11 + 5);
}

#[test]
fn references_not_resolved_to_arns_are_refused_before_any_request() {
    let unresolved = |e: AwsError| match e {
        AwsError::Unresolved(m) => m,
        other => panic!("{other:?}"),
    };
    let mut l = full_listener();
    l.load_balancer_arn = Token::LoadBalancerArn;
    let m = unresolved(create_listener(&l).unwrap_err());
    assert!(m.contains("LoadBalancerArn"), "{m}");

    let mut r = full_rule();
    r.listener_arn = Token::ListenerArn(443);
    assert!(unresolved(create_rule(&r).unwrap_err()).contains("ListenerArn(443)"));

    let mut r = full_rule();
    r.actions = vec![Action::Forward {
        config: ForwardConfig {
            target_groups: vec![TargetGroupTuple {
                target_group_arn: Token::TargetGroupArn("shop/web-svc:80".into()),
                weight: None,
            }],
            target_group_stickiness_config: None,
        },
    }];
    assert!(unresolved(modify_rule("arn:rule/1", &r).unwrap_err()).contains("shop/web-svc:80"));

    let mut l = full_listener();
    l.mutual_authentication = Some(MutualAuthentication {
        trust_store: Some("my-ca".into()),
        ..full_mtls()
    });
    assert!(unresolved(modify_listener("arn:listener/1", &l).unwrap_err()).contains("my-ca"));

    let mut l = full_listener();
    l.certificate_discovery = vec![crate::model::MemberCertificates {
        ingress: "shop/web".into(),
        certificates: vec![],
        discovery_hosts: Some(strings(&["shop.example.com"])),
    }];
    unresolved(create_listener(&l).unwrap_err());
}
