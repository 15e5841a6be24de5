//! The Ingress shapes of the takeover test, each with what upstream v3.5 leaves for it.

use aws_load_balancer_controller::model::RedirectConfig;
use aws_load_balancer_controller::model::{HealthCheck, Protocol};
use serde_json::json;

use super::kit::*;
use super::seed::{Act, Sgs, Shape, Tg};

/// Upstream's base test stack (`baseStackJSON`): two instance services, and `svc-3` with ip
/// targets, HTTPS, its own health check and health-check port 9090 (two binding rules).
fn base_stack() -> Shape {
    let svc3_ann = "alb.ingress.kubernetes.io/target-type: ip, alb.ingress.kubernetes.io/backend-protocol: HTTPS, alb.ingress.kubernetes.io/healthcheck-protocol: HTTPS, alb.ingress.kubernetes.io/healthcheck-port: '9090', alb.ingress.kubernetes.io/healthcheck-path: /health-check, alb.ingress.kubernetes.io/healthcheck-interval-seconds: '20', alb.ingress.kubernetes.io/healthcheck-timeout-seconds: '10', alb.ingress.kubernetes.io/healthy-threshold-count: '7', alb.ingress.kubernetes.io/unhealthy-threshold-count: '5', alb.ingress.kubernetes.io/success-codes: 200-300";
    let yaml = format!(
        "{}{}apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-3\n  namespace: s02\n  annotations: {{{svc3_ann}}}\nspec: {{ports: [{{name: https, port: 443, targetPort: 8443}}]}}\n---\n{}",
        node_svc("s02", "svc-1", 32768, ""),
        node_svc("s02", "svc-2", 32769, "alb.ingress.kubernetes.io/target-type: instance, alb.ingress.kubernetes.io/healthcheck-port: traffic-port, alb.ingress.kubernetes.io/success-codes: '200'"),
        r#"apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ing-1, namespace: s02, annotations: {kubernetes.io/ingress.class: alb}}
spec:
  rules:
  - host: app-1.example.com
    http:
      paths:
      - {path: /svc-1, pathType: Exact, backend: {service: {name: svc-1, port: {name: http}}}}
      - {path: /svc-2, pathType: Exact, backend: {service: {name: svc-2, port: {name: http}}}}
  - host: app-2.example.com
    http:
      paths:
      - {path: /svc-3, pathType: Exact, backend: {service: {name: svc-3, port: {name: https}}}}
"#
    );
    let svc3 = Tg {
        protocol: "HTTPS",
        hc: HealthCheck {
            protocol: Protocol::Https,
            port: "9090".into(),
            path: "/health-check".into(),
            interval_seconds: 20,
            timeout_seconds: 10,
            healthy_threshold_count: 7,
            unhealthy_threshold_count: 5,
            matcher: [("httpCode".to_string(), "200-300".to_string())].into(),
        },
        tgb_ports: vec![json!(8443), json!(9090)],
        ..tg(
            "s02/ing-1-svc-3:https",
            "ing-1",
            "svc-3",
            "https",
            8443,
            "ip",
        )
    };
    Shape {
        tgs: vec![
            tg(
                "s02/ing-1-svc-1:http",
                "ing-1",
                "svc-1",
                "http",
                32768,
                "instance",
            ),
            tg(
                "s02/ing-1-svc-2:http",
                "ing-1",
                "svc-2",
                "http",
                32769,
                "instance",
            ),
            svc3,
        ],
        rules: vec![
            rule(
                80,
                1,
                vec![host(&["app-1.example.com"]), path(&["/svc-1"])],
                fwd("s02/ing-1-svc-1:http"),
            ),
            rule(
                80,
                2,
                vec![host(&["app-1.example.com"]), path(&["/svc-2"])],
                fwd("s02/ing-1-svc-2:http"),
            ),
            rule(
                80,
                3,
                vec![host(&["app-2.example.com"]), path(&["/svc-3"])],
                fwd("s02/ing-1-svc-3:https"),
            ),
        ],
        ..base(
            "base stack: instance + ip/HTTPS with health-check port 9090",
            "s02",
            "ing-1",
            yaml,
        )
    }
}

