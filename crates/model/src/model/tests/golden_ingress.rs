//! Golden replay of upstream's Ingress model-builder table (`Test_defaultModelBuilder_Build` in
//! `pkg/ingress/model_builder_test.go`): each case's inputs (transcribed in
//! `golden_ingress/cases.yaml` and `services.yaml`) go through our model, and the stack rendered
//! by `upstream_json` must equal upstream's expected stack (`base.json` merged with the case's
//! `<case>.patch.json`, upstream's texts verbatim) field for field, names and hashes included;
//! the table's error cases must fail with upstream's error text (`wantErr` in `cases.yaml`).
//! Upstream's builder settings: cluster `cluster-dummy`, VPC `vpc-dummy`, default SSL policy
//! `ELBSecurityPolicy-2016-08`, the auto backend SG its mock returns, subnets its mocked
//! discovery returns.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use serde_json::{json, Value};

use crate::crd::IngressClassParams;
use crate::model::config::ModelConfig;
use crate::model::group::{ClassifiedIngress, ClusterObjects, IngressGroup};
use crate::model::subnets::SubnetInfo;
use crate::model::types::{GroupId, LoadBalancerScheme, TargetType};
use crate::model::upstream_json::{render, PlanFacts};
use crate::model::{build_stack, BuildEnv};

const BASE: &str = include_str!("../golden_ingress/base.json");
const INPUTS: &str = include_str!("../golden_ingress/cases.yaml");
const SERVICES: &str = include_str!("../golden_ingress/services.yaml");

const CASES: &[(&str, &str)] = &[
    ("ingress_vanilla_internal", include_str!("../golden_ingress/ingress_vanilla_internal.patch.json")),
    ("ingress_backend_sg_feature_disabled", include_str!("../golden_ingress/ingress_backend_sg_feature_disabled.patch.json")),
    ("ingress_vanilla_internet_facing", include_str!("../golden_ingress/ingress_vanilla_internet_facing.patch.json")),
    ("ingress_using_acm_and_internet_facing_case_with_the_same_acm_certificate_for_default_and_sni_listener", include_str!("../golden_ingress/ingress_using_acm_and_internet_facing_case_with_the_same_acm_certificate_for_default_and_sni_listener.patch.json")),
    ("ingress_using_acm_and_internet_facing", include_str!("../golden_ingress/ingress_using_acm_and_internet_facing.patch.json")),
    ("ingress_referenced_same_service_port_with_both_name_and_port", include_str!("../golden_ingress/ingress_referenced_same_service_port_with_both_name_and_port.patch.json")),
    ("ingress_inboundcidrs_in_ingressclassparams", include_str!("../golden_ingress/ingress_inboundcidrs_in_ingressclassparams.patch.json")),
    ("ingress_ssl_policy_in_ingressclassparams", include_str!("../golden_ingress/ingress_ssl_policy_in_ingressclassparams.patch.json")),
    ("ingress_certificate_arn_in_ingressclassparams", include_str!("../golden_ingress/ingress_certificate_arn_in_ingressclassparams.patch.json")),
    ("ingress_target_type_in_ingressclassparams", include_str!("../golden_ingress/ingress_target_type_in_ingressclassparams.patch.json")),
    ("ingress_wafv2aclarn_in_ingressclassparams", include_str!("../golden_ingress/ingress_wafv2aclarn_in_ingressclassparams.patch.json")),
    ("ingress_not_using_subnet_auto_discovery_and_internal", include_str!("../golden_ingress/ingress_not_using_subnet_auto_discovery_and_internal.patch.json")),
    ("ingress_with_sg_annotation", include_str!("../golden_ingress/ingress_with_sg_annotation.patch.json")),
    ("ingress_with_ipv6_service", include_str!("../golden_ingress/ingress_with_ipv6_service.patch.json")),
    ("target_type_ip_with_named_target_port", include_str!("../golden_ingress/target_type_ip_with_named_target_port.patch.json")),
    ("default_target_type_ip_with_named_target_port", include_str!("../golden_ingress/default_target_type_ip_with_named_target_port.patch.json")),
    ("ingress_default_ipv4_cidr_when_no_ip_range", include_str!("../golden_ingress/ingress_default_ipv4_cidr_when_no_ip_range.patch.json")),
    ("ingress_default_dualstack_cidr_when_no_ip_range", include_str!("../golden_ingress/ingress_default_dualstack_cidr_when_no_ip_range.patch.json")),
    ("ingress_ingress_with_managed_prefix_list_in_ingressclassparam", include_str!("../golden_ingress/ingress_ingress_with_managed_prefix_list_in_ingressclassparam.patch.json")),
    ("ingress_ingress_with_managed_prefix_list_in_ingressclassparam_input_prefixlistsidslegacy", include_str!("../golden_ingress/ingress_ingress_with_managed_prefix_list_in_ingressclassparam_input_prefixlistsidslegacy.patch.json")),
    ("ingress_ingress_with_managed_prefix_list", include_str!("../golden_ingress/ingress_ingress_with_managed_prefix_list.patch.json")),
    ("ingress_ingress_mixed_ip_address_managed_prefix_list", include_str!("../golden_ingress/ingress_ingress_mixed_ip_address_managed_prefix_list.patch.json")),
    ("ingress_vanilla_with_default_load_balancer_scheme_internet_facing", include_str!("../golden_ingress/ingress_vanilla_with_default_load_balancer_scheme_internet_facing.patch.json")),
];

