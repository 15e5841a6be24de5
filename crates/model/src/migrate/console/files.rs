//! The console over files (`-f`, `--input-dir`): nothing is deployed, so no controller writes a
//! plan; each migrated group's two stacks are built as `--verify` builds them (the builders
//! `plan` uses) and rendered as the controllers write their dry-run plans, so the field diff is
//! upstream's over the same JSON. The verdict is `--verify`'s own, from the stacks themselves
//! (settings that differ and route-status notes included).
//!
//! The Gateway side is the translation of the Ingresses read, unless the files also hold
//! Gateway API and `gateway.k8s.aws` objects (`migrate`'s output, perhaps edited since): then
//! those are what the Ingresses are compared with.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;

use serde_json::Value;

use super::discovery::{GatewayInfo, MIGRATED_FROM_INGRESS, MIGRATED_FROM_INGRESS_GROUP};
use super::{empty_verdict, finish, GatewayReport};
use crate::migrate::objects::MigratedGateway;
use crate::migrate::reader::decode_documents;
use crate::migrate::verify::eval::Alb;
use crate::migrate::verify::{attributes, route_all, stacks};
use crate::migrate::writer::all_documents;
use crate::migrate::{key_of, InputResources, MigrateError, OutputResources};
use crate::model::upstream_json::{to_string, PlanFacts};
use crate::model::ModelConfig;

/// The `migrated-from` tag the translation gives the group's resources.
pub fn migrated_from(g: &MigratedGateway) -> String {
    if g.explicit {
        format!("{MIGRATED_FROM_INGRESS_GROUP}{}", g.group)
    } else {
        format!("{MIGRATED_FROM_INGRESS}{}/{}", g.namespace, g.group)
    }
}

/// Whether a document is one of the objects `migrate` writes (Gateway API, `gateway.k8s.aws`).
pub fn is_generated_kind(doc: &Value) -> bool {
    let api = doc
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    api.starts_with("gateway.networking.k8s.io/") || api.starts_with("gateway.k8s.aws/")
}

/// Reads `files` as `migrate` reads its input, keeping aside the generated objects among them.
pub fn read_files_with_generated(
    files: &[PathBuf],
    log: &mut dyn Write,
) -> Result<(InputResources, Vec<Value>), MigrateError> {
    let mut input = InputResources::default();
    let mut generated = Vec::new();
    for f in files {
        let fail =
            |e: String| MigrateError::Read(format!("error reading file {}: {e}", f.display()));
        let text = std::fs::read_to_string(f).map_err(|e| fail(e.to_string()))?;
        let docs = crate::plan::parse_documents(&text)
            .map_err(|e| fail(format!("error parsing document: {e}")))?;
        let (ours, rest): (Vec<Value>, Vec<Value>) = docs.into_iter().partition(is_generated_kind);
        generated.extend(ours);
        decode_documents(rest, &mut input, log).map_err(fail)?;
    }
    Ok((input, generated))
}

/// Every generated Gateway of `output` (by namespace and name) against the Ingresses of
/// `input` it replaces (namespaces defaulted).
pub fn file_reports(
    input: &InputResources,
    output: &OutputResources,
    cfg: &ModelConfig,
) -> Result<Vec<GatewayReport>, MigrateError> {
    file_reports_against(input, output, all_documents(output), cfg)
}

/// [`file_reports`] with the Gateway side built from `documents` (the generated objects as
/// read); the Gateways compared are still those the translation of `input` names.
pub fn file_reports_against(
    input: &InputResources,
    output: &OutputResources,
    documents: Vec<Value>,
    cfg: &ModelConfig,
) -> Result<Vec<GatewayReport>, MigrateError> {
    let objs = stacks::objects_from_documents(input, documents, cfg)?;
    let services = &objs.cluster.services;
    let facts = PlanFacts::default();
    let mut out = Vec::new();
    for g in &output.groups {
        let members: BTreeSet<&String> = g.members.iter().collect();
        // The annotations of every member: which health-check values the Ingresses set.
        let mut annotations = BTreeMap::new();
        for ing in input
            .ingresses
            .iter()
            .filter(|i| members.contains(&key_of(&i.metadata)))
        {
            annotations.extend(ing.metadata.annotations.clone().unwrap_or_default());
        }
        let mut info = GatewayInfo {
            name: g.gateway.clone(),
            namespace: g.namespace.clone(),
            migrated_from: migrated_from(g),
            ingress_annotations: annotations,
            ..Default::default()
        };
        let mut verdict = empty_verdict(g.label(), g.gateway_key());
        let mut requests = Vec::new();
        match (
            stacks::ingress_stack(&objs, cfg, g),
            stacks::gateway_stack(&objs, cfg, g),
        ) {
            (Ok(i), Ok((gw, notes))) => {
                info.ingress_plan = to_string(&i, &facts);
                info.gateway_plan = to_string(&gw, &facts);
                verdict.notes = notes;
                verdict.attributes = attributes::compare(&i, &gw, services);
                requests = route_all(&Alb::new(&i, services), &Alb::new(&gw, services));
            }
            (Err(e), _) | (Ok(_), Err(e)) => {
                info.error = e.clone();
                verdict.problem = Some(e);
            }
        }
        out.push(finish(info, verdict, requests, services));
    }
    out.sort_by(|a, b| (&a.info.namespace, &a.info.name).cmp(&(&b.info.namespace, &b.info.name)));
    Ok(out)
}