pub fn basics() -> Vec<Shape> {
    let http = json!({"name": "http"});
    let n80 = json!({"number": 80});
    let mut v = vec![
        Shape {
            tgs: vec![tg("s01/web-web:http", "web", "web", "http", 30001, "instance")],
            rules: vec![rule(80, 1, vec![host(&["app.example.com"]), path(&["/web", "/web/*"])], fwd("s01/web-web:http"))],
            ..base("single Ingress, internal, host + prefix path", "s01", "web",
                node_svc("s01", "web", 30001, "") + &ing("s01", "web", "", Some("app.example.com"), &[("/web", "Prefix", "web", http.clone())]))
        },
        base_stack(),
        Shape {
            scheme: "internet-facing",
            tgs: vec![tg("s03/web-web:80", "web", "web", "80", 30003, "instance")],
            rules: vec![rule(80, 1, vec![path(&["/*"])], fwd("s03/web-web:80"))],
            ..base("internet-facing, root prefix, numeric port", "s03", "web",
                node_svc("s03", "web", 30003, "") + &ing("s03", "web", "alb.ingress.kubernetes.io/scheme: internet-facing", None, &[("/", "Prefix", "web", n80.clone())]))
        },
        Shape {
            scheme: "internet-facing",
            sgs: open(&[80, 443], &["0.0.0.0/0"], &[]),
            listeners: vec![
                listener(80, "HTTP", vec![]),
                listener(443, "HTTPS", vec![
                    "{cert1}",
                    "{cert2}",
                ]),
            ],
            tgs: vec![tg("s04/web-api:80", "web", "api", "80", 30004, "instance")],
            rules: vec![
                rule(80, 1, vec![path(&["/api", "/api/*"])], fwd("s04/web-api:80")),
                rule(443, 1, vec![path(&["/api", "/api/*"])], fwd("s04/web-api:80")),
            ],
            ..base("HTTPS with two certificates", "s04", "web",
                node_svc("s04", "api", 30004, "") + &ing("s04", "web", "alb.ingress.kubernetes.io/scheme: internet-facing, alb.ingress.kubernetes.io/listen-ports: '[{\"HTTP\": 80}, {\"HTTPS\": 443}]', alb.ingress.kubernetes.io/certificate-arn: '{cert1},{cert2}'", None, &[("/api", "Prefix", "api", n80.clone())]))
        },
        Shape {
            sgs: open(&[80, 443], &["0.0.0.0/0"], &[]),
            listeners: vec![
                super::seed::Ls {
                    default: Act::Redirect(RedirectConfig {
                        protocol: Some("HTTPS".into()),
                        port: Some("443".into()),
                        status_code: "HTTP_301".into(),
                        ..Default::default()
                    }),
                    ..listener(80, "HTTP", vec![])
                },
                listener(443, "HTTPS", vec!["{cert3}"]),
            ],
            tgs: vec![tg("s05/shop-shop:http", "shop", "shop", "http", 30005, "instance")],
            rules: vec![rule(443, 1, vec![path(&["/*"])], fwd("s05/shop-shop:http"))],
            ..base("ssl-redirect from HTTP to HTTPS", "s05", "shop",
                node_svc("s05", "shop", 30005, "") + &ing("s05", "shop", "alb.ingress.kubernetes.io/listen-ports: '[{\"HTTP\": 80}, {\"HTTPS\": 443}]', alb.ingress.kubernetes.io/certificate-arn: '{cert3}', alb.ingress.kubernetes.io/ssl-redirect: '443'", None, &[("/", "Prefix", "shop", http.clone())]))
        },
        Shape {
            explicit: Some("shop-s06"),
            members: vec!["a", "b"],
            tgs: vec![
                tg("s06/a-a:80", "a", "a", "80", 30061, "instance"),
                tg("s06/b-b:80", "b", "b", "80", 30062, "instance"),
            ],
            rules: vec![
                rule(80, 1, vec![path(&["/a", "/a/*"])], fwd("s06/a-a:80")),
                rule(80, 2, vec![path(&["/b", "/b/*"])], fwd("s06/b-b:80")),
            ],
            ..base("explicit group of two Ingresses", "s06", "a",
                node_svc("s06", "a", 30061, "") + &node_svc("s06", "b", 30062, "")
                    + &ing("s06", "b", "alb.ingress.kubernetes.io/group.name: shop-s06, alb.ingress.kubernetes.io/group.order: '2'", None, &[("/b", "Prefix", "b", n80.clone())])
                    + &ing("s06", "a", "alb.ingress.kubernetes.io/group.name: shop-s06, alb.ingress.kubernetes.io/group.order: '1'", None, &[("/a", "Prefix", "a", n80.clone())]))
        },
        Shape {
            scheme: "internet-facing",
            ip_type: "dualstack",
            sgs: open(&[80], &["0.0.0.0/0"], &["::/0"]),
            tgs: vec![Tg { ip_type: "ipv6", ..tg("s07/web-web6:http", "web", "web6", "http", 8080, "ip") }],
            rules: vec![rule(80, 1, vec![path(&["/*"])], fwd("s07/web-web6:http"))],
            ..base("dual-stack load balancer, IPv6 Service, ip targets", "s07", "web",
                "apiVersion: v1\nkind: Service\nmetadata: {name: web6, namespace: s07}\nspec: {ipFamilies: [IPv6], ipFamilyPolicy: SingleStack, ports: [{name: http, port: 80, targetPort: 8080}]}\n---\n".to_string()
                    + &ing("s07", "web", "alb.ingress.kubernetes.io/scheme: internet-facing, alb.ingress.kubernetes.io/ip-address-type: dualstack, alb.ingress.kubernetes.io/target-type: ip", None, &[("/", "Prefix", "web6", http.clone())]))
        },
        Shape {
            sgs: Sgs::User,
            tgs: vec![Tg { tgb_ports: vec![], ..tg("s08/web-web:http", "web", "web", "http", 30008, "instance") }],
            rules: vec![rule(80, 1, vec![path(&["/*"])], fwd("s08/web-web:http"))],
            ..base("security-groups annotation (no managed or backend SG, no binding networking)", "s08", "web",
                node_svc("s08", "web", 30008, "") + &ing("s08", "web", "alb.ingress.kubernetes.io/security-groups: '{user_sg}'", None, &[("/", "Prefix", "web", http.clone())]))
        },
    ];
    v.push(Shape {
        scheme: "internet-facing",
        sgs: open(&[80], &["10.0.0.0/8"], &[]),
        tags: vec![("team", "payments")],
        tgs: vec![tg("s09/pay-pay:http", "pay", "pay", "http", 30009, "instance")],
        rules: vec![rule(80, 1, vec![path(&["/pay", "/pay/*"])], fwd("s09/pay-pay:http"))],
        ..base("IngressClassParams: scheme, inbound CIDRs, tags", "s09", "pay",
            node_svc("s09", "pay", 30009, "") + r#"apiVersion: elbv2.k8s.aws/v1beta1
kind: IngressClassParams
metadata: {name: s09-params}
spec: {scheme: internet-facing, inboundCIDRs: [10.0.0.0/8], tags: [{key: team, value: payments}]}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: alb-s09}
spec: {controller: ingress.k8s.aws/alb, parameters: {apiGroup: elbv2.k8s.aws, kind: IngressClassParams, name: s09-params}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: pay, namespace: s09}
spec:
  ingressClassName: alb-s09
  rules:
  - http:
      paths:
      - {path: /pay, pathType: Prefix, backend: {service: {name: pay, port: {name: http}}}}
"#)
    });
    v
}

/// Every shape of the takeover test.
pub fn all() -> Vec<Shape> {
    let mut v = basics();
    v.extend(super::shapes_more::more());
    v
}
