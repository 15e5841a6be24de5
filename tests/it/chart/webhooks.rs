//! Webhook configurations: upstream's names, paths, rules, selectors and failure policies, and the
//! three certificate sources (controller-managed by default, values, cert-manager).

use super::*;
use base64::Engine;

const CONFIG: &str = "aws-load-balancer-webhook";

/// (webhook name, path, failurePolicy) in upstream's order, with default values (the two ALB
/// target-control webhooks come only with their feature gate, as upstream serves them).
const MUTATING: &[(&str, &str, &str)] = &[
    ("mpod.elbv2.k8s.aws", "/mutate-v1-pod", "Ignore"),
    ("quicid.elbv2.k8s.aws", "/mutate-v1-pod-server-id", "Fail"),
    ("mservice.elbv2.k8s.aws", "/mutate-v1-service", "Fail"),
    (
        "mtargetgroupbinding.elbv2.k8s.aws",
        "/mutate-elbv2-k8s-aws-v1beta1-targetgroupbinding",
        "Fail",
    ),
];
const VALIDATING: &[(&str, &str, &str)] = &[
    (
        "vingressclassparams.elbv2.k8s.aws",
        "/validate-elbv2-k8s-aws-v1beta1-ingressclassparams",
        "Fail",
    ),
    (
        "vtargetgroupbinding.elbv2.k8s.aws",
        "/validate-elbv2-k8s-aws-v1beta1-targetgroupbinding",
        "Fail",
    ),
    (
        "vingress.elbv2.k8s.aws",
        "/validate-networking-v1-ingress",
        "Fail",
    ),
];

fn hooks(docs: &[Value], kind: &str) -> Vec<Value> {
    find(docs, kind, CONFIG)["webhooks"]
        .as_sequence()
        .expect("webhooks")
        .clone()
}

fn hook<'a>(hooks: &'a [Value], name: &str) -> &'a Value {
    hooks
        .iter()
        .find(|h| h["name"] == name)
        .unwrap_or_else(|| panic!("no webhook {name}"))
}

#[test]
fn names_paths_policies_rules_and_selectors_match_upstream() {
    let docs = docs(&render(&["--set", "clusterName=test"]));
    for (kind, want) in [
        ("MutatingWebhookConfiguration", MUTATING),
        ("ValidatingWebhookConfiguration", VALIDATING),
    ] {
        let hooks = hooks(&docs, kind);
        let got: Vec<(String, String, String)> = hooks
            .iter()
            .map(|h| {
                let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
                (
                    s(&h["name"]),
                    s(&h["clientConfig"]["service"]["path"]),
                    s(&h["failurePolicy"]),
                )
            })
            .collect();
        let want: Vec<(String, String, String)> = want
            .iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
            .collect();
        assert_eq!(got, want, "{kind}");
        for h in &hooks {
            assert_eq!(
                h["clientConfig"]["service"]["name"],
                "aws-load-balancer-webhook-service"
            );
            assert_eq!(h["clientConfig"]["service"]["namespace"], "kube-system");
            assert_eq!(strings(&h["admissionReviewVersions"]), ["v1"]);
            assert_eq!(h["sideEffects"], "None");
            // Default mode: the controller owns caBundle, so the chart must not render one.
            assert!(
                h["clientConfig"]["caBundle"].is_null(),
                "{:?} has a caBundle",
                h["name"]
            );
        }
    }
    let m = hooks(&docs, "MutatingWebhookConfiguration");
    let pod = hook(&m, "mpod.elbv2.k8s.aws");
    let own_pods = &pod["objectSelector"]["matchExpressions"][0];
    assert_eq!(own_pods["key"], "app.kubernetes.io/name");
    assert_eq!(own_pods["operator"], "NotIn");
    assert_eq!(
        strings(&own_pods["values"]),
        ["aws-load-balancer-controller"]
    );
    let ns = &pod["namespaceSelector"]["matchExpressions"][0];
    assert_eq!(ns["key"], "elbv2.k8s.aws/pod-readiness-gate-inject");
    assert_eq!(ns["operator"], "In");
    assert_eq!(strings(&ns["values"]), ["enabled"]);
    assert_eq!(strings(&pod["rules"][0]["resources"]), ["pods"]);
    assert_eq!(strings(&pod["rules"][0]["operations"]), ["CREATE"]);

    let tgb = hook(&m, "mtargetgroupbinding.elbv2.k8s.aws");
    assert_eq!(strings(&tgb["rules"][0]["apiGroups"]), ["elbv2.k8s.aws"]);
    assert_eq!(strings(&tgb["rules"][0]["apiVersions"]), ["v1beta1"]);
    assert_eq!(
        strings(&tgb["rules"][0]["operations"]),
        ["CREATE", "UPDATE"]
    );
    assert_eq!(
        strings(&tgb["rules"][0]["resources"]),
        ["targetgroupbindings"]
    );

    let v = hooks(&docs, "ValidatingWebhookConfiguration");
    let ing = hook(&v, "vingress.elbv2.k8s.aws");
    assert_eq!(ing["matchPolicy"], "Equivalent");
    assert_eq!(
        strings(&ing["rules"][0]["apiGroups"]),
        ["networking.k8s.io"]
    );
    assert_eq!(strings(&ing["rules"][0]["resources"]), ["ingresses"]);
    let icp = hook(&v, "vingressclassparams.elbv2.k8s.aws");
    assert_eq!(
        icp["objectSelector"]["matchExpressions"][0]["operator"],
        "NotIn"
    );
}

