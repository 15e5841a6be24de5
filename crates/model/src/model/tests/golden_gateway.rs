//! Golden replay of upstream's Gateway model-builder tests (`pkg/gateway/model/*_test.go`,
//! `pkg/gateway/routeutils/route_rule_precedence_test.go`, `listener_utils_test.go`): each
//! case's inputs written as manifests (`golden_gateway/*.yaml`: a Gateway, its routes,
//! Services, LoadBalancerConfigurations, TargetGroupConfigurations…) go through
//! `build_alb_gateway_stack` / `build_nlb_gateway_stack`, the stack is rendered in upstream's
//! marshalled schema (`upstream_json::render`) and must contain what upstream's test expects:
//! `want` holds the resources and fields that test asserts, transcribed from it (a field it
//! does not assert is left out; `null` means "must be absent"), `wantErr` a piece of the error
//! text it expects. Upstream's unit tests hand builders mocks; here the same values arrive
//! through the objects a user writes, so a case also checks that they get there.
//!
//! Besides the marshalled resources, a case may name facts upstream's tests assert that the
//! marshalled plan does not show, under `$` keys: `$certificates` (a listener's certificate
//! ARNs), `$discoveryHosts` (the hosts ACM discovery covers for it), `$route` (the route a rule comes from), `$listeners` (listener validation),
//! `$attachedRoutes` / `$refusals` / `$compatibleHostnames` (route attachment), and, for
//! cases that check one step only, `$mergedConfig` (`mergeOnly`) and `$props` (`propsFor`).
//! `vpcSubnets` lists the VPC's subnets a case resolves subnets from (EC2's answer).
//! Each YAML file's header lists the upstream cases it leaves out and why.

use serde_json::{json, Value};

use crate::model::gateway::{build_alb_gateway_stack, build_nlb_gateway_stack, GatewayInputs};
use crate::model::types::{LoadBalancerScheme, TargetType};
use crate::model::upstream_json::{
    render, PlanFacts, LISTENER, LISTENER_RULE, LOAD_BALANCER, SECURITY_GROUP, TARGET_GROUP,
    TARGET_GROUP_BINDING,
};
use crate::model::ModelConfig;

const SUITES: &[(&str, &str)] = &[
    (
        "target_groups",
        include_str!("../golden_gateway/target_groups.yaml"),
    ),
    (
        "load_balancer",
        include_str!("../golden_gateway/load_balancer.yaml"),
    ),
    (
        "listeners",
        include_str!("../golden_gateway/listeners.yaml"),
    ),
    (
        "precedence",
        include_str!("../golden_gateway/precedence.yaml"),
    ),
    (
        "listener_validation",
        include_str!("../golden_gateway/listener_validation.yaml"),
    ),
    (
        "attachment",
        include_str!("../golden_gateway/attachment.yaml"),
    ),
    (
        "lb_config_merge",
        include_str!("../golden_gateway/lb_config_merge.yaml"),
    ),
    (
        "tg_config",
        include_str!("../golden_gateway/tg_config.yaml"),
    ),
];

/// Objects of one case, by kind.
#[derive(Default)]
struct Objects {
    gateways: Vec<gateway_api::apis::standard::gateways::Gateway>,
    classes: Vec<gateway_api::apis::standard::gatewayclasses::GatewayClass>,
    http_routes: Vec<gateway_api::apis::standard::httproutes::HttpRoute>,
    tcp_routes: Vec<gateway_api::apis::experimental::tcproutes::TcpRoute>,
    udp_routes: Vec<gateway_api::apis::experimental::udproutes::UdpRoute>,
    reference_grants: Vec<gateway_api::apis::standard::referencegrants::ReferenceGrant>,
    services: Vec<k8s_openapi::api::core::v1::Service>,
    namespaces: Vec<k8s_openapi::api::core::v1::Namespace>,
    lb_configs: Vec<crate::crd::gateway::LoadBalancerConfiguration>,
    tg_configs: Vec<crate::crd::gateway::TargetGroupConfiguration>,
}

