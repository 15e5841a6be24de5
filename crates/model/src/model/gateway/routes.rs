//! What a route says, with the defaults the API server would have applied to a manifest (a rule
//! without `matches` matches `PathPrefix /`, a match without a path too, backend weight 1), in
//! one shape shared by the route kinds.

use gateway_api::apis::experimental::tcproutes::TcpRoute;
use gateway_api::apis::experimental::udproutes::UdpRoute;
use gateway_api::apis::standard::grpcroutes::{GrpcRoute, GrpcRouteRules};
use gateway_api::apis::standard::httproutes::{
    HttpRoute, HttpRouteRules, HttpRouteRulesFiltersType, HttpRouteRulesMatches,
    HttpRouteRulesMatchesPath, HttpRouteRulesMatchesPathType,
};
use gateway_api::apis::standard::tlsroutes::TlsRoute;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// Route kinds, spelled as upstream hashes them into target group names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RouteKind {
    Http,
    Grpc,
    Tcp,
    Udp,
    Tls,
}

impl RouteKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            RouteKind::Http => "HTTPRoute",
            RouteKind::Grpc => "GRPCRoute",
            RouteKind::Tcp => "TCPRoute",
            RouteKind::Udp => "UDPRoute",
            RouteKind::Tls => "TLSRoute",
        }
    }
}

/// One `parentRefs` entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParentRef {
    pub group: Option<String>,
    pub kind: Option<String>,
    pub namespace: Option<String>,
    pub name: String,
    pub section_name: Option<String>,
    pub port: Option<i32>,
}

/// One `backendRefs` entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BackendRef {
    pub group: Option<String>,
    pub kind: Option<String>,
    pub namespace: Option<String>,
    pub name: String,
    pub port: Option<i32>,
    /// Defaulted to 1.
    pub weight: i32,
}

/// A route of any kind, as attachment, precedence and target groups need it.
#[derive(Debug, Clone)]
pub struct RouteView<'a> {
    pub kind: RouteKind,
    pub namespace: String,
    pub name: String,
    pub created: Option<&'a Time>,
    pub hostnames: Vec<String>,
    pub parent_refs: Vec<ParentRef>,
    /// The HTTPRoute's rules with matches defaulted (HTTPRoute only).
    pub http_rules: Vec<HttpRouteRules>,
    /// The GRPCRoute's rules (GRPCRoute only).
    pub grpc_rules: Vec<GrpcRouteRules>,
    /// Backends per rule, in rule order.
    pub backends: Vec<Vec<BackendRef>>,
    /// Per rule, the `ExtensionRef` filters: (group, kind, name).
    pub extension_refs: Vec<Vec<ExtensionRef>>,
    /// Fields the route sets that upstream accepts without acting on them (Warning events).
    pub ignored: Vec<String>,
    /// Rules refused in decoding (values the types do not know, such as an `ExternalAuth`
    /// filter) or, of an HTTPRoute, for a redirect an ALB cannot answer with: route status
    /// `UnsupportedValue` and a Warning (see [`super::refused`]).
    pub refused: Vec<super::refused::RefusedRule>,
}

/// `ignored` and the fields the route's type dropped in decoding (see [`super::dropped`]).
fn with_dropped<K: kube::Resource>(
    mut ignored: Vec<String>,
    route: &K,
    kind: RouteKind,
) -> Vec<String> {
    let dropped = super::dropped::dropped_of(route.meta());
    ignored.extend(
        dropped
            .into_iter()
            .map(|p| super::dropped::dropped_message(kind.as_str(), p)),
    );
    ignored
}

/// Per-backend filters and HTTPRoute `timeouts`: upstream applies neither.
fn ignored_fields(backend_filters: bool, timeouts: bool) -> Vec<String> {
    let mut out = Vec::new();
    if backend_filters {
        out.push("backendRefs[].filters are ignored: an ALB applies no per-backend filter".into());
    }
    if timeouts {
        out.push("rules[].timeouts are ignored: an ALB rule has no timeout".into());
    }
    out
}

/// An `ExtensionRef` filter's local reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionRef {
    pub group: String,
    pub kind: String,
    pub name: String,
}

