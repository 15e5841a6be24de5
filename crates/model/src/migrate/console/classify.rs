//! Which differences the migration itself makes, so the page can hide them and real drift
//! stands out (`pkg/ingress2gateway/console/classify.go`). Conservative: only these patterns are
//! known, everything else is shown — the `migrated-from` tag added; a controller-generated name
//! changed on both sides; the controllers' health-check defaults (unless the Ingress set the
//! value); forward actions differing only by target-group references and the default weight;
//! a binding's target-group reference.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::entry::{semantic_equal, DiffEntry, DiffStatus};
use crate::migrate::MIGRATION_TAG_KEY;
use crate::model::upstream_json::{
    LISTENER_RULE, LOAD_BALANCER, SECURITY_GROUP, TARGET_GROUP, TARGET_GROUP_BINDING,
};

/// Why an entry is known (`known` false: not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Classification {
    pub known: bool,
    pub reason: &'static str,
}

impl Classification {
    fn known(reason: &'static str) -> Classification {
        Classification {
            known: true,
            reason,
        }
    }
}

/// The plan field of the tag the translation puts on every generated resource.
pub fn migrated_from_tag_field() -> String {
    format!("spec.tags.{MIGRATION_TAG_KEY}")
}

/// The controllers' generated names: `k8s-<group>-<10 hex>` (explicit groups) or
/// `k8s-<ns>-<name>-<10 hex>`; both forms count, since a migrated explicit group gets the
/// three-part form.
static GENERATED_NAME: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"^k8s-[a-z0-9]+(-[a-z0-9]+)?-[0-9a-f]{10}$").expect("a valid regex")
});

const GENERATED_NAME_REASON: &str = "Controller-generated name; format preserved";

/// Target-group health-check fields whose defaults differ between the controllers.
fn health_check_default(field: &str) -> Option<&'static str> {
    match field {
        "spec.healthCheckConfig.healthyThresholdCount"
        | "spec.healthCheckConfig.unhealthyThresholdCount" => {
            Some("Controller default differs (Ingress=2, Gateway=3)")
        }
        "spec.healthCheckConfig.matcher.httpCode" => {
            Some("Controller default differs (Ingress=200, Gateway=200-399)")
        }
        _ => None,
    }
}

/// Plan fields the Ingress set by annotation (rather than left to the controller's default).
pub type UserSpecifiedFields = BTreeSet<String>;

/// Annotation → the plan field it sets, for the health-check defaults above.
const ANNOTATION_FIELDS: [(&str, &str); 3] = [
    (
        "alb.ingress.kubernetes.io/healthy-threshold-count",
        "spec.healthCheckConfig.healthyThresholdCount",
    ),
    (
        "alb.ingress.kubernetes.io/unhealthy-threshold-count",
        "spec.healthCheckConfig.unhealthyThresholdCount",
    ),
    (
        "alb.ingress.kubernetes.io/success-codes",
        "spec.healthCheckConfig.matcher.httpCode",
    ),
];

/// The fields the Ingress's annotations set.
pub fn build_user_specified_fields(annotations: &BTreeMap<String, String>) -> UserSpecifiedFields {
    ANNOTATION_FIELDS
        .iter()
        .filter(|(a, _)| annotations.contains_key(*a))
        .map(|(_, f)| f.to_string())
        .collect()
}

/// Whether `entry` is a known migration artifact, and why.
pub fn classify_entry(e: &DiffEntry, user_specified: &UserSpecifiedFields) -> Classification {
    if e.status == DiffStatus::Added && e.field == migrated_from_tag_field() {
        return Classification::known("Added by migration tool");
    }
    if e.status != DiffStatus::Changed {
        return Classification::default();
    }
    let kind = e.resource_type.as_str();
    let name_field = matches!(
        (kind, e.field.as_str()),
        (LOAD_BALANCER | TARGET_GROUP, "spec.name")
            | (SECURITY_GROUP, "spec.groupName")
            | (TARGET_GROUP_BINDING, "spec.template.metadata.name")
    );
    if name_field && generated_name(e.ingress.as_ref()) && generated_name(e.gateway.as_ref()) {
        return Classification::known(GENERATED_NAME_REASON);
    }
    if kind == TARGET_GROUP {
        if let Some(reason) = health_check_default(&e.field) {
            if !user_specified.contains(&e.field) {
                return Classification::known(reason);
            }
        }
    }
    if kind == LISTENER_RULE
        && e.field == "spec.actions"
        && actions_only_differ_by_known_fields(e.ingress.as_ref(), e.gateway.as_ref())
    {
        return Classification::known("Only differs by targetGroup $ref naming and default weight");
    }
    if kind == TARGET_GROUP_BINDING && e.field == "spec.template.spec.targetGroupARN.$ref" {
        return Classification::known(
            "Points at the correlated TargetGroup; see that row for real field diffs",
        );
    }
    Classification::default()
}

fn generated_name(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| GENERATED_NAME.is_match(s))
}

/// Whether two `spec.actions` values are equal once target-group references are blanked and a
/// weight of 1 dropped (the Gateway controller writes `weight: 1`, the Ingress one none).
pub fn actions_only_differ_by_known_fields(
    ingress: Option<&Value>,
    gateway: Option<&Value>,
) -> bool {
    let norm = |v: Option<&Value>| normalize_actions(v.unwrap_or(&Value::Null));
    semantic_equal(&norm(ingress), &norm(gateway))
}

fn normalize_actions(v: &Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.iter().map(normalize_actions).collect()),
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, child) in m {
                if k == "$ref" && child.as_str().is_some_and(is_target_group_ref) {
                    out.insert(k.clone(), Value::String("NORMALIZED".into()));
                    continue;
                }
                if k == "weight" && child.as_f64() == Some(1.0) {
                    continue;
                }
                out.insert(k.clone(), normalize_actions(child));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

fn is_target_group_ref(s: &str) -> bool {
    s.starts_with(&format!("#/resources/{TARGET_GROUP}/"))
}
