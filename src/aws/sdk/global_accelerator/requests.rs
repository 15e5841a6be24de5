//! The Global Accelerator write requests, each built by one pure function from the model value
//! the deployer hands over (no client, no network), taking its model struct apart without `..`:
//! a field added to the model does not compile here until it is sent or named as sent elsewhere.
//! The tests replay upstream's `buildSDK*Input` tables (accelerator_manager_test.go,
//! listener_manager_test.go, endpoint_group_manager_test.go) on the built inputs.

use aws_sdk_globalaccelerator::operation::add_endpoints::builders::AddEndpointsInputBuilder;
use aws_sdk_globalaccelerator::operation::add_endpoints::AddEndpointsInput;
use aws_sdk_globalaccelerator::operation::create_accelerator::builders::CreateAcceleratorInputBuilder;
use aws_sdk_globalaccelerator::operation::create_accelerator::CreateAcceleratorInput;
use aws_sdk_globalaccelerator::operation::create_endpoint_group::builders::CreateEndpointGroupInputBuilder;
use aws_sdk_globalaccelerator::operation::create_endpoint_group::CreateEndpointGroupInput;
use aws_sdk_globalaccelerator::operation::create_listener::builders::CreateListenerInputBuilder;
use aws_sdk_globalaccelerator::operation::create_listener::CreateListenerInput;
use aws_sdk_globalaccelerator::operation::remove_endpoints::builders::RemoveEndpointsInputBuilder;
use aws_sdk_globalaccelerator::operation::remove_endpoints::RemoveEndpointsInput;
use aws_sdk_globalaccelerator::operation::tag_resource::builders::TagResourceInputBuilder;
use aws_sdk_globalaccelerator::operation::tag_resource::TagResourceInput;
use aws_sdk_globalaccelerator::operation::update_accelerator::builders::UpdateAcceleratorInputBuilder;
use aws_sdk_globalaccelerator::operation::update_accelerator::UpdateAcceleratorInput;
use aws_sdk_globalaccelerator::operation::update_endpoint_group::builders::UpdateEndpointGroupInputBuilder;
use aws_sdk_globalaccelerator::operation::update_endpoint_group::UpdateEndpointGroupInput;
use aws_sdk_globalaccelerator::operation::update_listener::builders::UpdateListenerInputBuilder;
use aws_sdk_globalaccelerator::operation::update_listener::UpdateListenerInput;
use aws_sdk_globalaccelerator::types as gt;

use crate::aws::error::{AwsError, Result};
use crate::aws::sdk::non_empty;
use crate::aws::types::Tags;
use crate::model::aga::{
    Accelerator, AgaListener, EndpointConfiguration, EndpointGroup, PortOverride, PortRange,
};

/// A request the SDK refuses to build (a required member missing): our bug, never retried.
fn construction(e: impl std::fmt::Display) -> AwsError {
    AwsError::Validation {
        code: "ConstructionFailure".into(),
        message: e.to_string(),
    }
}

