//! One request through one stack, as an ALB routes it: the listener of its port, that
//! listener's rules by priority (lowest first), the first whose conditions all match (values of
//! one condition ORed), else the listener's default actions. The answer is told in terms both
//! stacks share: forwards by backend Service and port (target group names differ between the
//! stacks) with weights and stickiness, and the request as forwarded after the rule's
//! transforms; redirects by the location they answer for this request; fixed responses by
//! status, content type and body; authentication by its settings.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::ser::SerializeStruct;
use serde::Serialize;

use super::glob::{regex_match, wildcard_match};
use super::request::Request;
use crate::model::action::{Action, RedirectConfig, RuleCondition, Transform};
use crate::model::{Listener, ListenerRule, Protocol, Stack, Token};

/// What the client gets (or the backend, for a forward).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Outcome {
    /// No listener on the port: the connection is refused.
    NoListener,
    /// The listener answered: pre-routing actions (authentication), then the final one.
    Answer { pre: Vec<String>, last: Final },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Final {
    Forward {
        /// Backend key and weight (none for a single target), sorted by key.
        targets: Vec<(String, Option<i32>)>,
        /// Stickiness duration when on.
        sticky: Option<i32>,
        /// The request's host and path as forwarded (after transforms).
        host: String,
        path: String,
    },
    Redirect {
        status: String,
        location: String,
    },
    Fixed {
        status: String,
        content_type: String,
        body: String,
    },
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::NoListener => f.write_str("no listener (connection refused)"),
            Outcome::Answer { pre, last } => {
                for p in pre {
                    write!(f, "{p}, then ")?;
                }
                write!(f, "{last}")
            }
        }
    }
}

impl fmt::Display for Final {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Final::Forward {
                targets,
                sticky,
                host,
                path,
            } => {
                f.write_str("forward to ")?;
                let list: Vec<String> = targets
                    .iter()
                    .map(|(k, w)| match w {
                        Some(w) => format!("{k} (weight {w})"),
                        None => k.clone(),
                    })
                    .collect();
                f.write_str(&list.join(", "))?;
                if let Some(s) = sticky {
                    write!(f, ", sticky {s}s")?;
                }
                write!(f, " as {host}{path}")
            }
            Final::Redirect { status, location } => write!(f, "redirect {status} to {location}"),
            Final::Fixed {
                status,
                content_type,
                body,
            } => write!(f, "fixed-response {status} {content_type} {body:?}"),
        }
    }
}

/// What a request met in a stack: the answer and the rule that gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    pub outcome: Outcome,
    /// `rule <priority> (<source>)`, or `default action of listener <port>`.
    pub matched: String,
}

/// The answer as the report prints it (`answer`), the rule, and the answer's parts.
impl Serialize for Evaluation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Evaluation", 3)?;
        st.serialize_field("answer", &self.outcome.to_string())?;
        st.serialize_field("matched", &self.matched)?;
        st.serialize_field("outcome", &self.outcome)?;
        st.end()
    }
}

/// A stack ready to route requests.
pub struct Alb<'a> {
    stack: &'a Stack,
    /// Target group id (or, for a stack ELBv2 described, ARN) → backend key (`ns/svc:port`).
    keys: BTreeMap<String, String>,
}

/// `ns/svc:port` with a named port resolved through the Service.
pub fn backend_key(
    namespace: &str,
    service: &str,
    port: &IntOrString,
    services: &[Service],
) -> String {
    let number = match port {
        IntOrString::Int(n) => Some(*n),
        IntOrString::String(name) => services
            .iter()
            .find(|s| {
                s.metadata.namespace.as_deref().unwrap_or("default") == namespace
                    && s.metadata.name.as_deref() == Some(service)
            })
            .and_then(|s| s.spec.as_ref())
            .and_then(|spec| spec.ports.as_ref())
            .and_then(|ports| {
                ports
                    .iter()
                    .find(|p| p.name.as_deref() == Some(name.as_str()))
            })
            .map(|p| p.port),
    };
    match (number, port) {
        (Some(n), _) => format!("{namespace}/{service}:{n}"),
        (None, IntOrString::String(name)) => format!("{namespace}/{service}:{name}"),
        (None, IntOrString::Int(n)) => format!("{namespace}/{service}:{n}"),
    }
}

/// The name of an existing target group from its ARN (or the text itself).
pub fn target_group_key(arn: &str) -> String {
    format!(
        "targetgroup/{}",
        super::super::actions::extract_tg_name_from_arn(arn)
    )
}