fn objects(case: &str, docs: &Value) -> Objects {
    fn de<T: serde::de::DeserializeOwned>(case: &str, d: &Value) -> T {
        serde_json::from_value(d.clone()).unwrap_or_else(|e| panic!("{case}: {e}: {d}"))
    }
    let mut o = Objects::default();
    for d in docs.as_array().into_iter().flatten() {
        match d["kind"].as_str().unwrap_or_default() {
            "Gateway" => o.gateways.push(de(case, d)),
            "GatewayClass" => o.classes.push(de(case, d)),
            "HTTPRoute" => o.http_routes.push(de(case, d)),
            "TCPRoute" => o.tcp_routes.push(de(case, d)),
            "UDPRoute" => o.udp_routes.push(de(case, d)),
            "ReferenceGrant" => o.reference_grants.push(de(case, d)),
            "Service" => o.services.push(de(case, d)),
            "Namespace" => o.namespaces.push(de(case, d)),
            "LoadBalancerConfiguration" => o.lb_configs.push(de(case, d)),
            "TargetGroupConfiguration" => o.tg_configs.push(de(case, d)),
            k => panic!("{case}: kind {k:?} is not read by this harness"),
        }
    }
    o
}

/// The builder settings of a case (upstream's builders take them as constructor arguments).
fn config(s: &Value) -> ModelConfig {
    let str_map = |k: &str| {
        s.get(k)
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut cfg = ModelConfig {
        cluster_name: s["cluster"].as_str().unwrap_or("my-cluster").into(),
        vpc_id: Some(s["vpc"].as_str().unwrap_or("vpc-xxx").into()),
        default_target_type: match s["defaultTargetType"].as_str() {
            Some("ip") => TargetType::Ip,
            _ => TargetType::Instance,
        },
        default_scheme: match s["defaultScheme"].as_str() {
            Some("internet-facing") => LoadBalancerScheme::InternetFacing,
            _ => LoadBalancerScheme::Internal,
        },
        enable_backend_sg: s["enableBackendSG"].as_bool().unwrap_or(true),
        default_tags: str_map("defaultTags"),
        external_managed_tags: s
            .get("externalManagedTags")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default(),
        ..ModelConfig::default()
    };
    if let Some(p) = s["defaultSSLPolicy"].as_str() {
        cfg.default_ssl_policy = p.into();
    }
    for (gate, on) in s
        .get("featureGates")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        cfg.feature_gates
            .insert(gate.clone(), on.as_bool().unwrap_or(false));
    }
    cfg
}

