//! `--verify`: the ALB evaluator against `golden/eval.yaml` (requests and the answers ALB gives
//! them); the README samples (config/samples) translated and checked with no request routed
//! differently; a seeded mistake (one HTTPRoute path type changed) found with the request that
//! shows it; and what upstream's translation itself gets wrong, found.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::eval::Alb;
use super::request::{derive_requests, Request, DEFAULT_SOURCE};
use super::{default_model_config, verify, VerifyReport};
use crate::migrate::objects::{PATH_EXACT, PATH_PREFIX};
use crate::migrate::reader::decode_resources;
use crate::migrate::{translate, InputResources, OutputResources};
use crate::model::action::{
    Action, AuthenticateCognitoConfig, ForwardConfig, RedirectConfig, Rewrite, RewriteConfigObject,
    RuleCondition, StickinessConfig, TargetGroupTuple, Transform,
};
use crate::model::{Listener, ListenerRule, Protocol, Stack, Token};

#[derive(Deserialize)]
struct Golden {
    cases: Vec<GoldenCase>,
}

#[derive(Deserialize)]
struct GoldenCase {
    name: String,
    listeners: Vec<GoldenListener>,
    rules: Vec<GoldenRule>,
    requests: Vec<GoldenRequest>,
}

#[derive(Deserialize)]
struct GoldenListener {
    port: i32,
    protocol: Protocol,
    default: Vec<String>,
}

#[derive(Deserialize)]
struct GoldenRule {
    port: i32,
    priority: i32,
    conditions: Vec<RuleCondition>,
    actions: Vec<String>,
    #[serde(default)]
    transforms: Vec<String>,
}

#[derive(Deserialize)]
struct GoldenRequest {
    request: String,
    want: String,
}

fn tg(name: &str) -> Token {
    Token::Literal(format!(
        "arn:aws:elasticloadbalancing:us-east-1:000000000000:targetgroup/{name}/0"
    ))
}

/// The golden file's short actions (see its header).
fn actions(short: &[String]) -> Vec<Action> {
    let mut out: Vec<Action> = Vec::new();
    for a in short {
        let words: Vec<&str> = a.split_whitespace().collect();
        match words[0] {
            "forward" => out.push(Action::Forward {
                config: ForwardConfig {
                    target_groups: words[1..]
                        .iter()
                        .map(|t| {
                            let (name, weight) = match t.split_once('=') {
                                Some((n, w)) => (n, Some(w.parse().unwrap())),
                                None => (*t, None),
                            };
                            TargetGroupTuple {
                                target_group_arn: tg(name),
                                weight,
                            }
                        })
                        .collect(),
                    target_group_stickiness_config: None,
                },
            }),
            "sticky" => {
                let Some(Action::Forward { config }) = out.last_mut() else {
                    panic!("sticky after forward only")
                };
                config.target_group_stickiness_config = Some(StickinessConfig {
                    enabled: Some(true),
                    duration_seconds: Some(words[1].parse().unwrap()),
                });
            }
            "fixed" => out.push(Action::fixed(words[1], words.get(2).copied())),
            "redirect" => out.push(Action::Redirect {
                config: RedirectConfig {
                    protocol: Some(words[1].into()),
                    port: Some(words[2].into()),
                    status_code: words[3].into(),
                    ..Default::default()
                },
            }),
            "redirect-to" => out.push(Action::Redirect {
                config: RedirectConfig {
                    host: Some(words[1].into()),
                    path: Some(words[2].into()),
                    status_code: words[3].into(),
                    ..Default::default()
                },
            }),
            "cognito" => out.push(Action::AuthenticateCognito {
                config: AuthenticateCognitoConfig {
                    user_pool_arn: words[1].into(),
                    user_pool_client_id: "client".into(),
                    user_pool_domain: "domain".into(),
                    authentication_request_extra_params: BTreeMap::new(),
                    on_unauthenticated_request: "authenticate".into(),
                    scope: "openid".into(),
                    session_cookie_name: "AWSELBAuthSessionCookie".into(),
                    session_timeout: 604800,
                },
            }),
            other => panic!("unknown short action {other}"),
        }
    }
    out
}

fn transforms(short: &[String]) -> Vec<Transform> {
    short
        .iter()
        .map(|t| {
            let words: Vec<&str> = t.split_whitespace().collect();
            assert_eq!(words[0], "rewrite-path");
            Transform {
                transform_type: "url-rewrite".into(),
                host_header_rewrite_config: None,
                url_rewrite_config: Some(RewriteConfigObject {
                    rewrites: vec![Rewrite {
                        regex: words[1].into(),
                        replace: words[2].into(),
                    }],
                }),
            }
        })
        .collect()
}

