//! `WafV2` over aws-sdk-wafv2 (regional web ACLs, as upstream's ALB add-on uses them).

use async_trait::async_trait;

use crate::aws::addons::{WafV2, WebAclSummary};
use crate::aws::caller::Caller;
use crate::aws::error::Result;
use crate::aws::sdk::{all_pages, s, send};
use crate::aws::types::Service;

#[derive(Debug, Clone)]
pub struct SdkWafV2 {
    pub(super) client: aws_sdk_wafv2::Client,
    pub(super) caller: Caller,
}

#[async_trait]
impl WafV2 for SdkWafV2 {
    async fn get_web_acl_for_resource(&self, resource_arn: &str) -> Result<Option<String>> {
        let out = send(&self.caller, Service::WafV2, "GetWebACLForResource", || {
            self.client
                .get_web_acl_for_resource()
                .resource_arn(resource_arn)
                .send()
        })
        .await?;
        Ok(out.web_acl().map(|a| a.arn().to_string()))
    }

    async fn associate_web_acl(&self, web_acl_arn: &str, resource_arn: &str) -> Result<()> {
        send(&self.caller, Service::WafV2, "AssociateWebACL", || {
            self.client
                .associate_web_acl()
                .web_acl_arn(web_acl_arn)
                .resource_arn(resource_arn)
                .send()
        })
        .await?;
        Ok(())
    }

    async fn disassociate_web_acl(&self, resource_arn: &str) -> Result<()> {
        send(&self.caller, Service::WafV2, "DisassociateWebACL", || {
            self.client
                .disassociate_web_acl()
                .resource_arn(resource_arn)
                .send()
        })
        .await?;
        Ok(())
    }

    async fn list_web_acls(&self) -> Result<Vec<WebAclSummary>> {
        all_pages(|marker| async move {
            let out = send(&self.caller, Service::WafV2, "ListWebACLs", || {
                self.client
                    .list_web_acls()
                    .scope(aws_sdk_wafv2::types::Scope::Regional)
                    .set_next_marker(marker.clone())
                    .send()
            })
            .await?;
            let items = out
                .web_acls()
                .iter()
                .map(|a| WebAclSummary {
                    name: s(a.name()),
                    arn: s(a.arn()),
                })
                .collect();
            Ok((items, out.next_marker().map(str::to_string)))
        })
        .await
    }
}
