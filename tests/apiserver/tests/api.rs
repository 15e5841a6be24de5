//! Behaviour of the test API server through a real `kube::Client`: CRUD and errors,
//! generation/status rules, finalizers, watches (resume, bookmarks, 410), selectors and
//! pagination, CRDs and custom resources, kube-runtime watcher/reflector/Controller across a
//! forced compaction, and admission webhooks over HTTPS.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::{controller::Action, reflector, watcher, Controller, WatchStreamExt};
use kube::{Client, ResourceExt};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

async fn server() -> TestApiServer {
    TestApiServer::start(Options::default())
        .await
        .expect("server starts")
}

fn code(e: kube::Error) -> (u16, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}))
    .unwrap()
}

#[tokio::test]
async fn crud_generation_status_and_errors() {
    let s = server().await;
    let pods: Api<Pod> = Api::namespaced(s.client(), "default");
    let pp = PostParams::default();
    let p = pods.create(&pp, &pod("p1")).await.unwrap();
    assert!(p.metadata.uid.is_some() && p.metadata.creation_timestamp.is_some());
    assert_eq!(p.metadata.generation, Some(1));
    assert_eq!(
        p.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Pending")
    );
    assert_eq!(code(pods.create(&pp, &pod("p1")).await.unwrap_err()).0, 409);
    let (c, msg) = code(
        Api::<Pod>::namespaced(s.client(), "nope")
            .create(&pp, &pod("x"))
            .await
            .unwrap_err(),
    );
    assert_eq!((c, msg.as_str()), (404, "namespaces \"nope\" not found"));
    assert_eq!(
        code(pods.get("missing").await.unwrap_err()),
        (404, "pods \"missing\" not found".into())
    );

    // Stale resourceVersion on replace → 409; metadata-only patch keeps the generation.
    let mut stale = p.clone();
    let labelled = pods
        .patch(
            "p1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"x": "1"}}})),
        )
        .await
        .unwrap();
    assert_eq!(labelled.metadata.generation, Some(1));
    stale.labels_mut().insert("y".into(), "2".into());
    assert_eq!(
        code(pods.replace("p1", &pp, &stale).await.unwrap_err()).0,
        409
    );
    let spec = pods
        .patch(
            "p1",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}})),
        )
        .await
        .unwrap();
    assert_eq!(spec.metadata.generation, Some(2));
    assert_eq!(
        spec.spec.unwrap().containers[0].image.as_deref(),
        Some("nginx:2")
    );

    // Status only through /status; status in a main-resource write is ignored.
    let cond = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "custom/gate", "status": "False"}]}});
    let st = pods
        .patch_status("p1", &PatchParams::default(), &Patch::Strategic(cond))
        .await
        .unwrap();
    assert_eq!(st.metadata.generation, Some(2));
    let more = json!({"status": {"conditions": [{"type": "custom/gate", "status": "True"}]}});
    let st = pods
        .patch_status("p1", &PatchParams::default(), &Patch::Strategic(more))
        .await
        .unwrap();
    let conds = st.status.unwrap().conditions.unwrap();
    assert_eq!(conds.len(), 2, "conditions are merged by type");
    assert!(conds.iter().all(|c| c.status == "True"));
    let ignored = pods
        .patch(
            "p1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Failed"}})),
        )
        .await
        .unwrap();
    assert_eq!(
        ignored.status.as_ref().unwrap().phase.as_deref(),
        Some("Pending")
    );
    // A no-op write keeps the resourceVersion.
    let again = pods
        .patch(
            "p1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"x": "1"}}})),
        )
        .await
        .unwrap();
    assert_eq!(again.resource_version(), ignored.resource_version());

    // generateName, JSON patch with a failing test op, apply requires a field manager.
    let mut g = pod("");
    g.metadata.name = None;
    g.metadata.generate_name = Some("gen-".into());
    let made = pods.create(&pp, &g).await.unwrap();
    assert!(made.name_any().starts_with("gen-") && made.name_any().len() == 9);
    let bad: json_patch::Patch =
        serde_json::from_value(json!([{"op": "test", "path": "/metadata/name", "value": "zz"}]))
            .unwrap();
    assert_eq!(
        code(
            pods.patch("p1", &PatchParams::default(), &Patch::<()>::Json(bad))
                .await
                .unwrap_err()
        )
        .0,
        422
    );
    let cm: Api<ConfigMap> = Api::default_namespaced(s.client());
    let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "1"}});
    let first = cm
        .patch("cfg", &PatchParams::apply("tests"), &Patch::Apply(&applied))
        .await
        .unwrap();
    assert_eq!(first.data.unwrap()["a"], "1");
    let second = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"b": "2"}});
    let merged = cm
        .patch("cfg", &PatchParams::apply("tests"), &Patch::Apply(&second))
        .await
        .unwrap();
    assert_eq!(merged.data.unwrap().len(), 2);
    let no_manager = cm
        .patch("cfg", &PatchParams::default(), &Patch::Apply(&second))
        .await
        .unwrap_err();
    assert_eq!(code(no_manager).0, 422);
    s.stop().await;
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let s = server().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(s.client());
    let obj: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "f", "finalizers": ["example.com/hold"]}}),
    )
    .unwrap();
    let created = cms.create(&PostParams::default(), &obj).await.unwrap();
    let mut events = cms
        .watch(
            &WatchParams::default().fields("metadata.name=f"),
            &created.resource_version().unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    cms.delete("f", &DeleteParams::default()).await.unwrap();
    let held = cms.get("f").await.unwrap();
    assert!(held.metadata.deletion_timestamp.is_some());
    assert_eq!(held.metadata.deletion_grace_period_seconds, Some(0));
    assert!(matches!(
        events.try_next().await.unwrap(),
        Some(WatchEvent::Modified(_))
    ));
    let add =
        Patch::Merge(json!({"metadata": {"finalizers": ["example.com/hold", "example.com/new"]}}));
    assert_eq!(
        code(
            cms.patch("f", &PatchParams::default(), &add)
                .await
                .unwrap_err()
        )
        .0,
        422
    );
    cms.patch(
        "f",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(code(cms.get("f").await.unwrap_err()).0, 404);
    assert!(matches!(
        events.try_next().await.unwrap(),
        Some(WatchEvent::Deleted(_))
    ));
    s.stop().await;
}

#[tokio::test]
async fn watch_resume_bookmarks_and_gone() {
    let s = TestApiServer::start(Options {
        event_history: Some(5),
        ..Default::default()
    })
    .await
    .unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(s.client());
    let cm =
        |n: &str| serde_json::from_value::<ConfigMap>(json!({"metadata": {"name": n}})).unwrap();
    let first = cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    let rv = first.resource_version().unwrap();
    cms.create(&PostParams::default(), &cm("b")).await.unwrap();
    // Resuming from `rv` replays exactly what happened after it.
    let wp = WatchParams::default().timeout(3);
    let evs: Vec<_> = cms
        .watch(&wp, &rv)
        .await
        .unwrap()
        .take(2)
        .try_collect()
        .await
        .unwrap();
    assert!(matches!(&evs[0], WatchEvent::Added(c) if c.name_any() == "b"));
    assert!(
        matches!(&evs[1], WatchEvent::Bookmark(_)),
        "a bookmark arrives when asked for"
    );
    // The history keeps 5 events: resuming from the first one after 6 more writes is too old.
    for i in 0..6 {
        cms.create(&PostParams::default(), &cm(&format!("n{i}")))
            .await
            .unwrap();
    }
    let mut old = cms
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    match old.try_next().await.unwrap() {
        Some(WatchEvent::Error(st)) => assert_eq!(st.code, 410),
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }
    // An open watch ends with 410 when the server compacts.
    let now = s.resource_version().to_string();
    let mut open = cms
        .watch(&WatchParams::default(), &now)
        .await
        .unwrap()
        .boxed();
    s.force_compaction();
    match tokio::time::timeout(Duration::from_secs(5), open.try_next())
        .await
        .unwrap()
        .unwrap()
    {
        Some(WatchEvent::Error(st)) => assert_eq!(st.code, 410),
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }
    s.stop().await;
}

#[tokio::test]
async fn selectors_and_pagination() {
    let s = server().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(s.client());
    for (n, tier) in [("a", "front"), ("b", "back"), ("c", "front"), ("d", "db")] {
        let o = serde_json::from_value(json!({"metadata": {"name": n, "labels": {"tier": tier}}}))
            .unwrap();
        cms.create(&PostParams::default(), &o).await.unwrap();
    }
    let names = |l: kube::core::ObjectList<ConfigMap>| {
        l.items.iter().map(|c| c.name_any()).collect::<Vec<_>>()
    };
    assert_eq!(
        names(
            cms.list(&ListParams::default().labels("tier=front"))
                .await
                .unwrap()
        ),
        ["a", "c"]
    );
    assert_eq!(
        names(
            cms.list(&ListParams::default().labels("tier in (back,db)"))
                .await
                .unwrap()
        ),
        ["b", "d"]
    );
    assert_eq!(
        names(
            cms.list(&ListParams::default().labels("tier notin (front),tier!=db"))
                .await
                .unwrap()
        ),
        ["b"]
    );
    assert_eq!(
        names(
            cms.list(&ListParams::default().labels("!tier"))
                .await
                .unwrap()
        )
        .len(),
        0
    );
    assert_eq!(
        names(
            cms.list(&ListParams::default().fields("metadata.name=d"))
                .await
                .unwrap()
        ),
        ["d"]
    );
    let page = cms.list(&ListParams::default().limit(3)).await.unwrap();
    assert_eq!(names(page.clone()), ["a", "b", "c"]);
    let token = page.metadata.continue_.clone().expect("a continue token");
    let rest = cms
        .list(&ListParams::default().limit(3).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(rest.clone()), ["d"]);
    assert!(rest.metadata.continue_.is_none());
    // The token predates a write and a compaction: it is expired.
    cms.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "e"}})).unwrap(),
    )
    .await
    .unwrap();
    s.force_compaction();
    let expired = cms
        .list(&ListParams::default().limit(3).continue_token(&token))
        .await
        .unwrap_err();
    assert_eq!(code(expired).0, 410);
    let all: Api<ConfigMap> = Api::all(s.client());
    assert_eq!(
        all.list(&ListParams::default()).await.unwrap().items.len(),
        5
    );
    let bad = cms
        .list(&ListParams::default().labels("tier in front"))
        .await
        .unwrap_err();
    assert_eq!(code(bad).0, 400);
    s.stop().await;
}