const STANDARD_RULES: &str = r#"
- host: app-1.example.com
  http:
    paths:
    - {path: /svc-1, backend: {service: {name: svc-1, port: {name: http}}}}
    - {path: /svc-2, backend: {service: {name: svc-2, port: {name: http}}}}
- host: app-2.example.com
  http:
    paths:
    - {path: /svc-3, backend: {service: {name: svc-3, port: {name: https}}}}
"#;

/// RFC 7386 JSON merge patch, as upstream's test applies `wantStackPatch` to the base stack.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Some(p) = patch.as_object() else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    let t = target.as_object_mut().unwrap();
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

fn str_of<'a>(case: &'a Value, k: &str, default: &'a str) -> &'a str {
    case.get(k).and_then(Value::as_str).unwrap_or(default)
}

/// Upstream's mocked discovery result; each subnet in its own AZ with both role tags.
fn subnets(which: &str) -> Vec<SubnetInfo> {
    let list: &[(&str, &str)] = match which {
        "internet-facing" => &[
            ("subnet-c", "192.168.64.0/19"),
            ("subnet-d", "192.168.96.0/19"),
        ],
        _ => &[
            ("subnet-a", "192.168.0.0/19"),
            ("subnet-b", "192.168.32.0/19"),
        ],
    };
    list.iter()
        .enumerate()
        .map(|(i, (id, cidr))| SubnetInfo {
            id: id.to_string(),
            cidr_block: cidr.to_string(),
            availability_zone: format!("us-west-2{}", (b'a' + i as u8) as char),
            available_ips: 100,
            tags: BTreeMap::from([
                ("kubernetes.io/role/elb".into(), "1".into()),
                ("kubernetes.io/role/internal-elb".into(), "1".into()),
            ]),
            ipv6_cidrs: vec![format!("2600:1f13:{i}::/64")],
            ..Default::default()
        })
        .collect()
}

