//! The VPC's load balancers and target groups with their tags, and the security groups carrying
//! a cluster tag key, listed once for every deployer of the process (Ingress, Service, Gateway)
//! instead of once per stack: a deploy filters this inventory by its stack tags where it used to
//! list the whole account. One listing serves for [`INVENTORY_TTL`] (capped to half the resync
//! period, [`ttl_for`]), so what changed outside the controller is still seen by the next resync;
//! callers arriving while a listing runs wait for it rather than listing again (single flight).
//!
//! Tags are read with DescribeTags (20 ARNs per request) only for ARNs whose tags are not
//! already known and fresh ([`TAG_CACHE_TTL`], upstream's tag cache). This process's own creates,
//! updates, tag writes and deletes are applied at once (also onto a listing running meanwhile),
//! so a create is never repeated and a deleted resource never found again because the listing
//! predates them. Whatever says the inventory may no longer match AWS (a NotFound on one of its
//! resources, a Duplicate, a write whose outcome is unknown) invalidates it: the next caller
//! lists again. A stack deletion always reads a listing made after it began, and a load
//! balancer is created only on a listing begun once its step found none (a listing made
//! earlier may show the target groups someone just made but not the load balancer made next).
//!
//! Under gate `EnableRGTAPI` deployers find their stacks through the tagging API (see `tagged`)
//! and do not read this inventory.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::error::{Context, Error, Result};
use super::tags::{CLUSTER_TAG, LEGACY_CLUSTER_TAG, TAG_CACHE_TTL};
use crate::aws::{self, AwsError, Ec2, Ec2Query, ElbV2, LoadBalancerQuery, Tags, TargetGroupQuery};

/// How long one listing serves every deployer of the process. Well under any resync period
/// (10 h by default; controllers with a shorter one cap it to half of it, see [`ttl_for`]), so a
/// load balancer, target group or security group changed or deleted outside the controller is
/// still seen by the next resync; long enough that the stacks of one resync pass, or of a burst
/// of events, share one listing instead of listing the account once each.
pub const INVENTORY_TTL: Duration = Duration::from_secs(60);

/// The TTL of the inventory of controllers resyncing every `sync_period`: [`INVENTORY_TTL`], at
/// most half the period (a resync always reads a listing made after the previous one).
pub fn ttl_for(sync_period: Duration) -> Duration {
    INVENTORY_TTL.min(sync_period / 2)
}

/// Whether an AWS error says the inventory may no longer match AWS: a resource it holds is gone
/// (NotFound-style, or a deleted security group named in a request), one it lacks exists
/// (Duplicate), or a write may have been applied without our seeing the answer (server error,
/// transport failure).
pub fn stales(e: &AwsError) -> bool {
    match e {
        AwsError::NotFound { .. } | AwsError::Duplicate { .. } | AwsError::Other { .. } => true,
        AwsError::Validation { code, .. } => code == "InvalidSecurityGroup",
        _ => false,
    }
}

/// A resource with its tags and when they were read (or last written by this process).
#[derive(Debug, Clone)]
struct Tagged<T> {
    item: T,
    tags: Tags,
    tags_at: Instant,
}

/// What one listing found, with this process's changes since applied.
#[derive(Debug, Default)]
struct Snapshot {
    lbs: BTreeMap<String, Tagged<aws::LoadBalancer>>,
    tgs: BTreeMap<String, Tagged<aws::TargetGroup>>,
    sgs: BTreeMap<String, aws::SecurityGroup>,
}

/// One change this process made in AWS.
#[derive(Debug, Clone)]
enum Change {
    /// Created (with its tags) or described again after an update (tags kept).
    Lb(aws::LoadBalancer, Option<Tags>),
    Tg(aws::TargetGroup, Option<Tags>),
    /// The tags of a load balancer or target group, as written.
    Tags(String, Tags),
    /// A load balancer or target group deleted (or found gone).
    Gone(String),
    Sg(aws::SecurityGroup),
    SgGone(String),
}