#[test]
fn values_switch_webhooks_as_upstream_does() {
    let docs = docs(&render(&[
        "--set",
        "clusterName=test",
        "--set",
        "enableServiceMutatorWebhook=false",
        "--set",
        "webhookConfig.disableIngressValidation=true",
        "--set",
        "podMutatorWebhookConfig.failurePolicy=Fail",
        "--set",
        "controllerConfig.featureGates.GlobalAcceleratorController=true",
        "--set",
        "controllerConfig.featureGates.ALBTargetControlAgent=true",
    ]));
    let m = hooks(&docs, "MutatingWebhookConfiguration");
    assert!(m.iter().all(|h| h["name"] != "mservice.elbv2.k8s.aws"));
    for (name, path, ns_op, obj_op) in [
        (
            "alb-target-control.namespace.elbv2.k8s.aws",
            "/mutate-alb-target-control-namespace-v1-pod",
            "In",
            "NotIn",
        ),
        (
            "alb-target-control.object.elbv2.k8s.aws",
            "/mutate-alb-target-control-object-v1-pod",
            "DoesNotExist",
            "In",
        ),
    ] {
        let h = hook(&m, name);
        assert_eq!(h["clientConfig"]["service"]["path"], path);
        assert_eq!(h["failurePolicy"], "Fail");
        let ns = &h["namespaceSelector"]["matchExpressions"][0];
        assert_eq!(
            ns["key"],
            "elbv2.k8s.aws/alb-target-control-agent-injection"
        );
        assert_eq!(ns["operator"], ns_op);
        let obj = &h["objectSelector"]["matchExpressions"][1];
        assert_eq!(obj["key"], "elbv2.k8s.aws/alb-target-control-agent-inject");
        assert_eq!(obj["operator"], obj_op);
    }
    assert_eq!(hook(&m, "mpod.elbv2.k8s.aws")["failurePolicy"], "Fail");
    let v = hooks(&docs, "ValidatingWebhookConfiguration");
    assert!(v.iter().all(|h| h["name"] != "vingress.elbv2.k8s.aws"));
    let aga = hook(&v, "vglobalaccelerator.aga.k8s.aws");
    assert_eq!(aga["timeoutSeconds"], 10);
}