/// Tags in AWS's shape, sorted by key as upstream sends them; `None` for no tags.
pub(super) fn tags_to(tags: &Tags) -> Result<Option<Vec<gt::Tag>>> {
    if tags.is_empty() {
        return Ok(None);
    }
    tags.iter()
        .map(|(k, v)| {
            gt::Tag::builder()
                .key(k)
                .value(v)
                .build()
                .map_err(construction)
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

pub(super) fn port_ranges_to(ranges: &[PortRange]) -> Vec<gt::PortRange> {
    ranges
        .iter()
        .map(|r| {
            let PortRange { from_port, to_port } = r;
            gt::PortRange::builder()
                .from_port(*from_port)
                .to_port(*to_port)
                .build()
        })
        .collect()
}

pub(super) fn port_overrides_to(overrides: &[PortOverride]) -> Vec<gt::PortOverride> {
    overrides
        .iter()
        .map(|o| {
            let PortOverride {
                listener_port,
                endpoint_port,
            } = o;
            gt::PortOverride::builder()
                .listener_port(*listener_port)
                .endpoint_port(*endpoint_port)
                .build()
        })
        .collect()
}

pub(super) fn endpoints_to(endpoints: &[EndpointConfiguration]) -> Vec<gt::EndpointConfiguration> {
    endpoints
        .iter()
        .map(|e| {
            let EndpointConfiguration {
                endpoint_id,
                weight,
                client_ip_preservation_enabled,
            } = e;
            gt::EndpointConfiguration::builder()
                .endpoint_id(endpoint_id)
                .set_weight(*weight)
                .set_client_ip_preservation_enabled(*client_ip_preservation_enabled)
                .build()
        })
        .collect()
}

/// CreateAccelerator of the model's accelerator, the object's uid as idempotency token (a
/// retried create answers the accelerator the first one made).
pub(crate) fn create_accelerator(a: &Accelerator) -> Result<CreateAcceleratorInputBuilder> {
    let Accelerator {
        name,
        ip_addresses,
        ip_address_type,
        enabled,
        tags,
        crd_uid,
        existing_arn: _, // which accelerator to update: nothing to create then
    } = a;
    Ok(CreateAcceleratorInput::builder()
        .name(name)
        .ip_address_type(gt::IpAddressType::from(ip_address_type.as_str()))
        .set_ip_addresses(non_empty(ip_addresses))
        .set_enabled(*enabled)
        // Empty: the SDK makes one up, as it does for every unset token.
        .set_idempotency_token((!crd_uid.is_empty()).then(|| crd_uid.clone()))
        .set_tags(tags_to(tags)?))
}

/// UpdateAccelerator to the model's name, IP address type and enabled flag (AWS's default, on,
/// when the model leaves it out).
pub(crate) fn update_accelerator(arn: &str, a: &Accelerator) -> UpdateAcceleratorInputBuilder {
    let Accelerator {
        name,
        ip_addresses: _, // BYOIP addresses are set at creation only
        ip_address_type,
        enabled,
        tags: _,         // TagResource / UntagResource
        crd_uid: _,      // the creation's idempotency token
        existing_arn: _, // `arn`
    } = a;
    UpdateAcceleratorInput::builder()
        .accelerator_arn(arn)
        .name(name)
        .ip_address_type(gt::IpAddressType::from(ip_address_type.as_str()))
        .enabled(enabled.unwrap_or(true))
}

/// UpdateAccelerator with `Enabled: false` and nothing else: the first step of a deletion.
pub(crate) fn disable_accelerator(arn: &str) -> UpdateAcceleratorInputBuilder {
    UpdateAcceleratorInput::builder()
        .accelerator_arn(arn)
        .enabled(false)
}

pub(crate) fn tag_resource(arn: &str, tags: &Tags) -> Result<TagResourceInputBuilder> {
    Ok(TagResourceInput::builder()
        .resource_arn(arn)
        .set_tags(tags_to(tags)?))
}

/// CreateListener of the model's listener; client affinity only when the model sets it.
pub(crate) fn create_listener(
    accelerator_arn: &str,
    l: &AgaListener,
) -> CreateListenerInputBuilder {
    let AgaListener {
        id: _, // AWS keeps no id: listeners are matched by protocol and ports
        protocol,
        port_ranges,
        client_affinity,
        endpoint_groups: _, // CreateEndpointGroup, one per group, once the listener exists
    } = l;
    CreateListenerInput::builder()
        .accelerator_arn(accelerator_arn)
        .protocol(gt::Protocol::from(protocol.as_str()))
        .set_port_ranges(Some(port_ranges_to(port_ranges)))
        .set_client_affinity(client_affinity.map(|c| gt::ClientAffinity::from(c.as_str())))
}

/// UpdateListener to the model's protocol, port ranges and (when set) client affinity.
pub(crate) fn update_listener(arn: &str, l: &AgaListener) -> UpdateListenerInputBuilder {
    let AgaListener {
        id: _,
        protocol,
        port_ranges,
        client_affinity,
        endpoint_groups: _, // their own calls
    } = l;
    UpdateListenerInput::builder()
        .listener_arn(arn)
        .protocol(gt::Protocol::from(protocol.as_str()))
        .set_port_ranges(Some(port_ranges_to(port_ranges)))
        .set_client_affinity(client_affinity.map(|c| gt::ClientAffinity::from(c.as_str())))
}

/// CreateEndpointGroup of the model's group with its endpoints (upstream adds them with
/// AddEndpoints right after the create; one call leaves no group half made).
pub(crate) fn create_endpoint_group(
    listener_arn: &str,
    g: &EndpointGroup,
) -> CreateEndpointGroupInputBuilder {
    let EndpointGroup {
        id: _, // AWS keeps no id: groups are matched by region
        region,
        traffic_dial_percentage,
        port_overrides,
        endpoint_configurations,
    } = g;
    CreateEndpointGroupInput::builder()
        .listener_arn(listener_arn)
        .endpoint_group_region(region)
        .set_traffic_dial_percentage(traffic_dial_percentage.map(|p| p as f32))
        .set_port_overrides(non_empty(&port_overrides_to(port_overrides)))
        .set_endpoint_configurations(non_empty(&endpoints_to(endpoint_configurations)))
}

/// UpdateEndpointGroup with the model's traffic dial (when set) and all its port overrides (an
/// empty list removes them); the endpoints are other calls.
pub(crate) fn update_endpoint_group(
    arn: &str,
    g: &EndpointGroup,
) -> UpdateEndpointGroupInputBuilder {
    let EndpointGroup {
        id: _,
        region: _, // fixed at creation
        traffic_dial_percentage,
        port_overrides,
        endpoint_configurations: _, // set_endpoints, add_endpoints, remove_endpoints
    } = g;
    UpdateEndpointGroupInput::builder()
        .endpoint_group_arn(arn)
        .set_traffic_dial_percentage(traffic_dial_percentage.map(|p| p as f32))
        .set_port_overrides(Some(port_overrides_to(port_overrides)))
}

/// UpdateEndpointGroup with these port overrides and nothing else.
pub(crate) fn set_port_overrides(
    arn: &str,
    overrides: &[PortOverride],
) -> UpdateEndpointGroupInputBuilder {
    UpdateEndpointGroupInput::builder()
        .endpoint_group_arn(arn)
        .set_port_overrides(Some(port_overrides_to(overrides)))
}

/// UpdateEndpointGroup with these endpoints and nothing else.
pub(crate) fn set_endpoints(
    arn: &str,
    endpoints: &[EndpointConfiguration],
) -> UpdateEndpointGroupInputBuilder {
    UpdateEndpointGroupInput::builder()
        .endpoint_group_arn(arn)
        .set_endpoint_configurations(Some(endpoints_to(endpoints)))
}

pub(crate) fn add_endpoints(
    arn: &str,
    endpoints: &[EndpointConfiguration],
) -> AddEndpointsInputBuilder {
    AddEndpointsInput::builder()
        .endpoint_group_arn(arn)
        .set_endpoint_configurations(Some(endpoints_to(endpoints)))
}

pub(crate) fn remove_endpoints(arn: &str, ids: &[String]) -> Result<RemoveEndpointsInputBuilder> {
    let identifiers = ids
        .iter()
        .map(|id| {
            gt::EndpointIdentifier::builder()
                .endpoint_id(id)
                .build()
                .map_err(construction)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RemoveEndpointsInput::builder()
        .endpoint_group_arn(arn)
        .set_endpoint_identifiers(Some(identifiers)))
}

#[cfg(test)]
#[path = "requests_tests.rs"]
mod tests;
