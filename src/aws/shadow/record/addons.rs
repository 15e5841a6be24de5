//! WAFv2, WAF Classic regional and Shield through the recorder: reads forwarded (a placeholder
//! load balancer has no association or protection yet), associations and protections recorded
//! with the web ACL / protection before and after, never sent.

use async_trait::async_trait;

use super::*;

/// The real add-on clients behind the recorder and what their reads returned, by
/// `service|load balancer ARN`.
#[derive(Default)]
pub(super) struct AddonSide {
    inner: AddonClients,
    current: Mutex<BTreeMap<String, String>>,
}

/// The real client a read goes to, or an error naming the service the recorder lacks.
fn real<'a, T: ?Sized>(client: &'a Option<Arc<T>>, service: &str) -> Result<&'a Arc<T>> {
    client
        .as_ref()
        .ok_or_else(|| AwsError::Config(format!("no {service} client behind the recorder")))
}

impl Recorder {
    /// The real add-on clients reads go to.
    pub fn with_addons(mut self, clients: AddonClients) -> Self {
        self.addons.inner = clients;
        self
    }

    /// This recorder in place of each client `enabled` has (the flags stay as they were).
    pub fn addons_view(self: &Arc<Self>, enabled: &AddonClients) -> AddonClients {
        AddonClients {
            wafv2: enabled
                .wafv2
                .as_ref()
                .map(|_| self.clone() as Arc<dyn WafV2>),
            waf_regional: enabled
                .waf_regional
                .as_ref()
                .map(|_| self.clone() as Arc<dyn WafRegional>),
            shield: enabled
                .shield
                .as_ref()
                .map(|_| self.clone() as Arc<dyn Shield>),
        }
    }

    fn remember(&self, service: &str, lb: &str, value: &str) {
        let mut c = self.addons.current.lock().unwrap();
        c.insert(format!("{service}|{lb}"), value.to_string());
    }

    /// What `service` last said (or we pretended) is on `lb`; `None` when unknown.
    fn before(&self, service: &str, lb: &str) -> Option<String> {
        let c = self.addons.current.lock().unwrap();
        c.get(&format!("{service}|{lb}"))
            .filter(|v| !v.is_empty())
            .cloned()
    }

    fn acl_write(&self, service: &str, call: &str, lb: &str, after: &str) {
        let want = (!after.is_empty()).then(|| after.to_string());
        let changes = change("webACL", self.before(service, lb), want)
            .into_iter()
            .collect();
        self.record(service, call, lb, changes);
        self.remember(service, lb, after);
    }
}

#[async_trait]
impl WafV2 for Recorder {
    async fn get_web_acl_for_resource(&self, resource_arn: &str) -> Result<Option<String>> {
        if is_placeholder(resource_arn) {
            return Ok(None);
        }
        let got = real(&self.addons.inner.wafv2, "WAFv2")?
            .get_web_acl_for_resource(resource_arn)
            .await?;
        self.remember("wafv2", resource_arn, got.as_deref().unwrap_or_default());
        Ok(got)
    }
    async fn associate_web_acl(&self, web_acl_arn: &str, resource_arn: &str) -> Result<()> {
        self.acl_write("wafv2", "AssociateWebACL", resource_arn, web_acl_arn);
        Ok(())
    }
    async fn disassociate_web_acl(&self, resource_arn: &str) -> Result<()> {
        self.acl_write("wafv2", "DisassociateWebACL", resource_arn, "");
        Ok(())
    }
    async fn list_web_acls(&self) -> Result<Vec<WebAclSummary>> {
        real(&self.addons.inner.wafv2, "WAFv2")?
            .list_web_acls()
            .await
    }
}

#[async_trait]
impl WafRegional for Recorder {
    fn available(&self) -> bool {
        self.addons
            .inner
            .waf_regional
            .as_ref()
            .is_some_and(|c| c.available())
    }
    async fn get_web_acl_for_resource(&self, resource_arn: &str) -> Result<Option<String>> {
        if is_placeholder(resource_arn) {
            return Ok(None);
        }
        let got = real(&self.addons.inner.waf_regional, "WAF Regional")?
            .get_web_acl_for_resource(resource_arn)
            .await?;
        self.remember(
            "waf-regional",
            resource_arn,
            got.as_deref().unwrap_or_default(),
        );
        Ok(got)
    }
    async fn associate_web_acl(&self, web_acl_id: &str, resource_arn: &str) -> Result<()> {
        self.acl_write("waf-regional", "AssociateWebACL", resource_arn, web_acl_id);
        Ok(())
    }
    async fn disassociate_web_acl(&self, resource_arn: &str) -> Result<()> {
        self.acl_write("waf-regional", "DisassociateWebACL", resource_arn, "");
        Ok(())
    }
}

#[async_trait]
impl Shield for Recorder {
    async fn get_subscription_state(&self) -> Result<String> {
        real(&self.addons.inner.shield, "Shield")?
            .get_subscription_state()
            .await
    }
    async fn describe_protection(&self, resource_arn: &str) -> Result<Option<Protection>> {
        if is_placeholder(resource_arn) {
            return Ok(None);
        }
        let got = real(&self.addons.inner.shield, "Shield")?
            .describe_protection(resource_arn)
            .await?;
        if let Some(p) = &got {
            self.remember("shield", &p.id, resource_arn);
        }
        Ok(got)
    }
    async fn create_protection(&self, name: &str, resource_arn: &str) -> Result<String> {
        let id = self.placeholder("protection-");
        let changes = created(&[("name", &name), ("resourceArn", &resource_arn)]);
        self.record("shield", "CreateProtection", resource_arn, changes);
        Ok(id)
    }
    async fn delete_protection(&self, protection_id: &str) -> Result<()> {
        // Reported on the load balancer it protects, when known.
        let lb = self
            .before("shield", protection_id)
            .unwrap_or_else(|| protection_id.to_string());
        let changes = vec![Change {
            field: "protection".into(),
            before: Some(protection_id.to_string()),
            after: None,
        }];
        self.record("shield", "DeleteProtection", &lb, changes);
        Ok(())
    }
}
