//! Model benchmark: build one IngressGroup of 100 Ingresses with 10 paths each (1,000 paths,
//! 100 Services) into a Stack, from classification to the last TargetGroupBinding.

use std::time::Instant;

use aws_load_balancer_controller::model::{self, BuildEnv, ClusterObjects, ModelConfig};
use serde_json::json;

fn objects() -> ClusterObjects {
    let mut objs = ClusterObjects::default();
    for i in 0..100 {
        let svc = json!({"metadata": {"name": format!("svc-{i}"), "namespace": "bench", "uid": format!("uid-{i}")},
            "spec": {"type": "NodePort", "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30000 + i}]}});
        objs.services.push(serde_json::from_value(svc).unwrap());
        let paths: Vec<_> = (0..10)
            .map(|p| json!({"path": format!("/app-{i}/p{p}"), "pathType": if p % 2 == 0 { "Prefix" } else { "Exact" },
                "backend": {"service": {"name": format!("svc-{i}"), "port": {"number": 80}}}}))
            .collect();
        let ing = json!({"metadata": {"name": format!("ing-{i}"), "namespace": "bench", "annotations": {
                "kubernetes.io/ingress.class": "alb",
                "alb.ingress.kubernetes.io/group.name": "bench",
                "alb.ingress.kubernetes.io/group.order": format!("{}", i % 7),
                "alb.ingress.kubernetes.io/tags": "team=bench"}},
            "spec": {"rules": [{"host": format!("h{i}.example.com"), "http": {"paths": paths}}]}});
        objs.ingresses.push(serde_json::from_value(ing).unwrap());
    }
    objs
}

/// Runs the benchmark and prints the figures.
pub fn run() {
    let objs = objects();
    let cfg = ModelConfig {
        cluster_name: "bench".into(),
        ..ModelConfig::default()
    };
    let build = || {
        let (groups, _) = model::load_groups(&objs, &cfg.ingress_class);
        let g = groups.values().next().expect("one group");
        model::build_stack(g, &objs, &cfg, &BuildEnv::default()).expect("stack builds")
    };
    let stack = build();
    assert_eq!(stack.listener_rules.len(), 1000);
    assert_eq!(stack.target_groups.len(), 100);
    let mut samples = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        std::hint::black_box(build());
        samples.push(t.elapsed());
    }
    samples.sort();
    println!(
        "model/build_group_100_ingresses_1000_paths: median {:.3} ms, min {:.3} ms, max {:.3} ms ({} runs)",
        samples[samples.len() / 2].as_secs_f64() * 1e3,
        samples[0].as_secs_f64() * 1e3,
        samples[samples.len() - 1].as_secs_f64() * 1e3,
        samples.len()
    );
}
