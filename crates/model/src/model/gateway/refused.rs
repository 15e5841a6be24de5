//! Rules of a route that do not decode into the types we read it with: a value of an enum the
//! types do not know, above all a filter of the experimental channel (`ExternalAuth`, which many
//! clusters install) or of a later Gateway API release. Without a word the whole route would
//! fail to decode and count as gone: its rules and target groups deleted from the load balancer
//! at the next relist while its status still said Accepted.
//!
//! Instead each such rule is refused and the rest of the route is kept. A refused rule is never
//! served without what it asked for (a rule served without its `ExternalAuth` filter would skip
//! authentication): it keeps only its matches — no backend, no filter — so the model answers
//! the requests it matches with 500, as the Gateway API asks of a filter that cannot be applied
//! ("the filter MUST NOT be skipped. Instead, requests that would have been processed by that
//! filter MUST receive a HTTP error response"); a rule whose matches themselves do not decode is
//! left out. Decoding notes each refusal on the object (in memory only, like
//! [`super::dropped::DROPPED_FIELDS`]); the model turns each into the route condition the Gateway
//! API asks for an unknown filter type (`Accepted` False, reason [`REFUSED_REASON`]) and a
//! Warning.
//!
//! A rule whose RequestRedirect filter asks for a status code an ALB redirect cannot answer
//! with (303, 307, 308 of the experimental channel) decodes, but is refused the same way when
//! the route is read for the model ([`refuse_unservable_redirects`]): upstream builds the
//! redirect and only the AWS call fails, failing the whole Gateway.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use gateway_api::apis::standard::httproutes::{
    HttpRoute, HttpRouteRules, HttpRouteRulesFiltersType,
};

/// In-memory annotation carrying the refused rules (JSON); never written back.
pub const REFUSED_RULES: &str = "albc.internal/refused-rules";

/// Route condition reason of a refused rule: the Gateway API's for an unknown filter type
/// ("Unknown values here must result in the implementation setting the Accepted Condition for
/// the Route to `status: False`, with a Reason of `UnsupportedValue`").
pub const REFUSED_REASON: &str = "UnsupportedValue";

/// One refused rule of a route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedRule {
    /// Index of the rule in the route's `spec.rules` as written.
    pub rule: usize,
    /// What does not decode and what became of the rule.
    pub message: String,
    /// The rule is left out of the decoded route (even its matches do not decode), so the
    /// decoded rules after it sit one position earlier than written.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub left_out: bool,
}

/// The status codes an ALB redirect action answers with (`HTTP_301`, `HTTP_302`).
pub const ALB_REDIRECT_STATUS_CODES: [i64; 2] = [301, 302];

/// `probe` (a copy of the route) with `rules` as its rules decodes as `K`.
fn check<K: DeserializeOwned>(
    probe: &mut Value,
    rules: Vec<Value>,
) -> Result<(), serde_json::Error> {
    probe["spec"]["rules"] = Value::Array(rules);
    serde_json::from_value::<K>(probe.clone()).map(|_| ())
}

