//! In-memory Route 53 behind the [`Route53`] trait, with AWS's refusals that moto words
//! differently or lacks: CREATE of a record set that exists and DELETE of one that does not
//! (or whose values differ) fail the whole batch with `InvalidChangeBatch` and AWS's texts, and a
//! record outside its zone is refused. Every request goes through the [`Caller`] and is logged.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use async_trait::async_trait;

use super::lock;
use crate::aws::caller::Caller;
use crate::aws::error::{AwsError, Result};
use crate::aws::route53::{HostedZone, RecordAction, RecordChange, Route53};
use crate::aws::types::Service;

/// One record set as stored: type, TTL and value by name (fully qualified, with the dot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeRecord {
    pub record_type: String,
    pub ttl: i64,
    pub value: String,
}

#[derive(Debug, Default)]
struct Zone {
    name: String,
    /// By (name with the trailing dot, type).
    records: BTreeMap<(String, String), FakeRecord>,
}

/// The fake Route 53 of one account.
#[derive(Debug)]
pub struct FakeRoute53 {
    zones: Mutex<BTreeMap<String, Zone>>,
    log: Mutex<Vec<String>>,
    failures: Mutex<VecDeque<AwsError>>,
    caller: Caller,
}

impl Default for FakeRoute53 {
    fn default() -> Self {
        Self::with_caller(Caller::default())
    }
}

fn dotted(name: &str) -> String {
    if name.ends_with('.') {
        name.to_string()
    } else {
        format!("{name}.")
    }
}

fn invalid_batch(message: String) -> AwsError {
    AwsError::from_code("InvalidChangeBatch", message, Some(400))
}

impl FakeRoute53 {
    pub fn new() -> Self {
        Self::default()
    }

    /// A fake whose requests go through `caller` (limiter, retries, metrics, leader fence).
    pub fn with_caller(caller: Caller) -> Self {
        Self {
            zones: Mutex::new(BTreeMap::new()),
            log: Mutex::new(Vec::new()),
            failures: Mutex::new(VecDeque::new()),
            caller,
        }
    }

    /// Adds a public hosted zone for `name` (`example.com`); returns its id
    /// (`/hostedzone/Z…`).
    pub fn add_zone(&self, name: &str) -> String {
        let mut zones = lock(&self.zones);
        let id = format!("/hostedzone/Z{:05}FAKE", zones.len() + 1);
        zones.insert(
            id.clone(),
            Zone {
                name: dotted(name),
                records: BTreeMap::new(),
            },
        );
        id
    }

    /// The ids of every zone, in id order.
    pub fn zone_ids(&self) -> Vec<String> {
        lock(&self.zones).keys().cloned().collect()
    }

    /// Every record set of the zone `zone_id`, by (name, type).
    pub fn records(&self, zone_id: &str) -> BTreeMap<(String, String), FakeRecord> {
        lock(&self.zones)
            .get(zone_id)
            .map(|z| z.records.clone())
            .unwrap_or_default()
    }

    /// Whether some zone holds the record set `name`/`record_type` with `value`.
    pub fn has_record(&self, name: &str, record_type: &str, value: &str) -> bool {
        let key = (dotted(name), record_type.to_string());
        lock(&self.zones)
            .values()
            .any(|z| z.records.get(&key).is_some_and(|r| r.value == value))
    }

    /// Every request that reached the fake (retries included), in order.
    pub fn calls(&self) -> Vec<String> {
        lock(&self.log).clone()
    }

    /// How many requests named `op` reached the fake.
    pub fn count(&self, op: &str) -> usize {
        lock(&self.log).iter().filter(|o| *o == op).count()
    }

    pub fn clear_calls(&self) {
        lock(&self.log).clear();
    }

    /// The next request fails with `err` (queued: one per call of this).
    pub fn fail_next(&self, err: AwsError) {
        lock(&self.failures).push_back(err);
    }

    async fn run<T, F>(&self, op: &'static str, f: F) -> Result<T>
    where
        F: Fn(&mut BTreeMap<String, Zone>) -> Result<T> + Send + Sync,
        T: Send,
    {
        self.caller
            .call(Service::Route53, op, || self.attempt(op, &f))
            .await
    }

    async fn attempt<T, F>(&self, op: &'static str, f: &F) -> Result<T>
    where
        F: Fn(&mut BTreeMap<String, Zone>) -> Result<T> + Send + Sync,
    {
        lock(&self.log).push(op.to_string());
        let injected = lock(&self.failures).pop_front();
        match injected {
            Some(err) => Err(err),
            None => f(&mut lock(&self.zones)),
        }
    }
}

/// Applies one batch to a copy of the zone, so a refused change leaves the zone as it was.
fn apply(zone: &Zone, changes: &[RecordChange]) -> Result<BTreeMap<(String, String), FakeRecord>> {
    let mut records = zone.records.clone();
    let zone_name = zone.name.trim_end_matches('.');
    for c in changes {
        let name = dotted(&c.name);
        let bare = name.trim_end_matches('.');
        if bare != zone_name && !bare.ends_with(&format!(".{zone_name}")) {
            return Err(invalid_batch(format!(
                "[RRSet with DNS name {name} is not permitted in zone {}]",
                zone.name
            )));
        }
        let key = (name.clone(), c.record_type.clone());
        let want = FakeRecord {
            record_type: c.record_type.clone(),
            ttl: c.ttl,
            value: c.value.clone(),
        };
        let shown = format!("[name='{name}', type='{}']", c.record_type);
        match c.action {
            RecordAction::Create => {
                if records.contains_key(&key) {
                    return Err(invalid_batch(format!(
                        "[Tried to create resource record set {shown} but it already exists]"
                    )));
                }
                records.insert(key, want);
            }
            RecordAction::Delete => match records.get(&key) {
                None => {
                    return Err(invalid_batch(format!(
                        "[Tried to delete resource record set {shown} but it was not found]"
                    )))
                }
                Some(have) if *have != want => {
                    return Err(invalid_batch(format!(
                        "[Tried to delete resource record set {shown} but the values provided do not match the current values]"
                    )))
                }
                Some(_) => {
                    records.remove(&key);
                }
            },
        }
    }
    Ok(records)
}

#[async_trait]
impl Route53 for FakeRoute53 {
    async fn list_hosted_zones(&self) -> Result<Vec<HostedZone>> {
        self.run("ListHostedZones", |zones| {
            Ok(zones
                .iter()
                .map(|(id, z)| HostedZone {
                    id: id.clone(),
                    name: z.name.clone(),
                })
                .collect())
        })
        .await
    }

    async fn change_resource_record_sets(
        &self,
        zone_id: &str,
        changes: &[RecordChange],
    ) -> Result<()> {
        self.run("ChangeResourceRecordSets", |zones| {
            let zone = zones.get_mut(zone_id).ok_or_else(|| {
                AwsError::from_code(
                    "NoSuchHostedZone",
                    format!("No hosted zone found with ID: {zone_id}"),
                    Some(404),
                )
            })?;
            zone.records = apply(zone, changes)?;
            Ok(())
        })
        .await
    }
}
