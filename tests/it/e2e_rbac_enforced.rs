//! The controller's real calls under the chart's RBAC, enforced by the API test server as a
//! cluster enforces it (the binary authenticates as the chart's service account; every request
//! RBAC does not allow is refused with 403). Multi-cluster TargetGroupBindings are the case that
//! needs it: their target record is a ConfigMap, which the chart grants `get, create, update,
//! delete` on, as upstream's does.

use crate::chart::{docs, render};
use crate::support::e2e::Cluster;
use crate::support::moto::Moto;
use crate::support::moto_cloud::{clients, endpoints_flag};
use crate::support::process::Controller;
use crate::support::rbac::grants_for;
use crate::tgb::{eventually, ip_tg, target, targets, WAIT};
use aws_load_balancer_controller::aws::Ec2Query;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::api::{DeleteParams, PostParams};
use serde_json::{json, Value};

const SA: &str = "system:serviceaccount:kube-system:aws-load-balancer-controller";

/// Creates every ServiceAccount, Role, ClusterRole and binding of a default render of the chart.
async fn apply_chart_rbac(client: &kube::Client) {
    for doc in docs(&render(&["--set", "clusterName=e2e"])) {
        let kind = doc["kind"].as_str().unwrap_or_default().to_string();
        let (group, plural) = match kind.as_str() {
            "ServiceAccount" => ("", "serviceaccounts"),
            "Role" => ("rbac.authorization.k8s.io", "roles"),
            "RoleBinding" => ("rbac.authorization.k8s.io", "rolebindings"),
            "ClusterRole" => ("rbac.authorization.k8s.io", "clusterroles"),
            "ClusterRoleBinding" => ("rbac.authorization.k8s.io", "clusterrolebindings"),
            _ => continue,
        };
        let ar =
            ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, "v1", &kind), plural);
        let obj: DynamicObject =
            serde_json::from_value(serde_json::to_value(&doc).unwrap()).unwrap();
        let api: Api<DynamicObject> = match obj.metadata.namespace.as_deref() {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
            None => Api::all_with(client.clone(), &ar),
        };
        api.create(&PostParams::default(), &obj).await.unwrap();
    }
}

async fn create(client: &kube::Client, ar: (&str, &str, &str, &str), obj: Value) {
    let (group, version, kind, plural) = ar;
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    let obj: DynamicObject = serde_json::from_value(obj).unwrap();
    let api: Api<DynamicObject> = match obj.metadata.namespace.as_deref() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    };
    api.create(&PostParams::default(), &obj).await.unwrap();
}

const POD: (&str, &str, &str, &str) = ("", "v1", "Pod", "pods");
const SLICE: (&str, &str, &str, &str) =
    ("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices");

/// A running, ready pod of `app` on node-a with `ip`.
async fn pod(client: &kube::Client, name: &str, app: &str, ip: &str) {
    create(
        client,
        POD,
        json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "labels": {"app": app}},
        "spec": {"nodeName": "node-a", "containers": [{"name": "c", "image": "nginx"}]}}),
    )
    .await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    let status = json!({"status": {"phase": "Running", "podIP": ip, "conditions": [
        {"type": "ContainersReady", "status": "True"}, {"type": "Ready", "status": "True"}]}});
    pods.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

/// The EndpointSlice of Service `svc`: each (pod, ip) ready on port 8080.
fn slice(svc: &str, pods: &[(&str, &str)]) -> Value {
    let endpoints: Vec<Value> = pods
        .iter()
        .map(|(p, ip)| json!({"addresses": [ip], "conditions": {"ready": true, "serving": true, "terminating": false},
            "nodeName": "node-a", "targetRef": {"kind": "Pod", "name": p, "namespace": "shop"}}))
        .collect();
    json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": format!("{svc}-abc"), "namespace": "shop", "labels": {"kubernetes.io/service-name": svc}},
        "addressType": "IPv4", "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}], "endpoints": endpoints})
}

fn binding(name: &str, svc: &str, arn: &str, vpc: &str) -> Value {
    json!({"apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"serviceRef": {"name": svc, "port": 80}, "targetGroupARN": arn, "targetType": "ip",
            "ipAddressType": "ipv4", "vpcID": vpc, "multiClusterTargetGroup": true}})
}

