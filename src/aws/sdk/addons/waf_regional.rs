//! `WafRegional` over aws-sdk-wafregional (WAF Classic), with upstream's availability check:
//! the service exists only in the regions the SDK resolves an endpoint for.

use async_trait::async_trait;
use aws_sdk_wafregional::config::endpoint::ResolveEndpoint;

use crate::aws::addons::WafRegional;
use crate::aws::caller::Caller;
use crate::aws::error::Result;
use crate::aws::sdk::send;
use crate::aws::types::Service;

#[derive(Debug, Clone)]
pub struct SdkWafRegional {
    pub(super) client: aws_sdk_wafregional::Client,
    pub(super) caller: Caller,
    pub(super) available: bool,
}

/// Whether the SDK resolves a `waf-regional` endpoint for `region` (upstream's `Available()`).
pub(super) async fn waf_regional_available(region: &str) -> bool {
    let Ok(params) = aws_sdk_wafregional::config::endpoint::Params::builder()
        .region(region)
        .build()
    else {
        return false;
    };
    let resolver = aws_sdk_wafregional::config::endpoint::DefaultResolver::new();
    ResolveEndpoint::resolve_endpoint(&resolver, &params)
        .await
        .is_ok()
}

#[async_trait]
impl WafRegional for SdkWafRegional {
    fn available(&self) -> bool {
        self.available
    }

    async fn get_web_acl_for_resource(&self, resource_arn: &str) -> Result<Option<String>> {
        let out = send(
            &self.caller,
            Service::WafRegional,
            "GetWebACLForResource",
            || {
                self.client
                    .get_web_acl_for_resource()
                    .resource_arn(resource_arn)
                    .send()
            },
        )
        .await?;
        Ok(out.web_acl_summary().map(|a| a.web_acl_id().to_string()))
    }

    async fn associate_web_acl(&self, web_acl_id: &str, resource_arn: &str) -> Result<()> {
        send(
            &self.caller,
            Service::WafRegional,
            "AssociateWebACL",
            || {
                self.client
                    .associate_web_acl()
                    .web_acl_id(web_acl_id)
                    .resource_arn(resource_arn)
                    .send()
            },
        )
        .await?;
        Ok(())
    }

    async fn disassociate_web_acl(&self, resource_arn: &str) -> Result<()> {
        send(
            &self.caller,
            Service::WafRegional,
            "DisassociateWebACL",
            || {
                self.client
                    .disassociate_web_acl()
                    .resource_arn(resource_arn)
                    .send()
            },
        )
        .await?;
        Ok(())
    }
}
