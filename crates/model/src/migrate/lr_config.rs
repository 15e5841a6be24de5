//! ListenerRuleConfigurations (`translate/lr_config.go`): what an HTTPRoute rule cannot say
//! itself (authentication, fixed responses, stickiness, a redirect's query, source-ip
//! conditions, tags), one per Ingress and backend, referenced by an `ExtensionRef` filter.

use crate::crd::gateway::listener_rule_configuration::{Action as LrcAction, ActionType};
use crate::crd::gateway::{ListenerRuleConfiguration, ListenerRuleConfigurationSpec};

use super::names::lr_config_name;
use super::objects::{HttpRouteFilter, HttpRouteRule, LocalObjectReference, FILTER_EXTENSION_REF};
use super::LBC_GATEWAY_API_GROUP;

/// An empty ListenerRuleConfiguration for one Ingress's backend (`actions.*` name or Service).
pub fn build_listener_rule_configuration(
    namespace: &str,
    ingress: &str,
    backend: &str,
) -> ListenerRuleConfiguration {
    let mut lrc = ListenerRuleConfiguration::new(
        &lr_config_name(namespace, ingress, backend),
        ListenerRuleConfigurationSpec::default(),
    );
    lrc.metadata.namespace = Some(namespace.to_string());
    lrc
}

/// The `ExtensionRef` filter naming a ListenerRuleConfiguration.
pub fn extension_ref_filter(lrc_name: &str) -> HttpRouteFilter {
    HttpRouteFilter {
        type_: FILTER_EXTENSION_REF.into(),
        extension_ref: Some(LocalObjectReference {
            group: LBC_GATEWAY_API_GROUP.into(),
            kind: "ListenerRuleConfiguration".into(),
            name: lrc_name.to_string(),
        }),
        ..Default::default()
    }
}

/// The configuration of this Ingress and backend among `lrcs`, added when there is none yet.
pub fn find_or_create_lrc<'a>(
    lrcs: &'a mut Vec<ListenerRuleConfiguration>,
    namespace: &str,
    ingress: &str,
    backend: &str,
) -> &'a mut ListenerRuleConfiguration {
    let name = lr_config_name(namespace, ingress, backend);
    let found = lrcs
        .iter()
        .position(|c| c.metadata.name.as_deref() == Some(name.as_str()));
    let i = match found {
        Some(i) => i,
        None => {
            lrcs.push(build_listener_rule_configuration(
                namespace, ingress, backend,
            ));
            lrcs.len() - 1
        }
    };
    &mut lrcs[i]
}

/// The name of a configuration (as its filter names it).
pub fn lrc_name(lrc: &ListenerRuleConfiguration) -> String {
    lrc.metadata.name.clone().unwrap_or_default()
}

/// Whether the rule already has an `ExtensionRef` filter naming `lrc_name`.
pub fn route_rule_has_extension_ref(rule: &HttpRouteRule, lrc_name: &str) -> bool {
    rule.filters.iter().any(|f| {
        f.type_ == FILTER_EXTENSION_REF
            && f.extension_ref.as_ref().is_some_and(|r| r.name == lrc_name)
    })
}

/// Whether the configuration already has a pre-routing action (authentication, JWT validation).
pub fn lrc_has_pre_routing_action(lrc: &ListenerRuleConfiguration) -> bool {
    lrc.spec.actions.iter().any(|a| {
        matches!(
            a.type_,
            ActionType::AuthenticateCognito
                | ActionType::AuthenticateOidc
                | ActionType::JwtValidation
        )
    })
}

/// An action of `type_` with no configuration yet.
pub fn lrc_action(type_: ActionType) -> LrcAction {
    LrcAction {
        type_,
        forward_config: None,
        redirect_config: None,
        fixed_response_config: None,
        authenticate_cognito_config: None,
        authenticate_oidc_config: None,
        jwt_validation_config: None,
    }
}
