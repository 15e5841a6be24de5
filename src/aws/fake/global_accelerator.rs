//! Global Accelerator for the fake (moto does not serve it), built from AWS's API reference:
//! accelerators with their tags and idempotency tokens, listeners, endpoint groups and their
//! endpoints, each call with the errors AWS names for it (`AcceleratorNotFoundException`,
//! `AcceleratorNotDisabledException`, `AssociatedListenerFoundException`,
//! `AssociatedEndpointGroupFoundException`, `EndpointGroupAlreadyExistsException`,
//! `InvalidPortRangeException`, `LimitExceededException`, `AccessDeniedException` under
//! upstream's policy...). Every change leaves its accelerator `IN_PROGRESS` until the test
//! steps time ([`GaDeployment`]). The rules themselves are in `ga_rules`; the contract test
//! `tests/it/aws/contract_ga.rs` pins each call.

use async_trait::async_trait;

use super::ga_rules::{
    accelerator_not_found, authorize, authorize_create, authorize_tagging, check_ip_address_type,
    check_ip_addresses, check_name, check_overrides_against_listener, check_port_overrides,
    check_port_ranges, check_region, check_tags, describe_endpoints, err, group_not_found, invalid,
    limit, listener_not_found, new_accelerator, observe, set_ip_address_type, touch,
    DEFAULT_TRAFFIC_DIAL,
};
use super::ga_state::{AcceleratorRec, GaDeployment, GaGroupRec, GaLimits, GaListenerRec, GaState};
use super::state::{hex, State};
use super::FakeAws;
use crate::aws::error::Result;
use crate::aws::global_accelerator::{
    DescribedAccelerator, DescribedEndpointGroup, DescribedListener, GlobalAccelerator,
};
use crate::aws::types::{Service, Tags};
use crate::model::aga::{
    Accelerator, AgaListener, EndpointConfiguration, EndpointGroup, PortOverride,
};

const SVC: Service = Service::GlobalAccelerator;

// ---------------------------------------------------------------- test knobs and inspection

impl FakeAws {
    /// How `IN_PROGRESS` becomes `DEPLOYED` (default: only by [`Self::finish_ga_deployments`]).
    pub fn set_ga_deployment(&self, deployment: GaDeployment) {
        self.with_state(|st| st.ga.deployment = deployment)
    }

    /// Every accelerator's change has propagated: all `DEPLOYED`, disables complete.
    pub fn finish_ga_deployments(&self) {
        self.with_state(|st| {
            for r in st.ga.accelerators.values_mut() {
                r.finish_deployment();
            }
        })
    }

    pub fn set_ga_limits(&self, limits: GaLimits) {
        self.with_state(|st| st.ga.limits = limits)
    }

    /// Answer as upstream's `docs/install/aga_controller_iam_policy.json` lets the controller:
    /// creates must carry `elbv2.k8s.aws/cluster` and `aga.k8s.aws/resource=GlobalAccelerator`,
    /// describes and writes need them on the accelerator (AccessDeniedException otherwise).
    pub fn enforce_ga_iam_policy(&self, on: bool) {
        self.with_state(|st| st.ga.iam_policy = on)
    }

    /// Every accelerator with its tags, without a request.
    pub fn ga_accelerators(&self) -> Vec<(DescribedAccelerator, Tags)> {
        self.with_state(|st| {
            st.ga
                .accelerators
                .values()
                .map(|r| (r.acc.clone(), r.tags.clone()))
                .collect()
        })
    }

    /// The listeners of an accelerator, without a request.
    pub fn ga_listeners_of(&self, accelerator_arn: &str) -> Vec<DescribedListener> {
        self.with_state(|st| listeners_of(&st.ga, accelerator_arn))
    }

    /// The endpoint groups of a listener, without a request.
    pub fn ga_endpoint_groups_of(&self, listener_arn: &str) -> Vec<DescribedEndpointGroup> {
        self.with_state(|st| groups_of(&st.ga, listener_arn))
    }

    /// Puts tags on an accelerator as another tool would (`aws:cloudformation:*` included,
    /// which TagResource refuses).
    pub fn seed_ga_tags(&self, accelerator_arn: &str, tags: Tags) {
        self.with_state(|st| {
            if let Some(r) = st.ga.accelerators.get_mut(accelerator_arn) {
                r.tags.extend(tags);
            }
        })
    }

