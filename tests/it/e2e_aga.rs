//! End to end with the real binary and gate `GlobalAcceleratorController` on: the API test
//! server, a private moto_server for ELBv2 and EC2, and the Global Accelerator test server
//! (`support::ga_server`: AWS's protocol in front of the fake, moto does not serve the service)
//! named by `--aws-api-endpoints GlobalAccelerator=...`. An Ingress gets its ALB in moto; a
//! GlobalAccelerator pointing at the Ingress gets an accelerator whose endpoint is that ALB and
//! its status; an edit of its endpoint's weight reaches AWS; deleting it removes the accelerator
//! and releases the finalizer. Every request the controller made is one the chart's RBAC allows.
//! First, the test server against the SDK client the binary builds; last, `diff` reporting a
//! GlobalAccelerator's writes without sending them.

use std::time::Duration;

use crate::e2e_pod_gates::kubectl;
use crate::ingress::{inventory, DEMO, WAIT};
use crate::support::e2e::Cluster;
use crate::support::ga_server::{GaServer, ACCOUNT};
use crate::support::moto_cloud::{cloud, endpoints_flag};
use crate::takeover::diff::run_diff_with;
use crate::tgb::eventually;
use aws_load_balancer_controller::aws::fake::{spec, GaDeployment};
use aws_load_balancer_controller::aws::{build_global_accelerator, AwsConfig, Fence};
use aws_load_balancer_controller::crd::global_accelerator::{GlobalAccelerator, FINALIZER};
use aws_load_balancer_controller::model::aga::{
    Accelerator, AgaIpAddressType, AgaListener, AgaProtocol, ClientAffinity, EndpointConfiguration,
    EndpointGroup, PortRange,
};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use serde_json::json;

const ACCELERATOR: &str = r#"
apiVersion: aga.k8s.aws/v1beta1
kind: GlobalAccelerator
metadata: {name: web, namespace: demo}
spec:
  listeners:
  - endpointGroups:
    - endpoints:
      - {type: Ingress, name: app, weight: WEIGHT}
"#;

/// The test server answers the SDK client the binary builds (`--aws-api-endpoints`): writes and
/// reads in AWS's shapes, AWS's refusals with their codes.
#[tokio::test]
async fn the_ga_test_server_speaks_the_sdks_protocol() {
    std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
    let server = GaServer::start().await;
    let cfg = AwsConfig {
        region: Some("us-west-2".into()),
        api_endpoints: [("GlobalAccelerator".to_string(), server.endpoint.clone())].into(),
        max_retries: 0,
        ..AwsConfig::default()
    };
    let client = build_global_accelerator(&cfg, None, Fence::default()).await;
    let want = Accelerator {
        name: "edge".into(),
        ip_addresses: vec![],
        ip_address_type: AgaIpAddressType::Ipv4,
        enabled: Some(true),
        tags: [("Team".to_string(), "edge".to_string())].into(),
        crd_uid: "uid-1".into(),
        existing_arn: None,
    };
    let made = client.create_accelerator(&want).await.unwrap();
    assert!(
        made.arn.contains(&format!("::{ACCOUNT}:accelerator/")),
        "{}",
        made.arn
    );
    assert_eq!(made.status, "IN_PROGRESS");
    assert!(made.enabled);
    assert!(!made.ip_sets.is_empty(), "{made:?}");
    assert_eq!(client.describe_accelerator(&made.arn).await.unwrap(), made);
    assert_eq!(
        client.list_accelerators().await.unwrap(),
        vec![made.clone()]
    );
    assert_eq!(
        client.list_tags_for_resource(&made.arn).await.unwrap(),
        want.tags
    );
    let listener = AgaListener {
        id: "l".into(),
        protocol: AgaProtocol::Tcp,
        port_ranges: vec![PortRange {
            from_port: 80,
            to_port: 80,
        }],
        client_affinity: Some(ClientAffinity::None),
        endpoint_groups: vec![],
    };
    let l = client.create_listener(&made.arn, &listener).await.unwrap();
    assert_eq!(l.client_affinity, "NONE");
    assert_eq!(
        client.list_listeners(&made.arn).await.unwrap(),
        vec![l.clone()]
    );
    let remote =
        "arn:aws:elasticloadbalancing:us-west-2:123456789012:loadbalancer/app/web/0123456789abcdef";
    let group = EndpointGroup {
        id: "g".into(),
        region: "us-west-2".into(),
        traffic_dial_percentage: Some(100),
        port_overrides: vec![],
        endpoint_configurations: vec![EndpointConfiguration {
            endpoint_id: remote.into(),
            weight: Some(128),
            client_ip_preservation_enabled: None,
        }],
    };
    let g = client.create_endpoint_group(&l.arn, &group).await.unwrap();
    assert_eq!(g.endpoints[0].endpoint_id, remote);
    assert_eq!(g.endpoints[0].client_ip_preservation_enabled, Some(true));
    assert_eq!(g.traffic_dial_percentage, Some(100.0));
    let moved = EndpointConfiguration {
        weight: Some(7),
        ..group.endpoint_configurations[0].clone()
    };
    let g = client.set_endpoints(&g.arn, &[moved]).await.unwrap();
    assert_eq!(g.endpoints[0].weight, Some(7));
    assert_eq!(
        client.list_endpoint_groups(&l.arn).await.unwrap(),
        vec![g.clone()]
    );
    // AWS's refusal reaches the caller with its code.
    let err = client.delete_accelerator(&made.arn).await.unwrap_err();
    assert_eq!(err.code(), "AcceleratorNotDisabledException", "{err}");
    assert_eq!(server.fake.count("CreateEndpointGroup"), 1);
}

