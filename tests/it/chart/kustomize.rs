//! config/: `kubectl kustomize config/default` renders and validates, its objects are the chart's
//! default objects (so the two install paths cannot drift), it never runs upstream's image with
//! the controller-managed certificate, and the committed CRD YAML is exactly what `crdgen` prints
//! from the Rust types.

use super::*;

/// Labels only Helm adds; everything else must be identical.
const HELM_LABELS: &[&str] = &[
    "app.kubernetes.io/managed-by",
    "helm.sh/chart",
    "app.kubernetes.io/version",
];

fn kustomize_default() -> Vec<Value> {
    kustomize(&repo().join("config/default"))
}

fn kustomize(dir: &Path) -> Vec<Value> {
    let out = run(Command::new(kubectl()).arg("kustomize").arg(dir));
    assert!(
        out.status.success(),
        "kubectl kustomize {} failed:\n{}",
        dir.display(),
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

/// The controller container's image of the one Deployment, and whether the Deployment leaves
/// the webhook certificate to the controller (the `AWS_LBC_WEBHOOK_TLS_SECRET` contract).
fn image_and_managed_cert(docs: &[Value]) -> (String, bool) {
    let deploys = all_of(docs, "Deployment");
    assert_eq!(deploys.len(), 1, "exactly one Deployment");
    let c = &deploys[0]["spec"]["template"]["spec"]["containers"][0];
    let managed = c["env"].as_sequence().is_some_and(|env| {
        env.iter()
            .any(|e| e["name"] == "AWS_LBC_WEBHOOK_TLS_SECRET")
    });
    let image = c["image"].as_str().expect("an image").to_string();
    (image, managed)
}

/// `target` relative to `dir`: kustomize takes no absolute path to a base.
fn relative(dir: &Path, target: &Path) -> PathBuf {
    let dir = dir.canonicalize().expect("directory exists");
    let target = target.canonicalize().expect("target exists");
    let mut rel = PathBuf::new();
    for _ in dir.components().skip(1) {
        rel.push("..");
    }
    rel.join(target.strip_prefix("/").expect("an absolute path"))
}

#[test]
fn kustomize_default_never_runs_upstreams_image_with_the_managed_certificate() {
    // Kustomize has no way to fail a build on a value, so the guard is here: config/default
    // leaves the certificate to the controller, which upstream's binary does not manage (its
    // pods would never serve, and the fail-closed webhooks would refuse every Service, Ingress
    // and TargetGroupBinding), so it must name this build's image.
    let (image, managed) = image_and_managed_cert(&kustomize_default());
    assert!(
        managed,
        "config/default no longer uses the controller-managed certificate"
    );
    assert!(
        !is_upstream_image(&image),
        "config/default runs upstream's image {image}, which does not manage its webhook \
         certificate: name this build's image"
    );
    assert_eq!(image, format!("{IMAGE}:v3.5.0"));

    // An overlay that swaps in upstream's image is what the check catches.
    let dir = tempfile::tempdir().expect("temp dir");
    let base = relative(dir.path(), &repo().join("config/default"));
    let overlay = format!(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - {}\n\
         images:\n  - name: {IMAGE}\n    newName: public.ecr.aws/eks/aws-load-balancer-controller\n",
        base.display()
    );
    std::fs::write(dir.path().join("kustomization.yaml"), overlay).expect("write overlay");
    let (image, managed) = image_and_managed_cert(&kustomize(dir.path()));
    assert!(managed, "the overlay keeps the managed certificate");
    assert!(is_upstream_image(&image), "{image}");
}

/// The ALB target control component over config/default is the chart with the gate on: the
/// same two pod webhooks, and the gate in the controller's args.
#[test]
fn the_target_control_component_equals_the_chart_with_its_gate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = relative(dir.path(), &repo().join("config/default"));
    let component = relative(
        dir.path(),
        &repo().join("config/components/alb-target-control-agent"),
    );
    let overlay = format!(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - {}\n\
         components:\n  - {}\n",
        base.display(),
        component.display()
    );
    std::fs::write(dir.path().join("kustomization.yaml"), overlay).expect("write overlay");
    let kustomized = kustomize(dir.path());
    let chart = docs(&render(&[
        "--set",
        "clusterName=your-cluster-name",
        "--set",
        "controllerConfig.featureGates.ALBTargetControlAgent=true",
    ]));
    let hooks = |docs: &[Value]| -> Vec<Value> {
        find(
            docs,
            "MutatingWebhookConfiguration",
            "aws-load-balancer-webhook",
        )["webhooks"]
            .as_sequence()
            .expect("webhooks")
            .iter()
            .filter(|h| {
                h["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("alb-target-control."))
            })
            .cloned()
            .collect()
    };
    let ours = hooks(&kustomized);
    assert_eq!(ours.len(), 2);
    assert_eq!(ours, hooks(&chart));
    let args = |docs: &[Value]| -> Vec<String> {
        strings(&all_of(docs, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]["args"])
    };
    let gate = "--feature-gates=ALBTargetControlAgent=true".to_string();
    assert!(args(&kustomized).contains(&gate), "{:?}", args(&kustomized));
    assert!(args(&chart).contains(&gate), "{:?}", args(&chart));
}

#[test]
fn committed_crds_equal_crdgen_output() {
    // What `crdgen` (a binary of the albc-model crate) prints.
    let generated = aws_load_balancer_controller::crd::crds_yaml().expect("CRDs serialise");
    assert!(generated.contains("name: targetgroupbindings.elbv2.k8s.aws"));
    assert!(generated.contains("name: ingressclassparams.elbv2.k8s.aws"));
    assert!(generated.contains("name: albtargetcontrolconfigs.elbv2.k8s.aws"));
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
