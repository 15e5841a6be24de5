//! The listeners a Gateway offers: its own and those of the ListenerSets it accepts
//! (`listener_sets`), validated as one list (`listeners`), and the routes attached to them
//! (`attach`), with the results status writing needs for each ListenerSet.

use std::collections::BTreeMap;

use gateway_api::apis::standard::gateways::{Gateway, GatewayListeners};

use super::attach::{attach, Attachment, Parent};
use super::listener_sets::{handshake, AcceptedSet, Handshake, RejectedSet};
use super::listeners::{self, LbKind, ListenerValidation};
use super::routes::RouteView;
use super::GatewayInputs;
use crate::model::error::ModelError;

/// One accepted ListenerSet and the validation of its listeners.
#[derive(Debug, Clone)]
pub struct SetBuild {
    pub set: AcceptedSet,
    pub validation: BTreeMap<String, ListenerValidation>,
}

impl SetBuild {
    /// `ns/name` of the set.
    pub fn key(&self) -> String {
        format!("{}/{}", self.set.namespace, self.set.name)
    }
}

/// The Gateway's listeners and those its accepted ListenerSets lend, validated.
pub(super) struct Offered {
    sets: Handshake,
    /// The Gateway's own listeners' validation, by listener name.
    validation: BTreeMap<String, ListenerValidation>,
    /// Each accepted set's, in the sets' precedence order.
    set_validations: Vec<BTreeMap<String, ListenerValidation>>,
}

impl Offered {
    /// The handshake with every ListenerSet, then the Gateway's listeners and the accepted
    /// sets' validated as one list (a set's listener conflicting with an earlier one fails).
    pub(super) fn of(inputs: &GatewayInputs<'_>, lb: LbKind) -> Self {
        let labels = |n: &str| inputs.namespace_labels(n);
        let sets = handshake(inputs.gateway, inputs.listener_sets, &labels);
        let mut validations = {
            let gw_listeners: &[GatewayListeners] = &inputs.gateway.spec.listeners;
            let groups: Vec<&[GatewayListeners]> = std::iter::once(gw_listeners)
                .chain(sets.accepted.iter().map(|s| s.listeners.as_slice()))
                .collect();
            listeners::validate_groups(&groups, lb).into_iter()
        };
        let validation = validations.next().unwrap_or_default();
        let set_validations: Vec<_> = validations.collect();
        Offered {
            sets,
            validation,
            set_validations,
        }
    }

    /// Attaches `routes` to the valid listeners; upstream's fatal loader error fails the
    /// Gateway (`Accepted` False, `ListenersNotValid`).
    pub(super) fn attach(
        &self,
        inputs: &GatewayInputs<'_>,
        routes: &[RouteView<'_>],
    ) -> Result<Attachment, ModelError> {
        let labels = |n: &str| inputs.namespace_labels(n);
        let set_parents: Vec<Parent<'_>> = self
            .sets
            .accepted
            .iter()
            .zip(&self.set_validations)
            .map(|(s, v)| Parent {
                namespace: &s.namespace,
                name: &s.name,
                listeners: &s.listeners,
                validation: v,
                sets: &[],
            })
            .collect();
        let parent = Parent {
            namespace: inputs.gateway_namespace(),
            name: inputs.gateway_name(),
            listeners: &inputs.gateway.spec.listeners,
            validation: &self.validation,
            sets: &set_parents,
        };
        let attachment = attach(&parent, routes, &labels);
        if let Some(message) = attachment.fatal.clone() {
            return Err(ModelError::ListenersNotValid {
                gateway: inputs.key(),
                message,
            });
        }
        Ok(attachment)
    }

    /// Every listener considered, valid or not (the managed security group's rules).
    pub(super) fn considered(&self, gateway: &Gateway) -> Vec<GatewayListeners> {
        std::iter::once(gateway.spec.listeners.as_slice())
            .chain(self.sets.accepted.iter().map(|s| s.listeners.as_slice()))
            .flat_map(|g| g.iter().cloned())
            .collect()
    }

    /// The valid listeners (the listeners' protocols, certificates and Warnings).
    pub(super) fn valid<'s>(&'s self, gateway: &'s Gateway) -> Vec<&'s GatewayListeners> {
        std::iter::once(gateway.spec.listeners.as_slice())
            .zip(std::iter::once(&self.validation))
            .chain(
                self.sets
                    .accepted
                    .iter()
                    .map(|s| s.listeners.as_slice())
                    .zip(&self.set_validations),
            )
            .flat_map(|(ls, v)| {
                ls.iter()
                    .filter(|l| v.get(&l.name).is_some_and(|r| r.valid))
            })
            .collect()
    }

    /// What status writing needs: the Gateway's listener validation, the accepted sets with
    /// theirs, and the rejected sets.
    pub(super) fn into_results(
        self,
    ) -> (
        BTreeMap<String, ListenerValidation>,
        Vec<SetBuild>,
        Vec<RejectedSet>,
    ) {
        let listener_sets = self
            .sets
            .accepted
            .into_iter()
            .zip(self.set_validations)
            .map(|(set, validation)| SetBuild { set, validation })
            .collect();
        (self.validation, listener_sets, self.sets.rejected)
    }
}
