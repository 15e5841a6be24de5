//! Global Accelerator through the recorder: reads forwarded to the real client (what sits under
//! a placeholder answered from what was recorded), every write recorded with its field changes
//! and answered as AWS would, never sent. A dry run of the accelerator deployer thus walks its
//! whole chain: a pretended accelerator gets pretended listeners and endpoint groups.

use std::sync::MutexGuard;

use async_trait::async_trait;

use super::*;
use crate::aws::global_accelerator::STATUS_IN_PROGRESS;
use crate::model::aga::{
    Accelerator, AgaListener, EndpointConfiguration, EndpointGroup, PortOverride, PortRange,
};

/// The real Global Accelerator client behind the recorder and what its reads returned (and
/// the recorded writes made of it), by ARN.
#[derive(Default)]
pub(super) struct GaSide {
    inner: Option<Arc<dyn GlobalAccelerator>>,
    seen: Mutex<GaSeen>,
}

#[derive(Default)]
struct GaSeen {
    accelerators: BTreeMap<String, DescribedAccelerator>,
    tags: BTreeMap<String, Tags>,
    listeners: BTreeMap<String, DescribedListener>,
    groups: BTreeMap<String, DescribedEndpointGroup>,
    /// Accelerator (listener) ARN → the listeners (endpoint groups) pretended under it.
    pretended: BTreeMap<String, Vec<String>>,
}

const SERVICE: &str = "globalaccelerator";

fn ranges_text(ranges: &[PortRange]) -> String {
    ranges
        .iter()
        .map(|r| format!("{}-{}", r.from_port, r.to_port))
        .collect::<Vec<_>>()
        .join(",")
}

fn overrides_text(overrides: &[PortOverride]) -> String {
    overrides
        .iter()
        .map(|o| format!("{}:{}", o.listener_port, o.endpoint_port))
        .collect::<Vec<_>>()
        .join(",")
}

fn endpoint_text(weight: Option<i32>, client_ip: Option<bool>) -> String {
    let show = |v: Option<String>| v.unwrap_or_else(|| "default".into());
    format!(
        "weight={} clientIPPreservation={}",
        show(weight.map(|w| w.to_string())),
        show(client_ip.map(|c| c.to_string()))
    )
}

fn endpoints_text(endpoints: &[EndpointDescription]) -> String {
    endpoints
        .iter()
        .map(|e| e.endpoint_id.clone())
        .collect::<Vec<_>>()
        .join(",")
}

fn described(endpoints: &[EndpointConfiguration]) -> Vec<EndpointDescription> {
    endpoints
        .iter()
        .map(|e| EndpointDescription {
            endpoint_id: e.endpoint_id.clone(),
            weight: e.weight,
            client_ip_preservation_enabled: e.client_ip_preservation_enabled,
            health_state: None,
        })
        .collect()
}

fn missing(code: &str, arn: &str) -> AwsError {
    AwsError::from_code(code, format!("{arn} was never recorded"), Some(400))
}

impl Recorder {
    /// The real Global Accelerator client reads go to.
    pub fn with_global_accelerator(mut self, inner: Arc<dyn GlobalAccelerator>) -> Self {
        self.ga.inner = Some(inner);
        self
    }

    fn ga_client(&self) -> Result<&Arc<dyn GlobalAccelerator>> {
        self.ga.inner.as_ref().ok_or_else(|| {
            AwsError::Config("no Global Accelerator client behind the recorder".into())
        })
    }

