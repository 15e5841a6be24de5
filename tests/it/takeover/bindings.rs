//! The TargetGroupBinding upstream v3.5 writes for one target group of an Ingress stack
//! (`buildTargetGroupBindingSpec` + `buildTargetGroupBindingNetworking` in `pkg/ingress`, created
//! by `pkg/deploy/elbv2/target_group_binding_manager.go`): the target group's name, the Service's
//! namespace, the stack labels and no annotation; ARN, target type, protocol, Service reference,
//! one networking rule per port from the backend SG, node selector, IP address type and VPC.

use aws_load_balancer_controller::crd::TargetGroupBinding;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{json, Value};

use super::seed::{Shape, Tg};

/// `{metadata: {name, namespace, labels}, spec}` as upstream's binding manager creates it.
pub fn upstream(s: &Shape, tg: &Tg, name: &str, arn: &str, backend: &str, vpc: &str) -> Value {
    let port_ref: Value = match tg.port.parse::<i32>() {
        Ok(n) => json!(n),
        Err(_) => json!(tg.port),
    };
    let mut spec = json!({
        "targetGroupARN": arn,
        "targetType": tg.target_type,
        "targetGroupProtocol": tg.protocol,
        "serviceRef": {"name": tg.service, "port": port_ref},
        "ipAddressType": tg.ip_type,
        "vpcID": vpc,
    });
    if !tg.tgb_ports.is_empty() {
        let rules: Vec<Value> = tg
            .tgb_ports
            .iter()
            .map(|p| {
                json!({"from": [{"securityGroup": {"groupID": backend}}],
                    "ports": [{"protocol": "TCP", "port": p}]})
            })
            .collect();
        spec["networking"] = json!({ "ingress": rules });
    }
    if let Some(sel) = &tg.node_selector {
        spec["nodeSelector"] = sel.clone();
    }
    json!({
        "metadata": {"name": name, "namespace": s.namespace, "labels": s.stack_labels()},
        "spec": spec,
    })
}

/// Creates `b` as upstream left it: its TGB controller's finalizer, checkpoint annotations and
/// observed generation added.
pub async fn create_as_upstream(client: &kube::Client, mut b: Value) {
    b["apiVersion"] = json!("elbv2.k8s.aws/v1beta1");
    b["kind"] = json!("TargetGroupBinding");
    b["metadata"]["finalizers"] = json!(["elbv2.k8s.aws/resources"]);
    b["metadata"]["annotations"] = json!({
        "elbv2.k8s.aws/checkpoint": "cJs1V7Wb3l_b6q3JxSBLGSzRMBq8V8HJOVFSF8Z3MWk/DjPEHmS3frrK5IS2k8ILkUY5r7dQlaeGrRwTcw4tfvo",
        "elbv2.k8s.aws/checkpoint-timestamp": "1763500000"});
    let ns = b["metadata"]["namespace"].as_str().unwrap().to_string();
    let name = b["metadata"]["name"].as_str().unwrap().to_string();
    let obj: TargetGroupBinding = serde_json::from_value(b).unwrap();
    let api: Api<TargetGroupBinding> = Api::namespaced(client.clone(), &ns);
    let made = api.create(&PostParams::default(), &obj).await.unwrap();
    let body = json!({"status": {"observedGeneration": made.metadata.generation}});
    api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&body))
        .await
        .unwrap();
}
