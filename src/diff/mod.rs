//! `aws-load-balancer-controller diff`: a one-shot, read-only reconcile of every Ingress group the
//! controller would handle, against the live AWS account and the live cluster (or `-f`
//! manifests). The model is built as the controller builds it and deployed by the same deployer,
//! through the AWS layer's [`Recorder`]: reads are real, writes are recorded and printed instead
//! of sent.
//! The Kubernetes writes (finalizers, TargetGroupBinding objects, status) are computed from the
//! same comparisons the controller makes, with reads only.
//!
//! Every TargetGroupBinding then goes once through the real TargetGroupBinding reconciler with the
//! same recording layers ([`bindings::diff_bindings`]).
//!
//! Stacks are [`StackDiff`]s: [`groups::diff_groups`] for Ingress groups,
//! [`services::diff_services`] for LoadBalancer Services, [`gateways::diff_gateways`] for
//! Gateways and [`accelerators::diff_accelerators`] for GlobalAccelerators (gate
//! `GlobalAcceleratorController`) add their own. Every stack is listed first, then computed one at a time in that
//! order, and each is printed as soon as it is computed ([`output::Sink`]), with a progress
//! line on a terminal ([`progress::Progress`]): the output is that of the whole report,
//! deterministic, without minutes of silence before it.

pub mod accelerators;
pub mod bindings;
pub mod gateway_objects;
pub mod gateways;
pub mod groups;
pub mod output;
pub mod progress;
pub mod services;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use serde::Serialize;

use crate::aws::shadow::RecordedRoles;
pub use crate::aws::shadow::{Change, Recorder, Write};
use crate::aws::{AwsConfig, Cloud, Fence};
use crate::config::{Config, GatewayConfig};
use crate::controller::deployer::{deployer, DeployerParts};
use crate::controller::gateway::Stores;
use crate::controller::ingress::IngressConfig;
use crate::deploy::{CertDiscovery, CertificateTiming, Certificates, Deployer, Inventory};
use crate::model::ClusterObjects;
use albc_model::args::ControllerArgs;
pub use output::{Sink, Totals};
pub use progress::Progress;

/// `aws-load-balancer-controller diff`: the writes a reconcile would make now, without making them.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The controller's own flags (cluster name, region, VPC, endpoints, kubeconfig, gates...).
    #[command(flatten)]
    pub controller: ControllerArgs,
    /// Read Ingress, Service, IngressClass, IngressClassParams, Namespace, Secret, Gateway API
    /// (GatewayClass, Gateway, routes, ReferenceGrant, ListenerSet), gateway.k8s.aws
    /// configuration and GlobalAccelerator objects from these manifest files or directories
    /// instead of the cluster (Kubernetes writes are then not shown).
    #[arg(short = 'f', long = "filename")]
    pub filename: Vec<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long, default_value = "text", value_parser = ["text", "json"])]
    pub output: String,
    /// Exit 0 when nothing would be written, 2 when writes are pending, 1 on error.
    #[arg(long)]
    pub exit_code: bool,
}

/// The writes one stack's reconcile would make, in the order the controller makes them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StackDiff {
    /// `ingress`, `service`, `gateway`, `globalaccelerator` or `targetgroupbinding`.
    pub kind: &'static str,
    /// Group / stack id (`ns/name` or the explicit group name).
    pub stack: String,
    pub writes: Vec<Write>,
    /// Why the reconcile would fail; the writes before the failure are still listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The whole report, as `-o json` prints it (streamed by [`Sink`], stack by stack).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub stacks: Vec<StackDiff>,
    pub pending_writes: usize,
    pub errors: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The exit status `--exit-code` asks for: 0 no writes, 2 writes pending, 1 an error.
pub fn exit_status(totals: &Totals) -> u8 {
    if totals.errors > 0 {
        1
    } else if totals.pending_writes > 0 {
        2
    } else {
        0
    }
}

/// Runs `diff`, printing to `out`, with the progress line on stderr when it is a terminal;
/// returns the exit status (always 0 without `--exit-code`, unless it fails).
pub fn run(args: DiffArgs, out: &mut dyn std::io::Write) -> anyhow::Result<u8> {
    run_with(args, out, Progress::stderr())
}

