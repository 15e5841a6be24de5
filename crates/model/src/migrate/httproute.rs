//! HTTPRoutes of one Ingress (`translate/httproute.go`): one route for its rules (hostnames from
//! its rules and TLS sections), a catch-all route for its `defaultBackend` when the rules name
//! hosts, and one route per rule whose `conditions.*` name other hosts (hostnames belong to a
//! route, not a rule). Each rule carries its backend (a Service port or an `actions.*`
//! action), its conditions, transforms, authentication and tags.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{HTTPIngressPath, Ingress, IngressServiceBackend};

use super::actions::{is_use_annotation, translate_action};
use super::annotations::{
    get_string, parse_action_annotation, parse_condition_annotation, parse_transform_annotation,
};
use super::conditions::translate_conditions;
use super::lr_config::{
    extension_ref_filter, find_or_create_lrc, lrc_has_pre_routing_action, lrc_name,
    route_rule_has_extension_ref,
};
use super::names::{default_http_route_name, http_route_name, redirect_http_route_name};
use super::objects::{
    HttpBackendRef, HttpPathMatch, HttpRequestRedirectFilter, HttpRoute, HttpRouteFilter,
    HttpRouteMatch, HttpRouteRule, HttpRouteSpec, Meta, ParentReference, FILTER_REQUEST_REDIRECT,
    GATEWAY_API_VERSION, PATH_EXACT, PATH_PREFIX, PATH_REGEX,
};
use super::pre_routing::{build_auth_action, build_jwt_validation_action};
use super::service_ref::{lookup_named_port, ServiceRef};
use super::transforms::translate_transforms;
use super::{annotations_of, go_quote, MigrateError};
use crate::annotations::{suffix, AnnotationMap};
use crate::crd::gateway::ListenerRuleConfiguration;

/// A rule that needs a route of its own: its `conditions.*` name hosts.
#[derive(Debug, Clone)]
struct HostScopedRoute {
    backend: String,
    rule: HttpRouteRule,
    hostnames: Vec<String>,
}

/// What one Ingress's routes are, with what they reference.
#[derive(Debug, Clone, Default)]
pub struct BuiltRoutes {
    pub routes: Vec<HttpRoute>,
    /// The Service ports routed to, in first-use order.
    pub service_refs: Vec<ServiceRef>,
    pub listener_rule_configurations: Vec<ListenerRuleConfiguration>,
    /// Upstream's warnings (transforms it cannot write).
    pub warnings: Vec<String>,
}

/// State shared by the paths of one Ingress.
struct Translator<'a> {
    namespace: String,
    ingress: String,
    annotations: AnnotationMap,
    use_regex: bool,
    services: &'a BTreeMap<String, Service>,
    seen: BTreeSet<String>,
    service_refs: Vec<ServiceRef>,
    lrcs: Vec<ListenerRuleConfiguration>,
    /// The Ingress's tags (annotation and IngressClassParams): every rule gets a configuration
    /// carrying them to its ALB rule.
    user_tags: &'a BTreeMap<String, String>,
    warnings: Vec<String>,
}

