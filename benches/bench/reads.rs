//! Issue #43 item 3: the AWS reads of a steady cluster, per AWS call. One process holds the
//! in-memory API server with 1,000 Ingresses in 100 groups (NodePort backends, instance
//! targets), 500 LoadBalancer Services (NLB, instance targets) and 500 stand-alone ip
//! TargetGroupBindings on target groups the fake already holds, so with the bindings the
//! Ingresses and Services make there are 2,000; three nodes back the instance targets. The
//! Ingress, Service and TargetGroupBinding controllers run against FakeAws with 50 ms per call
//! and upstream's default throttles and retries.
//!
//! 1. Cold start until everything converged: every Ingress and Service has its load balancer in
//!    status, every binding exists and is reconciled, and no write for `QUIET`.
//! 2. Periodic work that is not the resync (target-health polls, requeues): every call while
//!    the three controllers idle at the default resync period, per hour of wall time.
//! 3. One controller at a time is restarted with the resync period shortened to `SYNC` (the
//!    other two idle at the default): its restart pass (every cache cold), then `PERIODS`
//!    periods of resyncs. Calls per resync pass = the window's calls, less the periodic work of
//!    the same length, ÷ (reconciles in the window ÷ keys of that controller); then it goes back
//!    to the default period.
//!
//! Per hour at the default period (`--sync-period`, 10 h as upstream): a pass every 10 h plus the
//! periodic work. A real resync 10 h after the last finds every cache with a shorter TTL expired
//! (ELBv2 tags 20 min, ENIs and security groups 10 min, the Service subnets 30 s), as the restart
//! pass does; the resyncs at `SYNC` find them warm. Both figures are printed; the headline is the
//! cold one. `READS_SYNC_SECS` (default 120) and `READS_PERIODS` (default 2) change the window;
//! `READS_SYNC_SECS=1260` outlives every TTL, so its resync column is the 10-hour one directly.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::{
    CreateSecurityGroup, Ec2, Ec2Query, ElbV2, LoadBalancerQuery, Service as AwsService, Tags,
    TargetGroupQuery,
};
use aws_load_balancer_controller::controller::ingress::{self, IngressConfig};
use aws_load_balancer_controller::controller::metrics::ControllerMetrics;
use aws_load_balancer_controller::controller::service::{self, ServiceConfig};
use aws_load_balancer_controller::controller::tgb::{self, TgbConfig};
use aws_load_balancer_controller::crd::TargetGroupBinding;
use aws_load_balancer_controller::model::ModelConfig;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams, PostParams};
use prometheus_client::registry::Registry;
use serde_json::json;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::fixtures::{
    fake_account, ingress_objects, ingresses_with_status, lb_service_objects, reconciles,
    services_with_status,
};

const CLUSTER: &str = "bench";
const VPC_CIDR: &str = "10.0.0.0/16";
const GROUPS: usize = 100;
const PER_GROUP: usize = 10;
const INGRESSES: usize = GROUPS * PER_GROUP;
const SVC_NAMESPACES: usize = 10;
const PER_SVC_NAMESPACE: usize = 50;
const SERVICES: usize = SVC_NAMESPACES * PER_SVC_NAMESPACE;
/// Every binding: one per Ingress backend, one per Service port, and the stand-alone ones.
const BINDINGS: usize = 2_000;
const STANDALONE: usize = BINDINGS - INGRESSES - SERVICES;
/// Ready pods registered behind each stand-alone binding.
const PODS_PER: usize = 2;
const NODES: usize = 3;
const LATENCY: Duration = Duration::from_millis(50);
/// No write for this long ends the cold start.
const QUIET: Duration = Duration::from_secs(20);
/// The longest a phase may take before the bench gives up.
const PATIENCE: Duration = Duration::from_secs(3600);
/// AWS returns at most this many load balancers or target groups per page (the SDK calls set
/// no page size; AWS documents no default), so a list takes at least `n / PAGE` requests.
const PAGE: usize = 400;

