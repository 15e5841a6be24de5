//! STS AssumeRole for the fake: each role leads to another fake account (its own `FakeAws`);
//! an unknown role or a wrong external id is refused as STS refuses it. Every attempt is logged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::{lock, FakeAws};
use crate::aws::error::{AwsError, Result};
use crate::aws::{AssumeRole, ElbV2};

/// Roles of other (fake) accounts the controller may assume.
#[derive(Debug, Default)]
pub struct FakeRoles {
    /// Role ARN → (external id it requires, the account behind it).
    accounts: Mutex<HashMap<String, (String, Arc<FakeAws>)>>,
    assumed: Mutex<Vec<(String, String)>>,
}

impl FakeRoles {
    /// Lets `role_arn` be assumed with `external_id` ("" = none required) into `account`.
    pub fn add(&self, role_arn: &str, external_id: &str, account: Arc<FakeAws>) {
        lock(&self.accounts).insert(role_arn.into(), (external_id.into(), account));
    }

    /// Every AssumeRole attempt, as (role, external id).
    pub fn assumed(&self) -> Vec<(String, String)> {
        lock(&self.assumed).clone()
    }
}

#[async_trait]
impl AssumeRole for FakeRoles {
    async fn elbv2_as(&self, role_arn: &str, external_id: &str) -> Result<Arc<dyn ElbV2>> {
        lock(&self.assumed).push((role_arn.into(), external_id.into()));
        match lock(&self.accounts).get(role_arn) {
            Some((want, account)) if want == external_id => Ok(account.clone()),
            _ => Err(AwsError::AccessDenied {
                code: "AccessDenied".into(),
                message: format!(
                    "User: arn:aws:iam::123456789012:user/controller is not authorized to perform: sts:AssumeRole on resource: {role_arn}"
                ),
            }),
        }
    }
}
