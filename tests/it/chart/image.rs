//! The container image fits the chart without docker: the Dockerfile's entrypoint is the binary
//! the Deployment expects (it passes only `args`), it runs as the non-root uid the chart's
//! securityContext demands, and the build context keeps every file the build reads.

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