/// [`run`] with the progress line drawn by `progress`.
pub fn run_with(
    args: DiffArgs,
    out: &mut dyn std::io::Write,
    progress: Progress<'_>,
) -> anyhow::Result<u8> {
    let cfg = Config::from_args(&args.controller)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut sink = Sink::new(out, args.output == "json", progress);
    runtime.block_on(collect(&cfg, &args.filename, &mut sink))?;
    let totals = sink.finish()?;
    Ok(if args.exit_code {
        exit_status(&totals)
    } else {
        u8::from(totals.errors > 0)
    })
}

/// Runs the report into `sink`: AWS clients and cluster objects as the controller gets them,
/// every stack listed, then every stack producer in turn, each stack handed to `sink` as soon
/// as it is computed.
/// Each step is boxed: their futures are large, and unboxed they overflowed the main thread's
/// stack in debug builds.
pub async fn collect(cfg: &Config, files: &[PathBuf], sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let (recorder, cloud) = Box::pin(recorded_cloud(cfg)).await?;
    let mut icfg = IngressConfig::from(cfg);
    // As every controller at start: the model's VPC is the resolved one (`--aws-vpc-tags` or
    // the instance's), not only `--aws-vpc-id`; the plan annotation shows it.
    if icfg.model.vpc_id.is_none() {
        icfg.model.vpc_id = Some(cloud.resolved.vpc_id.clone());
    }
    // One listing of the VPC for every stack of the report, as the controllers share one.
    let inventory = Arc::new(Inventory::new(
        cloud.elbv2.clone(),
        cloud.ec2.clone(),
        cloud.resolved.vpc_id.clone(),
    ));
    let deployer = recorded_deployer(cfg, &icfg, &cloud, CertDiscovery::for_ingresses, &inventory);
    // Gate `EnableCertificateManagement`: the certificates Ingresses ask for, requested through
    // the recorder (which describes them as issued); a real one still pending is not waited for.
    let deployer = if cfg.gate("EnableCertificateManagement") {
        let certs = Certificates::new(cloud.acm.clone(), cloud.route53.clone())
            .with_timing(CertificateTiming::no_wait());
        deployer.with_certificate_management(Arc::new(certs))
    } else {
        deployer
    };
    // The Gateway controllers' own ACM discovery, as the controller builds it (it never leaves
    // out the certificates `EnableCertificateManagement` made); upstream's Gateway deployers
    // always reset dropped listener settings, whatever `EnhancedDefaultBehavior` says.
    let gw_deployer =
        recorded_deployer(cfg, &icfg, &cloud, CertDiscovery::for_gateways, &inventory)
            .with_enhanced_default_behavior(true);
    let mut notes = Vec::new();
    let mut gw_gates = cfg.gateway.clone();
    // Gate `GlobalAcceleratorController`, in a partition with Global Accelerator.
    let aga_on = crate::model::aga::controller_enabled(
        cfg.gate("GlobalAcceleratorController"),
        &cloud.resolved.region,
    );
    let mut planned_accelerators = Vec::new();
    let (objs, client, gw_stores) = if files.is_empty() {
        let (objs, client, stores) = Box::pin(read_cluster(cfg, &mut gw_gates, &mut notes)).await?;
        if aga_on {
            planned_accelerators = Box::pin(read_accelerators(cfg, &client.0, &mut notes)).await?;
        }
        (objs, Some(client), stores)
    } else {
        notes.push(
            "objects read from manifests: Kubernetes writes (finalizers, TargetGroupBindings, status) are not shown".into(),
        );
        let gate = icfg.model.gate("GatewayListenerSet");
        let (objs, stores) = read_manifests(
            files,
            gate,
            &cfg.watch_namespaces,
            &mut planned_accelerators,
            &mut notes,
        )?;
        gateway_objects::add_cluster_objects(&stores, &objs);
        if !aga_on {
            planned_accelerators.clear();
        }
        (objs, None, Some(stores))
    };
    accelerators::plan(&mut planned_accelerators);
    let env = groups::Env {
        recorder: &recorder,
        deployer: &deployer,
        cfg: &icfg,
        client: client.as_ref().map(|(c, _)| c),
    };
    // Every stack is listed before the first is computed: the progress line counts them, and a
    // failure to list ends the run before anything is printed.
    let planned_groups = groups::plan(&env, &objs);
    // Feature gate `EnableServiceController`: the Services the Service reconciler would handle.
    let planned_services = if icfg.model.gate("EnableServiceController") {
        services::plan(&env, &objs)
    } else {
        Vec::new()
    };
    // Gates `ALBGatewayAPI` / `NLBGatewayAPI`: the Gateways of their classes.
    let (alb, nlb) = (gw_gates.alb.enabled, gw_gates.nlb.enabled);
    let planned_gateways = gw_stores
        .as_ref()
        .map(|stores| gateways::plan(stores, alb, nlb))
        .unwrap_or_default();
    let planned_bindings = match &client {
        Some((client, kc)) => Box::pin(bindings::plan(cfg, kc.clone(), client)).await?,
        None => None,
    };
    let counts = [
        ("ingress", planned_groups.len()),
        ("service", planned_services.len()),
        ("gateway", planned_gateways.len()),
        ("globalaccelerator", planned_accelerators.len()),
        (
            "targetgroupbinding",
            planned_bindings.as_ref().map_or(0, |b| b.count()),
        ),
    ];
    sink.begin(notes, &counts)?;
    Box::pin(groups::diff_groups(&env, &objs, &planned_groups, sink)).await?;
    // Subnets and VPC CIDRs, as the Service and Gateway controllers read them.
    let reader = || {
        crate::controller::service::EnvReader::new(
            cloud.ec2.clone(),
            cloud.resolved.vpc_id.clone(),
            cloud.vpc_cidr_texts(),
            icfg.model.gate("SubnetDiscoveryByReachability"),
        )
    };
    if !planned_services.is_empty() {
        Box::pin(services::diff_services(
            &env,
            &reader(),
            &objs,
            &planned_services,
            sink,
        ))
        .await?;
    }
    if let Some(stores) = gw_stores.as_ref().filter(|_| !planned_gateways.is_empty()) {
        let target_groups = gateways::GatewayEnv::target_group_cache(cloud.elbv2.clone());
        let reader = reader();
        let genv = gateways::GatewayEnv {
            stores,
            reader: &reader,
            target_groups: &target_groups,
            objs: &objs,
            required_secrets_label: cfg.required_secrets_label.as_ref(),
        };
        let env = groups::Env {
            deployer: &gw_deployer,
            ..env
        };
        Box::pin(gateways::diff_gateways(
            &env,
            &genv,
            &planned_gateways,
            sink,
        ))
        .await?;
    }
    if !planned_accelerators.is_empty() {
        let aenv = accelerators::AgaEnv {
            recorder: &recorder,
            ga: cloud.global_accelerator.as_ref(),
            elbv2: cloud.elbv2.as_ref(),
            objs: &objs,
            gateways: gw_stores.as_ref(),
            builder: crate::model::aga::AgaConfig::new(&icfg.model, &cloud.resolved.region),
            opts: crate::deploy::aga::AgaOptions {
                cluster: cfg.cluster_name.clone(),
                external_managed_tags: cfg.external_managed_tags.clone(),
            },
            kube: client.is_some(),
        };
        Box::pin(accelerators::diff_accelerators(
            &aenv,
            &planned_accelerators,
            sink,
        ))
        .await?;
    }
    if let Some(planned) = planned_bindings {
        Box::pin(bindings::diff_bindings(
            cfg,
            planned,
            recorder.clone(),
            &cloud,
            sink,
        ))
        .await?;
    }
    Ok(())
}

