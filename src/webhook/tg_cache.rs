//! Target-group metadata for the TargetGroupBinding webhooks: `DescribeTargetGroups` answers
//! kept for a short TTL by ARN and by name, and concurrent misses for one key share one call, so
//! a burst of TargetGroupBinding writes (mutator then validator, times N) costs one call per group.
//!
//! Failures are handed to the requests waiting at that moment and then forgotten: a user who
//! fixes a typo or an IAM permission is not told the old answer for another TTL.
//!
//! Cross-account bindings (`iamRoleArnToAssume`) look their group up with the role's client, as
//! upstream; answers are kept per role, never shared with the controller's own account.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OnceCell;
use tokio::time::Instant;

use crate::aws::{elbv2_for, AssumeRole, AwsError, ElbV2, TargetGroup, TargetGroupQuery};

/// How long a target group's metadata is trusted.
pub const DEFAULT_TTL: Duration = Duration::from_secs(10);
/// Above this many entries, expired ones are swept on insert.
const SWEEP_AT: usize = 1024;

/// Why a target group could not be looked up. Display texts are upstream's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TgLookupError {
    #[error(transparent)]
    Aws(#[from] AwsError),
    #[error("expecting a single targetGroup with query [{query}] but got {count}")]
    NotSingle { query: String, count: usize },
}

type Answer = Result<TargetGroup, TgLookupError>;

/// Whose account a lookup is made in: the controller's (empty `arn`) or a binding's role.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Role {
    pub arn: String,
    pub external_id: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum What {
    Arn(String),
    Name(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    role: Role,
    what: What,
}

struct Slot {
    cell: Arc<OnceCell<Answer>>,
    born: Instant,
}

/// Shared by the TargetGroupBinding mutator and validator.
pub struct TgCache {
    elbv2: Arc<dyn ElbV2>,
    roles: Option<Arc<dyn AssumeRole>>,
    ttl: Duration,
    slots: Mutex<HashMap<Key, Slot>>,
    /// Where AWS calls run (see [`Self::on_runtime`]); the caller's runtime when `None`.
    runtime: Option<tokio::runtime::Handle>,
}

impl TgCache {
    pub fn new(elbv2: Arc<dyn ElbV2>, ttl: Duration) -> Self {
        TgCache {
            elbv2,
            roles: None,
            ttl,
            slots: Mutex::new(HashMap::new()),
            runtime: None,
        }
    }

    /// Runs the AWS calls on `runtime`. The webhooks serve on threads of their own, and a
    /// connection the SDK opens there stays in the pool the reconcilers share, driven by (and
    /// dying with) the webhook threads: their lookups run on the controller's runtime instead.
    pub fn on_runtime(mut self, runtime: tokio::runtime::Handle) -> Self {
        self.runtime = Some(runtime);
        self
    }

    /// Lookups for cross-account bindings go through these assumed-role clients.
    pub fn with_roles(mut self, roles: Arc<dyn AssumeRole>) -> Self {
        self.roles = Some(roles);
        self
    }

    /// `DescribeTargetGroups(TargetGroupArns=[arn])`, exactly one result expected.
    pub async fn by_arn(&self, arn: &str) -> Answer {
        self.by_arn_as(&Role::default(), arn).await
    }

    /// `DescribeTargetGroups(Names=[name])`, exactly one result expected.
    pub async fn by_name(&self, name: &str) -> Answer {
        self.by_name_as(&Role::default(), name).await
    }

    /// [`Self::by_arn`] in the account of `role`.
    pub async fn by_arn_as(&self, role: &Role, arn: &str) -> Answer {
        self.lookup(Key {
            role: role.clone(),
            what: What::Arn(arn.to_string()),
        })
        .await
    }

    /// [`Self::by_name`] in the account of `role`.
    pub async fn by_name_as(&self, role: &Role, name: &str) -> Answer {
        self.lookup(Key {
            role: role.clone(),
            what: What::Name(name.to_string()),
        })
        .await
    }

    /// Number of cached keys (fresh or not yet swept).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cell to wait on for `key`: a fresh or in-flight one, else a new one.
    fn cell_for(&self, key: &Key) -> Arc<OnceCell<Answer>> {
        let mut slots = self.lock();
        if let Some(slot) = slots.get(key) {
            let stale = slot.cell.initialized() && slot.born.elapsed() > self.ttl;
            if !stale {
                return slot.cell.clone();
            }
        }
        if slots.len() >= SWEEP_AT {
            let ttl = self.ttl;
            slots.retain(|_, s| !s.cell.initialized() || s.born.elapsed() <= ttl);
        }
        let cell = Arc::new(OnceCell::new());
        slots.insert(
            key.clone(),
            Slot {
                cell: cell.clone(),
                born: Instant::now(),
            },
        );
        cell
    }

    async fn lookup(&self, key: Key) -> Answer {
        let cell = self.cell_for(&key);
        let answer = cell.get_or_init(|| self.fetch(&key)).await.clone();
        let mut slots = self.lock();
        match &answer {
            Err(_) => {
                // Only drop the slot we waited on; a newer one may have replaced it.
                if slots.get(&key).is_some_and(|s| Arc::ptr_eq(&s.cell, &cell)) {
                    slots.remove(&key);
                }
            }
            Ok(tg) => {
                // An answer by name also answers by ARN and vice versa.
                let other = Key {
                    role: key.role.clone(),
                    what: match &key.what {
                        What::Arn(_) => What::Name(tg.name.clone()),
                        What::Name(_) => What::Arn(tg.arn.clone()),
                    },
                };
                let born = slots.get(&key).map_or_else(Instant::now, |s| s.born);
                let fresh = slots
                    .get(&other)
                    .is_some_and(|s| s.born.elapsed() <= self.ttl);
                if !fresh && !tg.name.is_empty() && !tg.arn.is_empty() {
                    let cell = Arc::new(OnceCell::new_with(Some(answer.clone())));
                    slots.insert(other, Slot { cell, born });
                }
            }
        }
        answer
    }

    async fn fetch(&self, key: &Key) -> Answer {
        let call = fetch(self.elbv2.clone(), self.roles.clone(), key.clone());
        match &self.runtime {
            None => call.await,
            Some(runtime) => runtime.spawn(call).await.unwrap_or_else(|e| {
                Err(TgLookupError::Aws(AwsError::Other {
                    code: "LookupAborted".into(),
                    message: format!("target group lookup did not finish: {e}"),
                    status: None,
                }))
            }),
        }
    }
}

/// One request's view of one target group: looked up at most once, and only when a check
/// needs it (upstream's per-request memoised lookup).
pub struct RequestTg<'a> {
    cache: &'a TgCache,
    role: Role,
    arn: String,
    answer: OnceCell<Answer>,
}

