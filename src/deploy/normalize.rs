//! Model → AWS conversion (with tokens resolved to ARNs / ids) and the normalisation that makes
//! desired and described state comparable: AWS echoes forward actions with weight 1 and
//! stickiness disabled, fills redirect defaults (`#{host}`...), drops empty bodies, lower-cases
//! hosts and protocols, and may reorder values. Both sides go through the same functions.

use std::collections::BTreeMap;

use super::error::{Error, Result};
use crate::aws::types as aws;
use crate::model::{self, Token};

/// What tokens in the model resolve to, filled in as the deploy creates things.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    pub load_balancer_arn: Option<String>,
    pub frontend_nlb_arn: Option<String>,
    pub listener_arns: BTreeMap<i32, String>,
    pub target_group_arns: BTreeMap<String, String>,
    pub managed_sg: Option<String>,
    pub backend_sg: Option<String>,
    /// Trust store ARN by name (`mutual-authentication`).
    pub trust_store_arns: BTreeMap<String, String>,
}

impl Resolved {
    pub fn token(&self, t: &Token) -> Result<String> {
        let missing = |what: String| Error::Invalid(format!("unresolved reference to {what}"));
        match t {
            Token::Literal(s) => Ok(s.clone()),
            Token::LoadBalancerArn => self
                .load_balancer_arn
                .clone()
                .ok_or_else(|| missing("the load balancer".into())),
            Token::FrontendNlbArn => self
                .frontend_nlb_arn
                .clone()
                .ok_or_else(|| missing("the frontend NLB".into())),
            Token::ListenerArn(p) => self
                .listener_arns
                .get(p)
                .cloned()
                .ok_or_else(|| missing(format!("listener {p}"))),
            Token::TargetGroupArn(id) => self
                .target_group_arns
                .get(id)
                .cloned()
                .ok_or_else(|| missing(format!("target group {id}"))),
            Token::ManagedSecurityGroupId => self
                .managed_sg
                .clone()
                .ok_or_else(|| missing("the managed security group".into())),
            Token::BackendSecurityGroupId => self
                .backend_sg
                .clone()
                .ok_or_else(|| missing("the backend security group".into())),
        }
    }
}

pub fn action(a: &model::Action, r: &Resolved) -> Result<aws::Action> {
    Ok(match a {
        model::Action::FixedResponse { config } => {
            aws::Action::FixedResponse(aws::FixedResponseConfig {
                status_code: config.status_code.clone(),
                content_type: config.content_type.clone(),
                message_body: config.message_body.clone(),
            })
        }
        model::Action::Redirect { config } => aws::Action::Redirect(aws::RedirectConfig {
            protocol: config.protocol.clone(),
            port: config.port.clone(),
            host: config.host.clone(),
            path: config.path.clone(),
            query: config.query.clone(),
            status_code: config.status_code.clone(),
        }),
        model::Action::Forward { config } => {
            let mut target_groups = Vec::new();
            for t in &config.target_groups {
                target_groups.push(aws::WeightedTargetGroup {
                    arn: r.token(&t.target_group_arn)?,
                    weight: t.weight,
                });
            }
            aws::Action::Forward(aws::ForwardConfig {
                target_groups,
                stickiness: config.target_group_stickiness_config.as_ref().map(|s| {
                    aws::Stickiness {
                        enabled: s.enabled.unwrap_or(false),
                        duration_seconds: s.duration_seconds,
                    }
                }),
            })
        }
        model::Action::AuthenticateCognito { config: c } => {
            aws::Action::AuthenticateCognito(aws::AuthenticateCognitoConfig {
                user_pool_arn: c.user_pool_arn.clone(),
                user_pool_client_id: c.user_pool_client_id.clone(),
                user_pool_domain: c.user_pool_domain.clone(),
                session_cookie_name: Some(c.session_cookie_name.clone()),
                scope: Some(c.scope.clone()),
                session_timeout: Some(c.session_timeout),
                authentication_request_extra_params: c.authentication_request_extra_params.clone(),
                on_unauthenticated_request: Some(c.on_unauthenticated_request.clone()),
            })
        }
        model::Action::AuthenticateOidc { config: c } => {
            aws::Action::AuthenticateOidc(aws::AuthenticateOidcConfig {
                issuer: c.issuer.clone(),
                authorization_endpoint: c.authorization_endpoint.clone(),
                token_endpoint: c.token_endpoint.clone(),
                user_info_endpoint: c.user_info_endpoint.clone(),
                client_id: c.client_id.expose().to_string(),
                // Always sent, as upstream does (see `oidc_secrets` for how it is compared).
                client_secret: Some(c.client_secret.expose().to_string()),
                session_cookie_name: Some(c.session_cookie_name.clone()),
                scope: Some(c.scope.clone()),
                session_timeout: Some(c.session_timeout),
                authentication_request_extra_params: c.authentication_request_extra_params.clone(),
                on_unauthenticated_request: Some(c.on_unauthenticated_request.clone()),
                use_existing_client_secret: None,
            })
        }
        model::Action::JwtValidation { config: j } => {
            aws::Action::JwtValidation(aws::JwtValidationConfig {
                jwks_endpoint: j.jwks_endpoint.clone(),
                issuer: j.issuer.clone(),
                additional_claims: j
                    .additional_claims
                    .iter()
                    .map(|c| aws::JwtClaim {
                        format: c.format.clone(),
                        name: c.name.clone(),
                        values: c.values.clone(),
                    })
                    .collect(),
            })
        }
    })
}