fn crd(plural: &str, kind: &str, scope: &str) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "metadata": {"name": format!("{plural}.elbv2.k8s.aws")},
        "spec": {"group": "elbv2.k8s.aws", "scope": scope,
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind, "listKind": format!("{kind}List")},
            "versions": [{"name": "v1beta1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    }))
    .unwrap()
}

#[tokio::test]
async fn crds_serve_custom_resources() {
    let s = server().await;
    let client = s.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(
        &PostParams::default(),
        &crd("targetgroupbindings", "TargetGroupBinding", "Namespaced"),
    )
    .await
    .unwrap();
    crds.create(
        &PostParams::default(),
        &crd("ingressclassparams", "IngressClassParams", "Cluster"),
    )
    .await
    .unwrap();
    let established = crds.get("targetgroupbindings.elbv2.k8s.aws").await.unwrap();
    let conds = established.status.unwrap().conditions.unwrap();
    assert!(conds
        .iter()
        .any(|c| c.type_ == "Established" && c.status == "True"));
    let discovery = kube::Discovery::new(client.clone()).run().await.unwrap();
    let (ar, caps) = discovery
        .resolve_gvk(&GroupVersionKind::gvk(
            "elbv2.k8s.aws",
            "v1beta1",
            "TargetGroupBinding",
        ))
        .expect("discovered");
    assert_eq!(caps.scope, kube::discovery::Scope::Namespaced);
    assert!(discovery
        .resolve_gvk(&GroupVersionKind::gvk("networking.k8s.io", "v1", "Ingress"))
        .is_some());

    let tgbs: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let obj: DynamicObject = serde_json::from_value(json!({"apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
        "metadata": {"name": "tgb"}, "spec": {"targetGroupARN": "arn:1"}, "status": {"observedGeneration": 9}})).unwrap();
    let made = tgbs.create(&PostParams::default(), &obj).await.unwrap();
    assert!(
        made.data.get("status").is_none(),
        "status is dropped on create"
    );
    let st = tgbs
        .patch_status(
            "tgb",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"observedGeneration": 1}})),
        )
        .await
        .unwrap();
    assert_eq!(st.data["status"]["observedGeneration"], 1);
    assert_eq!(st.metadata.generation, Some(1));
    let strategic = tgbs
        .patch(
            "tgb",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {}})),
        )
        .await
        .unwrap_err();
    assert_eq!(code(strategic).0, 415);
    let icp_ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("elbv2.k8s.aws", "v1beta1", "IngressClassParams"),
        "ingressclassparams",
    );
    let icps: Api<DynamicObject> = Api::all_with(client.clone(), &icp_ar);
    let applied = json!({"apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "IngressClassParams", "metadata": {"name": "p"}, "spec": {"scheme": "internal"}});
    let p = icps
        .patch("p", &PatchParams::apply("tests"), &Patch::Apply(&applied))
        .await
        .unwrap();
    assert_eq!(p.data["spec"]["scheme"], "internal");
    assert!(p.metadata.namespace.is_none());
    // Deleting the CRD removes its objects and stops serving it.
    crds.delete(
        "targetgroupbindings.elbv2.k8s.aws",
        &DeleteParams::default(),
    )
    .await
    .unwrap();
    assert_eq!(code(tgbs.get("tgb").await.unwrap_err()).0, 404);
    s.stop().await;
}

#[tokio::test]
async fn watcher_reflector_and_controller_survive_compaction() {
    let s = server().await;
    let client = s.client();
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let cm =
        |n: String| serde_json::from_value::<ConfigMap>(json!({"metadata": {"name": n}})).unwrap();
    for i in 0..5 {
        cms.create(&PostParams::default(), &cm(format!("before-{i}")))
            .await
            .unwrap();
    }
    let (reader, writer) = reflector::store::<ConfigMap>();
    let errors = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let errs = errors.clone();
    let stream = reflector(writer, watcher(cms.clone(), watcher::Config::default()))
        .default_backoff()
        .applied_objects()
        .for_each(move |r| {
            if r.is_err() {
                errs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            futures::future::ready(())
        });
    let reflector_task = tokio::spawn(stream);

    async fn reconcile(
        obj: Arc<ConfigMap>,
        api: Arc<Api<ConfigMap>>,
    ) -> Result<Action, kube::Error> {
        if obj.annotations().get("seen").is_none() {
            let p = Patch::Merge(json!({"metadata": {"annotations": {"seen": "yes"}}}));
            api.patch(&obj.name_any(), &PatchParams::default(), &p)
                .await?;
        }
        Ok(Action::await_change())
    }
    let ctl = Controller::new(cms.clone(), watcher::Config::default())
        .run(
            reconcile,
            |_, _: &kube::Error, _| Action::requeue(Duration::from_millis(200)),
            Arc::new(cms.clone()),
        )
        .for_each(|_| futures::future::ready(()));
    let ctl_task = tokio::spawn(ctl);

    wait_for(|| reader.state().len() == 5).await;
    s.force_compaction();
    for i in 0..5 {
        cms.create(&PostParams::default(), &cm(format!("after-{i}")))
            .await
            .unwrap();
    }
    cms.delete("before-0", &DeleteParams::default())
        .await
        .unwrap();
    wait_for(|| {
        reader.state().len() == 9 && reader.state().iter().all(|c| c.name_any() != "before-0")
    })
    .await;
    let all_seen = || async {
        let l = cms.list(&ListParams::default()).await.unwrap();
        l.items.len() == 9
            && l.items
                .iter()
                .all(|c| c.annotations().get("seen").is_some_and(|v| v == "yes"))
    };
    let mut ok = false;
    for _ in 0..100 {
        if all_seen().await {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        ok,
        "the controller reconciled every object, including those made after the compaction"
    );
    assert!(
        errors.load(std::sync::atomic::Ordering::SeqCst) >= 1,
        "the watcher saw the 410 and relisted"
    );
    reflector_task.abort();
    ctl_task.abort();
    s.stop().await;
}

async fn wait_for(mut f: impl FnMut() -> bool) {
    for _ in 0..100 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("condition not reached in 10 s");
}

mod webhook {
    //! A tiny HTTPS admission webhook with an rcgen CA, for the admission tests.
    use super::*;
    use axum::{routing::post, Json, Router};
    use base64::Engine;
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use hyper_util::service::TowerToHyperService;

    pub struct Hook {
        pub ca_pem: String,
        pub addr: std::net::SocketAddr,
        task: tokio::task::JoinHandle<()>,
    }

    impl Drop for Hook {
        fn drop(&mut self) {
            self.task.abort();
        }
    }

    async fn mutate(Json(review): Json<Value>) -> Json<Value> {
        let uid = review["request"]["uid"].clone();
        let patch = json!([{"op": "add", "path": "/spec/readinessGates", "value": [{"conditionType": "target-health.elbv2.k8s.aws/tg"}]}]);
        let patch = base64::engine::general_purpose::STANDARD.encode(patch.to_string());
        Json(
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": patch}}),
        )
    }

    async fn deny(Json(review): Json<Value>) -> Json<Value> {
        let uid = review["request"]["uid"].clone();
        let op = review["request"]["operation"]
            .as_str()
            .unwrap_or("")
            .to_string();
        Json(
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": uid, "allowed": false, "status": {"code": 403, "message": format!("no {op} today")}}}),
        )
    }

    pub async fn start(dns_name: &str) -> Hook {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec![dns_name.to_string()])
            .unwrap()
            .signed_by(&key, &ca)
            .unwrap();
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
            )
            .unwrap();
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .route("/mutate", post(mutate))
            .route("/deny", post(deny));
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let (acceptor, app) = (acceptor.clone(), app.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let svc = TowerToHyperService::new(app);
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tls), svc)
                        .await;
                });
            }
        });
        Hook {
            ca_pem: ca.pem(),
            addr,
            task,
        }
    }
}

