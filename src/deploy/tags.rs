//! Ownership tags: which AWS resources belong to a stack, the tag diff (ignoring upstream's
//! legacy keys and `--external-managed-tags`), AddTags/RemoveTags (ELBv2) and
//! CreateTags/DeleteTags (EC2), and a tag cache for listener and rule ARNs like upstream's
//! (20 min TTL), kept current with the writes this deployer makes (load balancers and target
//! groups keep theirs in the shared inventory, with the same TTL).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::error::{Context, Result};
use super::Deployer;
use crate::aws::Tags;
use crate::model::StackKind;

pub const CLUSTER_TAG: &str = "elbv2.k8s.aws/cluster";
pub const LEGACY_CLUSTER_TAG: &str = "ingress.k8s.aws/cluster";
/// The stack tag of Ingress stacks (Service stacks: `service.k8s.aws/stack`, see `StackKind`).
pub const STACK_TAG: &str = "ingress.k8s.aws/stack";
/// The resource tag of Ingress stacks.
pub const RESOURCE_TAG: &str = "ingress.k8s.aws/resource";
/// How long ELBv2 tags read by DescribeTags are trusted (upstream's tag cache TTL).
pub const TAG_CACHE_TTL: Duration = Duration::from_secs(20 * 60);

/// True when the tags say "cluster `cluster`, stack `stack` of this kind" (current or legacy
/// cluster key): `ingress.k8s.aws/stack` for Ingress groups, `service.k8s.aws/stack` for
/// Services, so an Ingress group and a Service of the same `ns/name` never own each other's.
pub fn is_owned(tags: &Tags, cluster: &str, kind: StackKind, stack: &str) -> bool {
    let cluster_ok = tags.get(CLUSTER_TAG).map(String::as_str) == Some(cluster)
        || tags.get(LEGACY_CLUSTER_TAG).map(String::as_str) == Some(cluster);
    cluster_ok && tags.get(&kind.stack_tag()).map(String::as_str) == Some(stack)
}

/// The model resource id an AWS resource is paired with (`<prefix>/resource`).
pub fn resource_id(tags: &Tags, kind: StackKind) -> Option<&str> {
    tags.get(&kind.resource_tag()).map(String::as_str)
}

/// Keys the deployer neither adds nor removes.
#[derive(Debug, Clone, Default)]
pub struct TagPolicy {
    pub cluster: String,
    pub external_managed: Vec<String>,
}

impl TagPolicy {
    /// Upstream's legacy keys and the externally managed ones are left alone.
    pub fn ignored(&self, key: &str) -> bool {
        if self.external_managed.iter().any(|k| k == key) {
            return true;
        }
        if key == format!("kubernetes.io/cluster/{}", self.cluster) {
            return true;
        }
        matches!(
            key,
            "kubernetes.io/cluster-name"
                | "kubernetes.io/namespace"
                | "kubernetes.io/ingress-name"
                | "kubernetes.io/service-name"
                | "kubernetes.io/service-port"
                | LEGACY_CLUSTER_TAG
        )
    }
}

/// What to add (new or changed values) and remove to go from `actual` to `desired`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagDiff {
    pub add: Tags,
    pub remove: Vec<String>,
}

impl TagDiff {
    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.remove.is_empty()
    }
}

