//! The offline `plan` command: reads manifests as kept in git (multi-document YAML or JSON;
//! Ingress, Service, IngressClass, IngressClassParams, Namespace) and prints, per Ingress group
//! and per LoadBalancer Service this controller would own, the stack it would deploy. No
//! cluster and no AWS access.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::Serialize;
use serde_json::Value;

use crate::model::service::{self, ServiceEnv};
use crate::model::target_group::PLACEHOLDER_SERVICE_UID;
use crate::model::{
    self, BuildEnv, ClusterObjects, ExcludedMember, LoadBalancerScheme, ModelConfig, Stack,
    SubnetInfo, TargetType,
};

/// The samples `plan` uses when no `-f` is given.
const EMBEDDED_SAMPLES: &[(&str, &str)] = &[
    (
        "config/samples/ingressclass.yaml",
        include_str!("../config/samples/ingressclass.yaml"),
    ),
    (
        "config/samples/ingress-group.yaml",
        include_str!("../config/samples/ingress-group.yaml"),
    ),
    (
        "config/samples/ingress-https.yaml",
        include_str!("../config/samples/ingress-https.yaml"),
    ),
    (
        "config/samples/ingress-ip-target.yaml",
        include_str!("../config/samples/ingress-ip-target.yaml"),
    ),
    (
        "config/samples/service-nlb.yaml",
        include_str!("../config/samples/service-nlb.yaml"),
    ),
];

