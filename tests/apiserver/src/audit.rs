//! Request log: one record per resource request, described with the attributes Kubernetes RBAC
//! authorizes on (verb, API group, resource, subresource, namespace, name), so tests can compare
//! what a client really did with the Roles it would be granted.

use std::sync::Mutex;

/// One resource request as RBAC sees it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestRecord {
    /// RBAC verb: get, list, watch, create, update, patch, delete or deletecollection.
    pub verb: String,
    /// API group; "" for the core group.
    pub group: String,
    pub version: String,
    /// Plural resource name, e.g. `pods`.
    pub resource: String,
    /// "" or e.g. `status`.
    pub subresource: String,
    /// Namespace of a namespaced request; for `namespaces/<n>` RBAC treats `<n>` as the
    /// namespace too, and so does this log. `None` for cluster-scoped and all-namespace requests.
    pub namespace: Option<String>,
    /// Object name for get/update/patch/delete, and for a list/watch whose field selector
    /// requires `metadata.name` (as the real API server's request info does, so RBAC
    /// `resourceNames` apply); `None` for other lists, watches, create and deletecollection.
    pub name: Option<String>,
    /// Who asked: the bearer token of the request (there is no authentication, so the token is
    /// taken as the user name; `write_kubeconfig` uses `test`); `None` without one.
    pub user: Option<String>,
}

impl RequestRecord {
    /// `verb group/resource[/sub] ns/name`, for messages.
    pub fn describe(&self) -> String {
        let mut res = if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        };
        if !self.subresource.is_empty() {
            res = format!("{res}/{}", self.subresource);
        }
        format!(
            "{} {res} {}/{}",
            self.verb,
            self.namespace.as_deref().unwrap_or("*"),
            self.name.as_deref().unwrap_or("*")
        )
    }
}

/// The RBAC verb of an HTTP request on a resource path.
pub fn verb(method: &http::Method, has_name: bool, watching: bool) -> &'static str {
    use http::Method;
    match *method {
        Method::GET | Method::HEAD if watching => "watch",
        Method::GET | Method::HEAD if has_name => "get",
        Method::GET | Method::HEAD => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if has_name => "delete",
        Method::DELETE => "deletecollection",
        _ => "unknown",
    }
}

/// The name a list or watch is narrowed to by `fieldSelector=metadata.name=<n>` (`==` too).
pub fn selected_name(method: &http::Method, selector: Option<&String>) -> Option<String> {
    if *method != http::Method::GET {
        return None;
    }
    selector?.split(',').find_map(|term| {
        let rest = term.trim().strip_prefix("metadata.name")?;
        let name = rest.strip_prefix("==").or_else(|| rest.strip_prefix('='))?;
        (!name.is_empty()).then(|| name.to_string())
    })
}

/// The user of a request: its bearer token.
pub fn user(headers: &http::HeaderMap) -> Option<String> {
    headers
        .get(http::header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(|t| t.trim().to_string())
}

/// Append-only log shared by all handlers.
#[derive(Default)]
pub struct RequestLog {
    records: Mutex<Vec<RequestRecord>>,
}

impl RequestLog {
    pub fn push(&self, r: RequestRecord) {
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(r);
    }

    pub fn snapshot(&self) -> Vec<RequestRecord> {
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn clear(&self) {
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}
