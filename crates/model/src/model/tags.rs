//! AWS tags and TGB labels with upstream's precedence: IngressClassParams tags over annotation
//! tags, the Service's `tags` over the Ingress's (target groups), `--default-tags` over both
//! (unless EnableDefaultTagsLowPriority), and the tracking tags over everything.

use std::collections::BTreeMap;

use super::agree::merge_key;
use super::config::ModelConfig;
use super::error::Fail;
use super::group::ClassifiedIngress;
use super::types::GroupId;
use crate::annotations::{self as ann, suffix, AnnotationMap};

// The tag keys themselves belong to the stack (`StackKind` reads them); kept reachable here.
pub use super::types::{
    ALB_GATEWAY_TAG_PREFIX, INGRESS_TAG_PREFIX, NLB_GATEWAY_TAG_PREFIX, SERVICE_TAG_PREFIX,
    TAG_CLUSTER, TAG_RESOURCE, TAG_STACK,
};

type Tags = BTreeMap<String, String>;

/// Everything needed to compute tags for one stack.
pub struct TagContext<'a> {
    pub cfg: &'a ModelConfig,
    pub group: &'a GroupId,
    /// `ingress.k8s.aws` or `service.k8s.aws` (stack / resource tags, TGB labels).
    pub prefix: &'static str,
}

impl TagContext<'_> {
    /// `elbv2.k8s.aws/cluster` + `ingress.k8s.aws/stack`.
    pub fn stack_tags(&self) -> Tags {
        BTreeMap::from([
            (TAG_CLUSTER.to_string(), self.cfg.cluster_name.clone()),
            (format!("{}/stack", self.prefix), self.group.as_string()),
        ])
    }

    /// Labels on TargetGroupBinding objects of this stack.
    pub fn stack_labels(&self) -> Tags {
        if self.group.is_explicit() {
            BTreeMap::from([(format!("{}/stack", self.prefix), self.group.name.clone())])
        } else {
            BTreeMap::from([
                (
                    format!("{}/stack-namespace", self.prefix),
                    self.group.namespace.clone(),
                ),
                (
                    format!("{}/stack-name", self.prefix),
                    self.group.name.clone(),
                ),
            ])
        }
    }

    fn check_external(&self, tags: &Tags) -> Result<(), String> {
        match tags
            .keys()
            .find(|k| self.cfg.external_managed_tags.contains(k))
        {
            Some(k) => Err(format!("external managed tag key {k} cannot be specified")),
            None => Ok(()),
        }
    }

    fn class_tags(&self, m: &ClassifiedIngress<'_>) -> Result<Tags, Fail> {
        let Some(p) = m.params else {
            return Ok(Tags::new());
        };
        let tags: Tags = p
            .spec
            .tags
            .iter()
            .map(|t| (t.key.clone(), t.value.clone()))
            .collect();
        self.check_external(&tags).map_err(|e| {
            Fail::msg(format!(
                "failed build tags for IngressClassParams {}: {e}",
                p.metadata.name.as_deref().unwrap_or("")
            ))
        })?;
        Ok(tags)
    }

    /// User tags of one Ingress (listener rules; input of group tags).
    pub fn ingress_user_tags(&self, m: &ClassifiedIngress<'_>) -> Result<Tags, Fail> {
        let mut tags = ann::string_map(m.annotations(), suffix::TAGS)?.unwrap_or_default();
        self.check_external(&tags).map_err(|e| {
            Fail::at(
                ann::key(suffix::TAGS),
                format!("failed build tags for Ingress {}: {e}", m.key()),
            )
        })?;
        tags.extend(self.class_tags(m)?);
        Ok(tags)
    }

    /// User tags of a target group: Service `tags` over Ingress `tags`, class tags over both.
    pub fn backend_user_tags(
        &self,
        m: &ClassifiedIngress<'_>,
        svc_ann: &AnnotationMap,
        svc_key: &str,
    ) -> Result<Tags, Fail> {
        let mut tags = ann::string_map(m.annotations(), suffix::TAGS)?.unwrap_or_default();
        tags.extend(ann::string_map(svc_ann, suffix::TAGS)?.unwrap_or_default());
        self.check_external(&tags).map_err(|e| {
            Fail::at(
                ann::key(suffix::TAGS),
                format!(
                    "failed build tags for Ingress {} and Service {svc_key}: {e}",
                    m.key()
                ),
            )
        })?;
        tags.extend(self.class_tags(m)?);
        Ok(tags)
    }

    /// Union of members' tags; different values for a key are a group error.
    pub fn group_user_tags(
        &self,
        members: &[ClassifiedIngress<'_>],
    ) -> Result<Result<Tags, String>, (String, Fail)> {
        let mut out = Tags::new();
        for m in members {
            let tags = self.ingress_user_tags(m).map_err(|f| (m.key(), f))?;
            for kv in tags {
                let merged = merge_key(&mut out, kv, &Tags::new(), |k, a, b| {
                    format!("conflicting tag {k}: {a} | {b}")
                });
                if let Err(conflict) = merged {
                    return Ok(Err(conflict));
                }
            }
        }
        Ok(Ok(out))
    }

    /// Final AWS tags of a resource: user tags, then defaults (precedence per gate), then the
    /// tracking tags, which always win.
    pub fn resource_tags(&self, resource_id: &str, user: Tags) -> Tags {
        let mut tags = if self.cfg.gate("EnableDefaultTagsLowPriority") {
            let mut t = self.cfg.default_tags.clone();
            t.extend(user);
            t
        } else {
            let mut t = user;
            t.extend(self.cfg.default_tags.clone());
            t
        };
        tags.extend(self.stack_tags());
        tags.insert(format!("{}/resource", self.prefix), resource_id.to_string());
        tags
    }

    /// Listener / rule tags, empty when the ListenerRulesTagging gate is off.
    pub fn listener_tags(&self, resource_id: &str, user: Tags) -> Tags {
        if self.cfg.gate("ListenerRulesTagging") {
            self.resource_tags(resource_id, user)
        } else {
            Tags::new()
        }
    }
}