/// `aws-load-balancer-controller plan`: show the AWS resources a set of manifests would produce.
#[derive(clap::Args, Debug, Clone)]
pub struct PlanArgs {
    /// Manifest file or directory (YAML, multi-document, or JSON); repeatable. Without it, the
    /// samples built into the binary (config/samples) are planned.
    #[arg(short = 'f', long = "filename")]
    pub filename: Vec<PathBuf>,
    /// Kubernetes cluster name (hashed into generated names and tags).
    #[arg(long, default_value = "demo")]
    pub cluster_name: String,
    /// VPC id written into TargetGroupBindings.
    #[arg(long)]
    pub aws_vpc_id: Option<String>,
    /// JSON array of subnets (`[{"id","availabilityZone","availableIps","tags",...}]`) to
    /// resolve subnets; without it the discovery criteria are shown.
    #[arg(long)]
    pub subnets_file: Option<PathBuf>,
    /// JSON array of the VPC's CIDR blocks (`["10.0.0.0/16", "2600:1f13::/56"]`): the default
    /// sources of node rules for internal NLBs without security groups.
    #[arg(long)]
    pub vpc_file: Option<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long, default_value = "yaml", value_parser = ["yaml", "json"])]
    pub output: String,
    /// IngressClass this controller serves.
    #[arg(long, default_value = "alb")]
    pub ingress_class: String,
    /// Tags added to every AWS resource (`k=v,k2=v2`).
    #[arg(long)]
    pub default_tags: Option<String>,
    /// Target type when not annotated (`instance` or `ip`).
    #[arg(long, default_value = "instance", value_parser = ["instance", "ip"])]
    pub default_target_type: String,
    /// Scheme when not annotated (`internal` or `internet-facing`).
    #[arg(long, default_value = "internal", value_parser = ["internal", "internet-facing"])]
    pub default_load_balancer_scheme: String,
    /// `spec.loadBalancerClass` of the Services this controller owns.
    #[arg(long, default_value = "service.k8s.aws/nlb")]
    pub load_balancer_class: String,
    /// Feature gates, as the controller takes them (`Name=true,Name=false`).
    #[arg(long, default_value = "")]
    pub feature_gates: String,
    /// Shared backend security group id (`sg-...`); auto-created when empty.
    #[arg(long, default_value = "")]
    pub backend_security_group: String,
    /// Use the shared backend security group for load balancer → target traffic.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = crate::goflags::parse_bool)]
    pub enable_backend_security_group: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupPlan {
    group: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    stack: Option<Stack>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ServicePlan {
    service: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    stack: Option<Stack>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Plan {
    notes: Vec<String>,
    groups: Vec<GroupPlan>,
    /// One entry per Service that gets an NLB.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    services: Vec<ServicePlan>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ingresses_not_in_any_group: Vec<ExcludedMember>,
}

/// Runs `plan`, writing the plan to `out` and notes about skipped objects to stderr.
pub fn run(args: PlanArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut files = Vec::new();
    for p in &args.filename {
        collect_files(p, &mut files)?;
    }
    let mut objs = ClusterObjects::default();
    for f in &files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        for doc in parse_documents(&text).with_context(|| format!("parsing {}", f.display()))? {
            add_object(&mut objs, doc, f)?;
        }
    }
    if args.filename.is_empty() {
        // The embedded default: the samples shipped in config/samples, so `plan` runs anywhere.
        for (name, text) in EMBEDDED_SAMPLES {
            let path = std::path::Path::new(name);
            for doc in parse_documents(text).with_context(|| format!("parsing embedded {name}"))? {
                add_object(&mut objs, doc, path)?;
            }
        }
    }
    let default_tags = match &args.default_tags {
        Some(raw) => crate::annotations::parse_string_map(raw)
            .ok_or_else(|| anyhow::anyhow!("invalid --default-tags: {raw}"))?,
        None => BTreeMap::new(),
    };
    let cfg = ModelConfig {
        cluster_name: args.cluster_name.clone(),
        vpc_id: args.aws_vpc_id.clone(),
        ingress_class: args.ingress_class.clone(),
        default_tags,
        default_target_type: if args.default_target_type == "ip" {
            TargetType::Ip
        } else {
            TargetType::Instance
        },
        default_scheme: if args.default_load_balancer_scheme == "internet-facing" {
            LoadBalancerScheme::InternetFacing
        } else {
            LoadBalancerScheme::Internal
        },
        load_balancer_class: args.load_balancer_class.clone(),
        feature_gates: ModelConfig::parse_feature_gates(&args.feature_gates)
            .map_err(|e| anyhow::anyhow!("invalid --feature-gates: {e}"))?,
        backend_sg_id: Some(args.backend_security_group.clone()).filter(|s| !s.is_empty()),
        enable_backend_sg: args.enable_backend_security_group,
        ..ModelConfig::default()
    };
    let env = BuildEnv {
        subnets: match &args.subnets_file {
            Some(p) => {
                let raw = std::fs::read_to_string(p)
                    .with_context(|| format!("reading {}", p.display()))?;
                Some(
                    serde_json::from_str::<Vec<SubnetInfo>>(&raw)
                        .with_context(|| format!("parsing {}", p.display()))?,
                )
            }
            None => None,
        },
        existing_load_balancer: None,
    };
    let vpc_cidrs = match &args.vpc_file {
        Some(p) => {
            let raw =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            Some(
                serde_json::from_str::<Vec<String>>(&raw)
                    .with_context(|| format!("parsing {}", p.display()))?,
            )
        }
        None => None,
    };
    let node_port_notes = placeholder_node_ports(&mut objs);
    let mut plan = make_plan(&objs, &cfg, &env);
    plan.services = service_plans(&objs, &cfg, &env, vpc_cidrs);
    plan.notes.extend(node_port_notes);
    match args.output.as_str() {
        "json" => {
            serde_json::to_writer_pretty(&mut *out, &plan)?;
            writeln!(out)?;
        }
        _ => out.write_all(serde_yaml::to_string(&plan)?.as_bytes())?,
    }
    Ok(())
}

/// First node port used for NodePort/LoadBalancer Services whose manifest leaves it to the
/// API server (instance targets need one; it is hashed into target group names).
pub const PLACEHOLDER_NODE_PORT_BASE: i32 = 30000;

/// Fills missing `nodePort`s of NodePort/LoadBalancer Services (and the health-check node port
/// of `externalTrafficPolicy: Local` LoadBalancer Services) with placeholders, returning notes.
fn placeholder_node_ports(objs: &mut ClusterObjects) -> Vec<String> {
    let mut notes = Vec::new();
    let mut next = PLACEHOLDER_NODE_PORT_BASE;
    for svc in &mut objs.services {
        let key = model::group::key_of(&svc.metadata);
        let Some(spec) = svc.spec.as_mut() else {
            continue;
        };
        if !matches!(
            spec.type_.as_deref(),
            Some("NodePort") | Some("LoadBalancer")
        ) {
            continue;
        }
        let lb = spec.type_.as_deref() == Some("LoadBalancer");
        if lb
            && spec.external_traffic_policy.as_deref() == Some("Local")
            && spec.health_check_node_port.is_none()
        {
            spec.health_check_node_port = Some(next);
            notes.push(format!(
                "Service {key} has no healthCheckNodePort in the manifest (the API server allocates it); plan uses placeholder {next}"
            ));
            next += 1;
        }
        // Without allocated node ports the API server leaves them empty, and so does plan.
        if lb && spec.allocate_load_balancer_node_ports == Some(false) {
            continue;
        }
        for p in spec.ports.iter_mut().flatten() {
            if p.node_port.is_none() {
                p.node_port = Some(next);
                notes.push(format!(
                    "Service {key} port {} has no nodePort in the manifest (the API server allocates it); plan uses placeholder {next}",
                    p.port
                ));
                next += 1;
            }
        }
    }
    notes
}

fn make_plan(objs: &ClusterObjects, cfg: &ModelConfig, env: &BuildEnv) -> Plan {
    let mut notes = vec![format!(
        "target group names (and NLB and NLB security group names) hash the live Service UID; Services without metadata.uid use the placeholder {PLACEHOLDER_SERVICE_UID}, so those names will differ in the cluster"
    )];
    if env.subnets.is_none() {
        notes.push(
            "no --subnets-file: subnets show the discovery criteria instead of subnet ids".into(),
        );
    }
    let (groups, errors) = model::load_groups(objs, &cfg.ingress_class);
    let groups = groups
        .values()
        .map(|g| match model::build_stack(g, objs, cfg, env) {
            Ok(stack) => GroupPlan {
                group: g.id.as_string(),
                stack: Some(stack),
                error: None,
            },
            Err(e) => GroupPlan {
                group: g.id.as_string(),
                stack: None,
                error: Some(e.to_string()),
            },
        })
        .collect();
    Plan {
        notes,
        groups,
        services: Vec::new(),
        ingresses_not_in_any_group: errors,
    }
}

/// The NLB stack (or the build error) of every Service the controller would own.
fn service_plans(
    objs: &ClusterObjects,
    cfg: &ModelConfig,
    env: &BuildEnv,
    vpc_cidrs: Option<Vec<String>>,
) -> Vec<ServicePlan> {
    let senv = ServiceEnv {
        subnets: env.subnets.clone(),
        existing_load_balancer: None,
        vpc_cidrs,
    };
    let mut plans: Vec<ServicePlan> = objs
        .services
        .iter()
        .filter(|s| service::is_service_supported(s, cfg))
        .map(|s| {
            let (stack, error) = match service::build_service_stack(s, cfg, &senv) {
                Ok(stack) => (Some(stack), None),
                Err(e) => (None, Some(e.to_string())),
            };
            ServicePlan {
                service: service::service_key(s),
                stack,
                error,
            }
        })
        .collect();
    plans.sort_by(|a, b| a.service.cmp(&b.service));
    plans
}

fn collect_files(p: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
            .with_context(|| format!("reading directory {}", p.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            let ext = e.extension().and_then(|x| x.to_str()).unwrap_or("");
            if e.is_dir() || matches!(ext, "yaml" | "yml" | "json") {
                collect_files(&e, files)?;
            }
        }
    } else if p.exists() {
        files.push(p.to_path_buf());
    } else {
        bail!("{}: no such file or directory", p.display());
    }
    Ok(())
}

/// Splits YAML (multi-document) or JSON text into objects; `List` kinds are flattened.
pub fn parse_documents(text: &str) -> anyhow::Result<Vec<Value>> {
    let mut docs = Vec::new();
    for de in serde_yaml::Deserializer::from_str(text) {
        let v: Value = serde::Deserialize::deserialize(de)?;
        if v.is_null() {
            continue;
        }
        if v.get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k.ends_with("List"))
        {
            docs.extend(
                v.get("items")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
            );
        } else {
            docs.push(v);
        }
    }
    Ok(docs)
}