/// The AWS side of the report, as the controller resolves it, behind the recorder: real reads,
/// every write kept for the report; cross-account bindings' clients refuse (the report would
/// not show their writes).
async fn recorded_cloud(cfg: &Config) -> anyhow::Result<(Arc<Recorder>, Cloud)> {
    let aws = AwsConfig::from(cfg);
    let (elbv2, ec2, roles, resolved) =
        crate::aws::build_with_roles(&aws, &cfg.cluster_name, None, Fence::default())
            .await
            .context("setting up the AWS clients")?;
    let vpc_cidrs = crate::aws::cloud::vpc_cidrs(ec2.as_ref(), &resolved.vpc_id)
        .await
        .context("reading the VPC")?;
    let addons = crate::aws::build_addons(&aws, &resolved.region, None, Fence::default())
        .await
        .enabled(cfg.enable_waf, cfg.enable_wafv2, cfg.enable_shield);
    let global_accelerator =
        crate::aws::build_global_accelerator(&aws, None, Fence::default()).await;
    // ACM and Route 53 behind the recorder too: certificate discovery reads for real, the
    // certificates created for Ingresses (gate `EnableCertificateManagement`) are recorded.
    let acm = crate::aws::build_acm(&aws, &resolved.region, None).await;
    let route53 = crate::aws::build_route53(&aws, &resolved.region, None, Fence::default()).await;
    let recorder = Arc::new(
        Recorder::new(elbv2, ec2)
            .with_addons(addons.clone())
            .with_certificates(acm, route53)
            .with_global_accelerator(global_accelerator),
    );
    let cloud = Cloud {
        elbv2: recorder.clone(),
        ec2: recorder.clone(),
        roles: Arc::new(RecordedRoles::diff(roles, recorder.clone())),
        acm: recorder.clone(),
        route53: recorder.clone(),
        resolved,
        vpc_cidrs,
        metrics: None,
        addons: recorder.addons_view(&addons),
        tagging: None,
        global_accelerator: recorder.clone(),
    };
    Ok((recorder, cloud))
}

