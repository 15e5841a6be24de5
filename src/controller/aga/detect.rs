//! What the API server serves of the kinds the GlobalAccelerator controller reads, asked once at
//! start before anything is watched (upstream's `SetupWithManager`: no GlobalAccelerator CRD, no
//! controller; no Gateway API, no Gateway or ReferenceGrant watch). Upstream exits when
//! discovery fails; this process keeps its webhooks serving and retries instead.

use std::collections::BTreeSet;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::crd::global_accelerator::{GROUP, KIND};

/// The group/version GlobalAccelerators are served as.
pub const AGA_V1BETA1: &str = "aga.k8s.aws/v1beta1";
/// Gateways are read as v1 (as upstream's Gateway client).
const GATEWAY_V1: &str = "gateway.networking.k8s.io/v1";
/// ReferenceGrants are watched as v1beta1 (see `watch::gateway`).
const GATEWAY_V1BETA1: &str = "gateway.networking.k8s.io/v1beta1";

/// Which of the kinds the controller reads the API server serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Served {
    /// `GlobalAccelerator` in `aga.k8s.aws/v1beta1`: without it the controller does not run.
    pub accelerators: bool,
    /// `Gateway` in `gateway.networking.k8s.io/v1`.
    pub gateways: bool,
    /// `ReferenceGrant` in `gateway.networking.k8s.io/v1beta1`.
    pub reference_grants: bool,
}

/// The kinds served in `gv` (none when the group/version is not served).
async fn kinds(client: &kube::Client, gv: &str) -> Result<BTreeSet<String>, kube::Error> {
    match client.list_api_group_resources(gv).await {
        Ok(list) => Ok(list
            .resources
            .into_iter()
            .filter(|r| !r.name.contains('/'))
            .map(|r| r.kind)
            .collect()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(BTreeSet::new()),
        Err(e) => Err(e),
    }
}

/// One discovery pass.
pub async fn served(client: &kube::Client) -> Result<Served, kube::Error> {
    let accelerators = kinds(client, AGA_V1BETA1).await?.contains(KIND);
    if !accelerators {
        return Ok(Served::default());
    }
    Ok(Served {
        accelerators,
        gateways: kinds(client, GATEWAY_V1).await?.contains("Gateway"),
        reference_grants: kinds(client, GATEWAY_V1BETA1)
            .await?
            .contains("ReferenceGrant"),
    })
}

/// Discovery retried until it answers; `None` when `shutdown` comes first or the
/// GlobalAccelerator CRD is not served (upstream's log line then).
pub async fn detect(client: &kube::Client, shutdown: &CancellationToken) -> Option<Served> {
    let mut delay = Duration::from_millis(500);
    let served = loop {
        match served(client).await {
            Ok(s) => break s,
            Err(error) => {
                tracing::error!(%error, retry_in = ?delay, "unable to obtain CRD information for {GROUP}")
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return None,
            _ = tokio::time::sleep(delay) => {}
        }
        delay = (delay * 2).min(Duration::from_secs(30));
    };
    if !served.accelerators {
        tracing::info!("GlobalAccelerator CRD is not available, skipping controller setup");
        return None;
    }
    if !served.gateways {
        tracing::info!(
            "Gateway API CRDs not found, skipping Gateway and ReferenceGrant event watch setup"
        );
    }
    Some(served)
}