#[test]
fn certificates_from_values_fill_secret_and_ca_bundle() {
    let docs = docs(&render(&[
        "--set",
        "clusterName=test",
        "--set",
        "webhookTLS.caCert=CA-PEM",
        "--set",
        "webhookTLS.cert=CERT-PEM",
        "--set",
        "webhookTLS.key=KEY-PEM",
    ]));
    validate_k8s(&docs, "render with webhookTLS values");
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let secret = find(&docs, "Secret", "aws-load-balancer-tls");
    assert_eq!(secret["type"], "kubernetes.io/tls");
    assert_eq!(secret["data"]["ca.crt"], b64("CA-PEM").as_str());
    assert_eq!(secret["data"]["tls.crt"], b64("CERT-PEM").as_str());
    assert_eq!(secret["data"]["tls.key"], b64("KEY-PEM").as_str());
    for kind in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        for h in hooks(&docs, kind) {
            assert_eq!(
                h["clientConfig"]["caBundle"],
                b64("CA-PEM").as_str(),
                "{kind} {:?}",
                h["name"]
            );
        }
    }
    // Not controller-managed: no Secret-writing Role, and the volume is not optional.
    assert!(all_of(&docs, "Role").iter().all(|r| !r["metadata"]["name"]
        .as_str()
        .unwrap()
        .contains("webhook-tls")));
    let vol = &find(&docs, "Deployment", "aws-load-balancer-controller")["spec"]["template"]
        ["spec"]["volumes"][0];
    assert!(vol["secret"]["optional"].is_null());
}

#[test]
fn cert_manager_mode_annotates_and_issues() {
    let docs = docs(&render(&[
        "--set",
        "clusterName=test",
        "--set",
        "enableCertManager=true",
    ]));
    let cert = find(&docs, "Certificate", "aws-load-balancer-serving-cert");
    assert_eq!(cert["spec"]["secretName"], "aws-load-balancer-tls");
    assert_eq!(
        cert["spec"]["issuerRef"]["name"],
        "aws-load-balancer-root-issuer"
    );
    find(&docs, "Issuer", "aws-load-balancer-selfsigned-issuer");
    for kind in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        let cfg = find(&docs, kind, CONFIG);
        assert_eq!(
            cfg["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
            "kube-system/aws-load-balancer-serving-cert"
        );
        assert!(hooks(&docs, kind)
            .iter()
            .all(|h| h["clientConfig"]["caBundle"].is_null()));
    }
    assert!(all_of(&docs, "Secret").is_empty());
}

#[test]
fn controller_managed_mode_tells_the_controller_what_to_manage() {
    let docs = docs(&render(&["--set", "clusterName=test"]));
    let pod =
        &find(&docs, "Deployment", "aws-load-balancer-controller")["spec"]["template"]["spec"];
    assert_eq!(
        pod["volumes"][0]["secret"]["secretName"],
        "aws-load-balancer-tls"
    );
    assert_eq!(pod["volumes"][0]["secret"]["optional"], true);
    let env = pod["containers"][0]["env"].as_sequence().unwrap();
    let get = |n: &str| {
        env.iter()
            .find(|e| e["name"] == n)
            .map(|e| e["value"].clone())
    };
    assert_eq!(
        get("AWS_LBC_WEBHOOK_TLS_SECRET"),
        Some(Value::from("aws-load-balancer-tls"))
    );
    assert_eq!(
        get("AWS_LBC_WEBHOOK_SERVICE"),
        Some(Value::from("aws-load-balancer-webhook-service"))
    );
    assert_eq!(
        get("AWS_LBC_WEBHOOK_CONFIGURATION"),
        Some(Value::from(CONFIG))
    );
    assert_eq!(
        get("AWS_LBC_CLUSTER_DNS_DOMAIN"),
        Some(Value::from("cluster.local"))
    );
}

#[test]
fn no_certificate_source_or_half_a_certificate_is_refused() {
    let err = helm_template(&[
        "--set",
        "clusterName=t",
        "--set",
        "webhookTLS.managedByController=false",
    ])
    .expect_err("no certificate source must fail");
    assert!(
        err.contains("webhookTLS.managedByController is false"),
        "{err}"
    );
    let err = helm_template(&["--set", "clusterName=t", "--set", "webhookTLS.cert=X"])
        .expect_err("half a certificate must fail");
    assert!(err.contains("must be given together"), "{err}");
}