/// Puts `item` under `arn` with `tags` when given, else with the tags it has; one whose tags
/// are unknown is left out (the next listing reads them).
fn put<T>(
    map: &mut BTreeMap<String, Tagged<T>>,
    arn: &str,
    item: T,
    tags: Option<Tags>,
    now: Instant,
) {
    if let Some(e) = map.get_mut(arn) {
        e.item = item;
        if let Some(t) = tags {
            e.tags = t;
            e.tags_at = now;
        }
    } else if let Some(t) = tags {
        map.insert(
            arn.to_string(),
            Tagged {
                item,
                tags: t,
                tags_at: now,
            },
        );
    }
}

impl Snapshot {
    fn apply(&mut self, c: &Change, now: Instant) {
        match c {
            Change::Lb(lb, tags) => put(&mut self.lbs, &lb.arn, lb.clone(), tags.clone(), now),
            Change::Tg(tg, tags) => put(&mut self.tgs, &tg.arn, tg.clone(), tags.clone(), now),
            Change::Tags(arn, tags) => {
                if let Some(e) = self.lbs.get_mut(arn) {
                    e.tags = tags.clone();
                    e.tags_at = now;
                }
                if let Some(e) = self.tgs.get_mut(arn) {
                    e.tags = tags.clone();
                    e.tags_at = now;
                }
            }
            Change::Gone(arn) => {
                self.lbs.remove(arn);
                self.tgs.remove(arn);
            }
            Change::Sg(g) => {
                self.sgs.insert(g.id.clone(), g.clone());
            }
            Change::SgGone(id) => {
                self.sgs.remove(id);
            }
        }
    }

    /// Tags still fresh enough to reuse, by ARN, with when they were read.
    fn fresh_tags(&self) -> BTreeMap<String, (Tags, Instant)> {
        let lbs = self.lbs.iter().map(|(a, e)| (a, &e.tags, e.tags_at));
        let tgs = self.tgs.iter().map(|(a, e)| (a, &e.tags, e.tags_at));
        lbs.chain(tgs)
            .filter(|(_, _, at)| at.elapsed() < TAG_CACHE_TTL)
            .map(|(a, t, at)| (a.clone(), (t.clone(), at)))
            .collect()
    }
}

#[derive(Debug, Default)]
struct State {
    snap: Snapshot,
    /// When the listing behind `snap` began; `None`: never listed, or invalidated since.
    listed_at: Option<Instant>,
    /// Changes made while a listing runs (`Some` meanwhile), replayed onto its result.
    pending: Option<Vec<Change>>,
    /// Counts invalidations: a listing that began before one is not fresh when it ends.
    epoch: u64,
    /// The last listing, if it failed: when it began, what it did and the error (given to the
    /// callers that waited for it).
    failed: Option<(Instant, String, AwsError)>,
}