/// Adds every object of a manifest text (YAML or JSON) to `objs`; other kinds are noted on stderr.
pub fn add_manifests(objs: &mut ClusterObjects, text: &str, file: &Path) -> anyhow::Result<()> {
    for doc in parse_documents(text).with_context(|| format!("parsing {}", file.display()))? {
        add_object(objs, doc, file)?;
    }
    Ok(())
}

fn add_object(objs: &mut ClusterObjects, doc: Value, file: &Path) -> anyhow::Result<()> {
    let kind = doc
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let name = doc
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let ctx = || format!("{}: {kind} {name}", file.display());
    match kind.as_str() {
        "Ingress" => objs.ingresses.push(with_default_ns(
            serde_json::from_value(doc).with_context(ctx)?,
        )),
        "Service" => {
            let mut s: k8s_openapi::api::core::v1::Service =
                serde_json::from_value(doc).with_context(ctx)?;
            s.metadata.namespace.get_or_insert_with(|| "default".into());
            objs.services.push(s)
        }
        "IngressClass" => objs
            .ingress_classes
            .push(serde_json::from_value(doc).with_context(ctx)?),
        "IngressClassParams" => objs
            .ingress_class_params
            .push(serde_json::from_value(doc).with_context(ctx)?),
        "Namespace" => objs
            .namespaces
            .push(serde_json::from_value(doc).with_context(ctx)?),
        _ => eprintln!(
            "note: {}: skipping {kind} {name} (not read by plan)",
            file.display()
        ),
    }
    Ok(())
}