/// Builds case `name` through our model and renders it; `Err` when our model refuses it.
fn replay(name: &str, case: &Value) -> Result<Value, String> {
    // The group's one member, unless the case has only former members.
    let member: Option<Ingress> = case.get("rules").map(|rules| {
        let rules: Value = match rules {
            Value::String(s) if s == "standard" => serde_yaml::from_str(STANDARD_RULES).unwrap(),
            r => r.clone(),
        };
        serde_json::from_value(json!({
            "metadata": {"namespace": "ns-1", "name": "ing-1",
                "annotations": case.get("annotations").cloned().unwrap_or(json!({}))},
            "spec": {"rules": rules},
        }))
        .unwrap()
    });
    let inactive: Vec<Ingress> = case
        .get("inactive")
        .map(|v| serde_json::from_value(v.clone()).unwrap())
        .unwrap_or_default();
    assert!(
        member.is_some() || !inactive.is_empty(),
        "{name}: no Ingress"
    );
    let params: Option<IngressClassParams> = case.get("params").map(|spec| {
        serde_json::from_value(json!({"metadata": {"name": "params"}, "spec": spec})).unwrap()
    });
    let services: Vec<Service> = serde_yaml::from_str(SERVICES).unwrap();
    let objs = ClusterObjects {
        ingresses: member.iter().chain(&inactive).cloned().collect(),
        services,
        ..Default::default()
    };
    let group = IngressGroup {
        id: GroupId::implicit("ns-1", "ing-1"),
        members: member
            .iter()
            .map(|ingress| ClassifiedIngress {
                ingress,
                params: params.as_ref(),
            })
            .collect(),
        inactive_members: inactive.iter().collect(),
        excluded: vec![],
    };
    let flag = |k: &str| case.get(k).and_then(Value::as_bool);
    let mut cfg = ModelConfig {
        cluster_name: "cluster-dummy".into(),
        vpc_id: Some("vpc-dummy".into()),
        enable_backend_sg: flag("enableBackendSG").unwrap_or(true),
        default_target_type: match str_of(case, "defaultTargetType", "instance") {
            "ip" => TargetType::Ip,
            _ => TargetType::Instance,
        },
        default_scheme: match str_of(case, "defaultScheme", "internal") {
            "internet-facing" => LoadBalancerScheme::InternetFacing,
            _ => LoadBalancerScheme::Internal,
        },
        ..Default::default()
    };
    // Upstream's builder field `enableIPTargetType` is our gate of the same name.
    if let Some(on) = flag("enableIPTargetType") {
        cfg.feature_gates.insert("EnableIPTargetType".into(), on);
    }
    let env = BuildEnv {
        subnets: Some(subnets(str_of(case, "subnets", "internal"))),
        existing_load_balancer: case.get("existing").map(|e| {
            let scheme = serde_json::from_value(e["scheme"].clone()).unwrap();
            (
                scheme,
                serde_json::from_value(e["subnets"].clone()).unwrap(),
            )
        }),
    };
    let stack = build_stack(&group, &objs, &cfg, &env).map_err(|e| e.to_string())?;
    if !stack.excluded_members.is_empty() {
        return Err(format!("excluded: {:?}", stack.excluded_members));
    }
    let facts = PlanFacts {
        backend_sg: Some(str_of(case, "backendSG", "sg-auto").to_string()),
        subnets: None,
        security_groups: None,
    };
    Ok(render(&stack, &facts))
}

#[test]
fn upstream_ingress_model_builder_cases_match() {
    let inputs: Value = serde_yaml::from_str(INPUTS).unwrap();
    let base: Value = serde_json::from_str(BASE).unwrap();
    let mut failures = Vec::new();
    for (name, patch) in CASES {
        let case = inputs
            .get(*name)
            .unwrap_or_else(|| panic!("{name}: no inputs in cases.yaml"));
        let mut want = base.clone();
        merge_patch(&mut want, &serde_json::from_str(patch).unwrap());
        let got = replay(name, case);
        if got.as_ref() != Ok(&want) {
            failures.push(format!(
                "{name}:\n got: {}\nwant: {}",
                got.map_or_else(|e| e, |g| g.to_string()),
                want
            ));
        }
    }
    eprintln!(
        "upstream Ingress cases matching: {} of {}",
        CASES.len() - failures.len(),
        CASES.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Upstream's error cases of the same table: our model refuses them with upstream's text.
#[test]
fn upstream_ingress_error_cases_fail_with_upstream_texts() {
    let inputs: Value = serde_yaml::from_str(INPUTS).unwrap();
    let errors: Vec<(&String, &Value)> = inputs
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, c)| c.get("wantErr").is_some())
        .collect();
    assert_eq!(errors.len(), 4);
    for (name, case) in errors {
        let got = replay(name, case).map(|_| "a stack".to_string());
        assert_eq!(got, Err(str_of(case, "wantErr", "").to_string()), "{name}");
    }
}

#[test]
fn merge_patch_follows_rfc_7386() {
    let mut t = json!({"a": {"b": 1, "c": [1, 2]}, "d": 1});
    merge_patch(&mut t, &json!({"a": {"b": null, "c": [3]}, "e": {"f": 1}}));
    assert_eq!(t, json!({"a": {"c": [3]}, "d": 1, "e": {"f": 1}}));
}
