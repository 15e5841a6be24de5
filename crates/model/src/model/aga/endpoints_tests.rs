//! Replays upstream's `pkg/aga/endpoint_utils_test.go` (9 cases: the references of a
//! GlobalAccelerator, their tracker keys), and pins the texts of endpoint load errors.
// Upstream's test tables, one tuple per case, as its Go tables are.
#![allow(clippy::type_complexity)]

use serde_json::json;

use super::*;
use crate::model::aga::test_support::{by_id, ga, named, named_in};

const ARN: &str =
    "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/test-service/1234567890";

#[test]
fn desired_endpoints_table() {
    use GlobalAcceleratorEndpointType as T;
    let group = |endpoints: serde_json::Value| json!({"listeners": [{"endpointGroups": [{"endpoints": endpoints}]}]});
    // (case, spec, [(type, name, namespace, endpoint id)]); upstream's test namespace is
    // "default", filled in where it expects the GlobalAccelerator's.
    let cases: Vec<(&str, serde_json::Value, Vec<(T, &str, &str, &str)>)> = vec![
        ("Empty GA", json!({}), vec![]),
        ("GA with no listeners", json!({"listeners": null}), vec![]),
        (
            "GA with listeners but no endpoint groups",
            json!({"listeners": [{}]}),
            vec![],
        ),
        (
            "GA with endpoint groups but no endpoints",
            json!({"listeners": [{"endpointGroups": [{}]}]}),
            vec![],
        ),
        (
            "GA with service endpoint",
            group(json!([{"type": "Service", "name": "test-service"}])),
            vec![(T::Service, "test-service", "default", "")],
        ),
        (
            "GA with EndpointID type endpoint",
            group(json!([{"type": "EndpointID", "endpointID": ARN}])),
            vec![(T::EndpointID, "", "", ARN)],
        ),
        (
            "GA with multiple types of endpoints",
            group(json!([
                {"type": "Service", "name": "test-service"},
                {"type": "Ingress", "name": "test-ingress"},
                {"type": "Gateway", "name": "test-gateway", "namespace": "custom-namespace"}
            ])),
            vec![
                (T::Service, "test-service", "default", ""),
                (T::Ingress, "test-ingress", "default", ""),
                (T::Gateway, "test-gateway", "custom-namespace", ""),
            ],
        ),
    ];
    for (case, spec, want) in cases {
        let got: Vec<(T, String, String, String)> = desired_endpoints(&ga("default", "ga", spec))
            .into_iter()
            .map(|r| (r.endpoint_type, r.name, r.namespace, r.endpoint_id))
            .collect();
        let want: Vec<(T, String, String, String)> = want
            .into_iter()
            .map(|(t, n, ns, id)| (t, n.to_string(), ns.to_string(), id.to_string()))
            .collect();
        assert_eq!(got, want, "{case}");
    }
}

#[test]
fn references_key_their_resources() {
    let service = EndpointReference {
        endpoint_type: GlobalAcceleratorEndpointType::Service,
        name: "test-service".into(),
        namespace: "test-namespace".into(),
        endpoint_id: String::new(),
        endpoint: named_in(
            GlobalAcceleratorEndpointType::Service,
            "test-namespace",
            "test-service",
        ),
    };
    assert_eq!(
        service.resource_key(),
        ResourceKey {
            kind: GlobalAcceleratorEndpointType::Service,
            namespace: "test-namespace".into(),
            name: "test-service".into(),
        }
    );
    let by_arn = EndpointReference {
        endpoint_type: GlobalAcceleratorEndpointType::EndpointID,
        name: String::new(),
        namespace: String::new(),
        endpoint_id: ARN.into(),
        endpoint: by_id(ARN),
    };
    assert_eq!(
        by_arn.resource_key(),
        ResourceKey {
            kind: GlobalAcceleratorEndpointType::EndpointID,
            namespace: String::new(),
            name: ARN.into(),
        }
    );
}

#[test]
fn an_empty_namespace_is_unset_for_references_but_kept_by_loading() {
    // Upstream's reference list treats `namespace: ""` as unset; its loader and keys do not.
    let object = ga(
        "apps",
        "ga",
        json!({"listeners": [{"endpointGroups": [{"endpoints": [
            {"type": "Service", "name": "web", "namespace": ""}
        ]}]}]}),
    );
    let refs = desired_endpoints(&object);
    assert_eq!(refs[0].namespace, "apps");
    assert_eq!(endpoint_key(&refs[0].endpoint, "apps"), "Service//web");
    let loaded = LoadedEndpoint::new(&refs[0].endpoint, "apps");
    assert_eq!(loaded.namespace, "");
    assert_eq!(loaded.key(), "Service//web");
}

#[test]
fn load_errors_read_as_upstreams() {
    let warning = EndpointLoadError::warning(
        CROSS_NAMESPACE_REFERENCE_MSG,
        None,
        endpoint_key(
            &named(GlobalAcceleratorEndpointType::Service, "web"),
            "apps",
        ),
    );
    assert_eq!(
        warning.to_string(),
        "Warning error for endpoint Service/apps/web: Cross-namespace reference denied - <nil>"
    );
    let fatal = EndpointLoadError::fatal(
        ENDPOINT_ID_EMPTY_MSG,
        Some("endpointID is required for endpoint type EndpointID".into()),
        endpoint_key(&by_id(""), "apps"),
    );
    assert_eq!(
        fatal.to_string(),
        "Fatal error for endpoint EndpointID/: EndpointID is required for EndpointID type - endpointID is required for endpoint type EndpointID"
    );
}

#[test]
fn loaded_endpoints_default_their_weight_and_namespace() {
    let e = LoadedEndpoint::new(
        &named(GlobalAcceleratorEndpointType::Ingress, "web"),
        "apps",
    );
    assert_eq!(e.weight, DEFAULT_ENDPOINT_WEIGHT);
    assert_eq!(e.namespace, "apps");
    assert_eq!(e.key(), "Ingress/apps/web");
    assert!(e.is_usable());
    let weighted = crate::crd::global_accelerator::GlobalAcceleratorEndpoint {
        weight: Some(7),
        ..named_in(GlobalAcceleratorEndpointType::Gateway, "other", "gw")
    };
    let e = LoadedEndpoint::new(&weighted, "apps");
    assert_eq!((e.weight, e.namespace.as_str()), (7, "other"));
}