fn with_default_ns(
    mut ing: k8s_openapi::api::networking::v1::Ingress,
) -> k8s_openapi::api::networking::v1::Ingress {
    ing.metadata
        .namespace
        .get_or_insert_with(|| "default".into());
    ing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_multi_document_yaml_and_lists() {
        let docs = parse_documents(
            "a: 1\n---\nkind: List\nitems:\n- kind: Service\n- kind: Ingress\n---\n",
        )
        .unwrap();
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[2]["kind"], "Ingress");
    }

    #[test]
    fn plan_prints_stack_for_sample_ingress() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("app.yaml");
        std::fs::write(
            &f,
            r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  type: NodePort
  ports: [{name: http, port: 80, targetPort: 8080, nodePort: 30080}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/scheme: internet-facing
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ignored}
"#,
        )
        .unwrap();
        let args = PlanArgs {
            filename: vec![dir.path().to_path_buf()],
            cluster_name: "demo".into(),
            aws_vpc_id: None,
            subnets_file: None,
            vpc_file: None,
            output: "json".into(),
            ingress_class: "alb".into(),
            default_tags: Some("team=web".into()),
            default_target_type: "instance".into(),
            default_load_balancer_scheme: "internal".into(),
            load_balancer_class: "service.k8s.aws/nlb".into(),
            feature_gates: String::new(),
            backend_security_group: String::new(),
            enable_backend_security_group: true,
        };
        let mut out = Vec::new();
        run(args, &mut out).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let stack = &v["groups"][0]["stack"];
        assert_eq!(v["groups"][0]["group"], "shop/web");
        assert_eq!(stack["loadBalancer"]["scheme"], "internet-facing");
        assert_eq!(stack["loadBalancer"]["tags"]["team"], "web");
        assert_eq!(
            stack["loadBalancer"]["subnets"]["discover"]["roleTag"],
            "kubernetes.io/role/elb"
        );
        assert_eq!(
            stack["targetGroups"][0]["serviceUid"],
            PLACEHOLDER_SERVICE_UID
        );
        assert!(v["notes"][0].as_str().unwrap().contains("placeholder"));
    }

    fn args(filename: Vec<PathBuf>) -> PlanArgs {
        PlanArgs {
            filename,
            cluster_name: "demo".into(),
            aws_vpc_id: None,
            subnets_file: None,
            vpc_file: None,
            output: "json".into(),
            ingress_class: "alb".into(),
            default_tags: None,
            default_target_type: "instance".into(),
            default_load_balancer_scheme: "internal".into(),
            load_balancer_class: "service.k8s.aws/nlb".into(),
            feature_gates: String::new(),
            backend_security_group: String::new(),
            enable_backend_security_group: true,
        }
    }

    #[test]
    fn plan_prints_nlb_stack_for_load_balancer_services_only() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("svc.yaml");
        std::fs::write(
            &f,
            r#"
apiVersion: v1
kind: Service
metadata:
  name: dns
  namespace: infra
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: external
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: instance
    service.beta.kubernetes.io/aws-load-balancer-enable-tcp-udp-listener: "true"
spec:
  type: LoadBalancer
  ports:
  - {name: dns-tcp, port: 53, targetPort: 53, protocol: TCP}
  - {name: dns-udp, port: 53, targetPort: 53, protocol: UDP}
---
apiVersion: v1
kind: Service
metadata: {name: in-tree, namespace: infra, annotations: {service.beta.kubernetes.io/aws-load-balancer-type: nlb}}
spec:
  type: LoadBalancer
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: by-class, namespace: infra}
spec:
  type: LoadBalancer
  loadBalancerClass: service.k8s.aws/nlb
  ports: [{port: 80}]