/// The deployer a controller builds, writing through the recorder, with the ACM discovery
/// `discovery` makes. Gate `EnableRGTAPI` is left out: the tagging index does not know what the
/// recorder pretends to create, and the ELBv2 lookups through it find the same resources.
fn recorded_deployer(
    cfg: &Config,
    icfg: &IngressConfig,
    cloud: &Cloud,
    discovery: fn(&Config, Arc<dyn crate::aws::Acm>) -> Arc<CertDiscovery>,
    inventory: &Arc<Inventory>,
) -> Deployer {
    let parts = DeployerParts {
        tagging: None,
        addons: cloud.addons.clone(),
        lb_stabilization_interval: cfg.lb_stabilization_monitor_interval,
        cert_discovery: Some(discovery(cfg, cloud.acm.clone())),
        inventory: Some(inventory.clone()),
        sync_period: cfg.sync_period,
    };
    let vpc_id = &cloud.resolved.vpc_id;
    deployer(
        cloud.elbv2.clone(),
        cloud.ec2.clone(),
        vpc_id,
        &icfg.model,
        parts,
    )
    // A pretended delete never frees anything, so waiting for it would only stall.
    .with_delete_retry(Duration::from_millis(1), Duration::from_millis(1))
}

/// The cluster's objects as the controller's watches see them, with the client the Kubernetes
/// writes are computed through. As the controller at start, a Gateway gate whose CRDs the
/// cluster lacks turns off (noted).
async fn read_cluster(
    cfg: &Config,
    gw_gates: &mut GatewayConfig,
    notes: &mut Vec<String>,
) -> anyhow::Result<(ClusterObjects, (kube::Client, kube::Config), Option<Stores>)> {
    let kc = kube_config(cfg).await?;
    let client = kube::Client::try_from(kc.clone())?;
    let objs = groups::list_objects(&client, cfg).await?;
    if gw_gates.crd_detection_needed() {
        let served = crate::controller::gateway::detect::served_kinds(&client)
            .await
            .context("discovering the Gateway API kinds")?;
        for off in gw_gates.apply_crd_detection(&served) {
            notes.push(format!("{} ({})", off.message, off.missing.join(", ")));
        }
    }
    let stores = if gw_gates.alb.enabled || gw_gates.nlb.enabled {
        let sets = gw_gates.listener_set.enabled;
        let s = gateway_objects::list(&client, &cfg.watch_namespaces, &objs, sets).await?;
        if s.is_none() {
            notes.push("the cluster does not serve the Gateway API: no Gateways".into());
        }
        s
    } else {
        None
    };
    Ok((objs, (client, kc), stores))
}

