//! Warnings for ListenerRuleConfiguration settings no ALB rule carries (upstream accepts and
//! ignores them): an OIDC action's `useExistingClientSecret`, a condition's `matchIndexes`
//! entry naming no match of the route rule, and a redirect action on a rule without a
//! RequestRedirect filter (GRPCRoutes have none).

use gateway_api::apis::standard::httproutes::HttpRouteRulesFiltersType;

use super::load::Loaded;
use super::routes::RouteView;
use crate::crd::gateway::listener_rule_configuration::ActionType;
use crate::crd::gateway::ListenerRuleConfiguration;
use crate::model::types::{Stack, Warning};

fn name(config: &ListenerRuleConfiguration) -> String {
    format!(
        "{}/{}",
        config.metadata.namespace.as_deref().unwrap_or("default"),
        config.metadata.name.as_deref().unwrap_or_default()
    )
}

/// `authenticateOIDCConfig.useExistingClientSecret`: upstream always sends the Secret's client
/// secret and never reads the switch.
fn existing_client_secret(config: &ListenerRuleConfiguration) -> Option<(&'static str, String)> {
    let set = config.spec.actions.iter().any(|a| {
        a.authenticate_oidc_config
            .as_ref()
            .is_some_and(|o| o.use_existing_client_secret.is_some())
    });
    set.then(|| {
        (
            "actions[].authenticateOIDCConfig.useExistingClientSecret",
            format!(
                "ListenerRuleConfiguration {}: authenticateOIDCConfig.useExistingClientSecret is ignored: the client secret is always sent from the Secret",
                name(config)
            ),
        )
    })
}

/// `conditions[].matchIndexes` entries outside the rule's matches: their condition is added to
/// no ALB rule (upstream compares each entry with each match's index).
fn out_of_range_indexes(
    config: &ListenerRuleConfiguration,
    route: &RouteView<'_>,
    rule: usize,
) -> Vec<(&'static str, String)> {
    let matches = match (route.http_rules.get(rule), route.grpc_rules.get(rule)) {
        (Some(r), _) => r.matches.as_ref().map_or(0, Vec::len),
        (None, Some(r)) => r.matches.as_ref().map_or(0, Vec::len),
        (None, None) => 0,
    };
    let mut out = Vec::new();
    for (i, c) in config.spec.conditions.iter().enumerate() {
        for index in c.match_indexes.iter().flatten() {
            if usize::try_from(*index).is_ok_and(|x| x < matches) {
                continue;
            }
            out.push((
                "conditions[].matchIndexes",
                format!(
                    "ListenerRuleConfiguration {}: conditions[{i}].matchIndexes entry {index} is ignored on {} {}/{} rule {rule}, which has {matches} match(es): no condition is added for it",
                    name(config),
                    route.kind.as_str(),
                    route.namespace,
                    route.name
                ),
            ));
        }
    }
    out
}

/// A redirect action on a rule without a RequestRedirect filter: upstream builds the redirect
/// from that filter only, so the rule forwards (or answers 500) instead.
fn redirect_without_filter(
    config: &ListenerRuleConfiguration,
    route: &RouteView<'_>,
    rule: usize,
) -> Option<(&'static str, String)> {
    let redirect = config
        .spec
        .actions
        .iter()
        .any(|a| a.type_ == ActionType::Redirect);
    let filtered = route.http_rules.get(rule).is_some_and(|r| {
        r.filters
            .iter()
            .flatten()
            .any(|f| f.r#type == HttpRouteRulesFiltersType::RequestRedirect)
    });
    (redirect && !filtered).then(|| {
        (
            "actions[].redirectConfig",
            format!(
                "ListenerRuleConfiguration {}: the redirect action is ignored on {} {}/{} rule {rule}: it needs a RequestRedirect filter on the rule (GRPCRoutes have none)",
                name(config),
                route.kind.as_str(),
                route.namespace,
                route.name
            ),
        )
    })
}

/// The Warnings for every ListenerRuleConfiguration an attached route rule uses, each once.
pub(super) fn warn_ignored_rule_settings(
    routes: &[RouteView<'_>],
    loaded: &Loaded<'_>,
    stack: &mut Stack,
) {
    for (&i, rules) in &loaded.rules {
        let route = &routes[i];
        for (rule, loaded_rule) in rules.iter().enumerate() {
            let Some(config) = loaded_rule.config else {
                continue;
            };
            let found = existing_client_secret(config)
                .into_iter()
                .chain(out_of_range_indexes(config, route, rule))
                .chain(redirect_without_filter(config, route, rule));
            for (field, message) in found {
                if !stack.warnings.iter().any(|w| w.message == message) {
                    stack.warnings.push(Warning {
                        ingress: Some(route.key()),
                        annotation: Some(field.into()),
                        message,
                    });
                }
            }
        }
    }
}
