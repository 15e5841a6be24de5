//! The one conversion of the model's listener and rule actions, rule conditions and transforms
//! to the SDK's types and back (the largest part of the ELBv2 surface). Towards AWS every
//! target group must be a literal ARN (refused otherwise, never sent as a placeholder); from
//! AWS every ARN comes back as a `Token::Literal`.

use std::collections::BTreeMap;

use aws_sdk_elasticloadbalancingv2::types as et;

use crate::aws::error::Result;
use crate::aws::sdk::{non_empty, os, s};
use crate::aws::types::literal;
use crate::model::action::{
    HttpHeaderConfig, JwtAdditionalClaim, ListConfig, QueryStringConfig, QueryStringPair, Rewrite,
    RewriteConfigObject, ValuesConfig,
};
use crate::model::{
    Action, AuthenticateCognitoConfig, AuthenticateOidcConfig, FixedResponseConfig, ForwardConfig,
    JwtValidationConfig, Redacted, RedirectConfig, RuleCondition, StickinessConfig,
    TargetGroupTuple, Token, Transform,
};

/// `Order` is the position in the list, from 1.
pub(super) fn actions_to(actions: &[Action]) -> Result<Vec<et::Action>> {
    actions
        .iter()
        .enumerate()
        .map(|(i, a)| action_to(a, i as i32 + 1))
        .collect()
}

pub(super) fn action_to(a: &Action, order: i32) -> Result<et::Action> {
    let b = et::Action::builder().order(order);
    Ok(match a {
        Action::Forward { config: f } => {
            let mut tgs = Vec::with_capacity(f.target_groups.len());
            for t in &f.target_groups {
                tgs.push(
                    et::TargetGroupTuple::builder()
                        .target_group_arn(literal(&t.target_group_arn, "forward action")?)
                        .set_weight(t.weight)
                        .build(),
                );
            }
            // Sent with `Enabled` always set, as the deployer always did.
            let stick = f.target_group_stickiness_config.as_ref().map(|st| {
                et::TargetGroupStickinessConfig::builder()
                    .enabled(st.enabled.unwrap_or(false))
                    .set_duration_seconds(st.duration_seconds)
                    .build()
            });
            b.r#type(et::ActionTypeEnum::Forward)
                .forward_config(
                    et::ForwardActionConfig::builder()
                        .set_target_groups(Some(tgs))
                        .set_target_group_stickiness_config(stick)
                        .build(),
                )
                .build()
        }
        Action::Redirect { config: r } => b
            .r#type(et::ActionTypeEnum::Redirect)
            .redirect_config(
                et::RedirectActionConfig::builder()
                    .set_protocol(r.protocol.clone())
                    .set_port(r.port.clone())
                    .set_host(r.host.clone())
                    .set_path(r.path.clone())
                    .set_query(r.query.clone())
                    .status_code(et::RedirectActionStatusCodeEnum::from(
                        r.status_code.as_str(),
                    ))
                    .build(),
            )
            .build(),
        Action::FixedResponse { config: f } => b
            .r#type(et::ActionTypeEnum::FixedResponse)
            .fixed_response_config(
                et::FixedResponseActionConfig::builder()
                    .status_code(&f.status_code)
                    .set_content_type(f.content_type.clone())
                    .set_message_body(f.message_body.clone())
                    .build(),
            )
            .build(),
        // The client secret is always sent, as upstream does (see `deploy::oidc_secrets` for
        // how it is compared); `secret` names the Secret it was read from, not part of AWS's.
        Action::AuthenticateOidc { config: o } => b
            .r#type(et::ActionTypeEnum::AuthenticateOidc)
            .authenticate_oidc_config(
                et::AuthenticateOidcActionConfig::builder()
                    .issuer(&o.issuer)
                    .authorization_endpoint(&o.authorization_endpoint)
                    .token_endpoint(&o.token_endpoint)
                    .user_info_endpoint(&o.user_info_endpoint)
                    .client_id(o.client_id.expose())
                    .client_secret(o.client_secret.expose())
                    .session_cookie_name(&o.session_cookie_name)
                    .scope(&o.scope)
                    .session_timeout(o.session_timeout)
                    .set_authentication_request_extra_params(non_empty_map(
                        &o.authentication_request_extra_params,
                    ))
                    .on_unauthenticated_request(
                        et::AuthenticateOidcActionConditionalBehaviorEnum::from(
                            o.on_unauthenticated_request.as_str(),
                        ),
                    )
                    .set_use_existing_client_secret(o.use_existing_client_secret)
                    .build(),
            )
            .build(),
        Action::AuthenticateCognito { config: c } => b
            .r#type(et::ActionTypeEnum::AuthenticateCognito)
            .authenticate_cognito_config(
                et::AuthenticateCognitoActionConfig::builder()
                    .user_pool_arn(&c.user_pool_arn)
                    .user_pool_client_id(&c.user_pool_client_id)
                    .user_pool_domain(&c.user_pool_domain)
                    .session_cookie_name(&c.session_cookie_name)
                    .scope(&c.scope)
                    .session_timeout(c.session_timeout)
                    .set_authentication_request_extra_params(non_empty_map(
                        &c.authentication_request_extra_params,
                    ))
                    .on_unauthenticated_request(
                        et::AuthenticateCognitoActionConditionalBehaviorEnum::from(
                            c.on_unauthenticated_request.as_str(),
                        ),
                    )
                    .build(),
            )
            .build(),
        Action::JwtValidation { config: j } => b
            .r#type(et::ActionTypeEnum::JwtValidation)
            .jwt_validation_config(
                et::JwtValidationActionConfig::builder()
                    .jwks_endpoint(&j.jwks_endpoint)
                    .issuer(&j.issuer)
                    .set_additional_claims((!j.additional_claims.is_empty()).then(|| {
                        j.additional_claims
                            .iter()
                            .map(|c| {
                                et::JwtValidationActionAdditionalClaim::builder()
                                    .format(et::JwtValidationActionAdditionalClaimFormatEnum::from(
                                        c.format.as_str(),
                                    ))
                                    .name(&c.name)
                                    .set_values(Some(c.values.clone()))
                                    .build()
                            })
                            .collect()
                    }))
                    .build(),
            )
            .build(),
    })
}

