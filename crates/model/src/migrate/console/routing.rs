//! The routing half of a dry-run plan read back into the model, so `--verify`'s evaluator can
//! route requests through a plan read from the cluster: the ALB's listeners (port, protocol,
//! default actions), their rules (priority, conditions, actions, transforms) and, for every
//! target group a forward names, the backend its binding stands for. References
//! (`{"$ref": "#/resources/<type>/<id>/status/<field>"}`) become the model's tokens; the
//! authentication actions' fields are read under upstream's names (the OIDC client redacted,
//! as upstream marshals it, and its Secret unknown: both plans read alike).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Map, Value};

use super::ConsoleError;
use crate::migrate::verify::eval::{backend_key, Alb};
use crate::model::action::{
    Action, AuthenticateCognitoConfig, AuthenticateOidcConfig, ForwardConfig, RuleCondition,
    StickinessConfig, TargetGroupTuple, Transform,
};
use crate::model::upstream_json::{LISTENER, LISTENER_RULE, TARGET_GROUP, TARGET_GROUP_BINDING};
use crate::model::{Listener, ListenerRule, Protocol, Stack, Token};

/// A plan's listeners and rules, and its target groups' backends.
#[derive(Debug, Clone, Default)]
pub struct PlanRouting {
    /// Listeners and rules only.
    pub stack: Stack,
    /// Target group id → namespace, Service and port (as the binding names it).
    pub backends: BTreeMap<String, (String, String, IntOrString)>,
}

impl PlanRouting {
    /// The evaluator over this plan; `services` resolve named ports.
    pub fn alb<'a>(&'a self, services: &[Service]) -> Alb<'a> {
        let keys = self
            .backends
            .iter()
            .map(|(id, (ns, svc, port))| (id.clone(), backend_key(ns, svc, port, services)))
            .collect();
        Alb::with_backends(&self.stack, keys)
    }

    /// Namespaces of the bindings that name their Service's port by name (only their Services
    /// need reading).
    pub fn named_port_namespaces(&self) -> BTreeSet<String> {
        self.backends
            .values()
            .filter(|(_, _, p)| matches!(p, IntOrString::String(_)))
            .map(|(ns, _, _)| ns.clone())
            .collect()
    }
}

fn err(what: impl Into<String>) -> ConsoleError {
    ConsoleError::Routing(what.into())
}

/// `(type, id, field)` of a reference.
pub fn parse_ref(r: &str) -> Option<(&str, &str, &str)> {
    let rest = r.strip_prefix("#/resources/")?;
    let (kind, rest) = rest.split_once('/')?;
    let (id, field) = rest.rsplit_once("/status/")?;
    Some((kind, id, field))
}

/// The reference's target, when `v` is `{"$ref": ...}`.
fn reference(v: &Value) -> Option<(&str, &str, &str)> {
    v.get("$ref").and_then(Value::as_str).and_then(parse_ref)
}

/// `(id, spec)` of every resource of `kind` in the plan.
fn resources<'a>(doc: &'a Value, kind: &str) -> Vec<(&'a String, &'a Value)> {
    let Some(by_id) = doc
        .get("resources")
        .and_then(|r| r.get(kind))
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    by_id
        .iter()
        .map(|(id, r)| (id, r.get("spec").unwrap_or(&Value::Null)))
        .collect()
}

fn decode<T: serde::de::DeserializeOwned>(
    v: Option<&Value>,
    what: &str,
) -> Result<T, ConsoleError> {
    serde_json::from_value(v.cloned().unwrap_or(Value::Null))
        .map_err(|e| err(format!("{what}: {e}")))
}

fn text(o: &Map<String, Value>, key: &str) -> String {
    o.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn extra_params(
    o: &Map<String, Value>,
    what: &str,
) -> Result<BTreeMap<String, String>, ConsoleError> {
    match o.get("authenticationRequestExtraParams") {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        v => decode(v, what),
    }
}

/// The `key` object of an action.
fn config<'v>(v: &'v Value, key: &str, what: &str) -> Result<&'v Map<String, Value>, ConsoleError> {
    v.get(key)
        .and_then(Value::as_object)
        .ok_or_else(|| err(format!("{what}: action without {key}")))
}

