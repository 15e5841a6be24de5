//! Reading manifests for `plan`: files and directories, multi-document YAML or JSON, `List`
//! kinds flattened, and the kinds the model reads added to the cluster objects (Secrets with
//! only the keys OIDC reads).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::Value;

use crate::model::ClusterObjects;

pub(super) fn collect_files(p: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
            .with_context(|| format!("reading directory {}", p.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            let ext = e.extension().and_then(|x| x.to_str()).unwrap_or("");
            if e.is_dir() || matches!(ext, "yaml" | "yml" | "json") {
                collect_files(&e, files)?;
            }
        }
    } else if p.exists() {
        files.push(p.to_path_buf());
    } else {
        bail!("{}: no such file or directory", p.display());
    }
    Ok(())
}

/// Splits YAML (multi-document) or JSON text into objects; `List` kinds are flattened.
pub fn parse_documents(text: &str) -> anyhow::Result<Vec<Value>> {
    let mut docs = Vec::new();
    for de in serde_yaml::Deserializer::from_str(text) {
        let v: Value = serde::Deserialize::deserialize(de)?;
        if v.is_null() {
            continue;
        }
        if v.get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k.ends_with("List"))
        {
            docs.extend(
                v.get("items")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
            );
        } else {
            docs.push(v);
        }
    }
    Ok(docs)
}

/// One document of a manifest file, read on its own (see [`documents`]).
pub(super) struct Document {
    /// Its number in the file, from 1 (a stretch of nothing but comments is no document).
    pub number: usize,
    /// The line it starts on (its `---` line), from 1.
    pub line: usize,
    /// Its objects (a `List` flattened), or why it is not valid YAML.
    pub objects: anyhow::Result<Vec<Value>>,
}

/// A `---` line: the start of a YAML document (the line may carry the document's first node).
fn is_separator(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.chars().next().is_none_or(char::is_whitespace))
}

/// The lines of `chunk` that carry YAML: not blank, not a comment, not a bare `---` or `...`.
fn content_lines(chunk: &str) -> impl Iterator<Item = &str> {
    chunk.lines().filter_map(|line| {
        let rest = if is_separator(line) { &line[3..] } else { line };
        let rest = rest.trim();
        (!rest.is_empty() && !rest.starts_with('#') && rest != "...").then_some(rest)
    })
}

/// The documents of a manifest text (YAML, multi-document, or JSON), each read on its own: a
/// YAML stream stops at its first error, so a document that is not valid YAML would lose every
/// document after it. The text is split at its `---` lines (which the YAML specification does
/// not allow inside a scalar) and its directives (`%YAML`, which stay with the document they
/// precede); each document is read at its place in the file, so the line and column an error
/// names are the file's.
pub(super) fn documents(text: &str) -> Vec<Document> {
    let mut chunks: Vec<(usize, String)> = Vec::new();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        // A document starts at a `---` line, or at a directive (only a document's prefix
        // starts with `%`), unless only directives precede it.
        let starts = chunks.is_empty()
            || ((is_separator(line) || line.starts_with('%'))
                && !chunks.last().is_some_and(|(_, c)| {
                    let mut lines = content_lines(c).peekable();
                    lines.peek().is_some() && lines.all(|l| l.starts_with('%'))
                }));
        if starts {
            chunks.push((i + 1, String::new()));
        }
        if let Some((_, chunk)) = chunks.last_mut() {
            chunk.push_str(line);
        }
    }
    let mut out = Vec::new();
    for (line, chunk) in chunks {
        if content_lines(&chunk).next().is_none() {
            continue;
        }
        // Blank lines before it: the parser's line numbers are the file's.
        let placed = "\n".repeat(line - 1) + &chunk;
        out.push(Document {
            number: out.len() + 1,
            line,
            objects: parse_documents(&placed),
        });
    }
    out
}

/// Adds every object of a manifest text (YAML or JSON) to `objs`; other kinds are noted on stderr.
pub fn add_manifests(objs: &mut ClusterObjects, text: &str, file: &Path) -> anyhow::Result<()> {
    for doc in parse_documents(text).with_context(|| format!("parsing {}", file.display()))? {
        add_object(objs, doc, file)?;
    }
    Ok(())
}

/// The kinds `plan` and `diff -f` read that have no namespace.
const CLUSTER_SCOPED: [&str; 4] = [
    "Namespace",
    "IngressClass",
    "IngressClassParams",
    "GatewayClass",
];

/// A note when `doc` is a namespaced object outside `--watch-namespace`'s namespaces (all when
/// empty): the controllers watch only those, so it is neither reconciled nor counted in a
/// group or a Gateway's routes.
pub fn outside_watch(doc: &Value, namespaces: &[String]) -> Option<String> {
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
    if namespaces.is_empty() || CLUSTER_SCOPED.contains(&kind) {
        return None;
    }
    let meta = |k: &str| {
        doc.pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
    };
    let ns = meta("namespace").unwrap_or("default");
    if namespaces.iter().any(|w| w == ns) {
        return None;
    }
    let name = meta("name").unwrap_or("");
    Some(format!(
        "{kind} {ns}/{name} is outside --watch-namespace: the controller does not see it"
    ))
}

pub fn add_object(objs: &mut ClusterObjects, doc: Value, file: &Path) -> anyhow::Result<()> {
    let kind = doc
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let name = doc
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let ctx = || format!("{}: {kind} {name}", file.display());
    match kind.as_str() {
        "Ingress" => objs.ingresses.push(with_default_ns(
            serde_json::from_value(doc).with_context(ctx)?,
        )),
        "Service" => {
            let mut s: k8s_openapi::api::core::v1::Service =
                serde_json::from_value(doc).with_context(ctx)?;
            s.metadata.namespace.get_or_insert_with(|| "default".into());
            objs.services.push(s)
        }
        "IngressClass" => objs
            .ingress_classes
            .push(serde_json::from_value(doc).with_context(ctx)?),
        "IngressClassParams" => objs
            .ingress_class_params
            .push(crate::crd::IngressClassParams::decode(doc).with_context(ctx)?),
        "Namespace" => objs
            .namespaces
            .push(serde_json::from_value(doc).with_context(ctx)?),
        // OIDC client credentials; only what the model reads is kept, and never printed.
        "Secret" => {
            let mut s: k8s_openapi::api::core::v1::Secret =
                serde_json::from_value(doc).with_context(ctx)?;
            s.metadata.namespace.get_or_insert_with(|| "default".into());
            objs.secrets.push(crate::model::oidc::needed_part(&s))
        }
        _ => eprintln!(
            "note: {}: skipping {kind} {name} (not read by plan)",
            file.display()
        ),
    }
    Ok(())
}

fn with_default_ns(
    mut ing: k8s_openapi::api::networking::v1::Ingress,
) -> k8s_openapi::api::networking::v1::Ingress {
    ing.metadata
        .namespace
        .get_or_insert_with(|| "default".into());
    ing
}