/// The rule with its matches only (and its name): no backend, no filter.
fn matches_only(rule: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in ["name", "matches"] {
        if let Some(v) = rule.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    Value::Object(out)
}

/// The types of the rule's filters (its own and its backendRefs') that `K` does not know.
fn unknown_filter_types<K: DeserializeOwned>(probe: &mut Value, rule: &Value) -> Vec<String> {
    let list = |v: &Value, key: &str| v.get(key).and_then(Value::as_array).cloned();
    let mut candidates: Vec<(Value, Value)> = Vec::new();
    for f in list(rule, "filters").unwrap_or_default() {
        candidates.push((f.clone(), json!({"filters": [f]})));
    }
    for b in list(rule, "backendRefs").unwrap_or_default() {
        for f in list(&b, "filters").unwrap_or_default() {
            let probe_ref = json!({"name": "probe", "filters": [f.clone()]});
            candidates.push((f, json!({"backendRefs": [probe_ref]})));
        }
    }
    let mut out: Vec<String> = Vec::new();
    for (filter, candidate) in candidates {
        let Some(t) = filter.get("type").and_then(Value::as_str) else {
            continue;
        };
        if let Err(e) = check::<K>(probe, vec![candidate]) {
            // serde names an unknown variant as `Type`.
            if e.to_string().contains(&format!("`{t}`")) && !out.iter().any(|o| o == t) {
                out.push(t.to_string());
            }
        }
    }
    out
}

/// When `raw` (a route read as `K`) does not decode because of some of its `spec.rules`: each
/// such rule replaced by its matches alone, or left out when even they do not decode; returns
/// the refusals. Empty (and `raw` unchanged): the route fails for another reason.
pub fn refuse_undecodable_rules<K: DeserializeOwned>(raw: &mut Value) -> Vec<RefusedRule> {
    let Some(rules) = raw
        .pointer("/spec/rules")
        .and_then(Value::as_array)
        .cloned()
    else {
        return Vec::new();
    };
    let mut probe = raw.clone();
    if check::<K>(&mut probe, Vec::new()).is_err() {
        return Vec::new();
    }
    let mut kept = Vec::with_capacity(rules.len());
    let mut refused = Vec::new();
    for (i, rule) in rules.into_iter().enumerate() {
        let error = match check::<K>(&mut probe, vec![rule.clone()]) {
            Ok(()) => {
                kept.push(rule);
                continue;
            }
            Err(e) => e,
        };
        let why = match unknown_filter_types::<K>(&mut probe, &rule).as_slice() {
            [] => error.to_string(),
            [one] => format!("filter type {one} is not supported"),
            many => format!("filter types {} are not supported", many.join(", ")),
        };
        let neutered = matches_only(&rule);
        let left_out = check::<K>(&mut probe, vec![neutered.clone()]).is_err();
        let message = if left_out {
            format!("spec.rules[{i}]: {why}: the rule is left out")
        } else {
            kept.push(neutered);
            not_served(i, &why)
        };
        refused.push(RefusedRule {
            rule: i,
            message,
            left_out,
        });
    }
    if !refused.is_empty() {
        raw["spec"]["rules"] = Value::Array(kept);
    }
    refused
}

/// The message of a rule kept with its matches only.
fn not_served(rule: usize, why: &str) -> String {
    format!("spec.rules[{rule}]: {why}: the rule is not served (never without its filters); the requests it matches are answered 500")
}

/// The position in `spec.rules` as written of the decoded rule at `decoded`, given the rules
/// decoding refused (those left out shift the later ones).
fn written_index(decoded: usize, refused: &[RefusedRule]) -> usize {
    let mut seen = 0;
    (0..)
        .filter(|i| !refused.iter().any(|r| r.left_out && r.rule == *i))
        .find(|_| {
            seen += 1;
            seen > decoded
        })
        .unwrap_or(decoded)
}

/// Refuses the HTTPRoute rules (as decoded: `decoded` are the refusals decoding noted) whose
/// RequestRedirect filter asks for a status code outside [`ALB_REDIRECT_STATUS_CODES`]: each
/// keeps only its matches and name, so it answers 500 and is never served without its redirect
/// (nor with another status code than asked); the route gets the Gateway API's condition for an
/// unsupported value. Upstream builds the redirect and fails at the AWS call, failing the
/// whole Gateway.
pub fn refuse_unservable_redirects(
    rules: &mut [HttpRouteRules],
    decoded: &[RefusedRule],
) -> Vec<RefusedRule> {
    let mut out = Vec::new();
    for (i, rule) in rules.iter_mut().enumerate() {
        let code = rule
            .filters
            .iter()
            .flatten()
            .filter(|f| f.r#type == HttpRouteRulesFiltersType::RequestRedirect)
            .filter_map(|f| f.request_redirect.as_ref()?.status_code)
            .find(|c| !ALB_REDIRECT_STATUS_CODES.contains(c));
        let Some(code) = code else {
            continue;
        };
        let written = written_index(i, decoded);
        let why = format!(
            "RequestRedirect statusCode {code} is not supported (an ALB redirects with 301 or 302 only)"
        );
        let (name, matches) = (rule.name.take(), rule.matches.take());
        *rule = HttpRouteRules {
            name,
            matches,
            ..Default::default()
        };
        out.push(RefusedRule {
            rule: written,
            message: not_served(written, &why),
            left_out: false,
        });
    }
    out
}

/// Every refused rule of an HTTPRoute, in rule order: those decoding refused and those whose
/// redirect an ALB cannot serve (see [`refuse_unservable_redirects`]).
pub fn http_refused_rules(route: &HttpRoute) -> Vec<RefusedRule> {
    let mut rules = route.spec.rules.clone().unwrap_or_default();
    refuse_http_rules(&route.metadata, &mut rules)
}

/// The refusals of an HTTPRoute (`meta`) whose decoded `rules` are being read: those decoding
/// noted, and the unservable redirects, refused in `rules` (see [`http_refused_rules`]).
pub(super) fn refuse_http_rules(
    meta: &ObjectMeta,
    rules: &mut [HttpRouteRules],
) -> Vec<RefusedRule> {
    let mut refused = refused_rules_of(meta);
    let redirects = refuse_unservable_redirects(rules, &refused);
    refused.extend(redirects);
    refused.sort_by_key(|r| r.rule);
    refused
}

/// Notes `refused` on an object's annotations (or clears the note).
pub(super) fn note(annotations: &mut BTreeMap<String, String>, refused: &[RefusedRule]) {
    match serde_json::to_string(refused) {
        Ok(text) if !refused.is_empty() => {
            annotations.insert(REFUSED_RULES.into(), text);
        }
        _ => {
            annotations.remove(REFUSED_RULES);
        }
    }
}

/// The rules [`super::dropped::decode_noting_dropped`] refused on an object.
pub fn refused_rules_of(meta: &ObjectMeta) -> Vec<RefusedRule> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(REFUSED_RULES))
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::dropped::{decode_noting_dropped, dropped_of};
    use super::*;
    use gateway_api::apis::standard::grpcroutes::GrpcRoute;
    use gateway_api::apis::standard::httproutes::HttpRoute;

    fn route_with_external_auth() -> Value {
        json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "r", "namespace": "ns"},
            "spec": {
                "parentRefs": [{"name": "gw"}],
                "rules": [
                    {"matches": [{"path": {"type": "PathPrefix", "value": "/public"}}],
                     "backendRefs": [{"name": "web", "port": 80}]},
                    {"matches": [{"path": {"type": "PathPrefix", "value": "/admin"}}],
                     "filters": [{"type": "ExternalAuth",
                                  "externalAuth": {"protocol": "HTTP", "backendRef": {"name": "auth", "port": 9000}}}],
                     "backendRefs": [{"name": "admin", "port": 80}]},
                    {"matches": [{"path": {"type": "PathPrefix", "value": "/api"}}],
                     "backendRefs": [{"name": "api", "port": 80}], "retry": {"attempts": 2}}
                ]
            }
        })
    }

    #[test]
    fn an_external_auth_filter_refuses_its_rule_and_keeps_the_others() {
        let raw = route_with_external_auth();
        assert!(serde_json::from_value::<HttpRoute>(raw.clone()).is_err());
        let route: HttpRoute = decode_noting_dropped(raw).unwrap();
        let rules = route.spec.rules.as_ref().unwrap();
        assert_eq!(rules.len(), 3, "positions kept");
        assert_eq!(
            rules[0].backend_refs.as_ref().unwrap()[0].name,
            "web",
            "the other rules are kept whole"
        );
        assert_eq!(rules[2].backend_refs.as_ref().unwrap()[0].name, "api");
        let refused_rule = &rules[1];
        assert!(
            refused_rule.backend_refs.is_none() && refused_rule.filters.is_none(),
            "never served without its filter: no backend, no filter ({refused_rule:?})"
        );
        let path = refused_rule.matches.as_ref().unwrap()[0]
            .path
            .as_ref()
            .unwrap();
        assert_eq!(
            path.value.as_deref(),
            Some("/admin"),
            "its matches stay (answered 500)"
        );
        let refused = refused_rules_of(&route.metadata);
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].rule, 1);
        assert!(
            refused[0]
                .message
                .starts_with("spec.rules[1]: filter type ExternalAuth is not supported"),
            "{}",
            refused[0].message
        );
        // The other rules' dropped fields are still noted; the refused rule's are not.
        assert_eq!(dropped_of(&route.metadata), ["spec.rules[].retry"]);
    }

    #[test]
    fn a_route_that_decodes_carries_no_refusal_and_a_forged_note_is_cleared() {
        let mut raw = route_with_external_auth();
        raw["spec"]["rules"].as_array_mut().unwrap().remove(1);
        raw["metadata"]["annotations"] = json!({REFUSED_RULES: "[{\"rule\":0,\"message\":\"x\"}]"});
        let route: HttpRoute = decode_noting_dropped(raw).unwrap();
        assert!(refused_rules_of(&route.metadata).is_empty());
        assert_eq!(route.spec.rules.unwrap().len(), 2);
    }

    #[test]
    fn an_unknown_backend_filter_and_undecodable_matches_refuse_their_rules() {
        let raw = json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GRPCRoute",
            "metadata": {"name": "g", "namespace": "ns"},
            "spec": {
                "parentRefs": [{"name": "gw"}],
                "rules": [
                    {"backendRefs": [{"name": "svc", "port": 50051,
                                      "filters": [{"type": "FutureFilter"}]}]},
                    {"matches": [{"method": {"type": "FutureMatch", "service": "a.B"}}],
                     "backendRefs": [{"name": "svc", "port": 50051}]},
                    {"backendRefs": [{"name": "svc", "port": 50051}]}
                ]
            }
        });
        let route: GrpcRoute = decode_noting_dropped(raw).unwrap();
        let rules = route.spec.rules.unwrap();
        assert_eq!(
            rules.len(),
            2,
            "the rule whose matches do not decode is left out"
        );
        assert!(rules[0].backend_refs.is_none());
        assert_eq!(rules[1].backend_refs.as_ref().unwrap()[0].name, "svc");
        let refused = refused_rules_of(&route.metadata);
        assert_eq!(refused.iter().map(|r| r.rule).collect::<Vec<_>>(), [0, 1]);
        assert!(refused[0]
            .message
            .contains("filter type FutureFilter is not supported"));
        assert!(
            refused[1].message.ends_with("the rule is left out"),
            "{}",
            refused[1].message
        );
    }

    #[test]
    fn an_unservable_redirect_is_refused_at_its_written_position() {
        // Rule 0's matches do not decode (left out), so the 307 redirect is decoded rule 0
        // but written rule 1; rule 2 redirects with 301, which an ALB answers with.
        let redirect = |code: i64| json!({"filters": [{"type": "RequestRedirect", "requestRedirect": {"statusCode": code}}]});
        let raw = json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "r", "namespace": "ns"},
            "spec": {
                "parentRefs": [{"name": "gw"}],
                "rules": [
                    {"matches": [{"path": {"type": "FuturePath", "value": "/x"}}]},
                    redirect(307),
                    redirect(301)
                ]
            }
        });
        let route: HttpRoute = decode_noting_dropped(raw).unwrap();
        let refused = http_refused_rules(&route);
        assert_eq!(
            refused
                .iter()
                .map(|r| (r.rule, r.left_out))
                .collect::<Vec<_>>(),
            [(0, true), (1, false)]
        );
        assert_eq!(
            refused[1].message,
            "spec.rules[1]: RequestRedirect statusCode 307 is not supported (an ALB redirects with 301 or 302 only): the rule is not served (never without its filters); the requests it matches are answered 500"
        );
        let mut rules = route.spec.rules.clone().unwrap();
        let redirects = refuse_unservable_redirects(&mut rules, &refused_rules_of(&route.metadata));
        assert_eq!(redirects.len(), 1);
        assert!(
            rules[0].filters.is_none(),
            "the refused rule keeps no filter: {:?}",
            rules[0]
        );
        assert!(rules[1].filters.is_some(), "the 301 redirect is kept");
    }

    #[test]
    fn a_route_broken_outside_its_rules_still_fails() {
        let mut raw = route_with_external_auth();
        raw["spec"]["parentRefs"] = json!("not a list");
        assert!(decode_noting_dropped::<HttpRoute>(raw).is_err());
    }
}
