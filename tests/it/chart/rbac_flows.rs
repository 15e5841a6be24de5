//! RBAC compared with the calls the controller really makes: the real binary runs against the API
//! test server, which logs every request with RBAC's attributes, and each one must be allowed by
//! the Roles and ClusterRole the chart renders for the controller's ServiceAccount. Granted
//! permissions no flow uses are listed with a reason, so a grant cannot outlive its use silently.
//!
//! Flows covered today: start with a controller-managed certificate (Secret created, caBundle
//! patched in both configurations), certificate rotation, restart reusing the Secret, the
//! watch-fed webhook indexes (TargetGroupBindings, Services, IngressClasses) and pod admission
//! through the chart's webhook configuration. The Ingress and TargetGroupBinding reconcilers add
//! their flows here when they are wired into the process.

use super::*;
use crate::support::client::get_plain;
use crate::support::process::Controller;
use crate::support::rbac::grants_for;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::{Namespace, Pod, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube_test_apiserver::{Options, RequestRecord, TestApiServer};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// Granted permissions (as printed by `Grants::unexercised`) that the flows above do not use,
/// each with the reason it is granted anyway. The test fails if this list and reality differ.
const ING: &str = "Ingress reconciler: runs only once AWS resolves (this flow has no AWS); its requests are checked against this RBAC in e2e_ingress (moto)";
const TGB: &str = "TargetGroupBinding reconciler: runs only once AWS resolves; its requests are checked against this RBAC in e2e_tgb (moto)";
const LE: &str = "leader election starts with the reconcilers (after AWS); checked in e2e_ingress and e2e_tgb; the Role is upstream's, limited to the one Lease";
const EV: &str =
    "Events of both reconcilers (controller::Events); checked in e2e_ingress and e2e_tgb";
const SVC: &str = "Service reconciler: runs only once AWS resolves; its requests are checked against this RBAC in e2e_service (moto)";
const NS: &str = "Ingress class loader: IngressClassParams namespaceSelector needs the Ingress's Namespace labels";
const MC: &str = "multi-cluster TargetGroupBindings' target ConfigMaps (upstream's cluster-wide grant, kept so bindings survive a chart swap); written by the TargetGroupBinding reconciler, which runs only once AWS resolves; every verb used under enforced RBAC in e2e_rbac_enforced (moto)";
const GW: &str = "Gateway API (upstream's grants): the Gateway controllers run only once AWS resolves and their CRDs are served; checked in e2e_gateway (moto)";
const AGA: &str = "GlobalAccelerator controller (gate GlobalAcceleratorController, off by default; upstream's grants): runs only once AWS resolves; its requests are checked against this RBAC in e2e_aga";
const TCA: &str = "ALB target control agent injector (gate ALBTargetControlAgent, off by default): its configurations' watch; checked against this RBAC in e2e_target_control_agent";
const NOT_EXERCISED: &[(&str, &str)] = &[
    ("cluster get aga.k8s.aws/globalaccelerators", AGA),
    ("cluster list aga.k8s.aws/globalaccelerators", AGA),
    ("cluster patch aga.k8s.aws/globalaccelerators", AGA),
    ("cluster watch aga.k8s.aws/globalaccelerators", AGA),
    (
        "cluster patch aga.k8s.aws/globalaccelerators/finalizers",
        AGA,
    ),
    (
        "cluster update aga.k8s.aws/globalaccelerators/finalizers",
        AGA,
    ),
    ("cluster patch aga.k8s.aws/globalaccelerators/status", AGA),
    ("cluster update aga.k8s.aws/globalaccelerators/status", AGA),
    ("cluster create core/configmaps", MC),
    ("cluster delete core/configmaps", MC),
    ("cluster get core/configmaps", MC),
    ("cluster update core/configmaps", MC),
    ("cluster create core/events", EV),
    ("cluster create elbv2.k8s.aws/targetgroupbindings", ING),
    ("cluster create events.k8s.io/events", EV),
    ("cluster delete elbv2.k8s.aws/targetgroupbindings", ING),
    ("cluster get core/endpoints", TGB),
    ("cluster get core/namespaces", NS),
    ("cluster get core/nodes", TGB),
    ("cluster get core/pods", TGB),
    ("cluster get core/services", ING),
    ("cluster get discovery.k8s.io/endpointslices", TGB),
    ("cluster get elbv2.k8s.aws/ingressclassparams", ING),
    ("cluster get elbv2.k8s.aws/targetgroupbindings", TGB),
    ("cluster get networking.k8s.io/ingressclasses", ING),
    ("cluster get networking.k8s.io/ingresses", ING),
    ("cluster list core/endpoints", TGB),
    ("cluster patch core/events", EV),
    ("cluster patch core/pods/status", TGB),
    ("cluster patch core/services", SVC),
    ("cluster patch core/services/status", SVC),
    ("cluster patch elbv2.k8s.aws/targetgroupbindings", TGB),
    (
        "cluster patch elbv2.k8s.aws/targetgroupbindings/status",
        TGB,
    ),
    ("cluster patch events.k8s.io/events", EV),
    ("cluster patch networking.k8s.io/ingresses", ING),
    ("cluster patch networking.k8s.io/ingresses/status", ING),
    ("cluster update elbv2.k8s.aws/targetgroupbindings", ING),
    ("cluster watch core/endpoints", TGB),
    ("cluster list elbv2.k8s.aws/albtargetcontrolconfigs", TCA),
    ("cluster watch elbv2.k8s.aws/albtargetcontrolconfigs", TCA),
    ("kube-system create coordination.k8s.io/leases", LE),
    (
        "kube-system get coordination.k8s.io/leases[aws-load-balancer-controller-leader]",
        LE,
    ),
    (
        "kube-system patch coordination.k8s.io/leases[aws-load-balancer-controller-leader]",
        LE,
    ),
    (
        "kube-system update coordination.k8s.io/leases[aws-load-balancer-controller-leader]",
        LE,
    ),
    ("cluster get gateway.k8s.aws/listenerruleconfigurations", GW),
    (
        "cluster get gateway.k8s.aws/listenerruleconfigurations/status",
        GW,
    ),
    ("cluster get gateway.k8s.aws/loadbalancerconfigurations", GW),
    (
        "cluster get gateway.k8s.aws/loadbalancerconfigurations/status",
        GW,
    ),
    ("cluster get gateway.k8s.aws/targetgroupconfigurations", GW),
    (
        "cluster get gateway.k8s.aws/targetgroupconfigurations/status",
        GW,
    ),
    ("cluster get gateway.networking.k8s.io/gatewayclasses", GW),
    (
        "cluster get gateway.networking.k8s.io/gatewayclasses/status",
        GW,
    ),
    ("cluster get gateway.networking.k8s.io/gateways", GW),
    ("cluster get gateway.networking.k8s.io/gateways/status", GW),
    ("cluster get gateway.networking.k8s.io/grpcroutes", GW),
    (
        "cluster get gateway.networking.k8s.io/grpcroutes/status",
        GW,
    ),
    ("cluster get gateway.networking.k8s.io/httproutes", GW),
    (
        "cluster get gateway.networking.k8s.io/httproutes/status",
        GW,
    ),
    ("cluster get gateway.networking.k8s.io/listenersets", GW),
    (
        "cluster get gateway.networking.k8s.io/listenersets/status",
        GW,
    ),
    ("cluster get gateway.networking.k8s.io/referencegrants", GW),
    ("cluster get gateway.networking.k8s.io/tcproutes", GW),
    ("cluster get gateway.networking.k8s.io/tcproutes/status", GW),
    ("cluster get gateway.networking.k8s.io/tlsroutes", GW),
    ("cluster get gateway.networking.k8s.io/tlsroutes/status", GW),
    ("cluster get gateway.networking.k8s.io/udproutes", GW),
    ("cluster get gateway.networking.k8s.io/udproutes/status", GW),
    (
        "cluster list gateway.k8s.aws/listenerruleconfigurations",
        GW,
    ),
    (
        "cluster list gateway.k8s.aws/loadbalancerconfigurations",
        GW,
    ),
    ("cluster list gateway.k8s.aws/targetgroupconfigurations", GW),
    ("cluster list gateway.networking.k8s.io/gatewayclasses", GW),
    ("cluster list gateway.networking.k8s.io/gateways", GW),
    ("cluster list gateway.networking.k8s.io/grpcroutes", GW),
    ("cluster list gateway.networking.k8s.io/httproutes", GW),
    ("cluster list gateway.networking.k8s.io/listenersets", GW),
    ("cluster list gateway.networking.k8s.io/referencegrants", GW),
    ("cluster list gateway.networking.k8s.io/tcproutes", GW),
    ("cluster list gateway.networking.k8s.io/tlsroutes", GW),
    ("cluster list gateway.networking.k8s.io/udproutes", GW),
    (
        "cluster patch gateway.k8s.aws/listenerruleconfigurations",
        GW,
    ),
    (
        "cluster patch gateway.k8s.aws/listenerruleconfigurations/finalizers",
        GW,
    ),
    (
        "cluster patch gateway.k8s.aws/listenerruleconfigurations/status",
        GW,
    ),
    (
        "cluster patch gateway.k8s.aws/loadbalancerconfigurations",
        GW,
    ),
    (
        "cluster patch gateway.k8s.aws/loadbalancerconfigurations/finalizers",
        GW,
    ),
    (
        "cluster patch gateway.k8s.aws/loadbalancerconfigurations/status",
        GW,
    ),
    (
        "cluster patch gateway.k8s.aws/targetgroupconfigurations",
        GW,
    ),
    (
        "cluster patch gateway.k8s.aws/targetgroupconfigurations/finalizers",
        GW,
    ),
    (
        "cluster patch gateway.k8s.aws/targetgroupconfigurations/status",
        GW,
    ),
    ("cluster patch gateway.networking.k8s.io/gatewayclasses", GW),
    (
        "cluster patch gateway.networking.k8s.io/gatewayclasses/finalizers",
        GW,
    ),
    (
        "cluster patch gateway.networking.k8s.io/gatewayclasses/status",
        GW,
    ),
    ("cluster patch gateway.networking.k8s.io/gateways", GW),
    (
        "cluster patch gateway.networking.k8s.io/gateways/finalizers",
        GW,
    ),
    (
        "cluster patch gateway.networking.k8s.io/gateways/status",
        GW,
    ),
    (
        "cluster patch gateway.networking.k8s.io/grpcroutes/status",
        GW,
    ),
    (
        "cluster patch gateway.networking.k8s.io/httproutes/status",
        GW,
    ),
    (
        "cluster patch gateway.networking.k8s.io/listenersets/status",
        GW,
    ),
    (
        "cluster patch gateway.networking.k8s.io/referencegrants",
        GW,
    ),
    (
        "cluster patch gateway.networking.k8s.io/tcproutes/status",
        GW,
    ),
    (
        "cluster patch gateway.networking.k8s.io/tlsroutes/status",
        GW,
    ),
    (
        "cluster patch gateway.networking.k8s.io/udproutes/status",
        GW,
    ),
    (
        "cluster update gateway.k8s.aws/listenerruleconfigurations/finalizers",
        GW,
    ),
    (
        "cluster update gateway.k8s.aws/listenerruleconfigurations/status",
        GW,
    ),
    (
        "cluster update gateway.k8s.aws/loadbalancerconfigurations/finalizers",
        GW,
    ),
    (
        "cluster update gateway.k8s.aws/loadbalancerconfigurations/status",
        GW,
    ),
    (
        "cluster update gateway.k8s.aws/targetgroupconfigurations/finalizers",
        GW,
    ),
    (
        "cluster update gateway.k8s.aws/targetgroupconfigurations/status",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/gatewayclasses/finalizers",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/gatewayclasses/status",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/gateways/finalizers",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/gateways/status",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/grpcroutes/finalizers",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/grpcroutes/status",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/httproutes/finalizers",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/httproutes/status",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/listenersets/finalizers",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/listenersets/status",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/tcproutes/finalizers",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/tcproutes/status",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/tlsroutes/finalizers",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/tlsroutes/status",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/udproutes/finalizers",
        GW,
    ),
    (
        "cluster update gateway.networking.k8s.io/udproutes/status",
        GW,
    ),
    (
        "cluster watch gateway.k8s.aws/listenerruleconfigurations",
        GW,
    ),
    (
        "cluster watch gateway.k8s.aws/loadbalancerconfigurations",
        GW,
    ),
    (
        "cluster watch gateway.k8s.aws/targetgroupconfigurations",
        GW,
    ),
    ("cluster watch gateway.networking.k8s.io/gatewayclasses", GW),
    ("cluster watch gateway.networking.k8s.io/gateways", GW),
    ("cluster watch gateway.networking.k8s.io/grpcroutes", GW),
    ("cluster watch gateway.networking.k8s.io/httproutes", GW),
    ("cluster watch gateway.networking.k8s.io/listenersets", GW),
    (
        "cluster watch gateway.networking.k8s.io/referencegrants",
        GW,
    ),
    ("cluster watch gateway.networking.k8s.io/tcproutes", GW),
    ("cluster watch gateway.networking.k8s.io/tlsroutes", GW),
    ("cluster watch gateway.networking.k8s.io/udproutes", GW),
];

fn chart_objects() -> Vec<Value> {
    docs(&render(&["--set", "clusterName=rbac"]))
}

async fn wait_ready(ctl: &Controller) {
    let probes = ctl.addr_of("health probe server listening");
    let deadline = Instant::now() + Duration::from_secs(20);
    while get_plain(probes, "/readyz")
        .await
        .map(|r| r.status)
        .unwrap_or(0)
        != 200
    {
        assert!(Instant::now() < deadline, "controller never became ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn start(server: &TestApiServer, kubeconfig: &std::path::Path, extra: &[&str]) -> Controller {
    let mut args = vec![
        "--cluster-name=rbac".to_string(),
        format!("--kubeconfig={}", kubeconfig.display()),
        // What the chart's Deployment passes through its environment contract.
        "--webhook-cert-secret-name=aws-load-balancer-tls".into(),
        "--webhook-cert-namespace=kube-system".into(),
        "--webhook-ca-propagation-delay=200ms".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let ctl = Controller::start(&args);
    server.set_service_endpoint(
        "kube-system",
        "aws-load-balancer-webhook-service",
        ctl.addr_of("webhook server listening"),
    );
    ctl
}

/// Installs what `helm install` would: CRDs and the two webhook configurations as rendered.
async fn install(client: &kube::Client, objects: &[Value]) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in aws_load_balancer_controller::crd::all_crds() {
        crds.create(&PostParams::default(), &crd).await.unwrap();
    }
    let json = |v: &Value| serde_json::to_value(v).expect("YAML to JSON");
    let m = find(
        objects,
        "MutatingWebhookConfiguration",
        "aws-load-balancer-webhook",
    );
    let m: MutatingWebhookConfiguration = serde_json::from_value(json(m)).unwrap();
    Api::all(client.clone())
        .create(&PostParams::default(), &m)
        .await
        .unwrap();
    let v = find(
        objects,
        "ValidatingWebhookConfiguration",
        "aws-load-balancer-webhook",
    );
    let v: ValidatingWebhookConfiguration = serde_json::from_value(json(v)).unwrap();
    Api::all(client.clone())
        .create(&PostParams::default(), &v)
        .await
        .unwrap();
    let ns = serde_json::json!({"metadata": {"name": "shop", "labels": {
        "elbv2.k8s.aws/pod-readiness-gate-inject": "enabled",
        "elbv2.k8s.aws/quic-server-id-inject": "enabled"}}});
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &serde_json::from_value(ns).unwrap())
        .await
        .unwrap();
}

async fn tls_cert(secrets: &Api<Secret>) -> Option<Vec<u8>> {
    let s = secrets.get_opt("aws-load-balancer-tls").await.ok()??;
    Some(s.data?.get("tls.crt")?.0.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_of_the_controller_is_allowed_by_the_charts_rbac() {
    let objects = chart_objects();
    let sa = find(&objects, "ServiceAccount", "aws-load-balancer-controller");
    assert_eq!(sa["metadata"]["namespace"], "kube-system");
    let grants = grants_for(&objects, "kube-system", "aws-load-balancer-controller");
    assert!(!grants.cluster.is_empty() && !grants.namespaced.is_empty());

    let server = TestApiServer::start(Options::default()).await.unwrap();
    let admin = server.client();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    install(&admin, &objects).await;

    // 1. Start with a managed certificate, rotating at every check.
    let ctl = start(
        &server,
        &kubeconfig,
        &[
            "--webhook-cert-renew-before=9000h",
            "--webhook-cert-check-interval=300ms",
        ],
    );
    wait_ready(&ctl).await;
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), "kube-system");
    let first = tls_cert(&secrets).await.expect("Secret created");

    // 2. Pod admission through the chart's configuration: both pod mutators answer.
    let pod = serde_json::json!({"metadata": {"name": "web", "annotations": {
        "service.beta.kubernetes.io/aws-load-balancer-quic-enabled-containers": "app"}},
        "spec": {"containers": [{"name": "app", "image": "x"}]}});
    let created = Api::<Pod>::namespaced(admin.clone(), "shop")
        .create(
            &PostParams::default(),
            &serde_json::from_value(pod).unwrap(),
        )
        .await
        .expect("pod admitted through the chart's webhooks");
    let env = created.spec.unwrap().containers[0].env.clone().unwrap();
    assert!(env.iter().any(|e| e.name == "AWS_LBC_QUIC_SERVER_ID"));

    // 3. A rotation (Secret update) happens within a few checks.
    let deadline = Instant::now() + Duration::from_secs(10);
    while tls_cert(&secrets).await.as_ref() == Some(&first) {
        assert!(Instant::now() < deadline, "no rotation seen");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(ctl);

    // 4. Restart: the stored certificate is read back and reused.
    let ctl = start(&server, &kubeconfig, &[]);
    wait_ready(&ctl).await;
    drop(ctl);

    // Only the controller's requests: it authenticates as `test` (the kubeconfig's token); the
    // admin client of this test sends none.
    let records: Vec<RequestRecord> = server
        .requests()
        .into_iter()
        .filter(|r| r.user.is_some())
        .collect();
    server.stop().await;
    // The flows did what they claim (else "all allowed" would say little).
    let did: BTreeSet<String> = records.iter().map(RequestRecord::describe).collect();
    for want in [
        "create secrets kube-system/*",
        "update secrets kube-system/aws-load-balancer-tls",
        "get secrets kube-system/aws-load-balancer-tls",
        "patch mutatingwebhookconfigurations.admissionregistration.k8s.io */aws-load-balancer-webhook",
        "patch validatingwebhookconfigurations.admissionregistration.k8s.io */aws-load-balancer-webhook",
        "watch mutatingwebhookconfigurations.admissionregistration.k8s.io */aws-load-balancer-webhook",
        "watch validatingwebhookconfigurations.admissionregistration.k8s.io */aws-load-balancer-webhook",
        "watch targetgroupbindings.elbv2.k8s.aws */*",
        "watch services */*",
        "watch ingressclasses.networking.k8s.io */*",
    ] {
        assert!(did.contains(want), "no `{want}` among {did:#?}");
    }
    let denied: BTreeSet<String> = records
        .iter()
        .filter(|r| !grants.allows(r))
        .map(RequestRecord::describe)
        .collect();
    assert!(
        denied.is_empty(),
        "requests the chart's RBAC would forbid:\n  {}",
        denied.into_iter().collect::<Vec<_>>().join("\n  ")
    );

    let unexercised: BTreeSet<String> = grants.unexercised(&records).into_iter().collect();
    let explained: BTreeSet<String> = NOT_EXERCISED.iter().map(|(p, _)| p.to_string()).collect();
    let unexplained: Vec<&String> = unexercised.difference(&explained).collect();
    let stale: Vec<&String> = explained.difference(&unexercised).collect();
    assert!(
        unexplained.is_empty() && stale.is_empty(),
        "granted but unused, with no reason in NOT_EXERCISED:\n  {}\nlisted in NOT_EXERCISED but used now:\n  {}",
        unexplained.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n  "),
        stale.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n  ")
    );
}
