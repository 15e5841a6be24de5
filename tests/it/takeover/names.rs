//! Upstream's (v3.5) naming of the AWS resources of an Ingress stack, written from its Go source
//! (`pkg/ingress/model_build_{load_balancer,managed_sg,target_group}.go`,
//! `pkg/networking/backend_sg_provider.go`), independent of our model, and pinned to the names
//! in upstream's own test tables (`pkg/ingress/model_builder_test.go`).

use sha2::{Digest, Sha256};

fn hash(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
    }
    hex::encode(h.finalize())
}

/// `[[:^alnum:]]` removed.
fn alnum(s: &str) -> String {
    s.chars().filter(char::is_ascii_alphanumeric).collect()
}

fn cut(s: &str, n: usize) -> &str {
    &s[..s.len().min(n)]
}

/// Upstream's `GroupID.String()`: `ns/name` for an implicit group, the name for an explicit one.
pub struct Group<'a> {
    pub namespace: Option<&'a str>,
    pub name: &'a str,
}

impl Group<'_> {
    pub fn id(&self) -> String {
        match self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.to_string(),
        }
    }

    fn named(&self, uuid: &str) -> String {
        match self.namespace {
            None => format!("k8s-{}-{}", cut(&alnum(self.name), 17), cut(uuid, 10)),
            Some(ns) => format!(
                "k8s-{}-{}-{}",
                cut(&alnum(ns), 8),
                cut(&alnum(self.name), 8),
                cut(uuid, 10)
            ),
        }
    }
}

pub fn load_balancer(cluster: &str, g: &Group<'_>, scheme: &str) -> String {
    g.named(&hash(&[cluster, &g.id(), scheme]))
}

pub fn managed_sg(cluster: &str, g: &Group<'_>) -> String {
    g.named(&hash(&[cluster, &g.id()]))
}

pub fn backend_sg(cluster: &str) -> String {
    format!(
        "k8s-traffic-{}-{}",
        cut(&alnum(cluster), 232),
        cut(&hash(&[cluster]), 10)
    )
}

/// Inputs of a target group's name, in upstream's hash order.
pub struct TgName<'a> {
    pub ingress: (&'a str, &'a str),
    pub service: (&'a str, &'a str),
    pub service_uid: &'a str,
    /// The Ingress's port reference as text (`http` or `80`).
    pub port: &'a str,
    pub tg_port: i32,
    pub target_type: &'a str,
    pub protocol: &'a str,
    pub protocol_version: &'a str,
}

pub fn target_group(cluster: &str, g: &Group<'_>, t: &TgName<'_>) -> String {
    let uuid = hash(&[
        cluster,
        &g.id(),
        t.ingress.0,
        t.ingress.1,
        t.service_uid,
        t.port,
        &t.tg_port.to_string(),
        t.target_type,
        t.protocol,
        t.protocol_version,
    ]);
    format!(
        "k8s-{}-{}-{}",
        cut(&alnum(t.service.0), 8),
        cut(&alnum(t.service.1), 8),
        cut(&uuid, 10)
    )
}

#[test]
fn names_match_upstreams_test_tables() {
    let g = Group {
        namespace: Some("ns-1"),
        name: "ing-1",
    };
    assert_eq!(
        load_balancer("cluster-dummy", &g, "internal"),
        "k8s-ns1-ing1-b7e914000d"
    );
    assert_eq!(managed_sg("cluster-dummy", &g), "k8s-ns1-ing1-bd83176788");
    let svc1 = TgName {
        ingress: ("ns-1", "ing-1"),
        service: ("ns-1", "svc-1"),
        service_uid: "",
        port: "http",
        tg_port: 32768,
        target_type: "instance",
        protocol: "HTTP",
        protocol_version: "HTTP1",
    };
    assert_eq!(
        target_group("cluster-dummy", &g, &svc1),
        "k8s-ns1-svc1-9889425938"
    );
    let svc3 = TgName {
        service: ("ns-1", "svc-3"),
        port: "https",
        tg_port: 8443,
        target_type: "ip",
        protocol: "HTTPS",
        ..svc1
    };
    assert_eq!(
        target_group("cluster-dummy", &g, &svc3),
        "k8s-ns1-svc3-bf42870fba"
    );
}
