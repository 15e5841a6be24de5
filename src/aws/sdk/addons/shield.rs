//! `Shield` over aws-sdk-shield (Shield Advanced protections of load balancers).

use async_trait::async_trait;

use crate::aws::addons::{Protection, Shield};
use crate::aws::caller::Caller;
use crate::aws::error::Result;
use crate::aws::sdk::{s, send};
use crate::aws::types::Service;

#[derive(Debug, Clone)]
pub struct SdkShield {
    pub(super) client: aws_sdk_shield::Client,
    pub(super) caller: Caller,
}

#[async_trait]
impl Shield for SdkShield {
    async fn get_subscription_state(&self) -> Result<String> {
        let out = send(
            &self.caller,
            Service::Shield,
            "GetSubscriptionState",
            || self.client.get_subscription_state().send(),
        )
        .await?;
        Ok(out.subscription_state().as_str().to_string())
    }

    async fn describe_protection(&self, resource_arn: &str) -> Result<Option<Protection>> {
        let out = send(&self.caller, Service::Shield, "DescribeProtection", || {
            self.client
                .describe_protection()
                .resource_arn(resource_arn)
                .send()
        })
        .await;
        match out {
            Ok(out) => Ok(out.protection().map(|p| Protection {
                id: s(p.id()),
                name: s(p.name()),
                resource_arn: s(p.resource_arn()),
            })),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn create_protection(&self, name: &str, resource_arn: &str) -> Result<String> {
        let out = send(&self.caller, Service::Shield, "CreateProtection", || {
            self.client
                .create_protection()
                .name(name)
                .resource_arn(resource_arn)
                .send()
        })
        .await?;
        Ok(s(out.protection_id()))
    }

    async fn delete_protection(&self, protection_id: &str) -> Result<()> {
        send(&self.caller, Service::Shield, "DeleteProtection", || {
            self.client
                .delete_protection()
                .protection_id(protection_id)
                .send()
        })
        .await?;
        Ok(())
    }
}