pub fn diff(desired: &Tags, actual: &Tags, policy: &TagPolicy) -> TagDiff {
    let add = desired
        .iter()
        .filter(|(k, v)| !policy.ignored(k) && actual.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let remove = actual
        .keys()
        .filter(|k| !policy.ignored(k) && !desired.contains_key(*k))
        .cloned()
        .collect();
    TagDiff { add, remove }
}

/// Most ARNs the tag cache holds: without a bound, churn of listeners and rules deleted outside
/// the controller would grow it forever (our own deletes forget theirs). The bound must exceed
/// the live listeners and rules of a large cluster: a deploy pass reads them in a cycle, so a
/// cache smaller than the cycle evicts each entry just before it is read again and every pass
/// reads every tag (4,096 did this at 5,000 Ingresses: 3,568 DescribeTags in 180 s). At about
/// half a KiB an entry, a full cache is about 32 MiB, reached only with 65,536 live ARNs.
pub const TAG_CACHE_MAX_ENTRIES: usize = 65_536;

/// Listener and rule tags by ARN, shared by the concurrent deploys of one `Deployer`. Entries
/// expire after the TTL and are dropped when read stale; past `max` entries the stale ones go,
/// then the oldest.
#[derive(Debug)]
pub struct TagCache {
    entries: Mutex<HashMap<String, (Instant, Tags)>>,
    ttl: Duration,
    max: usize,
}

impl Default for TagCache {
    fn default() -> Self {
        Self::new(TAG_CACHE_TTL, TAG_CACHE_MAX_ENTRIES)
    }
}

impl TagCache {
    pub fn new(ttl: Duration, max: usize) -> Self {
        Self {
            entries: Mutex::default(),
            ttl,
            max: max.max(1),
        }
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Instant, Tags)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub fn get(&self, arn: &str) -> Option<Tags> {
        let mut m = self.lock();
        match m.get(arn) {
            Some((at, t)) if at.elapsed() < self.ttl => Some(t.clone()),
            Some(_) => {
                m.remove(arn);
                None
            }
            None => None,
        }
    }
    pub fn put(&self, arn: &str, tags: Tags) {
        let mut m = self.lock();
        m.insert(arn.to_string(), (Instant::now(), tags));
        if m.len() > self.max {
            let ttl = self.ttl;
            m.retain(|_, (at, _)| at.elapsed() < ttl);
        }
        if m.len() > self.max {
            let mut ages: Vec<(Instant, String)> =
                m.iter().map(|(k, (at, _))| (*at, k.clone())).collect();
            ages.sort();
            let surplus = m.len() - self.max;
            for (_, k) in ages.into_iter().take(surplus) {
                m.remove(&k);
            }
        }
    }
    pub fn forget(&self, arn: &str) {
        self.lock().remove(arn);
    }
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

impl Deployer {
    /// Tags of listeners and rules: from the cache, DescribeTags (20 ARNs per request) for the
    /// rest.
    pub(crate) async fn elb_tags(&self, arns: &[String]) -> Result<BTreeMap<String, Tags>> {
        let mut out = BTreeMap::new();
        let mut missing = Vec::new();
        for a in arns {
            match self.tag_cache.get(a) {
                Some(t) => {
                    out.insert(a.clone(), t);
                }
                None => missing.push(a.clone()),
            }
        }
        if !missing.is_empty() {
            let got = self
                .elbv2
                .describe_tags(&missing)
                .await
                .ctx(|| format!("describe tags of {} resources", missing.len()))?;
            for (a, t) in got {
                self.tag_cache.put(&a, t.clone());
                out.insert(a, t);
            }
        }
        Ok(out)
    }

    /// Brings the tags of one ELBv2 resource from `actual` to `desired`.
    pub(crate) async fn reconcile_elb_tags(
        &self,
        arn: &str,
        desired: &Tags,
        actual: &Tags,
    ) -> Result<()> {
        let d = diff(desired, actual, &self.tag_policy());
        let arns = [arn.to_string()];
        if !d.add.is_empty() {
            self.elbv2
                .add_tags(&arns, &d.add)
                .await
                .ctx(|| format!("add tags to {arn}"))?;
        }
        if !d.remove.is_empty() {
            self.elbv2
                .remove_tags(&arns, &d.remove)
                .await
                .ctx(|| format!("remove tags from {arn}"))?;
        }
        if !d.is_empty() {
            let mut now = actual.clone();
            now.extend(d.add);
            now.retain(|k, _| !d.remove.contains(k));
            // A load balancer's or target group's in the inventory, a listener's or rule's here.
            self.inventory.put_tags(arn, now.clone());
            self.tag_cache.put(arn, now);
        }
        Ok(())
    }

    /// Brings the tags of one EC2 resource (security group) from `actual` to `desired`; returns
    /// the tags it has then.
    pub(crate) async fn reconcile_ec2_tags(
        &self,
        id: &str,
        desired: &Tags,
        actual: &Tags,
    ) -> Result<Tags> {
        let d = diff(desired, actual, &self.tag_policy());
        let ids = [id.to_string()];
        if !d.add.is_empty() {
            self.ec2
                .create_tags(&ids, &d.add)
                .await
                .ctx(|| format!("tag {id}"))?;
        }
        if !d.remove.is_empty() {
            self.ec2
                .delete_tags(&ids, &d.remove)
                .await
                .ctx(|| format!("untag {id}"))?;
        }
        let mut now = actual.clone();
        now.extend(d.add);
        now.retain(|k, _| !d.remove.contains(k));
        Ok(now)
    }

    pub(crate) fn tag_policy(&self) -> TagPolicy {
        TagPolicy {
            cluster: self.cluster.clone(),
            external_managed: self.external_managed_tags.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(kv: &[(&str, &str)]) -> Tags {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn ownership_needs_cluster_and_stack() {
        let ing = StackKind::Ingress;
        let ok = t(&[(CLUSTER_TAG, "c"), (STACK_TAG, "ns/a")]);
        assert!(is_owned(&ok, "c", ing, "ns/a"));
        assert!(!is_owned(&ok, "c", ing, "ns/b"));
        assert!(!is_owned(&ok, "other", ing, "ns/a"));
        assert!(!is_owned(&t(&[(STACK_TAG, "ns/a")]), "c", ing, "ns/a"));
        assert!(!is_owned(&t(&[(CLUSTER_TAG, "c")]), "c", ing, "ns/a"));
        let legacy = t(&[(LEGACY_CLUSTER_TAG, "c"), (STACK_TAG, "ns/a")]);
        assert!(is_owned(&legacy, "c", ing, "ns/a"));
    }

    #[test]
    fn service_stacks_are_owned_by_their_own_tags_only() {
        let svc = StackKind::Service;
        let nlb = t(&[
            (CLUSTER_TAG, "c"),
            ("service.k8s.aws/stack", "ns/a"),
            ("service.k8s.aws/resource", "LoadBalancer"),
        ]);
        assert!(is_owned(&nlb, "c", svc, "ns/a"));
        assert_eq!(resource_id(&nlb, svc), Some("LoadBalancer"));
        // The Ingress group `ns/a` and the Service `ns/a` never claim each other's resources.
        assert!(!is_owned(&nlb, "c", StackKind::Ingress, "ns/a"));
        assert_eq!(resource_id(&nlb, StackKind::Ingress), None);
        let alb = t(&[(CLUSTER_TAG, "c"), (STACK_TAG, "ns/a")]);
        assert!(!is_owned(&alb, "c", svc, "ns/a"));
    }

    #[test]
    fn diff_adds_changes_and_removes_but_ignores_legacy_and_external() {
        let policy = TagPolicy {
            cluster: "c".into(),
            external_managed: vec!["Owner".into()],
        };
        let desired = t(&[("a", "1"), ("b", "2"), ("Owner", "me")]);
        let actual = t(&[
            ("a", "1"),
            ("b", "old"),
            ("gone", "x"),
            ("Owner", "ext"),
            ("kubernetes.io/cluster/c", "owned"),
            ("kubernetes.io/ingress-name", "web"),
            (LEGACY_CLUSTER_TAG, "c"),
        ]);
        let d = diff(&desired, &actual, &policy);
        assert_eq!(d.add, t(&[("b", "2")]));
        assert_eq!(d.remove, vec!["gone".to_string()]);
        assert!(diff(&desired, &desired, &policy).is_empty());
        // Another cluster's legacy key is not ours to keep.
        let other = t(&[("kubernetes.io/cluster/x", "owned")]);
        assert_eq!(diff(&Tags::new(), &other, &policy).remove.len(), 1);
    }

    #[test]
    fn cache_returns_fresh_entries_only() {
        let c = TagCache::default();
        assert!(c.get("arn").is_none());
        c.put("arn", t(&[("a", "1")]));
        assert_eq!(c.get("arn"), Some(t(&[("a", "1")])));
        c.forget("arn");
        assert!(c.get("arn").is_none());
    }

    #[test]
    fn cache_is_bounded_and_drops_stale_entries() {
        let c = TagCache::new(TAG_CACHE_TTL, 3);
        for i in 0..10 {
            c.put(&format!("arn-{i}"), t(&[("a", "1")]));
        }
        assert_eq!(c.len(), 3, "never more than the bound");
        assert!(c.get("arn-9").is_some(), "the newest stay");
        assert!(c.get("arn-0").is_none(), "the oldest went");

        let stale = TagCache::new(Duration::ZERO, 100);
        stale.put("gone", t(&[("a", "1")]));
        assert!(stale.get("gone").is_none());
        assert_eq!(stale.len(), 0, "a stale entry is dropped when read");
        let short = TagCache::new(Duration::from_millis(1), 2);
        short.put("a", t(&[]));
        short.put("b", t(&[]));
        std::thread::sleep(Duration::from_millis(5));
        short.put("c", t(&[]));
        assert_eq!(short.len(), 1, "stale entries go first once over the bound");
    }

    #[test]
    fn the_default_cache_holds_a_large_clusters_listeners_and_rules() {
        // 500 ALBs with a listener and ten rules each, read in the same order pass after pass.
        let c = TagCache::default();
        let arns: Vec<String> = (0..5_500).map(|i| format!("arn-{i}")).collect();
        for a in &arns {
            c.put(a, t(&[("a", "1")]));
        }
        let missed = arns.iter().filter(|a| c.get(a).is_none()).count();
        assert_eq!(missed, 0, "a second pass finds every tag cached");
    }
}