impl<'a> Alb<'a> {
    /// `services` resolve named ports of the stack's bindings.
    pub fn new(stack: &'a Stack, services: &[Service]) -> Alb<'a> {
        let keys = stack
            .target_group_bindings
            .iter()
            .map(|b| {
                (
                    b.id.clone(),
                    backend_key(
                        &b.namespace,
                        &b.spec.service_name,
                        &b.spec.service_port,
                        services,
                    ),
                )
            })
            .collect();
        Alb { stack, keys }
    }

    /// A stack whose target groups are told by `backends` rather than by its bindings: target
    /// group id (a dry-run plan's references) or ARN (rules as ELBv2 describes them) → backend
    /// key (`ns/svc:port`, see [`backend_key`]). Only the stack's listeners and rules are read.
    pub fn with_backends(stack: &'a Stack, backends: BTreeMap<String, String>) -> Alb<'a> {
        Alb {
            stack,
            keys: backends,
        }
    }

    /// The stack routed.
    pub fn stack(&self) -> &'a Stack {
        self.stack
    }

    /// The key of a forward target.
    pub fn target_key(&self, t: &Token) -> String {
        match t {
            Token::TargetGroupArn(id) => self
                .keys
                .get(id)
                .cloned()
                .unwrap_or_else(|| format!("target group {id}")),
            Token::Literal(arn) => self
                .keys
                .get(arn)
                .cloned()
                .unwrap_or_else(|| target_group_key(arn)),
            other => format!("{other:?}"),
        }
    }

    fn listener(&self, port: i32) -> Option<&'a Listener> {
        self.stack.listeners.iter().find(|l| l.port == port)
    }

    /// The listener's rules in the order ALB evaluates them.
    pub fn rules(&self, port: i32) -> Vec<&'a ListenerRule> {
        let mut rules: Vec<&ListenerRule> = self
            .stack
            .listener_rules
            .iter()
            .filter(|r| r.listener_arn == Token::ListenerArn(port))
            .collect();
        rules.sort_by_key(|r| r.priority);
        rules
    }

    /// Routes `req`.
    pub fn evaluate(&self, req: &Request) -> Evaluation {
        let Some(listener) = self.listener(req.port) else {
            return Evaluation {
                outcome: Outcome::NoListener,
                matched: format!("no listener on port {}", req.port),
            };
        };
        for rule in self.rules(req.port) {
            if rule.conditions.iter().all(|c| condition_matches(c, req)) {
                return Evaluation {
                    outcome: self.answer(&rule.actions, &rule.transforms, listener, req),
                    matched: format!("rule {} ({})", rule.priority, rule.ingress),
                };
            }
        }
        Evaluation {
            outcome: self.answer(&listener.default_actions, &[], listener, req),
            matched: format!("default action of listener {}", listener.port),
        }
    }

    fn answer(
        &self,
        actions: &[Action],
        transforms: &[Transform],
        listener: &Listener,
        req: &Request,
    ) -> Outcome {
        let mut pre = Vec::new();
        let mut last = None;
        for a in actions {
            match a {
                Action::AuthenticateCognito { config: c } => pre.push(format!(
                    "authenticate-cognito(pool={}, client={}, domain={}, scope={}, onUnauthenticated={}, cookie={}, timeout={}, params={:?})",
                    c.user_pool_arn,
                    c.user_pool_client_id,
                    c.user_pool_domain,
                    c.scope,
                    c.on_unauthenticated_request,
                    c.session_cookie_name,
                    c.session_timeout,
                    c.authentication_request_extra_params
                )),
                Action::AuthenticateOidc { config: c } => pre.push(format!(
                    "authenticate-oidc(issuer={}, authorization={}, token={}, userInfo={}, secret={}, scope={}, onUnauthenticated={}, cookie={}, timeout={}, params={:?})",
                    c.issuer,
                    c.authorization_endpoint,
                    c.token_endpoint,
                    c.user_info_endpoint,
                    c.secret,
                    c.scope,
                    c.on_unauthenticated_request,
                    c.session_cookie_name,
                    c.session_timeout,
                    c.authentication_request_extra_params
                )),
                Action::JwtValidation { config: c } => {
                    let mut claims: Vec<String> = c
                        .additional_claims
                        .iter()
                        .map(|cl| format!("{}:{}={:?}", cl.name, cl.format, cl.values))
                        .collect();
                    claims.sort();
                    pre.push(format!(
                        "jwt-validation(issuer={}, jwks={}, claims={claims:?})",
                        c.issuer, c.jwks_endpoint
                    ));
                }
                Action::Forward { config } => {
                    last = Some(self.forward(config, transforms, req));
                    break;
                }
                Action::Redirect { config } => {
                    last = Some(redirect(config, listener, req));
                    break;
                }
                Action::FixedResponse { config } => {
                    last = Some(Final::Fixed {
                        status: config.status_code.clone(),
                        // ALB answers text/plain when no content type is given.
                        content_type: config
                            .content_type
                            .clone()
                            .unwrap_or_else(|| "text/plain".into()),
                        body: config.message_body.clone().unwrap_or_default(),
                    });
                    break;
                }
            }
        }
        Outcome::Answer {
            pre,
            // A rule with authentication only would be refused by ELBv2; say so as an answer.
            last: last.unwrap_or(Final::Fixed {
                status: "(no final action)".into(),
                content_type: String::new(),
                body: String::new(),
            }),
        }
    }

    fn forward(
        &self,
        config: &crate::model::action::ForwardConfig,
        transforms: &[Transform],
        req: &Request,
    ) -> Final {
        let mut targets: Vec<(String, Option<i32>)> = config
            .target_groups
            .iter()
            .map(|t| {
                (
                    self.target_key(&t.target_group_arn),
                    Some(t.weight.unwrap_or(1)),
                )
            })
            .collect();
        // A target of weight 0 gets nothing while another gets something.
        if targets.iter().any(|(_, w)| *w != Some(0)) {
            targets.retain(|(_, w)| *w != Some(0));
        }
        targets.sort();
        let single = targets.len() == 1;
        if single {
            targets[0].1 = None;
        }
        let sticky = config
            .target_group_stickiness_config
            .as_ref()
            .filter(|s| s.enabled == Some(true) && !single)
            .map(|s| s.duration_seconds.unwrap_or(3600));
        let (host, path) = apply_transforms(transforms, &req.host, &req.path);
        Final::Forward {
            targets,
            sticky,
            host,
            path,
        }
    }
}

