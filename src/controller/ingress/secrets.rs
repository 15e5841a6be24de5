//! The Secrets OIDC actions read (`auth-idp-oidc` `secretName`, in the Ingress's namespace), as
//! upstream's secrets manager keeps them: only referenced Secrets are watched, each by name;
//! only the keys the model reads are kept in memory; a Secret the watch has not listed is read
//! with a GET (a NotFound leaves it out, and the model then fails with upstream's error). With
//! `--required-secrets-label`, a Secret without the label is left out the same way.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use super::refs::references_service;
use crate::config::{secret_label, RequiredLabel};
use crate::model::oidc;
use crate::model::ClusterObjects;
use crate::watch::{Index, Ref, Store, Wanted};

/// Referenced Secrets with only their `clientID`/`clientId`/`clientSecret` keys; with a
/// required label, only those carrying it.
#[derive(Clone, Default)]
pub struct SecretStore {
    store: Store<Secret>,
    required: Option<RequiredLabel>,
}

impl SecretStore {
    /// A store that keeps only Secrets carrying `required` (`None`: every Secret).
    pub fn requiring(required: Option<RequiredLabel>) -> Self {
        Self {
            store: Store::default(),
            required,
        }
    }

    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<Secret>> {
        self.store.get(namespace, name)
    }

    /// Whether `secret` may be read (`--required-secrets-label`).
    pub fn admits(&self, secret: &Secret) -> bool {
        secret_label::admits(self.required.as_ref(), secret.metadata.labels.as_ref())
    }
}

impl Index<Secret> for SecretStore {
    fn apply(&self, obj: &Arc<Secret>) {
        if self.admits(obj) {
            self.store.apply(&Arc::new(oidc::needed_part(obj)));
        } else {
            self.store.delete(obj);
        }
    }

    fn delete(&self, obj: &Arc<Secret>) {
        self.store.delete(obj);
    }

    fn reset(&self, objs: &[Arc<Secret>]) {
        let kept: Vec<Arc<Secret>> = objs
            .iter()
            .filter(|s| self.admits(s))
            .map(|s| Arc::new(oidc::needed_part(s)))
            .collect();
        self.store.reset(&kept);
    }
}

/// The Secrets the live Ingresses of a snapshot read: their own `auth-idp-oidc`, and that of
/// each Service they use (a Service's annotation wins for its backends; the Secret is in the
/// same namespace either way).
pub fn refs_of(objs: &ClusterObjects) -> BTreeSet<Ref> {
    let live: Vec<_> = objs
        .ingresses
        .iter()
        .filter(|i| i.metadata.deletion_timestamp.is_none())
        .collect();
    let services = objs.services.iter().filter(|s| {
        let ns = s.metadata.namespace.as_deref().unwrap_or("default");
        let name = s.metadata.name.as_deref().unwrap_or_default();
        live.iter().any(|i| {
            i.metadata.namespace.as_deref().unwrap_or("default") == ns
                && references_service(i, name)
        })
    });
    oidc::secret_refs(
        live.iter()
            .map(|i| &i.metadata)
            .chain(services.map(|s| &s.metadata)),
    )
}

/// An OIDC Secret read by GET as the model takes it (only the keys OIDC reads), or None when
/// it does not exist or lacks `required` (`--required-secrets-label`: read as not found, as
/// upstream's labelled watch would not see it). The one read the controllers and `diff` share.
pub async fn get_oidc_secret(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    required: Option<&RequiredLabel>,
) -> Result<Option<Secret>, kube::Error> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    Ok(match api.get_opt(name).await? {
        Some(s) if secret_label::admits(required, s.metadata.labels.as_ref()) => {
            Some(oidc::needed_part(&s))
        }
        Some(_) => {
            tracing::debug!(%namespace, secret = %name, "secret lacks --required-secrets-label: read as not found");
            None
        }
        None => None,
    })
}

/// The model's Secret input for `objs`: from the store, else by GET (NotFound, or without the
/// required label: left out).
pub async fn inputs(
    store: &SecretStore,
    client: &kube::Client,
    objs: &ClusterObjects,
) -> Result<Vec<Secret>, kube::Error> {
    let mut out = Vec::new();
    for (ns, name) in refs_of(objs) {
        if let Some(s) = store.get(&ns, &name) {
            out.push((*s).clone());
            continue;
        }
        out.extend(get_oidc_secret(client, &ns, &name, store.required.as_ref()).await?);
    }
    Ok(out)
}

/// Which Secrets each Ingress and Service names; the union over every consumer of the
/// process's Secret watches (Gateways too) is what the named watches follow.
pub struct Tracker {
    wanted: Wanted,
}

impl Tracker {
    pub fn new(wanted: Wanted) -> Self {
        Self { wanted }
    }

    /// `key` (kind and `ns/name`) now names `refs` (empty when deleted).
    pub fn update(&self, key: String, refs: BTreeSet<Ref>) {
        self.wanted.update(key, refs);
    }
}