/// Which route a problem or refusal is about: kind, namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RouteRef {
    pub kind: RouteKind,
    pub namespace: String,
    pub name: String,
}

impl RouteView<'_> {
    /// `ns/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Kind, namespace and name.
    pub fn route_ref(&self) -> RouteRef {
        RouteRef {
            kind: self.kind,
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }

    /// Number of rules.
    pub fn rule_count(&self) -> usize {
        self.backends.len()
    }
}

macro_rules! parent_refs {
    ($refs:expr) => {
        $refs
            .iter()
            .flatten()
            .map(|p| ParentRef {
                group: p.group.clone(),
                kind: p.kind.clone(),
                namespace: p.namespace.clone(),
                name: p.name.clone(),
                section_name: p.section_name.clone(),
                port: p.port,
            })
            .collect()
    };
}

macro_rules! backend_refs {
    ($refs:expr) => {
        $refs
            .map(|b| BackendRef {
                group: b.group.clone(),
                kind: b.kind.clone(),
                namespace: b.namespace.clone(),
                name: b.name.clone(),
                port: b.port,
                weight: b.weight.unwrap_or(1),
            })
            .collect()
    };
}

fn namespace_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    meta.namespace.clone().unwrap_or_else(|| "default".into())
}

/// An HTTPRoute with the CRD's defaults applied.
pub fn http_route(route: &HttpRoute) -> RouteView<'_> {
    let spec = &route.spec;
    let mut http_rules: Vec<HttpRouteRules> = spec
        .rules
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(default_matches)
        .collect();
    // Redirects an ALB cannot answer with are refused here, before anything reads the rules.
    let refused = super::refused::refuse_http_rules(&route.metadata, &mut http_rules);
    let backends = http_rules
        .iter()
        .map(|r| backend_refs!(r.backend_refs.iter().flatten()))
        .collect();
    let extension_refs = http_rules
        .iter()
        .map(|r| {
            r.filters
                .iter()
                .flatten()
                .filter(|f| f.r#type == HttpRouteRulesFiltersType::ExtensionRef)
                .filter_map(|f| f.extension_ref.as_ref())
                .map(|e| ExtensionRef {
                    group: e.group.clone(),
                    kind: e.kind.clone(),
                    name: e.name.clone(),
                })
                .collect()
        })
        .collect();
    let backend_filters = http_rules
        .iter()
        .flat_map(|r| r.backend_refs.iter().flatten())
        .any(|b| b.filters.as_ref().is_some_and(|f| !f.is_empty()));
    let timeouts = http_rules.iter().any(|r| r.timeouts.is_some());
    RouteView {
        kind: RouteKind::Http,
        ignored: with_dropped(
            ignored_fields(backend_filters, timeouts),
            route,
            RouteKind::Http,
        ),
        refused,
        namespace: namespace_of(&route.metadata),
        name: route.metadata.name.clone().unwrap_or_default(),
        created: route.metadata.creation_timestamp.as_ref(),
        hostnames: spec.hostnames.clone().unwrap_or_default(),
        parent_refs: parent_refs!(spec.parent_refs),
        http_rules,
        grpc_rules: Vec::new(),
        backends,
        extension_refs,
    }
}

/// A GRPCRoute (no CRD defaults for matches: a rule without matches matches everything).
pub fn grpc_route(route: &GrpcRoute) -> RouteView<'_> {
    use gateway_api::apis::standard::grpcroutes::GrpcRouteRulesFiltersType;
    let spec = &route.spec;
    let grpc_rules = spec.rules.clone().unwrap_or_default();
    let backend_filters = grpc_rules
        .iter()
        .flat_map(|r| r.backend_refs.iter().flatten())
        .any(|b| b.filters.as_ref().is_some_and(|f| !f.is_empty()));
    RouteView {
        kind: RouteKind::Grpc,
        ignored: with_dropped(
            ignored_fields(backend_filters, false),
            route,
            RouteKind::Grpc,
        ),
        refused: super::refused::refused_rules_of(&route.metadata),
        namespace: namespace_of(&route.metadata),
        name: route.metadata.name.clone().unwrap_or_default(),
        created: route.metadata.creation_timestamp.as_ref(),
        hostnames: spec.hostnames.clone().unwrap_or_default(),
        parent_refs: parent_refs!(spec.parent_refs),
        http_rules: Vec::new(),
        backends: grpc_rules
            .iter()
            .map(|r| backend_refs!(r.backend_refs.iter().flatten()))
            .collect(),
        extension_refs: grpc_rules
            .iter()
            .map(|r| {
                r.filters
                    .iter()
                    .flatten()
                    .filter(|f| f.r#type == GrpcRouteRulesFiltersType::ExtensionRef)
                    .filter_map(|f| f.extension_ref.as_ref())
                    .map(|e| ExtensionRef {
                        group: e.group.clone(),
                        kind: e.kind.clone(),
                        name: e.name.clone(),
                    })
                    .collect()
            })
            .collect(),
        grpc_rules,
    }
}

