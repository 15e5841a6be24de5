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

#[test]
fn alb_target_control_config_crd_has_upstreams_names_columns_and_validation() {
    let crd = crd_json("albtargetcontrolconfigs.elbv2.k8s.aws");
    assert_eq!(crd["spec"]["group"], "elbv2.k8s.aws");
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    let names = &crd["spec"]["names"];
    assert_eq!(
        (&names["kind"], &names["plural"], &names["singular"]),
        (
            &json!("ALBTargetControlConfig"),
            &json!("albtargetcontrolconfigs"),
            &json!("albtargetcontrolconfig")
        )
    );
    let versions = crd["spec"]["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1);
    let v = &versions[0];
    assert_eq!(
        (&v["name"], &v["served"], &v["storage"]),
        (&json!("v1beta1"), &json!(true), &json!(true))
    );
    let cols: Vec<(&str, &str, &str)> = v["additionalPrinterColumns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["type"].as_str().unwrap(),
                c["jsonPath"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        cols,
        vec![
            ("IMAGE", "string", ".spec.image"),
            ("DESTINATION", "string", ".spec.destinationAddress"),
            ("AGE", "date", ".metadata.creationTimestamp"),
        ]
    );
    let spec = &v["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(
        spec["required"],
        json!([
            "controlAddress",
            "dataAddress",
            "destinationAddress",
            "image"
        ])
    );
    let props = &spec["properties"];
    let mut fields: Vec<&String> = props.as_object().unwrap().keys().collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            "controlAddress",
            "dataAddress",
            "destinationAddress",
            "image",
            "maxConcurrency",
            "protocolVersion",
            "resources",
            "rustLog",
            "tlsCertPath",
            "tlsKeyPath",
            "tlsSecurityPolicy"
        ]
    );
    for address in ["controlAddress", "dataAddress", "destinationAddress"] {
        assert_eq!(props[address]["pattern"], "^.+:[0-9]+$", "{address}");
        assert_eq!(props[address]["type"], "string", "{address}");
    }
    let mc = &props["maxConcurrency"];
    assert_eq!(
        (&mc["type"], &mc["format"], &mc["default"]),
        (&json!("integer"), &json!("int32"), &json!(1))
    );
    assert_eq!(mc["minimum"].as_f64(), Some(0.0));
    assert_eq!(mc["maximum"].as_f64(), Some(1000.0));
    assert_eq!(
        props["protocolVersion"]["enum"],
        json!(["HTTP1", "HTTP2", "GRPC"])
    );
    assert_eq!(props["rustLog"]["enum"], json!(["debug", "info", "error"]));
    let resources = &props["resources"]["properties"];
    for list in ["limits", "requests"] {
        assert_eq!(
            resources[list]["additionalProperties"]["x-kubernetes-int-or-string"],
            true
        );
    }
    assert_eq!(
        resources["claims"]["x-kubernetes-list-map-keys"],
        json!(["name"])
    );
    assert_eq!(resources["claims"]["x-kubernetes-list-type"], "map");
    assert_eq!(resources["claims"]["items"]["required"], json!(["name"]));
}

/// Upstream's `config/samples/elbv2_v1beta1_albtargetcontrolconfig.yaml` decodes into our type
/// and writes back unchanged.
#[test]
fn alb_target_control_config_round_trips_upstreams_sample() {
    let raw = json!({
        "apiVersion": "elbv2.k8s.aws/v1beta1",
        "kind": "ALBTargetControlConfig",
        "metadata": {
            "name": "aws-load-balancer-controller-alb-target-control-agent-config",
            "namespace": "kube-system"
        },
        "spec": {
            "image": "public.ecr.aws/aws-elb/target-optimizer/target-control-agent:latest",
            "dataAddress": "0.0.0.0:80",
            "controlAddress": "0.0.0.0:3000",
            "destinationAddress": "127.0.0.1:8080",
            "maxConcurrency": 1,
            "tlsCertPath": "/path/to/cert.pem",
            "tlsKeyPath": "/path/to/key.pem",
            "tlsSecurityPolicy": "ELBSecurityPolicy-TLS-1-2-2017-01",
            "protocolVersion": "HTTP1",
            "rustLog": "debug",
            "resources": {
                "requests": {"cpu": "100m", "memory": "128Mi"},
                "limits": {"cpu": "500m", "memory": "512Mi"}
            }
        }
    });
    let config: AlbTargetControlConfig = serde_json::from_value(raw.clone()).unwrap();
    assert_eq!(
        config.metadata.name.as_deref(),
        Some(alb_target_control_config::DEFAULT_NAME)
    );
    assert_eq!(config.spec.max_concurrency, Some(1));
    assert_eq!(config.spec.protocol_version.as_deref(), Some("HTTP1"));
    assert_eq!(serde_json::to_value(&config).unwrap(), raw);
}

/// Our sample (`config/samples/albtargetcontrolconfig.yaml`) is one the injector reads.
#[test]
fn alb_target_control_config_sample_decodes_under_the_read_name() {
    let sample: AlbTargetControlConfig = serde_yaml::from_str(include_str!(
        "../../../../config/samples/albtargetcontrolconfig.yaml"
    ))
    .unwrap();
    assert_eq!(
        sample.metadata.name.as_deref(),
        Some(alb_target_control_config::DEFAULT_NAME)
    );
    assert_eq!(
        sample.metadata.namespace.as_deref(),
        Some(alb_target_control_config::FALLBACK_NAMESPACE)
    );
    assert_eq!(sample.spec.control_address, "0.0.0.0:3000");
    let requests = sample.spec.resources.unwrap().requests.unwrap();
    assert_eq!(requests["cpu"].0, "100m");
}