/// The GlobalAccelerators of the cluster as the controller watches them; none (noted) when the
/// API server does not serve their CRD.
async fn read_accelerators(
    cfg: &Config,
    client: &kube::Client,
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<crate::crd::global_accelerator::GlobalAccelerator>> {
    let served = crate::controller::aga::detect::served(client)
        .await
        .context("discovering the GlobalAccelerator CRD")?;
    if !served.accelerators {
        notes.push("the cluster does not serve GlobalAccelerators: none".into());
        return Ok(Vec::new());
    }
    groups::list(client, &cfg.watch_namespaces)
        .await
        .context("listing GlobalAccelerators")
}

/// The objects of the manifests: the Gateway kinds in the Gateway controllers' stores, the
/// GlobalAccelerators in `accelerators`, the rest as `plan` reads them.
/// As from the cluster, only what the controllers' watches see (`--watch-namespace`): the
/// objects elsewhere are left out, with a note each.
fn read_manifests(
    files: &[PathBuf],
    listener_sets: bool,
    namespaces: &[String],
    accelerators: &mut Vec<crate::crd::global_accelerator::GlobalAccelerator>,
    notes: &mut Vec<String>,
) -> anyhow::Result<(ClusterObjects, crate::controller::gateway::Stores)> {
    let mut objs = ClusterObjects::default();
    let stores = crate::controller::gateway::Stores {
        listener_sets_on: listener_sets,
        ..Default::default()
    };
    let mut stack = files.to_vec();
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            for e in std::fs::read_dir(&p).with_context(|| format!("reading {}", p.display()))? {
                let e = e?.path();
                let ext = e.extension().and_then(|x| x.to_str()).unwrap_or("");
                if e.is_dir() || matches!(ext, "yaml" | "yml" | "json") {
                    stack.push(e);
                }
            }
        } else {
            let text =
                std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
            let docs = crate::plan::parse_documents(&text)
                .with_context(|| format!("parsing {}", p.display()))?;
            for doc in docs {
                if let Some(note) = crate::plan::outside_watch(&doc, namespaces) {
                    notes.push(note);
                } else if doc.get("kind").and_then(serde_json::Value::as_str)
                    == Some("GlobalAccelerator")
                {
                    let mut ga: crate::crd::global_accelerator::GlobalAccelerator =
                        serde_json::from_value(doc)
                            .with_context(|| format!("{}: GlobalAccelerator", p.display()))?;
                    ga.metadata
                        .namespace
                        .get_or_insert_with(|| "default".into());
                    accelerators.push(ga);
                } else if !gateway_objects::take(&stores, &doc, &p)? {
                    crate::plan::add_object(&mut objs, doc, &p)?;
                }
            }
        }
    }
    Ok((objs, stores))
}

/// The Kubernetes client settings from `--kubeconfig`, else in-cluster / the default
/// kubeconfig. One attempt: a one-shot command reports an unreachable API server, no retries.
async fn kube_config(cfg: &Config) -> anyhow::Result<kube::Config> {
    let kc = match &cfg.kubeconfig {
        Some(path) => {
            let kc = kube::config::Kubeconfig::read_from(path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?
        }
        None => kube::Config::infer()
            .await
            .context("no in-cluster service account and no usable kubeconfig (set --kubeconfig)")?,
    };
    Ok(kc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_terraform() {
        let totals = |pending_writes, errors| Totals {
            pending_writes,
            errors,
        };
        assert_eq!(exit_status(&totals(1, 0)), 2);
        assert_eq!(exit_status(&totals(0, 0)), 0);
        assert_eq!(exit_status(&totals(0, 1)), 1);
        assert_eq!(exit_status(&totals(3, 1)), 1);
    }
}
