//! The console page, rendered on the server: the namespaces with Gateways to compare, the list
//! of Gateways (upstream's per-status field counts, and this build's request counts), then per
//! Gateway `--verify`'s table — every request with the answer of each load balancer, those
//! answered differently first, marked `differs` — and upstream's side-by-side comparison: the
//! resources of each plan as cards and every field with its status and known cause. The page is
//! whole without its script, which adds only the interactions (status filter, hide known
//! changes, a card narrowing the fields to its resource, only the differing requests, export).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use albc_model::migrate::console::differ::{DiffEntry, DiffResult, DiffStatus, DiffSummary};
use albc_model::migrate::console::discovery::NamespaceInfo;
use albc_model::migrate::console::{DiffState, GatewayReport};
use albc_model::migrate::verify::RequestDifference;

/// What the page shows.
pub struct Page<'a> {
    /// Where the plans come from.
    pub description: &'a str,
    pub namespaces: &'a [NamespaceInfo],
    pub reports: &'a [GatewayReport],
    /// `?namespace=` and `&gateway=` (the breadcrumbs).
    pub namespace: Option<&'a str>,
    pub gateway: Option<&'a str>,
    /// Why the plans could not be read.
    pub error: Option<&'a str>,
}

/// HTML-escaped text (element content and attribute values).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A query-string value, percent-encoded.
fn url(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The element id of a Gateway's section.
pub fn anchor(namespace: &str, name: &str) -> String {
    format!("gw--{namespace}--{name}")
}

const STATUSES: [DiffStatus; 4] = [
    DiffStatus::Same,
    DiffStatus::Changed,
    DiffStatus::Removed,
    DiffStatus::Added,
];

/// What a status filter shows (the buttons' titles).
fn status_title(s: DiffStatus) -> &'static str {
    match s {
        DiffStatus::Same => "Fields both plans give the same value",
        DiffStatus::Changed => "Fields both plans have, with different values",
        DiffStatus::Removed => "Fields only the Ingress plan has",
        DiffStatus::Added => "Fields only the Gateway plan has",
    }
}

/// The whole page.
pub fn render(p: &Page<'_>) -> String {
    let mut h = String::with_capacity(64 * 1024);
    h.push_str(concat!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<title>Migration Console</title>\n",
        "<link rel=\"stylesheet\" href=\"/static/style.css\">\n",
        "<script src=\"/static/app.js\" defer></script>\n",
        "</head>\n<body>\n<header class=\"topbar\">\n<h1>Migration Console</h1>\n<nav class=\"crumbs\">",
        "<a href=\"/\">Namespaces</a>"
    ));
    if let Some(ns) = p.namespace {
        let _ = write!(h, " / <a href=\"/?namespace={}\">{}</a>", url(ns), esc(ns));
        if let Some(gw) = p.gateway {
            let _ = write!(h, " / <span>{}</span>", esc(gw));
        }
    }
    h.push_str("</nav>\n</header>\n<main>\n");
    let _ = writeln!(
        h,
        "<div class=\"alert info\" role=\"note\">{} Read-only: nothing in the cluster or in AWS is created, changed or deleted.</div>",
        esc(p.description)
    );
    if let Some(e) = p.error {
        let _ = writeln!(
            h,
            "<div class=\"alert error\" role=\"alert\">{}</div>",
            esc(e)
        );
    }
    namespaces(&mut h, p.namespaces);
    gateway_list(&mut h, p.reports);
    for r in p.reports {
        gateway(&mut h, r);
    }
    h.push_str("</main>\n</body>\n</html>\n");
    h
}

fn namespaces(h: &mut String, list: &[NamespaceInfo]) {
    h.push_str("<section class=\"panel\" id=\"namespaces\">\n<h2>Namespaces</h2>\n");
    if list.is_empty() {
        h.push_str("<p class=\"empty\">No Gateway with a dry-run plan (<code>gateway.k8s.aws/dry-run-plan</code>).</p>\n");
    } else {
        h.push_str("<table class=\"namespaces\">\n<thead><tr><th>Namespace</th><th>Gateways</th></tr></thead>\n<tbody>\n");
        for n in list {
            let _ = writeln!(
                h,
                "<tr><td><a href=\"/?namespace={}\">{}</a></td><td>{}</td></tr>",
                url(&n.namespace),
                esc(&n.namespace),
                n.gateway_count
            );
        }
        h.push_str("</tbody>\n</table>\n");
    }
    h.push_str("</section>\n");
}

