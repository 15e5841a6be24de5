//! The offline `plan` command: reads manifests as kept in git (multi-document YAML or JSON;
//! Ingress, Service, IngressClass, IngressClassParams, Namespace, Secret, GatewayClass,
//! Gateway, HTTPRoute, TCPRoute, UDPRoute, LoadBalancerConfiguration, TargetGroupConfiguration,
//! ReferenceGrant and GlobalAccelerator) and prints, per Ingress group, per LoadBalancer
//! Service, per Gateway and (gate `GlobalAcceleratorController`) per GlobalAccelerator this
//! controller would own, the stack it would deploy. No cluster and no AWS access.
//!
//! Fit for a CI gate: plain YAML (or JSON) that any loader reads, exit status 1 when an object
//! fails its model build or a document cannot be read (the others are still planned), and a
//! reader that stops early (`plan | head`) ends it quietly.
//!
//! The manifests are planned as the cluster will see them (see `cluster`): LoadBalancer
//! Services as the chart's Service mutator webhook admits them, the chart's IngressClass when
//! the manifests have none of that name, and a Service being deleted with its deletion checked.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use serde::Serialize;

mod aga;
mod cluster;
mod gateway;
mod manifests;
mod yaml;
pub use manifests::{add_manifests, add_object, outside_watch, parse_documents};
use manifests::{collect_files, documents};
pub use yaml::first_tag;
// `migrate --verify` plans the Ingresses and the Gateways it wrote as `plan` does.
pub(crate) use cluster::add_chart_ingress_class;
pub(crate) use gateway::{accept_rule_configs, GatewayManifests};

use crate::args::ControllerArgs;
use crate::config::Config;
use crate::model::cluster::PLACEHOLDER_SERVICE_UID;
use crate::model::service::{self, ServiceEnv};
use crate::model::{
    self, BuildEnv, ClusterObjects, ExcludedMember, ModelConfig, Stack, SubnetInfo,
};

/// The samples `plan` uses when no `-f` is given.
const EMBEDDED_SAMPLES: &[(&str, &str)] = &[
    (
        "config/samples/ingressclass.yaml",
        include_str!("../../../config/samples/ingressclass.yaml"),
    ),
    (
        "config/samples/ingress-group.yaml",
        include_str!("../../../config/samples/ingress-group.yaml"),
    ),
    (
        "config/samples/ingress-https.yaml",
        include_str!("../../../config/samples/ingress-https.yaml"),
    ),
    (
        "config/samples/ingress-ip-target.yaml",
        include_str!("../../../config/samples/ingress-ip-target.yaml"),
    ),
    (
        "config/samples/service-nlb.yaml",
        include_str!("../../../config/samples/service-nlb.yaml"),
    ),
    (
        "config/samples/gateway-alb.yaml",
        include_str!("../../../config/samples/gateway-alb.yaml"),
    ),
    (
        "config/samples/gateway-nlb.yaml",
        include_str!("../../../config/samples/gateway-nlb.yaml"),
    ),
];

/// `aws-load-balancer-controller plan`: show the AWS resources a set of manifests would produce.
#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    /// Manifest file or directory (YAML, multi-document, or JSON); repeatable. Without it, the
    /// samples built into the binary (config/samples) are planned.
    #[arg(short = 'f', long = "filename")]
    pub filename: Vec<PathBuf>,
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
    /// The chart's `enableServiceMutatorWebhook` (on by default): a `type: LoadBalancer` Service
    /// without a `spec.loadBalancerClass` is planned with `--load-balancer-class`, as the
    /// webhook sets it when the Service is created. `=false`: planned as written.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = crate::goflags::parse_bool)]
    pub enable_service_mutator_webhook: bool,
    /// The chart's `createIngressClassResource` (on by default): unless the manifests define an
    /// IngressClass named `--ingress-class`, the one the chart creates is assumed (controller
    /// `ingress.k8s.aws/alb`, no parameters). `=false`: only the manifests' IngressClasses.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = crate::goflags::parse_bool)]
    pub create_ingress_class_resource: bool,
    /// The controller's own flags (`--feature-gates`, `--default-target-type`, `--ingress-class`,
    /// ...), validated as at controller start; `--cluster-name` defaults to `demo` here.
    #[command(flatten)]
    pub controller: ControllerArgs,
}

