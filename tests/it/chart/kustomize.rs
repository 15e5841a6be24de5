//! config/: `kubectl kustomize config/default` renders and validates, its objects are the chart's
//! default objects (so the two install paths cannot drift), and the committed CRD YAML is
//! exactly what `crdgen` prints from the Rust types.

use super::*;

/// Labels only Helm adds; everything else must be identical.
const HELM_LABELS: &[&str] = &[
    "app.kubernetes.io/managed-by",
    "helm.sh/chart",
    "app.kubernetes.io/version",
];

fn kustomize_default() -> Vec<Value> {
    let out = run(Command::new(kubectl())
        .arg("kustomize")
        .arg(repo().join("config/default")));
    assert!(
        out.status.success(),
        "kubectl kustomize config/default failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    docs(&String::from_utf8(out.stdout).expect("UTF-8"))
}

fn without_helm_labels(mut doc: Value) -> Value {
    if let Some(labels) = doc["metadata"]["labels"].as_mapping_mut() {
        for l in HELM_LABELS {
            labels.remove(*l);
        }
    }
    doc
}

#[test]
fn kustomize_default_renders_and_validates() {
    let docs = kustomize_default();
    validate_k8s(&docs, "kubectl kustomize config/default");
    for (kind, name) in [
        (
            "CustomResourceDefinition",
            "targetgroupbindings.elbv2.k8s.aws",
        ),
        ("Deployment", "aws-load-balancer-controller"),
        ("MutatingWebhookConfiguration", "aws-load-balancer-webhook"),
        ("ClusterRole", "aws-load-balancer-controller-role"),
    ] {
        find(&docs, kind, name);
    }
    for d in &docs {
        let namespaced = !matches!(
            d["kind"].as_str(),
            Some(
                "CustomResourceDefinition"
                    | "ClusterRole"
                    | "ClusterRoleBinding"
                    | "MutatingWebhookConfiguration"
                    | "ValidatingWebhookConfiguration"
            )
        );
        if namespaced {
            assert_eq!(
                d["metadata"]["namespace"], "kube-system",
                "{:?}",
                d["metadata"]["name"]
            );
        }
    }
}

#[test]
fn kustomize_objects_equal_the_charts_defaults() {
    let chart = docs(&render(&[
        "--set",
        "clusterName=your-cluster-name",
        "--include-crds",
    ]));
    let kustomized = kustomize_default();
    for k in &kustomized {
        let kind = k["kind"].as_str().unwrap();
        let name = k["metadata"]["name"].as_str().unwrap();
        let c = without_helm_labels(find(&chart, kind, name).clone());
        assert!(
            c == without_helm_labels(k.clone()),
            "config/ and the chart differ for {kind}/{name}:\nconfig: {}\nchart: {}",
            serde_yaml::to_string(k).unwrap(),
            serde_yaml::to_string(&c).unwrap()
        );
    }
    // Everything the chart renders by default is in config/, except the IngressClass pair (a
    // custom resource cannot be applied in the same pass as its CRD).
    for c in &chart {
        let kind = c["kind"].as_str().unwrap();
        if matches!(kind, "IngressClass" | "IngressClassParams") {
            continue;
        }
        let name = &c["metadata"]["name"];
        assert!(
            kustomized
                .iter()
                .any(|k| k["kind"] == kind && &k["metadata"]["name"] == name),
            "config/default lacks {kind}/{name:?}"
        );
    }
}

#[test]
fn committed_crds_equal_crdgen_output() {
    // What `crdgen` (a binary of the albc-model crate) prints.
    let generated = aws_load_balancer_controller::crd::crds_yaml().expect("CRDs serialise");
    assert!(generated.contains("name: targetgroupbindings.elbv2.k8s.aws"));
    assert!(generated.contains("name: ingressclassparams.elbv2.k8s.aws"));
    for path in [
        "config/crd/crds.yaml",
        "charts/aws-load-balancer-controller/crds/crds.yaml",
    ] {
        let committed = std::fs::read_to_string(repo().join(path)).expect(path);
        assert!(
            committed == generated,
            "{path} is stale: regenerate with `cargo run -p albc-model --bin crdgen > {path}`"
        );
    }
}