/// A TLSRoute: SNI hostnames (attachment and certificate hostnames only — upstream routes no
/// traffic by SNI) and the backends of each rule.
pub fn tls_route(route: &TlsRoute) -> RouteView<'_> {
    RouteView {
        kind: RouteKind::Tls,
        ignored: with_dropped(Vec::new(), route, RouteKind::Tls),
        refused: super::refused::refused_rules_of(&route.metadata),
        namespace: namespace_of(&route.metadata),
        name: route.metadata.name.clone().unwrap_or_default(),
        created: route.metadata.creation_timestamp.as_ref(),
        hostnames: route.spec.hostnames.clone(),
        parent_refs: parent_refs!(route.spec.parent_refs),
        http_rules: Vec::new(),
        grpc_rules: Vec::new(),
        backends: route
            .spec
            .rules
            .iter()
            .map(|r| backend_refs!(r.backend_refs.iter()))
            .collect(),
        extension_refs: route.spec.rules.iter().map(|_| Vec::new()).collect(),
    }
}

fn prefix_root() -> HttpRouteRulesMatchesPath {
    HttpRouteRulesMatchesPath {
        r#type: Some(HttpRouteRulesMatchesPathType::PathPrefix),
        value: Some("/".into()),
    }
}

/// The CRD defaults an absent `matches` to `[{path: {type: PathPrefix, value: /}}]`, a match's
/// `path` to the same, and a path's `type` to PathPrefix / `value` to `/`. An explicit
/// `matches: []` is not absent: the API server keeps it, and upstream makes the rule one
/// match-less unit (no path condition, the lowest precedence), so it stays empty here.
fn default_matches(mut rule: HttpRouteRules) -> HttpRouteRules {
    let matches = rule
        .matches
        .get_or_insert_with(|| vec![HttpRouteRulesMatches::default()]);
    for m in matches.iter_mut() {
        let path = m.path.get_or_insert_with(prefix_root);
        path.r#type
            .get_or_insert(HttpRouteRulesMatchesPathType::PathPrefix);
        path.value.get_or_insert_with(|| "/".into());
    }
    rule
}

/// A TCPRoute or UDPRoute (the crate's v1alpha2 types; v1 has the same shape): parentRefs and
/// the backends of each rule.
macro_rules! l4_route {
    ($fn:ident, $ty:ty, $kind:expr) => {
        pub fn $fn(route: &$ty) -> RouteView<'_> {
            RouteView {
                kind: $kind,
                ignored: with_dropped(Vec::new(), route, $kind),
                refused: super::refused::refused_rules_of(&route.metadata),
                namespace: namespace_of(&route.metadata),
                name: route.metadata.name.clone().unwrap_or_default(),
                created: route.metadata.creation_timestamp.as_ref(),
                hostnames: Vec::new(),
                parent_refs: parent_refs!(route.spec.parent_refs),
                http_rules: Vec::new(),
                grpc_rules: Vec::new(),
                backends: route
                    .spec
                    .rules
                    .iter()
                    .map(|r| backend_refs!(r.backend_refs.iter()))
                    .collect(),
                extension_refs: route.spec.rules.iter().map(|_| Vec::new()).collect(),
            }
        }
    };
}

l4_route!(tcp_route, TcpRoute, RouteKind::Tcp);
l4_route!(udp_route, UdpRoute, RouteKind::Udp);
