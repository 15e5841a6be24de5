//! What upstream's deployer (v3.5) leaves behind for one Ingress stack, written request by
//! request: its security groups, target groups, load balancer, listeners and rules with its names
//! and tracking tags, then the Ingresses' finalizers and status and the TargetGroupBindings in
//! upstream's shape (one networking rule per port), with the TGB controller's finalizer,
//! checkpoint annotations and observed generation. Nothing here asks our model anything.

use std::collections::BTreeMap;

use aws_load_balancer_controller::aws::fake::spec;
use aws_load_balancer_controller::aws::*;
use aws_load_balancer_controller::model::HealthCheck;
use aws_load_balancer_controller::model::{
    self, FixedResponseConfig, ForwardConfig, Protocol, RedirectConfig, RuleCondition,
    TargetGroupTuple, Token,
};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{json, Value};

use super::bindings;
use super::names::{self, Group, TgName};
use super::CLUSTER;
use crate::support::moto_cloud::Cloud;

/// One action as upstream's model writes it; forwards name target groups by resource id.
#[derive(Clone)]
pub enum Act {
    Fixed(&'static str, Option<&'static str>, Option<&'static str>),
    Forward(Vec<(&'static str, Option<i32>)>),
    Redirect(RedirectConfig),
}

pub struct Tg {
    /// Upstream's resource id, `<ing ns>/<ing name>-<svc>:<port>`.
    pub id: &'static str,
    pub ingress: &'static str,
    pub service: &'static str,
    /// The Ingress's port reference: a name, or a number as text.
    pub port: &'static str,
    pub tg_port: i32,
    pub target_type: &'static str,
    pub protocol: &'static str,
    pub version: &'static str,
    pub ip_type: &'static str,
    pub hc: HealthCheck,
    /// `networking.ingress` ports of the binding, in upstream's order (traffic, health check).
    pub tgb_ports: Vec<Value>,
    pub node_selector: Option<Value>,
}

pub struct Ls {
    pub port: u16,
    pub protocol: &'static str,
    pub ssl_policy: Option<&'static str>,
    pub certs: Vec<&'static str>,
    pub default: Act,
}

pub struct Rl {
    pub listener: u16,
    pub priority: u32,
    pub conditions: Vec<RuleCondition>,
    pub actions: Vec<Act>,
}

pub enum Sgs {
    /// The managed SG with these inbound permissions, plus the shared backend SG.
    Managed(Vec<IpPermission>),
    /// `security-groups` annotation naming one SG the user made (`{user_sg}` in the YAML).
    User,
}

pub struct Shape {
    pub title: &'static str,
    pub namespace: &'static str,
    /// Services, Ingresses, IngressClasses and IngressClassParams as the user wrote them.
    pub yaml: String,
    /// Explicit group name, or None for the implicit group of `members[0]`.
    pub explicit: Option<&'static str>,
    pub members: Vec<&'static str>,
    pub scheme: &'static str,
    pub ip_type: &'static str,
    pub sgs: Sgs,
    /// User tags on every resource of the stack (annotation or IngressClassParams).
    pub tags: Vec<(&'static str, &'static str)>,
    pub tgs: Vec<Tg>,
    pub listeners: Vec<Ls>,
    pub rules: Vec<Rl>,
}

impl Shape {
    pub fn group(&self) -> Group<'_> {
        match self.explicit {
            Some(name) => Group {
                namespace: None,
                name,
            },
            None => Group {
                namespace: Some(self.namespace),
                name: self.members[0],
            },
        }
    }

    /// Tracking tags upstream's deployer adds, over the user's tags.
    fn tags(&self, resource: &str) -> Tags {
        let mut t: Tags = self
            .tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        t.insert("elbv2.k8s.aws/cluster".into(), CLUSTER.into());
        t.insert("ingress.k8s.aws/stack".into(), self.group().id());
        t.insert("ingress.k8s.aws/resource".into(), resource.into());
        t
    }

    pub fn stack_labels(&self) -> Value {
        match self.explicit {
            Some(g) => json!({"ingress.k8s.aws/stack": g}),
            None => json!({"ingress.k8s.aws/stack-namespace": self.namespace,
                "ingress.k8s.aws/stack-name": self.members[0]}),
        }
    }

    fn finalizer(&self) -> String {
        match self.explicit {
            Some(g) => format!("group.ingress.k8s.aws/{g}"),
            None => "ingress.k8s.aws/resources".into(),
        }
    }
}

/// A certificate in moto's ACM (moto checks listener certificates exist): JSON 1.1 over
/// plain HTTP, the region taken from the credential scope as moto reads it.
pub async fn certificate(c: &Cloud, domain: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = c.moto.endpoint.trim_start_matches("http://").to_string();
    let body = json!({ "DomainName": domain }).to_string();
    let req = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-amz-json-1.1\r\nX-Amz-Target: CertificateManager.RequestCertificate\r\nAuthorization: AWS4-HMAC-SHA256 Credential=testing/20260101/us-west-2/acm/aws4_request, SignedHeaders=host, Signature=0\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
    s.write_all(req.as_bytes()).await.unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).await.unwrap();
    let (_, json) = resp.split_once("\r\n\r\n").unwrap();
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {resp}"));
    v["CertificateArn"].as_str().unwrap().to_string()
}

/// The auto-created backend SG upstream's backend-SG provider leaves (shared by all stacks).
pub async fn backend_sg(c: &Cloud) -> String {
    c.ec2
        .create_security_group(&CreateSecurityGroup {
            name: names::backend_sg(CLUSTER),
            description: "[k8s] Shared Backend SecurityGroup for LoadBalancer".into(),
            vpc_id: c.vpc.clone(),
            tags: Tags::from([
                ("elbv2.k8s.aws/cluster".into(), CLUSTER.into()),
                ("elbv2.k8s.aws/resource".into(), "backend-sg".into()),
            ]),
        })
        .await
        .unwrap()
}

fn action(a: &Act, tgs: &BTreeMap<&str, String>) -> model::Action {
    match a {
        Act::Fixed(s, t, b) => model::Action::FixedResponse {
            config: FixedResponseConfig {
                content_type: t.map(String::from),
                message_body: b.map(String::from),
                status_code: s.to_string(),
            },
        },
        Act::Redirect(r) => model::Action::Redirect { config: r.clone() },
        Act::Forward(to) => model::Action::Forward {
            config: ForwardConfig {
                target_groups: to
                    .iter()
                    .map(|(id, w)| TargetGroupTuple {
                        target_group_arn: Token::Literal(tgs[id].clone()),
                        weight: *w,
                    })
                    .collect(),
                target_group_stickiness_config: None,
            },
        },
    }
}

/// A listener protocol as upstream writes it (`HTTP`, `HTTPS`).
fn protocol(p: &str) -> Protocol {
    serde_json::from_value(json!(p)).unwrap_or_else(|e| panic!("protocol {p}: {e}"))
}

/// Creates the user's objects of `s` (and the SG a `security-groups` annotation names); returns
/// `vars` with `user_sg` added.
pub async fn user_objects(
    c: &Cloud,
    client: &kube::Client,
    vars: &BTreeMap<String, String>,
    s: &Shape,
) -> BTreeMap<String, String> {
    user_objects_of_kinds(c, client, vars, s, |_| true).await
}

/// [`user_objects`], for the kinds `keep` accepts.
async fn user_objects_of_kinds(
    c: &Cloud,
    client: &kube::Client,
    vars: &BTreeMap<String, String>,
    s: &Shape,
    keep: impl Fn(&str) -> bool,
) -> BTreeMap<String, String> {
    let user_sg = match s.sgs {
        Sgs::User => c
            .ec2
            .create_security_group(&CreateSecurityGroup {
                name: format!("{}-web", s.namespace),
                description: "made by the user".into(),
                vpc_id: c.vpc.clone(),
                tags: Tags::new(),
            })
            .await
            .unwrap(),
        Sgs::Managed(_) => String::new(),
    };
    let mut vars = vars.clone();
    vars.insert("user_sg".into(), user_sg);
    super::apply_kinds(
        client,
        s.namespace,
        &fill(&vars, &s.yaml),
        &s.finalizer(),
        keep,
    )
    .await;
    vars
}

fn fill(vars: &BTreeMap<String, String>, t: &str) -> String {
    vars.iter()
        .fold(t.to_string(), |t, (k, v)| t.replace(&format!("{{{k}}}"), v))
}

/// Upstream's name for the target group of `tg` (it hashes the Service's UID).
pub async fn tg_name(client: &kube::Client, s: &Shape, tg: &Tg) -> String {
    let services: Api<Service> = Api::namespaced(client.clone(), s.namespace);
    let uid = services
        .get(tg.service)
        .await
        .unwrap()
        .metadata
        .uid
        .unwrap();
    names::target_group(
        CLUSTER,
        &s.group(),
        &TgName {
            ingress: (s.namespace, tg.ingress),
            service: (s.namespace, tg.service),
            service_uid: &uid,
            port: tg.port,
            tg_port: tg.tg_port,
            target_type: tg.target_type,
            protocol: tg.protocol,
            protocol_version: tg.version,
        },
    )
}

/// Creates the user's objects, then everything upstream left for them, in AWS and in the cluster.
pub async fn seed(
    c: &Cloud,
    client: &kube::Client,
    backend: &str,
    vars: &BTreeMap<String, String>,
    s: &Shape,
) {
    // The Ingresses come once their stack is in AWS, as upstream made it: a controller running
    // beside the seed (the switch test's) would otherwise deploy the stack itself, first.
    let vars = user_objects_of_kinds(c, client, vars, s, |k| k != "Ingress").await;
    let fill = |t: &str| fill(&vars, t);
    let user_sg = vars["user_sg"].clone();
    let g = s.group();

    // Security groups.
    let lb_sgs = match &s.sgs {
        Sgs::Managed(perms) => {
            let id = c
                .ec2
                .create_security_group(&CreateSecurityGroup {
                    name: names::managed_sg(CLUSTER, &g),
                    description: "[k8s] Managed SecurityGroup for LoadBalancer".into(),
                    vpc_id: c.vpc.clone(),
                    tags: s.tags("ManagedLBSecurityGroup"),
                })
                .await
                .unwrap();
            c.ec2.authorize_ingress(&id, perms).await.unwrap();
            vec![id, backend.to_string()]
        }
        Sgs::User => vec![user_sg],
    };
    // Target groups.
    let mut arns: BTreeMap<&str, String> = BTreeMap::new();
    let mut tg_names: BTreeMap<&str, String> = BTreeMap::new();
    for tg in &s.tgs {
        let name = tg_name(client, s, tg).await;
        let req = model::TargetGroup {
            id: tg.id.into(),
            name: name.clone(),
            target_type: wire(tg.target_type),
            port: tg.tg_port,
            protocol: wire(tg.protocol),
            protocol_version: Some(wire(tg.version)),
            ip_address_type: tg.ip_type.into(),
            health_check: tg.hc.clone(),
            target_control_port: None,
            attributes: BTreeMap::new(),
            tags: s.tags(tg.id),
            service_uid: String::new(),
        };
        let created = c.elb.create_target_group((&req).into(), &c.vpc).await;
        arns.insert(tg.id, created.unwrap().arn);
        tg_names.insert(tg.id, name);
    }
    // Load balancer, listeners, rules.
    let want_lb = model::LoadBalancer {
        ip_address_type: wire(s.ip_type),
        tags: s.tags("LoadBalancer"),
        ..spec::load_balancer(
            &names::load_balancer(CLUSTER, &g, s.scheme),
            "application",
            wire(s.scheme),
            &c.subnets,
            &lb_sgs,
        )
    };
    let lb = c.elb.create_load_balancer(&want_lb).await.unwrap();
    let mut listeners = BTreeMap::new();
    for l in &s.listeners {
        let spec = model::Listener {
            load_balancer_arn: Token::Literal(lb.arn.clone()),
            ssl_policy: l.ssl_policy.map(Into::into),
            certificates: l.certs.first().map(|c| fill(c)).into_iter().collect(),
            tags: s.tags(&l.port.to_string()),
            ..model::Listener::new(
                i32::from(l.port),
                protocol(l.protocol),
                vec![action(&l.default, &arns)],
            )
        };
        let created = c.elb.create_listener(&spec).await.unwrap();
        if l.certs.len() > 1 {
            let extra: Vec<String> = l.certs[1..].iter().map(|c| fill(c)).collect();
            c.elb
                .add_listener_certificates(&created.arn, &extra)
                .await
                .unwrap();
        }
        listeners.insert(l.port, created.arn);
    }
    for r in &s.rules {
        let spec = model::ListenerRule {
            tags: s.tags(&format!("{}:{}", r.listener, r.priority)),
            ..model::ListenerRule::new(
                Token::Literal(listeners[&r.listener].clone()),
                r.priority as i32,
                r.conditions.clone(),
                r.actions.iter().map(|a| action(a, &arns)).collect(),
            )
        };
        c.elb.create_rule(&spec).await.unwrap();
    }
    super::apply_kinds(client, s.namespace, &fill(&s.yaml), &s.finalizer(), |k| {
        k == "Ingress"
    })
    .await;
    // Ingress status, as upstream patches it: ports without a protocol.
    let ports: Vec<Value> = s
        .listeners
        .iter()
        .map(|l| l.port)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|p| json!({"port": p, "protocol": ""}))
        .collect();
    let ingresses: Api<Ingress> = Api::namespaced(client.clone(), s.namespace);
    for m in &s.members {
        let body = json!({"status": {"loadBalancer": {"ingress": [
            {"hostname": lb.dns_name.to_ascii_lowercase(), "ports": ports}
        ]}}});
        ingresses
            .patch_status(m, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .unwrap();
    }
    for tg in &s.tgs {
        let b = bindings::upstream(s, tg, &tg_names[tg.id], &arns[tg.id], backend, &c.vpc);
        bindings::create_as_upstream(client, b).await;
    }
}

/// A value as AWS spells it (`HTTP`, `ip`, `internal`, `dualstack`...) in the model's type.
fn wire<T: serde::de::DeserializeOwned>(s: &str) -> T {
    serde_json::from_value(json!(s)).unwrap_or_else(|e| panic!("{s}: {e}"))
}
