//! The GlobalAccelerator CRD against upstream's: names, columns, status subresource and the whole
//! schema; and upstream-shaped objects through our types.
//!
//! `global_accelerator_upstream_schema.json` is upstream's
//! `config/crd/aga/aga.k8s.aws_globalaccelerators.yaml` reduced to its openAPIV3Schema without
//! `description`s: field names, types, required lists, enums, defaults, limits and CEL rules with
//! their messages. Our generated schema, reduced the same way, must equal it.

use super::*;
use serde_json::{json, Value};

fn crd_json() -> Value {
    let crd = crate::crd::all_crds()
        .into_iter()
        .find(|c| c.metadata.name.as_deref() == Some("globalaccelerators.aga.k8s.aws"))
        .expect("GlobalAccelerator is among the CRDs");
    serde_json::to_value(crd).unwrap()
}

fn without_descriptions(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "description")
                .map(|(k, v)| (k.clone(), without_descriptions(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_descriptions).collect()),
        other => other.clone(),
    }
}

/// Paths where two JSON values differ, for a readable failure.
fn differences(path: &str, ours: &Value, theirs: &Value, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let p = format!("{path}.{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => differences(&p, x, y, out),
                    (Some(x), None) => out.push(format!("{p}: only ours: {x}")),
                    (None, Some(y)) => out.push(format!("{p}: only upstream: {y}")),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(&format!("{path}[{i}]"), x, y, out);
            }
        }
        // k8s-openapi keeps `minimum`/`maximum` as f64 (65535.0); the same number to the API server.
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => {}
        _ if ours != theirs => out.push(format!("{path}: ours {ours} upstream {theirs}")),
        _ => {}
    }
}

#[test]
fn schema_equals_upstreams_field_by_field() {
    let upstream: Value =
        serde_json::from_str(include_str!("global_accelerator_upstream_schema.json")).unwrap();
    let crd = crd_json();
    let mut ours = without_descriptions(&crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]);
    // kube's derive names the root schema and leaves out the TypeMeta/ObjectMeta fields the API
    // server adds anyway; controller-gen lists them.
    let root = ours.as_object_mut().unwrap();
    root.remove("title");
    for field in ["apiVersion", "kind"] {
        root["properties"][field] = json!({"type": "string"});
    }
    root["properties"]["metadata"] = json!({"type": "object"});
    let mut all = Vec::new();
    differences("GlobalAccelerator", &ours, &upstream, &mut all);
    assert!(all.is_empty(), "schemas differ:\n{}", all.join("\n"));
}

#[test]
fn crd_names_version_status_and_columns_are_upstreams() {
    let crd = crd_json();
    assert_eq!(crd["spec"]["group"], "aga.k8s.aws");
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    assert_eq!(crd["spec"]["names"]["kind"], "GlobalAccelerator");
    // Like the other CRDs here, `listKind` is left to the API server's default (kind + "List").
    let list_kind = &crd["spec"]["names"]["listKind"];
    assert!(
        list_kind.is_null() || list_kind == "GlobalAcceleratorList",
        "{list_kind}"
    );
    assert_eq!(crd["spec"]["names"]["plural"], "globalaccelerators");
    assert_eq!(crd["spec"]["names"]["singular"], "globalaccelerator");
    let versions = crd["spec"]["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1);
    let v = &versions[0];
    assert_eq!(
        (&v["name"], &v["served"], &v["storage"]),
        (&json!("v1beta1"), &json!(true), &json!(true))
    );
    assert_eq!(v["subresources"]["status"], json!({}));
    let cols: Vec<(&str, &str, i64)> = v["additionalPrinterColumns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["jsonPath"].as_str().unwrap(),
                c["priority"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        cols,
        vec![
            ("ACCELERATOR-NAME", ".spec.name", 0),
            ("DNS-NAME", ".status.dnsName", 0),
            ("TYPE", ".spec.type", 0),
            ("STATUS", ".status.status", 0),
            ("ARN", ".status.acceleratorARN", 1),
            ("AGE", ".metadata.creationTimestamp", 0),
        ]
    );
}

#[test]
fn upstream_object_round_trips_through_our_types() {
    let raw = json!({
        "apiVersion": "aga.k8s.aws/v1beta1",
        "kind": "GlobalAccelerator",
        "metadata": {"name": "ga", "namespace": "apps", "uid": "u-1"},
        "spec": {
            "name": "my-accelerator",
            "ipAddressType": "DUAL_STACK",
            "ipAddresses": ["198.51.100.10"],
            "tags": {"team": "a"},
            "listeners": [{
                "protocol": "TCP",
                "portRanges": [{"fromPort": 80, "toPort": 80}, {"fromPort": 443, "toPort": 443}],
                "clientAffinity": "SOURCE_IP",
                "endpointGroups": [{
                    "region": "us-west-2",
                    "trafficDialPercentage": 50,
                    "portOverrides": [{"listenerPort": 80, "endpointPort": 8080}],
                    "endpoints": [
                        {"type": "Service", "name": "web", "namespace": "other", "weight": 200,
                         "clientIPPreservationEnabled": false},
                        {"type": "EndpointID",
                         "endpointID": "arn:aws:elasticloadbalancing:us-west-2:1:loadbalancer/app/x/y"}
                    ]
                }]
            }]
        },
        "status": {
            "observedGeneration": 2,
            "acceleratorARN": "arn:aws:globalaccelerator::1:accelerator/abc",
            "dnsName": "a1.awsglobalaccelerator.com",
            "dualStackDnsName": "a1.dualstack.awsglobalaccelerator.com",
            "ipSets": [{"ipAddresses": ["192.0.2.1", "192.0.2.2"], "ipAddressFamily": "IPv4"}],
            "status": "DEPLOYED",
            "conditions": [{"type": "Ready", "status": "True", "reason": "AcceleratorReady",
                            "message": "GlobalAccelerator is ready and available",
                            "lastTransitionTime": "2025-01-01T00:00:00Z"}]
        }
    });
    let ga: GlobalAccelerator = serde_json::from_value(raw.clone()).unwrap();
    assert_eq!(ga.key(), "apps/ga");
    assert_eq!(ga.spec.ip_address_type, Some(IpAddressType::DualStack));
    let listener = &ga.spec.listeners.as_ref().unwrap()[0];
    assert_eq!(listener.client_affinity, Some(ClientAffinityType::SourceIp));
    let endpoints = listener.endpoint_groups.as_ref().unwrap()[0]
        .endpoints
        .as_ref()
        .unwrap();
    assert_eq!(
        endpoints[1].endpoint_type,
        GlobalAcceleratorEndpointType::EndpointID
    );
    assert_eq!(endpoints[0].client_ip_preservation_enabled, Some(false));
    assert_eq!(serde_json::to_value(&ga).unwrap(), raw);
}

#[test]
fn absent_lists_stay_absent_and_empty_ones_empty() {
    // Upstream tells an absent `portRanges` (auto-discovery) from a present one.
    let l: GlobalAcceleratorListener = serde_json::from_value(json!({"protocol": "UDP"})).unwrap();
    assert_eq!(l.port_ranges, None);
    assert_eq!(l.endpoint_groups, None);
    let l: GlobalAcceleratorListener =
        serde_json::from_value(json!({"endpointGroups": []})).unwrap();
    assert_eq!(l.endpoint_groups, Some(vec![]));
    assert_eq!(
        serde_json::to_value(&l).unwrap(),
        json!({"endpointGroups": []})
    );
}
