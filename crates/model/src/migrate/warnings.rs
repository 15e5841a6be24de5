//! Upstream's checks of file input (`pkg/ingress2gateway/warnings`): Services and IngressClasses
//! an Ingress names but the files do not hold (their annotations and IngressClassParams may be
//! missed), actions that reference existing target groups (an external target group serves one
//! ALB at a time), and `group.order` (Gateway API has no rule priority). The texts are upstream's.

use std::collections::BTreeSet;
use std::io::Write;

use k8s_openapi::api::networking::v1::Ingress;

use super::{
    annotations_of, InputResources, ACTION_ANNOTATION_PREFIX, SERVICE_PORT_USE_ANNOTATION,
    TIP_USE_FROM_CLUSTER_MESSAGE, WARN_EXTERNAL_TARGET_GROUP_MESSAGE, WARN_GROUP_ORDER_MESSAGE,
};

/// Writes the warnings about `resources` to `w`; returns how many missing resources it found.
pub fn check_input_resources(resources: &InputResources, w: &mut dyn Write) -> usize {
    let services: BTreeSet<String> = resources
        .services
        .iter()
        .map(|s| {
            format!(
                "{}/{}",
                s.metadata.namespace.as_deref().unwrap_or_default(),
                s.metadata.name.as_deref().unwrap_or_default()
            )
        })
        .collect();
    let classes: BTreeSet<String> = resources
        .ingress_classes
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    let mut count = 0;
    let mut external_tg = false;
    let mut group_order = false;
    for ing in &resources.ingresses {
        count += check_missing_services(ing, &services, w);
        count += check_missing_ingress_class(ing, &classes, w);
        external_tg = external_tg || check_external_target_groups(ing);
        group_order = group_order || check_group_order(ing);
    }
    // Upstream's writes to stderr; a failed write has nowhere better to go.
    if count > 0 {
        let _ = write!(w, "{TIP_USE_FROM_CLUSTER_MESSAGE}");
    }
    if external_tg {
        let _ = writeln!(w, "{WARN_EXTERNAL_TARGET_GROUP_MESSAGE}");
    }
    if group_order {
        let _ = writeln!(w, "{WARN_GROUP_ORDER_MESSAGE}");
    }
    count
}

fn ingress_key(ing: &Ingress) -> String {
    format!(
        "{}/{}",
        ing.metadata.namespace.as_deref().unwrap_or_default(),
        ing.metadata.name.as_deref().unwrap_or_default()
    )
}

fn missing_service(w: &mut dyn Write, ing: &Ingress, svc: &str) {
    let _ = writeln!(
        w,
        "WARNING: Ingress {} references Service {} but it was not provided. Service-level annotation overrides may be missing.",
        super::go_quote(&ingress_key(ing)),
        super::go_quote(svc)
    );
}

fn check_missing_services(ing: &Ingress, services: &BTreeSet<String>, w: &mut dyn Write) -> usize {
    let ns = ing.metadata.namespace.as_deref().unwrap_or_default();
    let mut count = 0;
    let Some(spec) = &ing.spec else {
        return 0;
    };
    if let Some(svc) = spec
        .default_backend
        .as_ref()
        .and_then(|b| b.service.as_ref())
    {
        if !services.contains(&format!("{ns}/{}", svc.name)) {
            missing_service(w, ing, &svc.name);
            count += 1;
        }
    }
    for rule in spec.rules.iter().flatten() {
        let Some(http) = &rule.http else {
            continue;
        };
        for path in &http.paths {
            let Some(svc) = &path.backend.service else {
                continue;
            };
            // The name of a use-annotation backend keys an actions.* annotation.
            let port_name = svc.port.as_ref().and_then(|p| p.name.as_deref());
            if port_name == Some(SERVICE_PORT_USE_ANNOTATION) {
                continue;
            }
            if !services.contains(&format!("{ns}/{}", svc.name)) {
                missing_service(w, ing, &svc.name);
                count += 1;
            }
        }
    }
    count
}

fn check_missing_ingress_class(
    ing: &Ingress,
    classes: &BTreeSet<String>,
    w: &mut dyn Write,
) -> usize {
    let Some(class) = ing
        .spec
        .as_ref()
        .and_then(|s| s.ingress_class_name.as_ref())
    else {
        return 0;
    };
    if classes.contains(class) {
        return 0;
    }
    let _ = writeln!(
        w,
        "WARNING: Ingress {} uses IngressClass {} but it was not provided. IngressClassParams overrides may be missing.",
        super::go_quote(&ingress_key(ing)),
        super::go_quote(class)
    );
    1
}

/// Whether an `actions.*` annotation mentions `targetGroupARN` or `targetGroupName`.
pub fn check_external_target_groups(ing: &Ingress) -> bool {
    annotations_of(&ing.metadata).iter().any(|(k, v)| {
        k.starts_with(ACTION_ANNOTATION_PREFIX)
            && (v.contains("targetGroupARN") || v.contains("targetGroupName"))
    })
}

/// Whether the Ingress sets `group.order`.
pub fn check_group_order(ing: &Ingress) -> bool {
    annotations_of(&ing.metadata).contains_key("alb.ingress.kubernetes.io/group.order")
}
