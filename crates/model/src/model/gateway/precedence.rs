//! ALB rule order on one listener port (upstream's `route_rule_precedence.go`, v3.5.0): one
//! unit per (route, rule, match, hostname), sorted by hostname specificity, then match type,
//! lengths, method, header and query counts, then route age, `ns/name`, rule, match, hostname.
//! HTTPRoute and GRPCRoute units share one comparator (the v3.4.2 cross-kind fix).

use std::cmp::Ordering;
use std::collections::BTreeSet;

use gateway_api::apis::standard::grpcroutes::{
    GrpcRouteRulesMatches, GrpcRouteRulesMatchesMethodType,
};
use gateway_api::apis::standard::httproutes::{
    HttpRouteRulesMatches, HttpRouteRulesMatchesPathType,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::routes::{RouteKind, RouteView};
use gateway_api::apis::standard::grpcroutes::GrpcRouteRules;
use gateway_api::apis::standard::httproutes::HttpRouteRules;

/// One future ALB rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub route: usize,
    pub rule: usize,
    /// Index of the match in the rule (`usize::MAX` for a rule without matches).
    pub match_index: usize,
    /// The single hostname of the rule's host-header condition; empty for none.
    pub hostname: String,
    factors: Factors,
    created: Option<Time>,
    route_key: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Factors {
    path_type: u8,
    path_length: usize,
    secondary_length: usize,
    has_method: bool,
    header_count: usize,
    query_count: usize,
}

fn http_factors(m: &HttpRouteRulesMatches) -> Factors {
    let path = m.path.as_ref();
    Factors {
        path_type: match path.and_then(|p| p.r#type.as_ref()) {
            None => 0,
            Some(HttpRouteRulesMatchesPathType::Exact) => 3,
            Some(HttpRouteRulesMatchesPathType::PathPrefix) => 2,
            Some(HttpRouteRulesMatchesPathType::RegularExpression) => 1,
        },
        path_length: path.and_then(|p| p.value.as_ref()).map_or(0, String::len),
        secondary_length: 0,
        has_method: m.method.is_some(),
        header_count: m.headers.as_ref().map_or(0, Vec::len),
        query_count: m.query_params.as_ref().map_or(0, Vec::len),
    }
}

/// GRPC: method match type (Exact, the CRD default, 3; RegularExpression 1; none 0), service
/// length, then method length.
fn grpc_factors(m: &GrpcRouteRulesMatches) -> Factors {
    let method = m.method.as_ref();
    Factors {
        path_type: match method.map(|m| m.r#type.as_ref()) {
            None => 0,
            Some(None | Some(GrpcRouteRulesMatchesMethodType::Exact)) => 3,
            Some(Some(GrpcRouteRulesMatchesMethodType::RegularExpression)) => 1,
        },
        path_length: method
            .and_then(|m| m.service.as_ref())
            .map_or(0, String::len),
        secondary_length: method
            .and_then(|m| m.method.as_ref())
            .map_or(0, String::len),
        has_method: false,
        header_count: m.headers.as_ref().map_or(0, Vec::len),
        query_count: 0,
    }
}

/// The hostnames a route's rules are split over on a port: its compatible hostnames there, else
/// its own hostnames, else one catch-all unit (empty hostname).
pub fn unit_hostnames(route: &RouteView<'_>, compatible: Option<&BTreeSet<String>>) -> Vec<String> {
    let mut hosts: Vec<String> = compatible
        .map(|c| c.iter().cloned().collect())
        .unwrap_or_default();
    if hosts.is_empty() {
        hosts = route.hostnames.clone();
    }
    if hosts.is_empty() {
        hosts.push(String::new());
    }
    hosts
}

/// All units of the routes attached to one port, in priority order (first = priority 1).
pub fn sorted_units(
    routes: &[RouteView<'_>],
    attached: &[usize],
    hostnames: &dyn Fn(usize) -> Vec<String>,
) -> Vec<Unit> {
    let mut units = Vec::new();
    for &index in attached {
        let route = &routes[index];
        let hosts = hostnames(index);
        let per_rule: Vec<Vec<Factors>> = if route.kind == RouteKind::Grpc {
            let matches =
                |r: &GrpcRouteRules| r.matches.iter().flatten().map(grpc_factors).collect();
            route.grpc_rules.iter().map(matches).collect()
        } else {
            let matches =
                |r: &HttpRouteRules| r.matches.iter().flatten().map(http_factors).collect();
            route.http_rules.iter().map(matches).collect()
        };
        for (rule_index, factors) in per_rule.into_iter().enumerate() {
            let per_match: Vec<(usize, Factors)> = if factors.is_empty() {
                vec![(usize::MAX, Factors::default())]
            } else {
                factors.into_iter().enumerate().collect()
            };
            for (match_index, factors) in per_match {
                for host in &hosts {
                    units.push(Unit {
                        route: index,
                        rule: rule_index,
                        match_index,
                        hostname: host.clone(),
                        factors,
                        created: route.created.cloned(),
                        route_key: route.key(),
                    });
                }
            }
        }
    }
    units.sort_by(compare);
    units
}

/// Concrete beats wildcard, any hostname beats none; then more dots, then longer.
fn hostname_order(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (wa, wb) = (a.starts_with("*."), b.starts_with("*."));
    if wa != wb {
        return if wa {
            Ordering::Greater
        } else {
            Ordering::Less
        };
    }
    let dots = |h: &str| h.matches('.').count();
    dots(b).cmp(&dots(a)).then_with(|| b.len().cmp(&a.len()))
}

fn compare(a: &Unit, b: &Unit) -> Ordering {
    let (fa, fb) = (&a.factors, &b.factors);
    hostname_order(&a.hostname, &b.hostname)
        .then_with(|| fb.path_type.cmp(&fa.path_type))
        .then_with(|| fb.path_length.cmp(&fa.path_length))
        .then_with(|| fb.secondary_length.cmp(&fa.secondary_length))
        .then_with(|| fb.has_method.cmp(&fa.has_method))
        .then_with(|| fb.header_count.cmp(&fa.header_count))
        .then_with(|| fb.query_count.cmp(&fa.query_count))
        .then_with(|| older_first(&a.created, &b.created))
        .then_with(|| a.route_key.cmp(&b.route_key))
        .then_with(|| a.rule.cmp(&b.rule))
        .then_with(|| a.match_index.cmp(&b.match_index))
        .then_with(|| a.hostname.cmp(&b.hostname))
}

/// Older first; a missing `creationTimestamp` (a manifest) counts as the zero time, like Go's.
fn older_first(a: &Option<Time>, b: &Option<Time>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => x.0.cmp(&y.0),
    }
}
