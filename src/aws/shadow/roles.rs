//! Assumed-role ELBv2 clients for `diff` and `--dry-run`: cross-account TargetGroupBindings
//! must not write through another account's credentials either.

use std::sync::Arc;

use async_trait::async_trait;

use super::Recorder;
use crate::aws::{AssumeRole, AwsError, Ec2, ElbV2, Result};

/// Wraps the real role clients: in shadow mode each assumed-role client records its writes
/// (log + gauge) like the controller's own; in a one-shot `diff` they are refused, since its
/// report would not show them.
pub struct RecordedRoles {
    inner: Arc<dyn AssumeRole>,
    ec2: Arc<dyn Ec2>,
    shadow: bool,
}

impl RecordedRoles {
    pub fn shadow(inner: Arc<dyn AssumeRole>, ec2: Arc<dyn Ec2>) -> Self {
        Self {
            inner,
            ec2,
            shadow: true,
        }
    }

    pub fn diff(inner: Arc<dyn AssumeRole>, ec2: Arc<dyn Ec2>) -> Self {
        Self {
            inner,
            ec2,
            shadow: false,
        }
    }
}

impl std::fmt::Debug for RecordedRoles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordedRoles")
            .field("inner", &self.inner)
            .field("shadow", &self.shadow)
            .finish()
    }
}

#[async_trait]
impl AssumeRole for RecordedRoles {
    async fn elbv2_as(&self, role_arn: &str, external_id: &str) -> Result<Arc<dyn ElbV2>> {
        if !self.shadow {
            return Err(AwsError::Config(format!(
                "diff does not cover TargetGroupBindings in another account (role {role_arn})"
            )));
        }
        let elbv2 = self.inner.elbv2_as(role_arn, external_id).await?;
        Ok(Arc::new(Recorder::shadow(elbv2, self.ec2.clone())))
    }
}
