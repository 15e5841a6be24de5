//! What makes desired and described listeners and rules comparable: AWS echoes forward actions
//! with weight 1 and stickiness disabled, fills redirect defaults (`#{host}`...), drops empty
//! bodies, lower-cases hosts and protocols, may reorder values, and never knows the Secret an
//! OIDC action's credentials came from. Both sides, the model's actions, conditions and
//! transforms and those AWS describes (the same types), go through the same functions.

use crate::aws;
use crate::model::{
    self, AuthenticateOidcConfig, FixedResponseConfig, ForwardConfig, RedirectConfig,
    RuleCondition, StickinessConfig, TargetGroupTuple, Transform,
};

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
pub fn norm_action(a: &model::Action) -> model::Action {
    match a {
        model::Action::Forward { config: f } => {
            let mut tgs: Vec<TargetGroupTuple> = f
                .target_groups
                .iter()
                .map(|t| TargetGroupTuple {
                    target_group_arn: t.target_group_arn.clone(),
                    weight: Some(t.weight.unwrap_or(1)),
                })
                .collect();
            tgs.sort_by(|a, b| a.target_group_arn.cmp(&b.target_group_arn));
            let st = f.target_group_stickiness_config.clone().unwrap_or_default();
            let enabled = st.enabled.unwrap_or(false);
            model::Action::Forward {
                config: ForwardConfig {
                    target_groups: tgs,
                    target_group_stickiness_config: Some(StickinessConfig {
                        enabled: Some(enabled),
                        // AWS keeps no meaningful duration while stickiness is off.
                        duration_seconds: if enabled { st.duration_seconds } else { None },
                    }),
                },
            }
        }
        model::Action::Redirect { config: r } => {
            let or = |v: &Option<String>, d: &str| blank_none(v).unwrap_or_else(|| d.to_string());
            model::Action::Redirect {
                config: RedirectConfig {
                    protocol: Some(or(&r.protocol, "#{protocol}").to_ascii_uppercase()),
                    port: Some(or(&r.port, "#{port}")),
                    host: Some(or(&r.host, "#{host}")),
                    path: Some(or(&r.path, "/#{path}")),
                    query: Some(or(&r.query, "#{query}")),
                    status_code: r.status_code.clone(),
                },
            }
        }
        model::Action::FixedResponse { config: f } => model::Action::FixedResponse {
            config: FixedResponseConfig {
                status_code: f.status_code.clone(),
                content_type: blank_none(&f.content_type),
                message_body: blank_none(&f.message_body),
            },
        },
        // AWS never knows which Secret the credentials were read from.
        model::Action::AuthenticateOidc { config } => model::Action::AuthenticateOidc {
            config: AuthenticateOidcConfig {
                secret: String::new(),
                ..config.clone()
            },
        },
        other => other.clone(),
    }
}

pub fn norm_actions(list: &[model::Action]) -> Vec<model::Action> {
    list.iter().map(norm_action).collect()
}

/// One condition as AWS would describe it: values de-duplicated and sorted, hosts and methods
/// in one case. Regex values are kept as written (case matters in a regex).
pub fn norm_condition(c: &RuleCondition) -> RuleCondition {
    let mut c = c.clone();
    match &mut c {
        RuleCondition::HostHeader { config } => {
            config.values = lower(&config.values);
            config.regex_values = sorted(std::mem::take(&mut config.regex_values));
        }
        RuleCondition::PathPattern { config } => {
            config.values = sorted(std::mem::take(&mut config.values));
            config.regex_values = sorted(std::mem::take(&mut config.regex_values));
        }
        RuleCondition::HttpHeader { config } => {
            config.http_header_name = config.http_header_name.to_ascii_lowercase();
            config.values = sorted(std::mem::take(&mut config.values));
            config.regex_values = sorted(std::mem::take(&mut config.regex_values));
        }
        RuleCondition::HttpRequestMethod { config } => {
            config.values = sorted(
                config
                    .values
                    .iter()
                    .map(|v| v.to_ascii_uppercase())
                    .collect(),
            );
        }
        RuleCondition::QueryString { config } => {
            config
                .values
                .sort_by(|a, b| (&a.key, &a.value).cmp(&(&b.key, &b.value)));
        }
        RuleCondition::SourceIp { config } => {
            config.values = sorted(std::mem::take(&mut config.values));
        }
    }
    c
}

/// Conditions normalised and in a stable order (by field, then content).
pub fn norm_conditions(list: &[RuleCondition]) -> Vec<RuleCondition> {
    let mut v: Vec<RuleCondition> = list.iter().map(norm_condition).collect();
    v.sort_by_key(|c| format!("{}{:?}", c.field(), c));
    v
}

/// A transform compared by its type and the rewrites of the config that type uses (absent
/// counts as none; a config of the other kind is not compared).
pub fn norm_transform(t: &Transform) -> Transform {
    let host = t.transform_type == "host-header-rewrite";
    let used = if host {
        &t.host_header_rewrite_config
    } else {
        &t.url_rewrite_config
    };
    let used = Some(used.clone().unwrap_or_default());
    Transform {
        transform_type: t.transform_type.clone(),
        host_header_rewrite_config: if host { used.clone() } else { None },
        url_rewrite_config: if host { None } else { used },
    }
}

