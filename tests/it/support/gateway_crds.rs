//! Gateway API test fixtures: our CRDs plus the Gateway API CRDs of `config/gateway-api/standard`
//! in the API test server, and creating Gateway API / `gateway.k8s.aws` objects from YAML.

use aws_load_balancer_controller::crd::all_crds;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use serde_json::Value;

/// Creates our CRDs and every CustomResourceDefinition under `config/gateway-api/standard`.
pub async fn install(client: &kube::Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in all_crds() {
        crds.create(&PostParams::default(), &crd).await.unwrap();
    }
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/config/gateway-api/standard");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for doc in aws_load_balancer_controller::plan::parse_documents(&text).unwrap() {
            if doc["kind"] != "CustomResourceDefinition" {
                continue;
            }
            let crd: CustomResourceDefinition = serde_json::from_value(doc).unwrap();
            crds.create(&PostParams::default(), &crd).await.unwrap();
        }
    }
}

/// `(group, version, plural, namespaced)` of the kinds the fixtures create.
fn resource_of(kind: &str) -> (ApiResource, bool) {
    let (group, version, plural, namespaced) = match kind {
        "GatewayClass" => ("gateway.networking.k8s.io", "v1", "gatewayclasses", false),
        "Gateway" => ("gateway.networking.k8s.io", "v1", "gateways", true),
        "HTTPRoute" => ("gateway.networking.k8s.io", "v1", "httproutes", true),
        "GRPCRoute" => ("gateway.networking.k8s.io", "v1", "grpcroutes", true),
        "TCPRoute" => ("gateway.networking.k8s.io", "v1", "tcproutes", true),
        "UDPRoute" => ("gateway.networking.k8s.io", "v1", "udproutes", true),
        "LoadBalancerConfiguration" => {
            ("gateway.k8s.aws", "v1", "loadbalancerconfigurations", true)
        }
        "TargetGroupConfiguration" => ("gateway.k8s.aws", "v1", "targetgroupconfigurations", true),
        "ListenerRuleConfiguration" => {
            ("gateway.k8s.aws", "v1", "listenerruleconfigurations", true)
        }
        "Service" => ("", "v1", "services", true),
        "Namespace" => ("", "v1", "namespaces", false),
        other => panic!("gateway fixtures: unsupported kind {other}"),
    };
    let api_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let ar = ApiResource {
        group: group.into(),
        version: version.into(),
        api_version,
        kind: kind.into(),
        plural: plural.into(),
    };
    (ar, namespaced)
}

/// The API of `kind` (in `ns` when namespaced).
pub fn api(client: &kube::Client, kind: &str, ns: &str) -> Api<DynamicObject> {
    let (ar, namespaced) = resource_of(kind);
    if namespaced {
        Api::namespaced_with(client.clone(), ns, &ar)
    } else {
        Api::all_with(client.clone(), &ar)
    }
}

/// Creates the objects of a multi-document YAML text (namespaces of namespaced objects first).
pub async fn create(client: &kube::Client, yaml: &str) {
    for doc in aws_load_balancer_controller::plan::parse_documents(yaml).unwrap() {
        let kind = doc["kind"].as_str().unwrap().to_string();
        let ns = doc["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default")
            .to_string();
        let (_, namespaced) = resource_of(&kind);
        if namespaced {
            namespace(client, &ns).await;
        }
        let obj: DynamicObject = serde_json::from_value(doc).unwrap();
        api(client, &kind, &ns)
            .create(&PostParams::default(), &obj)
            .await
            .unwrap_or_else(|e| panic!("create {kind}: {e}"));
    }
}

async fn namespace(client: &kube::Client, ns: &str) {
    let obj: DynamicObject = serde_json::from_value(
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
    )
    .unwrap();
    match api(client, "Namespace", "")
        .create(&PostParams::default(), &obj)
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => panic!("create namespace {ns}: {e}"),
    }
}

/// The object as JSON, or None when it does not exist.
pub async fn get(client: &kube::Client, kind: &str, ns: &str, name: &str) -> Option<Value> {
    let obj = api(client, kind, ns).get_opt(name).await.unwrap()?;
    Some(serde_json::to_value(obj).unwrap())
}