    /// Sets an endpoint group's port overrides without AWS's checks: a state an account can hold
    /// once its listeners changed outside the controller.
    pub fn seed_ga_port_overrides(&self, group_arn: &str, overrides: Vec<PortOverride>) {
        self.with_state(|st| {
            if let Some(g) = st.ga.groups.get_mut(group_arn) {
                g.group.port_overrides = overrides;
            }
        })
    }
}

fn listeners_of(ga: &GaState, accelerator_arn: &str) -> Vec<DescribedListener> {
    ga.listeners
        .values()
        .filter(|l| l.accelerator == accelerator_arn)
        .map(|l| l.listener.clone())
        .collect()
}

fn groups_of(ga: &GaState, listener_arn: &str) -> Vec<DescribedEndpointGroup> {
    ga.groups
        .values()
        .filter(|g| g.listener == listener_arn)
        .map(|g| g.group.clone())
        .collect()
}

/// An accelerator ARN, not a listener's or endpoint group's.
fn check_accelerator_arn(arn: &str) -> Result<()> {
    if !arn.starts_with("arn:aws:globalaccelerator::")
        || !arn.contains(":accelerator/")
        || arn.contains("/listener/")
    {
        return Err(invalid(format!("{arn} is not an accelerator ARN")));
    }
    Ok(())
}

/// UpdateAccelerator: the given fields changed; a change of any leaves it `IN_PROGRESS`, and
/// turning it off leaves it disabling until then.
fn update_accelerator_in(
    ga: &mut GaState,
    arn: &str,
    name: Option<&str>,
    ip_address_type: Option<&str>,
    enabled: Option<bool>,
) -> Result<DescribedAccelerator> {
    check_accelerator_arn(arn)?;
    authorize(ga, arn, "UpdateAccelerator")?;
    if let Some(n) = name {
        check_name(n)?;
    }
    if let Some(t) = ip_address_type {
        check_ip_address_type(t)?;
    }
    let Some(r) = ga.accelerators.get_mut(arn) else {
        return Err(accelerator_not_found(arn));
    };
    let mut changed = false;
    if let Some(n) = name.filter(|n| *n != r.acc.name) {
        r.acc.name = n.to_string();
        changed = true;
    }
    if let Some(t) = ip_address_type.filter(|t| *t != r.acc.ip_address_type) {
        set_ip_address_type(&mut r.acc, t);
        changed = true;
    }
    if let Some(e) = enabled.filter(|e| *e != r.acc.enabled) {
        r.acc.enabled = e;
        r.disabling = !e;
        changed = true;
    }
    if changed {
        touch(ga, arn);
    }
    Ok(ga.accelerators[arn].acc.clone())
}

/// The listener an endpoint group hangs on, its region and its accelerator.
fn group_context(ga: &GaState, arn: &str) -> Result<(String, String, String)> {
    let g = ga.groups.get(arn).ok_or_else(|| group_not_found(arn))?;
    let accelerator = ga
        .listeners
        .get(&g.listener)
        .map(|l| l.accelerator.clone())
        .unwrap_or_default();
    Ok((g.listener.clone(), g.group.region.clone(), accelerator))
}