    fn ga_seen(&self) -> MutexGuard<'_, GaSeen> {
        self.ga.seen.lock().unwrap()
    }

    fn ga_write(&self, call: &str, resource: &str, changes: Vec<Change>) {
        self.record(SERVICE, call, resource, changes)
    }

    /// An endpoint group as the recorder last knew it, after `apply`; the changes between.
    fn ga_group_write(
        &self,
        arn: &str,
        apply: impl FnOnce(&mut DescribedEndpointGroup),
    ) -> (DescribedEndpointGroup, Vec<Change>) {
        let mut s = self.ga_seen();
        let before = s.groups.get(arn).cloned();
        let mut after = before.clone().unwrap_or_else(|| DescribedEndpointGroup {
            arn: arn.to_string(),
            ..Default::default()
        });
        apply(&mut after);
        s.groups.insert(arn.to_string(), after.clone());
        drop(s);
        let b = before.as_ref();
        let changes = [
            change(
                "trafficDialPercentage",
                b.and_then(|g| g.traffic_dial_percentage)
                    .map(|p| p.to_string()),
                after.traffic_dial_percentage.map(|p| p.to_string()),
            ),
            change(
                "portOverrides",
                b.map(|g| overrides_text(&g.port_overrides)),
                Some(overrides_text(&after.port_overrides)),
            ),
            change(
                "endpoints",
                b.map(|g| endpoints_text(&g.endpoints)),
                Some(endpoints_text(&after.endpoints)),
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        (after, changes)
    }
}

#[async_trait]
impl GlobalAccelerator for Recorder {
    async fn list_accelerators(&self) -> Result<Vec<DescribedAccelerator>> {
        let mut out = self.ga_client()?.list_accelerators().await?;
        let mut s = self.ga_seen();
        for a in &out {
            s.accelerators.insert(a.arn.clone(), a.clone());
        }
        out.extend(
            s.accelerators
                .values()
                .filter(|a| is_placeholder(&a.arn))
                .cloned(),
        );
        Ok(out)
    }

    async fn describe_accelerator(&self, arn: &str) -> Result<DescribedAccelerator> {
        if is_placeholder(arn) {
            return self
                .ga_seen()
                .accelerators
                .get(arn)
                .cloned()
                .ok_or_else(|| missing("AcceleratorNotFoundException", arn));
        }
        let a = self.ga_client()?.describe_accelerator(arn).await?;
        self.ga_seen().accelerators.insert(a.arn.clone(), a.clone());
        Ok(a)
    }

    async fn create_accelerator(&self, accelerator: &Accelerator) -> Result<DescribedAccelerator> {
        let Accelerator {
            name,
            ip_addresses,
            ip_address_type,
            enabled,
            tags,
            crd_uid: _,      // the idempotency token: nothing to show
            existing_arn: _, // not part of the request
        } = accelerator;
        let arn = self.placeholder("arn:aws:globalaccelerator::accelerator/");
        let enabled = enabled.unwrap_or(true);
        let changes = created(&[
            ("name", name),
            ("ipAddressType", &ip_address_type.as_str()),
            ("enabled", &enabled),
            ("ipAddresses", ip_addresses),
            ("tags", &tags.iter().collect::<Vec<_>>()),
        ]);
        self.ga_write("CreateAccelerator", &arn, changes);
        let a = DescribedAccelerator {
            arn: arn.clone(),
            name: name.clone(),
            ip_address_type: ip_address_type.as_str().to_string(),
            enabled,
            ip_sets: vec![],
            dns_name: format!("{name}.pending"),
            dual_stack_dns_name: None,
            status: STATUS_IN_PROGRESS.to_string(),
        };
        let mut s = self.ga_seen();
        s.accelerators.insert(arn.clone(), a.clone());
        s.tags.insert(arn, tags.clone());
        Ok(a)
    }

    async fn update_accelerator(
        &self,
        arn: &str,
        accelerator: &Accelerator,
    ) -> Result<DescribedAccelerator> {
        let Accelerator {
            name,
            ip_addresses: _, // creation only
            ip_address_type,
            enabled,
            tags: _, // TagResource
            crd_uid: _,
            existing_arn: _,
        } = accelerator;
        let mut s = self.ga_seen();
        let before = s.accelerators.get(arn).cloned();
        let mut after = before.clone().unwrap_or_else(|| DescribedAccelerator {
            arn: arn.to_string(),
            ..Default::default()
        });
        after.name = name.clone();
        after.ip_address_type = ip_address_type.as_str().to_string();
        after.enabled = enabled.unwrap_or(true);
        after.status = STATUS_IN_PROGRESS.to_string();
        s.accelerators.insert(arn.to_string(), after.clone());
        drop(s);
        let b = before.as_ref();
        let changes = [
            change("name", b.map(|a| a.name.clone()), Some(after.name.clone())),
            change(
                "ipAddressType",
                b.map(|a| a.ip_address_type.clone()),
                Some(after.ip_address_type.clone()),
            ),
            change(
                "enabled",
                b.map(|a| a.enabled.to_string()),
                Some(after.enabled.to_string()),
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        self.ga_write("UpdateAccelerator", arn, changes);
        Ok(after)
    }

    async fn disable_accelerator(&self, arn: &str) -> Result<DescribedAccelerator> {
        let mut s = self.ga_seen();
        let before = s.accelerators.get(arn).map(|a| a.enabled);
        let after = s
            .accelerators
            .entry(arn.to_string())
            .or_insert_with(|| DescribedAccelerator {
                arn: arn.to_string(),
                ..Default::default()
            });
        after.enabled = false;
        after.status = STATUS_IN_PROGRESS.to_string();
        let after = after.clone();
        drop(s);
        let changes = change(
            "enabled",
            before.map(|e| e.to_string()),
            Some("false".into()),
        )
        .into_iter()
        .collect();
        self.ga_write("UpdateAccelerator", arn, changes);
        Ok(after)
    }

    async fn delete_accelerator(&self, arn: &str) -> Result<()> {
        self.ga_write("DeleteAccelerator", arn, vec![]);
        Ok(())
    }

    async fn list_tags_for_resource(&self, arn: &str) -> Result<Tags> {
        if is_placeholder(arn) {
            return Ok(self.ga_seen().tags.get(arn).cloned().unwrap_or_default());
        }
        let t = self.ga_client()?.list_tags_for_resource(arn).await?;
        self.ga_seen().tags.insert(arn.to_string(), t.clone());
        Ok(t)
    }

    async fn tag_resource(&self, arn: &str, tags: &Tags) -> Result<()> {
        let mut s = self.ga_seen();
        let current = s.tags.entry(arn.to_string()).or_default();
        let changes = tags
            .iter()
            .filter_map(|(k, v)| change(k, current.get(k).cloned(), Some(v.clone())))
            .collect();
        current.extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
        drop(s);
        self.ga_write("TagResource", arn, changes);
        Ok(())
    }

    async fn untag_resource(&self, arn: &str, keys: &[String]) -> Result<()> {
        let mut s = self.ga_seen();
        let current = s.tags.entry(arn.to_string()).or_default();
        let changes = keys
            .iter()
            .map(|k| Change {
                field: k.clone(),
                before: current.remove(k),
                after: None,
            })
            .collect();
        drop(s);
        self.ga_write("UntagResource", arn, changes);
        Ok(())
    }

    async fn list_listeners(&self, accelerator_arn: &str) -> Result<Vec<DescribedListener>> {
        let mut out = if is_placeholder(accelerator_arn) {
            vec![]
        } else {
            self.ga_client()?.list_listeners(accelerator_arn).await?
        };
        let mut s = self.ga_seen();
        for l in &out {
            s.listeners.insert(l.arn.clone(), l.clone());
        }
        let pretended = s
            .pretended
            .get(accelerator_arn)
            .cloned()
            .unwrap_or_default();
        out.extend(pretended.iter().filter_map(|a| s.listeners.get(a).cloned()));
        Ok(out)
    }

    async fn create_listener(
        &self,
        accelerator_arn: &str,
        listener: &AgaListener,
    ) -> Result<DescribedListener> {
        let AgaListener {
            id: _,
            protocol,
            port_ranges,
            client_affinity,
            endpoint_groups: _, // their own calls
        } = listener;
        let arn = self.placeholder(&format!("{accelerator_arn}/listener/"));
        let affinity = client_affinity.map_or("NONE", |c| c.as_str());
        let changes = created(&[
            ("protocol", &protocol.as_str()),
            ("portRanges", &ranges_text(port_ranges)),
            ("clientAffinity", &affinity),
        ]);
        self.ga_write("CreateListener", &arn, changes);
        let l = DescribedListener {
            arn: arn.clone(),
            protocol: protocol.as_str().to_string(),
            port_ranges: port_ranges.clone(),
            client_affinity: affinity.to_string(),
        };
        let mut s = self.ga_seen();
        s.listeners.insert(arn.clone(), l.clone());
        s.pretended
            .entry(accelerator_arn.to_string())
            .or_default()
            .push(arn);
        Ok(l)
    }

    async fn update_listener(
        &self,
        arn: &str,
        listener: &AgaListener,
    ) -> Result<DescribedListener> {
        let AgaListener {
            id: _,
            protocol,
            port_ranges,
            client_affinity,
            endpoint_groups: _,
        } = listener;
        let mut s = self.ga_seen();
        let before = s.listeners.get(arn).cloned();
        let mut after = before.clone().unwrap_or_else(|| DescribedListener {
            arn: arn.to_string(),
            ..Default::default()
        });
        after.protocol = protocol.as_str().to_string();
        after.port_ranges = port_ranges.clone();
        if let Some(c) = client_affinity {
            after.client_affinity = c.as_str().to_string();
        }
        s.listeners.insert(arn.to_string(), after.clone());
        drop(s);
        let b = before.as_ref();
        let changes = [
            change(
                "protocol",
                b.map(|l| l.protocol.clone()),
                Some(after.protocol.clone()),
            ),
            change(
                "portRanges",
                b.map(|l| ranges_text(&l.port_ranges)),
                Some(ranges_text(&after.port_ranges)),
            ),
            change(
                "clientAffinity",
                b.map(|l| l.client_affinity.clone()),
                Some(after.client_affinity.clone()),
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        self.ga_write("UpdateListener", arn, changes);
        Ok(after)
    }

    async fn delete_listener(&self, arn: &str) -> Result<()> {
        self.ga_write("DeleteListener", arn, vec![]);
        Ok(())
    }

    async fn list_endpoint_groups(
        &self,
        listener_arn: &str,
    ) -> Result<Vec<DescribedEndpointGroup>> {
        let mut out = if is_placeholder(listener_arn) {
            vec![]
        } else {
            self.ga_client()?.list_endpoint_groups(listener_arn).await?
        };
        let mut s = self.ga_seen();
        for g in &out {
            s.groups.insert(g.arn.clone(), g.clone());
        }
        let pretended = s.pretended.get(listener_arn).cloned().unwrap_or_default();
        out.extend(pretended.iter().filter_map(|a| s.groups.get(a).cloned()));
        Ok(out)
    }

    async fn create_endpoint_group(
        &self,
        listener_arn: &str,
        group: &EndpointGroup,
    ) -> Result<DescribedEndpointGroup> {
        let EndpointGroup {
            id: _,
            region,
            traffic_dial_percentage,
            port_overrides,
            endpoint_configurations,
        } = group;
        let arn = self.placeholder(&format!("{listener_arn}/endpoint-group/"));
        let endpoints = described(endpoint_configurations);
        let changes = created(&[
            ("region", region),
            ("trafficDialPercentage", traffic_dial_percentage),
            ("portOverrides", &overrides_text(port_overrides)),
            ("endpoints", &endpoints_text(&endpoints)),
        ]);
        self.ga_write("CreateEndpointGroup", &arn, changes);
        let g = DescribedEndpointGroup {
            arn: arn.clone(),
            region: region.clone(),
            traffic_dial_percentage: traffic_dial_percentage.map(|p| p as f32),
            port_overrides: port_overrides.clone(),
            endpoints,
        };
        let mut s = self.ga_seen();
        s.groups.insert(arn.clone(), g.clone());
        s.pretended
            .entry(listener_arn.to_string())
            .or_default()
            .push(arn);
        Ok(g)
    }

    async fn update_endpoint_group(
        &self,
        arn: &str,
        group: &EndpointGroup,
    ) -> Result<DescribedEndpointGroup> {
        let EndpointGroup {
            id: _,
            region: _, // fixed at creation
            traffic_dial_percentage,
            port_overrides,
            endpoint_configurations: _, // not part of this request
        } = group;
        let (after, changes) = self.ga_group_write(arn, |g| {
            if let Some(p) = traffic_dial_percentage {
                g.traffic_dial_percentage = Some(*p as f32);
            }
            g.port_overrides = port_overrides.clone();
        });
        self.ga_write("UpdateEndpointGroup", arn, changes);
        Ok(after)
    }

    async fn set_port_overrides(
        &self,
        arn: &str,
        overrides: &[PortOverride],
    ) -> Result<DescribedEndpointGroup> {
        let (after, changes) = self.ga_group_write(arn, |g| g.port_overrides = overrides.to_vec());
        self.ga_write("UpdateEndpointGroup", arn, changes);
        Ok(after)
    }

    async fn set_endpoints(
        &self,
        arn: &str,
        endpoints: &[EndpointConfiguration],
    ) -> Result<DescribedEndpointGroup> {
        let (after, mut changes) = self.ga_group_write(arn, |g| g.endpoints = described(endpoints));
        changes.extend(endpoints.iter().map(|e| Change {
            field: format!("endpoint {}", e.endpoint_id),
            before: None,
            after: Some(endpoint_text(e.weight, e.client_ip_preservation_enabled)),
        }));
        self.ga_write("UpdateEndpointGroup", arn, changes);
        Ok(after)
    }

    async fn add_endpoints(&self, arn: &str, endpoints: &[EndpointConfiguration]) -> Result<()> {
        let (_, _) = self.ga_group_write(arn, |g| {
            for e in described(endpoints) {
                g.endpoints.retain(|x| x.endpoint_id != e.endpoint_id);
                g.endpoints.push(e);
            }
        });
        let changes = endpoints
            .iter()
            .map(|e| Change {
                field: format!("endpoint {}", e.endpoint_id),
                before: None,
                after: Some(endpoint_text(e.weight, e.client_ip_preservation_enabled)),
            })
            .collect();
        self.ga_write("AddEndpoints", arn, changes);
        Ok(())
    }

    async fn remove_endpoints(&self, arn: &str, endpoint_ids: &[String]) -> Result<()> {
        let (_, _) = self.ga_group_write(arn, |g| {
            g.endpoints
                .retain(|e| !endpoint_ids.contains(&e.endpoint_id))
        });
        let changes = endpoint_ids
            .iter()
            .map(|id| Change {
                field: format!("endpoint {id}"),
                before: Some("present".into()),
                after: None,
            })
            .collect();
        self.ga_write("RemoveEndpoints", arn, changes);
        Ok(())
    }

    async fn delete_endpoint_group(&self, arn: &str) -> Result<()> {
        self.ga_write("DeleteEndpointGroup", arn, vec![]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aws::fake::FakeAws;
    use crate::model::aga::{AgaIpAddressType, AgaProtocol};

    fn recorder(fake: &Arc<FakeAws>) -> Recorder {
        Recorder::new(fake.clone(), fake.clone()).with_global_accelerator(fake.clone())
    }

    fn accelerator() -> Accelerator {
        Accelerator {
            name: "k8s_ns_web".into(),
            ip_addresses: vec![],
            ip_address_type: AgaIpAddressType::Ipv4,
            enabled: Some(true),
            tags: Tags::from([("elbv2.k8s.aws/cluster".to_string(), "c".to_string())]),
            crd_uid: "uid".into(),
            existing_arn: None,
        }
    }

    fn listener() -> AgaListener {
        AgaListener {
            id: "l".into(),
            protocol: AgaProtocol::Tcp,
            port_ranges: vec![PortRange {
                from_port: 80,
                to_port: 80,
            }],
            client_affinity: None,
            endpoint_groups: vec![],
        }
    }

    /// A pretended accelerator carries pretended listeners and endpoint groups, every write is
    /// recorded, and none reaches AWS.
    #[tokio::test]
    async fn writes_are_recorded_and_never_sent() {
        let fake = Arc::new(FakeAws::new());
        let rec = recorder(&fake);
        let r: &dyn GlobalAccelerator = &rec;
        let acc = r.create_accelerator(&accelerator()).await.unwrap();
        assert!(is_placeholder(&acc.arn), "{}", acc.arn);
        let l = r.create_listener(&acc.arn, &listener()).await.unwrap();
        assert!(is_placeholder(&l.arn));
        assert_eq!(r.list_listeners(&acc.arn).await.unwrap(), vec![l.clone()]);
        let g = EndpointGroup {
            id: "g".into(),
            region: "us-west-2".into(),
            traffic_dial_percentage: Some(100),
            port_overrides: vec![],
            endpoint_configurations: vec![],
        };
        let eg = r.create_endpoint_group(&l.arn, &g).await.unwrap();
        assert_eq!(r.list_endpoint_groups(&l.arn).await.unwrap().len(), 1);
        r.disable_accelerator(&acc.arn).await.unwrap();
        r.delete_endpoint_group(&eg.arn).await.unwrap();
        assert!(!r.describe_accelerator(&acc.arn).await.unwrap().enabled);

        assert!(fake.ga_accelerators().is_empty(), "nothing reached AWS");
        assert!(fake.write_calls().is_empty(), "{:?}", fake.write_calls());
        let calls: Vec<String> = rec.take().into_iter().map(|w| w.call).collect();
        assert_eq!(
            calls,
            vec![
                "globalaccelerator:CreateAccelerator",
                "globalaccelerator:CreateListener",
                "globalaccelerator:CreateEndpointGroup",
                "globalaccelerator:UpdateAccelerator",
                "globalaccelerator:DeleteEndpointGroup",
            ]
        );
    }

    /// Reads of real resources reach AWS; an update is recorded with its before → after.
    #[tokio::test]
    async fn updates_show_what_changes() {
        let fake = Arc::new(FakeAws::new());
        let aws: &dyn GlobalAccelerator = fake.as_ref();
        let real = aws.create_accelerator(&accelerator()).await.unwrap();
        let rec = recorder(&fake);
        let r: &dyn GlobalAccelerator = &rec;
        assert_eq!(r.list_accelerators().await.unwrap().len(), 1);
        let mut want = accelerator();
        want.name = "renamed".into();
        r.update_accelerator(&real.arn, &want).await.unwrap();
        let writes = rec.take();
        assert_eq!(writes.len(), 1);
        assert_eq!(writes[0].resource, real.arn);
        assert_eq!(
            writes[0].changes,
            vec![Change {
                field: "name".into(),
                before: Some("k8s_ns_web".into()),
                after: Some("renamed".into()),
            }]
        );
        assert_eq!(fake.ga_accelerators()[0].0.name, "k8s_ns_web", "not sent");
    }

    #[test]
    fn kinds_of_global_accelerator_arns() {
        let acc = "arn:aws:globalaccelerator::123456789012:accelerator/abcd";
        assert_eq!(crate::aws::shadow::aws_kind(acc), "GlobalAccelerator");
        assert_eq!(
            crate::aws::shadow::aws_kind(&format!("{acc}/listener/0123abcd")),
            "GlobalAcceleratorListener"
        );
        assert_eq!(
            crate::aws::shadow::aws_kind(&format!("{acc}/listener/0123abcd/endpoint-group/ab")),
            "GlobalAcceleratorEndpointGroup"
        );
    }
}
