//! An AWS layer that reads for real and writes nothing: every read trait call is forwarded to the
//! wrapped clients, every write is recorded (call, resource, each field before → after) and
//! answered as AWS would, so the unchanged deployer runs its whole chain. A created resource gets
//! a placeholder ARN / id (`…/pending-N`); reads of placeholders are answered from what was
//! recorded and never reach AWS.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::aws::*;

mod acm;
mod addons;
mod ec2;
mod elb;
mod elb_listener;
mod elb_tg;
mod global_accelerator;

/// One field a write changes; `None` = absent before (created) or after (removed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub field: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// One intercepted write: the AWS action (`elasticloadbalancing:ModifyTargetGroup`), the ARN or
/// id it acts on, and what it changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Write {
    pub call: String,
    pub resource: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
}

/// What the reads returned (and the recorded writes made of it), by ARN / id.
#[derive(Default)]
struct Seen {
    lbs: BTreeMap<String, LoadBalancer>,
    lb_attrs: BTreeMap<String, Attributes>,
    tgs: BTreeMap<String, TargetGroup>,
    tg_attrs: BTreeMap<String, Attributes>,
    listener_attrs: BTreeMap<String, Attributes>,
    listeners: BTreeMap<String, Listener>,
    rules: BTreeMap<String, Rule>,
    tags: BTreeMap<String, Tags>,
    sgs: BTreeMap<String, SecurityGroup>,
    /// Listener ARN → rule ARNs, for placeholder listeners.
    rules_of: BTreeMap<String, Vec<String>>,
    next: u32,
}

/// The intercepting layer; `Arc<Recorder>` serves as both `Arc<dyn ElbV2>` and `Arc<dyn Ec2>`
/// (and as the add-on and Global Accelerator clients it was given real ones of).
pub struct Recorder {
    elbv2: Arc<dyn ElbV2>,
    ec2: Arc<dyn Ec2>,
    /// Shadow mode: writes go to [`super::note`] (log + gauge) instead of the list.
    shadow: bool,
    seen: Mutex<Seen>,
    writes: Mutex<Vec<Write>>,
    addons: addons::AddonSide,
    certs: acm::CertSide,
    ga: global_accelerator::GaSide,
}

const PENDING: &str = "pending-";

/// Whether an ARN / id is one this recorder made up for a resource it pretended to create.
pub fn is_placeholder(id: &str) -> bool {
    id.contains(PENDING)
}

/// A value as printed in the report: strings bare, everything else as Rust shows it.
fn show<T: Debug + ?Sized>(v: &T) -> String {
    let s = format!("{v:?}");
    match s.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
        Some(_) => serde_json::from_str::<String>(&s).unwrap_or(s),
        None => s,
    }
}

fn change(field: &str, before: Option<String>, after: Option<String>) -> Option<Change> {
    (before != after).then(|| Change {
        field: field.to_string(),
        before,
        after,
    })
}

fn created(fields: &[(&str, &dyn Debug)]) -> Vec<Change> {
    fields
        .iter()
        .map(|(f, v)| Change {
            field: f.to_string(),
            before: None,
            after: Some(show(v)),
        })
        .collect()
}

fn attr_changes(before: Option<&Attributes>, after: &Attributes) -> Vec<Change> {
    after
        .iter()
        .filter_map(|(k, v)| change(k, before.and_then(|b| b.get(k)).cloned(), Some(v.clone())))
        .collect()
}

impl Recorder {
    pub fn new(elbv2: Arc<dyn ElbV2>, ec2: Arc<dyn Ec2>) -> Self {
        Self {
            elbv2,
            ec2,
            shadow: false,
            seen: Mutex::new(Seen::default()),
            writes: Mutex::new(Vec::new()),
            addons: Default::default(),
            certs: Default::default(),
            ga: Default::default(),
        }
    }

    /// For a long-running `--dry-run` controller: writes are noted, not kept.
    pub fn shadow(elbv2: Arc<dyn ElbV2>, ec2: Arc<dyn Ec2>) -> Self {
        Self {
            shadow: true,
            ..Self::new(elbv2, ec2)
        }
    }

    /// Writes recorded so far, in call order; the log is emptied.
    pub fn take(&self) -> Vec<Write> {
        std::mem::take(&mut *self.writes.lock().unwrap())
    }

    fn record(&self, service: &str, call: &str, resource: &str, changes: Vec<Change>) {
        let write = Write {
            call: format!("{service}:{call}"),
            resource: resource.to_string(),
            changes,
        };
        let kind = super::aws_kind(resource);
        if self.shadow {
            super::note(kind, &write);
        } else if !super::capture(kind, &write) {
            self.writes.lock().unwrap().push(write);
        }
    }

    fn elb(&self, call: &str, resource: &str, changes: Vec<Change>) {
        self.record("elasticloadbalancing", call, resource, changes)
    }

    fn placeholder(&self, prefix: &str) -> String {
        let mut s = self.seen.lock().unwrap();
        s.next += 1;
        format!("{prefix}{PENDING}{}", s.next)
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap()
    }
}

/// Splits ids into (forwarded, placeholders).
fn split(ids: &[String]) -> (Vec<String>, Vec<String>) {
    ids.iter().cloned().partition(|a| !is_placeholder(a))
}