fn env_secs(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The three controllers, in the order they are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ingress,
    Service,
    Binding,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Ingress, Kind::Service, Kind::Binding];

    fn idx(self) -> usize {
        self as usize
    }

    /// The `controller` label of its metrics.
    fn label(self) -> &'static str {
        match self {
            Kind::Ingress => "ingress",
            Kind::Service => "service",
            Kind::Binding => "targetGroupBinding",
        }
    }

    /// Keys one pass reconciles.
    fn keys(self) -> usize {
        match self {
            Kind::Ingress => GROUPS,
            Kind::Service => SERVICES,
            Kind::Binding => BINDINGS,
        }
    }

    fn key_name(self) -> &'static str {
        match self {
            Kind::Ingress => "Ingress group",
            Kind::Service => "Service",
            Kind::Binding => "binding",
        }
    }

    /// Its resync period when `--sync-period` is not given.
    fn default_period(self) -> Duration {
        match self {
            Kind::Ingress => IngressConfig::default().sync_period,
            Kind::Service => ServiceConfig::default().sync_period,
            Kind::Binding => TgbConfig::default().resync,
        }
    }
}

fn model() -> ModelConfig {
    ModelConfig {
        cluster_name: CLUSTER.into(),
        ..ModelConfig::default()
    }
}

/// A controller task and what stops it.
struct Running {
    token: CancellationToken,
    task: JoinHandle<()>,
}

/// A point in the run: the call log's length, the time and every controller's reconciles.
#[derive(Debug, Clone)]
struct Mark {
    at: Instant,
    calls: usize,
    reconciles: [u64; 3],
}

/// Calls by `service operation`.
type Counts = BTreeMap<String, f64>;

struct Bench {
    client: kube::Client,
    fake: Arc<FakeAws>,
    vpc: String,
    registry: Registry,
    metrics: ControllerMetrics,
    running: [Option<Running>; 3],
}

fn short(s: AwsService) -> &'static str {
    match s {
        AwsService::ElbV2 => "elbv2",
        AwsService::Ec2 => "ec2",
        other => other.id(),
    }
}

fn is_read(op: &str) -> bool {
    !aws_load_balancer_controller::aws::fence::is_write(op)
}

/// The operation of a `service operation` key.
fn op_of(key: &str) -> &str {
    key.rsplit(' ').next().unwrap_or(key)
}

fn total(c: &Counts, read: bool) -> f64 {
    c.iter()
        .filter(|(k, _)| is_read(op_of(k)) == read)
        .map(|(_, n)| n)
        .sum()
}