pub fn actions(list: &[model::Action], r: &Resolved) -> Result<Vec<aws::Action>> {
    list.iter().map(|a| action(a, r)).collect()
}

pub fn condition(c: &model::RuleCondition) -> aws::RuleCondition {
    use model::RuleCondition as M;
    match c {
        M::HostHeader { config } => aws::RuleCondition::HostHeader {
            values: config.values.clone(),
            regex_values: config.regex_values.clone(),
        },
        M::PathPattern { config } => aws::RuleCondition::PathPattern {
            values: config.values.clone(),
            regex_values: config.regex_values.clone(),
        },
        M::HttpHeader { config } => aws::RuleCondition::HttpHeader {
            name: config.http_header_name.clone(),
            values: config.values.clone(),
            regex_values: config.regex_values.clone(),
        },
        M::HttpRequestMethod { config } => aws::RuleCondition::HttpRequestMethod {
            values: config.values.clone(),
        },
        M::QueryString { config } => aws::RuleCondition::QueryString {
            values: config
                .values
                .iter()
                .map(|p| aws::QueryStringPair {
                    key: p.key.clone(),
                    value: p.value.clone(),
                })
                .collect(),
        },
        M::SourceIp { config } => aws::RuleCondition::SourceIp {
            values: config.values.clone(),
        },
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v.dedup();
    v
}

fn lower(v: &[String]) -> Vec<String> {
    sorted(v.iter().map(|s| s.to_ascii_lowercase()).collect())
}

fn blank_none(v: &Option<String>) -> Option<String> {
    v.clone().filter(|s| !s.is_empty())
}

/// One action as AWS would describe it after accepting it.
pub fn norm_action(a: &aws::Action) -> aws::Action {
    match a {
        aws::Action::Forward(f) => {
            let mut tgs: Vec<aws::WeightedTargetGroup> = f
                .target_groups
                .iter()
                .map(|t| aws::WeightedTargetGroup {
                    arn: t.arn.clone(),
                    weight: Some(t.weight.unwrap_or(1)),
                })
                .collect();
            tgs.sort_by(|a, b| a.arn.cmp(&b.arn));
            let st = f.stickiness.clone().unwrap_or_default();
            aws::Action::Forward(aws::ForwardConfig {
                target_groups: tgs,
                stickiness: Some(aws::Stickiness {
                    enabled: st.enabled,
                    // AWS keeps no meaningful duration while stickiness is off.
                    duration_seconds: if st.enabled {
                        st.duration_seconds
                    } else {
                        None
                    },
                }),
            })
        }
        aws::Action::Redirect(r) => {
            let or = |v: &Option<String>, d: &str| blank_none(v).unwrap_or_else(|| d.to_string());
            aws::Action::Redirect(aws::RedirectConfig {
                protocol: Some(or(&r.protocol, "#{protocol}").to_ascii_uppercase()),
                port: Some(or(&r.port, "#{port}")),
                host: Some(or(&r.host, "#{host}")),
                path: Some(or(&r.path, "/#{path}")),
                query: Some(or(&r.query, "#{query}")),
                status_code: r.status_code.clone(),
            })
        }
        aws::Action::FixedResponse(f) => aws::Action::FixedResponse(aws::FixedResponseConfig {
            status_code: f.status_code.clone(),
            content_type: blank_none(&f.content_type),
            message_body: blank_none(&f.message_body),
        }),
        other => other.clone(),
    }
}

pub fn norm_actions(list: &[aws::Action]) -> Vec<aws::Action> {
    list.iter().map(norm_action).collect()
}

/// One condition as AWS would describe it: values de-duplicated and sorted, hosts and methods
/// in one case. Regex values are kept as written (case matters in a regex).
pub fn norm_condition(c: &aws::RuleCondition) -> aws::RuleCondition {
    use aws::RuleCondition as C;
    match c {
        C::HostHeader {
            values,
            regex_values,
        } => C::HostHeader {
            values: lower(values),
            regex_values: sorted(regex_values.clone()),
        },
        C::PathPattern {
            values,
            regex_values,
        } => C::PathPattern {
            values: sorted(values.clone()),
            regex_values: sorted(regex_values.clone()),
        },
        C::HttpHeader {
            name,
            values,
            regex_values,
        } => C::HttpHeader {
            name: name.to_ascii_lowercase(),
            values: sorted(values.clone()),
            regex_values: sorted(regex_values.clone()),
        },
        C::HttpRequestMethod { values } => C::HttpRequestMethod {
            values: sorted(values.iter().map(|v| v.to_ascii_uppercase()).collect()),
        },
        C::QueryString { values } => {
            let mut v = values.clone();
            v.sort_by(|a, b| (&a.key, &a.value).cmp(&(&b.key, &b.value)));
            C::QueryString { values: v }
        }
        C::SourceIp { values } => C::SourceIp {
            values: sorted(values.clone()),
        },
    }
}

/// Conditions normalised and in a stable order (by field, then content).
pub fn norm_conditions(list: &[aws::RuleCondition]) -> Vec<aws::RuleCondition> {
    let mut v: Vec<aws::RuleCondition> = list.iter().map(norm_condition).collect();
    v.sort_by_key(|c| format!("{}{:?}", c.field(), c));
    v
}

/// Same conditions and actions once both sides are normalised.
pub fn same_rule(
    want_conditions: &[aws::RuleCondition],
    want_actions: &[aws::Action],
    want_transforms: &[aws::RuleTransform],
    have: &aws::Rule,
) -> bool {
    norm_conditions(want_conditions) == norm_conditions(&have.conditions)
        && norm_actions(want_actions) == norm_actions(&have.actions)
        && want_transforms == have.transforms.as_slice()
}

/// A model transform as ELBv2 takes it.
pub fn transform(t: &model::Transform) -> aws::RuleTransform {
    let config = match t.transform_type.as_str() {
        "host-header-rewrite" => &t.host_header_rewrite_config,
        _ => &t.url_rewrite_config,
    };
    aws::RuleTransform {
        transform_type: t.transform_type.clone(),
        rewrites: config
            .iter()
            .flat_map(|c| &c.rewrites)
            .map(|r| (r.regex.clone(), r.replace.clone()))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::backend::{ForwardConfig, TargetGroupTuple};

    #[test]
    fn forward_echo_with_weight_and_disabled_stickiness_is_equal() {
        let want = aws::Action::forward("arn:tg");
        let echoed = aws::Action::Forward(aws::ForwardConfig {
            target_groups: vec![aws::WeightedTargetGroup {
                arn: "arn:tg".into(),
                weight: Some(1),
            }],
            stickiness: Some(aws::Stickiness {
                enabled: false,
                duration_seconds: Some(3600),
            }),
        });
        assert_eq!(norm_action(&want), norm_action(&echoed));
        let heavier = aws::Action::Forward(aws::ForwardConfig {
            target_groups: vec![aws::WeightedTargetGroup {
                arn: "arn:tg".into(),
                weight: Some(2),
            }],
            stickiness: None,
        });
        assert_ne!(norm_action(&want), norm_action(&heavier));
    }

    #[test]
    fn redirect_defaults_and_empty_bodies_normalise() {
        let want = aws::Action::Redirect(aws::RedirectConfig {
            protocol: Some("https".into()),
            port: Some("443".into()),
            status_code: "HTTP_301".into(),
            ..Default::default()
        });
        let echoed = aws::Action::Redirect(aws::RedirectConfig {
            protocol: Some("HTTPS".into()),
            port: Some("443".into()),
            host: Some("#{host}".into()),
            path: Some("/#{path}".into()),
            query: Some("#{query}".into()),
            status_code: "HTTP_301".into(),
        });
        assert_eq!(norm_action(&want), norm_action(&echoed));
        let fixed = aws::Action::fixed("404", Some("text/plain"), Some(""));
        assert_eq!(
            norm_action(&fixed),
            norm_action(&aws::Action::fixed("404", Some("text/plain"), None))
        );
    }

    #[test]
    fn conditions_compare_ignoring_order_and_host_case_but_not_regex_case() {
        let a = vec![
            aws::RuleCondition::PathPattern {
                values: vec!["/b".into(), "/a".into()],
                regex_values: vec![],
            },
            aws::RuleCondition::HostHeader {
                values: vec!["Echo.Example.com".into()],
                regex_values: vec![],
            },
        ];
        let b = vec![
            aws::RuleCondition::HostHeader {
                values: vec!["echo.example.com".into()],
                regex_values: vec![],
            },
            aws::RuleCondition::PathPattern {
                values: vec!["/a".into(), "/b".into()],
                regex_values: vec![],
            },
        ];
        assert_eq!(norm_conditions(&a), norm_conditions(&b));
        let re = |r: &str| aws::RuleCondition::PathPattern {
            values: vec![],
            regex_values: vec![r.into()],
        };
        assert_ne!(norm_condition(&re("^/A")), norm_condition(&re("^/a")));
    }

    #[test]
    fn tokens_resolve_or_fail_clearly() {
        let mut r = Resolved::default();
        r.target_group_arns
            .insert("ns/i-svc:80".into(), "arn:tg".into());
        let fwd = model::Action::Forward {
            config: ForwardConfig {
                target_groups: vec![TargetGroupTuple {
                    target_group_arn: Token::TargetGroupArn("ns/i-svc:80".into()),
                    weight: None,
                }],
                target_group_stickiness_config: None,
            },
        };
        assert_eq!(action(&fwd, &r).unwrap(), aws::Action::forward("arn:tg"));
        let err = r.token(&Token::ListenerArn(443)).unwrap_err();
        assert_eq!(err.to_string(), "unresolved reference to listener 443");
    }
}