impl Translator<'_> {
    fn track_backend(&mut self, svc: &str, port: i32) {
        let r = ServiceRef {
            namespace: self.namespace.clone(),
            name: svc.to_string(),
            port,
        };
        if self.seen.insert(r.key()) {
            self.service_refs.push(r);
        }
    }

    fn at(&self) -> String {
        format!("ingress {}/{}", self.namespace, self.ingress)
    }

    /// The rule of one path, or the route of its own it needs.
    fn build_route_rule(
        &mut self,
        host: &str,
        path: &HTTPIngressPath,
    ) -> Result<(HttpRouteRule, Option<HostScopedRoute>), MigrateError> {
        let m = build_path_match(path, self.use_regex).map_err(|e| {
            e.context(&format!(
                "{} path {}",
                self.at(),
                go_quote(path.path.as_deref().unwrap_or_default())
            ))
        })?;
        let mut rule = HttpRouteRule {
            matches: vec![m],
            ..Default::default()
        };
        let Some(svc) = &path.backend.service else {
            return Ok((rule, None));
        };
        self.build_pre_routing_actions(&mut rule, &svc.name)?;
        self.build_backend_for_rule(&mut rule, svc)?;
        let scoped = self.build_conditions(&mut rule, host, &svc.name)?;
        self.build_transforms(&mut rule, &svc.name)?;
        self.build_lrc_for_tags(&mut rule, &svc.name);
        Ok((rule, scoped))
    }

    /// A configuration carrying the Ingress's tags, when it has any.
    fn build_lrc_for_tags(&mut self, rule: &mut HttpRouteRule, backend: &str) {
        if self.user_tags.is_empty() {
            return;
        }
        let lrc = find_or_create_lrc(&mut self.lrcs, &self.namespace, &self.ingress, backend);
        let name = lrc_name(lrc);
        if !route_rule_has_extension_ref(rule, &name) {
            rule.filters.push(extension_ref_filter(&name));
        }
    }

    fn build_backend_for_rule(
        &mut self,
        rule: &mut HttpRouteRule,
        svc: &IngressServiceBackend,
    ) -> Result<(), MigrateError> {
        let port_name = svc
            .port
            .as_ref()
            .and_then(|p| p.name.as_deref())
            .unwrap_or_default();
        if is_use_annotation(port_name) {
            self.build_use_annotation_backend(rule, &svc.name)
        } else {
            self.build_service_backend(rule, svc)
        }
    }

    fn build_use_annotation_backend(
        &mut self,
        rule: &mut HttpRouteRule,
        name: &str,
    ) -> Result<(), MigrateError> {
        let action = parse_action_annotation(&self.annotations, name)
            .map_err(|e| e.context(&format!("{} failed in parse action annotation", self.at())))?;
        let result = translate_action(&action, &self.namespace, &self.ingress, name, self.services)
            .map_err(|e| {
                e.context(&format!(
                    "{} failed in translate action {}",
                    self.at(),
                    go_quote(name)
                ))
            })?;
        if !result.backend_refs.is_empty() {
            rule.backend_refs = result.backend_refs;
        }
        // As upstream: the action's filters replace the rule's.
        if !result.filters.is_empty() {
            rule.filters = result.filters;
        }
        if let Some(lrc) = result.listener_rule_configuration {
            self.lrcs.push(lrc);
        }
        for r in result.service_refs {
            self.track_backend(&r.name, r.port);
        }
        Ok(())
    }

    fn build_service_backend(
        &mut self,
        rule: &mut HttpRouteRule,
        svc: &IngressServiceBackend,
    ) -> Result<(), MigrateError> {
        let port = resolve_service_port(svc, &self.namespace, self.services)?;
        self.track_backend(&svc.name, port);
        rule.backend_refs = vec![HttpBackendRef {
            kind: None,
            name: svc.name.clone(),
            port: Some(port),
            weight: None,
        }];
        Ok(())
    }

    /// Applies `conditions.<backend>`; a rule whose conditions name hosts comes back as a route
    /// of its own (the rule as it is at this point, as upstream takes it).
    fn build_conditions(
        &mut self,
        rule: &mut HttpRouteRule,
        host: &str,
        backend: &str,
    ) -> Result<Option<HostScopedRoute>, MigrateError> {
        let conditions = parse_condition_annotation(&self.annotations, backend).map_err(|e| {
            e.context(&format!(
                "{} failed to parse condition annotation for {}",
                self.at(),
                go_quote(backend)
            ))
        })?;
        if conditions.is_empty() {
            return Ok(None);
        }
        let Some(result) = translate_conditions(&conditions, std::mem::take(&mut rule.matches))
        else {
            return Ok(None);
        };
        rule.matches = result.matches;
        if !result.listener_rule_conditions.is_empty() {
            let lrc = find_or_create_lrc(&mut self.lrcs, &self.namespace, &self.ingress, backend);
            lrc.spec
                .conditions
                .extend(result.listener_rule_conditions.iter().cloned());
            let name = lrc_name(lrc);
            if !route_rule_has_extension_ref(rule, &name) {
                rule.filters.push(extension_ref_filter(&name));
            }
        }
        if result.additional_hostnames.is_empty() {
            return Ok(None);
        }
        let mut hostnames = Vec::new();
        if !host.is_empty() {
            hostnames.push(host.to_string());
        }
        hostnames.extend(result.additional_hostnames);
        Ok(Some(HostScopedRoute {
            backend: backend.to_string(),
            rule: rule.clone(),
            hostnames: deduplicate_hostnames(&hostnames),
        }))
    }

    fn build_transforms(
        &mut self,
        rule: &mut HttpRouteRule,
        backend: &str,
    ) -> Result<(), MigrateError> {
        let transforms = parse_transform_annotation(&self.annotations, backend).map_err(|e| {
            e.context(&format!(
                "{} failed to parse transform annotation for {}",
                self.at(),
                go_quote(backend)
            ))
        })?;
        if transforms.is_empty() {
            return Ok(());
        }
        let (filter, warnings) = translate_transforms(&transforms);
        self.warnings.extend(warnings);
        if let Some(f) = filter {
            rule.filters.push(f);
        }
        Ok(())
    }

    /// Authentication or JWT validation (never both) in the backend's configuration, once.
    fn build_pre_routing_actions(
        &mut self,
        rule: &mut HttpRouteRule,
        backend: &str,
    ) -> Result<(), MigrateError> {
        let auth = build_auth_action(&self.annotations)
            .map_err(|e| e.context(&format!("{} failed to build auth config", self.at())))?;
        let jwt = build_jwt_validation_action(&self.annotations).map_err(|e| {
            e.context(&format!(
                "{} failed to build jwt-validation config",
                self.at()
            ))
        })?;
        let action = match (auth, jwt) {
            (Some(_), Some(_)) => {
                return Err(MigrateError::Translate(format!(
                    "{} has both auth-type and jwt-validation annotations; only one pre-routing action is allowed",
                    self.at()
                )))
            }
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return Ok(()),
        };
        let lrc = find_or_create_lrc(&mut self.lrcs, &self.namespace, &self.ingress, backend);
        if !lrc_has_pre_routing_action(lrc) {
            lrc.spec.actions.push(action);
        }
        let name = lrc_name(lrc);
        if !route_rule_has_extension_ref(rule, &name) {
            rule.filters.push(extension_ref_filter(&name));
        }
        Ok(())
    }
}