/// UpdateEndpointGroup: what is given replaces what the group has (`traffic_dial` `None` and
/// the lists `None` leave them as they are; an empty list clears).
fn update_group_in(
    st: &mut State,
    arn: &str,
    traffic_dial: Option<f32>,
    overrides: Option<&[PortOverride]>,
    endpoints: Option<&[EndpointConfiguration]>,
) -> Result<DescribedEndpointGroup> {
    let (listener, region, accelerator) = group_context(&st.ga, arn)?;
    authorize(&st.ga, &accelerator, "UpdateEndpointGroup")?;
    if let Some(p) = traffic_dial {
        if !(0.0..=100.0).contains(&p) {
            return Err(invalid(format!(
                "TrafficDialPercentage {p} is out of 0-100"
            )));
        }
    }
    if let Some(o) = overrides {
        check_port_overrides(&st.ga, &listener, Some(arn), o)?;
    }
    let described = match endpoints {
        Some(e) if e.len() > st.ga.limits.endpoints_per_group => {
            return Err(limit("endpoints per endpoint group"))
        }
        Some(e) => Some(describe_endpoints(st, &region, e)?),
        None => None,
    };
    let Some(rec) = st.ga.groups.get_mut(arn) else {
        return Err(group_not_found(arn));
    };
    let before = rec.group.clone();
    if let Some(p) = traffic_dial {
        rec.group.traffic_dial_percentage = Some(p);
    }
    if let Some(o) = overrides {
        rec.group.port_overrides = o.to_vec();
    }
    if let Some(d) = described {
        rec.group.endpoints = d;
    }
    let after = rec.group.clone();
    if after != before {
        touch(&mut st.ga, &accelerator);
    }
    Ok(after)
}

// ---------------------------------------------------------------- the calls

#[async_trait]
impl GlobalAccelerator for FakeAws {
    async fn list_accelerators(&self) -> Result<Vec<DescribedAccelerator>> {
        self.run(SVC, "ListAccelerators", |st| {
            Ok(st.ga.accelerators.values().map(|r| r.acc.clone()).collect())
        })
        .await
    }

    async fn describe_accelerator(&self, arn: &str) -> Result<DescribedAccelerator> {
        self.run(SVC, "DescribeAccelerator", |st| {
            check_accelerator_arn(arn)?;
            authorize(&st.ga, arn, "DescribeAccelerator")?;
            if !st.ga.accelerators.contains_key(arn) {
                return Err(accelerator_not_found(arn));
            }
            observe(&mut st.ga, arn);
            Ok(st.ga.accelerators[arn].acc.clone())
        })
        .await
    }

    async fn create_accelerator(&self, accelerator: &Accelerator) -> Result<DescribedAccelerator> {
        self.run(SVC, "CreateAccelerator", |st| {
            let Accelerator {
                name,
                ip_addresses,
                ip_address_type,
                enabled,
                tags,
                crd_uid,
                existing_arn: _, // not part of the request
            } = accelerator;
            let account = st.account.clone();
            let ga = &mut st.ga;
            authorize_create(ga, tags)?;
            // The same token answers the accelerator it made, as long as that exists.
            if let Some(r) = ga
                .tokens
                .get(crd_uid.as_str())
                .and_then(|arn| ga.accelerators.get(arn))
            {
                return Ok(r.acc.clone());
            }
            check_name(name)?;
            check_ip_addresses(ip_addresses)?;
            check_ip_address_type(ip_address_type.as_str())?;
            check_tags(tags)?;
            if ga.accelerators.len() >= ga.limits.accelerators {
                return Err(limit("accelerators per account"));
            }
            let acc = new_accelerator(
                &account,
                name,
                ip_address_type.as_str(),
                ip_addresses,
                enabled.unwrap_or(true),
            );
            let arn = acc.arn.clone();
            ga.accelerators.insert(
                arn.clone(),
                AcceleratorRec {
                    acc,
                    tags: tags.clone(),
                    disabling: false,
                    describes: 0,
                },
            );
            if !crd_uid.is_empty() {
                ga.tokens.insert(crd_uid.clone(), arn.clone());
            }
            touch(ga, &arn);
            Ok(ga.accelerators[&arn].acc.clone())
        })
        .await
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
        // The request carries AWS's default (on) when the model leaves `enabled` out.
        let enabled = enabled.unwrap_or(true);
        self.run(SVC, "UpdateAccelerator", |st| {
            update_accelerator_in(
                &mut st.ga,
                arn,
                Some(name.as_str()),
                Some(ip_address_type.as_str()),
                Some(enabled),
            )
        })
        .await
    }

    async fn disable_accelerator(&self, arn: &str) -> Result<DescribedAccelerator> {
        self.run(SVC, "UpdateAccelerator", |st| {
            update_accelerator_in(&mut st.ga, arn, None, None, Some(false))
        })
        .await
    }

