//! WAF Classic regional web ACL association of the load balancer (`waf-acl-id`, deprecated
//! `web-acl-id`): the current web ACL id from GetWebACLForResource (cached ten minutes, kept
//! current by our own writes), then Associate / Disassociate with upstream's error texts.

use super::error::{Context, Result};
use super::Deployer;
use crate::aws::WafRegional;

impl Deployer {
    /// Associates web ACL `want` (an id) with the load balancer, or disassociates when "".
    pub(crate) async fn sync_waf_regional(
        &self,
        client: &dyn WafRegional,
        lb_arn: &str,
        want: &str,
    ) -> Result<()> {
        let current = match self.addons.waf_regional_current.get(lb_arn) {
            Some(c) => c,
            None => {
                let c = client
                    .get_web_acl_for_resource(lb_arn)
                    .await
                    .ctx(|| "failed to get WAFClassic webACL association on LoadBalancer".into())?
                    .unwrap_or_default();
                self.addons.waf_regional_current.set(lb_arn, c.clone());
                c
            }
        };
        if want == current {
            return Ok(());
        }
        if want.is_empty() {
            tracing::info!(lb = lb_arn, web_acl = %current, "disassociating WAFRegional webACL");
            client
                .disassociate_web_acl(lb_arn)
                .await
                .ctx(|| "failed to delete WAFClassic webACL association on LoadBalancer".into())?;
        } else {
            let what = if current.is_empty() {
                "create"
            } else {
                "update"
            };
            tracing::info!(
                lb = lb_arn,
                web_acl = want,
                "associating WAFRegional webACL"
            );
            client.associate_web_acl(want, lb_arn).await.ctx(|| {
                format!("failed to {what} WAFClassic webACL association on LoadBalancer")
            })?;
        }
        self.addons
            .waf_regional_current
            .set(lb_arn, want.to_string());
        Ok(())
    }
}
