//! Everything one Service build reads (the Service, its annotations, the configuration, the AWS
//! facts and its tags), handed to every step of the build.

use k8s_openapi::api::core::v1::{Service, ServicePort};

use super::annotations::{key, sfx, SvcAnnotations};
use super::env::ServiceEnv;
use crate::model::cluster::PLACEHOLDER_SERVICE_UID;
use crate::model::config::ModelConfig;
use crate::model::error::Fail;
use crate::model::tags::TagContext;

/// Everything one Service build reads.
pub(super) struct Task<'a> {
    pub svc: &'a Service,
    pub a: SvcAnnotations<'a>,
    pub cfg: &'a ModelConfig,
    pub env: &'a ServiceEnv,
    pub tags: TagContext<'a>,
    pub namespace: &'a str,
    pub name: &'a str,
    /// The Service UID (placeholder when the manifest has none, as in `plan`).
    pub uid: &'a str,
}

impl<'a> Task<'a> {
    /// `ns/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    pub fn ports(&self) -> &[ServicePort] {
        self.svc
            .spec
            .as_ref()
            .and_then(|s| s.ports.as_deref())
            .unwrap_or(&[])
    }

    /// The same build seen from `backend`, a Service of this namespace a weighted action names:
    /// its spec, name and UID, with this Service's annotations, settings and stack (upstream
    /// builds the target groups of weighted backends from the base Service's annotations).
    pub fn for_backend(&self, backend: &'a Service) -> Task<'a> {
        Task {
            svc: backend,
            a: self.a,
            cfg: self.cfg,
            env: self.env,
            tags: TagContext {
                cfg: self.tags.cfg,
                group: self.tags.group,
                prefix: self.tags.prefix,
            },
            namespace: self.namespace,
            name: backend.metadata.name.as_deref().unwrap_or(""),
            uid: backend
                .metadata
                .uid
                .as_deref()
                .unwrap_or(PLACEHOLDER_SERVICE_UID),
        }
    }

    /// `--default-tags` merged with `aws-load-balancer-additional-resource-tags` (user tags of
    /// every resource; the tracking tags are added by `TagContext::resource_tags`).
    pub fn annotation_tags(&self) -> Result<std::collections::BTreeMap<String, String>, Fail> {
        let tags = self.a.map(sfx::ADDITIONAL_TAGS)?.unwrap_or_default();
        if let Some(k) = tags
            .keys()
            .find(|k| self.cfg.external_managed_tags.contains(k))
        {
            return Err(Fail::at(
                key(sfx::ADDITIONAL_TAGS),
                format!("external managed tag key {k} cannot be specified on Service"),
            ));
        }
        Ok(tags)
    }
}
