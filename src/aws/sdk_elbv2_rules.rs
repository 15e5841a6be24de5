//! Conversions of listener and rule actions and rule conditions between the SDK and our types
//! (the largest part of the ELBv2 surface).

use std::collections::BTreeMap;

use aws_sdk_elasticloadbalancingv2::types as et;

use super::sdk::{non_empty, os, s};
use super::types::*;

pub(super) fn actions_to(actions: &[Action]) -> Vec<et::Action> {
    actions
        .iter()
        .enumerate()
        .map(|(i, a)| action_to(a, i as i32 + 1))
        .collect()
}

pub(super) fn action_to(a: &Action, order: i32) -> et::Action {
    let b = et::Action::builder().order(order);
    match a {
        Action::Forward(f) => {
            let tgs = f
                .target_groups
                .iter()
                .map(|t| {
                    et::TargetGroupTuple::builder()
                        .target_group_arn(&t.arn)
                        .set_weight(t.weight)
                        .build()
                })
                .collect();
            let stick = f.stickiness.as_ref().map(|st| {
                et::TargetGroupStickinessConfig::builder()
                    .enabled(st.enabled)
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
        Action::Redirect(r) => b
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
        Action::FixedResponse(f) => b
            .r#type(et::ActionTypeEnum::FixedResponse)
            .fixed_response_config(
                et::FixedResponseActionConfig::builder()
                    .status_code(&f.status_code)
                    .set_content_type(f.content_type.clone())
                    .set_message_body(f.message_body.clone())
                    .build(),
            )
            .build(),
        Action::AuthenticateOidc(o) => b
            .r#type(et::ActionTypeEnum::AuthenticateOidc)
            .authenticate_oidc_config(
                et::AuthenticateOidcActionConfig::builder()
                    .issuer(&o.issuer)
                    .authorization_endpoint(&o.authorization_endpoint)
                    .token_endpoint(&o.token_endpoint)
                    .user_info_endpoint(&o.user_info_endpoint)
                    .client_id(&o.client_id)
                    .set_client_secret(o.client_secret.clone())
                    .set_session_cookie_name(o.session_cookie_name.clone())
                    .set_scope(o.scope.clone())
                    .set_session_timeout(o.session_timeout)
                    .set_authentication_request_extra_params(non_empty_map(
                        &o.authentication_request_extra_params,
                    ))
                    .set_on_unauthenticated_request(
                        o.on_unauthenticated_request
                            .as_deref()
                            .map(et::AuthenticateOidcActionConditionalBehaviorEnum::from),
                    )
                    .set_use_existing_client_secret(o.use_existing_client_secret)
                    .build(),
            )
            .build(),
        Action::AuthenticateCognito(c) => b
            .r#type(et::ActionTypeEnum::AuthenticateCognito)
            .authenticate_cognito_config(
                et::AuthenticateCognitoActionConfig::builder()
                    .user_pool_arn(&c.user_pool_arn)
                    .user_pool_client_id(&c.user_pool_client_id)
                    .user_pool_domain(&c.user_pool_domain)
                    .set_session_cookie_name(c.session_cookie_name.clone())
                    .set_scope(c.scope.clone())
                    .set_session_timeout(c.session_timeout)
                    .set_authentication_request_extra_params(non_empty_map(
                        &c.authentication_request_extra_params,
                    ))
                    .set_on_unauthenticated_request(
                        c.on_unauthenticated_request
                            .as_deref()
                            .map(et::AuthenticateCognitoActionConditionalBehaviorEnum::from),
                    )
                    .build(),
            )
            .build(),
        Action::JwtValidation(j) => b
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
    }
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
            let mut tgs: Vec<WeightedTargetGroup> = f
                .map(|f| {
                    f.target_groups()
                        .iter()
                        .map(|t| WeightedTargetGroup {
                            arn: s(t.target_group_arn()),
                            weight: t.weight(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            if tgs.is_empty() {
                tgs.push(WeightedTargetGroup {
                    arn: s(a.target_group_arn()),
                    weight: None,
                });
            }
            let stickiness = f
                .and_then(|f| f.target_group_stickiness_config())
                .map(|st| Stickiness {
                    enabled: st.enabled().unwrap_or(false),
                    duration_seconds: st.duration_seconds(),
                });
            Action::Forward(ForwardConfig {
                target_groups: tgs,
                stickiness,
            })
        }
        et::ActionTypeEnum::Redirect => {
            let r = a.redirect_config()?;
            Action::Redirect(RedirectConfig {
                protocol: os(r.protocol()),
                port: os(r.port()),
                host: os(r.host()),
                path: os(r.path()),
                query: os(r.query()),
                status_code: s(r.status_code().map(|c| c.as_str())),
            })
        }
        et::ActionTypeEnum::FixedResponse => {
            let f = a.fixed_response_config()?;
            Action::FixedResponse(FixedResponseConfig {
                status_code: s(f.status_code()),
                content_type: os(f.content_type()),
                message_body: os(f.message_body()),
            })
        }
        et::ActionTypeEnum::AuthenticateOidc => {
            let o = a.authenticate_oidc_config()?;
            Action::AuthenticateOidc(AuthenticateOidcConfig {
                issuer: s(o.issuer()),
                authorization_endpoint: s(o.authorization_endpoint()),
                token_endpoint: s(o.token_endpoint()),
                user_info_endpoint: s(o.user_info_endpoint()),
                client_id: s(o.client_id()),
                client_secret: os(o.client_secret()),
                session_cookie_name: os(o.session_cookie_name()),
                scope: os(o.scope()),
                session_timeout: o.session_timeout(),
                authentication_request_extra_params: sorted_map(
                    o.authentication_request_extra_params(),
                ),
                on_unauthenticated_request: o
                    .on_unauthenticated_request()
                    .map(|v| v.as_str().to_string()),
                use_existing_client_secret: o.use_existing_client_secret(),
            })
        }
        et::ActionTypeEnum::AuthenticateCognito => {
            let c = a.authenticate_cognito_config()?;
            Action::AuthenticateCognito(AuthenticateCognitoConfig {
                user_pool_arn: s(c.user_pool_arn()),
                user_pool_client_id: s(c.user_pool_client_id()),
                user_pool_domain: s(c.user_pool_domain()),
                session_cookie_name: os(c.session_cookie_name()),
                scope: os(c.scope()),
                session_timeout: c.session_timeout(),
                authentication_request_extra_params: sorted_map(
                    c.authentication_request_extra_params(),
                ),
                on_unauthenticated_request: c
                    .on_unauthenticated_request()
                    .map(|v| v.as_str().to_string()),
            })
        }
        et::ActionTypeEnum::JwtValidation => {
            let j = a.jwt_validation_config()?;
            Action::JwtValidation(JwtValidationConfig {
                jwks_endpoint: s(j.jwks_endpoint()),
                issuer: s(j.issuer()),
                additional_claims: j
                    .additional_claims()
                    .iter()
                    .map(|c| JwtClaim {
                        format: s(c.format().map(|f| f.as_str())),
                        name: s(c.name()),
                        values: c.values().to_vec(),
                    })
                    .collect(),
            })
        }
        _ => return None,
    })
}

pub(super) fn cond_to(c: &RuleCondition) -> et::RuleCondition {
    let b = et::RuleCondition::builder().field(c.field());
    match c {
        RuleCondition::HostHeader {
            values,
            regex_values,
        } => b
            .host_header_config(
                et::HostHeaderConditionConfig::builder()
                    .set_values(non_empty(values))
                    .set_regex_values(non_empty(regex_values))
                    .build(),
            )
            .build(),
        RuleCondition::PathPattern {
            values,
            regex_values,
        } => b
            .path_pattern_config(
                et::PathPatternConditionConfig::builder()
                    .set_values(non_empty(values))
                    .set_regex_values(non_empty(regex_values))
                    .build(),
            )
            .build(),
        RuleCondition::HttpHeader {
            name,
            values,
            regex_values,
        } => b
            .http_header_config(
                et::HttpHeaderConditionConfig::builder()
                    .http_header_name(name)
                    .set_values(non_empty(values))
                    .set_regex_values(non_empty(regex_values))
                    .build(),
            )
            .build(),
        RuleCondition::HttpRequestMethod { values } => b
            .http_request_method_config(
                et::HttpRequestMethodConditionConfig::builder()
                    .set_values(Some(values.clone()))
                    .build(),
            )
            .build(),
        RuleCondition::QueryString { values } => b
            .query_string_config(
                et::QueryStringConditionConfig::builder()
                    .set_values(Some(
                        values
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
        RuleCondition::SourceIp { values } => b
            .source_ip_config(
                et::SourceIpConditionConfig::builder()
                    .set_values(Some(values.clone()))
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
                values: pick(cfg.map(|x| x.values()).unwrap_or_default()),
                regex_values: cfg.map(|x| x.regex_values().to_vec()).unwrap_or_default(),
            }
        }
        "path-pattern" => {
            let cfg = c.path_pattern_config();
            RuleCondition::PathPattern {
                values: pick(cfg.map(|x| x.values()).unwrap_or_default()),
                regex_values: cfg.map(|x| x.regex_values().to_vec()).unwrap_or_default(),
            }
        }
        "http-header" => {
            let cfg = c.http_header_config()?;
            RuleCondition::HttpHeader {
                name: s(cfg.http_header_name()),
                values: cfg.values().to_vec(),
                regex_values: cfg.regex_values().to_vec(),
            }
        }
        "http-request-method" => RuleCondition::HttpRequestMethod {
            values: pick(
                c.http_request_method_config()
                    .map(|x| x.values())
                    .unwrap_or_default(),
            ),
        },
        "query-string" => RuleCondition::QueryString {
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
        "source-ip" => RuleCondition::SourceIp {
            values: pick(c.source_ip_config().map(|x| x.values()).unwrap_or_default()),
        },
        _ => return None,
    })
}

pub(super) fn transform_to(t: &RuleTransform) -> et::RuleTransform {
    let rewrites: Vec<et::RewriteConfig> = t
        .rewrites
        .iter()
        .map(|(regex, replace)| {
            et::RewriteConfig::builder()
                .regex(regex)
                .replace(replace)
                .build()
        })
        .collect();
    let b =
        et::RuleTransform::builder().r#type(et::TransformTypeEnum::from(t.transform_type.as_str()));
    match t.transform_type.as_str() {
        "host-header-rewrite" => b.host_header_rewrite_config(
            et::HostHeaderRewriteConfig::builder()
                .set_rewrites(Some(rewrites))
                .build(),
        ),
        _ => b.url_rewrite_config(
            et::UrlRewriteConfig::builder()
                .set_rewrites(Some(rewrites))
                .build(),
        ),
    }
    .build()
}

pub(super) fn transform_from(t: &et::RuleTransform) -> RuleTransform {
    let rewrites = t
        .host_header_rewrite_config()
        .map(|c| c.rewrites())
        .or_else(|| t.url_rewrite_config().map(|c| c.rewrites()))
        .unwrap_or_default()
        .iter()
        .map(|r| (s(r.regex()), s(r.replace())))
        .collect();
    RuleTransform {
        transform_type: s(t.r#type().map(|v| v.as_str())),
        rewrites,
    }
}
