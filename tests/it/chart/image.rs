//! The container image fits the chart without docker: the Dockerfile's entrypoint is the binary
//! the Deployment expects (it passes only `args`), it runs as the non-root uid the chart's
//! securityContext demands, and the build context keeps every file the build reads. The chart
//! refuses upstream's image where upstream's binary cannot run it.

use super::*;

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn dockerfile_matches_the_deployment() {
    let dockerfile = read("Dockerfile");
    let lines: Vec<&str> = dockerfile.lines().map(str::trim).collect();
    let has = |l: &str| lines.contains(&l);
    assert!(
        has(r#"ENTRYPOINT ["/controller"]"#),
        "entrypoint is upstream's /controller"
    );
    assert!(has("USER 65532:65532"), "numeric non-root user");
    assert!(
        dockerfile.contains("cargo build --release --locked --bin aws-load-balancer-controller")
    );
    assert!(dockerfile.contains("target/release/aws-load-balancer-controller /out/controller"));
    assert!(has("COPY --from=build /out/controller /controller"));
    // The binary named in the Dockerfile is the package's default binary (src/main.rs).
    assert!(read("Cargo.toml").contains("default-run = \"aws-load-balancer-controller\""));

    for values in [None, Some(ci_values())] {
        let mut args = vec!["--set", "clusterName=test"];
        if let Some(v) = &values {
            args = vec!["-f", v.as_str()];
        }
        let docs = docs(&render(&args));
        let deploy = all_of(&docs, "Deployment")[0];
        let c = &deploy["spec"]["template"]["spec"]["containers"][0];
        assert!(
            c["command"].is_null(),
            "the chart must rely on the image entrypoint"
        );
        assert!(!container_args(&docs).is_empty());
        assert_eq!(c["securityContext"]["runAsNonRoot"], true);
        assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    }
}

#[test]
fn build_context_keeps_what_the_build_reads() {
    let ignored: Vec<String> = read(".dockerignore")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.trim_end_matches('/').to_string())
        .collect();
    let excluded = |path: &str| {
        ignored
            .iter()
            .any(|i| path == i || path.starts_with(&format!("{i}/")))
    };
    assert!(excluded("target") && excluded(".git"), "{ignored:?}");
    // Files embedded at compile time, workspace members and declared targets.
    let mut needed = vec![
        "Cargo.toml".to_string(),
        "Cargo.lock".into(),
        "src/main.rs".into(),
        // The build's identity (`--version`); it does without .git, which the context leaves out.
        "build.rs".into(),
        "crates/model/Cargo.toml".into(),
        "crates/model/src/main.rs".into(),
        "crates/model/src/bin/crdgen.rs".into(),
        "webhook-certs/Cargo.toml".into(),
        "tests/apiserver/Cargo.toml".into(),
        "tests/it/main.rs".into(),
        "benches/bench.rs".into(),
    ];
    let mut stack = vec![repo().join("src"), repo().join("crates")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for (i, _) in text.match_indices("include_str!(\"") {
                let rest = &text[i + "include_str!(\"".len()..];
                let rel = &rest[..rest.find('"').unwrap()];
                let file = path.parent().unwrap().join(rel).canonicalize().unwrap();
                let file = file.strip_prefix(repo().canonicalize().unwrap()).unwrap();
                needed.push(file.display().to_string());
            }
        }
    }
    assert!(
        needed.iter().any(|n| n.starts_with("config/samples/")),
        "{needed:?}"
    );
    for n in &needed {
        assert!(repo().join(n).exists(), "{n} missing");
        assert!(
            !excluded(n),
            ".dockerignore drops {n}, which the build reads"
        );
    }
}

