//! The request log names every request with RBAC's verb and attributes.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use k8s_openapi::api::networking::v1::IngressClass;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams};
use kube_test_apiserver::{Options, RequestRecord, TestApiServer};
use serde_json::json;

fn rec(
    verb: &str,
    group: &str,
    resource: &str,
    sub: &str,
    ns: Option<&str>,
    name: Option<&str>,
) -> RequestRecord {
    RequestRecord {
        verb: verb.into(),
        group: group.into(),
        version: "v1".into(),
        resource: resource.into(),
        subresource: sub.into(),
        namespace: ns.map(String::from),
        name: name.map(String::from),
        user: None,
    }
}

#[tokio::test]
async fn every_request_is_logged_with_rbac_attributes() {
    let s = TestApiServer::start(Options::default()).await.unwrap();
    assert!(s.requests().is_empty(), "seeding is not logged");
    let client = s.client();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "x"}]}}))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    pods.get("p").await.unwrap();
    pods.list(&ListParams::default()).await.unwrap();
    let mut w = pods
        .watch(&WatchParams::default().timeout(1), "0")
        .await
        .unwrap()
        .boxed();
    let _ = w.try_next().await;
    drop(w);
    let merge = Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}}));
    pods.patch("p", &PatchParams::default(), &merge)
        .await
        .unwrap();
    pods.patch_status(
        "p",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Running"}})),
    )
    .await
    .unwrap();
    let current = pods.get("p").await.unwrap();
    pods.replace("p", &PostParams::default(), &current)
        .await
        .unwrap();
    pods.delete("p", &DeleteParams::default()).await.unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), "default")
        .delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .unwrap();
    Api::<Pod>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    Api::<Namespace>::all(client.clone())
        .get("kube-system")
        .await
        .unwrap();
    Api::<IngressClass>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    // Not found still went through authorization on a real server: logged too.
    assert!(pods.get("missing").await.is_err());

    let d = Some("default");
    let want = vec![
        rec("create", "", "pods", "", d, None),
        rec("get", "", "pods", "", d, Some("p")),
        rec("list", "", "pods", "", d, None),
        rec("watch", "", "pods", "", d, None),
        rec("patch", "", "pods", "", d, Some("p")),
        rec("patch", "", "pods", "status", d, Some("p")),
        rec("get", "", "pods", "", d, Some("p")),
        rec("update", "", "pods", "", d, Some("p")),
        rec("delete", "", "pods", "", d, Some("p")),
        rec("deletecollection", "", "configmaps", "", d, None),
        rec("list", "", "pods", "", None, None),
        rec(
            "get",
            "",
            "namespaces",
            "",
            Some("kube-system"),
            Some("kube-system"),
        ),
        rec(
            "list",
            "networking.k8s.io",
            "ingressclasses",
            "",
            None,
            None,
        ),
        rec("get", "", "pods", "", d, Some("missing")),
    ];
    assert_eq!(s.requests(), want);
    assert_eq!(
        want[5].describe(),
        "patch pods/status default/p",
        "describe() is readable"
    );
    assert_eq!(
        want[12].describe(),
        "list ingressclasses.networking.k8s.io */*"
    );
    // A bearer token names the user (the kubeconfig written for processes carries `test`).
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    s.write_kubeconfig(&kc).unwrap();
    let kubeconfig = kube::config::Kubeconfig::read_from(&kc).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let as_test: Api<Pod> = Api::namespaced(kube::Client::try_from(config).unwrap(), "default");
    as_test.list(&ListParams::default()).await.unwrap();
    let last = s.requests().pop().unwrap();
    assert_eq!(last.user.as_deref(), Some("test"));
    assert_eq!(last.verb, "list");
    s.clear_requests();
    assert!(s.requests().is_empty());
    s.stop().await;
}
