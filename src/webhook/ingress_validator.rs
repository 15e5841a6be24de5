//! `/validate-networking-v1-ingress`: upstream's Ingress checks, in order, with its messages.
//!
//! 1. `checkIngressClass`: is the Ingress ours? (class annotation, else `spec.ingressClassName` or
//!    the default IngressClass). Not ours ⇒ allowed at once; a named class that does not exist is
//!    refused whoever it belongs to. IngressClassParams are not loaded, as upstream's webhook.
//! 2. `checkIngressClassAnnotationUsage` / 3. `checkGroupNameAnnotationUsage`: only with the
//!    `--disable-ingress-*` flags, refuse new usages.
//! 4. `checkIngressClassUsage`: a new or changed `spec.ingressClassName` must name a class.
//! 5. `checkIngressAnnotationConditions`: `conditions.<service>` parsed and validated by the
//!    model's own parser, so the webhook admits exactly what the model can build.
//!
//! IngressClasses come from the watch-fed [`IngressClassIndex`]; no API call is made.

use k8s_openapi::api::networking::v1::Ingress;

use super::indexes::IngressClassIndex;
use super::{AdmissionRequest, Decision, Handler, Operation};
use crate::annotations::{self as ann, suffix, AnnotationMap, INGRESS_CLASS, INGRESS_PREFIX};
use crate::model::backend::ConditionInput;
use crate::model::group::INGRESS_CLASS_CONTROLLER;

pub const PATH: &str = "/validate-networking-v1-ingress";

/// Refusal while the IngressClass watch has not delivered its first list.
pub const CLASSES_NOT_SYNCED: &str = "the IngressClass cache has not synced yet";

pub struct IngressValidator {
    /// `--ingress-class` (default `alb`; empty = also manage Ingresses without any class).
    pub ingress_class: String,
    /// `--disable-ingress-class-annotation`.
    pub disable_ingress_class_annotation: bool,
    /// `--disable-ingress-group-name-annotation`.
    pub disable_ingress_group_name_annotation: bool,
    pub classes: IngressClassIndex,
}

type Check<T = ()> = Result<T, Decision>;

fn deny<T>(category: &str, message: impl Into<String>) -> Check<T> {
    Err(Decision::deny(category, message))
}

fn annotations(ing: &Ingress) -> AnnotationMap {
    ing.metadata.annotations.clone().unwrap_or_default()
}

fn class_name(ing: &Ingress) -> Option<&str> {
    ing.spec.as_ref()?.ingress_class_name.as_deref()
}

impl IngressValidator {
    pub fn new(
        ingress_class: impl Into<String>,
        disable_ingress_class_annotation: bool,
        disable_ingress_group_name_annotation: bool,
        classes: IngressClassIndex,
    ) -> Self {
        IngressValidator {
            ingress_class: ingress_class.into(),
            disable_ingress_class_annotation,
            disable_ingress_group_name_annotation,
            classes,
        }
    }

    /// Upstream's class-annotation matcher (`alb` also matches when the flag is empty).
    fn annotation_matches(&self, value: &str) -> bool {
        (self.ingress_class.is_empty() && value == "alb") || value == self.ingress_class
    }

    /// Controller of the named class, or upstream's not-found error.
    fn load_class(&self, name: &str) -> Result<String, String> {
        if !self.classes.synced() {
            return Err(CLASSES_NOT_SYNCED.into());
        }
        match self.classes.get(name) {
            Some(class) => Ok(class.controller),
            None => Err(format!(
                "invalid ingress class: ingressclasses.networking.k8s.io \"{name}\" not found"
            )),
        }
    }

    /// The default class's name, if exactly one is marked default.
    fn default_class(&self) -> Result<Option<String>, String> {
        if !self.classes.synced() {
            return Err(format!(
                "invalid ingress class: fetching ingressClasses: {CLASSES_NOT_SYNCED}"
            ));
        }
        let mut defaults = self.classes.defaults();
        match defaults.len() {
            0 => Ok(None),
            1 => Ok(defaults.pop()),
            _ => Err("multiple default IngressClasses found".into()),
        }
    }