/// The controller container's image of the one Deployment.
fn image_of(docs: &[Value]) -> String {
    let deploys = all_of(docs, "Deployment");
    assert_eq!(deploys.len(), 1, "exactly one Deployment");
    deploys[0]["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .expect("an image")
        .to_string()
}

/// Upstream's publishers: ECR Public and the EKS regional ECR copies (any account, China and
/// FIPS endpoints too).
const UPSTREAM: &[&str] = &[
    "public.ecr.aws/eks/aws-load-balancer-controller",
    "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon/aws-load-balancer-controller",
    "877085696533.dkr.ecr.af-south-1.amazonaws.com/amazon/aws-load-balancer-controller",
    "918309763551.dkr.ecr.cn-north-1.amazonaws.com.cn/amazon/aws-load-balancer-controller",
    "013241004608.dkr.ecr-fips.us-gov-west-1.amazonaws.com/amazon/aws-load-balancer-controller",
];

/// Names that only look like upstream's: this build's image, the ci values' one, a mirror under
/// another path, another name under upstream's.
const NOT_UPSTREAM: &[&str] = &[
    IMAGE,
    "registry.example.com/aws-load-balancer-controller",
    "111122223333.dkr.ecr.eu-west-1.amazonaws.com/mirror/aws-load-balancer-controller",
    "public.ecr.aws/eks/aws-load-balancer-controller-rs",
];

#[test]
fn the_charts_default_image_is_refused_naming_the_value_to_set() {
    // The chart's own defaults, without the tests' image values.
    let out = run(Command::new(helm())
        .arg("template")
        .arg("aws-load-balancer-controller")
        .arg(chart_dir())
        .args(["--namespace", "kube-system", "--set", "clusterName=test"]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the default image rendered");
    assert!(
        err.contains(
            "image.repository is upstream's image public.ecr.aws/eks/aws-load-balancer-controller, \
             which does not manage its webhook certificate (webhookTLS.managedByController, the \
             default): set image.repository (and image.tag) to this controller's image, built \
             from the repository's Dockerfile, or give webhookTLS.caCert, webhookTLS.cert and \
             webhookTLS.key, or set enableCertManager=true"
        ),
        "{err}"
    );
}

#[test]
fn upstreams_image_is_refused_with_the_controller_managed_certificate_and_dry_run() {
    for repo in UPSTREAM {
        assert!(is_upstream_image(repo), "{repo}");
        let image = format!("image.repository={repo}");
        let with = |extra: &[&str]| {
            let mut args = vec!["--set", "clusterName=test", "--set", image.as_str()];
            args.extend_from_slice(extra);
            helm_template(&args)
        };
        let err = with(&[]).expect_err("upstream's image with the managed certificate");
        assert!(
            err.contains(&format!(
                "image.repository is upstream's image {repo}, which does not manage its webhook \
                 certificate"
            )),
            "{err}"
        );
        assert!(
            err.contains("set image.repository (and image.tag) to this controller's image"),
            "{err}"
        );
        let err = with(&["--set", "dryRun=true"]).expect_err("upstream's image in dryRun");
        assert!(
            err.contains(&format!(
                "image.repository is upstream's image {repo}, which has no dry-run mode \
                 (dryRun=true): set image.repository (and image.tag) to this controller's image"
            )),
            "{err}"
        );
        // With a certificate from values or cert-manager upstream's image runs as upstream's
        // chart runs it.
        for certificate in [
            vec![
                "--set",
                "webhookTLS.caCert=CA",
                "--set",
                "webhookTLS.cert=CERT",
                "--set",
                "webhookTLS.key=KEY",
            ],
            vec!["--set", "enableCertManager=true"],
        ] {
            let rendered = with(&certificate)
                .unwrap_or_else(|e| panic!("{repo} with {certificate:?} refused:\n{e}"));
            assert_eq!(image_of(&docs(&rendered)), format!("{repo}:v3.5.0"));
        }
    }
    for repo in NOT_UPSTREAM {
        assert!(!is_upstream_image(repo), "{repo}");
        let image = format!("image.repository={repo}");
        for extra in [vec![], vec!["--set", "dryRun=true"]] {
            let mut args = vec!["--set", "clusterName=test", "--set", image.as_str()];
            args.extend(extra);
            assert_eq!(image_of(&docs(&render(&args))), format!("{repo}:v3.5.0"));
        }
    }
    // A tag or digest in the repository value does not hide upstream's image.
    assert!(is_upstream_image(
        "public.ecr.aws/eks/aws-load-balancer-controller:v3.5.0"
    ));
    assert!(is_upstream_image(
        "Public.ECR.aws/eks/aws-load-balancer-controller@sha256:0123"
    ));
    // The tests render this build's image unless they say otherwise.
    let docs = docs(&render(&["--set", "clusterName=test"]));
    assert_eq!(image_of(&docs), format!("{IMAGE}:v3.5.0"));
}