/// Whether `ing` reads Secret `name` of its namespace: its own `auth-idp-oidc` names it, or it
/// uses one of `services` (those of its namespace whose annotation names it).
pub fn ingress_reads(
    ing: &k8s_openapi::api::networking::v1::Ingress,
    name: &str,
    services: &[String],
) -> bool {
    oidc::secret_name(ing.metadata.annotations.as_ref()).as_deref() == Some(name)
        || services.iter().any(|svc| references_service(ing, svc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const OIDC: &str = r#"{"issuer":"i","authorizationEndpoint":"a","tokenEndpoint":"t","userInfoEndpoint":"u","secretName":"creds"}"#;

    #[test]
    fn the_store_keeps_only_the_keys_oidc_reads() {
        let store = SecretStore::default();
        let s: Secret = serde_json::from_value(json!({
            "metadata": {"name": "creds", "namespace": "ns", "annotations": {"big": "x"}},
            "data": {"clientID": "aWQ=", "clientSecret": "c2VjcmV0", "tls.key": "AAAA"}
        }))
        .unwrap();
        store.apply(&Arc::new(s));
        let kept = store.get("ns", "creds").unwrap();
        let keys: Vec<&String> = kept.data.as_ref().unwrap().keys().collect();
        assert_eq!(keys, ["clientID", "clientSecret"]);
        assert!(kept.metadata.annotations.is_none());
    }

    /// `--required-secrets-label`: a Secret without the label is not kept (and one that loses
    /// it goes); without the flag every referenced Secret is.
    #[test]
    fn a_required_label_keeps_only_labelled_secrets() {
        let secret = |labels: serde_json::Value| -> Arc<Secret> {
            Arc::new(
                serde_json::from_value(json!({
                    "metadata": {"name": "creds", "namespace": "ns", "labels": labels},
                    "data": {"clientID": "aWQ=", "clientSecret": "c2VjcmV0"}
                }))
                .unwrap(),
            )
        };
        let required = RequiredLabel::from_flag("albc.example/oidc=yes").unwrap();
        let store = SecretStore::requiring(required);
        store.apply(&secret(json!({"albc.example/oidc": "no"})));
        assert!(store.get("ns", "creds").is_none(), "wrong value");
        store.apply(&secret(json!({"albc.example/oidc": "yes"})));
        assert!(store.get("ns", "creds").is_some(), "labelled");
        store.apply(&secret(json!({})));
        assert!(store.get("ns", "creds").is_none(), "label removed");
        store.reset(&[
            secret(json!({})),
            secret(json!({"albc.example/oidc": "yes"})),
        ]);
        assert!(store.get("ns", "creds").is_some());
        assert!(!store.admits(&secret(json!({"other": "yes"}))));

        let open = SecretStore::default();
        open.apply(&secret(json!({})));
        assert!(open.get("ns", "creds").is_some(), "no flag: every Secret");
    }

    #[test]
    fn refs_follow_live_ingresses_and_the_services_they_use() {
        let objs: ClusterObjects = ClusterObjects {
            ingresses: vec![
                serde_json::from_value(json!({
                    "metadata": {"name": "a", "namespace": "ns",
                        "annotations": {"alb.ingress.kubernetes.io/auth-idp-oidc": OIDC}},
                    "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix",
                        "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}
                }))
                .unwrap(),
            ],
            services: vec![
                serde_json::from_value(json!({"metadata": {"name": "web", "namespace": "ns",
                    "annotations": {"alb.ingress.kubernetes.io/auth-idp-oidc": OIDC.replace("creds", "svc-creds")}}}))
                .unwrap(),
                serde_json::from_value(json!({"metadata": {"name": "unused", "namespace": "ns",
                    "annotations": {"alb.ingress.kubernetes.io/auth-idp-oidc": OIDC.replace("creds", "other")}}}))
                .unwrap(),
            ],
            ..Default::default()
        };
        let refs: Vec<Ref> = refs_of(&objs).into_iter().collect();
        assert_eq!(
            refs,
            [
                ("ns".to_string(), "creds".to_string()),
                ("ns".to_string(), "svc-creds".to_string())
            ]
        );
        let ing = &objs.ingresses[0];
        assert!(ingress_reads(ing, "creds", &[]));
        assert!(ingress_reads(ing, "svc-creds", &["web".to_string()]));
        assert!(!ingress_reads(ing, "other", &["unused".to_string()]));
    }

    #[test]
    fn the_tracker_wants_the_union_of_every_objects_refs() {
        let named: crate::watch::Named<Secret> = crate::watch::Named::new("secrets");
        let t = Tracker::new(named.wants());
        let r = |n: &str| BTreeSet::from([("ns".to_string(), n.to_string())]);
        t.update("ing/ns/a".into(), r("one"));
        t.update("ing/ns/b".into(), r("one"));
        t.update("svc/ns/web".into(), r("two"));
        assert_eq!(named.wants().get().len(), 2);
        t.update("ing/ns/a".into(), BTreeSet::new());
        assert_eq!(named.wants().get().len(), 2, "b still names one");
        t.update("ing/ns/b".into(), BTreeSet::new());
        assert_eq!(named.wants().get(), r("two"));
    }

    /// The Ingress and Gateway controllers share the process's one Secret watch: what one
    /// names is not dropped when the other's set changes.
    #[test]
    fn two_controllers_share_one_wanted_set() {
        let named: crate::watch::Named<Secret> = crate::watch::Named::new("secrets");
        let ingresses = Tracker::new(named.wants());
        let gateways = named.wants();
        let r = |n: &str| BTreeSet::from([("ns".to_string(), n.to_string())]);
        ingresses.update("Ingress/ns/a".into(), r("one"));
        gateways.update("Gateway/ns/gw".into(), r("two"));
        assert_eq!(named.wants().get().len(), 2);
        ingresses.update("Ingress/ns/a".into(), BTreeSet::new());
        assert_eq!(named.wants().get(), r("two"), "the Gateway's stays watched");
    }
}
