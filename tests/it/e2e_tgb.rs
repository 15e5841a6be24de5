//! End to end through the real binary, the API test server's admission chain and moto: a
//! TargetGroupBinding naming only its target group is defaulted by our mutator from moto,
//! validated, an invalid one is refused with upstream's message, a pod gets its readiness gate,
//! and the binary's own reconciler registers the pod in moto and turns its gate True.

use crate::e2e_pod_gates::{create, gates, kubectl};
use crate::support::e2e::Cluster;
use crate::support::moto::Moto;
use crate::support::moto_cloud::{clients, endpoints_flag};
use crate::tgb::{eventually, ip_tg, targets, WAIT};
use aws_load_balancer_controller::aws::Ec2Query;
use base64::Engine;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{json, Value};

const SVC: &str = "aws-load-balancer-webhook-service";

fn hook(ca: &str, name: &str, path: &str, failure: &str, resource: (&str, &str)) -> Value {
    let (group, plural) = resource;
    json!({"name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": failure,
        "clientConfig": {"caBundle": ca, "service": {"name": SVC, "namespace": "kube-system", "path": path}},
        "rules": [{"apiGroups": [group], "apiVersions": ["v1", "v1beta1"], "operations": ["CREATE", "UPDATE"], "resources": [plural]}]})
}

fn get_json(kubeconfig: &std::path::Path, args: &[&str]) -> Value {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    let (ok, out) = kubectl(kubeconfig, &all, None);
    assert!(ok, "{out}");
    serde_json::from_str(&out).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binding_defaulted_and_validated_by_our_webhooks_then_reconciled_by_the_binary() {
    let moto = Moto::start();
    let endpoints = endpoints_flag(&moto);
    let (elb, ec2) = clients(&moto, None).await;
    let vpc = ec2.describe_vpcs(&Ec2Query::default()).await.unwrap()[0].clone();
    let arn = ip_tg(elb.as_ref(), "web", &vpc.id, "ip").await;

    let k8s = Cluster::start().await;
    let (server, client, kubeconfig, bundle) = (
        &k8s.server,
        k8s.client.clone(),
        k8s.kubeconfig.clone(),
        &k8s.bundle,
    );
    let ctl = k8s.controller(&[
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", vpc.id),
        format!("--aws-api-endpoints={endpoints}"),
    ]);
    server.set_service_endpoint("kube-system", SVC, ctl.addr_of("webhook server listening"));
    ctl.wait_for_log("AWS clients ready", WAIT);

    let ca = base64::engine::general_purpose::STANDARD.encode(&bundle.ca.cert_pem);
    let tgbs = ("elbv2.k8s.aws", "targetgroupbindings");
    let mut pod_hook = hook(
        &ca,
        "mpod.elbv2.k8s.aws",
        "/mutate-v1-pod",
        "Ignore",
        ("", "pods"),
    );
    pod_hook["namespaceSelector"] = json!({"matchExpressions": [{"key": "elbv2.k8s.aws/pod-readiness-gate-inject", "operator": "In", "values": ["enabled"]}]});
    pod_hook["rules"][0]["operations"] = json!(["CREATE"]);
    let mwc: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    create(&mwc, json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "aws-load-balancer-webhook"},
        "webhooks": [pod_hook, hook(&ca, "mtargetgroupbinding.elbv2.k8s.aws", "/mutate-elbv2-k8s-aws-v1beta1-targetgroupbinding", "Fail", tgbs)]
    })).await;
    let vwc: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    create(&vwc, json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "aws-load-balancer-webhook"},
        "webhooks": [hook(&ca, "vtargetgroupbinding.elbv2.k8s.aws", "/validate-elbv2-k8s-aws-v1beta1-targetgroupbinding", "Fail", tgbs)]
    })).await;

    let manifests = r#"
apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {elbv2.k8s.aws/pod-readiness-gate-inject: enabled}
---
apiVersion: v1
kind: Node
metadata: {name: node-a}
spec: {providerID: "aws:///us-west-2a/i-0aaa"}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: elbv2.k8s.aws/v1beta1
kind: TargetGroupBinding
metadata: {name: web-tgb, namespace: shop}
spec:
  serviceRef: {name: web, port: 80}
  targetGroupName: web
