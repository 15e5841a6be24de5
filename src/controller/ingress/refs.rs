//! What an Ingress names outside itself that the controller follows: the Services of its
//! namespace it mentions (a Service's change queues the groups of those Ingresses, and a
//! Service's OIDC Secret is read for them). Below both `objects` and `secrets`.

use k8s_openapi::api::networking::v1::Ingress;

/// Whether an Ingress mentions a Service of its namespace (backends, or any annotation value,
/// which covers `actions.*` forward configs). Over-matching only costs a no-op reconcile.
pub fn references_service(ing: &Ingress, service: &str) -> bool {
    let spec_hit = ing.spec.as_ref().is_some_and(|s| {
        let default = s
            .default_backend
            .as_ref()
            .and_then(|b| b.service.as_ref())
            .is_some_and(|b| b.name == service);
        default
            || s.rules.iter().flatten().any(|r| {
                r.http.as_ref().is_some_and(|h| {
                    h.paths.iter().any(|p| {
                        p.backend
                            .service
                            .as_ref()
                            .is_some_and(|b| b.name == service)
                    })
                })
            })
    });
    spec_hit
        || ing
            .metadata
            .annotations
            .iter()
            .flatten()
            .any(|(k, v)| k.starts_with("alb.ingress.kubernetes.io/") && v.contains(service))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn backends_and_annotations_reference_a_service() {
        let ing: Ingress = serde_json::from_value(json!({
            "metadata": {"name": "a", "namespace": "ns"},
            "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}
        }))
        .unwrap();
        assert!(references_service(&ing, "web"));
        assert!(!references_service(&ing, "api"));
        let forwarded: Ingress = serde_json::from_value(json!({
            "metadata": {"name": "b", "namespace": "ns", "annotations": {
                "alb.ingress.kubernetes.io/actions.fwd":
                    r#"{"type":"forward","forwardConfig":{"targetGroups":[{"serviceName":"api","servicePort":80}]}}"#,
                "other.example/note": "web"
            }}
        }))
        .unwrap();
        assert!(references_service(&forwarded, "api"));
        assert!(
            !references_service(&forwarded, "web"),
            "only alb.ingress.kubernetes.io annotations are read"
        );
    }
}
