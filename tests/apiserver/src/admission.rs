//! Admission: calls the Mutating/ValidatingWebhookConfigurations stored in the server the way
//! the real apiserver does (rules, namespace/object selectors, failure policy, timeouts,
//! JSONPatch responses, denial messages). Mutating webhooks run first, in configuration name
//! order; validating ones after. Reinvocation and matchConditions are not implemented.

use crate::app::{new_uid, App};
use crate::error::{ApiError, ApiResult};
use crate::resources::ResourceDef;
use crate::selectors::LabelSelector;
use crate::webhook_client::post_json;
use base64::Engine;
use serde_json::{json, Value};
use std::time::Duration;

/// What is being admitted.
pub struct AdmissionInput<'a> {
    pub def: &'a ResourceDef,
    pub sub: &'a str,
    pub op: &'static str,
    pub ns: &'a str,
    pub name: &'a str,
    pub old: Option<&'a Value>,
    pub dry_run: bool,
}

fn strs(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn rule_matches(rule: &Value, input: &AdmissionInput<'_>) -> bool {
    let any = |list: Vec<&str>, want: &str| list.iter().any(|x| *x == "*" || *x == want);
    if !any(strs(rule.get("operations")), input.op)
        || !any(strs(rule.get("apiGroups")), &input.def.group)
        || !any(strs(rule.get("apiVersions")), &input.def.version)
    {
        return false;
    }
    let res_ok = strs(rule.get("resources")).iter().any(|r| {
        let (res, sub) = r.split_once('/').unwrap_or((r, ""));
        let res_ok = res == "*" || res == input.def.plural;
        let sub_ok = sub == "*" || sub == input.sub;
        res_ok && sub_ok
    });
    let scope_ok = match rule.get("scope").and_then(Value::as_str).unwrap_or("*") {
        "Cluster" => !input.def.namespaced,
        "Namespaced" => input.def.namespaced,
        _ => true,
    };
    res_ok && scope_ok
}

fn is_namespace(def: &ResourceDef) -> bool {
    !def.custom && def.group.is_empty() && def.plural == "namespaces"
}

/// Whether one webhook applies to this request; a malformed selector is a call failure.
fn webhook_matches(
    app: &App,
    hook: &Value,
    input: &AdmissionInput<'_>,
    obj: Option<&Value>,
) -> Result<bool, String> {
    let rules = hook
        .get("rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !rules.iter().any(|r| rule_matches(r, input)) {
        return Ok(false);
    }
    let ns_sel = LabelSelector::from_object(hook.get("namespaceSelector"))?;
    if !ns_sel.is_empty() {
        let labels = if is_namespace(input.def) {
            obj.or(input.old)
                .and_then(|o| o.pointer("/metadata/labels"))
                .cloned()
        } else if input.def.namespaced {
            let ns = app.store.get(&app.core("namespaces"), "", input.ns);
            ns.and_then(|n| n.pointer("/metadata/labels").cloned())
        } else {
            // Cluster-scoped objects are not in any namespace: the selector does not apply.
            return Ok(true);
        };
        if !ns_sel.matches_labels(labels.as_ref()) {
            return Ok(false);
        }
    }
    let obj_sel = LabelSelector::from_object(hook.get("objectSelector"))?;
    Ok(obj_sel.is_empty()
        || [obj, input.old]
            .iter()
            .flatten()
            .any(|o| obj_sel.matches(o)))
}

fn review(input: &AdmissionInput<'_>, obj: Option<&Value>, uid: &str) -> Value {
    let d = input.def;
    let kind = json!({"group": d.group, "version": d.version, "kind": d.kind});
    let resource = json!({"group": d.group, "version": d.version, "resource": d.plural});
    let options_kind = match input.op {
        "CREATE" => "CreateOptions",
        "UPDATE" => "UpdateOptions",
        _ => "DeleteOptions",
    };
    let mut req = json!({
        "uid": uid, "kind": kind, "resource": resource, "requestKind": kind, "requestResource": resource,
        "name": input.name, "operation": input.op,
        "userInfo": {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]},
        "object": obj.cloned().unwrap_or(Value::Null), "oldObject": input.old.cloned().unwrap_or(Value::Null),
        "dryRun": input.dry_run, "options": {"kind": options_kind, "apiVersion": "meta.k8s.io/v1"},
    });
    if d.namespaced {
        req["namespace"] = json!(input.ns);
    }
    if !input.sub.is_empty() {
        req["subResource"] = json!(input.sub);
        req["requestSubResource"] = json!(input.sub);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
}

/// Calls one webhook and returns its `response` object.
async fn call(app: &App, hook: &Value, body: &Value, uid: &str) -> Result<Value, String> {
    let cc = hook.get("clientConfig").cloned().unwrap_or(Value::Null);
    let ca = cc.get("caBundle").and_then(Value::as_str).unwrap_or("");
    let ca = base64::engine::general_purpose::STANDARD
        .decode(ca)
        .map_err(|e| format!("caBundle: {e}"))?;
    let timeout = hook
        .get("timeoutSeconds")
        .and_then(Value::as_u64)
        .unwrap_or(10);
    let (addr, host, path, url) = if let Some(svc) = cc.get("service") {
        let (ns, name) = (
            svc["namespace"].as_str().unwrap_or(""),
            svc["name"].as_str().unwrap_or(""),
        );
        let port = svc.get("port").and_then(Value::as_u64).unwrap_or(443);
        let path = svc.get("path").and_then(Value::as_str).unwrap_or("/");
        let host = format!("{name}.{ns}.svc");
        let path = format!("{path}?timeout={timeout}s");
        let url = format!("https://{host}:{port}{path}");
        let addr = app.endpoint(ns, name).ok_or_else(|| {
            format!("Post \"{url}\": no endpoints available for service \"{name}\"")
        })?;
        (addr, host, path, url)
    } else {
        let url = cc
            .get("url")
            .and_then(Value::as_str)
            .ok_or("clientConfig has neither url nor service")?;
        let rest = url
            .strip_prefix("https://")
            .ok_or_else(|| format!("Post \"{url}\": webhook url must use https"))?;
        let (hostport, path) = rest
            .split_once('/')
            .map(|(h, p)| (h, format!("/{p}")))
            .unwrap_or((rest, "/".into()));
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h.to_string(),
                p.parse::<u16>().map_err(|e| format!("bad url port: {e}"))?,
            ),
            None => (hostport.to_string(), 443),
        };
        let sep = if path.contains('?') { '&' } else { '?' };
        let path = format!("{path}{sep}timeout={timeout}s");
        let url = format!("https://{hostport}{path}");
        let addr = tokio::net::lookup_host((host.trim_matches(['[', ']']), port))
            .await
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| format!("Post \"{url}\": dial tcp: lookup {host}: no such host"))?;
        (addr, host.trim_matches(['[', ']']).to_string(), path, url)
    };
    let bytes = serde_json::to_vec(body).map_err(|e| e.to_string())?;
    let reply = post_json(addr, &host, &ca, &path, bytes, Duration::from_secs(timeout))
        .await
        .map_err(|e| format!("Post \"{url}\": {e}"))?;
    let resp = reply
        .get("response")
        .cloned()
        .ok_or("the response had no response field")?;
    let got = resp.get("uid").and_then(Value::as_str).unwrap_or("");
    if got != uid {
        return Err(format!("expected response.uid=\"{uid}\", got \"{got}\""));
    }
    Ok(resp)
}