pub(super) fn non_empty_map(
    m: &BTreeMap<String, String>,
) -> Option<std::collections::HashMap<String, String>> {
    if m.is_empty() {
        None
    } else {
        Some(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
    }
}

pub(super) fn actions_from(list: &[et::Action]) -> Vec<Action> {
    let mut sorted: Vec<&et::Action> = list.iter().collect();
    sorted.sort_by_key(|a| a.order().unwrap_or(i32::MAX));
    sorted.into_iter().filter_map(action_from).collect()
}

pub(super) fn sorted_map(
    m: Option<&std::collections::HashMap<String, String>>,
) -> BTreeMap<String, String> {
    m.map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

pub(super) fn action_from(a: &et::Action) -> Option<Action> {
    Some(match a.r#type()? {
        et::ActionTypeEnum::Forward => {
            let f = a.forward_config();
            let mut tgs: Vec<TargetGroupTuple> = f
                .map(|f| {
                    f.target_groups()
                        .iter()
                        .map(|t| TargetGroupTuple {
                            target_group_arn: Token::Literal(s(t.target_group_arn())),
                            weight: t.weight(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            if tgs.is_empty() {
                tgs.push(TargetGroupTuple {
                    target_group_arn: Token::Literal(s(a.target_group_arn())),
                    weight: None,
                });
            }
            let stickiness = f
                .and_then(|f| f.target_group_stickiness_config())
                .map(|st| StickinessConfig {
                    enabled: Some(st.enabled().unwrap_or(false)),
                    duration_seconds: st.duration_seconds(),
                });
            Action::Forward {
                config: ForwardConfig {
                    target_groups: tgs,
                    target_group_stickiness_config: stickiness,
                },
            }
        }
        et::ActionTypeEnum::Redirect => {
            let r = a.redirect_config()?;
            Action::Redirect {
                config: RedirectConfig {
                    protocol: os(r.protocol()),
                    port: os(r.port()),
                    host: os(r.host()),
                    path: os(r.path()),
                    query: os(r.query()),
                    status_code: s(r.status_code().map(|c| c.as_str())),
                },
            }
        }
        et::ActionTypeEnum::FixedResponse => {
            let f = a.fixed_response_config()?;
            Action::FixedResponse {
                config: FixedResponseConfig {
                    status_code: s(f.status_code()),
                    content_type: os(f.content_type()),
                    message_body: os(f.message_body()),
                },
            }
        }
        et::ActionTypeEnum::AuthenticateOidc => {
            let o = a.authenticate_oidc_config()?;
            Action::AuthenticateOidc {
                config: AuthenticateOidcConfig {
                    issuer: s(o.issuer()),
                    authorization_endpoint: s(o.authorization_endpoint()),
                    token_endpoint: s(o.token_endpoint()),
                    user_info_endpoint: s(o.user_info_endpoint()),
                    // AWS knows no Secret; the secret itself is described empty (moto echoes it).
                    secret: String::new(),
                    client_id: Redacted::new(s(o.client_id())),
                    client_secret: Redacted::new(s(o.client_secret())),
                    session_cookie_name: s(o.session_cookie_name()),
                    scope: s(o.scope()),
                    session_timeout: o.session_timeout().unwrap_or_default(),
                    authentication_request_extra_params: sorted_map(
                        o.authentication_request_extra_params(),
                    ),
                    on_unauthenticated_request: s(o
                        .on_unauthenticated_request()
                        .map(|v| v.as_str())),
                    use_existing_client_secret: o.use_existing_client_secret(),
                },
            }
        }
        et::ActionTypeEnum::AuthenticateCognito => {
            let c = a.authenticate_cognito_config()?;
            Action::AuthenticateCognito {
                config: AuthenticateCognitoConfig {
                    user_pool_arn: s(c.user_pool_arn()),
                    user_pool_client_id: s(c.user_pool_client_id()),
                    user_pool_domain: s(c.user_pool_domain()),
                    session_cookie_name: s(c.session_cookie_name()),
                    scope: s(c.scope()),
                    session_timeout: c.session_timeout().unwrap_or_default(),
                    authentication_request_extra_params: sorted_map(
                        c.authentication_request_extra_params(),
                    ),
                    on_unauthenticated_request: s(c
                        .on_unauthenticated_request()
                        .map(|v| v.as_str())),
                },
            }
        }
        et::ActionTypeEnum::JwtValidation => {
            let j = a.jwt_validation_config()?;
            Action::JwtValidation {
                config: JwtValidationConfig {
                    jwks_endpoint: s(j.jwks_endpoint()),
                    issuer: s(j.issuer()),
                    additional_claims: j
                        .additional_claims()
                        .iter()
                        .map(|c| JwtAdditionalClaim {
                            format: s(c.format().map(|f| f.as_str())),
                            name: s(c.name()),
                            values: c.values().to_vec(),
                        })
                        .collect(),
                },
            }
        }
        _ => return None,
    })
}

pub(super) fn cond_to(c: &RuleCondition) -> et::RuleCondition {
    let b = et::RuleCondition::builder().field(c.field());
    match c {
        RuleCondition::HostHeader { config } => b
            .host_header_config(
                et::HostHeaderConditionConfig::builder()
                    .set_values(non_empty(&config.values))
                    .set_regex_values(non_empty(&config.regex_values))
                    .build(),
            )
            .build(),
        RuleCondition::PathPattern { config } => b
            .path_pattern_config(
                et::PathPatternConditionConfig::builder()
                    .set_values(non_empty(&config.values))
                    .set_regex_values(non_empty(&config.regex_values))
                    .build(),
            )
            .build(),
        RuleCondition::HttpHeader { config } => b
            .http_header_config(
                et::HttpHeaderConditionConfig::builder()
                    .http_header_name(&config.http_header_name)
                    .set_values(non_empty(&config.values))
                    .set_regex_values(non_empty(&config.regex_values))
                    .build(),
            )
            .build(),
        RuleCondition::HttpRequestMethod { config } => b
            .http_request_method_config(
                et::HttpRequestMethodConditionConfig::builder()
                    .set_values(Some(config.values.clone()))
                    .build(),
            )
            .build(),
        RuleCondition::QueryString { config } => b
            .query_string_config(
                et::QueryStringConditionConfig::builder()
                    .set_values(Some(
                        config
                            .values
                            .iter()
                            .map(|p| {
                                et::QueryStringKeyValuePair::builder()
                                    .set_key(p.key.clone())
                                    .value(&p.value)
                                    .build()
                            })
                            .collect(),
                    ))
                    .build(),
            )
            .build(),
        RuleCondition::SourceIp { config } => b
            .source_ip_config(
                et::SourceIpConditionConfig::builder()
                    .set_values(Some(config.values.clone()))
                    .build(),
            )
            .build(),
    }
}

pub(super) fn cond_from(c: &et::RuleCondition) -> Option<RuleCondition> {
    // AWS fills both the legacy `Values` and the typed config; prefer the config.
    let legacy = c.values().to_vec();
    let pick = |v: &[String]| {
        if v.is_empty() {
            legacy.clone()
        } else {
            v.to_vec()
        }
    };
    Some(match c.field()? {
        "host-header" => {
            let cfg = c.host_header_config();
            RuleCondition::HostHeader {
                config: ValuesConfig {
                    values: pick(cfg.map(|x| x.values()).unwrap_or_default()),
                    regex_values: cfg.map(|x| x.regex_values().to_vec()).unwrap_or_default(),
                },
            }
        }
        "path-pattern" => {
            let cfg = c.path_pattern_config();
            RuleCondition::PathPattern {
                config: ValuesConfig {
                    values: pick(cfg.map(|x| x.values()).unwrap_or_default()),
                    regex_values: cfg.map(|x| x.regex_values().to_vec()).unwrap_or_default(),
                },
            }
        }
        "http-header" => {
            let cfg = c.http_header_config()?;
            RuleCondition::HttpHeader {
                config: HttpHeaderConfig {
                    http_header_name: s(cfg.http_header_name()),
                    values: cfg.values().to_vec(),
                    regex_values: cfg.regex_values().to_vec(),
                },
            }
        }
        "http-request-method" => RuleCondition::HttpRequestMethod {
            config: ListConfig {
                values: pick(
                    c.http_request_method_config()
                        .map(|x| x.values())
                        .unwrap_or_default(),
                ),
            },
        },
        "query-string" => RuleCondition::QueryString {
            config: QueryStringConfig {
                values: c
                    .query_string_config()
                    .map(|q| {
                        q.values()
                            .iter()
                            .map(|p| QueryStringPair {
                                key: os(p.key()),
                                value: s(p.value()),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            },
        },
        "source-ip" => RuleCondition::SourceIp {
            config: ListConfig {
                values: pick(c.source_ip_config().map(|x| x.values()).unwrap_or_default()),
            },
        },
        _ => return None,
    })
}

/// Each rewrite config the transform carries, as upstream sends it (the model checked that the
/// one its type needs is there).
pub(super) fn transform_to(t: &Transform) -> et::RuleTransform {
    let rewrites = |c: &RewriteConfigObject| -> Vec<et::RewriteConfig> {
        c.rewrites
            .iter()
            .map(|r| {
                et::RewriteConfig::builder()
                    .regex(&r.regex)
                    .replace(&r.replace)
                    .build()
            })
            .collect()
    };
    et::RuleTransform::builder()
        .r#type(et::TransformTypeEnum::from(t.transform_type.as_str()))
        .set_host_header_rewrite_config(t.host_header_rewrite_config.as_ref().map(|c| {
            et::HostHeaderRewriteConfig::builder()
                .set_rewrites(Some(rewrites(c)))
                .build()
        }))
        .set_url_rewrite_config(t.url_rewrite_config.as_ref().map(|c| {
            et::UrlRewriteConfig::builder()
                .set_rewrites(Some(rewrites(c)))
                .build()
        }))
        .build()
}

pub(super) fn transform_from(t: &et::RuleTransform) -> Transform {
    let rewrites = |list: &[et::RewriteConfig]| RewriteConfigObject {
        rewrites: list
            .iter()
            .map(|r| Rewrite {
                regex: s(r.regex()),
                replace: s(r.replace()),
            })
            .collect(),
    };
    Transform {
        transform_type: s(t.r#type().map(|v| v.as_str())),
        host_header_rewrite_config: t
            .host_header_rewrite_config()
            .map(|c| rewrites(c.rewrites())),
        url_rewrite_config: t.url_rewrite_config().map(|c| rewrites(c.rewrites())),
    }
}