/// The routes of one Ingress attached to `parent_refs` (the group's ssl-redirect route is the
/// caller's), the Service ports they use and the configurations their rules reference.
pub fn build_http_routes(
    ing: &Ingress,
    namespace: &str,
    parent_refs: &[ParentReference],
    services: &BTreeMap<String, Service>,
    user_tags: &BTreeMap<String, String>,
) -> Result<BuiltRoutes, MigrateError> {
    let annotations = annotations_of(&ing.metadata);
    let mut t = Translator {
        namespace: namespace.to_string(),
        ingress: ing.metadata.name.clone().unwrap_or_default(),
        use_regex: get_string(&annotations, suffix::USE_REGEX_PATH_MATCH)
            .eq_ignore_ascii_case("true"),
        annotations,
        services,
        seen: BTreeSet::new(),
        service_refs: Vec::new(),
        lrcs: Vec::new(),
        user_tags,
        warnings: Vec::new(),
    };
    let spec = ing.spec.clone().unwrap_or_default();
    let mut rules = Vec::new();
    let mut hostnames = Vec::new();
    let mut scoped = Vec::new();
    for r in spec.rules.iter().flatten() {
        let host = r.host.clone().unwrap_or_default();
        if !host.is_empty() {
            hostnames.push(host.clone());
        }
        let Some(http) = &r.http else {
            continue;
        };
        for path in &http.paths {
            let (rule, hsr) = t.build_route_rule(&host, path)?;
            match hsr {
                Some(h) => scoped.push(h),
                None => rules.push(rule),
            }
        }
    }
    for tls in spec.tls.iter().flatten() {
        hostnames.extend(tls.hosts.iter().flatten().cloned());
    }
    let hostnames = deduplicate_hostnames(&hostnames);
    let routes = assemble_routes(
        namespace,
        &t.ingress.clone(),
        parent_refs,
        hostnames,
        rules,
        scoped,
        spec.default_backend
            .as_ref()
            .and_then(|b| b.service.as_ref()),
        &mut t,
    )?;
    Ok(BuiltRoutes {
        routes,
        service_refs: t.service_refs,
        listener_rule_configurations: t.lrcs,
        warnings: t.warnings,
    })
}

/// The routes in upstream's order: the rules' route (also when empty, unless a catch-all
/// route stands alone), the catch-all route, then the routes of rules with host conditions.
#[allow(clippy::too_many_arguments)]
fn assemble_routes(
    namespace: &str,
    ingress: &str,
    parent_refs: &[ParentReference],
    hostnames: Vec<String>,
    mut rules: Vec<HttpRouteRule>,
    scoped: Vec<HostScopedRoute>,
    default_backend: Option<&IngressServiceBackend>,
    t: &mut Translator<'_>,
) -> Result<Vec<HttpRoute>, MigrateError> {
    let mut default_rule = match default_backend {
        None => None,
        Some(svc) => {
            let port = resolve_service_port(svc, namespace, t.services)
                .map_err(|e| e.context(&format!("ingress {namespace}/{ingress} defaultBackend")))?;
            t.track_backend(&svc.name, port);
            let mut rule = HttpRouteRule {
                backend_refs: vec![HttpBackendRef {
                    kind: None,
                    name: svc.name.clone(),
                    port: Some(port),
                    weight: None,
                }],
                ..Default::default()
            };
            t.build_lrc_for_tags(&mut rule, &svc.name);
            Some(rule)
        }
    };
    // Without hostnames the catch-all fits in the rules' route; with them it needs its own to
    // catch every host.
    if hostnames.is_empty() {
        if let Some(rule) = default_rule.take() {
            rules.push(rule);
        }
    }
    let mut routes = Vec::new();
    if !rules.is_empty() || default_rule.is_none() {
        routes.push(new_http_route(
            &http_route_name(namespace, ingress),
            namespace,
            parent_refs.to_vec(),
            hostnames,
            rules,
        ));
    }
    if let Some(rule) = default_rule {
        routes.push(new_http_route(
            &default_http_route_name(namespace, ingress),
            namespace,
            parent_refs.to_vec(),
            Vec::new(),
            vec![rule],
        ));
    }
    for h in scoped {
        // Named after the backend, as upstream names it.
        routes.push(new_http_route(
            &http_route_name(namespace, &h.backend),
            namespace,
            parent_refs.to_vec(),
            h.hostnames,
            vec![h.rule],
        ));
    }
    Ok(routes)
}

