//! Upstream's Gateway API CRD detection at start (`pkg/gateway/crddetect`): unless the user set
//! all three Gateway gates, the kinds the API server serves in `gateway.networking.k8s.io/v1` and
//! `gateway.k8s.aws/v1` are listed, and a gate whose kinds are missing turns off with upstream's
//! (Info) log line. Upstream exits when discovery fails; this process keeps its webhooks serving
//! and retries instead.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::{GatewayConfig, GATEWAY_V1, LBC_GATEWAY_V1};

/// Kinds served per group/version (a group the server does not serve lists none).
pub async fn served_kinds(
    client: &kube::Client,
) -> Result<BTreeMap<String, BTreeSet<String>>, kube::Error> {
    let mut out = BTreeMap::new();
    for gv in [GATEWAY_V1, LBC_GATEWAY_V1] {
        let kinds: BTreeSet<String> = match client.list_api_group_resources(gv).await {
            Ok(list) => list
                .resources
                .into_iter()
                .filter(|r| !r.name.contains('/'))
                .map(|r| r.kind)
                .collect(),
            Err(kube::Error::Api(e)) if e.code == 404 => BTreeSet::new(),
            Err(e) => return Err(e),
        };
        out.insert(gv.to_string(), kinds);
    }
    Ok(out)
}

/// Applies CRD detection to `cfg` (retrying discovery until it answers or `shutdown`); returns
/// false only when shut down first.
pub async fn apply(
    client: &kube::Client,
    cfg: &mut GatewayConfig,
    shutdown: &CancellationToken,
) -> bool {
    if !cfg.crd_detection_needed() {
        return true;
    }
    let mut delay = Duration::from_millis(500);
    let served = loop {
        match served_kinds(client).await {
            Ok(s) => break s,
            Err(error) => {
                tracing::error!(%error, retry_in = ?delay, "unable to obtain CRD information")
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return false,
            _ = tokio::time::sleep(delay) => {}
        }
        delay = (delay * 2).min(Duration::from_secs(30));
    };
    for off in cfg.apply_crd_detection(&served) {
        tracing::info!(missing = ?off.missing, "{}", off.message);
    }
    true
}
