//! The chart lints, renders deterministically, validates for Kubernetes 1.30, refuses to install
//! without a cluster name, and passes only flags the controller binary accepts.

use super::*;

const CLUSTER: &str = "clusterName=test";

#[test]
fn helm_lint_strict_passes_for_default_and_ci_values() {
    let ci = ci_values();
    let image = image_values();
    for extra in [vec!["-f", &image, "--set", CLUSTER], vec!["-f", &ci]] {
        let out = run(Command::new(helm())
            .args(["lint", "--strict"])
            .arg(chart_dir())
            .args(&extra));
        assert!(
            out.status.success(),
            "helm lint --strict {extra:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn default_render_validates_and_has_the_expected_objects() {
    let yaml = render(&["--set", CLUSTER, "--include-crds"]);
    let docs = docs(&yaml);
    validate_k8s(&docs, "default render");

    for (kind, name) in [
        (
            "CustomResourceDefinition",
            "targetgroupbindings.elbv2.k8s.aws",
        ),
        (
            "CustomResourceDefinition",
            "ingressclassparams.elbv2.k8s.aws",
        ),
        (
            "CustomResourceDefinition",
            "albtargetcontrolconfigs.elbv2.k8s.aws",
        ),
        ("ServiceAccount", "aws-load-balancer-controller"),
        ("Deployment", "aws-load-balancer-controller"),
        ("Service", "aws-load-balancer-webhook-service"),
        ("MutatingWebhookConfiguration", "aws-load-balancer-webhook"),
        (
            "ValidatingWebhookConfiguration",
            "aws-load-balancer-webhook",
        ),
        ("IngressClass", "alb"),
        ("IngressClassParams", "alb"),
        ("ClusterRole", "aws-load-balancer-controller-role"),
    ] {
        find(&docs, kind, name);
    }
    // No certificate material by default, and none of the optional objects.
    for kind in [
        "Secret",
        "PodDisruptionBudget",
        "ServiceMonitor",
        "Certificate",
        "HorizontalPodAutoscaler",
    ] {
        assert!(
            all_of(&docs, kind).is_empty(),
            "default render has a {kind}"
        );
    }

    let svc = find(&docs, "Service", "aws-load-balancer-webhook-service");
    assert_eq!(svc["spec"]["ports"][0]["port"], 443);
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], "webhook-server");

    let ic = find(&docs, "IngressClass", "alb");
    assert_eq!(ic["spec"]["controller"], "ingress.k8s.aws/alb");

    let pod =
        &find(&docs, "Deployment", "aws-load-balancer-controller")["spec"]["template"]["spec"];
    let c = &pod["containers"][0];
    let ports: Vec<(String, u64)> = c["ports"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_owned(),
                p["containerPort"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ports,
        vec![
            ("webhook-server".to_owned(), 9443),
            ("metrics-server".to_owned(), 8080)
        ]
    );
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(c["livenessProbe"]["httpGet"]["port"], 61779);
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(c["readinessProbe"]["httpGet"]["port"], 61779);
    // The probe server listens on the pod IP only (the downward API's status.podIP).
    let args: Vec<&str> = c["args"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    assert!(
        args.contains(&"--health-probe-bind-addr=$(POD_IP):61779"),
        "{args:?}"
    );
    let pod_ip = c["env"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "POD_IP")
        .expect("POD_IP in env");
    assert_eq!(pod_ip["valueFrom"]["fieldRef"]["fieldPath"], "status.podIP");
    assert_eq!(c["securityContext"]["runAsNonRoot"], true);
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(pod["priorityClassName"], "system-cluster-critical");
    assert_eq!(pod["terminationGracePeriodSeconds"], 10);
    assert_eq!(
        pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
            ["podAffinityTerm"]["topologyKey"],
        "kubernetes.io/hostname"
    );
    let env = c["env"].as_sequence().unwrap();
    let pod_ns = env
        .iter()
        .find(|e| e["name"] == "POD_NAMESPACE")
        .expect("POD_NAMESPACE");
    assert_eq!(
        pod_ns["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.namespace"
    );
    // The controller's own Pod, where AWS set-up failures show as events.
    let pod_name = env
        .iter()
        .find(|e| e["name"] == "POD_NAME")
        .expect("POD_NAME");
    assert_eq!(
        pod_name["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.name"
    );
    assert_eq!(
        find(&docs, "Deployment", "aws-load-balancer-controller")["spec"]["replicas"],
        2
    );
}

#[test]
fn upstream_values_file_renders_validates_and_maps_keys_to_flags() {
    let ci = ci_values();
    let yaml = render(&["-f", &ci, "--include-crds"]);
    let docs = docs(&yaml);
    validate_k8s(&docs, "render with ci/values.yaml");

    find(&docs, "PodDisruptionBudget", "aws-load-balancer-controller");
    find(&docs, "ServiceMonitor", "aws-load-balancer-controller");
    find(&docs, "Service", "aws-load-balancer-controller"); // metrics Service
    let sa = find(&docs, "ServiceAccount", "albc");
    assert_eq!(
        sa["metadata"]["annotations"]["eks.amazonaws.com/role-arn"],
        "arn:aws:iam::111122223333:role/AWSLoadBalancerControllerIAMRole"
    );
    let ic = find(&docs, "IngressClass", "alb-ci");
    assert_eq!(
        ic["metadata"]["annotations"]["ingressclass.kubernetes.io/is-default-class"],
        "true"
    );
    assert_eq!(ic["spec"]["parameters"]["name"], "alb-ci-params");

    let args = container_args(&docs);
    for want in [
        "--cluster-name=ci-cluster",
        "--ingress-class=alb-ci",
        "--aws-region=us-west-2",
        "--aws-vpc-id=vpc-0123456789abcdef0",
        "--aws-vpc-tags=Name=ci-vpc,env=ci",
        "--aws-api-throttle=Elastic Load Balancing v2:RegisterTargets|DeregisterTargets=4:20,Elastic Load Balancing v2:.*=10:40",
        "--aws-max-retries=5",
        "--enable-shield=false",
        "--metrics-bind-addr=:9090",
        "--webhook-bind-port=9444",
        "--default-tags=env=ci,team=web",
        "--external-managed-tags=owner,cost-center",
        "--feature-gates=ALBSingleSubnet=true,EnableIPTargetType=true,SubnetsClusterTagCheck=false",
        "--default-target-type=ip",
        "--disable-restricted-sg-rules=false",
        "--max-targets-per-target-group=100",
    ] {
        assert!(args.iter().any(|a| a == want), "missing {want} in {args:#?}");
    }
    // Port names follow the values too.
    let c = &find(&docs, "Deployment", "aws-load-balancer-controller")["spec"]["template"]["spec"]
        ["containers"][0];
    assert_eq!(c["ports"][0]["containerPort"], 9444);
    assert_eq!(c["ports"][1]["containerPort"], 9090);
}

/// Same name as upstream's chart, its own version (a Helm cache, Renovate or Argo CD tells the two
/// apart), and the appVersion only labels the objects: the image stays values.yaml's.
#[test]
fn chart_is_named_as_upstreams_and_versioned_as_this_build() {
    let chart = |dir: &Path| -> Value {
        serde_yaml::from_str(&std::fs::read_to_string(dir.join("Chart.yaml")).unwrap()).unwrap()
    };
    let ours = chart(&chart_dir());
    let upstream = chart(&repo().join("tests/it/testdata/upstream-chart-v3.5.0"));
    assert_eq!(ours["name"], upstream["name"]);
    assert_eq!(upstream["version"], "3.5.0");
    assert_eq!(ours["version"], "3.5.0-rs.1");
    assert_eq!(ours["appVersion"], "v3.5.0-rs.1");

    let docs = docs(&render(&["--set", CLUSTER]));
    let deploy = all_of(&docs, "Deployment")[0];
    let labels = &deploy["metadata"]["labels"];
    assert_eq!(
        labels["helm.sh/chart"],
        "aws-load-balancer-controller-3.5.0-rs.1"
    );
    assert_eq!(labels["app.kubernetes.io/version"], "v3.5.0-rs.1");
    let image = &deploy["spec"]["template"]["spec"]["containers"][0]["image"];
    assert_eq!(image.as_str(), Some(format!("{IMAGE}:v3.5.0").as_str()));
}

#[test]
fn two_renders_are_byte_identical() {
    let ci = ci_values();
    for args in [vec!["--set", CLUSTER], vec!["-f", &ci]] {
        let first = render(&args);
        let second = render(&args);
        assert!(first == second, "two renders with {args:?} differ");
    }
}

#[test]
fn missing_cluster_name_fails_with_upstream_message() {
    let err = helm_template(&[]).expect_err("render without clusterName must fail");
    assert!(
        err.contains("Chart cannot be installed without a valid clusterName!"),
        "unexpected error: {err}"
    );
    let err = helm_template(&["--set", "clusterName="]).expect_err("empty clusterName must fail");
    assert!(
        err.contains("Chart cannot be installed without a valid clusterName!"),
        "{err}"
    );
}

/// Every flag the Deployment passes is listed by the binary's `--help`, and the controller's own
/// flag parser and config validation accept the whole rendered argument list, values included.
#[test]
fn every_rendered_flag_is_accepted_by_the_controller_binary() {
    use aws_load_balancer_controller::cli::Cli;
    use aws_load_balancer_controller::config::Config;
    use clap::Parser;

    let bin = env!("CARGO_BIN_EXE_aws-load-balancer-controller");
    let help = run(Command::new(bin).arg("--help"));
    assert!(help.status.success(), "`{bin} --help` failed");
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let known: std::collections::BTreeSet<&str> = help
        .split_whitespace()
        .filter(|w| w.starts_with("--"))
        .map(|w| w.split(['=', '<', '[', ',']).next().unwrap_or(w))
        .collect();
    assert!(
        known.contains("--cluster-name"),
        "help output not understood: {help}"
    );

    let ci = ci_values();
    for args in [vec!["--set", CLUSTER], vec!["-f", &ci]] {
        let rendered = container_args(&docs(&render(&args)));
        assert!(rendered.len() > 1, "too few args rendered: {rendered:?}");
        for arg in &rendered {
            let name = arg.split('=').next().unwrap();
            assert!(
                known.contains(name),
                "chart passes {name}, which `--help` does not list"
            );
        }
        let argv =
            std::iter::once("aws-load-balancer-controller".to_owned()).chain(rendered.clone());
        let cli = Cli::try_parse_from(argv)
            .unwrap_or_else(|e| panic!("the binary rejects {rendered:?}:\n{e}"));
        if let Err(e) = Config::from_args(&cli.controller) {
            panic!("the controller's config rejects {rendered:?}: {e}");
        }
    }
}

/// `certManagement.defaultPCAARN` reaches `--default-pca-arn` as in upstream's chart, and the
/// controller starts with that CA as the default of the certificates it creates (no warning:
/// the flag is acted on).
#[test]
fn default_pca_arn_value_sets_the_flag_the_controller_acts_on() {
    use aws_load_balancer_controller::cli::Cli;
    use aws_load_balancer_controller::config::Config;
    use aws_load_balancer_controller::model::ModelConfig;
    use clap::Parser;

    let pca = "arn:aws:acm-pca:us-west-2:111122223333:certificate-authority/abc";
    let set = format!("certManagement.defaultPCAARN={pca}");
    let args = container_args(&docs(
        &helm_template(&["--set", "clusterName=it", "--set", &set]).unwrap(),
    ));
    let flag = format!("--default-pca-arn={pca}");
    assert!(args.contains(&flag), "{args:?}");
    let cli =
        Cli::try_parse_from(std::iter::once("aws-load-balancer-controller".to_owned()).chain(args))
            .unwrap();
    let cfg = Config::from_args(&cli.controller).unwrap();
    assert!(cfg.inert_warnings.is_empty(), "{:?}", cfg.inert_warnings);
    assert_eq!(cfg.default_pca_arn.as_deref(), Some(pca));
    assert_eq!(
        ModelConfig::from(&cfg).default_pca_arn.as_deref(),
        Some(pca)
    );
    // Unset, the chart passes nothing.
    let plain = container_args(&docs(&helm_template(&["--set", "clusterName=it"]).unwrap()));
    assert!(
        !plain.iter().any(|a| a.starts_with("--default-pca-arn")),
        "{plain:?}"
    );
}

/// `logFormat` (beside upstream's `logLevel`) reaches `--log-format`; unset, the controller's
/// own default applies.
#[test]
fn log_format_value_sets_the_flag() {
    let args = |extra: &[&str]| {
        let mut all = vec!["--set", "clusterName=it"];
        all.extend_from_slice(extra);
        container_args(&docs(&helm_template(&all).unwrap()))
    };
    assert!(
        args(&["--set", "logFormat=json"]).contains(&"--log-format=json".to_string()),
        "{:?}",
        args(&["--set", "logFormat=json"])
    );
    assert!(!args(&[]).iter().any(|a| a.starts_with("--log-format")));
}