/// A parentRef to the Gateway, to one listener when `section` is set.
pub fn build_parent_refs(gateway: &str, section: Option<&str>) -> Vec<ParentReference> {
    vec![ParentReference {
        name: gateway.to_string(),
        namespace: None,
        section_name: section.map(String::from),
    }]
}

/// The match of a path: none for an empty path; the regular expression of an
/// ImplementationSpecific path under `use-regex-path-match` loses its leading `/`.
pub fn build_path_match(
    path: &HTTPIngressPath,
    use_regex: bool,
) -> Result<HttpRouteMatch, MigrateError> {
    let mut m = HttpRouteMatch::default();
    let value = path.path.clone().unwrap_or_default();
    if value.is_empty() {
        return Ok(m);
    }
    let path_type = Some(path.path_type.as_str()).filter(|t| !t.is_empty());
    let gw_type = to_gateway_path_type(path_type, use_regex)?;
    let mut value = value;
    if use_regex
        && path_type == Some("ImplementationSpecific")
        && value.len() > 1
        && value.starts_with('/')
    {
        value = value[1..].to_string();
    }
    m.path = Some(HttpPathMatch {
        type_: Some(gw_type.to_string()),
        value: Some(value),
    });
    Ok(m)
}

/// The Gateway API path type of an Ingress path type (none = Prefix).
pub fn to_gateway_path_type(
    path_type: Option<&str>,
    use_regex: bool,
) -> Result<&'static str, MigrateError> {
    match path_type {
        None | Some("Prefix") => Ok(PATH_PREFIX),
        Some("Exact") => Ok(PATH_EXACT),
        Some("ImplementationSpecific") if use_regex => Ok(PATH_REGEX),
        Some("ImplementationSpecific") => Ok(PATH_PREFIX),
        Some(other) => Err(MigrateError::Translate(format!(
            "unsupported path type: {other}"
        ))),
    }
}

/// Hostnames without repeats (compared case-insensitively), first spelling kept.
pub fn deduplicate_hostnames(hostnames: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    hostnames
        .iter()
        .filter(|h| seen.insert(h.to_lowercase()))
        .cloned()
        .collect()
}

/// The numeric port of an Ingress backend: its number, or its name looked up in the Service.
pub fn resolve_service_port(
    svc: &IngressServiceBackend,
    namespace: &str,
    services: &BTreeMap<String, Service>,
) -> Result<i32, MigrateError> {
    let number = svc.port.as_ref().and_then(|p| p.number).unwrap_or(0);
    if number != 0 {
        return Ok(number);
    }
    let name = svc
        .port
        .as_ref()
        .and_then(|p| p.name.as_deref())
        .unwrap_or_default();
    if name.is_empty() {
        return Err(MigrateError::Translate(format!(
            "service {namespace}/{} has no port number or name",
            svc.name
        )));
    }
    lookup_named_port(namespace, &svc.name, name, services)
}

/// The route that redirects one HTTP listener to HTTPS on `ssl_port` with a 301.
pub fn build_ssl_redirect_route(
    namespace: &str,
    name: &str,
    gateway: &str,
    http_section: &str,
    ssl_port: i32,
) -> HttpRoute {
    new_http_route(
        &redirect_http_route_name(namespace, name),
        namespace,
        build_parent_refs(gateway, Some(http_section)),
        Vec::new(),
        vec![HttpRouteRule {
            filters: vec![HttpRouteFilter {
                type_: FILTER_REQUEST_REDIRECT.into(),
                request_redirect: Some(HttpRequestRedirectFilter {
                    scheme: Some("https".into()),
                    port: Some(ssl_port),
                    status_code: Some(301),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        }],
    )
}

/// An HTTPRoute.
pub fn new_http_route(
    name: &str,
    namespace: &str,
    parent_refs: Vec<ParentReference>,
    hostnames: Vec<String>,
    rules: Vec<HttpRouteRule>,
) -> HttpRoute {
    HttpRoute {
        api_version: GATEWAY_API_VERSION.into(),
        kind: "HTTPRoute".into(),
        metadata: Meta::named(name, Some(namespace)),
        spec: HttpRouteSpec {
            parent_refs,
            hostnames,
            rules,
        },
    }
}
