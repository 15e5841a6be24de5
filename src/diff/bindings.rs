//! The TargetGroupBinding producer of `diff`: the real TargetGroupBinding reconciler runs once
//! over every binding in the cluster, with the recording AWS layer and the dry-run Kubernetes
//! client, one binding at a time; each binding's first reconcile (targets registered or
//! deregistered, security-group rules, finalizer, status) is its stack in the report.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::{shadow, Recorder, StackDiff};
use crate::config::Config;
use crate::crd::TargetGroupBinding;
use crate::reconcilers::{tgb_config, Cloud};

/// How long `diff` waits for every binding's first reconcile.
const WAIT: Duration = Duration::from_secs(120);

const PREFIX: &str = "targetgroupbinding ";

pub async fn diff_bindings(
    cfg: &Config,
    kc: kube::Config,
    real: &kube::Client,
    recorder: Arc<Recorder>,
    cloud: &Cloud,
) -> anyhow::Result<Vec<StackDiff>> {
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
        return Ok(vec![]);
    }
    shadow::collect();
    let client = super::shadow_kube::client(kc, false, None)?;
    let mut tcfg = tgb_config(cfg, cloud);
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
    let start = Instant::now();
    let firsts = loop {
        let firsts = first_of_each(&want);
        if firsts.len() == want.len() || start.elapsed() > WAIT {
            break firsts;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    token.cancel();
    let _ = run.await;
    Ok(want
        .iter()
        .map(|key| match firsts.iter().find(|(k, _, _)| k == key) {
            Some((_, writes, error)) => StackDiff {
                kind: "targetgroupbinding",
                stack: key.clone(),
                writes: writes.clone(),
                error: error.clone(),
            },
            None => StackDiff {
                kind: "targetgroupbinding",
                stack: key.clone(),
                writes: vec![],
                error: Some(format!("not reconciled within {WAIT:?}")),
            },
        })
        .collect())
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