fn pills(h: &mut String, s: &DiffSummary) {
    for status in STATUSES {
        let _ = write!(
            h,
            "<span class=\"pill status-{0}\" title=\"{1}\">{2} {0}</span> ",
            status.as_str(),
            status_title(status),
            s.count(status)
        );
    }
}

/// `n requests, m routed differently`, or why none were compared.
fn verdict_text(r: &GatewayReport) -> String {
    match &r.verdict.problem {
        Some(p) => format!("NOT COMPARED: {p}"),
        None => format!(
            "{} requests, {} routed differently",
            r.verdict.requests,
            r.verdict.differences.len()
        ),
    }
}

fn gateway_list(h: &mut String, reports: &[GatewayReport]) {
    h.push_str("<section class=\"panel\" id=\"gateways\">\n<h2>Gateways</h2>\n");
    if reports.is_empty() {
        h.push_str("<p class=\"empty\">No Gateway to compare.</p>\n</section>\n");
        return;
    }
    h.push_str("<table class=\"gateway-list\">\n<thead><tr><th>Gateway</th><th>Migrated from</th><th>Model fields</th><th>Requests</th></tr></thead>\n<tbody>\n");
    for r in reports {
        let failed = if r.verdict.failed() { " fails" } else { "" };
        let _ = write!(
            h,
            "<tr class=\"gw-row{failed}\"><td><a href=\"#{}\">{}</a></td><td>{}</td><td>",
            esc(&anchor(&r.info.namespace, &r.info.name)),
            esc(&r.key()),
            esc(&r.verdict.label)
        );
        if r.info.error.is_empty() {
            pills(h, &r.summary());
        } else {
            let _ = write!(
                h,
                "<span class=\"error-text\">{}</span>",
                esc(&r.info.error)
            );
        }
        let _ = writeln!(
            h,
            "</td><td class=\"verdict{}\">{}</td></tr>",
            if r.verdict.failed() { " fail" } else { " pass" },
            esc(&verdict_text(r))
        );
    }
    h.push_str("</tbody>\n</table>\n</section>\n");
}

fn gateway(h: &mut String, r: &GatewayReport) {
    let _ = writeln!(
        h,
        "<section class=\"panel gateway hide-known\" id=\"{}\" data-namespace=\"{}\" data-gateway=\"{}\">",
        esc(&anchor(&r.info.namespace, &r.info.name)),
        esc(&r.info.namespace),
        esc(&r.info.name)
    );
    let _ = writeln!(
        h,
        "<h2>Gateway <code>{}</code> <span class=\"source\">replaces {}</span></h2>",
        esc(&r.key()),
        esc(&r.verdict.label)
    );
    if !r.info.error.is_empty() {
        let _ = writeln!(
            h,
            "<div class=\"alert error\" role=\"alert\">{}</div>",
            esc(&r.info.error)
        );
    }
    requests(h, r);
    settings(h, r);
    h.push_str("<h3>Models</h3>\n");
    match &r.diff {
        DiffState::Ready(d) => models(h, d),
        DiffState::NoIngressPlan => {
            h.push_str("<p class=\"empty\">No Ingress plan to compare with.</p>\n");
        }
        DiffState::Invalid(e) => {
            let _ = writeln!(
                h,
                "<div class=\"alert error\" role=\"alert\">{}</div>",
                esc(e)
            );
        }
    }
    h.push_str("</section>\n");
}

