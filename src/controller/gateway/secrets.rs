//! The OIDC Secrets an ALB Gateway reads (upstream's `MonitorSecrets`): those its routes'
//! ListenerRuleConfigurations name. Each is watched by name through the process's one Secret
//! watch, shared with the Ingress controller ([`crate::watch::Wanted`]); what the model reads
//! of it is kept here, and a change to it (or its coming or going) queues the Gateways that
//! read it, instead of waiting for a resync. A Secret the watch has not reported yet is read
//! with a GET (a NotFound leaves it out: the model then says so by name). With
//! `--required-secrets-label`, a Secret without the label is left out the same way.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::Secret;

use super::feed::Feed;
use super::inputs::Owned;
use crate::config::{secret_label, RequiredLabel};
use crate::controller::ingress::secrets::get_oidc_secret;
use crate::model::gateway::load::{RULE_CONFIG_GROUP, RULE_CONFIG_KIND};
use crate::model::gateway::routes::{grpc_route, http_route, RouteView};
use crate::model::oidc;
use crate::watch::{Index, Named, Ref, Wanted};

/// The Secrets (`(ns, name)`) the OIDC actions of the rule configurations `owned`'s routes name
/// read: the configuration and the Secret are in the route's namespace, as the model reads them.
pub fn refs_of(owned: &Owned) -> BTreeSet<Ref> {
    let views: Vec<RouteView<'_>> = owned
        .http_routes
        .iter()
        .map(http_route)
        .chain(owned.grpc_routes.iter().map(grpc_route))
        .collect();
    let mut out = BTreeSet::new();
    for v in &views {
        let named = v
            .extension_refs
            .iter()
            .flatten()
            .filter(|e| e.group == RULE_CONFIG_GROUP && e.kind == RULE_CONFIG_KIND);
        for e in named {
            let config = owned.rule_configs.iter().find(|c| {
                c.metadata.namespace.as_deref().unwrap_or("default") == v.namespace
                    && c.metadata.name.as_deref() == Some(e.name.as_str())
            });
            let actions = config
                .map(|c| c.spec.actions.as_slice())
                .unwrap_or_default();
            for o in actions
                .iter()
                .filter_map(|a| a.authenticate_oidc_config.as_ref())
            {
                out.insert((v.namespace.clone(), o.secret.name.clone()));
            }
        }
    }
    out
}

/// Which Gateways read which Secrets, and what the watch last reported of each (only the keys
/// the model reads).
pub struct Monitor {
    feed: Arc<Feed>,
    wanted: Wanted,
    /// `--required-secrets-label`, as the process's Secret watch has it.
    required: Option<RequiredLabel>,
    per_gateway: Mutex<BTreeMap<String, BTreeSet<Ref>>>,
    seen: Mutex<HashMap<Ref, Secret>>,
}

fn wanted_key(gateway: &str) -> String {
    format!("Gateway/{gateway}")
}

fn ref_of(s: &Secret) -> Ref {
    (
        s.metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        s.metadata.name.clone().unwrap_or_default(),
    )
}

impl Monitor {
    /// Follows the Secrets Gateways read through `secrets`, the process's Secret watch (its
    /// wanted set and its required label).
    pub fn new(feed: Arc<Feed>, secrets: &Named<Secret>) -> Arc<Self> {
        Arc::new(Self {
            feed,
            wanted: secrets.wants(),
            required: secrets.required_label().cloned(),
            per_gateway: Mutex::default(),
            seen: Mutex::default(),
        })
    }

    fn admits(&self, secret: &Secret) -> bool {
        secret_label::admits(self.required.as_ref(), secret.metadata.labels.as_ref())
    }

    /// Gateway `key` now reads `refs` (empty: none, e.g. it is gone).
    pub fn monitor(&self, key: &str, refs: BTreeSet<Ref>) {
        let mut per = self.per_gateway.lock().unwrap_or_else(|p| p.into_inner());
        if refs.is_empty() {
            per.remove(key);
        } else {
            per.insert(key.to_string(), refs.clone());
        }
        drop(per);
        self.wanted.update(wanted_key(key), refs);
    }

