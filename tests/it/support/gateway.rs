//! Gateway API helpers for tests: the Gateway API CRDs of `config/gateway-api/standard`
//! installed into the API test server, objects of any kind created from YAML through discovery,
//! and GatewayClass acceptance.

use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use serde_json::{json, Value};

/// Creates every CustomResourceDefinition of `config/gateway-api/standard` (other documents,
/// such as the ValidatingAdmissionPolicy, are left out).
pub async fn install_gateway_api(client: &kube::Client) {
    install_gateway_api_except(client, &[]).await
}

/// The Gateway API CRDs but those of `kinds` (a cluster on an older or narrower channel).
pub async fn install_gateway_api_except(client: &kube::Client, kinds: &[&str]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/gateway-api/standard");
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for doc in aws_load_balancer_controller::plan::parse_documents(&text).unwrap() {
            let kind = doc["spec"]["names"]["kind"].as_str().unwrap_or("");
            if doc["kind"] != "CustomResourceDefinition" || kinds.contains(&kind) {
                continue;
            }
            let crd: CustomResourceDefinition = serde_json::from_value(doc).unwrap();
            crds.create(&PostParams::default(), &crd).await.unwrap();
        }
    }
}

async fn api_for(client: &kube::Client, doc: &Value) -> Api<DynamicObject> {
    let (group, version) = match doc["apiVersion"].as_str().unwrap().split_once('/') {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (
            String::new(),
            doc["apiVersion"].as_str().unwrap().to_string(),
        ),
    };
    let gvk = GroupVersionKind::gvk(&group, &version, doc["kind"].as_str().unwrap());
    let (ar, caps) = kube::discovery::pinned_kind(client, &gvk).await.unwrap();
    match caps.scope {
        kube::discovery::Scope::Cluster => Api::all_with(client.clone(), &ar),
        kube::discovery::Scope::Namespaced => {
            let ns = doc["metadata"]["namespace"].as_str().unwrap_or("default");
            Api::namespaced_with(client.clone(), ns, &ar)
        }
    }
}

/// Creates the objects of a multi-document YAML text, whatever their kind (namespaces first
/// created when missing).
pub async fn create_all(client: &kube::Client, yaml: &str) {
    let docs = aws_load_balancer_controller::plan::parse_documents(yaml).unwrap();
    create_objects(client, docs).await
}

/// Creates the objects of `docs` (manifests, such as `albc_model::fixtures`' `into_value()`),
/// whatever their kind (namespaces first created when missing).
pub async fn create_objects(client: &kube::Client, docs: impl IntoIterator<Item = Value>) {
    for doc in docs {
        if let Some(ns) = doc["metadata"]["namespace"].as_str() {
            let nss: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
            let obj = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
            match nss.create(&PostParams::default(), &obj).await {
                Ok(_) | Err(kube::Error::Api(_)) => {}
                Err(e) => panic!("create namespace {ns}: {e}"),
            }
        }
        let api = api_for(client, &doc).await;
        let obj: DynamicObject = serde_json::from_value(doc).unwrap();
        api.create(&PostParams::default(), &obj).await.unwrap();
    }
}

/// Marks GatewayClass `name` Accepted, as the GatewayClass reconciler would.
///
/// Until the GatewayClass reconciler is merged, tests stand in for it here; once it runs beside
/// the Gateway controllers, tests should wait for its Accepted condition instead.
pub async fn accept_class(client: &kube::Client, name: &str) {
    let api: Api<gateway_api::apis::standard::gatewayclasses::GatewayClass> =
        Api::all(client.clone());
    let body = json!({"status": {"conditions": [{
        "type": "Accepted", "status": "True", "reason": "Accepted", "message": "Accepted",
        "lastTransitionTime": "2024-01-01T00:00:00Z", "observedGeneration": 1
    }]}});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&body))
        .await
        .unwrap();
}