async fn hostname(api: &Api<Ingress>) -> Option<String> {
    let ing = api.get_opt("app").await.ok()??;
    ing.status?
        .load_balancer?
        .ingress?
        .first()?
        .hostname
        .clone()
}

/// The endpoints `(id, weight)` of every group of every accelerator of the test server.
fn endpoints(ga: &GaServer) -> Vec<(String, Option<i32>)> {
    let mut out = Vec::new();
    for (acc, _) in ga.fake.ga_accelerators() {
        for l in ga.fake.ga_listeners_of(&acc.arn) {
            for g in ga.fake.ga_endpoint_groups_of(&l.arn) {
                out.extend(g.endpoints.into_iter().map(|e| (e.endpoint_id, e.weight)));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn global_accelerator_on_an_ingress_alb_through_the_binary_then_edit_then_delete() {
    let c = cloud().await;
    let ga = GaServer::start().await;
    // Each change is DEPLOYED at once: the test does not wait for upstream's minute of requeue.
    ga.fake.set_ga_deployment(GaDeployment::Immediate);
    let k8s = Cluster::start().await;
    let (client, kubeconfig) = (k8s.client.clone(), k8s.kubeconfig.clone());
    let ctl = k8s.controller(&[
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!(
            "--aws-api-endpoints=elasticloadbalancing={0},ec2={0},GlobalAccelerator={1}",
            c.moto.endpoint, ga.endpoint
        ),
        "--feature-gates=GlobalAcceleratorController=true".into(),
    ]);
    ctl.wait_for_log("became leader", WAIT);

    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n";
    let (ok, out) = kubectl(&kubeconfig, &["create", "-f", "-"], Some(ns));
    assert!(ok, "{out}");
    let (ok, out) = kubectl(&kubeconfig, &["apply", "-f", "-"], Some(DEMO));
    assert!(ok, "{out}");
    let ingresses: Api<Ingress> = Api::namespaced(client.clone(), "demo");
    eventually("the Ingress gets its ALB", WAIT, || async {
        hostname(&ingresses).await.is_some()
    })
    .await;
    let inv = inventory(c.elb.as_ref(), c.ec2.as_ref(), "demo/app").await;
    assert_eq!(inv.lbs.len(), 1, "{inv:#?}");
    let alb = inv.lbs[0].0.arn.clone();

    // Created: the accelerator (the controller's tags), a TCP 80 listener read off the Ingress's
    // status, its endpoint group on the ALB; the object's status and finalizer.
    let (ok, out) = kubectl(
        &kubeconfig,
        &["apply", "-f", "-"],
        Some(&ACCELERATOR.replace("WEIGHT", "128")),
    );
    assert!(ok, "{out}");
    let accelerators: Api<GlobalAccelerator> = Api::namespaced(client.clone(), "demo");
    eventually("the accelerator is Ready", WAIT, || async {
        let Some(obj) = accelerators.get_opt("web").await.unwrap() else {
            return false;
        };
        obj.status.is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True" && c.reason == "AcceleratorReady")
        })
    })
    .await;
    let accs = ga.fake.ga_accelerators();
    assert_eq!(accs.len(), 1, "{accs:?}");
    let (acc, tags) = &accs[0];
    assert_eq!(
        tags.get("aga.k8s.aws/stack").map(String::as_str),
        Some("demo/web")
    );
    assert_eq!(
        tags.get("elbv2.k8s.aws/cluster").map(String::as_str),
        Some("e2e")
    );
    let listeners = ga.fake.ga_listeners_of(&acc.arn);
    assert_eq!(listeners.len(), 1);
    assert_eq!(listeners[0].protocol, "TCP");
    assert_eq!(
        (
            listeners[0].port_ranges[0].from_port,
            listeners[0].port_ranges[0].to_port
        ),
        (80, 80)
    );
    assert_eq!(endpoints(&ga), [(alb.clone(), Some(128))]);
    let obj = accelerators.get("web").await.unwrap();
    assert!(obj.finalizers().contains(&FINALIZER.to_string()));
    let status = obj.status.unwrap();
    assert_eq!(status.accelerator_arn.as_deref(), Some(acc.arn.as_str()));
    assert_eq!(status.dns_name.as_deref(), Some(acc.dns_name.as_str()));
    assert_eq!(status.status.as_deref(), Some("DEPLOYED"));

    // Edited: the endpoint's new weight reaches AWS, on the same accelerator.
    let (ok, out) = kubectl(
        &kubeconfig,
        &["apply", "-f", "-"],
        Some(&ACCELERATOR.replace("WEIGHT", "200")),
    );
    assert!(ok, "{out}");
    eventually("the weight follows the edit", WAIT, || async {
        endpoints(&ga) == [(alb.clone(), Some(200))]
    })
    .await;
    let after = ga.fake.ga_accelerators();
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].0.arn, acc.arn);

    // Deleted: the accelerator goes (disabled first), then the finalizer.
    let (ok, out) = kubectl(
        &kubeconfig,
        &[
            "delete",
            "globalaccelerator",
            "-n",
            "demo",
            "web",
            "--wait=false",
        ],
        None,
    );
    assert!(ok, "{out}");
    eventually("the object is gone", WAIT, || async {
        accelerators.get_opt("web").await.unwrap().is_none()
    })
    .await;
    assert!(ga.fake.ga_accelerators().is_empty());
    let ops: Vec<String> = ga
        .fake
        .write_calls()
        .into_iter()
        .map(|(_, op)| op)
        .collect();
    let disabled = ops.iter().rposition(|o| o == "UpdateAccelerator");
    let deleted = ops.iter().position(|o| o == "DeleteAccelerator");
    assert!(
        matches!((disabled, deleted), (Some(a), Some(b)) if a < b),
        "{ops:?}"
    );

    // Least privilege holds for everything this flow made the controller do.
    tokio::time::sleep(Duration::from_millis(200)).await;
    k8s.assert_requests_allowed_by_chart(&[
        "patch globalaccelerators.aga.k8s.aws demo/web",
        "patch globalaccelerators.aga.k8s.aws/status demo/web",
        "watch globalaccelerators.aga.k8s.aws */*",
    ]);

    drop(ctl);
    k8s.server.stop().await;
}