fn action(v: &Value, what: &str) -> Result<Action, ConsoleError> {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
    match kind {
        "forward" => {
            let c = config(v, "forwardConfig", what)?;
            let mut target_groups = Vec::new();
            for t in c
                .get("targetGroups")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let arn = t.get("targetGroupARN").unwrap_or(&Value::Null);
                let token = match (reference(arn), arn.as_str()) {
                    (Some((TARGET_GROUP, id, _)), _) => Token::TargetGroupArn(id.to_string()),
                    (_, Some(literal)) => Token::Literal(literal.to_string()),
                    _ => {
                        return Err(err(format!(
                            "{what}: forward target {arn} is not a target group"
                        )))
                    }
                };
                let weight = t.get("weight").and_then(Value::as_i64).map(|w| w as i32);
                target_groups.push(TargetGroupTuple {
                    target_group_arn: token,
                    weight,
                });
            }
            let stickiness: Option<StickinessConfig> = match c.get("targetGroupStickinessConfig") {
                None | Some(Value::Null) => None,
                s => Some(decode(s, what)?),
            };
            Ok(Action::Forward {
                config: ForwardConfig {
                    target_groups,
                    target_group_stickiness_config: stickiness,
                },
            })
        }
        "authenticate-cognito" => {
            let c = config(v, "authenticateCognitoConfig", what)?;
            Ok(Action::AuthenticateCognito {
                config: AuthenticateCognitoConfig {
                    user_pool_arn: text(c, "userPoolARN"),
                    user_pool_client_id: text(c, "userPoolClientID"),
                    user_pool_domain: text(c, "userPoolDomain"),
                    authentication_request_extra_params: extra_params(c, what)?,
                    on_unauthenticated_request: text(c, "onUnauthenticatedRequest"),
                    scope: text(c, "scope"),
                    session_cookie_name: text(c, "sessionCookieName"),
                    session_timeout: c
                        .get("sessionTimeout")
                        .and_then(Value::as_i64)
                        .unwrap_or_default(),
                },
            })
        }
        "authenticate-oidc" => {
            let c = config(v, "authenticateOIDCConfig", what)?;
            Ok(Action::AuthenticateOidc {
                config: AuthenticateOidcConfig {
                    issuer: text(c, "issuer"),
                    authorization_endpoint: text(c, "authorizationEndpoint"),
                    token_endpoint: text(c, "tokenEndpoint"),
                    user_info_endpoint: text(c, "userInfoEndpoint"),
                    authentication_request_extra_params: extra_params(c, what)?,
                    on_unauthenticated_request: text(c, "onUnauthenticatedRequest"),
                    scope: text(c, "scope"),
                    session_cookie_name: text(c, "sessionCookieName"),
                    session_timeout: c
                        .get("sessionTimeout")
                        .and_then(Value::as_i64)
                        .unwrap_or_default(),
                    ..Default::default()
                },
            })
        }
        // Fixed response, redirect and JWT validation: the model's own field names.
        _ => decode(Some(v), what),
    }
}

fn actions(v: Option<&Value>, what: &str) -> Result<Vec<Action>, ConsoleError> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|a| action(a, what))
        .collect()
}

/// Reads the listeners (HTTP and HTTPS: a frontend NLB's are left out), rules and bindings of
/// a plan.
pub fn parse_routing(raw: &str) -> Result<PlanRouting, ConsoleError> {
    let doc: Value =
        serde_json::from_str(raw).map_err(|e| ConsoleError::InvalidStack(e.to_string()))?;
    let mut out = PlanRouting::default();
    out.stack.stack_id = doc
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut ports: BTreeMap<&str, i32> = BTreeMap::new();
    for (id, spec) in resources(&doc, LISTENER) {
        let what = format!("listener {id}");
        let protocol: Protocol = decode(spec.get("protocol"), &what)?;
        if !matches!(protocol, Protocol::Http | Protocol::Https) {
            continue;
        }
        let port = spec
            .get("port")
            .and_then(Value::as_i64)
            .ok_or_else(|| err(format!("{what}: no port")))? as i32;
        let mut l = Listener::new(port, protocol, actions(spec.get("defaultActions"), &what)?);
        l.id = id.clone();
        ports.insert(id.as_str(), port);
        out.stack.listeners.push(l);
    }
    for (id, spec) in resources(&doc, LISTENER_RULE) {
        let what = format!("listener rule {id}");
        let listener = spec.get("listenerARN").unwrap_or(&Value::Null);
        let port = match reference(listener) {
            Some((LISTENER, lid, _)) => match ports.get(lid) {
                Some(p) => *p,
                // A rule of a listener left out (not HTTP or HTTPS).
                None => continue,
            },
            _ => {
                return Err(err(format!(
                    "{what}: listenerARN {listener} is not a listener of the plan"
                )))
            }
        };
        let priority = spec
            .get("priority")
            .and_then(Value::as_i64)
            .ok_or_else(|| err(format!("{what}: no priority")))? as i32;
        let conditions: Vec<RuleCondition> = match spec.get("conditions") {
            None | Some(Value::Null) => Vec::new(),
            c => decode(c, &what)?,
        };
        let mut rule = ListenerRule::new(
            Token::ListenerArn(port),
            priority,
            conditions,
            actions(spec.get("actions"), &what)?,
        );
        rule.transforms = match spec.get("transforms") {
            None | Some(Value::Null) => Vec::<Transform>::new(),
            t => decode(t, &what)?,
        };
        rule.id = id.clone();
        // Where the answer came from, as the report names it: the plan's rule id.
        rule.ingress = id.clone();
        out.stack.listener_rules.push(rule);
    }
    out.stack.listeners.sort_by_key(|l| l.port);
    out.stack.listener_rules.sort_by(|a, b| {
        (a.listener_arn.clone(), a.priority).cmp(&(b.listener_arn.clone(), b.priority))
    });
    for (id, spec) in resources(&doc, TARGET_GROUP_BINDING) {
        let template = spec.get("template").unwrap_or(&Value::Null);
        let ns = template
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let svc = template
            .pointer("/spec/serviceRef/name")
            .and_then(Value::as_str);
        let port = match template.pointer("/spec/serviceRef/port") {
            Some(Value::String(s)) => Some(IntOrString::String(s.clone())),
            Some(v) => v.as_i64().map(|n| IntOrString::Int(n as i32)),
            None => None,
        };
        if let (Some(svc), Some(port)) = (svc, port) {
            out.backends
                .insert(id.clone(), (ns.to_string(), svc.to_string(), port));
        }
    }
    Ok(out)
}
