//! Controllers that reconcile Kubernetes objects against AWS, each one folder filling in the
//! [`skeleton`] (queue, term of leadership, pass wrapper, failed-step events), and the plumbing
//! they share: finalizer add/remove, best-effort event publishing and a capped per-object error
//! backoff.

pub mod aga;
pub mod deployer;
pub mod events;
pub mod gateway;
pub mod gateway_class;
pub mod ingress;
pub mod kube_fence;
pub mod leader;
pub mod metrics;
pub mod route_status;
pub mod service;
pub mod skeleton;
pub mod tgb;

pub use events::Events;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;

/// Adds `finalizer` to `obj` unless present. Returns whether a patch was sent.
///
/// The merge patch carries the resourceVersion, so a concurrent writer makes it fail (409)
/// instead of silently dropping someone else's finalizer list change.
pub async fn add_finalizer<K>(api: &Api<K>, obj: &K, finalizer: &str) -> Result<bool, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut list = obj.finalizers().to_vec();
    if list.iter().any(|f| f == finalizer) {
        return Ok(false);
    }
    list.push(finalizer.to_string());
    patch_finalizers(api, obj, list).await?;
    Ok(true)
}

/// Removes `finalizer` from `obj` if present; an object already gone counts as done.
pub async fn remove_finalizer<K>(api: &Api<K>, obj: &K, finalizer: &str) -> Result<(), kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let list: Vec<String> = obj
        .finalizers()
        .iter()
        .filter(|f| *f != finalizer)
        .cloned()
        .collect();
    if list.len() == obj.finalizers().len() {
        return Ok(());
    }
    match patch_finalizers(api, obj, list).await {
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        other => other,
    }
}

async fn patch_finalizers<K>(api: &Api<K>, obj: &K, list: Vec<String>) -> Result<(), kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let patch = serde_json::json!({
        "metadata": { "finalizers": list, "resourceVersion": obj.resource_version() }
    });
    api.patch(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map(|_| ())
}

/// Exponential per-object backoff for failed reconciles: `base · 2^(failures-1)`, capped.
/// A success resets the object's count.
#[derive(Debug)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
    failures: Mutex<HashMap<String, u32>>,
}

impl Backoff {
    pub fn new(base: Duration, cap: Duration) -> Self {
        Self {
            base,
            cap: cap.max(base),
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// Records one more failure of `key` and returns how long to wait before retrying.
    pub fn failed(&self, key: &str) -> Duration {
        let mut map = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let n = map.entry(key.to_string()).or_insert(0);
        *n = n.saturating_add(1);
        let factor = 1u32.checked_shl(n.saturating_sub(1)).unwrap_or(u32::MAX);
        self.base.saturating_mul(factor).min(self.cap)
    }

    pub fn succeeded(&self, key: &str) {
        let mut map = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        map.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_and_resets_on_success() {
        let b = Backoff::new(Duration::from_millis(100), Duration::from_secs(1));
        let got: Vec<_> = (0..6).map(|_| b.failed("a").as_millis()).collect();
        assert_eq!(got, vec![100, 200, 400, 800, 1000, 1000]);
        assert_eq!(b.failed("b"), Duration::from_millis(100));
        b.succeeded("a");
        assert_eq!(b.failed("a"), Duration::from_millis(100));
        for _ in 0..100 {
            b.failed("c");
        }
        assert_eq!(b.failed("c"), Duration::from_secs(1));
    }
}
