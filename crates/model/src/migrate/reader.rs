//! File input (`pkg/ingress2gateway/reader/file_reader.go`): `--input-dir`'s `.yaml`, `.yml`
//! and `.json` files (not recursive), then every `-f` file; multi-document YAML or JSON. The
//! four kinds the translation reads are kept; a document that is not YAML fails the run (with
//! upstream's wording), an empty one is skipped, and every other object is named on stderr as
//! upstream names those its scheme does not know. Unlike upstream, a `List` (what `kubectl get
//! -o yaml` writes) is read item by item rather than dropped in silence.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{InputResources, MigrateError, MigrateOptions};
use crate::crd::IngressClassParams;

/// The files `opts` names, directory first as upstream lists them.
pub fn input_files(opts: &MigrateOptions) -> Result<Vec<PathBuf>, MigrateError> {
    let mut files = Vec::new();
    if !opts.input_dir.is_empty() {
        files.extend(read_dir(Path::new(&opts.input_dir))?);
    }
    files.extend(opts.files.iter().map(PathBuf::from));
    if files.is_empty() {
        return Err(MigrateError::Read("no files found in input".into()));
    }
    Ok(files)
}

/// The `.yaml`, `.yml` and `.json` files directly in `dir` (case-insensitive extensions),
/// sorted by name as Go's `os.ReadDir` lists them.
pub fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, MigrateError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        MigrateError::Read(format!("error reading directory {}: {e}", dir.display()))
    })?;
    let mut files = Vec::new();
    for e in entries {
        let e = e.map_err(|e| {
            MigrateError::Read(format!("error reading directory {}: {e}", dir.display()))
        })?;
        let path = e.path();
        if path.is_dir() {
            continue;
        }
        let ext = path
            .extension()
            .and_then(|x| x.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        if matches!(ext.as_str(), "yaml" | "yml" | "json") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Reads the files into one set of resources; notes about skipped objects go to `log`.
pub fn read_files(files: &[PathBuf], log: &mut dyn Write) -> Result<InputResources, MigrateError> {
    let mut out = InputResources::default();
    for f in files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| MigrateError::Read(format!("error reading file {}: {e}", f.display())))?;
        decode_resources(&text, &mut out, log)
            .map_err(|e| MigrateError::Read(format!("error reading file {}: {e}", f.display())))?;
    }
    Ok(out)
}

/// Adds the objects of one manifest text to `out`.
pub fn decode_resources(
    text: &str,
    out: &mut InputResources,
    log: &mut dyn Write,
) -> Result<(), String> {
    let docs =
        crate::plan::parse_documents(text).map_err(|e| format!("error parsing document: {e}"))?;
    decode_documents(docs, out, log)
}

/// Adds parsed manifest documents to `out`.
pub fn decode_documents(
    docs: Vec<Value>,
    out: &mut InputResources,
    log: &mut dyn Write,
) -> Result<(), String> {
    for doc in docs {
        add_document(doc, out, log)?;
    }
    Ok(())
}

fn add_document(doc: Value, out: &mut InputResources, log: &mut dyn Write) -> Result<(), String> {
    match &doc {
        // Comments only, or an empty mapping: nothing to read.
        Value::Object(m) if m.is_empty() => return Ok(()),
        Value::Object(_) => {}
        other => {
            return Err(format!(
                "error parsing document: cannot unmarshal {} into a map",
                kind_of_value(other)
            ))
        }
    }
    let field = |k: &str| {
        doc.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    let name = doc
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let skip = |log: &mut dyn Write, why: String| {
        let _ = writeln!(log, "Skipping unrecognized resource in input: {why}");
    };
    if kind.is_empty() {
        skip(
            log,
            format!("Object 'Kind' is missing in {}", compact(&doc)),
        );
        return Ok(());
    }
    let decode_err = |e: serde_json::Error| format!("decoding {kind} {name}: {e}");
    match (api_version.as_str(), kind.as_str()) {
        ("networking.k8s.io/v1", "Ingress") => out
            .ingresses
            .push(serde_json::from_value(doc).map_err(decode_err)?),
        ("networking.k8s.io/v1", "IngressClass") => out
            .ingress_classes
            .push(serde_json::from_value(doc).map_err(decode_err)?),
        ("v1", "Service") => out
            .services
            .push(serde_json::from_value(doc).map_err(decode_err)?),
        ("elbv2.k8s.aws/v1beta1", "IngressClassParams") => out
            .ingress_class_params
            .push(IngressClassParams::decode(doc).map_err(decode_err)?),
        _ => skip(
            log,
            format!("{api_version} {kind} {name:?} is not an object migrate reads"),
        ),
    }
    Ok(())
}

fn kind_of_value(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "!!bool",
        Value::Number(_) => "!!int",
        Value::String(_) => "!!str",
        Value::Array(_) => "!!seq",
        Value::Object(_) => "!!map",
    }
}

/// A short one-line form of a document for a note.
fn compact(doc: &Value) -> String {
    let s = doc.to_string();
    if s.len() > 120 {
        let mut end = 120;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    } else {
        s
    }
}
