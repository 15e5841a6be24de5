//! The certificates members ask for: upstream's `Test_buildACMCertificates` table (8 cases) and
//! `Test_buildCertificateResourceID` (1) replayed through the whole builder, then what our
//! builder adds around them (the gate, the listener's reference, group order, tags, refusals).
// Upstream's test tables, one tuple per case, as its Go tables are.
#![allow(clippy::type_complexity)]

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::model::{
    build_stack, load_groups, BuildEnv, Certificate, CertificateType, ClusterObjects, ModelConfig,
    ModelError, Stack, Token,
};
use crate::plan::add_manifests;

const LISTEN_BOTH: &str = r#"[{"HTTP": 80}, {"HTTPS": 443}]"#;
const CA1: &str = "arn:aws:acm-pca:eu-central-1:134051052098:certificate-authority/ee8e7862-1c41-4722-87cb-9ae8e56e8d00";
const CA2: &str = "arn:aws:acm-pca:eu-central-1:134051052098:certificate-authority/bb4c0627-3ff4-439e-abb1-e5cc03426cc3";

fn cfg() -> ModelConfig {
    let mut c = ModelConfig {
        cluster_name: "c".into(),
        vpc_id: Some("vpc-1".into()),
        ..ModelConfig::default()
    };
    c.feature_gates
        .insert("EnableCertificateManagement".into(), true);
    c
}

/// An Ingress of group `explicit-group` in `awesome-ns` with these annotations and hosts (a
/// rule per host, each with one path to Service `web`).
fn ingress(name: &str, annotations: &[(&str, &str)], hosts: &[&str]) -> String {
    let mut a = String::from(
        "    kubernetes.io/ingress.class: alb\n    alb.ingress.kubernetes.io/group.name: explicit-group\n",
    );
    for (k, v) in annotations {
        a.push_str(&format!("    alb.ingress.kubernetes.io/{k}: '{v}'\n"));
    }
    let rules: String = hosts
        .iter()
        .map(|h| {
            format!("  - host: '{h}'\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n")
        })
        .collect();
    let spec = if rules.is_empty() {
        "spec: {}\n".to_string()
    } else {
        format!("spec:\n  rules:\n{rules}")
    };
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  namespace: awesome-ns\n  annotations:\n{a}{spec}"
    )
}

const SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: awesome-ns}\nspec: {type: NodePort, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}\n";

fn build(docs: &[String], cfg: &ModelConfig) -> Result<Stack, ModelError> {
    let yaml = format!("{SERVICE}{}", docs.concat());
    let mut objs = ClusterObjects::default();
    add_manifests(&mut objs, &yaml, Path::new("t.yaml")).unwrap();
    let (groups, errors) = load_groups(&objs, &cfg.ingress_class);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(groups.len(), 1);
    build_stack(
        groups.values().next().unwrap(),
        &objs,
        cfg,
        &BuildEnv::default(),
    )
}

fn hash8(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))[..8].to_string()
}

/// Upstream's expected spec: (type, CA, domain name, SANs); validation is always DNS and the
/// tags upstream's model holds (tracking tags left out) are empty.
fn spec(c: &Certificate) -> (CertificateType, Option<&str>, &str, Vec<&str>) {
    assert_eq!(c.validation_method, "DNS");
    assert_eq!(c.key_algorithm, None);
    let user: Vec<&String> = c
        .tags
        .keys()
        .filter(|k| !k.starts_with("ingress.k8s.aws/") && *k != "elbv2.k8s.aws/cluster")
        .collect();
    assert!(user.is_empty(), "{user:?}");
    (
        c.cert_type,
        c.certificate_authority_arn.as_deref(),
        c.domain_name.as_str(),
        c.subject_alternative_names
            .iter()
            .map(String::as_str)
            .collect(),
    )
}

fn only_certificate(s: &Stack) -> &Certificate {
    assert!(s.excluded_members.is_empty(), "{:?}", s.excluded_members);
    assert_eq!(s.certificates.len(), 1, "{:?}", s.certificates);
    &s.certificates[0]
}

// ---------------------------------------------------------------- upstream's table