    async fn delete_accelerator(&self, arn: &str) -> Result<()> {
        self.run(SVC, "DeleteAccelerator", |st| {
            let ga = &mut st.ga;
            check_accelerator_arn(arn)?;
            authorize(ga, arn, "DeleteAccelerator")?;
            let Some(r) = ga.accelerators.get(arn) else {
                return Err(accelerator_not_found(arn));
            };
            if r.acc.enabled || r.disabling {
                return Err(err(
                    "AcceleratorNotDisabledException",
                    format!("The accelerator {arn} is not disabled yet: disable it and let the change deploy before deleting it"),
                ));
            }
            if ga.listeners.values().any(|l| l.accelerator == arn) {
                return Err(err(
                    "AssociatedListenerFoundException",
                    format!("The accelerator {arn} has a listener associated with it: remove its listeners before deleting it"),
                ));
            }
            ga.accelerators.remove(arn);
            ga.tokens.retain(|_, a| a.as_str() != arn);
            Ok(())
        })
        .await
    }

    async fn list_tags_for_resource(&self, arn: &str) -> Result<Tags> {
        self.run(SVC, "ListTagsForResource", |st| {
            st.ga
                .accelerators
                .get(arn)
                .map(|r| r.tags.clone())
                .ok_or_else(|| accelerator_not_found(arn))
        })
        .await
    }