pub fn norm_transforms(list: &[Transform]) -> Vec<Transform> {
    list.iter().map(norm_transform).collect()
}

/// Same conditions, actions and transforms once both sides are normalised.
pub fn same_rule(want: &model::ListenerRule, have: &aws::Rule) -> bool {
    norm_conditions(&want.conditions) == norm_conditions(&have.conditions)
        && norm_actions(&want.actions) == norm_actions(&have.actions)
        && norm_transforms(&want.transforms) == norm_transforms(&have.transforms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::action::{Rewrite, RewriteConfigObject, ValuesConfig};
    use crate::model::{Redacted, Token};

    fn forward(weight: Option<i32>, stickiness: Option<StickinessConfig>) -> model::Action {
        model::Action::Forward {
            config: ForwardConfig {
                target_groups: vec![TargetGroupTuple {
                    target_group_arn: Token::Literal("arn:tg".into()),
                    weight,
                }],
                target_group_stickiness_config: stickiness,
            },
        }
    }

    #[test]
    fn forward_echo_with_weight_and_disabled_stickiness_is_equal() {
        let want = model::Action::forward_arn("arn:tg");
        let echoed = forward(
            Some(1),
            Some(StickinessConfig {
                enabled: Some(false),
                duration_seconds: Some(3600),
            }),
        );
        assert_eq!(norm_action(&want), norm_action(&echoed));
        assert_ne!(norm_action(&want), norm_action(&forward(Some(2), None)));
    }

    #[test]
    fn redirect_defaults_and_empty_bodies_normalise() {
        let want = model::Action::Redirect {
            config: RedirectConfig {
                protocol: Some("https".into()),
                port: Some("443".into()),
                status_code: "HTTP_301".into(),
                ..Default::default()
            },
        };
        let echoed = model::Action::Redirect {
            config: RedirectConfig {
                protocol: Some("HTTPS".into()),
                port: Some("443".into()),
                host: Some("#{host}".into()),
                path: Some("/#{path}".into()),
                query: Some("#{query}".into()),
                status_code: "HTTP_301".into(),
            },
        };
        assert_eq!(norm_action(&want), norm_action(&echoed));
        let fixed = |body: Option<&str>| model::Action::FixedResponse {
            config: FixedResponseConfig {
                content_type: Some("text/plain".into()),
                message_body: body.map(String::from),
                status_code: "404".into(),
            },
        };
        assert_eq!(norm_action(&fixed(Some(""))), norm_action(&fixed(None)));
        assert_ne!(norm_action(&fixed(Some("x"))), norm_action(&fixed(None)));
    }

    #[test]
    fn oidc_compares_without_the_secret_name_but_with_the_credentials() {
        let oidc = |secret: &str, client_secret: &str| model::Action::AuthenticateOidc {
            config: AuthenticateOidcConfig {
                issuer: "https://idp".into(),
                secret: secret.into(),
                client_id: Redacted::new("id"),
                client_secret: Redacted::new(client_secret),
                ..Default::default()
            },
        };
        assert_eq!(
            norm_action(&oidc("shop/oidc", "s1")),
            norm_action(&oidc("", "s1"))
        );
        assert_ne!(
            norm_action(&oidc("shop/oidc", "s1")),
            norm_action(&oidc("", "s2"))
        );
    }

    fn path(values: &[&str], regex: &[&str]) -> RuleCondition {
        RuleCondition::PathPattern {
            config: ValuesConfig {
                values: values.iter().map(|s| s.to_string()).collect(),
                regex_values: regex.iter().map(|s| s.to_string()).collect(),
            },
        }
    }

    fn host(v: &str) -> RuleCondition {
        RuleCondition::HostHeader {
            config: ValuesConfig {
                values: vec![v.into()],
                regex_values: vec![],
            },
        }
    }

    #[test]
    fn conditions_compare_ignoring_order_and_host_case_but_not_regex_case() {
        let a = vec![path(&["/b", "/a"], &[]), host("Echo.Example.com")];
        let b = vec![host("echo.example.com"), path(&["/a", "/b"], &[])];
        assert_eq!(norm_conditions(&a), norm_conditions(&b));
        assert_ne!(
            norm_condition(&path(&[], &["^/A"])),
            norm_condition(&path(&[], &["^/a"]))
        );
    }

    #[test]
    fn transforms_compare_by_the_config_their_type_uses() {
        let rw = |regex: &str| {
            Some(RewriteConfigObject {
                rewrites: vec![Rewrite {
                    regex: regex.into(),
                    replace: "x".into(),
                }],
            })
        };
        let want = Transform {
            transform_type: "url-rewrite".into(),
            host_header_rewrite_config: rw("^ignored"),
            url_rewrite_config: rw("^/a"),
        };
        let described = Transform {
            host_header_rewrite_config: None,
            ..want.clone()
        };
        assert_eq!(norm_transform(&want), norm_transform(&described));
        let other = Transform {
            url_rewrite_config: rw("^/b"),
            ..want.clone()
        };
        assert_ne!(norm_transform(&want), norm_transform(&other));
    }
}
