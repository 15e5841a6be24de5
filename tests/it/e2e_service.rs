//! End to end for LoadBalancer Services with the real binary, the API test server and moto: an
//! instance-target Service becomes an NLB with upstream's name and tags, a TCP listener and a
//! target group per port, TargetGroupBindings and the status hostname; changing one port
//! replaces only that listener and target group; deleting the Service leaves nothing in moto and
//! releases the finalizer. An ip-target Service with TCP_UDP, UDP and TLS ports gets those
//! listeners and its pod registered. A Service upstream left (finalizer, NLB, target groups,
//! listeners, security groups and bindings with upstream's names and tags) is adopted without a
//! create or delete call, and deleting it then removes everything; so is a weighted one (its
//! listener forwarding to three target groups by weight), without a ModifyListener either.

use std::time::Duration;

use aws_load_balancer_controller::aws;
use aws_load_balancer_controller::crd::TargetGroupBinding;
use aws_load_balancer_controller::model::service::{build_service_stack, ServiceEnv};
use aws_load_balancer_controller::model::{Action, ModelConfig, Token};
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::ResourceExt;
use serde_json::json;

use crate::e2e_pod_gates::kubectl;
use crate::support::e2e::Cluster;
use crate::support::inventory::{inventory_of, Inventory};
use crate::support::moto_cloud::{cloud, Cloud};
use crate::support::nlb_seed::seed_as_upstream;
use crate::support::process::Controller;
use crate::tgb::{eventually, targets};

pub(crate) const WAIT: Duration = Duration::from_secs(45);
const STACK_TAG: &str = "service.k8s.aws/stack";
const FINALIZER: &str = "service.k8s.aws/resources";

pub(crate) fn start(c: &Cloud, k8s: &Cluster) -> Controller {
    let ctl = k8s.controller(&[
        "--cluster-name=e2e".into(),
        "--aws-region=us-west-2".into(),
        format!("--aws-vpc-id={}", c.vpc),
        format!(
            "--aws-api-endpoints=elasticloadbalancing={0},ec2={0}",
            c.moto.endpoint
        ),
    ]);
    ctl.wait_for_log("became leader", WAIT);
    ctl
}

pub(crate) fn apply(k8s: &Cluster, yaml: &str) {
    let (ok, out) = kubectl(&k8s.kubeconfig, &["apply", "-f", "-"], Some(yaml));
    assert!(ok, "{out}");
}

pub(crate) async fn inv(c: &Cloud, stack: &str) -> Inventory {
    inventory_of(c.elb.as_ref(), c.ec2.as_ref(), STACK_TAG, stack).await
}

pub(crate) async fn hostname(api: &Api<Service>, name: &str) -> Option<String> {
    let svc = api.get_opt(name).await.ok()??;
    svc.status?
        .load_balancer?
        .ingress?
        .first()?
        .hostname
        .clone()
}

fn listener_ports(inv: &Inventory) -> Vec<(u16, String)> {
    let mut v: Vec<(u16, String)> = inv
        .listeners
        .iter()
        .map(|l| (l.port, l.protocol.clone()))
        .collect();
    v.sort();
    v
}

/// The target group whose `service.k8s.aws/resource` tag is `id`.
fn tg<'a>(inv: &'a Inventory, id: &str) -> &'a aws::TargetGroup {
    &inv.tgs
        .iter()
        .find(|(_, t)| t.get("service.k8s.aws/resource").map(String::as_str) == Some(id))
        .unwrap_or_else(|| panic!("no target group {id}: {inv:#?}"))
        .0
}

fn instance_service(admin_port: i32) -> String {
    format!(
        r#"
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: demo
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing
spec:
  type: LoadBalancer
  loadBalancerClass: service.k8s.aws/nlb
  selector: {{app: web}}
  ports:
  - {{name: http, port: 80, targetPort: 8080, nodePort: 30080, protocol: TCP}}
  - {{name: admin, port: {admin_port}, targetPort: 9443, nodePort: 30443, protocol: TCP}}
"#
    )
}