"#,
        )
        .unwrap();
        let mut out = Vec::new();
        run(args(vec![f]), &mut out).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let services = v["services"].as_array().unwrap();
        let keys: Vec<&str> = services
            .iter()
            .map(|s| s["service"].as_str().unwrap())
            .collect();
        assert_eq!(
            keys,
            vec!["infra/by-class", "infra/dns"],
            "the in-tree `nlb` Service is not ours"
        );
        // Instance targets (the default) on node ports `plan` fills with placeholders.
        let dns = &services[1]["stack"];
        assert_eq!(dns["loadBalancer"]["type"], "network");
        assert_eq!(
            dns["loadBalancer"]["tags"]["service.k8s.aws/stack"],
            "infra/dns"
        );
        assert_eq!(dns["listeners"][0]["protocol"], "TCP_UDP");
        assert_eq!(dns["targetGroups"][0]["protocol"], "TCP_UDP");
        assert_eq!(dns["targetGroups"][0]["port"], PLACEHOLDER_NODE_PORT_BASE);
        assert!(services[0].get("error").is_none(), "{}", services[0]);
    }

    #[test]
    fn local_traffic_policy_gets_a_placeholder_health_check_node_port() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("svc.yaml");
        std::fs::write(
            &f,
            r#"
apiVersion: v1
kind: Service
metadata: {name: local, namespace: web}
spec:
  type: LoadBalancer
  loadBalancerClass: service.k8s.aws/nlb
  externalTrafficPolicy: Local
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: unallocated, namespace: web}
spec:
  type: LoadBalancer
  loadBalancerClass: service.k8s.aws/nlb
  allocateLoadBalancerNodePorts: false
  ports: [{port: 80, targetPort: 8080}]