/// Case 1, "Build certificate fails when no hostnames defined".
#[test]
fn upstream_case_no_hostnames_fails() {
    let create = [("listen-ports", LISTEN_BOTH), ("create-acm-cert", "true")];
    let err = build(&[ingress("ing-1", &create, &[])], &cfg()).unwrap_err();
    let ModelError::Ingress {
        ingress,
        annotation,
        message,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(ingress, "awesome-ns/ing-1");
    assert_eq!(
        annotation.as_deref(),
        Some("alb.ingress.kubernetes.io/create-acm-cert")
    );
    assert_eq!(
        message,
        "ingress awesome-ns/ing-1 has create-acm-cert enabled but no hostnames defined in spec.rules[].host or spec.tls[].hosts — cannot create a certificate without at least one hostname"
    );
}

/// Cases 2-4: one host, several hosts (sorted, the first is the domain name), only wildcards.
#[test]
fn upstream_cases_amazon_issued_for_every_host() {
    let create = [("listen-ports", LISTEN_BOTH), ("create-acm-cert", "true")];
    let cases: [(&str, &[&str], &str, &[&str]); 3] = [
        ("ing-2", &["example.com"], "example.com", &["example.com"]),
        (
            "ing-3",
            &["example.com", "otherexample.com", "yetanotherexample.com"],
            "example.com",
            &["example.com", "otherexample.com", "yetanotherexample.com"],
        ),
        (
            "ing-all-wild",
            &["*.app.example.com", "*.other.example.com"],
            "*.app.example.com",
            &["*.app.example.com", "*.other.example.com"],
        ),
    ];
    for (name, hosts, domain, sans) in cases {
        let s = build(&[ingress(name, &create, hosts)], &cfg()).unwrap();
        let c = only_certificate(&s);
        assert_eq!(
            spec(c),
            (CertificateType::AmazonIssued, None, domain, sans.to_vec()),
            "{name}"
        );
        assert_eq!(c.ingress, format!("awesome-ns/{name}"));
    }
}

/// Case 5, "Build certificate for certificate-arn pinned ingress": none is created.
#[test]
fn upstream_case_certificate_arn_pins_no_certificate() {
    let create = [
        ("listen-ports", LISTEN_BOTH),
        ("create-acm-cert", "true"),
        (
            "certificate-arn",
            "arn:aws:iam::123456789:server-certificate/new-clb-cert",
        ),
    ];
    let s = build(&[ingress("ing-3", &create, &["example.com"])], &cfg()).unwrap();
    assert!(s.certificates.is_empty(), "{:?}", s.certificates);
    let l = s.listeners.iter().find(|l| l.port == 443).unwrap();
    assert_eq!(
        l.certificates,
        ["arn:aws:iam::123456789:server-certificate/new-clb-cert"]
    );
}

/// Cases 6-8: the controller's CA, the annotation's, the annotation's over the controller's.
#[test]
fn upstream_cases_private_ca_from_flag_or_annotation() {
    let create = [("listen-ports", LISTEN_BOTH), ("create-acm-cert", "true")];
    let with_ca = |ca: &'static str| {
        [
            ("listen-ports", LISTEN_BOTH),
            ("create-acm-cert", "true"),
            ("acm-pca-arn", ca),
        ]
    };
    let mut flag = cfg();
    flag.default_pca_arn = Some(CA1.into());
    let cases: [(&str, Vec<(&str, &str)>, &ModelConfig, &str); 3] = [
        ("controller flag", create.to_vec(), &flag, CA1),
        ("annotation", with_ca(CA1).to_vec(), &cfg(), CA1),
        ("annotation over flag", with_ca(CA2).to_vec(), &flag, CA2),
    ];
    for (what, annotations, c, want_ca) in cases {
        let s = build(&[ingress("ing-3", &annotations, &["example.com"])], c).unwrap();
        let got = only_certificate(&s);
        assert_eq!(
            spec(got),
            (
                CertificateType::Private,
                Some(want_ca),
                "example.com",
                vec!["example.com"]
            ),
            "{what}"
        );
        assert!(got.id.starts_with("private/example.com-"), "{}", got.id);
    }
    // An empty annotation does not take the controller's CA away.
    let s = build(&[ingress("ing-3", &with_ca(""), &["example.com"])], &flag).unwrap();
    assert_eq!(
        only_certificate(&s).certificate_authority_arn.as_deref(),
        Some(CA1)
    );
}

/// `Test_buildCertificateResourceID`: no `*` in the id (a tag value), the wildcard spelled out;
/// and the whole id as upstream forms it.
#[test]
fn upstream_case_resource_id_spells_out_the_wildcard() {
    let create = [("create-acm-cert", "true")];
    let s = build(
        &[ingress("ing-wild", &create, &["*.app.example.com"])],
        &cfg(),
    )
    .unwrap();
    let id = &only_certificate(&s).id;
    assert!(!id.contains('*'), "{id}");
    assert!(id.contains("wildcard.app.example.com"), "{id}");
    assert_eq!(
        *id,
        format!(
            "amazon_issued/wildcard.app.example.com-{}",
            hash8("awesome-ns/ing-wild")
        )
    );
    let c = &s.certificates[0];
    assert_eq!(
        c.tags.get("ingress.k8s.aws/resource"),
        Some(id),
        "{:?}",
        c.tags
    );
}