/// `METHOD HOST:PORT/PATH[?QUERY] [NAME=VALUE ...] [from IP]`.
pub(super) fn parse_request(text: &str) -> Request {
    let mut words = text.split_whitespace();
    let method = words.next().unwrap().to_string();
    let target = words.next().unwrap();
    let (authority, rest) = target.split_at(target.find('/').unwrap());
    let (host, port) = authority.rsplit_once(':').unwrap();
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let query = query
        .split('&')
        .filter(|q| !q.is_empty())
        .map(|q| {
            let (k, v) = q.split_once('=').unwrap_or((q, ""));
            (k.to_string(), v.to_string())
        })
        .collect();
    let mut headers = Vec::new();
    let mut source = DEFAULT_SOURCE.to_string();
    while let Some(w) = words.next() {
        if w == "from" {
            source = words.next().unwrap().to_string();
        } else {
            let (k, v) = w.split_once('=').unwrap();
            headers.push((k.to_string(), v.to_string()));
        }
    }
    Request {
        port: port.parse().unwrap(),
        method,
        host: host.to_string(),
        path: path.to_string(),
        headers,
        query,
        source,
    }
}

fn stack_of(c: &GoldenCase) -> Stack {
    Stack {
        stack_id: c.name.clone(),
        listeners: c
            .listeners
            .iter()
            .map(|l| Listener::new(l.port, l.protocol, actions(&l.default)))
            .collect(),
        listener_rules: c
            .rules
            .iter()
            .map(|r| {
                let mut rule = ListenerRule::new(
                    Token::ListenerArn(r.port),
                    r.priority,
                    r.conditions.clone(),
                    actions(&r.actions),
                );
                rule.transforms = transforms(&r.transforms);
                rule
            })
            .collect(),
        ..Default::default()
    }
}

#[test]
fn evaluator_answers_as_alb() {
    let golden: Golden = serde_yaml::from_str(include_str!("golden/eval.yaml")).unwrap();
    let mut checked = 0;
    for c in &golden.cases {
        let stack = stack_of(c);
        let alb = Alb::new(&stack, &[]);
        for r in &c.requests {
            let req = parse_request(&r.request);
            let got = alb.evaluate(&req).outcome.to_string();
            assert_eq!(got, r.want, "{}: {}", c.name, r.request);
            checked += 1;
        }
    }
    assert!(checked >= 35, "{checked}");
}

/// Requests are derived from every rule: the rule met, each condition's other values, near
/// misses of each, on every listener port.
#[test]
fn derived_requests_probe_boundaries() {
    let c = GoldenCase {
        name: "derive".into(),
        listeners: vec![
            GoldenListener { port: 80, protocol: Protocol::Http, default: vec!["fixed 404".into()] },
            GoldenListener { port: 443, protocol: Protocol::Https, default: vec!["fixed 404".into()] },
        ],
        rules: vec![GoldenRule {
            port: 443,
            priority: 1,
            conditions: serde_yaml::from_str(
                "[{field: host-header, hostHeaderConfig: {values: [shop.example.com]}}, {field: path-pattern, pathPatternConfig: {values: [/api, /api/*]}}, {field: http-header, httpHeaderConfig: {httpHeaderName: X-Env, values: [canary]}}]",
            )
            .unwrap(),
            actions: vec!["forward api".into()],
            transforms: vec![],
        }],
        requests: vec![],
    };
    let stack = stack_of(&c);
    let requests = derive_requests(&[&stack]);
    let has = |text: &str| {
        let want = parse_request(text);
        assert!(
            requests.contains(&want),
            "missing {text}: {:#?}",
            requests.iter().map(|r| r.to_string()).collect::<Vec<_>>()
        );
    };
    // The rule met, on both ports.
    has("GET shop.example.com:443/api X-Env=canary");
    has("GET shop.example.com:80/api X-Env=canary");
    // The other path value, and the prefix's boundary.
    has("GET shop.example.com:443/api/w X-Env=canary");
    has("GET shop.example.com:443/api/ X-Env=canary");
    has("GET shop.example.com:443/apix X-Env=canary");
    // Case: of the host (ignored by ALB) and of the path (not).
    has("GET SHOP.EXAMPLE.COM:443/api X-Env=canary");
    has("GET shop.example.com:443/API X-Env=canary");
    // The header missing, and another value.
    has("GET shop.example.com:443/api");
    has("GET shop.example.com:443/api X-Env=nomatch");
    // A host no rule names.
    has("GET unmatched.invalid:443/");
}

fn samples() -> InputResources {
    let mut input = InputResources::default();
    for text in [
        include_str!("../../../../../config/samples/ingressclass.yaml"),
        include_str!("../../../../../config/samples/ingress-group.yaml"),
        include_str!("../../../../../config/samples/ingress-https.yaml"),
        include_str!("../../../../../config/samples/ingress-ip-target.yaml"),
    ] {
        decode_resources(text, &mut input, &mut std::io::sink()).unwrap();
    }
    input.normalize_namespaces();
    input
}

fn check(input: &InputResources, output: &OutputResources) -> VerifyReport {
    let cfg = default_model_config().unwrap();
    verify(input, output, &cfg).unwrap()
}