fn writes_of(c: &Counts) -> String {
    let w: Vec<String> = c
        .iter()
        .filter(|(k, n)| !is_read(op_of(k)) && **n > 0.0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if w.is_empty() {
        "none".into()
    } else {
        w.join(", ")
    }
}

impl Bench {
    fn start(&mut self, kind: Kind, period: Duration) {
        let token = CancellationToken::new();
        let (client, fake, vpc) = (self.client.clone(), self.fake.clone(), self.vpc.clone());
        let metrics = self.metrics.clone();
        let task = match kind {
            Kind::Ingress => tokio::spawn(ingress::run(
                client,
                fake.clone(),
                fake,
                vpc,
                IngressConfig {
                    model: model(),
                    sync_period: period,
                    controller_metrics: metrics,
                    ..IngressConfig::default()
                },
                token.clone(),
            )),
            Kind::Service => tokio::spawn(service::run(
                client,
                fake.clone(),
                fake,
                vpc,
                ServiceConfig {
                    model: model(),
                    sync_period: period,
                    vpc_cidrs: vec![VPC_CIDR.into()],
                    controller_metrics: metrics,
                    ..ServiceConfig::default()
                },
                token.clone(),
            )),
            Kind::Binding => tokio::spawn(tgb::run(
                client,
                fake.clone(),
                fake,
                TgbConfig {
                    resync: period,
                    vpc_cidrs: vec![VPC_CIDR.parse().expect("cidr")],
                    cluster_name: CLUSTER.into(),
                    vpc_id: vpc,
                    controller_metrics: metrics,
                    ..TgbConfig::default()
                },
                token.clone(),
            )),
        };
        self.running[kind.idx()] = Some(Running { token, task });
    }

    async fn stop(&mut self, kind: Kind) {
        if let Some(r) = self.running[kind.idx()].take() {
            r.token.cancel();
            let _ = r.task.await;
        }
    }

    /// Reconciles of `kind` so far, whatever their result.
    fn reconciles(&self, kind: Kind) -> u64 {
        reconciles(&self.registry, kind.label()).values().sum()
    }

    fn errors(&self, kind: Kind) -> u64 {
        reconciles(&self.registry, kind.label())
            .get("error")
            .copied()
            .unwrap_or(0)
    }

    fn mark(&self) -> Mark {
        Mark {
            at: Instant::now(),
            calls: self.fake.calls().len(),
            reconciles: Kind::ALL.map(|k| self.reconciles(k)),
        }
    }

    /// Calls between two marks, by `service operation`.
    fn counts(&self, from: &Mark, to: &Mark) -> Counts {
        let log = self.fake.calls();
        let mut out = Counts::new();
        for (s, op) in &log[from.calls.min(log.len())..to.calls.min(log.len())] {
            *out.entry(format!("{} {op}", short(*s))).or_default() += 1.0;
        }
        out
    }

    /// Waits until `kind` has reconciled each of its keys once since `since` (by count).
    async fn wait_pass(&self, kind: Kind, since: &Mark) {
        let want = since.reconciles[kind.idx()] + kind.keys() as u64;
        while self.reconciles(kind) < want {
            assert!(
                since.at.elapsed() < PATIENCE,
                "{} did not finish a pass: {} of {} reconciles",
                kind.label(),
                self.reconciles(kind) - since.reconciles[kind.idx()],
                kind.keys()
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// (Ingresses with status, Services with status, bindings, bindings reconciled).
    async fn progress(&self) -> (usize, usize, usize, usize) {
        let tgbs = Api::<TargetGroupBinding>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .map(|l| l.items)
            .unwrap_or_default();
        let settled = tgbs
            .iter()
            .filter(|b| {
                b.status.as_ref().and_then(|s| s.observed_generation) == b.metadata.generation
            })
            .count();
        (
            ingresses_with_status(&self.client).await,
            services_with_status(&self.client).await,
            tgbs.len(),
            settled,
        )
    }
}

/// Three Ready nodes backed by instances of the fake (one per zone, each with one security
/// group tagged for the cluster, as EKS node groups have): `node-a` is made by the bindings'
/// seed. Returns the provider IDs.
async fn instances(fake: &FakeAws, vpc: &str) -> Vec<String> {
    let sg = fake
        .create_security_group(&CreateSecurityGroup {
            name: "bench-nodes".into(),
            description: "worker nodes".into(),
            vpc_id: vpc.into(),
            tags: Tags::from([(format!("kubernetes.io/cluster/{CLUSTER}"), "owned".into())]),
        })
        .await
        .expect("node security group");
    let subnets = fake
        .describe_subnets(&Ec2Query::default().filter("vpc-id", [vpc]))
        .await
        .expect("subnets");
    let mut ids = Vec::new();
    for s in subnets.iter().take(NODES) {
        // `.240` of the subnet's /24: an address no registered pod of the seed uses.
        let ip = format!("{}240", s.cidr_block.trim_end_matches("0/24"));
        let id = fake
            .add_instance(&s.id, &ip, std::slice::from_ref(&sg))
            .expect("instance");
        ids.push(format!("aws:///{}/{id}", s.availability_zone));
    }
    assert_eq!(ids.len(), NODES, "the fake account has {NODES} subnets");
    ids
}

async fn node(client: &kube::Client, name: &str, provider_id: &str) {
    let node: Node = serde_json::from_value(json!({
        "metadata": { "name": name },
        "spec": { "providerID": provider_id },
        "status": { "conditions": [{ "type": "Ready", "status": "True" }] }
    }))
    .expect("node");
    Api::<Node>::all(client.clone())
        .create(&PostParams::default(), &node)
        .await
        .expect("node");
}

fn fmt(n: f64) -> String {
    if n == 0.0 {
        "0".into()
    } else if n >= 100.0 {
        format!("{n:.0}")
    } else {
        format!("{n:.1}")
    }
}

async fn run_all() {
    let sync = Duration::from_secs(env_secs("READS_SYNC_SECS", 120));
    let periods = env_secs("READS_PERIODS", 2).max(1) as u32;

    // ---- the cluster and the account
    let server = super::fixtures::api_server_with_crds().await;
    let client = server.client();
    let (fake, vpc) = fake_account();
    fake.set_latency(LATENCY);
    let t = Instant::now();
    let providers = instances(&fake, &vpc).await;
    let standalone = super::tgb::Shape {
        bindings: STANDALONE,
        pods_per: PODS_PER,
    };
    super::tgb::seed_bindings(
        &client,
        fake.as_ref(),
        &vpc,
        standalone,
        Some(providers[0].as_str()),
    )
    .await;
    super::tgb::apply_slices(&client, standalone, PODS_PER).await;
    for (i, p) in providers.iter().enumerate().skip(1) {
        node(&client, &format!("node-{}", (b'a' + i as u8) as char), p).await;
    }
    ingress_objects(&client, GROUPS, PER_GROUP).await;
    lb_service_objects(&client, "lb", SVC_NAMESPACES, PER_SVC_NAMESPACE).await;
    println!(
        "reads/seed {INGRESSES} Ingresses in {GROUPS} groups, {SERVICES} LoadBalancer Services, {STANDALONE} stand-alone ip bindings ({PODS_PER} ready pods each; {BINDINGS} bindings with the Ingresses' and Services'), {NODES} nodes: {:.1} s",
        t.elapsed().as_secs_f64()
    );
    fake.clear_calls();

    let mut registry = Registry::default();
    let metrics = ControllerMetrics::register(&mut registry);
    let mut b = Bench {
        client: client.clone(),
        fake: fake.clone(),
        vpc: vpc.clone(),
        registry,
        metrics,
        running: [None, None, None],
    };

    // ---- 1. cold start until converged
    let begin = b.mark();
    for k in Kind::ALL {
        b.start(k, k.default_period());
    }
    let mut writes = 0;
    let mut quiet_since = Instant::now();
    let mut said = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let w = fake.write_calls().len();
        if w != writes {
            writes = w;
            quiet_since = Instant::now();
        }
        let (ing, svc, tgbs, settled) = b.progress().await;
        if ing >= INGRESSES
            && svc >= SERVICES
            && tgbs >= BINDINGS
            && settled >= tgbs
            && quiet_since.elapsed() >= QUIET
        {
            break;
        }
        if said.elapsed() >= Duration::from_secs(60) {
            said = Instant::now();
            println!(
                "reads/cold ... {:.0} s: {ing}/{INGRESSES} Ingresses and {svc}/{SERVICES} Services with status, {settled}/{tgbs} bindings reconciled (of {BINDINGS}), {w} writes",
                begin.at.elapsed().as_secs_f64()
            );
        }
        assert!(
            begin.at.elapsed() < PATIENCE,
            "did not converge: {ing}/{INGRESSES} Ingresses, {svc}/{SERVICES} Services, {settled}/{tgbs} bindings"
        );
    }
    let end = b.mark();
    let cold = b.counts(&begin, &end);
    println!(
        "reads/cold converged after {:.1} s ({:.0} s of them without a write): {:.0} reads, {:.0} writes; reconcile errors: ingress {}, service {}, bindings {}",
        (end.at - begin.at).as_secs_f64(),
        QUIET.as_secs_f64(),
        total(&cold, true),
        total(&cold, false),
        b.errors(Kind::Ingress),
        b.errors(Kind::Service),
        b.errors(Kind::Binding),
    );

    // ---- 2. the periodic work: everything idle at the default period
    let idle = sync;
    let from = b.mark();
    tokio::time::sleep(idle).await;
    let to = b.mark();
    let bg_secs = (to.at - from.at).as_secs_f64();
    let bg = b.counts(&from, &to);
    println!(
        "reads/periodic {:.0} s idle at the default resync period: {:.0} reads, writes: {}",
        bg_secs,
        total(&bg, true),
        writes_of(&bg)
    );

    // ---- 3. each controller: restart pass, then resyncs at `sync`
    let mut restart: [Counts; 3] = Default::default();
    let mut resync: [Counts; 3] = Default::default();
    let mut windows: [Counts; 3] = Default::default();
    let mut passes = [0.0f64; 3];
    for k in Kind::ALL {
        b.stop(k).await;
        let m0 = b.mark();
        b.start(k, sync);
        b.wait_pass(k, &m0).await;
        let m1 = b.mark();
        restart[k.idx()] = b.counts(&m0, &m1);
        tokio::time::sleep(sync * periods).await;
        let m2 = b.mark();
        let window = b.counts(&m1, &m2);
        let secs = (m2.at - m1.at).as_secs_f64();
        let n = (m2.reconciles[k.idx()] - m1.reconciles[k.idx()]) as f64 / k.keys() as f64;
        passes[k.idx()] = n;
        // The periodic work of the same length is not the resync's.
        let mut per_pass = Counts::new();
        for (op, c) in &window {
            let less = bg.get(op).copied().unwrap_or(0.0) * secs / bg_secs.max(f64::EPSILON);
            per_pass.insert(op.clone(), (c - less).max(0.0) / n.max(f64::EPSILON));
        }
        println!(
            "reads/{} restart pass {:.1} s: {:.0} reads, writes: {}; then {:.0} s at a {} s resync period: {n:.2} passes over its {} {}s, {:.0} reads, writes: {}, reconcile errors so far {}",
            k.label(),
            (m1.at - m0.at).as_secs_f64(),
            total(&restart[k.idx()], true),
            writes_of(&restart[k.idx()]),
            secs,
            sync.as_secs(),
            k.keys(),
            k.key_name(),
            total(&window, true),
            writes_of(&window),
            b.errors(k),
        );
        resync[k.idx()] = per_pass;
        windows[k.idx()] = window;
        // Back to the default period; its restart pass is over before the next one starts.
        b.stop(k).await;
        let m3 = b.mark();
        b.start(k, k.default_period());
        b.wait_pass(k, &m3).await;
    }

    // ---- the table
    let ops: BTreeSet<String> = restart
        .iter()
        .chain(resync.iter())
        .chain(std::iter::once(&bg))
        .flat_map(|c| c.keys().cloned())
        .collect();
    let hour = 3600.0;
    let default_secs = Kind::ALL.map(|k| k.default_period().as_secs_f64());
    struct Row {
        op: String,
        per_kind: [f64; 3],
        warm: f64,
        cold: f64,
        periodic_h: f64,
        warm_h: f64,
        cold_h: f64,
    }
    let mut rows: Vec<Row> = ops
        .into_iter()
        .map(|op| {
            let get = |c: &Counts| c.get(&op).copied().unwrap_or(0.0);
            let per_kind = Kind::ALL.map(|k| get(&resync[k.idx()]));
            let periodic_h = get(&bg) * hour / bg_secs.max(f64::EPSILON);
            let per_hour = |c: &[Counts; 3]| -> f64 {
                Kind::ALL
                    .iter()
                    .map(|k| get(&c[k.idx()]) * hour / default_secs[k.idx()])
                    .sum::<f64>()
                    + periodic_h
            };
            Row {
                warm: per_kind.iter().sum(),
                cold: Kind::ALL.iter().map(|k| get(&restart[k.idx()])).sum(),
                warm_h: per_hour(&resync),
                cold_h: per_hour(&restart),
                per_kind,
                periodic_h,
                op,
            }
        })
        .collect();
    rows.sort_by(|x, y| {
        y.cold_h
            .total_cmp(&x.cold_h)
            .then(y.warm_h.total_cmp(&x.warm_h))
            .then(x.op.cmp(&y.op))
    });
    let period_h = default_secs[Kind::Ingress.idx()] / hour;
    println!(
        "reads/steady per AWS call (the fake logs one call per request, retries included). Columns: calls per resync pass at {} s of the Ingress ({GROUPS} groups), Service ({SERVICES}) and TargetGroupBinding ({BINDINGS}) controllers, measured over {periods} periods and less the periodic work; their sum; the restart pass (every cache cold); periodic work per hour of wall time (not the resync: polls, requeues); per hour at the default {period_h:.0} h resync period = one pass per {period_h:.0} h + the periodic work, from the warm resync pass and from the cold restart pass (at 10 h every cache with a shorter TTL has expired, as in the cold pass). Passes measured: ingress {:.2}, service {:.2}, bindings {:.2}.",
        sync.as_secs(),
        passes[0],
        passes[1],
        passes[2],
    );
    println!(
        "  {:<44} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10} {:>11} {:>11}",
        "call", "ingress", "service", "tgb", "resync", "restart", "periodic", "/h warm", "/h cold"
    );
    let line = |name: &str, r: &Row| {
        println!(
            "  {:<44} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10} {:>11} {:>11}",
            name,
            fmt(r.per_kind[0]),
            fmt(r.per_kind[1]),
            fmt(r.per_kind[2]),
            fmt(r.warm),
            fmt(r.cold),
            fmt(r.periodic_h),
            fmt(r.warm_h),
            fmt(r.cold_h)
        )
    };
    let sum = |read: bool| {
        let mut t = Row {
            op: String::new(),
            per_kind: [0.0; 3],
            warm: 0.0,
            cold: 0.0,
            periodic_h: 0.0,
            warm_h: 0.0,
            cold_h: 0.0,
        };
        for r in rows.iter().filter(|r| is_read(op_of(&r.op)) == read) {
            for (sum, n) in t.per_kind.iter_mut().zip(r.per_kind) {
                *sum += n;
            }
            t.warm += r.warm;
            t.cold += r.cold;
            t.periodic_h += r.periodic_h;
            t.warm_h += r.warm_h;
            t.cold_h += r.cold_h;
        }
        t
    };
    for r in rows.iter().filter(|r| is_read(op_of(&r.op))) {
        line(&r.op, r);
    }
    let reads = sum(true);
    line("reads (Describe*, Get*, List*)", &reads);
    for r in rows.iter().filter(|r| !is_read(op_of(&r.op))) {
        line(&r.op, r);
    }
    let writes = sum(false);
    line("writes (goal 0)", &writes);
    for k in Kind::ALL {
        let i = k.idx();
        println!(
            "reads/{} per {}: {:.2} reads per resync pass, {:.2} per restart pass",
            k.label(),
            k.key_name(),
            reads.per_kind[i] / k.keys() as f64,
            total(&restart[i], true) / k.keys() as f64,
        );
    }

    // On AWS an unfiltered DescribeLoadBalancers / DescribeTargetGroups takes a page per 400;
    // the fake answers it at once. Read after the measurements (these calls are not counted).
    let lbs = fake
        .describe_load_balancers(&LoadBalancerQuery::default())
        .await
        .map(|l| l.len())
        .unwrap_or(0);
    let tgs = fake
        .describe_target_groups(&TargetGroupQuery::default())
        .await
        .map(|l| l.len())
        .unwrap_or(0);
    let pages = |n: usize| n.div_ceil(PAGE).max(1) as f64;
    let paged = |name: &str, n: usize| {
        rows.iter()
            .find(|r| r.op == format!("elbv2 {name}"))
            .map_or(0.0, |r| r.cold_h * (pages(n) - 1.0))
    };
    let extra = paged("DescribeLoadBalancers", lbs) + paged("DescribeTargetGroups", tgs);
    println!(
        "reads/steady paging: the account holds {lbs} load balancers (at least {} pages of {PAGE} on AWS) and {tgs} target groups (at least {}); every DescribeLoadBalancers / DescribeTargetGroups of the steady path lists them all (found by tags, not by ARN), which the fake answers in one call, so on AWS the cold figure is at least {:.0} requests/hour more: {:.0}",
        pages(lbs),
        pages(tgs),
        extra,
        reads.cold_h + extra
    );
    println!(
        "reads/steady writes per hour at the default period {} (goal 0); in the windows: {}",
        fmt(writes.cold_h.max(writes.warm_h)),
        writes_of(&{
            let mut all = Counts::new();
            for c in restart
                .iter()
                .chain(windows.iter())
                .chain(std::iter::once(&bg))
            {
                for (k, v) in c {
                    *all.entry(k.clone()).or_default() += v;
                }
            }
            all
        })
    );
    let baseline = ["READS_BASELINE", "READS_BEFORE"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .and_then(|v| v.parse::<f64>().ok());
    let figure = reads.cold_h;
    match baseline {
        Some(n) => println!(
            "describes/hour  {figure:.0}  goal ≤ {:.0} (a tenth of the baseline {n:.0}; ratio {:.2}); from the warm resync pass {:.0}",
            n / 10.0,
            figure / (n / 10.0).max(f64::EPSILON),
            reads.warm_h
        ),
        None => println!(
            "describes/hour  {figure:.0}  goal ≤ baseline/10 (this run is the baseline: pass READS_BASELINE={figure:.0} to later runs); from the warm resync pass {:.0}",
            reads.warm_h
        ),
    }

    for k in Kind::ALL {
        b.stop(k).await;
    }
    server.stop().await;
}

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(run_all());
}