pub(crate) const NS: &str = "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_to_nlb_in_moto_through_the_binary_then_change_a_port_then_delete() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    let ctl = start(&c, &k8s);
    apply(&k8s, NS);
    apply(&k8s, &instance_service(8443));
    let services: Api<Service> = Api::namespaced(k8s.client.clone(), "demo");
    eventually("the Service gets its hostname", WAIT, || async {
        hostname(&services, "web").await.is_some()
    })
    .await;

    // Upstream's shape, found by its tags as a user would.
    let first = inv(&c, "demo/web").await;
    assert_eq!(first.lbs.len(), 1, "{first:#?}");
    let (lb, lb_tags) = &first.lbs[0];
    assert!(lb.name.starts_with("k8s-demo-web-"), "{}", lb.name);
    assert_eq!(lb.scheme, "internet-facing");
    let tag = |k: &str| lb_tags.get(k).map(String::as_str);
    assert_eq!(tag("elbv2.k8s.aws/cluster"), Some("e2e"));
    assert_eq!(tag(STACK_TAG), Some("demo/web"));
    assert_eq!(tag("service.k8s.aws/resource"), Some("LoadBalancer"));
    assert_eq!(
        listener_ports(&first),
        vec![(80, "TCP".to_string()), (8443, "TCP".to_string())]
    );
    assert_eq!(first.tgs.len(), 2, "{first:#?}");
    for id in ["demo/web:80", "demo/web:8443"] {
        let g = tg(&first, id);
        assert!(g.name.starts_with("k8s-demo-web-"), "{}", g.name);
        assert_eq!(g.protocol.as_deref(), Some("TCP"));
        assert_eq!(g.target_type, "instance");
    }
    assert_eq!(tg(&first, "demo/web:80").port, Some(30080), "NodePort");
    assert_eq!(
        hostname(&services, "web").await.unwrap(),
        lb.dns_name.to_ascii_lowercase()
    );
    let svc = services.get("web").await.unwrap();
    assert!(svc.finalizers().contains(&FINALIZER.to_string()));
    let tgbs: Api<TargetGroupBinding> = Api::namespaced(k8s.client.clone(), "demo");
    let ours = ListParams::default()
        .labels("service.k8s.aws/stack-namespace=demo,service.k8s.aws/stack-name=web");
    let bound = |list: Vec<TargetGroupBinding>| {
        let mut v: Vec<String> = list.into_iter().map(|b| b.spec.target_group_arn).collect();
        v.sort();
        v
    };
    let mut arns: Vec<String> = first.tgs.iter().map(|(t, _)| t.arn.clone()).collect();
    arns.sort();
    assert_eq!(
        bound(tgbs.list(&ours).await.unwrap().items),
        arns,
        "one TargetGroupBinding per target group, with upstream's labels"
    );

    // Change one port: only its listener and target group are replaced.
    apply(&k8s, &instance_service(9443));
    eventually("the listener follows the port", WAIT, || async {
        listener_ports(&inv(&c, "demo/web").await)
            == vec![(80, "TCP".to_string()), (9443, "TCP".to_string())]
    })
    .await;
    eventually("the old target group goes", WAIT, || async {
        inv(&c, "demo/web").await.tgs.len() == 2
    })
    .await;
    let after = inv(&c, "demo/web").await;
    assert_eq!(after.lbs[0].0.arn, lb.arn, "same NLB");
    let l80 = |i: &Inventory| {
        i.listeners
            .iter()
            .find(|l| l.port == 80)
            .unwrap()
            .arn
            .clone()
    };
    assert_eq!(l80(&after), l80(&first), "listener 80 untouched");
    assert_eq!(
        tg(&after, "demo/web:80").arn,
        tg(&first, "demo/web:80").arn,
        "target group of port 80 untouched"
    );
    assert_ne!(
        tg(&after, "demo/web:9443").arn,
        tg(&first, "demo/web:8443").arn
    );
    eventually("the bindings follow", WAIT, || async {
        let mut arns: Vec<String> = after.tgs.iter().map(|(t, _)| t.arn.clone()).collect();
        arns.sort();
        bound(tgbs.list(&ours).await.unwrap().items) == arns
    })
    .await;

    // Delete: nothing of the stack is left and the finalizer is released.
    let (ok, out) = kubectl(
        &k8s.kubeconfig,
        &["delete", "service", "-n", "demo", "web", "--wait=false"],
        None,
    );
    assert!(ok, "{out}");
    eventually("the Service is gone", WAIT, || async {
        services.get_opt("web").await.unwrap().is_none()
    })
    .await;
    let gone = inv(&c, "demo/web").await;
    assert!(gone.is_empty() && gone.listeners.is_empty(), "{gone:#?}");
    assert!(tgbs.list(&ours).await.unwrap().items.is_empty());

    tokio::time::sleep(Duration::from_millis(200)).await;
    k8s.assert_requests_allowed_by_chart(&[
        "patch services demo/web",
        "patch services/status demo/web",
        "create targetgroupbindings.elbv2.k8s.aws demo/*",
    ]);
    drop(ctl);
    k8s.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ip_service_with_tcp_udp_udp_and_tls_ports_registers_its_pod() {
    let c = cloud().await;
    let cert = crate::takeover::seed::certificate(&c, "shop.example.com").await;
    let k8s = Cluster::start().await;
    let ctl = start(&c, &k8s);
    apply(&k8s, NS);
    let svc = format!(
        r#"
apiVersion: v1
kind: Service
metadata:
  name: edge
  namespace: demo
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: ip
    service.beta.kubernetes.io/aws-load-balancer-enable-tcp-udp-listener: "true"
    service.beta.kubernetes.io/aws-load-balancer-ssl-cert: {cert}
    service.beta.kubernetes.io/aws-load-balancer-ssl-ports: https
spec:
  type: LoadBalancer
  loadBalancerClass: service.k8s.aws/nlb
  selector: {{app: edge}}
  ports:
  - {{name: dns, port: 53, targetPort: 5353, protocol: TCP}}
  - {{name: dns-udp, port: 53, targetPort: 5353, protocol: UDP}}
  - {{name: syslog, port: 514, targetPort: 5514, protocol: UDP}}
  - {{name: https, port: 443, targetPort: 8443, protocol: TCP}}
"#
    );
    apply(&k8s, &svc);
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: edge-0, namespace: demo, labels: {app: edge}}\nspec:\n  containers: [{name: c, image: nginx}]\n";
    apply(&k8s, pod);
    let ip = "10.1.1.10";
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(k8s.client.clone(), "demo");
    let status = json!({"status": {"phase": "Running", "podIP": ip, "conditions": [
        {"type": "ContainersReady", "status": "True"}, {"type": "Ready", "status": "True"}]}});
    pods.patch_status("edge-0", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let slice = format!("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: edge-abc\n  namespace: demo\n  labels: {{kubernetes.io/service-name: edge}}\naddressType: IPv4\nports:\n- {{name: dns, port: 5353, protocol: TCP}}\n- {{name: dns-udp, port: 5353, protocol: UDP}}\n- {{name: syslog, port: 5514, protocol: UDP}}\n- {{name: https, port: 8443, protocol: TCP}}\nendpoints:\n- addresses: [\"{ip}\"]\n  conditions: {{ready: true, serving: true, terminating: false}}\n  targetRef: {{kind: Pod, name: edge-0, namespace: demo}}\n");
    apply(&k8s, &slice);

    let services: Api<Service> = Api::namespaced(k8s.client.clone(), "demo");
    eventually("the Service gets its hostname", WAIT, || async {
        hostname(&services, "edge").await.is_some()
    })
    .await;
    let got = inv(&c, "demo/edge").await;
    assert_eq!(
        listener_ports(&got),
        vec![
            (53, "TCP_UDP".to_string()),
            (443, "TLS".to_string()),
            (514, "UDP".to_string())
        ],
        "{got:#?}"
    );
    let tls = got.listeners.iter().find(|l| l.port == 443).unwrap();
    assert_eq!(tls.certificates, vec![cert.clone()]);
    assert_eq!(tls.ssl_policy.as_deref(), Some("ELBSecurityPolicy-2016-08"));
    assert_eq!(
        tg(&got, "demo/edge:53").protocol.as_deref(),
        Some("TCP_UDP")
    );
    assert_eq!(tg(&got, "demo/edge:514").protocol.as_deref(), Some("UDP"));
    let https = tg(&got, "demo/edge:443");
    assert_eq!(https.protocol.as_deref(), Some("TCP"), "backend stays TCP");
    assert_eq!(https.target_type, "ip");
    let arn = https.arn.clone();
    eventually("the pod is registered", WAIT, || async {
        targets(c.elb.as_ref(), &arn).await == vec![format!("{ip}:8443")]
    })
    .await;
    drop(ctl);
    k8s.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_left_by_upstream_is_adopted_without_creates_then_deleted() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    apply(&k8s, NS);
    // The Service as upstream left it: our class, its finalizer.
    let mut yaml = instance_service(8443);
    yaml = yaml.replace(
        "  namespace: demo\n",
        "  namespace: demo\n  finalizers: [service.k8s.aws/resources]\n",
    );
    apply(&k8s, &yaml);
    let services: Api<Service> = Api::namespaced(k8s.client.clone(), "demo");
    let svc = services.get("web").await.unwrap();
    let cfg = ModelConfig {
        cluster_name: "e2e".into(),
        vpc_id: Some(c.vpc.clone()),
        ..Default::default()
    };
    let stack = build_service_stack(&svc, &cfg, &ServiceEnv::default()).unwrap();
    let (tg_arns, _) = seed_as_upstream(&c, &stack).await;
    // Upstream's bindings (its labels, names = target group names).
    for b in &stack.target_group_bindings {
        let Token::TargetGroupArn(id) = &b.spec.target_group_arn else {
            panic!("{:?}", b.spec.target_group_arn)
        };
        let tgb = json!({
            "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
            "metadata": {"name": b.name, "namespace": b.namespace, "labels": b.labels},
            "spec": {"targetGroupARN": tg_arns[id], "targetType": "instance",
                     "serviceRef": {"name": b.spec.service_name, "port": b.spec.service_port},
                     "ipAddressType": "ipv4", "vpcID": c.vpc}
        });
        apply(&k8s, &serde_json::to_string(&tgb).unwrap());
    }
    let before = inv(&c, "demo/web").await;
    assert_eq!(before.lbs.len(), 1);

    c.moto.start_recording().await;
    let ctl = start(&c, &k8s);
    eventually("the adopted Service gets its hostname", WAIT, || async {
        hostname(&services, "web").await.is_some()
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let writes: Vec<String> = c
        .moto
        .recorded_actions()
        .into_iter()
        .filter(|a| {
            let op = a.split(':').nth(1).unwrap_or(a);
            op.starts_with("Create") || op.starts_with("Delete")
        })
        .collect();
    assert!(writes.is_empty(), "adoption created or deleted: {writes:?}");
    let after = inv(&c, "demo/web").await;
    assert_eq!(after.lbs[0].0.arn, before.lbs[0].0.arn);
    assert_eq!(after.tgs.len(), before.tgs.len());

    // And it can be deleted.
    let (ok, out) = kubectl(
        &k8s.kubeconfig,
        &["delete", "service", "-n", "demo", "web", "--wait=false"],
        None,
    );
    assert!(ok, "{out}");
    eventually("the Service is gone", WAIT, || async {
        services.get_opt("web").await.unwrap().is_none()
    })
    .await;
    let gone = inv(&c, "demo/web").await;
    assert!(gone.is_empty(), "{gone:#?}");
    drop(ctl);
    k8s.server.stop().await;
}

/// Upstream's weighted instance Service (`actions.TCP-80`: itself 1, `target-svc1:81` 2,
/// `target-svc2:82` 3, stickiness on) with its two NodePort backends, holding upstream's
/// finalizer.
const WEIGHTED: &str = r#"
apiVersion: v1
kind: Service
metadata:
  name: target-svc1
  namespace: demo
spec:
  type: NodePort
  selector: {app: web}
  ports:
  - {port: 81, targetPort: 8081, nodePort: 30081, protocol: TCP}
---
apiVersion: v1
kind: Service
metadata:
  name: target-svc2
  namespace: demo
spec:
  type: NodePort
  selector: {app: web}
  ports:
  - {port: 82, targetPort: 8082, nodePort: 30082, protocol: TCP}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: demo
  finalizers: [service.k8s.aws/resources]
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: external
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: instance
    service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing
    service.beta.kubernetes.io/actions.TCP-80: '{"type":"forward","forwardConfig":{"baseServiceWeight":1,"targetGroups":[{"serviceName":"target-svc1","servicePort":81,"weight":2},{"serviceName":"target-svc2","servicePort":82,"weight":3}],"targetGroupStickinessConfig":{"enabled":true}}}'
spec:
  type: LoadBalancer
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080, nodePort: 30080, protocol: TCP}
"#;

/// A weighted Service upstream made (its NLB whose listener forwards to the Service's own and
/// the two backends' target groups with weights and stickiness, as upstream's deployer writes
/// it; three target groups with upstream's names; three bindings) is adopted without creating,
/// deleting or modifying a listener or target group, and its weights stay as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weighted_service_left_by_upstream_is_adopted_without_writes() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    apply(&k8s, NS);
    apply(&k8s, WEIGHTED);
    let services: Api<Service> = Api::namespaced(k8s.client.clone(), "demo");
    let svc = services.get("web").await.unwrap();
    let mut backends = Vec::new();
    for name in ["target-svc1", "target-svc2"] {
        backends.push(services.get(name).await.unwrap());
    }
    let cfg = ModelConfig {
        cluster_name: "e2e".into(),
        vpc_id: Some(c.vpc.clone()),
        ..Default::default()
    };
    let env = ServiceEnv::default().with_backends_of(&svc, |_, name| {
        backends
            .iter()
            .find(|b| b.metadata.name.as_deref() == Some(name))
            .cloned()
    });
    let stack = build_service_stack(&svc, &cfg, &env).unwrap();
    assert_eq!(stack.target_groups.len(), 3, "{stack:#?}");
    let (tg_arns, _) = seed_as_upstream(&c, &stack).await;
    for b in &stack.target_group_bindings {
        let Token::TargetGroupArn(id) = &b.spec.target_group_arn else {
            panic!("{:?}", b.spec.target_group_arn)
        };
        let tgb = json!({
            "apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding",
            "metadata": {"name": b.name, "namespace": b.namespace, "labels": b.labels},
            "spec": {"targetGroupARN": tg_arns[id], "targetType": b.spec.target_type,
                     "serviceRef": {"name": b.spec.service_name, "port": b.spec.service_port},
                     "ipAddressType": "ipv4", "vpcID": c.vpc}
        });
        apply(&k8s, &serde_json::to_string(&tgb).unwrap());
    }
    let before = inv(&c, "demo/web").await;
    assert_eq!(before.tgs.len(), 3, "{before:#?}");
    let weights = |i: &Inventory| {
        let mut v: Vec<(String, Option<i32>)> = match &i.listeners[0].default_actions[..] {
            [Action::Forward { config }] => config
                .target_groups
                .iter()
                .map(|t| (t.target_group_arn.literal().unwrap().to_string(), t.weight))
                .collect(),
            other => panic!("{other:?}"),
        };
        v.sort();
        v
    };
    let mut want: Vec<(String, Option<i32>)> = [
        ("demo/web:80", 1),
        ("demo/target-svc1:81", 2),
        ("demo/target-svc2:82", 3),
    ]
    .iter()
    .map(|(id, w)| (tg_arns[*id].clone(), Some(*w)))
    .collect();
    want.sort();
    assert_eq!(weights(&before), want, "seeded as upstream writes it");

    c.moto.start_recording().await;
    let ctl = start(&c, &k8s);
    eventually("the adopted Service gets its hostname", WAIT, || async {
        hostname(&services, "web").await.is_some()
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let writes: Vec<String> = c
        .moto
        .recorded_actions()
        .into_iter()
        .filter(|a| {
            let op = a.split(':').nth(1).unwrap_or(a);
            op.starts_with("Create")
                || op.starts_with("Delete")
                || op == "ModifyListener"
                || op == "ModifyTargetGroup"
        })
        .collect();
    assert!(writes.is_empty(), "adoption wrote: {writes:?}");
    let after = inv(&c, "demo/web").await;
    assert_eq!(weights(&after), want);
    let sticky = match &after.listeners[0].default_actions[..] {
        [Action::Forward { config }] => config
            .target_group_stickiness_config
            .as_ref()
            .is_some_and(|s| s.enabled == Some(true)),
        _ => false,
    };
    assert!(sticky, "{:?}", after.listeners[0].default_actions);
    drop(ctl);
    k8s.server.stop().await;
}

/// `diff` lists what the Service reconciler would do for a new LoadBalancer Service (its
/// finalizer, the NLB) without writing anything to AWS or the cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_shows_the_services_pending_writes_and_sends_none() {
    let c = cloud().await;
    let k8s = Cluster::start().await;
    apply(&k8s, NS);
    apply(&k8s, &instance_service(8443));
    c.moto.start_recording().await;
    let (code, report, stderr) = crate::takeover::diff::run_diff(&c, &k8s.kubeconfig).await;
    assert_eq!(code, 2, "writes pending: {report:#}\n{stderr}");
    let stack = report["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "service" && s["stack"] == "demo/web")
        .unwrap_or_else(|| panic!("no service stack in {report:#}"));
    assert!(stack.get("error").is_none(), "{stack:#}");
    let calls: Vec<&str> = stack["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["call"].as_str().unwrap())
        .collect();
    assert!(calls.contains(&"kubernetes:patch Service"), "{calls:?}");
    assert!(
        calls.iter().any(|c| c.ends_with("CreateLoadBalancer")),
        "{calls:?}"
    );
    let sent: Vec<String> = c
        .moto
        .recorded_actions()
        .into_iter()
        .filter(|a| {
            let op = a.split(':').nth(1).unwrap_or(a);
            !(op.starts_with("Describe") || op.starts_with("Get") || op.starts_with("List"))
        })
        .collect();
    assert!(sent.is_empty(), "diff wrote to AWS: {sent:?}");
    let svc = Api::<Service>::namespaced(k8s.client.clone(), "demo")
        .get("web")
        .await
        .unwrap();
    assert!(svc.finalizers().is_empty(), "diff wrote to the cluster");
    k8s.server.stop().await;
}

/// `diff` against a Service stack upstream made (its finalizer and status hostname, its NLB,
/// listeners, target groups and security groups with upstream's names and tags, its bindings
/// with the TGB controller's finalizer): nothing to do and exit 0; after one target group's
/// health-check interval is changed out of band, exit 2 with exactly that ModifyTargetGroup.
/// Neither run sends a write to moto or changes the Service.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_shows_nothing_for_a_service_upstream_made_then_exactly_the_drift() {
    use crate::takeover::diff::{assert_read_only_aws, run_diff, writes};
    let c = cloud().await;
    let k8s = Cluster::start().await;
    apply(&k8s, NS);
    let yaml = instance_service(8443).replace(
        "  namespace: demo\n",
        "  namespace: demo\n  finalizers: [service.k8s.aws/resources]\n",
    );
    apply(&k8s, &yaml);
    let services: Api<Service> = Api::namespaced(k8s.client.clone(), "demo");
    let svc = services.get("web").await.unwrap();
    let cfg = ModelConfig {
        cluster_name: crate::takeover::CLUSTER.into(),
        vpc_id: Some(c.vpc.clone()),
        ..Default::default()
    };
    let stack = build_service_stack(&svc, &cfg, &ServiceEnv::default()).unwrap();
    let (tg_arns, backend) = seed_as_upstream(&c, &stack).await;
    for b in &stack.target_group_bindings {
        let Token::TargetGroupArn(id) = &b.spec.target_group_arn else {
            panic!("{:?}", b.spec.target_group_arn)
        };
        // Upstream's Service binding: every port in one rule from the backend security group.
        let ports: Vec<serde_json::Value> = b
            .spec
            .networking
            .iter()
            .map(|n| {
                let mut p =
                    json!({"protocol": n.protocol.as_ref().map_or(json!("TCP"), |p| json!(p))});
                if let Some(port) = &n.port {
                    p["port"] = json!(port);
                }
                p
            })
            .collect();
        let mut spec = json!({
            "targetGroupARN": tg_arns[id], "targetType": b.spec.target_type,
            "targetGroupProtocol": b.spec.target_group_protocol,
            "serviceRef": {"name": b.spec.service_name, "port": b.spec.service_port},
            "ipAddressType": b.spec.ip_address_type, "vpcID": c.vpc,
        });
        if !ports.is_empty() {
            spec["networking"] = json!({"ingress": [
                {"from": [{"securityGroup": {"groupID": backend}}], "ports": ports}
            ]});
        }
        let tgb = json!({
            "metadata": {"name": b.name, "namespace": b.namespace, "labels": b.labels},
            "spec": spec,
        });
        crate::takeover::bindings::create_as_upstream(&k8s.client, tgb).await;
    }
    let seeded = inv(&c, "demo/web").await;
    let dns = seeded.lbs[0].0.dns_name.to_ascii_lowercase();
    // Upstream's status: the hostname and every spec port with its protocol.
    let ports = json!([{"port": 80, "protocol": "TCP"}, {"port": 8443, "protocol": "TCP"}]);
    let status =
        json!({"status": {"loadBalancer": {"ingress": [{"hostname": dns, "ports": ports}]}}});
    services
        .patch_status("web", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let version = || async {
        services
            .get("web")
            .await
            .unwrap()
            .metadata
            .resource_version
            .unwrap()
    };
    let before = version().await;

    // 1. As upstream left it: nothing to do.
    c.moto.start_recording().await;
    let (code, report, stderr) = run_diff(&c, &k8s.kubeconfig).await;
    let stacks = report["stacks"].as_array().unwrap();
    let stack_of = |r: &serde_json::Value| {
        r["stacks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["kind"] == "service" && s["stack"] == "demo/web")
            .cloned()
            .unwrap_or_else(|| panic!("no service stack in {r:#}"))
    };
    let st = stack_of(&report);
    assert!(st.get("error").is_none(), "{st:#}");
    assert_eq!(st["writes"], json!([]), "{report:#}\nstderr:\n{stderr}");
    for s in stacks {
        assert_eq!(s["writes"], json!([]), "{s:#}");
    }
    assert_eq!(code, 0, "report: {report:#}\nstderr:\n{stderr}");
    assert_eq!(report["pendingWrites"], 0);
    assert_read_only_aws(&c);
    assert_eq!(version().await, before, "diff changed the Service");

    // 2. One target group's health-check interval changed out of band.
    let tg80 = tg(&seeded, "demo/web:80").clone();
    let interval = tg80.health_check.interval_seconds.unwrap();
    let drifted = crate::support::health_check::with_interval(&tg80, interval + 7);
    c.elb
        .modify_target_group(&tg80.arn, &drifted)
        .await
        .unwrap();
    c.moto.start_recording().await;
    let (code, report, stderr) = run_diff(&c, &k8s.kubeconfig).await;
    assert_eq!(code, 2, "report: {report:#}\nstderr:\n{stderr}");
    let w = writes(&report);
    assert_eq!(w.len(), 1, "exactly the one repair: {report:#}");
    assert_eq!(w[0].0, "elasticloadbalancing:ModifyTargetGroup");
    assert_eq!(w[0].1, tg80.arn);
    assert_eq!(
        w[0].2,
        vec![json!({
            "field": "healthCheckIntervalSeconds",
            "before": (interval + 7).to_string(),
            "after": interval.to_string(),
        })],
        "{report:#}"
    );
    assert_eq!(stack_of(&report)["writes"].as_array().unwrap().len(), 1);
    assert_read_only_aws(&c);
    assert_eq!(version().await, before, "diff changed the Service");
    let after = inv(&c, "demo/web").await;
    assert_eq!(
        tg(&after, "demo/web:80").health_check.interval_seconds,
        Some(interval + 7),
        "diff repaired the drift"
    );
    k8s.server.stop().await;
}