    async fn tag_resource(&self, arn: &str, tags: &Tags) -> Result<()> {
        self.run(SVC, "TagResource", |st| {
            let ga = &mut st.ga;
            authorize_tagging(ga, arn, tags)?;
            check_tags(tags)?;
            let Some(r) = ga.accelerators.get_mut(arn) else {
                return Err(accelerator_not_found(arn));
            };
            let mut merged = r.tags.clone();
            merged.extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
            // The limit counts every tag; `aws:` ones others put there stay as they are.
            let own: Tags = merged
                .iter()
                .filter(|(k, _)| !k.starts_with("aws:"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            check_tags(&own)?;
            r.tags = merged;
            Ok(())
        })
        .await
    }

    async fn untag_resource(&self, arn: &str, keys: &[String]) -> Result<()> {
        self.run(SVC, "UntagResource", |st| {
            let ga = &mut st.ga;
            authorize(ga, arn, "UntagResource")?;
            let Some(r) = ga.accelerators.get_mut(arn) else {
                return Err(accelerator_not_found(arn));
            };
            for k in keys {
                r.tags.remove(k);
            }
            Ok(())
        })
        .await
    }

    async fn list_listeners(&self, accelerator_arn: &str) -> Result<Vec<DescribedListener>> {
        self.run(SVC, "ListListeners", |st| {
            check_accelerator_arn(accelerator_arn)?;
            if !st.ga.accelerators.contains_key(accelerator_arn) {
                return Err(accelerator_not_found(accelerator_arn));
            }
            Ok(listeners_of(&st.ga, accelerator_arn))
        })
        .await
    }

    async fn create_listener(
        &self,
        accelerator_arn: &str,
        listener: &AgaListener,
    ) -> Result<DescribedListener> {
        self.run(SVC, "CreateListener", |st| {
            let AgaListener {
                id: _,
                protocol,
                port_ranges,
                client_affinity,
                endpoint_groups: _, // CreateEndpointGroup
            } = listener;
            let ga = &mut st.ga;
            check_accelerator_arn(accelerator_arn)?;
            authorize(ga, accelerator_arn, "CreateListener")?;
            if !ga.accelerators.contains_key(accelerator_arn) {
                return Err(accelerator_not_found(accelerator_arn));
            }
            let count = ga
                .listeners
                .values()
                .filter(|l| l.accelerator == accelerator_arn)
                .count();
            if count >= ga.limits.listeners_per_accelerator {
                return Err(limit("listeners per accelerator"));
            }
            check_port_ranges(ga, accelerator_arn, None, protocol.as_str(), port_ranges)?;
            check_overrides_against_listener(ga, accelerator_arn, None, port_ranges)?;
            let arn = format!("{accelerator_arn}/listener/{}", hex(8));
            let described = DescribedListener {
                arn: arn.clone(),
                protocol: protocol.as_str().to_string(),
                port_ranges: port_ranges.clone(),
                // AWS's default when the request leaves it out.
                client_affinity: client_affinity.map_or("NONE", |c| c.as_str()).to_string(),
            };
            ga.listeners.insert(
                arn,
                GaListenerRec {
                    accelerator: accelerator_arn.to_string(),
                    listener: described.clone(),
                },
            );
            touch(ga, accelerator_arn);
            Ok(described)
        })
        .await
    }

    async fn update_listener(
        &self,
        arn: &str,
        listener: &AgaListener,
    ) -> Result<DescribedListener> {
        self.run(SVC, "UpdateListener", |st| {
            let AgaListener {
                id: _,
                protocol,
                port_ranges,
                client_affinity,
                endpoint_groups: _,
            } = listener;
            let ga = &mut st.ga;
            let accelerator = match ga.listeners.get(arn) {
                Some(l) => l.accelerator.clone(),
                None => return Err(listener_not_found(arn)),
            };
            authorize(ga, &accelerator, "UpdateListener")?;
            check_port_ranges(ga, &accelerator, Some(arn), protocol.as_str(), port_ranges)?;
            check_overrides_against_listener(ga, &accelerator, Some(arn), port_ranges)?;
            let Some(rec) = ga.listeners.get_mut(arn) else {
                return Err(listener_not_found(arn));
            };
            let before = rec.listener.clone();
            rec.listener.protocol = protocol.as_str().to_string();
            rec.listener.port_ranges = port_ranges.clone();
            if let Some(c) = client_affinity {
                rec.listener.client_affinity = c.as_str().to_string();
            }
            let after = rec.listener.clone();
            if after != before {
                touch(ga, &accelerator);
            }
            Ok(after)
        })
        .await
    }

    async fn delete_listener(&self, arn: &str) -> Result<()> {
        self.run(SVC, "DeleteListener", |st| {
            let ga = &mut st.ga;
            let accelerator = match ga.listeners.get(arn) {
                Some(l) => l.accelerator.clone(),
                None => return Err(listener_not_found(arn)),
            };
            authorize(ga, &accelerator, "DeleteListener")?;
            if ga.groups.values().any(|g| g.listener == arn) {
                return Err(err(
                    "AssociatedEndpointGroupFoundException",
                    format!("The listener {arn} has an endpoint group associated with it: remove its endpoint groups before deleting it"),
                ));
            }
            ga.listeners.remove(arn);
            touch(ga, &accelerator);
            Ok(())
        })
        .await
    }

    async fn list_endpoint_groups(
        &self,
        listener_arn: &str,
    ) -> Result<Vec<DescribedEndpointGroup>> {
        self.run(SVC, "ListEndpointGroups", |st| {
            if !st.ga.listeners.contains_key(listener_arn) {
                return Err(listener_not_found(listener_arn));
            }
            Ok(groups_of(&st.ga, listener_arn))
        })
        .await
    }

    async fn create_endpoint_group(
        &self,
        listener_arn: &str,
        group: &EndpointGroup,
    ) -> Result<DescribedEndpointGroup> {
        self.run(SVC, "CreateEndpointGroup", |st| {
            let EndpointGroup {
                id: _,
                region,
                traffic_dial_percentage,
                port_overrides,
                endpoint_configurations,
            } = group;
            let accelerator = match st.ga.listeners.get(listener_arn) {
                Some(l) => l.accelerator.clone(),
                None => return Err(listener_not_found(listener_arn)),
            };
            authorize(&st.ga, &accelerator, "CreateEndpointGroup")?;
            check_region(region)?;
            let taken = st
                .ga
                .groups
                .values()
                .any(|g| g.listener == listener_arn && g.group.region == *region);
            if taken {
                return Err(err(
                    "EndpointGroupAlreadyExistsException",
                    format!(
                        "The listener {listener_arn} already has an endpoint group in {region}"
                    ),
                ));
            }
            if let Some(p) = traffic_dial_percentage {
                if !(0..=100).contains(p) {
                    return Err(invalid(format!(
                        "TrafficDialPercentage {p} is out of 0-100"
                    )));
                }
            }
            check_port_overrides(&st.ga, listener_arn, None, port_overrides)?;
            if endpoint_configurations.len() > st.ga.limits.endpoints_per_group {
                return Err(limit("endpoints per endpoint group"));
            }
            let endpoints = describe_endpoints(st, region, endpoint_configurations)?;
            let arn = format!("{listener_arn}/endpoint-group/{}", hex(12));
            let described = DescribedEndpointGroup {
                arn: arn.clone(),
                region: region.clone(),
                traffic_dial_percentage: Some(
                    traffic_dial_percentage.map_or(DEFAULT_TRAFFIC_DIAL, |p| p as f32),
                ),
                port_overrides: port_overrides.clone(),
                endpoints,
            };
            st.ga.groups.insert(
                arn,
                GaGroupRec {
                    listener: listener_arn.to_string(),
                    group: described.clone(),
                },
            );
            touch(&mut st.ga, &accelerator);
            Ok(described)
        })
        .await
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
        let dial = traffic_dial_percentage.map(|p| p as f32);
        self.run(SVC, "UpdateEndpointGroup", |st| {
            update_group_in(st, arn, dial, Some(port_overrides.as_slice()), None)
        })
        .await
    }

    async fn set_port_overrides(
        &self,
        arn: &str,
        overrides: &[PortOverride],
    ) -> Result<DescribedEndpointGroup> {
        self.run(SVC, "UpdateEndpointGroup", |st| {
            update_group_in(st, arn, None, Some(overrides), None)
        })
        .await
    }

    async fn set_endpoints(
        &self,
        arn: &str,
        endpoints: &[EndpointConfiguration],
    ) -> Result<DescribedEndpointGroup> {
        self.run(SVC, "UpdateEndpointGroup", |st| {
            update_group_in(st, arn, None, None, Some(endpoints))
        })
        .await
    }

    async fn add_endpoints(&self, arn: &str, endpoints: &[EndpointConfiguration]) -> Result<()> {
        self.run(SVC, "AddEndpoints", |st| {
            let (_, region, accelerator) = group_context(&st.ga, arn)?;
            authorize(&st.ga, &accelerator, "AddEndpoints")?;
            let added = describe_endpoints(st, &region, endpoints)?;
            let limit_n = st.ga.limits.endpoints_per_group;
            let Some(rec) = st.ga.groups.get_mut(arn) else {
                return Err(group_not_found(arn));
            };
            // An endpoint already there takes the new settings.
            let mut merged = rec.group.endpoints.clone();
            for e in added {
                match merged.iter().position(|m| m.endpoint_id == e.endpoint_id) {
                    Some(i) => merged[i] = e,
                    None => merged.push(e),
                }
            }
            if merged.len() > limit_n {
                return Err(limit("endpoints per endpoint group"));
            }
            rec.group.endpoints = merged;
            touch(&mut st.ga, &accelerator);
            Ok(())
        })
        .await
    }

    async fn remove_endpoints(&self, arn: &str, endpoint_ids: &[String]) -> Result<()> {
        self.run(SVC, "RemoveEndpoints", |st| {
            let (_, _, accelerator) = group_context(&st.ga, arn)?;
            authorize(&st.ga, &accelerator, "RemoveEndpoints")?;
            let Some(rec) = st.ga.groups.get_mut(arn) else {
                return Err(group_not_found(arn));
            };
            if let Some(missing) = endpoint_ids
                .iter()
                .find(|id| !rec.group.endpoints.iter().any(|e| &e.endpoint_id == *id))
            {
                return Err(err(
                    "EndpointNotFoundException",
                    format!("The endpoint {missing} is not in endpoint group {arn}"),
                ));
            }
            rec.group
                .endpoints
                .retain(|e| !endpoint_ids.contains(&e.endpoint_id));
            touch(&mut st.ga, &accelerator);
            Ok(())
        })
        .await
    }

    async fn delete_endpoint_group(&self, arn: &str) -> Result<()> {
        self.run(SVC, "DeleteEndpointGroup", |st| {
            let (_, _, accelerator) = group_context(&st.ga, arn)?;
            authorize(&st.ga, &accelerator, "DeleteEndpointGroup")?;
            st.ga.groups.remove(arn);
            touch(&mut st.ga, &accelerator);
            Ok(())
        })
        .await
    }
}