"#;
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(manifests));
    assert!(ok, "{out}");

    // Defaulted by our mutator from moto's DescribeTargetGroups.
    let tgb = get_json(
        &kubeconfig,
        &["targetgroupbinding", "-n", "shop", "web-tgb"],
    );
    assert_eq!(
        tgb.pointer("/spec/targetGroupARN"),
        Some(&json!(arn)),
        "{tgb:#}"
    );
    assert_eq!(
        tgb.pointer("/spec/targetType"),
        Some(&json!("ip")),
        "{tgb:#}"
    );
    assert_eq!(
        tgb.pointer("/spec/ipAddressType"),
        Some(&json!("ipv4")),
        "{tgb:#}"
    );
    assert_eq!(tgb.pointer("/spec/vpcID"), Some(&json!(vpc.id)), "{tgb:#}");

    // Invalid bindings are refused with upstream's messages.
    let second = format!("apiVersion: elbv2.k8s.aws/v1beta1\nkind: TargetGroupBinding\nmetadata: {{name: again, namespace: shop}}\nspec:\n  serviceRef: {{name: web, port: 80}}\n  targetGroupARN: {arn}\n");
    let expected = format!("TargetGroup {arn} is already bound to following TargetGroupBindings [shop/web-tgb]. Please enable MultiCluster mode on all TargetGroupBindings referencing {arn} or choose a different Target Group ARN.");
    eventually("the duplicate binding is refused", WAIT, || async {
        let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(&second));
        if ok {
            // The binding index had not seen web-tgb yet; undo and retry.
            let _ = kubectl(
                &kubeconfig,
                &["delete", "targetgroupbinding", "-n", "shop", "again"],
                None,
            );
            return false;
        }
        assert!(out.contains(&expected), "{out}");
        assert!(out.contains("vtargetgroupbinding.elbv2.k8s.aws"), "{out}");
        true
    })
    .await;
    let selector = "apiVersion: elbv2.k8s.aws/v1beta1\nkind: TargetGroupBinding\nmetadata: {name: sel, namespace: shop}\nspec:\n  serviceRef: {name: web, port: 80}\n  targetGroupName: web\n  multiClusterTargetGroup: true\n  nodeSelector: {matchLabels: {a: b}}\n";
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(selector));
    assert!(!ok, "nodeSelector with ip targets must be refused");
    assert!(
        out.contains("TargetGroupBinding cannot set NodeSelector when TargetType is ip"),
        "{out}"
    );
    let missing = "apiVersion: elbv2.k8s.aws/v1beta1\nkind: TargetGroupBinding\nmetadata: {name: nope, namespace: shop}\nspec:\n  serviceRef: {name: web, port: 80}\n  targetGroupName: no-such-group\n";
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(missing));
    assert!(
        !ok,
        "a binding naming a missing target group must be refused: {out}"
    );

    // A pod of the Service gets the gate; once running with an endpoint, the binary registers it.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web-0, namespace: shop, labels: {app: web}}\nspec:\n  nodeName: node-a\n  containers: [{name: c, image: nginx}]\n";
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-", "-o", "json"], Some(pod));
    assert!(ok, "{out}");
    assert_eq!(
        gates(&serde_json::from_str(&out).unwrap()),
        vec!["target-health.elbv2.k8s.aws/web-tgb"]
    );
    let ip = "172.31.7.7";
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(client.clone());
    let ready = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    nodes
        .patch_status("node-a", &PatchParams::default(), &Patch::Merge(&ready))
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    let status = json!({"status": {"phase": "Running", "podIP": ip, "conditions": [
        {"type": "ContainersReady", "status": "True"}, {"type": "Ready", "status": "False"}]}});
    pods.patch_status("web-0", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let slice = format!("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: web-abc\n  namespace: shop\n  labels: {{kubernetes.io/service-name: web}}\naddressType: IPv4\nports: [{{name: http, port: 8080, protocol: TCP}}]\nendpoints:\n- addresses: [\"{ip}\"]\n  conditions: {{ready: false, serving: false, terminating: false}}\n  nodeName: node-a\n  targetRef: {{kind: Pod, name: web-0, namespace: shop}}\n");
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(&slice));
    assert!(ok, "{out}");
    eventually("the pod is registered in moto", WAIT, || async {
        targets(elb.as_ref(), &arn).await == vec![format!("{ip}:8080")]
    })
    .await;
    eventually("the pod's gate turns True", WAIT, || async {
        let p = pods.get("web-0").await.unwrap();
        p.status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "target-health.elbv2.k8s.aws/web-tgb" && c.status == "True")
    })
    .await;

    // Deleting the binding empties the target group and releases the finalizer.
    let (ok, out) = kubectl(
        &kubeconfig,
        &[
            "delete",
            "targetgroupbinding",
            "-n",
            "shop",
            "web-tgb",
            "--wait=false",
        ],
        None,
    );
    assert!(ok, "{out}");
    eventually("target group emptied", WAIT, || async {
        targets(elb.as_ref(), &arn).await.is_empty()
    })
    .await;
    let tgb_api: Api<aws_load_balancer_controller::crd::TargetGroupBinding> =
        Api::namespaced(client.clone(), "shop");
    eventually("binding gone", WAIT, || async {
        tgb_api.get_opt("web-tgb").await.unwrap().is_none()
    })
    .await;

    k8s.assert_requests_allowed_by_chart(&[
        "patch pods/status shop/web-0",
        "patch targetgroupbindings.elbv2.k8s.aws shop/web-tgb",
    ]);

    drop(ctl);
    k8s.server.stop().await;
}