/// The shared ELBv2/EC2 inventory of one VPC; see the module docs. Share it as `Arc<Inventory>`
/// between the deployers of a process ([`super::Deployer::with_inventory`]).
pub struct Inventory {
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    vpc_id: String,
    ttl: Duration,
    state: Mutex<State>,
    /// Held while listing: callers arriving meanwhile wait for that listing.
    listing: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Inventory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inventory")
            .field("vpc_id", &self.vpc_id)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl Inventory {
    /// The inventory of `vpc_id`, listed through these clients, serving [`INVENTORY_TTL`].
    pub fn new(elbv2: Arc<dyn ElbV2>, ec2: Arc<dyn Ec2>, vpc_id: impl Into<String>) -> Self {
        Self {
            elbv2,
            ec2,
            vpc_id: vpc_id.into(),
            ttl: INVENTORY_TTL,
            state: Mutex::default(),
            listing: tokio::sync::Mutex::new(()),
        }
    }

    /// How long one listing serves (zero: every read lists, concurrent readers sharing one).
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    pub fn vpc_id(&self) -> &str {
        &self.vpc_id
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The next read lists again (a listing running now does not count as fresh either).
    pub fn invalidate(&self) {
        let mut st = self.lock();
        st.listed_at = None;
        st.epoch += 1;
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the current listing serves a caller that asked at `asked_at` and needs one begun
    /// no earlier than `not_before`: within the TTL, or begun after the caller asked.
    fn is_fresh(&self, st: &State, asked_at: Instant, not_before: Option<Instant>) -> bool {
        let Some(at) = st.listed_at else {
            return false;
        };
        if not_before.is_some_and(|nb| at < nb) {
            return false;
        }
        at.elapsed() < self.ttl || at >= asked_at
    }

    /// Makes sure a fresh listing is there (begun no earlier than `not_before` when given),
    /// listing if needed; concurrent callers share one listing, and its error.
    pub(crate) async fn ensure(&self, not_before: Option<Instant>) -> Result<()> {
        let asked_at = Instant::now();
        let fresh = {
            let st = self.lock();
            self.is_fresh(&st, asked_at, not_before)
        };
        if fresh {
            return Ok(());
        }
        let _listing = self.listing.lock().await;
        {
            let st = self.lock();
            if self.is_fresh(&st, asked_at, not_before) {
                return Ok(());
            }
            // The listing this caller waited for failed: its error, not one more listing.
            if let Some((at, what, source)) = &st.failed {
                if *at >= asked_at {
                    return Err(Error::Aws {
                        what: what.clone(),
                        source: source.clone(),
                    });
                }
            }
        }
        self.list_now().await
    }

    /// Lists now (the caller holds `listing`).
    async fn list_now(&self) -> Result<()> {
        let started = Instant::now();
        let (epoch, known) = self.begin();
        let mut listed = self.list(known.clone()).await;
        // A resource deleted between the listing and DescribeTags (anyone's, anywhere in the
        // VPC) fails the tags request: once more, rather than failing every deploy waiting.
        if matches!(&listed, Err(Error::Aws { source, .. }) if source.is_not_found()) {
            listed = self.list(known).await;
        }
        self.finish(epoch, started, listed)
    }

    /// A listing begins: changes are recorded for it from now on. Returns the epoch and the
    /// tags it may reuse.
    fn begin(&self) -> (u64, BTreeMap<String, (Tags, Instant)>) {
        let mut st = self.lock();
        st.pending = Some(Vec::new());
        (st.epoch, st.snap.fresh_tags())
    }

    /// A listing that began at `started` (in `epoch`) ended: its result, with the changes made
    /// meanwhile applied, becomes the inventory; fresh unless invalidated meanwhile.
    fn finish(&self, epoch: u64, started: Instant, listed: Result<Snapshot>) -> Result<()> {
        let mut st = self.lock();
        let pending = st.pending.take().unwrap_or_default();
        match listed {
            Ok(mut snap) => {
                let now = Instant::now();
                for c in &pending {
                    snap.apply(c, now);
                }
                st.snap = snap;
                st.listed_at = (st.epoch == epoch).then_some(started);
                st.failed = None;
                Ok(())
            }
            Err(e) => {
                if let Error::Aws { what, source } = &e {
                    st.failed = Some((started, what.clone(), source.clone()));
                }
                Err(e)
            }
        }
    }

    /// The security groups of the VPC carrying a cluster tag key (current or legacy; any
    /// cluster: ownership is the deployer's check).
    fn sg_query(&self) -> Ec2Query {
        Ec2Query::default()
            .filter("vpc-id", [self.vpc_id.as_str()])
            .filter("tag-key", [CLUSTER_TAG, LEGACY_CLUSTER_TAG])
    }

    /// One listing: every load balancer and target group of the account (paged by the client)
    /// kept to the VPC, the cluster-tagged security groups, and the tags not in `known`.
    async fn list(&self, mut known: BTreeMap<String, (Tags, Instant)>) -> Result<Snapshot> {
        let lbs = async {
            self.elbv2
                .describe_load_balancers(&LoadBalancerQuery::default())
                .await
                .ctx(|| "list load balancers".into())
        };
        let tgs = async {
            self.elbv2
                .describe_target_groups(&TargetGroupQuery::default())
                .await
                .ctx(|| "list target groups".into())
        };
        let sgs = async {
            self.ec2
                .describe_security_groups(&self.sg_query())
                .await
                .ctx(|| "list the cluster's security groups".into())
        };
        let (lbs, tgs, sgs) = tokio::try_join!(lbs, tgs, sgs)?;
        let lbs: Vec<aws::LoadBalancer> = lbs
            .into_iter()
            .filter(|l| l.vpc_id == self.vpc_id)
            .collect();
        let tgs: Vec<aws::TargetGroup> = tgs
            .into_iter()
            .filter(|t| t.vpc_id.as_deref() == Some(self.vpc_id.as_str()))
            .collect();
        let missing: Vec<String> = lbs
            .iter()
            .map(|l| &l.arn)
            .chain(tgs.iter().map(|t| &t.arn))
            .filter(|a| !known.contains_key(a.as_str()))
            .cloned()
            .collect();
        let read_at = Instant::now();
        let mut read = if missing.is_empty() {
            BTreeMap::new()
        } else {
            self.elbv2
                .describe_tags(&missing)
                .await
                .ctx(|| format!("describe tags of {} resources", missing.len()))?
        };
        let mut tags_of = |arn: &str| {
            known
                .remove(arn)
                .or_else(|| read.remove(arn).map(|t| (t, read_at)))
        };
        let mut snap = Snapshot::default();
        // A resource DescribeTags did not answer for is left out, as before the inventory.
        for lb in lbs {
            if let Some((tags, tags_at)) = tags_of(&lb.arn) {
                let arn = lb.arn.clone();
                snap.lbs.insert(
                    arn,
                    Tagged {
                        item: lb,
                        tags,
                        tags_at,
                    },
                );
            }
        }
        for tg in tgs {
            if let Some((tags, tags_at)) = tags_of(&tg.arn) {
                let arn = tg.arn.clone();
                snap.tgs.insert(
                    arn,
                    Tagged {
                        item: tg,
                        tags,
                        tags_at,
                    },
                );
            }
        }
        snap.sgs = sgs.into_iter().map(|g| (g.id.clone(), g)).collect();
        Ok(snap)
    }

    /// The load balancers (with their tags) `keep` accepts.
    pub(crate) fn lbs_where(
        &self,
        keep: impl Fn(&aws::LoadBalancer, &Tags) -> bool,
    ) -> Vec<(aws::LoadBalancer, Tags)> {
        let st = self.lock();
        st.snap
            .lbs
            .values()
            .filter(|e| keep(&e.item, &e.tags))
            .map(|e| (e.item.clone(), e.tags.clone()))
            .collect()
    }

    /// The target groups (with their tags) `keep` accepts.
    pub(crate) fn tgs_where(
        &self,
        keep: impl Fn(&aws::TargetGroup, &Tags) -> bool,
    ) -> Vec<(aws::TargetGroup, Tags)> {
        let st = self.lock();
        st.snap
            .tgs
            .values()
            .filter(|e| keep(&e.item, &e.tags))
            .map(|e| (e.item.clone(), e.tags.clone()))
            .collect()
    }

    /// The security groups `keep` accepts.
    pub(crate) fn sgs_where(
        &self,
        keep: impl Fn(&aws::SecurityGroup) -> bool,
    ) -> Vec<aws::SecurityGroup> {
        let st = self.lock();
        st.snap.sgs.values().filter(|g| keep(g)).cloned().collect()
    }

    fn note(&self, c: Change) {
        let mut st = self.lock();
        st.snap.apply(&c, Instant::now());
        if let Some(p) = st.pending.as_mut() {
            p.push(c);
        }
    }

    /// A load balancer this process created (`tags`: its tags) or described after an update
    /// (`None`: its tags stay).
    pub(crate) fn put_lb(&self, lb: aws::LoadBalancer, tags: Option<Tags>) {
        self.note(Change::Lb(lb, tags));
    }

    /// A target group this process created (`tags`: its tags) or modified (`None`).
    pub(crate) fn put_tg(&self, tg: aws::TargetGroup, tags: Option<Tags>) {
        self.note(Change::Tg(tg, tags));
    }

    /// The tags a load balancer or target group has after this process wrote them (no-op for
    /// other ARNs).
    pub(crate) fn put_tags(&self, arn: &str, tags: Tags) {
        self.note(Change::Tags(arn.to_string(), tags));
    }

    /// A load balancer or target group deleted (or found gone).
    pub(crate) fn gone(&self, arn: &str) {
        self.note(Change::Gone(arn.to_string()));
    }

    /// A security group as this process left it (created, permissions or tags changed).
    pub(crate) fn put_sg(&self, sg: aws::SecurityGroup) {
        self.note(Change::Sg(sg));
    }

    /// A security group deleted (or found gone).
    pub(crate) fn sg_gone(&self, id: &str) {
        self.note(Change::SgGone(id.to_string()));
    }
}

#[cfg(test)]
#[path = "inventory_tests.rs"]
mod tests;
