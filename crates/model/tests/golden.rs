//! Golden tests of the model: representative Ingress groups (tests/fixtures/*.yaml) built
//! into stacks and compared with reviewed JSON (tests/fixtures/*.json). `UPDATE_GOLDEN=1`
//! rewrites the JSON; names asserted below were computed independently (python3 hashlib) from
//! upstream's documented hash inputs.

use std::path::{Path, PathBuf};

use albc_model::model::{self, BuildEnv, ClusterObjects, ModelConfig};
use albc_model::plan::add_manifests;
use serde_json::{json, Value};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Builds every group of a fixture and returns `[{group, stack|error}]`.
fn build(case: &str) -> Value {
    let path = fixture_dir().join(format!("{case}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut objs = ClusterObjects::default();
    add_manifests(&mut objs, &text, &path).unwrap();
    let cfg = ModelConfig {
        cluster_name: "golden".into(),
        vpc_id: Some("vpc-0123456789abcdef0".into()),
        default_tags: [("CostCenter".to_string(), "42".to_string())].into(),
        ..ModelConfig::default()
    };
    let (groups, errors) = model::load_groups(&objs, &cfg.ingress_class);
    assert!(errors.is_empty(), "{errors:?}");
    let out: Vec<Value> = groups
        .values()
        .map(
            |g| match model::build_stack(g, &objs, &cfg, &BuildEnv::default()) {
                Ok(s) => json!({"group": g.id.as_string(), "stack": s}),
                Err(e) => json!({"group": g.id.as_string(), "error": e.to_string()}),
            },
        )
        .collect();
    let got = Value::Array(out);
    let golden = fixture_dir().join(format!("{case}.json"));
    let pretty = serde_json::to_string_pretty(&got).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &pretty).unwrap();
    }
    let want =
        std::fs::read_to_string(&golden).unwrap_or_else(|_| panic!("missing {}", golden.display()));
    assert_eq!(
        pretty,
        want,
        "stack for {case} differs from {}",
        golden.display()
    );
    got
}

fn stack(v: &Value, i: usize) -> &Value {
    &v[i]["stack"]
}

