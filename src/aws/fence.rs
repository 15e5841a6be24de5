//! The write fence: AWS writes go out only while this replica surely holds the leader Lease.
//!
//! After each successful renewal the elector opens the fence until *start of that renewal +
//! renew deadline*. A standby may take the Lease no earlier than a lease duration after that
//! start (it must see the record unchanged for that long by its own clock), so with the fence
//! shut at the renew deadline no write of the old leader starts once another replica may lead:
//! not from a reconciler that has not noticed the loss yet, not behind a frozen API connection.
//! Reads always pass; the webhooks on every replica need them.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::error::{AwsError, Result};

/// Shared by the elector (which opens and shuts it) and the AWS [`super::Caller`] (which checks
/// it before every write attempt). The default fence never shuts: no leader election.
#[derive(Clone, Debug, Default)]
pub struct Fence(Option<Arc<Mutex<Option<Grant>>>>);

/// Writes may start until `writes_until`; one still running at `finish_by` is abandoned.
#[derive(Clone, Copy, Debug)]
struct Grant {
    writes_until: Instant,
    finish_by: Instant,
}

/// Whether an AWS operation changes something.
pub fn is_write(operation: &str) -> bool {
    !["Describe", "Get", "List"]
        .iter()
        .any(|read| operation.starts_with(read))
}

impl Fence {
    /// A fence for a replica under leader election: shut until the first grant.
    pub fn leader_only() -> Self {
        Fence(Some(Arc::new(Mutex::new(None))))
    }

    /// Allows writes to start until `until`; a write attempt still running at `finish_by` is
    /// abandoned (the elector passes the earliest instant another replica may lead).
    pub fn open_until(&self, until: Instant, finish_by: Instant) {
        if let Some(slot) = &self.0 {
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(Grant {
                writes_until: until,
                finish_by: finish_by.max(until),
            });
        }
    }

    /// Refuses writes from now on.
    pub fn shut(&self) {
        if let Some(slot) = &self.0 {
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
    }

    fn grant(&self) -> Option<Grant> {
        *self.0.as_ref()?.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a write may start now.
    pub fn is_open(&self) -> bool {
        self.0.is_none()
            || self
                .grant()
                .is_some_and(|g| Instant::now() < g.writes_until)
    }

    /// `Ok` for reads, and for writes while the fence is open; for a write, also the instant by
    /// which its attempt must have finished (`None`: unbounded).
    pub fn check(&self, operation: &str) -> Result<Option<Instant>> {
        if !is_write(operation) || self.0.is_none() {
            return Ok(None);
        }
        match self.grant() {
            Some(g) if Instant::now() < g.writes_until => Ok(Some(g.finish_by)),
            _ => Err(AwsError::NotLeader(format!(
                "{operation} not sent: this replica does not hold the leader lease"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn writes_pass_only_while_granted_reads_always() {
        assert!(Fence::default().check("CreateLoadBalancer").is_ok());
        let fence = Fence::leader_only();
        assert!(fence.check("DescribeLoadBalancers").is_ok());
        assert!(matches!(
            fence.check("CreateLoadBalancer"),
            Err(AwsError::NotLeader(_))
        ));
        let (until, finish) = (
            Instant::now() + Duration::from_secs(60),
            Instant::now() + Duration::from_secs(65),
        );
        fence.open_until(until, finish);
        assert_eq!(
            fence.check("AuthorizeSecurityGroupIngress").unwrap(),
            Some(finish)
        );
        assert_eq!(fence.check("DescribeRules").unwrap(), None);
        fence.open_until(Instant::now(), Instant::now());
        assert!(fence.check("DeleteRule").is_err(), "expired grant");
        fence.open_until(until, finish);
        fence.shut();
        assert!(fence.check("RegisterTargets").is_err());
        assert!(!is_write("GetSecurityGroupsForVpc") && is_write("CreateTags"));
    }
}
