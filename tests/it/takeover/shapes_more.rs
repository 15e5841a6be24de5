//! More takeover shapes: target settings, annotation actions and conditions, CIDRs and tags,
//! a default backend with a weighted forward.

use aws_load_balancer_controller::model::action::{
    HttpHeaderConfig, ListConfig, QueryStringConfig, QueryStringPair,
};
use aws_load_balancer_controller::model::HealthCheck;
use aws_load_balancer_controller::model::{RedirectConfig, RuleCondition};
use serde_json::json;

use super::kit::*;
use super::seed::{Act, Ls, Shape, Tg};

pub fn more() -> Vec<Shape> {
    let http = json!({"name": "http"});
    let ann = json!({"name": "use-annotation"});
    vec![
        Shape {
            tgs: vec![Tg {
                hc: HealthCheck { port: "9090".into(), ..hc() },
                tgb_ports: vec![json!("web"), json!(9090)],
                ..tg("s10/api-api:http", "api", "api", "http", 1, "ip")
            }],
            rules: vec![rule(80, 1, vec![path(&["/api", "/api/*"])], fwd("s10/api-api:http"))],
            ..base("ip targets, named target port, health-check port 9090", "s10", "api",
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: api\n  namespace: s10\n  annotations: {alb.ingress.kubernetes.io/healthcheck-port: '9090'}\nspec: {ports: [{name: http, port: 80, targetPort: web}]}\n---\n".to_string()
                    + &ing("s10", "api", "alb.ingress.kubernetes.io/target-type: ip", None, &[("/api", "Prefix", "api", http.clone())]))
        },
        Shape {
            tgs: vec![Tg {
                node_selector: Some(json!({"matchLabels": {"role": "web", "zone": "a"}})),
                ..tg("s11/web-web:http", "web", "web", "http", 30011, "instance")
            }],
            rules: vec![rule(80, 1, vec![path(&["/*"])], fwd("s11/web-web:http"))],
            ..base("instance targets on labelled nodes (binding node selector)", "s11", "web",
                node_svc("s11", "web", 30011, "") + &ing("s11", "web", "alb.ingress.kubernetes.io/target-node-labels: 'role=web,zone=a'", None, &[("/", "Prefix", "web", http.clone())]))
        },
        Shape {
            tgs: vec![tg("s12/web-web:http", "web", "web", "http", 30012, "instance")],
            rules: vec![
                rule(80, 1, vec![path(&["/maintenance"])], vec![Act::Fixed("503", Some("text/plain"), Some("back soon"))]),
                rule(80, 2, vec![path(&["/*"])], fwd("s12/web-web:http")),
            ],
            ..base("fixed-response action from an annotation", "s12", "web",
                node_svc("s12", "web", 30012, "") + &ing("s12", "web", r#"alb.ingress.kubernetes.io/actions.response-503: '{"type":"fixed-response","fixedResponseConfig":{"contentType":"text/plain","statusCode":"503","messageBody":"back soon"}}'"#, None,
                    &[("/maintenance", "Exact", "response-503", ann.clone()), ("/", "Prefix", "web", http.clone())]))
        },
        Shape {
            tgs: vec![tg("s13/web-web:http", "web", "web", "http", 30013, "instance")],
            rules: vec![
                rule(80, 1, vec![path(&["/old"])], vec![Act::Redirect(RedirectConfig {
                    protocol: Some("HTTPS".into()),
                    port: Some("443".into()),
                    host: Some("example.com".into()),
                    path: Some("/new".into()),
                    query: Some("a=b".into()),
                    status_code: "HTTP_302".into(),
                })]),
                rule(80, 2, vec![path(&["/*"])], fwd("s13/web-web:http")),
            ],
            ..base("redirect action from an annotation", "s13", "web",
                node_svc("s13", "web", 30013, "") + &ing("s13", "web", r#"alb.ingress.kubernetes.io/actions.moved: '{"type":"redirect","redirectConfig":{"protocol":"HTTPS","port":"443","host":"example.com","path":"/new","query":"a=b","statusCode":"HTTP_302"}}'"#, None,
                    &[("/old", "Exact", "moved", ann.clone()), ("/", "Prefix", "web", http.clone())]))
        },
        Shape {
            tgs: vec![tg("s14/web-web:http", "web", "web", "http", 30014, "instance")],
            // Upstream: annotation conditions first, then host-header, then path-pattern.
            rules: vec![rule(80, 1, vec![
                RuleCondition::HttpHeader { config: HttpHeaderConfig { http_header_name: "X-Env".into(), values: vec!["canary".into()], regex_values: vec![] } },
                RuleCondition::QueryString { config: QueryStringConfig { values: vec![QueryStringPair { key: Some("v".into()), value: "2".into() }] } },
                RuleCondition::SourceIp { config: ListConfig { values: vec!["10.0.0.0/8".into()] } },
                host(&["canary.example.com"]),
                path(&["/web", "/web/*"]),
            ], fwd("s14/web-web:http"))],
            ..base("conditions from an annotation with host and path", "s14", "web",
                node_svc("s14", "web", 30014, "") + &ing("s14", "web", r#"alb.ingress.kubernetes.io/conditions.web: '[{"field":"http-header","httpHeaderConfig":{"httpHeaderName":"X-Env","values":["canary"]}},{"field":"query-string","queryStringConfig":{"values":[{"key":"v","value":"2"}]}},{"field":"source-ip","sourceIpConfig":{"values":["10.0.0.0/8"]}}]'"#,
                    Some("canary.example.com"), &[("/web", "Prefix", "web", http.clone())]))
        },
        Shape {
            sgs: open(&[8080], &["10.0.0.0/8", "192.168.0.0/16"], &[]),
            tags: vec![("Environment", "dev"), ("Team", "web")],
            listeners: vec![listener(8080, "HTTP", vec![])],
            tgs: vec![tg("s15/web-web:http", "web", "web", "http", 30015, "instance")],
            rules: vec![rule(8080, 1, vec![path(&["/*"])], fwd("s15/web-web:http"))],
            ..base("inbound CIDRs, tags and a custom listen port", "s15", "web",
                node_svc("s15", "web", 30015, "") + &ing("s15", "web", r#"alb.ingress.kubernetes.io/inbound-cidrs: '10.0.0.0/8, 192.168.0.0/16', alb.ingress.kubernetes.io/tags: 'Environment=dev,Team=web', alb.ingress.kubernetes.io/listen-ports: '[{"HTTP": 8080}]'"#,
                    None, &[("/", "Prefix", "web", http.clone())]))
        },
        Shape {
            listeners: vec![Ls { default: Act::Forward(vec![("s16/app-web:80", None)]), ..listener(80, "HTTP", vec![]) }],
            tgs: vec![
                tg("s16/app-web:80", "app", "web", "80", 30016, "instance"),
                tg("s16/app-blue:80", "app", "blue", "80", 30017, "instance"),
                tg("s16/app-green:80", "app", "green", "80", 30018, "instance"),
            ],
            rules: vec![rule(80, 1, vec![path(&["/bg", "/bg/*"])],
                vec![Act::Forward(vec![("s16/app-blue:80", Some(80)), ("s16/app-green:80", Some(20))])])],
            ..base("default backend and a weighted forward", "s16", "app",
                node_svc("s16", "web", 30016, "") + &node_svc("s16", "blue", 30017, "") + &node_svc("s16", "green", 30018, "")
                    + &format!(
                        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: app\n  namespace: s16\n  annotations:\n    kubernetes.io/ingress.class: alb\n    alb.ingress.kubernetes.io/actions.blue-green: '{}'\nspec:\n  defaultBackend: {{service: {{name: web, port: {{number: 80}}}}}}\n  rules:\n  - http:\n      paths:\n      - {{path: /bg, pathType: Prefix, backend: {{service: {{name: blue-green, port: {{name: use-annotation}}}}}}}}\n---\n",
                        r#"{"type":"forward","forwardConfig":{"targetGroups":[{"serviceName":"blue","servicePort":"80","weight":80},{"serviceName":"green","servicePort":"80","weight":20}]}}"#
                    ))
        },
    ]
}