"#,
        )
        .unwrap();
        let mut out = Vec::new();
        run(args(vec![f]), &mut out).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let hc = &v["services"][0]["stack"]["targetGroups"][0]["healthCheck"];
        assert_eq!(hc["port"], PLACEHOLDER_NODE_PORT_BASE.to_string());
        assert_eq!(hc["path"], "/healthz");
        assert_eq!(
            v["services"][1]["error"],
            "unable to support instance target type with an unallocated NodePort"
        );
    }

    #[test]
    fn subnets_and_vpc_files_complete_rules_of_nlbs_without_security_groups() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("svc.yaml");
        std::fs::write(
            &f,
            r#"
apiVersion: v1
kind: Service
metadata:
  name: syslog
  namespace: infra
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: nlb-ip
    service.beta.kubernetes.io/aws-load-balancer-disable-nlb-sg: "true"
spec:
  type: LoadBalancer
  ports: [{port: 514, targetPort: 5514, protocol: UDP}]
"#,
        )
        .unwrap();
        let subnets = dir.path().join("subnets.json");
        std::fs::write(&subnets, r#"[{"id": "subnet-a", "availabilityZone": "us-west-2a", "availableIps": 50, "cidrBlock": "10.0.1.0/24", "tags": {"kubernetes.io/role/internal-elb": "1"}}]"#).unwrap();
        let vpc = dir.path().join("vpc.json");
        std::fs::write(&vpc, r#"["10.0.0.0/16", "2600:1f13::/56"]"#).unwrap();
        let mut a = args(vec![f.clone()]);
        let mut out = Vec::new();
        run(a.clone(), &mut out).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let stack = &v["services"][0]["stack"];
        assert!(stack["warnings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("CIDR blocks"));
        a.subnets_file = Some(subnets);
        a.vpc_file = Some(vpc);
        let mut out = Vec::new();
        run(a, &mut out).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let stack = &v["services"][0]["stack"];
        assert_eq!(stack["loadBalancer"]["subnets"]["resolved"][0], "subnet-a");
        let rules = &stack["targetGroupBindings"][0]["spec"]["networkingFromCidrs"];
        // UDP on an internal NLB: traffic from the VPC (IPv4 only), health checks from the subnet.
        assert_eq!(rules[0]["fromCidrs"], serde_json::json!(["10.0.0.0/16"]));
        assert_eq!(
            rules[0]["ports"][0],
            serde_json::json!({"protocol": "UDP", "port": 5514})
        );
        assert_eq!(rules[1]["fromCidrs"], serde_json::json!(["10.0.1.0/24"]));
        assert_eq!(
            rules[1]["ports"][0],
            serde_json::json!({"protocol": "TCP", "port": 5514})
        );
    }

    #[test]
    fn controller_flags_shape_the_nlb_stack() {
        let mut a = args(Vec::new());
        a.feature_gates = "NLBSecurityGroup=false".into();
        let mut out = Vec::new();
        run(a, &mut out).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let stack = &v["services"][0]["stack"];
        assert!(stack.get("managedSecurityGroup").is_none(), "{stack}");
        assert!(stack["loadBalancer"]
            .get("securityGroups")
            .unwrap()
            .as_array()
            .unwrap()
            .is_empty());
        let mut a = args(Vec::new());
        a.backend_security_group = "sg-0123".into();
        let mut out = Vec::new();
        run(a, &mut out).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            v["services"][0]["stack"]["backendSecurityGroup"]["groupId"],
            "sg-0123"
        );
        let mut a = args(Vec::new());
        a.feature_gates = "NoSuchGate=true".into();
        assert!(run(a, &mut Vec::new())
            .unwrap_err()
            .to_string()
            .contains("unknown feature: NoSuchGate"));
    }

    #[test]
    fn embedded_samples_include_an_nlb_service() {
        let mut out = Vec::new();
        run(args(Vec::new()), &mut out).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let svc = &v["services"][0];
        assert_eq!(svc["service"], "default/echo-nlb");
        let stack = &svc["stack"];
        assert_eq!(stack["loadBalancer"]["scheme"], "internet-facing");
        let protocols: Vec<&str> = stack["listeners"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["protocol"].as_str().unwrap())
            .collect();
        assert_eq!(protocols, vec!["TCP", "TLS"]);
        assert_eq!(stack["targetGroups"][0]["targetType"], "ip");
    }

    #[test]
    fn missing_file_is_an_error_not_a_panic() {
        let args = PlanArgs {
            filename: vec!["/nonexistent/x.yaml".into()],
            cluster_name: "c".into(),
            aws_vpc_id: None,
            subnets_file: None,
            vpc_file: None,
            output: "yaml".into(),
            ingress_class: "alb".into(),
            default_tags: None,
            default_target_type: "instance".into(),
            default_load_balancer_scheme: "internal".into(),
            load_balancer_class: "service.k8s.aws/nlb".into(),
            feature_gates: String::new(),
            backend_security_group: String::new(),
            enable_backend_security_group: true,
        };
        let err = run(args, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("no such file"));
    }
}