/// The README's samples (config/samples) translate exactly: every derived request is answered
/// alike by the Ingress stack and the Gateway stack.
#[test]
fn readme_samples_route_alike() {
    let input = samples();
    let output = translate(&input).unwrap();
    assert_eq!(output.groups.len(), 3);
    let report = check(&input, &output);
    let text = report.render();
    assert!(!report.failed(), "{text}");
    for g in &report.groups {
        assert!(g.problem.is_none(), "{text}");
        assert!(g.requests > 0, "{text}");
        assert!(g.differences.is_empty(), "{text}");
    }
    assert!(
        text.contains("IngressGroup shop -> Gateway shop/"),
        "{text}"
    );
    // The group with paths, hosts and conditions is probed request by request.
    assert!(
        report.groups.iter().map(|g| g.requests).max() > Some(20),
        "{text}"
    );
}

fn one_ingress(path: &str, path_type: &str) -> InputResources {
    let text = format!(
        r#"
apiVersion: v1
kind: Service
metadata: {{name: api, namespace: shop}}
spec: {{type: NodePort, ports: [{{port: 80, targetPort: 8080}}]}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {{name: api, namespace: shop}}
spec:
  ingressClassName: alb
  rules:
  - host: shop.example.com
    http:
      paths:
      - {{path: "{path}", pathType: {path_type}, backend: {{service: {{name: api, port: {{number: 80}}}}}}}}
"#
    );
    let mut input = InputResources::default();
    decode_resources(&text, &mut input, &mut std::io::sink()).unwrap();
    input.normalize_namespaces();
    input
}

/// A generated HTTPRoute with one path type changed (PathPrefix to Exact) is found, and the
/// report names a request it routes differently.
#[test]
fn a_seeded_path_type_change_is_found() {
    let input = one_ingress("/api", "Prefix");
    let mut output = translate(&input).unwrap();
    assert!(
        !check(&input, &output).failed(),
        "the translation itself is exact"
    );
    let path = output.http_routes[0].spec.rules[0].matches[0]
        .path
        .as_mut()
        .unwrap();
    assert_eq!(path.type_.as_deref(), Some(PATH_PREFIX));
    path.type_ = Some(PATH_EXACT.into());
    let report = check(&input, &output);
    assert!(report.failed());
    let d = &report.groups[0].differences;
    let named = d
        .iter()
        .find(|d| {
            d.request.path == "/api/w"
                && d.request.port == 80
                && d.request.host == "shop.example.com"
        })
        .unwrap_or_else(|| panic!("{}", report.render()));
    assert_eq!(
        named.ingress.outcome.to_string(),
        "forward to shop/api:80 as shop.example.com/api/w"
    );
    assert_eq!(
        named.gateway.outcome.to_string(),
        "fixed-response 404 text/plain \"\""
    );
    let text = report.render();
    assert!(text.contains("GET shop.example.com:80/api/w"), "{text}");
    assert!(text.contains("routed differently"), "{text}");
}

/// Upstream translates an ImplementationSpecific path without wildcards as a prefix; ALB reads
/// it as one exact path. The Gateway then answers for paths below it too.
#[test]
fn upstreams_prefix_for_an_implementation_specific_path_is_found() {
    let input = one_ingress("/api", "ImplementationSpecific");
    let output = translate(&input).unwrap();
    let report = check(&input, &output);
    let d = &report.groups[0].differences;
    assert!(
        d.iter().any(|d| d.request.path == "/api/sub"),
        "{}",
        report.render()
    );
}

/// Upstream translates `/*` (ImplementationSpecific) into PathPrefix `/*`, which the Gateway
/// controller refuses: the group is reported, not compared.
#[test]
fn upstreams_wildcard_prefix_fails_the_gateway_build() {
    let input = one_ingress("/*", "ImplementationSpecific");
    let output = translate(&input).unwrap();
    let report = check(&input, &output);
    let problem = report.groups[0]
        .problem
        .clone()
        .unwrap_or_else(|| report.render());
    assert!(
        problem.contains("prefix path shouldn't contain wildcards"),
        "{problem}"
    );
    assert!(report.failed());
}

/// Two hosts of one Ingress share one HTTPRoute in upstream's translation: each host's paths
/// answer for the other host too.
#[test]
fn upstreams_shared_hostnames_are_found() {
    let text = r#"
apiVersion: v1
kind: Service
metadata: {name: a, namespace: shop}
spec: {type: NodePort, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: b, namespace: shop}
spec: {type: NodePort, ports: [{port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: two, namespace: shop}
spec:
  ingressClassName: alb
  rules:
  - host: a.example.com
    http: {paths: [{path: /a, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}}}]}
  - host: b.example.com
    http: {paths: [{path: /b, pathType: Prefix, backend: {service: {name: b, port: {number: 80}}}}]}
"#;
    let mut input = InputResources::default();
    decode_resources(text, &mut input, &mut std::io::sink()).unwrap();
    input.normalize_namespaces();
    let output = translate(&input).unwrap();
    let report = check(&input, &output);
    let d = &report.groups[0].differences;
    assert!(
        d.iter()
            .any(|d| d.request.host == "b.example.com" && d.request.path == "/a"),
        "{}",
        report.render()
    );
}
