//! The migrated objects deployed: an Ingress with several rules (prefix and exact paths, a
//! named Service port, a fixed response and a redirect by `actions.*`) translated by `migrate`,
//! its Ingress stack and the generated Gateway's stack (built as `plan` and `--verify` build
//! them) deployed by our deployer on moto, the listeners and rules of both ALBs read back
//! (DescribeListeners, DescribeRules through the ELBv2 trait), and `--verify`'s requests routed
//! through what ELBv2 holds: every request gets the same answer from both ALBs — forwards
//! compared by the Service and port each target group stands for, found through its resource
//! tag — and the same answer the stack the deployer was given gives.

use std::collections::{BTreeMap, BTreeSet};

use albc_model::migrate::reader::decode_resources;
use albc_model::migrate::verify::eval::{backend_key, Alb, Final, Outcome};
use albc_model::migrate::verify::request::derive_requests;
use albc_model::migrate::verify::{compare_albs, default_model_config, stacks};
use albc_model::migrate::{translate, InputResources};
use aws_load_balancer_controller::aws::ElbV2;
use aws_load_balancer_controller::deploy::Deployer;
use aws_load_balancer_controller::model::{self, ListenerRule, Protocol, Stack, Token};
use k8s_openapi::api::core::v1::Service;

use crate::support::moto_cloud::cloud;

const CLUSTER: &str = "prod";

const SAMPLE: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {type: NodePort, ports: [{port: 8080, targetPort: 9000}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {type: NodePort, ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  namespace: shop
  annotations:
    alb.ingress.kubernetes.io/scheme: internet-facing
    alb.ingress.kubernetes.io/actions.response-503: >
      {"type":"fixed-response","fixedResponseConfig":{"contentType":"text/plain","statusCode":"503","messageBody":"503 error text"}}
    alb.ingress.kubernetes.io/actions.redirect-to-eks: >
      {"type":"redirect","redirectConfig":{"host":"aws.amazon.com","path":"/eks/","port":"443","protocol":"HTTPS","query":"k=v","statusCode":"HTTP_302"}}
spec:
  ingressClassName: alb
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /healthz, pathType: Exact, backend: {service: {name: api, port: {number: 8080}}}}
      - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 8080}}}}
      - {path: /503, pathType: Exact, backend: {service: {name: response-503, port: {name: use-annotation}}}}
      - {path: /eks, pathType: Exact, backend: {service: {name: redirect-to-eks, port: {name: use-annotation}}}}
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}
"#;

/// The listeners and rules of load balancer `lb_arn` as ELBv2 describes them, in the model's
/// types (target groups as their ARNs).
async fn described(elb: &dyn ElbV2, lb_arn: &str) -> Stack {
    let mut s = Stack::default();
    for l in elb.describe_listeners(lb_arn).await.unwrap() {
        let port = i32::from(l.port);
        let protocol = match l.protocol.as_str() {
            "HTTP" => Protocol::Http,
            "HTTPS" => Protocol::Https,
            other => panic!("listener {port}: protocol {other}"),
        };
        s.listeners.push(model::Listener::new(
            port,
            protocol,
            l.default_actions.clone(),
        ));
        for r in elb.describe_rules(&l.arn).await.unwrap() {
            if r.is_default {
                continue;
            }
            let priority: i32 = r.priority.parse().unwrap();
            let mut rule =
                ListenerRule::new(Token::ListenerArn(port), priority, r.conditions, r.actions);
            rule.transforms = r.transforms;
            rule.ingress = format!("described {}", r.arn);
            s.listener_rules.push(rule);
        }
    }
    s
}

/// Target group ARN → the backend (`ns/svc:port`) it stands for, for the target groups of
/// `stack` in ELBv2: the stack tag says whose it is, the resource tag which of the stack's
/// target groups, whose binding names the Service and port.
async fn backends(
    elb: &dyn ElbV2,
    stack: &Stack,
    services: &[Service],
) -> BTreeMap<String, String> {
    let tgs = elb
        .describe_target_groups(&Default::default())
        .await
        .unwrap();
    let arns: Vec<String> = tgs.iter().map(|t| t.arn.clone()).collect();
    let tags = elb.describe_tags(&arns).await.unwrap();
    let (stack_tag, resource_tag) = (stack.kind.stack_tag(), stack.kind.resource_tag());
    let mut out = BTreeMap::new();
    for tg in tgs {
        let Some(t) = tags.get(&tg.arn) else {
            continue;
        };
        if t.get(&stack_tag) != Some(&stack.stack_id) {
            continue;
        }
        let id = t
            .get(&resource_tag)
            .unwrap_or_else(|| panic!("target group {} has no {resource_tag} tag: {t:?}", tg.name));
        let b = stack
            .target_group_bindings
            .iter()
            .find(|b| &b.id == id)
            .unwrap_or_else(|| {
                panic!(
                    "{resource_tag}={id} is no target group of stack {}",
                    stack.stack_id
                )
            });
        out.insert(
            tg.arn.clone(),
            backend_key(
                &b.namespace,
                &b.spec.service_name,
                &b.spec.service_port,
                services,
            ),
        );
    }
    out
}

