//! Tests of the generated CRDs against upstream's names, scope, versions and columns.

use super::*;
use serde_json::{json, Value};

fn crd_json(name: &str) -> Value {
    let crd = all_crds()
        .into_iter()
        .find(|c| c.metadata.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("missing CRD {name}"));
    serde_json::to_value(crd).unwrap()
}

#[test]
fn target_group_binding_crd_merges_two_versions_with_v1beta1_storage() {
    let crd = crd_json("targetgroupbindings.elbv2.k8s.aws");
    assert_eq!(crd["spec"]["group"], "elbv2.k8s.aws");
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    assert_eq!(crd["spec"]["names"]["kind"], "TargetGroupBinding");
    assert_eq!(crd["spec"]["names"]["plural"], "targetgroupbindings");
    let versions = crd["spec"]["versions"].as_array().unwrap();
    let summary: Vec<(String, bool, bool)> = versions
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["served"].as_bool().unwrap(),
                v["storage"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("v1alpha1".into(), true, false),
            ("v1beta1".into(), true, true)
        ]
    );
    let beta = &versions[1];
    assert_eq!(beta["subresources"]["status"], json!({}));
    let cols: Vec<(&str, &str, i64)> = beta["additionalPrinterColumns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["jsonPath"].as_str().unwrap(),
                c["priority"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        cols,
        vec![
            ("SERVICE-NAME", ".spec.serviceRef.name", 0),
            ("SERVICE-PORT", ".spec.serviceRef.port", 0),
            ("TARGET-TYPE", ".spec.targetType", 0),
            ("ARN", ".spec.targetGroupARN", 1),
            ("NAME", ".spec.targetGroupName", 2),
            ("AGE", ".metadata.creationTimestamp", 0),
        ]
    );
    let spec = &beta["schema"]["openAPIV3Schema"]["properties"]["spec"];
    let props: Vec<&String> = spec["properties"].as_object().unwrap().keys().collect();
    for field in [
        "targetGroupARN",
        "targetGroupName",
        "multiClusterTargetGroup",
        "targetType",
        "targetGroupProtocol",
        "serviceRef",
        "networking",
        "nodeSelector",
        "ipAddressType",
        "vpcID",
        "iamRoleArnToAssume",
        "assumeRoleExternalId",
    ] {
        assert!(props.iter().any(|p| p.as_str() == field), "missing {field}");
    }
    assert_eq!(spec["required"], json!(["serviceRef"]));
    assert_eq!(
        spec["properties"]["targetType"]["enum"],
        json!(["instance", "ip"])
    );
    assert_eq!(
        spec["properties"]["targetGroupProtocol"]["enum"],
        json!(["HTTP", "HTTPS", "TCP", "TLS", "UDP", "TCP_UDP", "QUIC", "TCP_QUIC"])
    );
    let port = &spec["properties"]["serviceRef"]["properties"]["port"];
    assert_eq!(port["x-kubernetes-int-or-string"], true);
    // v1alpha1 is the documented subset.
    let alpha = &versions[0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert!(alpha.get("nodeSelector").is_none());
    assert!(alpha.get("vpcID").is_none());
    assert!(alpha.get("targetGroupARN").is_some());
}

#[test]
fn ingress_class_params_crd_is_cluster_scoped_with_singular_and_columns() {
    let crd = crd_json("ingressclassparams.elbv2.k8s.aws");
    assert_eq!(crd["spec"]["scope"], "Cluster");
    assert_eq!(crd["spec"]["names"]["singular"], "ingressclassparam");
    assert_eq!(crd["spec"]["names"]["plural"], "ingressclassparams");
    let v = &crd["spec"]["versions"][0];
    assert_eq!(v["name"], "v1beta1");
    assert_eq!(v["storage"], true);
    let cols: Vec<&str> = v["additionalPrinterColumns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(cols, vec!["GROUP-NAME", "SCHEME", "IP-ADDRESS-TYPE", "AGE"]);
    let spec = &v["schema"]["openAPIV3Schema"]["properties"]["spec"];
    let text = spec.to_string();
    assert!(text.contains("has(self.PrefixListsIDs)"), "{text}");
    for f in [
        "PrefixListsIDs",
        "prefixListsIDs",
        "inboundCIDRs",
        "wafv2AclArn",
        "sslRedirectPort",
    ] {
        assert!(spec["properties"].get(f).is_some(), "missing {f}");
    }
    assert_eq!(
        spec["properties"]["ipAddressType"]["enum"],
        json!(["ipv4", "dualstack", "dualstack-without-public-ipv4"])
    );
}

#[test]
fn target_group_binding_round_trips_upstream_json() {
    let raw = json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1",
        "kind": "TargetGroupBinding",
        "metadata": {"name": "tgb", "namespace": "default"},
        "spec": {
            "targetGroupARN": "arn:aws:elasticloadbalancing:us-west-2:1:targetgroup/x/y",
            "targetType": "ip",
            "serviceRef": {"name": "svc", "port": 80},
            "ipAddressType": "ipv4",
            "vpcID": "vpc-0123456789abcdef0",
            "networking": {"ingress": [{"from": [{"securityGroup": {"groupID": "sg-1"}}],
                                        "ports": [{"protocol": "TCP", "port": 8080}]}]}
        },
        "status": {"observedGeneration": 3}
    });
    let tgb: TargetGroupBinding = serde_json::from_value(raw.clone()).unwrap();
    assert_eq!(
        tgb.spec.target_type,
        Some(target_group_binding::TargetType::Ip)
    );
    assert_eq!(serde_json::to_value(&tgb).unwrap(), raw);
}

#[test]
fn ingress_class_params_keeps_non_omitempty_waf_fields() {
    let icp = IngressClassParams::new("p", IngressClassParamsSpec::default());
    let v = serde_json::to_value(&icp).unwrap();
    assert_eq!(v["spec"], json!({"wafv2AclArn": "", "wafv2AclName": ""}));
}

#[test]
fn schemas_have_no_nullable_like_controller_gen() {
    for crd in all_crds() {
        let text = serde_json::to_string(&crd).unwrap();
        assert!(
            !text.contains("nullable"),
            "{}",
            crd.metadata.name.unwrap_or_default()
        );
        assert!(!text.contains(",null]"), "null in an enum");
    }
}