// ---------------------------------------------------------------- around the table

/// Gate off (upstream's default): the annotation is not read and nothing changes.
#[test]
fn gate_off_creates_nothing() {
    let create = [("create-acm-cert", "true")];
    let off = ModelConfig {
        feature_gates: Default::default(),
        ..cfg()
    };
    let s = build(&[ingress("ing", &create, &["example.com"])], &off).unwrap();
    assert!(s.certificates.is_empty());
    assert_eq!(s.listeners.iter().map(|l| l.port).collect::<Vec<_>>(), [80]);
}

/// Without `listen-ports` the created certificate counts as an explicit one: HTTPS:443, whose
/// certificate list is that certificate's ARN (a token the deployer resolves), nothing to
/// discover.
#[test]
fn the_https_listener_refers_to_the_created_certificate() {
    let create = [("create-acm-cert", "true")];
    let s = build(&[ingress("ing", &create, &["example.com"])], &cfg()).unwrap();
    let c = only_certificate(&s);
    assert_eq!(s.listeners.len(), 1);
    let l = &s.listeners[0];
    assert_eq!(l.port, 443);
    assert!(l.certificates.is_empty());
    assert_eq!(l.certificate_discovery.len(), 1);
    assert_eq!(l.certificate_discovery[0].ingress, "awesome-ns/ing");
    assert_eq!(l.certificate_discovery[0].discovery_hosts, None);
    assert_eq!(
        s.listener_certificate_tokens(l),
        Some(vec![Token::CertificateArn(c.id.clone())])
    );
    // What `plan` prints.
    let shown = serde_json::to_value(&s).unwrap();
    assert_eq!(shown["certificates"][0]["type"], "AMAZON_ISSUED");
    assert_eq!(shown["certificates"][0]["domainName"], "example.com");
    assert_eq!(shown["certificates"][0]["ingress"], "awesome-ns/ing");
}