#[tokio::test]
async fn migrated_objects_deployed_on_moto_route_alike() {
    let c = cloud().await;
    let mut input = InputResources::default();
    decode_resources(SAMPLE, &mut input, &mut std::io::sink()).unwrap();
    input.normalize_namespaces();
    let output = translate(&input).unwrap();
    assert_eq!(output.groups.len(), 1);
    let mut cfg = default_model_config().unwrap();
    cfg.cluster_name = CLUSTER.into();
    cfg.vpc_id = Some(c.vpc.clone());
    let objs = stacks::objects(&input, &output, &cfg).unwrap();
    let services = &objs.cluster.services;
    let group = &output.groups[0];
    let ingress = stacks::ingress_stack(&objs, &cfg, group).unwrap();
    let (gateway, notes) = stacks::gateway_stack(&objs, &cfg, group).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(
        ingress.listener_rules.len(),
        5,
        "{:#?}",
        ingress.listener_rules
    );
    assert!(!gateway.listener_rules.is_empty());

    let deployer = Deployer::new(c.elb.clone(), c.ec2.clone(), CLUSTER, c.vpc.clone());
    let ingress_lb = deployer
        .deploy(&ingress)
        .await
        .unwrap()
        .load_balancer
        .unwrap();
    let gateway_lb = deployer
        .deploy(&gateway)
        .await
        .unwrap()
        .load_balancer
        .unwrap();
    assert_ne!(ingress_lb.arn, gateway_lb.arn);

    let ingress_read = described(c.elb.as_ref(), &ingress_lb.arn).await;
    let gateway_read = described(c.elb.as_ref(), &gateway_lb.arn).await;
    assert_eq!(
        ingress_read.listener_rules.len(),
        ingress.listener_rules.len()
    );
    assert_eq!(
        gateway_read.listener_rules.len(),
        gateway.listener_rules.len()
    );
    let ingress_backends = backends(c.elb.as_ref(), &ingress, services).await;
    let gateway_backends = backends(c.elb.as_ref(), &gateway, services).await;
    assert_eq!(
        ingress_backends.len(),
        ingress.target_groups.len(),
        "{ingress_backends:?}"
    );
    assert_eq!(
        gateway_backends.len(),
        gateway.target_groups.len(),
        "{gateway_backends:?}"
    );
    let ingress_alb = Alb::with_backends(&ingress_read, ingress_backends);
    let gateway_alb = Alb::with_backends(&gateway_read, gateway_backends);
    let (ingress_built, gateway_built) =
        (Alb::new(&ingress, services), Alb::new(&gateway, services));

    // `--verify`'s requests: derived from the two stacks as built.
    let requests = derive_requests(&[&ingress, &gateway]);
    assert!(requests.len() > 30, "{}", requests.len());
    let mut answers = BTreeSet::new();
    for r in &requests {
        let (i, g) = (ingress_alb.evaluate(r), gateway_alb.evaluate(r));
        assert_eq!(
            i.outcome, g.outcome,
            "{r}: the Ingress ALB answers {} [{}], the Gateway ALB {} [{}]",
            i.outcome, i.matched, g.outcome, g.matched
        );
        // What ELBv2 holds answers as the stack the deployer was given.
        assert_eq!(
            i.outcome,
            ingress_built.evaluate(r).outcome,
            "{r}: the Ingress ALB"
        );
        assert_eq!(
            g.outcome,
            gateway_built.evaluate(r).outcome,
            "{r}: the Gateway ALB"
        );
        if let Outcome::Answer { last, .. } = &i.outcome {
            answers.insert(match last {
                Final::Forward { targets, .. } => format!(
                    "forward {}",
                    targets
                        .iter()
                        .map(|(k, _)| k.as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                Final::Redirect { status, .. } => format!("redirect {status}"),
                Final::Fixed { status, .. } => format!("fixed {status}"),
            });
        }
    }
    // Every kind of answer of the sample was met, forwards by Service and port (the two ALBs'
    // target groups differ).
    let want: BTreeSet<String> = [
        "forward shop/api:8080",
        "forward shop/web:80",
        "fixed 503",
        "fixed 404",
        "redirect HTTP_302",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(answers, want);
    // And the requests derived from the rules as described answer alike too.
    let (n, differences) = compare_albs(&ingress_alb, &gateway_alb);
    assert!(n > 30, "{n}");
    assert!(differences.is_empty(), "{differences:#?}");
}