fn requests(h: &mut String, r: &GatewayReport) {
    h.push_str("<h3>Requests routed by both load balancers</h3>\n");
    let _ = writeln!(
        h,
        "<p class=\"verdict {}\">{}</p>",
        if r.verdict.failed() { "fail" } else { "pass" },
        esc(&verdict_text(r))
    );
    if !r.verdict.notes.is_empty() {
        h.push_str("<ul class=\"notes\">\n");
        for n in &r.verdict.notes {
            let _ = writeln!(h, "<li>route status: {}</li>", esc(n));
        }
        h.push_str("</ul>\n");
    }
    if r.requests.is_empty() {
        return;
    }
    h.push_str("<div class=\"toolbar\"><label><input type=\"checkbox\" class=\"only-differing\"> Only requests routed differently</label></div>\n");
    h.push_str("<table class=\"requests\">\n<thead><tr><th class=\"marker\"></th><th>Request</th><th>Ingress load balancer</th><th>Gateway load balancer</th></tr></thead>\n<tbody>\n");
    // The differing requests first, each in request order.
    let (differing, alike): (Vec<&RequestDifference>, Vec<&RequestDifference>) =
        r.requests.iter().partition(|q| q.differs());
    for q in differing.into_iter().chain(alike) {
        let differs = q.differs();
        let _ = writeln!(
            h,
            "<tr class=\"request {}\" data-differs=\"{differs}\"><td class=\"marker\"{}>{}</td><td><code>{}</code></td><td><div class=\"answer\">{}</div><div class=\"matched\">{}</div></td><td><div class=\"answer\">{}</div><div class=\"matched\">{}</div></td></tr>",
            if differs { "differs" } else { "alike" },
            if differs { " title=\"routed differently\"" } else { "" },
            if differs { "&ne;" } else { "=" },
            esc(&q.request.to_string()),
            esc(&q.ingress.outcome.to_string()),
            esc(&q.ingress.matched),
            esc(&q.gateway.outcome.to_string()),
            esc(&q.gateway.matched)
        );
    }
    h.push_str("</tbody>\n</table>\n");
}

/// `--verify`'s settings that differ (files: from the stacks themselves).
fn settings(h: &mut String, r: &GatewayReport) {
    if r.verdict.attributes.is_empty() {
        return;
    }
    h.push_str("<h3>Settings that differ</h3>\n<table class=\"settings\">\n<thead><tr><th>Resource</th><th>Setting</th><th>Ingress</th><th>Gateway</th></tr></thead>\n<tbody>\n");
    for a in &r.verdict.attributes {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            esc(&a.scope),
            esc(&a.field),
            esc(&a.ingress),
            esc(&a.gateway)
        );
    }
    h.push_str("</tbody>\n</table>\n");
}

/// The short name of a resource type (`AWS::ElasticLoadBalancingV2::TargetGroup` → `TargetGroup`).
fn short(kind: &str) -> &str {
    kind.rsplit("::").next().unwrap_or(kind)
}

/// A value as the fields table shows it: absent, short inline, or long pretty-printed.
fn value(v: &Option<Value>) -> String {
    match v {
        None => "<span class=\"absent\">&mdash;</span>".into(),
        Some(Value::String(s)) => format!("<code>{}</code>", esc(s)),
        Some(v) => {
            let compact = v.to_string();
            if compact.len() <= 60 {
                format!("<code>{}</code>", esc(&compact))
            } else {
                let pretty = serde_json::to_string_pretty(v).unwrap_or(compact);
                format!("<pre>{}</pre>", esc(&pretty))
            }
        }
    }
}

/// One resource of the comparison: its entries' statuses.
struct Resource<'a> {
    kind: &'a str,
    ingress_id: &'a str,
    gateway_id: &'a str,
    statuses: BTreeMap<DiffStatus, usize>,
    /// Every entry that is not `same` is a known change.
    known_only: bool,
}

impl Resource<'_> {
    /// `same` when every field is; `removed`/`added` when the resource is on one side; else
    /// `changed`.
    fn status(&self) -> DiffStatus {
        if self.ingress_id.is_empty() {
            DiffStatus::Added
        } else if self.gateway_id.is_empty() {
            DiffStatus::Removed
        } else if self.statuses.keys().all(|s| *s == DiffStatus::Same) {
            DiffStatus::Same
        } else {
            DiffStatus::Changed
        }
    }
}

fn resource_key(e: &DiffEntry) -> String {
    format!("{}|{}", e.resource_type, e.correlation_id)
}

