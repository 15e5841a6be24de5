//! The three `gateway.k8s.aws` CRDs against upstream's: versions, columns, and the whole schema.
//!
//! `upstream_schemas.json` is upstream's `config/crd/gateway/gateway-crds.yaml` (v3.5.0) reduced
//! to each kind's `v1` openAPIV3Schema without `description`s: field names, types, required
//! lists, enums, defaults, limits and CEL rules with their messages. Our generated schema, reduced
//! the same way, must equal it.
//!
//! Also: a Gateway's or class's `parametersRef` to anything but our LoadBalancerConfiguration is
//! remarked on.

use super::super::all_crds;
use super::{foreign_parameters_ref, GROUP};
use serde_json::{json, Value};

fn crd(kind: &str) -> Value {
    let crd = all_crds()
        .into_iter()
        .find(|c| c.spec.names.kind == kind)
        .unwrap_or_else(|| panic!("missing CRD {kind}"));
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
        // k8s-openapi keeps `minimum`/`maximum` as f64 (604800.0); the same number to the API server.
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => {}
        _ if ours != theirs => out.push(format!("{path}: ours {ours} upstream {theirs}")),
        _ => {}
    }
}

const KINDS: [&str; 3] = [
    "ListenerRuleConfiguration",
    "LoadBalancerConfiguration",
    "TargetGroupConfiguration",
];

#[test]
fn gateway_configuration_schemas_equal_upstreams_field_by_field() {
    let upstream: Value = serde_json::from_str(include_str!("upstream_schemas.json")).unwrap();
    let mut all = Vec::new();
    for kind in KINDS {
        let crd = crd(kind);
        let mut ours =
            without_descriptions(&crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]);
        // kube's derive names the root schema and leaves out the TypeMeta/ObjectMeta fields the
        // API server adds anyway; controller-gen lists them.
        let root = ours.as_object_mut().unwrap();
        root.remove("title");
        for field in ["apiVersion", "kind"] {
            root["properties"][field] = json!({"type": "string"});
        }
        root["properties"]["metadata"] = json!({"type": "object"});
        differences(kind, &ours, &upstream[kind], &mut all);
    }
    assert!(all.is_empty(), "schemas differ:\n{}", all.join("\n"));
}

#[test]
fn gateway_configuration_crds_serve_v1_and_deprecated_v1beta1() {
    for kind in KINDS {
        let crd = crd(kind);
        let plural = format!("{}s", kind.to_lowercase());
        assert_eq!(crd["metadata"]["name"], format!("{plural}.gateway.k8s.aws"));
        assert_eq!(crd["spec"]["group"], "gateway.k8s.aws");
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert_eq!(crd["spec"]["names"]["plural"], plural);
        assert_eq!(crd["spec"]["names"]["singular"], kind.to_lowercase());
        let versions = crd["spec"]["versions"].as_array().unwrap();
        assert_eq!(versions.len(), 2, "{kind}");
        let (v1, beta) = (&versions[0], &versions[1]);
        assert_eq!(
            (&v1["name"], &v1["served"], &v1["storage"]),
            (&json!("v1"), &json!(true), &json!(true))
        );
        assert_eq!(
            (&beta["name"], &beta["served"], &beta["storage"]),
            (&json!("v1beta1"), &json!(true), &json!(false))
        );
        assert_eq!(beta["deprecated"], true);
        assert_eq!(
            beta["deprecationWarning"],
            format!("gateway.k8s.aws/v1beta1 {kind} is deprecated; use gateway.k8s.aws/v1 instead")
        );
        assert_eq!(
            v1["schema"], beta["schema"],
            "{kind}: one schema for both versions"
        );
        assert_eq!(v1["subresources"]["status"], json!({}));
        assert_eq!(v1.get("deprecated"), None);
    }
    let columns = |kind: &str| -> Vec<(String, String)> {
        crd(kind)["spec"]["versions"][0]["additionalPrinterColumns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["jsonPath"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(
        columns("TargetGroupConfiguration"),
        vec![
            ("SERVICE-NAME".into(), ".spec.targetReference.name".into()),
            ("AGE".into(), ".metadata.creationTimestamp".into())
        ]
    );
    assert_eq!(
        columns("LoadBalancerConfiguration"),
        vec![("AGE".into(), ".metadata.creationTimestamp".into())]
    );
}

#[test]
fn upstream_objects_round_trip_through_our_types() {
    let lbc: super::LoadBalancerConfiguration = serde_json::from_value(json!({
        "apiVersion": "gateway.k8s.aws/v1beta1", "kind": "LoadBalancerConfiguration",
        "metadata": {"name": "lbc", "namespace": "ns"},
        "spec": {
            "scheme": "internet-facing",
            "listenerConfigurations": [{"protocolPort": "HTTPS:443",
                "defaultCertificate": "arn:aws:acm:us-west-2:1:certificate/x",
                "mutualAuthentication": {"mode": "verify", "trustStore": "ts"}}],
            "loadBalancerSubnets": [{"identifier": "subnet-1", "eipAllocation": "eipalloc-1"}],
            "tags": {"team": "a"},
            "wafV2": {"webACL": "arn:acl"},
            "enableICMP": true
        }
    }))
    .unwrap();
    let spec = &lbc.spec;
    assert_eq!(spec.waf_v2.as_ref().unwrap().web_acl, "arn:acl");
    assert_eq!(spec.enable_icmp, Some(true));
    let back = serde_json::to_value(spec).unwrap();
    assert_eq!(
        back["listenerConfigurations"][0]["protocolPort"],
        "HTTPS:443"
    );
    assert_eq!(
        back["loadBalancerSubnets"][0]["eipAllocation"],
        "eipalloc-1"
    );

    let lrc: super::ListenerRuleConfiguration = serde_json::from_value(json!({
        "apiVersion": "gateway.k8s.aws/v1", "kind": "ListenerRuleConfiguration",
        "metadata": {"name": "lrc", "namespace": "ns"},
        "spec": {"actions": [{"type": "authenticate-oidc", "authenticateOIDCConfig": {
            "authorizationEndpoint": "https://a", "secret": {"name": "s"}, "issuer": "https://i",
            "tokenEndpoint": "https://t", "userInfoEndpoint": "https://u"}}],
            "conditions": [{"field": "source-ip", "sourceIPConfig": {"values": ["10.0.0.0/8"]},
                "matchIndexes": [0]}]}
    }))
    .unwrap();
    let back = serde_json::to_value(&lrc.spec).unwrap();
    assert_eq!(
        back["actions"][0]["authenticateOIDCConfig"]["secret"]["name"],
        "s"
    );
    assert_eq!(
        back["conditions"][0]["sourceIPConfig"]["values"][0],
        "10.0.0.0/8"
    );
}

#[test]
fn only_a_load_balancer_configuration_of_our_group_passes_unremarked() {
    let ours = foreign_parameters_ref("parametersRef", GROUP, "LoadBalancerConfiguration", "c");
    assert_eq!(ours, None);
    let other_kind = foreign_parameters_ref("parametersRef", GROUP, "ConfigMap", "c").unwrap();
    assert!(
        other_kind.starts_with("parametersRef names ConfigMap \"c\" of group \"gateway.k8s.aws\""),
        "{other_kind}"
    );
    let other_group = foreign_parameters_ref("p", "example.com", "LoadBalancerConfiguration", "c");
    assert!(other_group
        .unwrap()
        .contains("the LoadBalancerConfiguration named \"c\" is looked up instead"));
}