fn rule_summary(s: &Value) -> Vec<(String, i64, String)> {
    s["listenerRules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().into(),
                r["priority"].as_i64().unwrap(),
                r["ingress"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn single_ingress_names_tags_and_path_order() {
    let v = build("single");
    let s = stack(&v, 0);
    assert_eq!(s["stackId"], "default/echo");
    assert_eq!(s["loadBalancer"]["name"], "k8s-default-echo-a43b53ed19");
    assert_eq!(
        s["managedSecurityGroup"]["name"],
        "k8s-default-echo-b415eba7ae"
    );
    assert_eq!(
        s["backendSecurityGroup"]["name"],
        "k8s-traffic-golden-dd56de4137"
    );
    assert_eq!(
        s["targetGroups"][0]["name"],
        "k8s-default-echoserv-8583c0be11"
    );
    assert_eq!(s["targetGroups"][0]["id"], "default/echo-echoserver:80");
    assert_eq!(s["targetGroups"][0]["port"], 30080);
    let lb_tags = &s["loadBalancer"]["tags"];
    assert_eq!(lb_tags["elbv2.k8s.aws/cluster"], "golden");
    assert_eq!(lb_tags["ingress.k8s.aws/stack"], "default/echo");
    assert_eq!(lb_tags["ingress.k8s.aws/resource"], "LoadBalancer");
    assert_eq!(lb_tags["Team"], "web");
    assert_eq!(lb_tags["CostCenter"], "42");
    // Exact first, then prefixes longest first: /healthz, /api/ (→ /api, /api/*), / (→ /*).
    let paths: Vec<&Value> = s["listenerRules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["conditions"][1]["pathPatternConfig"]["values"])
        .collect();
    assert_eq!(
        paths,
        vec![
            &json!(["/healthz"]),
            &json!(["/api", "/api/*"]),
            &json!(["/*"])
        ]
    );
    assert_eq!(
        s["listeners"][0]["defaultActions"][0]["fixedResponseConfig"]["statusCode"],
        "404"
    );
    let tgb = &s["targetGroupBindings"][0];
    assert_eq!(tgb["name"], "k8s-default-echoserv-8583c0be11");
    assert_eq!(
        tgb["labels"],
        json!({"ingress.k8s.aws/stack-name": "echo", "ingress.k8s.aws/stack-namespace": "default"})
    );
    assert_eq!(tgb["spec"]["networking"][0]["port"], 30080);
}

#[test]
fn explicit_group_order_sets_rule_priorities() {
    let v = build("group_order");
    let s = stack(&v, 0);
    assert_eq!(s["stackId"], "shop");
    assert_eq!(s["members"], json!(["shop/api", "shop/admin", "shop/web"]));
    assert_eq!(s["loadBalancer"]["name"], "k8s-shop-e8bb5a951a");
    assert_eq!(
        rule_summary(s),
        vec![
            ("80:1".into(), 1, "shop/api".into()),
            ("80:2".into(), 2, "shop/admin".into()),
            ("80:3".into(), 3, "shop/web".into())
        ]
    );
    let names: Vec<&str> = s["targetGroups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"k8s-shop-api-e4e099a3c6"), "{names:?}");
    assert!(names.contains(&"k8s-shop-web-0fdfaf693f"), "{names:?}");
    assert_eq!(
        s["targetGroupBindings"][0]["labels"],
        json!({"ingress.k8s.aws/stack": "shop"})
    );
}

#[test]
fn https_with_certificates_and_ssl_redirect() {
    let v = build("https");
    let s = stack(&v, 0);
    let l80 = &s["listeners"][0];
    assert_eq!(l80["port"], 80);
    assert_eq!(
        l80["defaultActions"][0]["redirectConfig"],
        json!({"port": "443", "protocol": "HTTPS", "statusCode": "HTTP_301"})
    );
    let l443 = &s["listeners"][1];
    assert_eq!(l443["sslPolicy"], "ELBSecurityPolicy-TLS13-1-2-2021-06");
    assert_eq!(
        l443["certificates"][0],
        "arn:aws:acm:us-west-2:123456789012:certificate/aaa"
    );
    assert_eq!(
        rule_summary(s),
        vec![("443:1".into(), 1, "prod/app".into())]
    );
    assert_eq!(s["targetGroups"][0]["protocol"], "HTTPS");
    let cidrs: Vec<&Value> = s["managedSecurityGroup"]["ingress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["cidrIpv4"])
        .collect();
    assert_eq!(
        cidrs.len(),
        4,
        "two CIDRs on two ports, no IPv6 on an ipv4 LB"
    );
}

#[test]
fn service_health_check_annotations_override_ingress() {
    let v = build("healthcheck_service");
    let tg = &stack(&v, 0)["targetGroups"][0];
    assert_eq!(tg["healthCheck"]["path"], "/svc-health");
    assert_eq!(tg["healthCheck"]["intervalSeconds"], 30);
    assert_eq!(tg["healthCheck"]["healthyThresholdCount"], 3);
    assert_eq!(tg["healthCheck"]["matcher"], json!({"grpcCode": "0-99"}));
    assert_eq!(tg["protocolVersion"], "GRPC");
    assert_eq!(tg["tags"]["Owner"], "svc");
    assert_eq!(tg["tags"]["Cost"], "42");
    assert_eq!(tg["port"], 50051);
    let net = &stack(&v, 0)["targetGroupBindings"][0]["spec"]["networking"];
    assert_eq!(
        net.as_array().unwrap().len(),
        2,
        "traffic port and health-check port"
    );
}

#[test]
fn actions_and_conditions_annotations() {
    let v = build("actions_conditions");
    let s = stack(&v, 0);
    let rules = s["listenerRules"].as_array().unwrap();
    assert_eq!(
        rules[0]["actions"][0]["fixedResponseConfig"]["messageBody"],
        "maintenance"
    );
    assert_eq!(rules[0]["conditions"][0]["field"], "source-ip");
    // Prefix paths longest first: /missing (8) before /docs (5) before / (1).
    assert_eq!(
        rules[1]["actions"][0]["type"], "fixed-response",
        "missing Service is tolerated as 503"
    );
    assert_eq!(
        rules[1]["actions"][0]["fixedResponseConfig"]["messageBody"],
        "Backend service does not exist"
    );
    assert_eq!(rules[2]["actions"][0]["type"], "redirect");
    assert_eq!(
        rules[2]["actions"][0]["redirectConfig"]["host"],
        "docs.example.com"
    );
    let fwd = &rules[3]["actions"][0]["forwardConfig"];
    assert_eq!(
        fwd["targetGroups"][0],
        json!({"targetGroupArn": {"targetGroupArn": "demo/routes-blue:80"}, "weight": 80})
    );
    assert_eq!(
        fwd["targetGroupStickinessConfig"],
        json!({"enabled": true, "durationSeconds": 200})
    );
    assert_eq!(rules[3]["conditions"][0]["field"], "http-header");
    assert_eq!(s["targetGroups"].as_array().unwrap().len(), 2);
}

#[test]
fn ingress_class_params_override_annotations() {
    let v = build("ingress_class_params");
    assert_eq!(v[0]["group"], "public-web");
    let s = stack(&v, 0);
    assert_eq!(s["loadBalancer"]["name"], "k8s-publicweb-f4d87efe11");
    assert_eq!(s["loadBalancer"]["scheme"], "internet-facing");
    assert_eq!(s["loadBalancer"]["ipAddressType"], "dualstack");
    assert_eq!(
        s["loadBalancer"]["attributes"],
        json!({"idle_timeout.timeout_seconds": "120"})
    );
    assert_eq!(s["loadBalancer"]["tags"]["Env"], "from-params");
    assert_eq!(s["loadBalancer"]["tags"]["Team"], "site");
    assert_eq!(s["listeners"][0]["port"], 443);
    assert_eq!(
        s["listeners"][0]["certificates"],
        json!(["arn:aws:acm:us-east-1:111122223333:certificate/params"])
    );
    assert_eq!(s["targetGroups"][0]["targetType"], "ip");
    assert_eq!(s["targetGroups"][0]["port"], 8080);
    let v6: Vec<&Value> = s["managedSecurityGroup"]["ingress"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.get("cidrIpv6"))
        .collect();
    assert_eq!(v6, vec![&json!("2001:db8::/32")]);
}

#[test]
fn default_backend_becomes_listener_default_action() {
    let v = build("default_backend");
    let s = stack(&v, 0);
    assert!(s.get("listenerRules").is_none());
    assert_eq!(
        s["listeners"][0]["defaultActions"][0]["forwardConfig"]["targetGroups"][0]
            ["targetGroupArn"],
        json!({"targetGroupArn": "default/catchall-fallback:80"})
    );
}

#[test]
fn invalid_member_is_excluded_not_fatal() {
    let v = build("invalid_member");
    let s = stack(&v, 0);
    assert_eq!(s["members"], json!(["team/good"]));
    assert_eq!(s["excludedMembers"][0]["ingress"], "team/broken");
    assert_eq!(
        s["excludedMembers"][0]["annotation"],
        "alb.ingress.kubernetes.io/healthcheck-interval-seconds"
    );
    assert_eq!(
        s["excludedMembers"][0]["error"],
        "failed to parse int32 annotation, alb.ingress.kubernetes.io/healthcheck-interval-seconds: often: strconv.ParseInt: parsing \"often\": invalid syntax"
    );
    assert_eq!(
        rule_summary(s),
        vec![("80:1".into(), 1, "team/good".into())]
    );
}

#[test]
fn config_samples_plan_without_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/samples");
    let args = albc_model::plan::PlanArgs::from_flags([
        std::ffi::OsStr::new("-f"),
        dir.as_os_str(),
        std::ffi::OsStr::new("-o=json"),
    ])
    .unwrap();
    let mut out = Vec::new();
    let status = albc_model::plan::run(args, &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(status, albc_model::plan::EXIT_PLANNED, "{v:#}");
    let groups = v["groups"].as_array().unwrap();
    let ids: Vec<&str> = groups
        .iter()
        .map(|g| g["group"].as_str().unwrap())
        .collect();
    // Groups are ordered by id: explicit groups (no namespace) first.
    assert_eq!(ids, vec!["shop", "default/app", "default/echo"]);
    // The Gateway samples: an internet-facing ALB and an internal NLB, built without errors.
    let gateways: Vec<(&str, &str, &str)> = v["gateways"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            assert!(g.get("error").is_none(), "{g}");
            let lb = &g["stack"]["loadBalancer"];
            (
                g["gateway"].as_str().unwrap(),
                lb["type"].as_str().unwrap(),
                lb["scheme"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        gateways,
        vec![
            ("store/db", "network", "internal"),
            ("store/store", "application", "internet-facing")
        ]
    );
    for g in groups {
        assert!(g.get("error").is_none(), "{g}");
    }
    let shop = &groups[0]["stack"];
    assert_eq!(
        shop["members"],
        json!(["shop/maintenance", "shop/api", "shop/web"])
    );
    assert_eq!(
        shop["loadBalancer"]["tags"]["managed-by"],
        "aws-load-balancer-controller"
    );
    let services = v["services"].as_array().unwrap();
    assert_eq!(services.len(), 1, "{services:?}");
    assert_eq!(services[0]["service"], "default/echo-nlb");
    assert!(services[0].get("error").is_none(), "{}", services[0]);
    for f in [
        "targetgroupbinding-ip.yaml",
        "targetgroupbinding-instance.yaml",
    ] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        let tgb: albc_model::crd::TargetGroupBinding = serde_yaml::from_str(&text).unwrap();
        assert!(tgb.spec.target_type.is_some(), "{f}");
    }
}

/// `plan` without `-f` (the README's first command) plans exactly what `-f config/samples` does:
/// the embedded copies are complete, Gateways included.
#[test]
fn the_embedded_default_plans_the_config_samples() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/samples");
    let run = |flags: Vec<&std::ffi::OsStr>| -> Value {
        let args = albc_model::plan::PlanArgs::from_flags(flags).unwrap();
        let mut out = Vec::new();
        albc_model::plan::run(args, &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    };
    let json = std::ffi::OsStr::new("-o=json");
    let embedded = run(vec![json]);
    let from_dir = run(vec![std::ffi::OsStr::new("-f"), dir.as_os_str(), json]);
    for key in ["groups", "services", "gateways"] {
        assert_eq!(embedded[key], from_dir[key], "{key}");
    }
    assert_eq!(embedded["gateways"].as_array().map(Vec::len), Some(2));
}