/// Upstream's documented group: A and B create theirs, C pins one; all three on the shared
/// HTTPS listener, in group order (A's is the default), and only A's and B's are requested.
/// Two members with the same host still get a certificate each.
#[test]
fn each_member_of_a_group_gets_its_own_certificate() {
    let pinned = "arn:aws:acm:us-west-2:1:certificate/c";
    let docs = [
        ingress(
            "a",
            &[("create-acm-cert", "true"), ("group.order", "1")],
            &["app-a.example.com"],
        ),
        ingress(
            "b",
            &[("create-acm-cert", "true"), ("group.order", "2")],
            &["app-a.example.com"],
        ),
        ingress(
            "c",
            &[
                ("certificate-arn", pinned),
                ("group.order", "3"),
                ("listen-ports", r#"[{"HTTPS": 443}]"#),
            ],
            &["app-c.example.com"],
        ),
    ];
    let s = build(&docs, &cfg()).unwrap();
    assert!(s.excluded_members.is_empty(), "{:?}", s.excluded_members);
    assert_eq!(s.certificates.len(), 2);
    let id = |ing: &str| s.created_certificate(ing).unwrap().id.clone();
    assert_ne!(id("awesome-ns/a"), id("awesome-ns/b"));
    let l = &s.listeners[0];
    assert_eq!(
        s.listener_certificate_tokens(l).unwrap(),
        vec![
            Token::CertificateArn(id("awesome-ns/a")),
            Token::CertificateArn(id("awesome-ns/b")),
            Token::Literal(pinned.into()),
        ]
    );
    // Sorted by id, as every collection of the stack.
    let ids: Vec<&String> = s.certificates.iter().map(|c| &c.id).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
}

/// A member's own discovery is untouched beside another member's created certificate: its hosts
/// stay to be discovered, so the listener's tokens wait for discovery.
#[test]
fn discovery_and_creation_mix_on_one_listener() {
    let docs = [
        ingress(
            "a",
            &[("create-acm-cert", "true"), ("group.order", "1")],
            &["a.example.com"],
        ),
        ingress(
            "b",
            &[
                ("listen-ports", r#"[{"HTTPS": 443}]"#),
                ("group.order", "2"),
            ],
            &["b.example.com"],
        ),
    ];
    let s = build(&docs, &cfg()).unwrap();
    let l = &s.listeners[0];
    assert_eq!(l.certificate_discovery.len(), 2);
    assert_eq!(
        l.certificate_discovery[1].discovery_hosts,
        Some(vec!["b.example.com".to_string()])
    );
    assert_eq!(s.listener_certificate_tokens(l), None);
}

/// Tags: the member's, `--default-tags` over them (whatever `EnableDefaultTagsLowPriority`
/// says, as upstream), the tracking tags over everything.
#[test]
fn certificate_tags_put_the_defaults_over_the_members() {
    let mut c = cfg();
    c.default_tags = [("team".to_string(), "platform".to_string())].into();
    c.feature_gates
        .insert("EnableDefaultTagsLowPriority".into(), true);
    let create = [("create-acm-cert", "true"), ("tags", "team=web,env=prod")];
    let s = build(&[ingress("ing", &create, &["example.com"])], &c).unwrap();
    let cert = only_certificate(&s);
    let t = &cert.tags;
    assert_eq!(t["team"], "platform");
    assert_eq!(t["env"], "prod");
    assert_eq!(t["elbv2.k8s.aws/cluster"], "c");
    assert_eq!(t["ingress.k8s.aws/stack"], "explicit-group");
    assert_eq!(t["ingress.k8s.aws/resource"], cert.id);
}

/// Refusals before any AWS call, each naming the member and annotation: a value that is not a
/// bool; the lone member's error is the build's, another member keeps the group.
#[test]
fn a_bad_value_excludes_the_member_not_the_group() {
    let bad = [("create-acm-cert", "yes"), ("group.order", "1")];
    let good = [("group.order", "2")];
    let docs = [
        ingress("bad", &bad, &["a.example.com"]),
        ingress("good", &good, &["b.example.com"]),
    ];
    let s = build(&docs, &cfg()).unwrap();
    assert_eq!(s.members, ["awesome-ns/good"]);
    assert_eq!(s.excluded_members.len(), 1);
    assert_eq!(
        s.excluded_members[0].annotation.as_deref(),
        Some("alb.ingress.kubernetes.io/create-acm-cert")
    );
    let err = build(&[ingress("bad", &bad, &["a.example.com"])], &cfg()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("ingress: awesome-ns/bad: failed to parse bool annotation"),
        "{err}"
    );
}

/// IngressClassParams `certificateArn` is explicit too: no certificate nobody would serve.
#[test]
fn class_certificates_pin_no_certificate() {
    let class = r#"---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: alb}
spec:
  controller: ingress.k8s.aws/alb
  parameters: {apiGroup: elbv2.k8s.aws, kind: IngressClassParams, name: certs}
---
apiVersion: elbv2.k8s.aws/v1beta1
kind: IngressClassParams
metadata: {name: certs}
spec: {certificateArn: ["arn:aws:acm:us-west-2:1:certificate/class"]}
"#;
    // The class's parameters apply to an Ingress that names the class in its spec.
    let ing = r#"---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ing
  namespace: awesome-ns
  annotations: {alb.ingress.kubernetes.io/create-acm-cert: "true"}
spec:
  ingressClassName: alb
  rules:
  - host: example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"#;
    let s = build(&[class.to_string(), ing.to_string()], &cfg()).unwrap();
    assert!(s.certificates.is_empty(), "{:?}", s.certificates);
    assert_eq!(
        s.listeners[0].certificates,
        ["arn:aws:acm:us-west-2:1:certificate/class"]
    );
}

/// Upstream's stack schema (the `dry-run-plan` annotation): the certificate resource, and the
/// listener's reference to its ARN.
#[test]
fn upstream_json_shows_the_certificate_and_the_reference() {
    let s = build(
        &[ingress(
            "ing",
            &[("create-acm-cert", "true")],
            &["example.com"],
        )],
        &cfg(),
    )
    .unwrap();
    let id = s.certificates[0].id.clone();
    let v = crate::model::upstream_json::render(&s, &Default::default());
    let spec = &v["resources"]["AWS::ACM::Certificate"][&id]["spec"];
    assert_eq!(
        *spec,
        serde_json::json!({
            "type": "AMAZON_ISSUED",
            "certificateAuthorityARN": "",
            "domainName": "example.com",
            "subjectAlternativeNames": ["example.com"],
            "validationMethod": "DNS",
            "keyAlgorithm": "",
        })
    );
    let l = &v["resources"]["AWS::ElasticLoadBalancingV2::Listener"]["443"]["spec"];
    assert_eq!(
        l["certificates"],
        serde_json::json!([{"certificateARN": {"$ref": format!("#/resources/AWS::ACM::Certificate/{id}/status/certificateARN")}}])
    );
}
