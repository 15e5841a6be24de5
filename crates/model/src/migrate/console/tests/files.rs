//! The reports of translated files (`files`): the README samples compare alike request for
//! request, with upstream's field diff over the rendered plans (target groups matched across
//! the controllers by Service, the generated names known changes); a seeded mistake is a
//! differing request among alike ones; a Gateway that does not build is reported, not compared.

use super::TG;
use crate::migrate::console::differ::DiffStatus;
use crate::migrate::console::files::{
    file_reports, file_reports_against, read_files_with_generated,
};
use crate::migrate::console::{namespaces_of, DiffState};
use crate::migrate::objects::{PATH_EXACT, PATH_PREFIX};
use crate::migrate::reader::decode_resources;
use crate::migrate::run::translate_input;
use crate::migrate::verify::default_model_config;
use crate::migrate::writer::all_documents;
use crate::migrate::{translate, InputResources, OutputResources};

pub(super) fn samples() -> InputResources {
    let mut input = InputResources::default();
    for text in [
        include_str!("../../../../../../config/samples/ingressclass.yaml"),
        include_str!("../../../../../../config/samples/ingress-group.yaml"),
        include_str!("../../../../../../config/samples/ingress-https.yaml"),
        include_str!("../../../../../../config/samples/ingress-ip-target.yaml"),
    ] {
        decode_resources(text, &mut input, &mut std::io::sink()).unwrap();
    }
    input.normalize_namespaces();
    input
}

pub(super) fn one_ingress(path: &str, path_type: &str) -> InputResources {
    let text = one_ingress_text(path, path_type);
    let mut input = InputResources::default();
    decode_resources(&text, &mut input, &mut std::io::sink()).unwrap();
    input.normalize_namespaces();
    input
}

/// A Service `shop/api` and an Ingress routing `path` of `shop.example.com` to it.
pub(super) fn one_ingress_text(path: &str, path_type: &str) -> String {
    format!(
        r#"
apiVersion: v1
kind: Service
metadata: {{name: api, namespace: shop}}
spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080}}]}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {{name: api, namespace: shop}}
spec:
  ingressClassName: alb
  rules:
  - host: shop.example.com
    http:
      paths:
      - {{path: "{path}", pathType: {path_type}, backend: {{service: {{name: api, port: {{number: 80}}}}}}}}
"#
    )
}

/// A Prefix path translated, then the generated HTTPRoute's path type changed to Exact.
pub(super) fn seeded_mistake() -> (InputResources, OutputResources) {
    let input = one_ingress("/api", "Prefix");
    let mut output = translate(&input).unwrap();
    let path = output.http_routes[0].spec.rules[0].matches[0]
        .path
        .as_mut()
        .unwrap();
    assert_eq!(path.type_.as_deref(), Some(PATH_PREFIX));
    path.type_ = Some(PATH_EXACT.into());
    (input, output)
}

#[test]
fn the_readme_samples_compare_alike_with_upstreams_field_diff() {
    let input = samples();
    let output = translate(&input).unwrap();
    let reports = file_reports(&input, &output, &default_model_config().unwrap()).unwrap();
    assert_eq!(reports.len(), 3);
    let keys: Vec<String> = reports.iter().map(|r| r.key()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "by namespace and name");
    assert_eq!(
        namespaces_of(&reports)
            .iter()
            .map(|n| n.gateway_count)
            .sum::<usize>(),
        3
    );
    let group = reports
        .iter()
        .find(|r| r.verdict.label == "IngressGroup shop")
        .expect("the group's Gateway");
    assert_eq!(group.info.migrated_from, "ingress-group/shop");
    for r in &reports {
        assert!(r.info.error.is_empty(), "{}: {}", r.key(), r.info.error);
        assert!(!r.verdict.failed(), "{}", r.key());
        assert!(!r.requests.is_empty());
        assert!(r.requests.iter().all(|q| !q.differs()));
        let DiffState::Ready(d) = &r.diff else {
            panic!("{}: no diff", r.key())
        };
        assert_eq!(d.summary.total(), d.entries.len());
        assert!(d.summary.same > 0, "{}", r.key());
        // Target groups are matched by Service across the controllers' different ids.
        let tg = d
            .entries
            .iter()
            .find(|e| {
                e.resource_type == TG
                    && !e.ingress_resource_id.is_empty()
                    && !e.gateway_resource_id.is_empty()
            })
            .unwrap_or_else(|| panic!("{}: no correlated target group", r.key()));
        assert_ne!(tg.ingress_resource_id, tg.gateway_resource_id);
        assert!(tg.correlation_id.contains(':'), "{}", tg.correlation_id);
        // The generated load balancer names differ, as a known change.
        let name = d
            .entries
            .iter()
            .find(|e| e.resource_type.ends_with("::LoadBalancer") && e.field == "spec.name")
            .unwrap();
        assert_eq!(name.status, DiffStatus::Changed);
        assert!(name.known, "{name:?}");
    }
}