    /// The Gateways that read `r`.
    fn readers(&self, r: &Ref) -> Vec<String> {
        let per = self.per_gateway.lock().unwrap_or_else(|p| p.into_inner());
        per.iter()
            .filter(|(_, refs)| refs.contains(r))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// The Secrets `refs` for the model: as the watch last reported them, else by GET (one
    /// without the required label is left out, as not found).
    pub async fn read(
        &self,
        client: &kube::Client,
        refs: &BTreeSet<Ref>,
    ) -> Result<Vec<Secret>, kube::Error> {
        let mut out = Vec::new();
        for r in refs {
            let cached = self
                .seen
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(r)
                .cloned();
            if let Some(s) = cached {
                out.push(s);
                continue;
            }
            let required = self.required.as_ref();
            out.extend(get_oidc_secret(client, &r.0, &r.1, required).await?);
        }
        Ok(out)
    }
}

impl Index<Secret> for Monitor {
    fn apply(&self, obj: &Arc<Secret>) {
        if !self.admits(obj) {
            // The watch is narrowed by the label already; a Secret without it reads as gone.
            self.delete(obj);
            return;
        }
        let r = ref_of(obj);
        let part = oidc::needed_part(obj);
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let changed = seen
            .get(&r)
            .is_none_or(|s| (&s.data, &s.string_data) != (&part.data, &part.string_data));
        seen.insert(r.clone(), part);
        drop(seen);
        if changed {
            self.feed.enqueue(self.readers(&r));
        }
    }

    fn delete(&self, obj: &Arc<Secret>) {
        let r = ref_of(obj);
        let known = self
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&r)
            .is_some();
        if known {
            self.feed.enqueue(self.readers(&r));
        }
    }

    fn reset(&self, objs: &[Arc<Secret>]) {
        // Named watches never reset (see `crate::watch::named`); honoured anyway.
        let gone: Vec<Ref> = {
            let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            let present: BTreeSet<Ref> = objs.iter().map(|o| ref_of(o)).collect();
            seen.keys()
                .filter(|r| !present.contains(*r))
                .cloned()
                .collect()
        };
        for r in gone {
            let mut stub = Secret::default();
            (stub.metadata.namespace, stub.metadata.name) = (Some(r.0), Some(r.1));
            self.delete(&Arc::new(stub));
        }
        for o in objs {
            self.apply(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lrc(ns: &str, name: &str, secret: &str) -> crate::crd::gateway::ListenerRuleConfiguration {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": ns},
            "spec": {"actions": [{"type": "authenticate-oidc", "authenticateOIDCConfig": {
                "issuer": "https://idp", "authorizationEndpoint": "https://idp/auth",
                "tokenEndpoint": "https://idp/token", "userInfoEndpoint": "https://idp/user",
                "secret": {"name": secret}}}]}
        }))
        .unwrap()
    }

    /// Only the configurations the Gateway's routes name count, each in the route's namespace.
    #[test]
    fn the_secrets_of_the_rule_configurations_the_routes_name() {
        let ext = |name: &str| {
            json!({"type": "ExtensionRef", "extensionRef": {
                "group": "gateway.k8s.aws", "kind": "ListenerRuleConfiguration", "name": name}})
        };
        let route = serde_json::from_value(json!({
            "metadata": {"name": "r", "namespace": "apps"},
            "spec": {"parentRefs": [{"name": "gw"}], "rules": [
                {"filters": [ext("login")]}, {"filters": [ext("login")]}, {"filters": [ext("missing")]}]}
        }))
        .unwrap();
        let owned = Owned {
            http_routes: vec![route],
            rule_configs: vec![
                lrc("apps", "login", "idp"),
                lrc("other", "login", "elsewhere"),
                lrc("apps", "unused", "not-read"),
            ],
            ..Owned::default()
        };
        let refs: Vec<Ref> = refs_of(&owned).into_iter().collect();
        assert_eq!(refs, [("apps".to_string(), "idp".to_string())]);
    }
}