    /// `Ok(None)` = not ours (allow). `Ok(Some(class))` = ours; `class` is the class name the
    /// loader settled on (upstream writes the default class into the object it goes on with).
    fn check_ingress_class(&self, ing: &Ingress) -> Check<Option<Option<String>>> {
        const CAT: &str = "checkIngressClass";
        if let Some(value) = ing
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(INGRESS_CLASS))
        {
            return Ok(self
                .annotation_matches(value)
                .then(|| class_name(ing).map(String::from)));
        }
        let name = match class_name(ing) {
            Some(n) => n.to_string(),
            None => match self.default_class() {
                Err(e) => return deny(CAT, e),
                Ok(Some(d)) => d,
                Ok(None) => return Ok(self.ingress_class.is_empty().then_some(None)),
            },
        };
        match self.load_class(&name) {
            Err(e) => deny(CAT, e),
            Ok(controller) => Ok((controller == INGRESS_CLASS_CONTROLLER).then_some(Some(name))),
        }
    }

    fn check_class_annotation_usage(&self, new: &Ingress, old: Option<&Ingress>) -> Check {
        if !self.disable_ingress_class_annotation {
            return Ok(());
        }
        let used = |ing: &Ingress| {
            ing.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(INGRESS_CLASS))
                .is_some_and(|v| self.annotation_matches(v))
        };
        if used(new) && !old.is_some_and(used) {
            return deny(
                "checkIngressClassAnnotationUsage",
                format!("new usage of `{INGRESS_CLASS}` annotation is forbidden"),
            );
        }
        Ok(())
    }

    fn check_group_name_usage(&self, new: &Ingress, old: Option<&Ingress>) -> Check {
        if !self.disable_ingress_group_name_annotation {
            return Ok(());
        }
        let group =
            |ing: &Ingress| ann::string(&annotations(ing), suffix::GROUP_NAME).map(String::from);
        let Some(new_group) = group(new) else {
            return Ok(());
        };
        if old.and_then(group).as_ref() != Some(&new_group) {
            return deny(
                "checkGroupNameAnnotationUsage",
                format!(
                    "new usage of `{INGRESS_PREFIX}/{}` annotation is forbidden",
                    suffix::GROUP_NAME
                ),
            );
        }
        Ok(())
    }

    /// `new_class` is the class name after step 1 (the default class when none was set).
    fn check_class_usage(&self, new_class: Option<&str>, old: Option<&Ingress>) -> Check {
        let Some(new_class) = new_class else {
            return Ok(());
        };
        if old.and_then(class_name) == Some(new_class) {
            return Ok(());
        }
        match self.load_class(new_class) {
            Ok(_) => Ok(()),
            Err(e) => deny("checkIngressClassUsage", e),
        }
    }

    fn check_conditions(ing: &Ingress, namespace: &str) -> Check {
        const CAT: &str = "checkIngressAnnotationConditions";
        let ann_map = annotations(ing);
        let rules = ing
            .spec
            .as_ref()
            .and_then(|s| s.rules.as_deref())
            .unwrap_or(&[]);
        for http in rules.iter().filter_map(|r| r.http.as_ref()) {
            for path in &http.paths {
                // Upstream dereferences the Service backend blindly (a resource backend panics
                // there); a backend without a Service has no `conditions.*` to check.
                let Some(svc) = path.backend.service.as_ref().map(|s| s.name.as_str()) else {
                    continue;
                };
                let key = format!("{}.{svc}", suffix::CONDITIONS_PREFIX);
                let conditions = match ann::json::<Option<Vec<ConditionInput>>>(&ann_map, &key) {
                    Ok(list) => list.flatten().unwrap_or_default(),
                    Err(e) => return deny(CAT, e.message),
                };
                for condition in &conditions {
                    if let Err(e) = condition.validate() {
                        let name = ing.metadata.name.as_deref().unwrap_or("");
                        return deny(CAT, format!("ignoring Ingress {namespace}/{name} since invalid {INGRESS_PREFIX}/{key} annotation: {e}"));
                    }
                }
            }
        }
        Ok(())
    }

    fn validate(&self, ing: &Ingress, old: Option<&Ingress>, req_ns: Option<&str>) -> Check {
        let Some(class) = self.check_ingress_class(ing)? else {
            return Ok(());
        };
        self.check_class_annotation_usage(ing, old)?;
        self.check_group_name_usage(ing, old)?;
        self.check_class_usage(class.as_deref(), old)?;
        let namespace = ing.metadata.namespace.as_deref().or(req_ns).unwrap_or("");
        Self::check_conditions(ing, namespace)
    }
}

fn decode(obj: Option<&serde_json::Value>, what: &str) -> Check<Ingress> {
    let Some(obj) = obj else {
        return Err(Decision::errored(
            "decode",
            format!("admission request carries no {what}"),
        ));
    };
    serde_json::from_value(obj.clone())
        .map_err(|e| Decision::errored("decode", format!("cannot decode Ingress: {e}")))
}

#[async_trait::async_trait]
impl Handler for IngressValidator {
    fn mutating(&self) -> bool {
        false
    }

    async fn admit(&self, req: &AdmissionRequest) -> Decision {
        let ns = req.namespace.as_deref();
        let outcome = match req.operation {
            Operation::Create => {
                decode(req.object.as_ref(), "object").and_then(|ing| self.validate(&ing, None, ns))
            }
            Operation::Update => decode(req.object.as_ref(), "object").and_then(|ing| {
                let old = decode(req.old_object.as_ref(), "oldObject")?;
                self.validate(&ing, Some(&old), ns)
            }),
            Operation::Delete | Operation::Connect | Operation::Other => Ok(()),
        };
        outcome.err().unwrap_or(Decision::Allow)
    }
}

#[cfg(test)]
#[path = "ingress_validator_tests.rs"]
mod tests;