impl<'a> RequestTg<'a> {
    pub fn new(cache: &'a TgCache, arn: &str) -> Self {
        Self::for_role(cache, Role::default(), arn)
    }

    /// The group as `role` sees it (a cross-account binding's account).
    pub fn for_role(cache: &'a TgCache, role: Role, arn: &str) -> Self {
        RequestTg {
            cache,
            role,
            arn: arn.to_string(),
            answer: OnceCell::new(),
        }
    }

    pub async fn get(&self) -> &Answer {
        self.answer
            .get_or_init(|| self.cache.by_arn_as(&self.role, &self.arn))
            .await
    }
}

/// Upstream's mapping of a target group's IP address type (absent or `ipv4` → ipv4).
pub fn ip_address_type(tg: &TargetGroup) -> Result<&'static str, String> {
    match tg.ip_address_type.as_deref().unwrap_or("") {
        "ipv6" => Ok("ipv6"),
        "ipv4" | "" => Ok("ipv4"),
        other => Err(format!("unsupported IPAddressType: {other}")),
    }
}

/// One DescribeTargetGroups for `key`, in the account of its role.
async fn fetch(elbv2: Arc<dyn ElbV2>, roles: Option<Arc<dyn AssumeRole>>, key: Key) -> Answer {
    let (query, ident) = match &key.what {
        What::Arn(arn) => (
            TargetGroupQuery {
                arns: vec![arn.clone()],
                ..Default::default()
            },
            arn,
        ),
        What::Name(name) => (
            TargetGroupQuery {
                names: vec![name.clone()],
                ..Default::default()
            },
            name,
        ),
    };
    let role = &key.role;
    let elbv2 = elbv2_for(&elbv2, roles.as_ref(), &role.arn, &role.external_id).await?;
    let mut found = elbv2.describe_target_groups(&query).await?;
    if found.len() != 1 {
        return Err(TgLookupError::NotSingle {
            query: ident.clone(),
            count: found.len(),
        });
    }
    Ok(found.remove(0))
}

#[cfg(test)]
#[path = "tg_cache_tests.rs"]
mod tests;