/// The host and path after the rule's transforms (the first rewrite of each, regex replaced
/// once).
pub fn apply_transforms(transforms: &[Transform], host: &str, path: &str) -> (String, String) {
    let (mut host, mut path) = (host.to_string(), path.to_string());
    for t in transforms {
        let (target, config) = match t.transform_type.as_str() {
            "host-header-rewrite" => (&mut host, &t.host_header_rewrite_config),
            "url-rewrite" => (&mut path, &t.url_rewrite_config),
            _ => continue,
        };
        let Some(rw) = config.as_ref().and_then(|c| c.rewrites.first()) else {
            continue;
        };
        if let Ok(re) = regex::Regex::new(&rw.regex) {
            *target = re
                .replace(target.as_str(), rw.replace.as_str())
                .into_owned();
        }
    }
    (host, path)
}

/// The location a redirect answers this request with, placeholders filled in.
fn redirect(c: &RedirectConfig, listener: &Listener, req: &Request) -> Final {
    let protocol = match listener.protocol {
        Protocol::Https => "HTTPS",
        _ => "HTTP",
    };
    let fill = |s: &str| {
        s.replace("#{protocol}", protocol)
            .replace("#{host}", &req.host)
            .replace("#{port}", &listener.port.to_string())
            .replace("#{path}", req.path.strip_prefix('/').unwrap_or(&req.path))
            .replace("#{query}", &req.query_string())
    };
    let scheme = fill(c.protocol.as_deref().unwrap_or("#{protocol}")).to_lowercase();
    let host = fill(c.host.as_deref().unwrap_or("#{host}"));
    let port = fill(c.port.as_deref().unwrap_or("#{port}"));
    let path = fill(c.path.as_deref().unwrap_or("/#{path}"));
    let query = fill(c.query.as_deref().unwrap_or("#{query}"));
    let mut location = format!("{scheme}://{host}:{port}{path}");
    if !query.is_empty() {
        location.push('?');
        location.push_str(&query);
    }
    Final::Redirect {
        status: c.status_code.clone(),
        location,
    }
}

/// Whether the request meets one condition (any of its values).
pub fn condition_matches(c: &RuleCondition, req: &Request) -> bool {
    match c {
        RuleCondition::HostHeader { config } => {
            let host = req.host.split(':').next().unwrap_or_default();
            config.values.iter().any(|v| wildcard_match(v, host, true))
                || config
                    .regex_values
                    .iter()
                    .any(|r| regex_match(r, host, true))
        }
        RuleCondition::PathPattern { config } => {
            config
                .values
                .iter()
                .any(|v| wildcard_match(v, &req.path, false))
                || config
                    .regex_values
                    .iter()
                    .any(|r| regex_match(r, &req.path, false))
        }
        RuleCondition::HttpHeader { config } => req
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(&config.http_header_name))
            .any(|(_, value)| {
                config.values.iter().any(|v| wildcard_match(v, value, true))
                    || config
                        .regex_values
                        .iter()
                        .any(|r| regex_match(r, value, true))
            }),
        RuleCondition::HttpRequestMethod { config } => config.values.contains(&req.method),
        RuleCondition::QueryString { config } => config.values.iter().any(|p| {
            req.query.iter().any(|(k, v)| {
                p.key
                    .as_ref()
                    .is_none_or(|key| wildcard_match(key, k, true))
                    && wildcard_match(&p.value, v, true)
            })
        }),
        RuleCondition::SourceIp { config } => {
            let ip = req.source_ip();
            config
                .values
                .iter()
                .filter_map(|c| c.parse::<ipnet::IpNet>().ok())
                .any(|n| n.contains(&ip))
        }
    }
}