#[tokio::test]
async fn admission_webhooks_mutate_deny_and_fail() {
    let hook = webhook::start("webhook-svc.kube-system.svc").await;
    let s = server().await;
    s.set_service_endpoint("kube-system", "webhook-svc", hook.addr);
    let client: Client = s.client();
    let ca = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &hook.ca_pem);
    let mwc = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "pod-gates"},
        "webhooks": [{"name": "mpod.elbv2.k8s.aws", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "failurePolicy": "Fail",
            "clientConfig": {"caBundle": ca, "service": {"namespace": "kube-system", "name": "webhook-svc", "path": "/mutate"}},
            "namespaceSelector": {"matchLabels": {"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "scope": "Namespaced"}]}]});
    let gvk = GroupVersionKind::gvk(
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
    );
    let mar = ApiResource::from_gvk(&gvk);
    let mwcs: Api<DynamicObject> = Api::all_with(client.clone(), &mar);
    mwcs.create(
        &PostParams::default(),
        &serde_json::from_value(mwc).unwrap(),
    )
    .await
    .unwrap();
    let nss: Api<Namespace> = Api::all(client.clone());
    for (name, labels) in [
        (
            "injected",
            json!({"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}),
        ),
        ("plain", json!({})),
    ] {
        let ns =
            serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}})).unwrap();
        nss.create(&PostParams::default(), &ns).await.unwrap();
    }
    let injected: Api<Pod> = Api::namespaced(client.clone(), "injected");
    let p = injected
        .create(&PostParams::default(), &pod("p"))
        .await
        .unwrap();
    let gates = p
        .spec
        .unwrap()
        .readiness_gates
        .expect("the webhook added readiness gates");
    assert_eq!(gates[0].condition_type, "target-health.elbv2.k8s.aws/tg");
    let plain: Api<Pod> = Api::namespaced(client.clone(), "plain");
    let q = plain
        .create(&PostParams::default(), &pod("p"))
        .await
        .unwrap();
    assert!(
        q.spec.unwrap().readiness_gates.is_none(),
        "namespaceSelector does not match"
    );

    // A validating webhook denies UPDATE of configmaps; a second one points at no endpoint.
    let vwc = |name: &str, svc: &str, policy: &str| {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [{"name": format!("{name}.example.com"), "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": policy,
            "clientConfig": {"caBundle": ca, "service": {"namespace": "kube-system", "name": svc, "path": "/deny"}},
            "objectSelector": {"matchLabels": {"guarded": "yes"}},
            "rules": [{"operations": ["UPDATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["configmaps"]}]}]})
    };
    let var = ApiResource::from_gvk(&GroupVersionKind::gvk(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
    ));
    let vwcs: Api<DynamicObject> = Api::all_with(client.clone(), &var);
    vwcs.create(
        &PostParams::default(),
        &serde_json::from_value(vwc("deny", "webhook-svc", "Fail")).unwrap(),
    )
    .await
    .unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let guarded =
        serde_json::from_value(json!({"metadata": {"name": "g", "labels": {"guarded": "yes"}}}))
            .unwrap();
    cms.create(&PostParams::default(), &guarded).await.unwrap();
    let (c, msg) = code(
        cms.patch(
            "g",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"a": "b"}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        (c, msg.as_str()),
        (
            403,
            "admission webhook \"deny.example.com\" denied the request: no UPDATE today"
        )
    );
    vwcs.delete("deny", &DeleteParams::default()).await.unwrap();
    vwcs.create(
        &PostParams::default(),
        &serde_json::from_value(vwc("gone", "missing-svc", "Fail")).unwrap(),
    )
    .await
    .unwrap();
    let (c, msg) = code(
        cms.patch(
            "g",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"a": "b"}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(c, 500);
    assert!(
        msg.contains("failed calling webhook \"gone.example.com\""),
        "{msg}"
    );
    vwcs.delete("gone", &DeleteParams::default()).await.unwrap();
    vwcs.create(
        &PostParams::default(),
        &serde_json::from_value(vwc("lenient", "missing-svc", "Ignore")).unwrap(),
    )
    .await
    .unwrap();
    cms.patch(
        "g",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"a": "b"}})),
    )
    .await
    .expect("failurePolicy Ignore lets it through");
    s.stop().await;
}

#[tokio::test]
async fn services_namespaces_collections_and_selector_watches() {
    use k8s_openapi::api::core::v1::Service;
    let s = server().await;
    let client = s.client();
    let svcs: Api<Service> = Api::default_namespaced(client.clone());
    let svc: Service = serde_json::from_value(json!({"metadata": {"name": "lb"},
        "spec": {"type": "NodePort", "ports": [{"port": 80}]}}))
    .unwrap();
    let made = svcs.create(&PostParams::default(), &svc).await.unwrap();
    let spec = made.spec.unwrap();
    assert!(spec
        .cluster_ip
        .as_deref()
        .is_some_and(|ip| ip.starts_with("10.96.")));
    let port = &spec.ports.as_ref().unwrap()[0];
    let node_port = port.node_port.expect("a node port is allocated");
    assert!((30000..=32767).contains(&node_port));
    let relabelled = svcs
        .patch(
            "lb",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .unwrap();
    assert_eq!(
        relabelled.spec.unwrap().ports.unwrap()[0].node_port,
        Some(node_port),
        "kept across updates"
    );

    // A label-selector watch reports objects entering and leaving the selection.
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let rv = s.resource_version().to_string();
    let mut w = cms
        .watch(&WatchParams::default().labels("sel=yes"), &rv)
        .await
        .unwrap()
        .boxed();
    cms.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "x"}})).unwrap(),
    )
    .await
    .unwrap();
    cms.patch(
        "x",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"sel": "yes"}}})),
    )
    .await
    .unwrap();
    assert!(
        matches!(w.try_next().await.unwrap(), Some(WatchEvent::Added(c)) if c.name_any() == "x")
    );
    cms.patch(
        "x",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"sel": "no"}}})),
    )
    .await
    .unwrap();
    assert!(
        matches!(w.try_next().await.unwrap(), Some(WatchEvent::Deleted(c)) if c.name_any() == "x")
    );

    // dryRun stores nothing; deletecollection honours selectors.
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    cms.create(
        &dry,
        &serde_json::from_value(json!({"metadata": {"name": "dry"}})).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(code(cms.get("dry").await.unwrap_err()).0, 404);
    cms.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "y", "labels": {"sel": "no"}}}))
            .unwrap(),
    )
    .await
    .unwrap();
    cms.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "z"}})).unwrap(),
    )
    .await
    .unwrap();
    cms.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("sel=no"),
    )
    .await
    .unwrap();
    let left: Vec<String> = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|c| c.name_any())
        .collect();
    assert_eq!(left, ["z"]);

    // Streaming lists: initial events end with the initial-events-end bookmark.
    let (reader, writer) = reflector::store::<ConfigMap>();
    let stream = reflector(
        writer,
        watcher(cms.clone(), watcher::Config::default().streaming_lists()),
    );
    let task = tokio::spawn(stream.for_each(|_| futures::future::ready(())));
    wait_for(|| reader.state().len() == 1).await;
    task.abort();

    // Deleting a namespace deletes what is in it.
    let nss: Api<Namespace> = Api::all(client.clone());
    nss.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "tmp"}})).unwrap(),
    )
    .await
    .unwrap();
    let tmp: Api<ConfigMap> = Api::namespaced(client.clone(), "tmp");
    tmp.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "c"}})).unwrap(),
    )
    .await
    .unwrap();
    nss.delete("tmp", &DeleteParams::default()).await.unwrap();
    assert_eq!(code(tmp.get("c").await.unwrap_err()).0, 404);
    assert_eq!(code(nss.get("tmp").await.unwrap_err()).0, 404);
    s.stop().await;
}

