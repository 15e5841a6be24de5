//! ReferenceGrants (upstream's `shared_utils.ValidateCrossNamespaceReference`): a route may
//! reference an object in another namespace only when a ReferenceGrant in that namespace lists
//! the route (group, kind, namespace) in `from` and the object (group, kind, optional name) in
//! `to`. Upstream reads the grants with its v1beta1 client; v1 and v1beta1 have the same shape.

use gateway_api::apis::standard::referencegrants::ReferenceGrant;

/// Group of the Gateway API kinds (routes, Gateways).
pub const GATEWAY_API_GROUP: &str = "gateway.networking.k8s.io";
/// Route status message of a cross-namespace reference no grant allows (reason
/// `RefNotPermitted`).
pub const REFERENCE_GRANT_NOT_EXISTS: &str =
    "No explicit ReferenceGrant exists to allow the reference.";

/// The referring side: a route of `kind` in `namespace` (group `gateway.networking.k8s.io`).
pub struct From<'a> {
    pub group: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
}

/// The referenced object.
pub struct To<'a> {
    pub group: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

/// Whether a grant in the target's namespace allows `from` to reference `to`: one `from` entry
/// equal in group, kind and namespace, and one `to` entry equal in group and kind whose name is
/// unset (any) or equal. Comparisons are exact, as upstream's (group `""` is the core group).
pub fn reference_allowed(grants: &[ReferenceGrant], from: &From<'_>, to: &To<'_>) -> bool {
    grants
        .iter()
        .filter(|g| g.metadata.namespace.as_deref().unwrap_or("default") == to.namespace)
        .any(|g| {
            let from_ok = g.spec.from.iter().any(|f| {
                f.group == from.group && f.kind == from.kind && f.namespace == from.namespace
            });
            from_ok
                && g.spec.to.iter().any(|t| {
                    t.group == to.group
                        && t.kind == to.kind
                        && t.name.as_deref().is_none_or(|n| n == to.name)
                })
        })
}