/// Builds the case's one Gateway and renders its stack; `Err` with the build error.
fn replay(name: &str, case: &Value) -> Result<Value, String> {
    let o = objects(name, &case["objects"]);
    let [gw] = &o.gateways[..] else {
        panic!("{name}: one Gateway expected");
    };
    let ns = gw.metadata.namespace.as_deref().unwrap_or("default");
    let lb_config = |ns: Option<&str>, n: &str| {
        o.lb_configs.iter().find(|c| {
            c.metadata.name.as_deref() == Some(n) && c.metadata.namespace.as_deref() == ns
        })
    };
    let class = o
        .classes
        .iter()
        .find(|c| c.metadata.name.as_deref() == Some(gw.spec.gateway_class_name.as_str()));
    let class_config = class
        .and_then(|c| c.spec.parameters_ref.as_ref())
        .and_then(|p| lb_config(p.namespace.as_deref(), &p.name));
    let gateway_config = gw
        .spec
        .infrastructure
        .as_ref()
        .and_then(|i| i.parameters_ref.as_ref())
        .and_then(|p| lb_config(Some(ns), &p.name));
    let inputs = GatewayInputs {
        class_config,
        gateway_config,
        http_routes: &o.http_routes,
        tcp_routes: &o.tcp_routes,
        udp_routes: &o.udp_routes,
        reference_grants: &o.reference_grants,
        services: &o.services,
        namespaces: &o.namespaces,
        tg_configs: &o.tg_configs,
        ..GatewayInputs::new(gw)
    };
    // Upstream's merger tests: the merged configuration itself, nothing built from it.
    if case["mergeOnly"].as_bool() == Some(true) {
        let merged = crate::model::gateway::build::merged_config(&inputs);
        return Ok(json!({ "$mergedConfig": serde_json::to_value(merged).unwrap() }));
    }
    // Upstream's TargetGroupConfiguration tests: the props resolved for the case's (first)
    // HTTPRoute and the Service `propsFor` names, over the Gateway's default configuration.
    if let Some(svc) = case.get("propsFor") {
        use crate::model::gateway::target_groups::{over_default, props_for, route_props};
        let route = crate::model::gateway::routes::http_route(&o.http_routes[0]);
        let (ns, name) = (svc["namespace"].as_str(), svc["name"].as_str());
        let default = crate::model::gateway::build::default_target_group_config(&inputs)?;
        let props = over_default(
            props_for(
                &o.tg_configs,
                &route,
                ns.unwrap_or_default(),
                name.unwrap_or_default(),
            ),
            default.map(|d| route_props(&d, &route)).as_ref(),
        );
        return Ok(json!({ "$props": serde_json::to_value(props).unwrap() }));
    }
    let cfg = config(&case["settings"]);
    // The VPC's subnets where a case resolves them (upstream's tests mock the EC2 answer).
    let vpc: Option<Vec<crate::model::subnets::SubnetInfo>> = case.get("vpcSubnets").map(|v| {
        serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{name}: vpcSubnets: {e}"))
    });
    let built = match case["lb"].as_str().unwrap_or("alb") {
        "nlb" => build_nlb_gateway_stack(&inputs, &cfg, vpc.as_deref()),
        _ => build_alb_gateway_stack(&inputs, &cfg, vpc.as_deref()),
    }
    .map_err(|e| e.to_string())?;
    let facts = PlanFacts {
        backend_sg: Some("sg-backend".into()),
        ..Default::default()
    };
    let mut got = reshape(&render(&built.stack, &facts)["resources"]);
    // Upstream's marshalled plan hides certificate ARNs (existing-certificate references carry
    // none), while its listener tests assert them: they are added under "$certificates".
    for l in &built.stack.listeners {
        if let Some(o) = got["Listener"][&l.id].as_object_mut() {
            o.insert("$certificates".into(), json!(l.certificates));
            // The hosts ACM discovery covers (upstream's tests assert what its mock is asked).
            let hosts: Vec<&String> = (l.certificate_discovery.iter())
                .flat_map(|m| m.discovery_hosts.iter().flatten())
                .collect();
            if !hosts.is_empty() {
                o.insert("$discoveryHosts".into(), json!(hosts));
            }
        }
    }
    // Upstream's listener validation (listener status): per listener, accepted or the reason.
    got["$listeners"] = built
        .listeners
        .iter()
        .map(|(name, v)| {
            (
                name.clone(),
                json!({"valid": v.valid, "reason": v.reason, "message": v.message}),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    // Upstream's attachment tests: attached (route, parentRef) pairs per listener, refusals
    // with their route status reason, and the hostnames a route serves on a port (a set:
    // sorted here).
    let a = &built.attachment;
    let keys: Vec<String> = match case["lb"].as_str() {
        Some("nlb") => (o.tcp_routes.iter().map(|r| &r.metadata))
            .chain(o.udp_routes.iter().map(|r| &r.metadata))
            .map(crate::model::group::key_of)
            .collect(),
        _ => o
            .http_routes
            .iter()
            .map(|r| crate::model::group::key_of(&r.metadata))
            .collect(),
    };
    got["$attachedRoutes"] = a
        .attached_routes
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(l, n)| (l.clone(), json!(n)))
        .collect::<serde_json::Map<_, _>>()
        .into();
    got["$refusals"] = a
        .refusals
        .iter()
        .map(|r| json!({"route": r.route, "reason": r.reason, "message": r.message}))
        .collect();
    got["$compatibleHostnames"] = a
        .hostnames
        .iter()
        .filter(|(_, h)| !h.is_empty())
        .map(|((port, i), h)| (format!("{port}/{}", keys[*i]), json!(h)))
        .collect::<serde_json::Map<_, _>>()
        .into();
    // Upstream's precedence tests assert which route each sorted rule comes from.
    for r in &built.stack.listener_rules {
        if let Some(o) = got["ListenerRule"][&r.id].as_object_mut() {
            o.insert("$route".into(), json!(r.ingress));
        }
    }
    Ok(got)
}

/// The rendered resources keyed as cases name them: the one load balancer and managed
/// security group, listeners and rules by id (`<port>`, `<port>:<priority>`), target groups
/// and bindings by name (upstream's tests assert names, not the long target-group ids).
fn reshape(res: &Value) -> Value {
    let kind = |k: &str| res[k].as_object().cloned().unwrap_or_default();
    let by = |k: &str, key: &dyn Fn(&Value) -> String| -> Value {
        kind(k)
            .into_iter()
            .map(|(id, r)| {
                let spec = r["spec"].clone();
                let name = key(&spec);
                (if name.is_empty() { id } else { name }, spec)
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let one = |k: &str, id: &str| res[k][id]["spec"].clone();
    json!({
        "LoadBalancer": one(LOAD_BALANCER, "LoadBalancer"),
        "SecurityGroup": one(SECURITY_GROUP, "ManagedLBSecurityGroup"),
        "Listener": by(LISTENER, &|_| String::new()),
        "ListenerRule": by(LISTENER_RULE, &|_| String::new()),
        "TargetGroup": by(TARGET_GROUP, &|s| s["name"].as_str().unwrap_or_default().into()),
        "TargetGroupBinding": by(TARGET_GROUP_BINDING, &|s| {
            s["template"]["metadata"]["name"].as_str().unwrap_or_default().into()
        }),
    })
}

/// Kinds whose entries a case lists completely when it names the kind at all.
const LISTED: &[&str] = &[
    "Listener",
    "ListenerRule",
    "TargetGroup",
    "TargetGroupBinding",
    "$listeners",
    "$attachedRoutes",
    "$compatibleHostnames",
];

/// A case's `want` against the reshaped stack. Listed kinds must have exactly the entries the
/// case names; the key `"*"` stands for the one entry of a kind when upstream's test does not
/// name it (its name is not what that test is about).
fn compare(got: &Value, want: &Value, out: &mut Vec<String>) {
    let mut got = got.clone();
    for k in LISTED {
        let (Some(w), Some(g)) = (want[*k].as_object(), got[*k].as_object_mut()) else {
            continue;
        };
        if w.len() == 1 && w.contains_key("*") && g.len() == 1 {
            let only = g.values().next().cloned().unwrap_or_default();
            *g = serde_json::Map::from_iter([("*".to_string(), only)]);
        }
        let (w, g): (Vec<_>, Vec<_>) = (w.keys().collect(), g.keys().collect());
        if w != g {
            out.push(format!("{k}: want {w:?}, got {g:?}"));
        }
    }
    mismatches("", Some(&got), want, out);
}

/// Keys whose object values must match exactly.
const EXACT: &[&str] = &["/tags", "/labels", "/annotations"];

/// Where `got` misses what `want` asks for: objects by key (`null` = key absent), arrays
/// element-wise with the same length, anything else equal.
fn mismatches(path: &str, got: Option<&Value>, want: &Value, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Null, None | Some(Value::Null)) => {}
        (Value::Null, Some(g)) => out.push(format!("{path}: want absent, got {g}")),
        (_, None) => out.push(format!("{path}: missing, want {want}")),
        // `{"$matches": <regex>}`: upstream asserts only the shape (generated names).
        (Value::Object(w), Some(g)) if w.contains_key("$matches") => {
            let re = regex::Regex::new(w["$matches"].as_str().unwrap_or_default()).unwrap();
            if !g.as_str().is_some_and(|g| re.is_match(g)) {
                out.push(format!("{path}: want a match of {re}, got {g}"));
            }
        }
        // Maps of user data are compared whole: an extra tag is as wrong as a missing one.
        (Value::Object(w), Some(g)) if EXACT.iter().any(|k| path.ends_with(k)) && g != want => out
            .push(format!(
                "{path}: want {}, got {g}",
                Value::Object(w.clone())
            )),
        (Value::Object(w), Some(Value::Object(g))) => {
            for (k, wv) in w {
                mismatches(&format!("{path}/{k}"), g.get(k), wv, out);
            }
        }
        (Value::Array(w), Some(Value::Array(g))) if w.len() == g.len() => {
            for (i, wv) in w.iter().enumerate() {
                mismatches(&format!("{path}[{i}]"), g.get(i), wv, out);
            }
        }
        (w, Some(g)) if w == g => {}
        (w, Some(g)) => out.push(format!("{path}: want {w}, got {g}")),
    }
}

/// Runs every case of every suite; returns (cases, failures).
fn run() -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut count = 0;
    for (suite, text) in SUITES {
        let mut doc: serde_yaml::Value = serde_yaml::from_str(text).unwrap();
        doc.apply_merge().unwrap();
        let doc: Value = serde_json::to_value(doc).unwrap();
        for case in doc["cases"].as_array().unwrap() {
            count += 1;
            let name = format!("{suite}: {}", case["name"].as_str().unwrap());
            let got = replay(&name, case);
            let mut out = Vec::new();
            match (&got, case.get("wantErr").and_then(Value::as_str)) {
                (Err(e), Some(w)) if e.contains(w) => {}
                (Err(e), Some(w)) => out.push(format!("error {e:?}, want one containing {w:?}")),
                (Ok(_), Some(w)) => out.push(format!("built a stack, want error {w:?}")),
                (Err(e), None) => out.push(format!("error {e}")),
                (Ok(g), None) => compare(g, &case["want"], &mut out),
            }
            if !out.is_empty() {
                failures.push(format!("{name}:\n  {}", out.join("\n  ")));
            }
        }
    }
    (count, failures)
}

#[test]
fn upstream_gateway_model_builder_cases_match() {
    let (count, failures) = run();
    eprintln!(
        "upstream Gateway cases matching: {} of {count}",
        count - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn mismatches_checks_subsets_absence_and_array_lengths() {
    let got = json!({"a": {"b": 1, "c": [1, 2]}, "d": 1});
    let mut out = Vec::new();
    mismatches(
        "",
        Some(&got),
        &json!({"a": {"c": [1, 2]}, "e": null}),
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    mismatches(
        "",
        Some(&got),
        &json!({"a": {"c": [1]}, "d": null}),
        &mut out,
    );
    mismatches("", Some(&got), &json!({"a": {"b": 2}, "x": 1}), &mut out);
    assert_eq!(out.len(), 4, "{out:?}");
    let named = json!({"n": "k8s-a-b-0123456789"});
    out.clear();
    mismatches(
        "",
        Some(&named),
        &json!({"n": {"$matches": "^k8s-a-b-[0-9]{10}$"}}),
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    mismatches(
        "",
        Some(&named),
        &json!({"n": {"$matches": "^k8s-a-c-"}}),
        &mut out,
    );
    assert_eq!(out.len(), 1, "{out:?}");
}

/// The Gateway's `spec.infrastructure.labels` reach the TargetGroupBinding next to the stack
/// labels the deployer matches bindings by (upstream merges them the same way, stack first).
#[test]
fn infrastructure_labels_join_the_stack_labels_of_bindings() {
    let doc: Value =
        serde_json::to_value(serde_yaml::from_str::<serde_yaml::Value>(SUITES[0].1).unwrap())
            .unwrap();
    let mut gw = doc["objects"]["alb_gw"].clone();
    gw["spec"]["infrastructure"] = json!({"labels": {
        "labelfoo": "labelbar", "gateway.k8s.aws.alb/stack-name": "not-mine"},
        "annotations": {"annfoo": "annbar"}});
    let objs = json!([
        gw,
        doc["objects"]["http_route"],
        doc["objects"]["grant"],
        doc["objects"]["svc"]
    ]);
    let o = objects("labels", &objs);
    let inputs = GatewayInputs {
        http_routes: &o.http_routes,
        services: &o.services,
        reference_grants: &o.reference_grants,
        ..GatewayInputs::new(&o.gateways[0])
    };
    let built = build_alb_gateway_stack(&inputs, &config(&json!({})), None).unwrap();
    let labels = &built.stack.target_group_bindings[0].labels;
    assert_eq!(labels["labelfoo"], "labelbar");
    assert_eq!(labels["gateway.k8s.aws.alb/stack-name"], "my-gw");
    assert_eq!(labels["gateway.k8s.aws.alb/stack-namespace"], "my-gw-ns");
    // Its annotations are the binding's, and upstream's model shows them.
    let tgb = &built.stack.target_group_bindings[0];
    let want = std::collections::BTreeMap::from([("annfoo".to_string(), "annbar".to_string())]);
    assert_eq!(tgb.annotations.as_ref(), Some(&want));
    let text = render(&built.stack, &PlanFacts::default()).to_string();
    assert!(
        text.contains(r#""annotations":{"annfoo":"annbar"}"#),
        "{text}"
    );
}

/// An empty `nodeSelector` in a TargetGroupConfiguration selects all nodes: kept on instance
/// bindings (upstream keeps the non-nil selector), dropped for ip targets.
#[test]
fn empty_node_selector_is_kept_for_instance_targets() {
    let doc: Value =
        serde_json::to_value(serde_yaml::from_str::<serde_yaml::Value>(SUITES[0].1).unwrap())
            .unwrap();
    let o = &doc["objects"];
    let tgc = |tt: &str| {
        json!({"apiVersion": "gateway.k8s.aws/v1beta1", "kind": "TargetGroupConfiguration",
            "metadata": {"name": "my-svc", "namespace": "my-svc-ns"},
            "spec": {"targetReference": {"name": "my-svc"},
                "defaultConfiguration": {"targetType": tt, "nodeSelector": {}}}})
    };
    for (tt, want) in [("instance", Some(Default::default())), ("ip", None)] {
        let objs = json!([o["alb_gw"], o["http_route"], o["grant"], o["svc"], tgc(tt)]);
        let o = objects(tt, &objs);
        let inputs = GatewayInputs {
            http_routes: &o.http_routes,
            services: &o.services,
            reference_grants: &o.reference_grants,
            tg_configs: &o.tg_configs,
            ..GatewayInputs::new(&o.gateways[0])
        };
        let built = build_alb_gateway_stack(&inputs, &config(&json!({})), None).unwrap();
        assert_eq!(
            built.stack.target_group_bindings[0].spec.node_selector, want,
            "{tt}"
        );
    }
}

/// The dry-run plan of whole Gateways, compared with upstream's marshalled text.
#[path = "golden_gateway_plan.rs"]
mod plan;