/// With enforcement on, a service account's requests are authorized by the stored RBAC objects
/// (namespaced Role through a RoleBinding, ClusterRole through a ClusterRoleBinding, and
/// `resourceNames`), refused with the real server's 403 text otherwise; other users are admins.
#[tokio::test]
async fn rbac_is_enforced_for_service_accounts() {
    let s = server().await;
    let admin = s.client();
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kc");
    s.write_kubeconfig_as(&kc, "system:serviceaccount:kube-system:ctl")
        .unwrap();
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&kc).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    let sa = Client::try_from(config).unwrap();
    let rbac = |group_res: (&'static str, &'static str), body: Value| {
        let admin = admin.clone();
        async move {
            let ar = ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", group_res.0),
                group_res.1,
            );
            let ns = body["metadata"]["namespace"].as_str().map(String::from);
            let api: Api<DynamicObject> = match ns {
                Some(ns) => Api::namespaced_with(admin, &ns, &ar),
                None => Api::all_with(admin, &ar),
            };
            api.create(
                &PostParams::default(),
                &serde_json::from_value(body).unwrap(),
            )
            .await
            .unwrap();
        }
    };
    s.enforce_rbac(true);
    let cms: Api<ConfigMap> = Api::namespaced(sa.clone(), "default");
    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "rec"}, "data": {"k": "v"}})).unwrap();
    let (c, msg) = code(cms.create(&PostParams::default(), &cm).await.unwrap_err());
    assert_eq!(c, 403);
    assert_eq!(
        msg,
        "configmaps is forbidden: User \"system:serviceaccount:kube-system:ctl\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );

    // A Role in `default` grants create/get/update; patch stays refused; other namespaces too.
    rbac(("Role", "roles"), json!({"metadata": {"name": "cm", "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "get", "update"]}]})).await;
    rbac(
        ("RoleBinding", "rolebindings"),
        json!({"metadata": {"name": "cm", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm"},
        "subjects": [{"kind": "ServiceAccount", "name": "ctl", "namespace": "kube-system"}]}),
    )
    .await;
    let created = cms.create(&PostParams::default(), &cm).await.unwrap();
    cms.replace("rec", &PostParams::default(), &created)
        .await
        .unwrap();
    let (c, msg) = code(
        cms.patch(
            "rec",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"k": "w"}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        (c, msg.contains("cannot patch resource \"configmaps\"")),
        (403, true),
        "{msg}"
    );
    let elsewhere: Api<ConfigMap> = Api::namespaced(sa.clone(), "kube-public");
    assert_eq!(code(elsewhere.get("rec").await.unwrap_err()).0, 403);

    // A ClusterRole bound cluster-wide, with resourceNames: only the named object.
    rbac(("ClusterRole", "clusterroles"), json!({"metadata": {"name": "ns-reader"},
        "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"], "resourceNames": ["default"]}]})).await;
    rbac(("ClusterRoleBinding", "clusterrolebindings"), json!({"metadata": {"name": "ns-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ns-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "ctl", "namespace": "kube-system"}]})).await;
    let namespaces: Api<Namespace> = Api::all(sa.clone());
    namespaces.get("default").await.unwrap();
    assert_eq!(
        code(namespaces.get("kube-system").await.unwrap_err()).0,
        403
    );
    assert_eq!(
        code(namespaces.list(&ListParams::default()).await.unwrap_err()).0,
        403
    );

    // The admin client is never restricted; off again, the account is unrestricted too.
    Api::<Namespace>::all(admin.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    s.enforce_rbac(false);
    namespaces.list(&ListParams::default()).await.unwrap();
    s.stop().await;
}
