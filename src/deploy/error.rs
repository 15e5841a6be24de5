//! The one error type of the deploy layer: which step failed, on what, and the AWS cause.

use crate::aws::AwsError;

/// A failed deploy or stack deletion.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An AWS call failed; `what` says which step and resource.
    #[error("{what}: {source}")]
    Aws {
        what: String,
        #[source]
        source: AwsError,
    },
    /// The stack cannot be deployed as built (unresolvable subnets or security groups, a token
    /// that points at nothing).
    #[error("{0}")]
    Invalid(String),
    /// The stack needs something this deployer does not do yet (ACM discovery, WAF...).
    #[error("not supported by the deployer yet: {0}")]
    Unsupported(String),
    /// A load balancer to delete has deletion protection on; it stays until the user lifts it.
    #[error("load balancer {name} ({arn}) has deletion protection enabled (attribute deletion_protection.enabled=true); it is kept until the attribute is set to false")]
    DeletionProtected { name: String, arn: String },
    /// A step waits for AWS (a load balancer still provisioning before its capacity
    /// reservation, an ALB not yet registrable behind its frontend NLB): the reconciler queues
    /// the object again after `retry_after`, without a Warning, as upstream's
    /// `RequeueNeededAfter` does.
    #[error("{reason}")]
    NotReady {
        reason: String,
        retry_after: std::time::Duration,
    },
    /// An AWS resource the stack names carries no ownership tags of this cluster and stack (a
    /// Global Accelerator whose ARN the object's status names): it is never modified or deleted.
    #[error("{what} is not owned by this controller ({reason}); it is left as it is")]
    NotOwned { what: String, reason: String },
    /// A resource stayed in use (DependencyViolation / ResourceInUse) for the whole retry window.
    #[error("timed out deleting {what}: {source}")]
    DeleteTimeout {
        what: String,
        #[source]
        source: AwsError,
    },
}

pub type Result<T> = std::result::Result<T, Error>;

/// Attaches the step description to an AWS result.
pub(crate) trait Context<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Context<T> for std::result::Result<T, AwsError> {
    fn ctx(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Aws {
            what: what(),
            source,
        })
    }
}