fn card(h: &mut String, key: &str, r: &Resource<'_>, id: &str) {
    let status = r.status();
    let statuses: Vec<&str> = r.statuses.keys().map(|s| s.as_str()).collect();
    let differing: usize = r
        .statuses
        .iter()
        .filter(|(s, _)| **s != DiffStatus::Same)
        .map(|(_, n)| n)
        .sum();
    let _ = writeln!(
        h,
        "<button type=\"button\" class=\"card status-{0}{1}\" data-resource=\"{2}\" data-statuses=\"{3}\"><span class=\"kind\">{4}</span> <span class=\"rid\">{5}</span> <span class=\"tag status-{0}\">{0}</span> <span class=\"fields-count\">{6} of {7} fields differ</span></button>",
        status.as_str(),
        if r.known_only && status != DiffStatus::Same { " known-only" } else { "" },
        esc(key),
        statuses.join(" "),
        esc(short(r.kind)),
        esc(id),
        differing,
        r.statuses.values().sum::<usize>()
    );
}

fn models(h: &mut String, d: &DiffResult) {
    let mut resources: BTreeMap<String, Resource<'_>> = BTreeMap::new();
    for e in &d.entries {
        let r = resources
            .entry(resource_key(e))
            .or_insert_with(|| Resource {
                kind: &e.resource_type,
                ingress_id: &e.ingress_resource_id,
                gateway_id: &e.gateway_resource_id,
                statuses: BTreeMap::new(),
                known_only: true,
            });
        *r.statuses.entry(e.status).or_default() += 1;
        if e.status != DiffStatus::Same && !e.known {
            r.known_only = false;
        }
    }
    let total = d.summary.total();
    h.push_str("<div class=\"toolbar\">\n<div class=\"segmented\" role=\"group\" aria-label=\"Field status\">");
    let _ = write!(
        h,
        "<button type=\"button\" class=\"filter active\" data-filter=\"all\" title=\"Every field\">All <span class=\"count\">{total}</span></button>"
    );
    for status in STATUSES {
        let _ = write!(
            h,
            "<button type=\"button\" class=\"filter\" data-filter=\"{0}\" title=\"{1}\">{2} <span class=\"count\">{3}</span></button>",
            status.as_str(),
            status_title(status),
            capitalized(status.as_str()),
            d.summary.count(status)
        );
    }
    h.push_str("</div>\n<label title=\"Hide differences the migration itself makes (the migrated-from tag, generated names, the controllers' health-check defaults, target-group references)\"><input type=\"checkbox\" class=\"hide-known-toggle\" checked> Hide known changes</label>\n");
    h.push_str("<button type=\"button\" class=\"export\" data-format=\"html\">Export HTML</button> <button type=\"button\" class=\"export\" data-format=\"json\">Export JSON</button>\n</div>\n");
    h.push_str("<div class=\"columns\">\n<div class=\"column ingress\">\n<h4>Ingress model</h4>\n");
    for (key, r) in resources.iter().filter(|(_, r)| !r.ingress_id.is_empty()) {
        card(h, key, r, r.ingress_id);
    }
    h.push_str("</div>\n<div class=\"column gateway-side\">\n<h4>Gateway model</h4>\n");
    for (key, r) in resources.iter().filter(|(_, r)| !r.gateway_id.is_empty()) {
        card(h, key, r, r.gateway_id);
    }
    h.push_str("</div>\n</div>\n");
    h.push_str("<div class=\"drawer\">\n<h4>Fields <span class=\"drawer-title\">of every resource</span> <button type=\"button\" class=\"clear-resource\" hidden>Show every resource</button></h4>\n");
    h.push_str("<table class=\"fields\">\n<thead><tr><th>Resource</th><th>Field</th><th>Ingress</th><th>Gateway</th><th>Status</th><th>Known cause</th></tr></thead>\n<tbody>\n");
    for e in &d.entries {
        let id = if e.ingress_resource_id.is_empty() {
            &e.gateway_resource_id
        } else {
            &e.ingress_resource_id
        };
        let _ = writeln!(
            h,
            "<tr class=\"field status-{0}{1}\" data-status=\"{0}\" data-resource=\"{2}\"><td><span class=\"kind\">{3}</span> <span class=\"rid\">{4}</span></td><td><code>{5}</code></td><td>{6}</td><td>{7}</td><td><span class=\"tag status-{0}\">{0}</span></td><td>{8}</td></tr>",
            e.status.as_str(),
            if e.known { " known" } else { "" },
            esc(&resource_key(e)),
            esc(short(&e.resource_type)),
            esc(id),
            esc(&e.field),
            value(&e.ingress),
            value(&e.gateway),
            esc(&e.known_cause)
        );
    }
    h.push_str("</tbody>\n</table>\n</div>\n");
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