fn denial(name: &str, resp: &Value) -> ApiError {
    let st = resp.get("status").cloned().unwrap_or(Value::Null);
    let msg = st.get("message").and_then(Value::as_str).unwrap_or("");
    let reason = st.get("reason").and_then(Value::as_str).unwrap_or("");
    let message = if !msg.is_empty() {
        format!("admission webhook \"{name}\" denied the request: {msg}")
    } else if !reason.is_empty() {
        format!("admission webhook \"{name}\" denied the request: {reason}")
    } else {
        format!("admission webhook \"{name}\" denied the request without explanation")
    };
    let code = st.get("code").and_then(Value::as_u64).unwrap_or(0) as u16;
    ApiError::Custom {
        code: code.max(400),
        reason: reason.to_string(),
        message,
    }
}

fn hooks(app: &App, plural: &str) -> Vec<Value> {
    let def = app
        .resource("admissionregistration.k8s.io", "v1", plural)
        .expect("built-in");
    let configs = app.store.list(&def, None).0;
    configs
        .iter()
        .flat_map(|c| {
            c.get("webhooks")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

/// Runs one phase; returns the (possibly patched) object.
async fn run(
    app: &App,
    input: &AdmissionInput<'_>,
    mut obj: Option<Value>,
    mutating: bool,
) -> ApiResult<Option<Value>> {
    // Like the real server, webhooks are never called for webhook configurations themselves.
    if input.def.group == "admissionregistration.k8s.io" {
        return Ok(obj);
    }
    let plural = if mutating {
        "mutatingwebhookconfigurations"
    } else {
        "validatingwebhookconfigurations"
    };
    for hook in hooks(app, plural) {
        let name = hook
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let fail_open = hook.get("failurePolicy").and_then(Value::as_str) == Some("Ignore");
        let failed = |e: String| {
            ApiError::InternalError(format!(
                "failed calling webhook \"{name}\": failed to call webhook: {e}"
            ))
        };
        let matched = match webhook_matches(app, &hook, input, obj.as_ref()) {
            Ok(m) => m,
            Err(e) if fail_open => {
                tracing::warn!(webhook = %name, error = %e, "ignoring webhook with a bad selector");
                continue;
            }
            Err(e) => return Err(failed(e)),
        };
        if !matched {
            continue;
        }
        let uid = new_uid();
        let body = review(input, obj.as_ref(), &uid);
        let resp = match call(app, &hook, &body, &uid).await {
            Ok(r) => r,
            Err(e) if fail_open => {
                tracing::warn!(webhook = %name, error = %e, "failed calling webhook, failing open");
                continue;
            }
            Err(e) => return Err(failed(e)),
        };
        if resp.get("allowed").and_then(Value::as_bool) != Some(true) {
            return Err(denial(&name, &resp));
        }
        if let (true, Some(p), Some(o)) = (
            mutating,
            resp.get("patch").and_then(Value::as_str),
            obj.as_mut(),
        ) {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(p)
                .map_err(|e| {
                    ApiError::InternalError(format!(
                        "webhook \"{name}\" returned an undecodable patch: {e}"
                    ))
                })?;
            let ops: json_patch::Patch = serde_json::from_slice(&raw).map_err(|e| {
                ApiError::InternalError(format!(
                    "webhook \"{name}\" returned an invalid JSON patch: {e}"
                ))
            })?;
            json_patch::patch(o, &ops).map_err(|e| {
                ApiError::InternalError(format!(
                    "webhook \"{name}\" returned a patch that does not apply: {e}"
                ))
            })?;
        }
    }
    Ok(obj)
}

/// Mutating phase: the object as patched by every matching mutating webhook.
pub async fn mutate(app: &App, input: &AdmissionInput<'_>, obj: Value) -> ApiResult<Value> {
    Ok(run(app, input, Some(obj), true).await?.unwrap_or_default())
}

/// Validating phase (also the only phase for DELETE, where `obj` is None).
pub async fn validate(app: &App, input: &AdmissionInput<'_>, obj: Option<&Value>) -> ApiResult<()> {
    run(app, input, obj.cloned(), false).await.map(|_| ())
}

/// DELETE: both phases see only the old object.
pub async fn admit_delete(app: &App, input: &AdmissionInput<'_>) -> ApiResult<()> {
    run(app, input, None, true).await?;
    run(app, input, None, false).await.map(|_| ())
}