#[test]
fn a_seeded_mistake_is_one_differing_request_among_alike_ones() {
    let (input, output) = seeded_mistake();
    let reports = file_reports(&input, &output, &default_model_config().unwrap()).unwrap();
    let r = &reports[0];
    assert!(r.verdict.failed());
    assert_eq!(r.verdict.requests, r.requests.len());
    assert!(r.requests.len() > r.verdict.differences.len());
    let d = r
        .verdict
        .differences
        .iter()
        .find(|d| d.request.path == "/api/w" && d.request.port == 80)
        .expect("the request below the prefix");
    assert_eq!(
        d.ingress.outcome.to_string(),
        "forward to shop/api:80 as shop.example.com/api/w"
    );
    assert_eq!(
        d.gateway.outcome.to_string(),
        "fixed-response 404 text/plain \"\""
    );
}

#[test]
fn a_gateway_that_does_not_build_is_reported_not_compared() {
    let input = one_ingress("/*", "ImplementationSpecific");
    let output = translate(&input).unwrap();
    let reports = file_reports(&input, &output, &default_model_config().unwrap()).unwrap();
    let r = &reports[0];
    assert!(
        r.info
            .error
            .contains("prefix path shouldn't contain wildcards"),
        "{}",
        r.info.error
    );
    assert_eq!(r.verdict.problem.as_deref(), Some(r.info.error.as_str()));
    assert_eq!(r.diff, DiffState::NoIngressPlan);
    assert!(r.requests.is_empty());
}

/// Generated objects read with the Ingresses (`migrate`'s output, here with one path type
/// changed) are the Gateway side: the mistake is found, where the Ingresses' own translation
/// routes alike.
#[test]
fn generated_objects_in_the_files_are_the_gateway_side() {
    let (_, edited) = seeded_mistake();
    let dir = tempfile::tempdir().unwrap();
    let ingress = dir.path().join("ingress.yaml");
    std::fs::write(&ingress, one_ingress_text("/api", "Prefix")).unwrap();
    let generated = dir.path().join("gateway-resources.yaml");
    let docs = all_documents(&edited);
    let text: Vec<String> = docs
        .iter()
        .map(|d| serde_yaml::to_string(d).unwrap())
        .collect();
    std::fs::write(&generated, text.join("---\n")).unwrap();
    let mut log = Vec::new();
    let (read, objects) = read_files_with_generated(&[ingress, generated], &mut log).unwrap();
    let log = String::from_utf8(log).unwrap();
    assert!(!log.contains("Skipping"), "{log}");
    assert_eq!((read.ingresses.len(), read.services.len()), (1, 1));
    assert_eq!(objects.len(), docs.len());
    let (input, output) = translate_input(read, &mut std::io::sink())
        .unwrap()
        .unwrap();
    let cfg = default_model_config().unwrap();
    let own = file_reports(&input, &output, &cfg).unwrap();
    assert!(!own[0].verdict.failed());
    let against = file_reports_against(&input, &output, objects, &cfg).unwrap();
    assert!(
        against[0]
            .verdict
            .differences
            .iter()
            .any(|d| d.request.path == "/api/w"),
        "{:?}",
        against[0].verdict
    );
}