/// `diff` with the gate on reports a GlobalAccelerator's reconcile as the controller would make
/// it (finalizer, the accelerator, its listener and endpoint group on the ALB the Ingress's
/// status names, then the status) and sends none of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_shows_a_global_accelerators_writes_and_sends_none() {
    let c = cloud().await;
    let ga = GaServer::start().await;
    let k8s = Cluster::start().await;
    let lb = c
        .elb
        .create_load_balancer(&spec::alb("aga-web", &c.subnets, &[]))
        .await
        .unwrap();
    let client = k8s.client.clone();
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "demo"}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    // Another controller's Ingress (no class of ours), whose status names the ALB.
    let ing: Ingress = serde_json::from_value(json!({
        "metadata": {"name": "app", "namespace": "demo"},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}
    }))
    .unwrap();
    let ingresses: Api<Ingress> = Api::namespaced(client.clone(), "demo");
    ingresses
        .create(&PostParams::default(), &ing)
        .await
        .unwrap();
    let status = json!({"status": {"loadBalancer": {"ingress": [
        {"hostname": lb.dns_name.to_ascii_lowercase(), "ports": [{"port": 80, "protocol": "TCP"}]}
    ]}}});
    ingresses
        .patch_status("app", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let obj: GlobalAccelerator = serde_json::from_value(json!({
        "apiVersion": "aga.k8s.aws/v1beta1", "kind": "GlobalAccelerator",
        "metadata": {"name": "web", "namespace": "demo"},
        "spec": {"listeners": [{"endpointGroups": [{"endpoints": [{"type": "Ingress", "name": "app"}]}]}]}
    }))
    .unwrap();
    Api::<GlobalAccelerator>::namespaced(client.clone(), "demo")
        .create(&PostParams::default(), &obj)
        .await
        .unwrap();

    let endpoints = format!(
        "{},GlobalAccelerator={}",
        endpoints_flag(&c.moto),
        ga.endpoint
    );
    let gate = "--feature-gates=GlobalAcceleratorController=true".to_string();
    let (code, report, stderr) = run_diff_with(&c, &k8s.kubeconfig, &endpoints, &[gate]).await;
    assert_eq!(code, 2, "writes pending; stderr:\n{stderr}");
    let stack = report["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "globalaccelerator")
        .unwrap_or_else(|| panic!("no globalaccelerator stack: {report}"));
    assert_eq!(stack["stack"], "demo/web");
    assert!(stack.get("error").is_none(), "{stack}");
    let calls: Vec<&str> = stack["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["call"].as_str().unwrap())
        .collect();
    assert_eq!(
        calls,
        [
            "kubernetes:patch GlobalAccelerator",
            "globalaccelerator:CreateAccelerator",
            "globalaccelerator:CreateListener",
            "globalaccelerator:CreateEndpointGroup",
            "kubernetes:patch GlobalAccelerator/status",
        ],
        "{stack}"
    );
    assert!(
        stack["writes"][3].to_string().contains(&lb.arn),
        "the endpoint is the ALB: {stack}"
    );
    assert!(
        ga.fake.write_calls().is_empty(),
        "diff sent {:?}",
        ga.fake.write_calls()
    );
    assert!(
        ga.fake.count("ListAccelerators") > 0,
        "diff read the account"
    );
    k8s.server.stop().await;
}
