//! WAFv2 web ACL association of the load balancer (`wafv2-acl-arn`, `wafv2-acl-name`,
//! IngressClassParams `wafv2AclArn` / `wafv2AclName`): a name is resolved with ListWebACLs
//! (scope REGIONAL, exact match, cached an hour) before any write; the current association is
//! read with GetWebACLForResource (cached ten minutes, kept current by our own writes), and
//! associated / disassociated with upstream's error texts.

use super::addons::or_none;
use super::error::{Context, Error, Result};
use super::Deployer;
use crate::aws::WafV2;
use crate::model::Addons;

impl Deployer {
    /// The web ACL ARN the stack asks for ("" for `none`); a name beats an ARN, as upstream.
    pub(crate) async fn desired_wafv2(&self, client: &dyn WafV2, a: &Addons) -> Result<String> {
        let name = match &a.wafv2_acl_name {
            Some(n) if n != "none" => n,
            Some(_) => return Ok(String::new()),
            None => return Ok(or_none(a.wafv2_acl_arn.as_deref().unwrap_or_default())),
        };
        if let Some(arn) = self.addons.wafv2_names.get(name) {
            return Ok(arn);
        }
        let not_found = || format!("couldn't find WAFv2 WebACL with name: {name}");
        let acls = client.list_web_acls().await.ctx(not_found)?;
        let arn = acls
            .into_iter()
            .find(|w| &w.name == name)
            .map(|w| w.arn)
            .ok_or_else(|| Error::Invalid(not_found()))?;
        self.addons.wafv2_names.set(name, arn.clone());
        Ok(arn)
    }

    /// Associates `want` with the load balancer, or disassociates when `want` is "".
    pub(crate) async fn sync_wafv2(
        &self,
        client: &dyn WafV2,
        lb_arn: &str,
        want: &str,
    ) -> Result<()> {
        let current = match self.addons.wafv2_current.get(lb_arn) {
            Some(c) => c,
            None => {
                let c = client
                    .get_web_acl_for_resource(lb_arn)
                    .await
                    .ctx(|| "failed to get WAFv2 webACL association on LoadBalancer".into())?
                    .unwrap_or_default();
                self.addons.wafv2_current.set(lb_arn, c.clone());
                c
            }
        };
        if want == current {
            return Ok(());
        }
        if want.is_empty() {
            tracing::info!(lb = lb_arn, web_acl = %current, "disassociating WAFv2 webACL");
            client
                .disassociate_web_acl(lb_arn)
                .await
                .ctx(|| "failed to delete WAFv2 webACL association on LoadBalancer".into())?;
        } else {
            let what = if current.is_empty() {
                "create"
            } else {
                "update"
            };
            tracing::info!(lb = lb_arn, web_acl = want, "associating WAFv2 webACL");
            client
                .associate_web_acl(want, lb_arn)
                .await
                .ctx(|| format!("failed to {what} WAFv2 webACL association on LoadBalancer"))?;
        }
        self.addons.wafv2_current.set(lb_arn, want.to_string());
        Ok(())
    }
}