async fn record(client: &kube::Client, binding: &str) -> Option<String> {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "shop");
    cms.get_opt(&format!("aws-lbc-targets-{binding}"))
        .await
        .unwrap()
        .and_then(|c| c.data)
        .and_then(|d| d.get("targets").cloned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_cluster_bindings_register_under_the_charts_enforced_rbac() {
    let moto = Moto::start();
    let (elb, ec2) = clients(&moto, None).await;
    let vpc = ec2.describe_vpcs(&Ec2Query::default()).await.unwrap()[0]
        .id
        .clone();
    let web = ip_tg(elb.as_ref(), "web", &vpc, "ip").await;
    let api_tg = ip_tg(elb.as_ref(), "api", &vpc, "ip").await;
    // Other clusters' targets in the shared groups: never this cluster's to remove.
    elb.register_targets(&web, &[target("10.9.9.9", 8080)])
        .await
        .unwrap();
    elb.register_targets(
        &api_tg,
        &[target("10.9.9.10", 8080), target("172.31.8.1", 8080)],
    )
    .await
    .unwrap();

    let k8s = Cluster::start().await;
    let client = k8s.client.clone();
    apply_chart_rbac(&client).await;
    for ns in [json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})] {
        create(&client, ("", "v1", "Namespace", "namespaces"), ns).await;
    }
    create(
        &client,
        ("", "v1", "Node", "nodes"),
        json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node-a"}, "spec": {"providerID": "aws:///us-west-2a/i-0aaa"}}),
    )
    .await;
    for svc in ["web", "api"] {
        create(&client, ("", "v1", "Service", "services"), json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": svc, "namespace": "shop"},
            "spec": {"selector": {"app": svc}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}))
        .await;
    }
    // What upstream left for `api-tgb`: its record names 172.31.8.1, a pod that is gone.
    let upstream_record: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "aws-lbc-targets-api-tgb", "namespace": "shop"},
        "data": {"targets": "172.31.8.1:8080"}}))
    .unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), "shop")
        .create(&PostParams::default(), &upstream_record)
        .await
        .unwrap();

    // The binary as the chart's service account, with RBAC enforced from now on.
    let kubeconfig = k8s.dir.path().join("sa-kubeconfig");
    k8s.server.write_kubeconfig_as(&kubeconfig, SA).unwrap();
    k8s.server.enforce_rbac(true);
    let ctl = Controller::start(&[
        format!("--webhook-cert-dir={}", k8s.dir.path().display()),
        format!("--kubeconfig={}", kubeconfig.display()),
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={vpc}"),
        format!("--aws-api-endpoints={}", endpoints_flag(&moto)),
    ]);
    ctl.wait_for_log("AWS clients ready", WAIT);

    // A fresh multi-cluster binding registers its pods and records them.
    pod(&client, "web-0", "web", "172.31.7.7").await;
    pod(&client, "web-1", "web", "172.31.7.8").await;
    create(
        &client,
        SLICE,
        slice("web", &[("web-0", "172.31.7.7"), ("web-1", "172.31.7.8")]),
    )
    .await;
    let tgbs = (
        "elbv2.k8s.aws",
        "v1beta1",
        "TargetGroupBinding",
        "targetgroupbindings",
    );
    create(&client, tgbs, binding("web-tgb", "web", &web, &vpc)).await;
    eventually(
        "web's pods registered beside the other cluster's",
        WAIT,
        || async {
            targets(elb.as_ref(), &web).await
                == ["10.9.9.9:8080", "172.31.7.7:8080", "172.31.7.8:8080"]
        },
    )
    .await;
    assert_eq!(
        record(&client, "web-tgb").await.as_deref(),
        Some("172.31.7.7:8080,172.31.7.8:8080")
    );

    // A rolling update: web-0 replaced by web-2.
    pod(&client, "web-2", "web", "172.31.7.9").await;
    let slices: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "shop",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("discovery.k8s.io", "v1", "EndpointSlice"),
            "endpointslices",
        ),
    );
    let next = slice("web", &[("web-1", "172.31.7.8"), ("web-2", "172.31.7.9")]);
    slices
        .patch(
            "web-abc",
            &PatchParams::default(),
            &Patch::Merge(json!({"endpoints": next["endpoints"]})),
        )
        .await
        .unwrap();
    Api::<Pod>::namespaced(client.clone(), "shop")
        .delete("web-0", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the rolled pods replace the old ones", WAIT, || async {
        targets(elb.as_ref(), &web).await == ["10.9.9.9:8080", "172.31.7.8:8080", "172.31.7.9:8080"]
    })
    .await;
    assert_eq!(
        record(&client, "web-tgb").await.as_deref(),
        Some("172.31.7.8:8080,172.31.7.9:8080")
    );

    // Upstream's record taken over: its gone target deregistered, the other cluster's kept.
    pod(&client, "api-0", "api", "172.31.8.2").await;
    create(&client, SLICE, slice("api", &[("api-0", "172.31.8.2")])).await;
    create(&client, tgbs, binding("api-tgb", "api", &api_tg, &vpc)).await;
    eventually("upstream's record taken over", WAIT, || async {
        targets(elb.as_ref(), &api_tg).await == ["10.9.9.10:8080", "172.31.8.2:8080"]
    })
    .await;
    assert_eq!(
        record(&client, "api-tgb").await.as_deref(),
        Some("172.31.8.2:8080")
    );

    // Deleting a binding deregisters only its own targets and drops its record.
    let bindings: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "shop",
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(tgbs.0, tgbs.1, tgbs.2), tgbs.3),
    );
    bindings
        .delete("api-tgb", &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "api-tgb's targets gone, the other cluster's kept",
        WAIT,
        || async {
            targets(elb.as_ref(), &api_tg).await == ["10.9.9.10:8080"]
                && bindings.get_opt("api-tgb").await.unwrap().is_none()
        },
    )
    .await;
    assert_eq!(record(&client, "api-tgb").await, None);

    // Nothing the binary asked for was refused, and it wrote its records as the chart allows.
    let records: Vec<_> = k8s
        .server
        .requests()
        .into_iter()
        .filter(|r| r.user.as_deref() == Some(SA))
        .collect();
    let grants = grants_for(
        &docs(&render(&["--set", "clusterName=e2e"])),
        "kube-system",
        "aws-load-balancer-controller",
    );
    let refused: Vec<String> = records
        .iter()
        .filter(|r| !grants.allows(r))
        .map(|r| r.describe())
        .collect();
    assert!(
        refused.is_empty(),
        "refused by the chart's RBAC: {refused:#?}"
    );
    let did: Vec<String> = records.iter().map(|r| r.describe()).collect();
    for want in [
        "create configmaps shop/*",
        "update configmaps shop/aws-lbc-targets-web-tgb",
        "update configmaps shop/aws-lbc-targets-api-tgb",
        "get configmaps shop/aws-lbc-targets-web-tgb",
        "delete configmaps shop/aws-lbc-targets-api-tgb",
    ] {
        assert!(did.iter().any(|d| d == want), "no `{want}` among {did:#?}");
    }
    drop(ctl);
    k8s.server.stop().await;
}