/// Cluster name `plan` uses when `--cluster-name` is not given.
pub const DEFAULT_CLUSTER_NAME: &str = "demo";

/// Exit status: every object planned.
pub const EXIT_PLANNED: u8 = 0;
/// Exit status: an object failed its model build or a document could not be read (the plan still
/// lists every other object, and that object's error or the document's), or `plan` itself
/// failed (unreadable file, refused flag). A usage error is 2, from the argument parser, as for
/// `diff`.
pub const EXIT_FAILED: u8 = 1;
/// What `plan --help` says of the exit status.
pub const EXIT_STATUS_HELP: &str = "Exit status: 0 every object planned; 1 an object failed its \
model build or a manifest document could not be read (the plan still lists the others, and that \
object's or document's error) or plan itself failed; 2 a usage error.";

impl PlanArgs {
    /// Parses `plan`'s flags (without the subcommand name), as the command line does.
    pub fn from_flags<I, S>(flags: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = S>,
        S: Into<std::ffi::OsString> + Clone,
    {
        #[derive(clap::Parser)]
        struct Wrapper {
            #[command(flatten)]
            plan: PlanArgs,
        }
        let argv = std::iter::once(std::ffi::OsString::from("plan"))
            .chain(flags.into_iter().map(Into::into));
        <Wrapper as clap::Parser>::try_parse_from(argv).map(|w| w.plan)
    }

    /// The model settings the controller would run with under these flags.
    pub fn model_config(&mut self) -> anyhow::Result<ModelConfig> {
        Ok(ModelConfig::from(&self.config()?))
    }

    /// The controller's validated settings under these flags.
    fn config(&mut self) -> anyhow::Result<Config> {
        let cluster = &mut self.controller.cluster.cluster_name;
        if cluster.trim().is_empty() {
            *cluster = DEFAULT_CLUSTER_NAME.into();
        }
        Ok(Config::from_args(&self.controller)?)
    }
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

/// A manifest document `plan` could not read: not valid YAML, or not a valid object of its
/// kind. The other documents of the file are planned without it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UnreadDocument {
    file: String,
    /// Its number in the file, from 1.
    document: usize,
    /// The line it starts on, from 1.
    line: usize,
    error: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Plan {
    notes: Vec<String>,
    /// Documents not read; each fails the plan (exit status 1).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    unread_documents: Vec<UnreadDocument>,
    groups: Vec<GroupPlan>,
    /// One entry per Service that gets an NLB.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    services: Vec<ServicePlan>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ingresses_not_in_any_group: Vec<ExcludedMember>,
    /// One entry per Gateway of a class this controller owns.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    gateways: Vec<gateway::GatewayPlan>,
    /// One entry per GlobalAccelerator (gate `GlobalAcceleratorController`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    accelerators: Vec<aga::AcceleratorPlan>,
}

impl Plan {
    /// How many objects failed their model build: an Ingress group, Service or Gateway shown
    /// with an error instead of a stack, an Ingress left out of its group's stack for its own
    /// configuration, an Ingress in no group; and the documents not read. None of them would be
    /// deployed as written.
    fn failures(&self) -> usize {
        let groups: usize = self
            .groups
            .iter()
            .map(|g| {
                usize::from(g.error.is_some())
                    + g.stack.as_ref().map_or(0, |s| s.excluded_members.len())
            })
            .sum();
        let services = self.services.iter().filter(|s| s.error.is_some()).count();
        let gateways = self.gateways.iter().filter(|g| g.failed()).count();
        let accelerators = self.accelerators.iter().filter(|a| a.failed()).count();
        groups
            + services
            + gateways
            + accelerators
            + self.ingresses_not_in_any_group.len()
            + self.unread_documents.len()
    }
}

/// `plan` as both binaries run it (`aws-load-balancer-controller plan`, `albc-model plan`): the
/// plan to stdout, a failure of `plan` itself to stderr, and [`run`]'s exit status.
pub fn command(args: PlanArgs) -> std::process::ExitCode {
    match run(args, &mut std::io::stdout().lock()) {
        Ok(status) => std::process::ExitCode::from(status),
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Runs `plan`, writing the plan to `out` and notes about skipped objects and unread documents
/// to stderr; returns the exit status: [`EXIT_PLANNED`], or [`EXIT_FAILED`] when an object failed
/// its model build or a document could not be read.
pub fn run(mut args: PlanArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let flags = args.config()?;
    let cfg = ModelConfig::from(&flags);
    let mut files = Vec::new();
    for p in &args.filename {
        collect_files(p, &mut files)?;
    }
    let mut objs = ClusterObjects::default();
    let mut gateways = gateway::GatewayManifests::default();
    let mut accelerators = aga::AgaManifests::default();
    // What `--watch-namespace` hides from the controllers is not planned.
    let mut outside = Vec::new();
    let mut texts = Vec::new();
    for f in &files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        texts.push((f.clone(), std::borrow::Cow::Owned(text)));
    }
    if args.filename.is_empty() {
        // The embedded default: the samples shipped in config/samples, so `plan` runs anywhere.
        for (name, text) in EMBEDDED_SAMPLES {
            texts.push((PathBuf::from(name), std::borrow::Cow::Borrowed(*text)));
        }
    }
    // What the chart's webhooks and resources change in the manifests (see `cluster`).
    let mut admitted = Vec::new();
    // A document that cannot be read is reported and the others are planned.
    let mut unread = Vec::new();
    for (f, text) in &texts {
        for d in documents(text) {
            let mut report = |error: String| {
                eprintln!(
                    "note: {}: document {} (line {}) is not planned: {error}",
                    f.display(),
                    d.number,
                    d.line
                );
                unread.push(UnreadDocument {
                    file: f.display().to_string(),
                    document: d.number,
                    line: d.line,
                    error,
                });
            };
            let objects = match d.objects {
                Ok(objects) => objects,
                Err(e) => {
                    report(format!("{e:#}"));
                    continue;
                }
            };
            for mut doc in objects {
                if let Some(note) = outside_watch(&doc, &flags.watch_namespaces) {
                    outside.push(note);
                    continue;
                }
                if args.enable_service_mutator_webhook {
                    admitted.extend(cluster::admit_service(&mut doc, &cfg.load_balancer_class));
                }
                let read = match gateways.take(&doc, f) {
                    Ok(true) => Ok(()),
                    Ok(false) => match accelerators.take(&doc, f) {
                        Ok(true) => Ok(()),
                        Ok(false) => add_object(&mut objs, doc, f),
                        Err(e) => Err(e),
                    },
                    Err(e) => Err(e),
                };
                if let Err(e) = read {
                    report(format!("{e:#}"));
                }
            }
        }
    }
    if args.create_ingress_class_resource {
        admitted.extend(cluster::add_chart_ingress_class(
            &mut objs,
            &cfg.ingress_class,
        ));
    }
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
    plan.unread_documents = unread;
    plan.notes.extend(admitted);
    plan.gateways = gateway::gateway_plans(&gateways, &objs, &cfg, &env, vpc_cidrs.as_deref());
    // Feature gate `EnableServiceController`: off, no Service is the controller's.
    if cfg.gate("EnableServiceController") {
        plan.services = service_plans(&objs, &cfg, &env, vpc_cidrs, &mut plan.notes);
    } else {
        plan.notes.push(
            "feature gate EnableServiceController is off: no Service gets a load balancer".into(),
        );
    }
    // GlobalAccelerators last: their endpoints are the load balancers planned above.
    let mut planned = aga::PlannedLbs::new();
    for g in &plan.groups {
        if let Some(stack) = &g.stack {
            aga::plan_ingress_lbs(stack, &mut planned);
        }
    }
    for s in &plan.services {
        if let Some(stack) = &s.stack {
            let (ns, name) = s
                .service
                .split_once('/')
                .unwrap_or(("default", s.service.as_str()));
            aga::plan_service_lb(&s.service, objs.service(ns, name), stack, &mut planned);
        }
    }
    plan.accelerators = aga::accelerator_plans(
        &accelerators,
        &objs,
        &gateways,
        &planned,
        &cfg,
        flags.aws_region.as_deref(),
        &mut plan.notes,
    );
    plan.notes.extend(outside);
    plan.notes.extend(node_port_notes);
    let text = match args.output.as_str() {
        "json" => serde_json::to_string_pretty(&plan)? + "\n",
        _ => yaml::to_string(&plan)?,
    };
    write_report(out, text.as_bytes())?;
    Ok(if plan.failures() > 0 {
        EXIT_FAILED
    } else {
        EXIT_PLANNED
    })
}

/// Writes a command's whole report (`plan`'s, `diff`'s) to `out`, stdout in the binaries. A
/// reader that stops early (`plan | head -1`) closes the pipe because it has what it wanted: that
/// ends the output quietly, neither an error nor a panic.
pub fn write_report(out: &mut dyn Write, report: &[u8]) -> std::io::Result<()> {
    match out.write_all(report).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        written => written,
    }
}

/// First node port used for NodePort/LoadBalancer Services whose manifest leaves it to the
/// API server (instance targets need one; it is hashed into target group names).
pub const PLACEHOLDER_NODE_PORT_BASE: i32 = 30000;

/// Fills missing `nodePort`s of NodePort/LoadBalancer Services (and the health-check node port
/// of `externalTrafficPolicy: Local` LoadBalancer Services) with placeholders, returning notes.
pub(crate) fn placeholder_node_ports(objs: &mut ClusterObjects) -> Vec<String> {
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
        unread_documents: Vec::new(),
        groups,
        services: Vec::new(),
        ingresses_not_in_any_group: errors,
        gateways: Vec::new(),
        accelerators: Vec::new(),
    }
}

/// The NLB stack (or the build error) of every Service the controller would reconcile: those
/// it owns, and those it takes apart (being deleted, or no longer qualifying, while holding its
/// finalizer: an empty stack, noted in `notes`, or upstream's refusal under deletion
/// protection).
fn service_plans(
    objs: &ClusterObjects,
    cfg: &ModelConfig,
    env: &BuildEnv,
    vpc_cidrs: Option<Vec<String>>,
    notes: &mut Vec<String>,
) -> Vec<ServicePlan> {
    let senv = ServiceEnv {
        subnets: env.subnets.clone(),
        existing_load_balancer: None,
        vpc_cidrs,
        backend_services: Default::default(),
    };
    let mut plans: Vec<ServicePlan> = objs
        .services
        .iter()
        .filter_map(|s| cluster::reconciled(s, cfg))
        .map(|(s, taken_apart)| {
            let key = service::service_key(&s);
            // The backends of weighted actions, from the manifests.
            let senv = senv
                .clone()
                .with_backends_of(&s, |ns, name| objs.service(ns, name).cloned());
            let (stack, error) = match service::build_service_stack(&s, cfg, &senv) {
                Ok(stack) => (Some(stack), None),
                Err(e) => (None, Some(e.to_string())),
            };
            if let (Some(why), None) = (taken_apart, &error) {
                notes.push(format!(
                    "Service {key} {why}: the controller deletes its load balancer and target groups (an empty stack)"
                ));
            }
            ServicePlan {
                service: key,
                stack,
                error,
            }
        })
        .collect();
    plans.sort_by(|a, b| a.service.cmp(&b.service));
    plans
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
