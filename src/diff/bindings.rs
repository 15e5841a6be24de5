//! The TargetGroupBinding producer of `diff`: the real TargetGroupBinding reconciler runs once
//! over every binding in the cluster, with the recording AWS layer and the dry-run Kubernetes
//! client, one binding at a time; each binding's first reconcile (targets registered or
//! deregistered, security-group rules, finalizer, status) is its stack in the report, printed
//! in `ns/name` order as soon as it and the bindings before it are done.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::{Recorder, Sink, StackDiff};
use crate::aws::shadow;
use crate::aws::Cloud;
use crate::config::Config;
use crate::controller::tgb::TgbConfig;
use crate::crd::TargetGroupBinding;

/// How long `diff` waits for every binding's first reconcile.
const WAIT: Duration = Duration::from_secs(120);

const PREFIX: &str = "targetgroupbinding ";

/// The bindings to run, listed before any stack is computed, with the dry-run client the
/// reconciler reads them through.
pub struct Planned {
    want: BTreeSet<String>,
    client: kube::Client,
}

impl Planned {
    /// How many stacks [`diff_bindings`] prints.
    pub fn count(&self) -> usize {
        self.want.len()
    }
}

/// Every binding in `--watch-namespace`, in `ns/name` order; None when there is none.
pub async fn plan(
    cfg: &Config,
    kc: kube::Config,
    real: &kube::Client,
) -> anyhow::Result<Option<Planned>> {
    let want: BTreeSet<String> =
        super::groups::list::<TargetGroupBinding>(real, &cfg.watch_namespaces)
            .await?
            .iter()
            .map(|b| {
                let ns = b.metadata.namespace.as_deref().unwrap_or_default();
                format!("{ns}/{}", b.metadata.name.as_deref().unwrap_or_default())
            })
            .collect();
    if want.is_empty() {
        return Ok(None);
    }
    let client = shadow::cluster::client(kc, false, None)?;
    Ok(Some(Planned { want, client }))
}

/// Runs the reconciler over `planned` and hands each binding's first reconcile to `sink` in
/// `ns/name` order: a binding as soon as it and every binding before it are done.
pub async fn diff_bindings(
    cfg: &Config,
    planned: Planned,
    recorder: Arc<Recorder>,
    cloud: &Cloud,
    sink: &mut Sink<'_>,
) -> std::io::Result<()> {
    let Planned { want, client } = planned;
    shadow::collect();
    let mut tcfg = TgbConfig::resolved(cfg, cloud);
    // One at a time: the report lists each binding's writes on their own.
    tcfg.concurrency = 1;
    let token = CancellationToken::new();
    let run = tokio::spawn(crate::controller::tgb::run(
        client,
        recorder.clone(),
        recorder,
        tcfg,
        token.clone(),
    ));
    let printed = print_in_order(&want, sink).await;
    token.cancel();
    let _ = run.await;
    printed
}

/// Waits for the first reconcile of each of `want` (at most [`WAIT`]), printing them in order.
async fn print_in_order(want: &BTreeSet<String>, sink: &mut Sink<'_>) -> std::io::Result<()> {
    let start = Instant::now();
    let mut next = want.iter().peekable();
    while next.peek().is_some() {
        let firsts = first_of_each(want);
        let late = start.elapsed() > WAIT;
        while let Some(&key) = next.peek() {
            let stack = match firsts.iter().find(|(k, _, _)| k == key) {
                Some((_, writes, error)) => StackDiff {
                    kind: "targetgroupbinding",
                    stack: key.clone(),
                    writes: writes.clone(),
                    error: error.clone(),
                },
                // Still running: the ones after it wait, so the order stays `ns/name`'s.
                None if !late => break,
                None => StackDiff {
                    kind: "targetgroupbinding",
                    stack: key.clone(),
                    writes: vec![],
                    error: Some(format!("not reconciled within {WAIT:?}")),
                },
            };
            sink.stack(stack)?;
            next.next();
        }
        if next.peek().is_some() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    Ok(())
}

/// The first finished reconcile of each wanted binding.
fn first_of_each(want: &BTreeSet<String>) -> Vec<shadow::Collected> {
    let mut out: Vec<shadow::Collected> = Vec::new();
    for (key, writes, error) in shadow::collected() {
        let Some(k) = key.strip_prefix(PREFIX) else {
            continue;
        };
        if want.contains(k) && !out.iter().any(|(o, _, _)| o == k) {
            out.push((k.to_string(), writes, error));
        }
    }
    out
}
