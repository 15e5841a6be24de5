//! The output files (`pkg/ingress2gateway/writer`): every object in one
//! `gateway-resources.<yaml|json>`, or with `--split namespace` the GatewayClass in
//! `gatewayclass.<ext>` and each namespace's objects in `<ns>/gateway-resources.<ext>`. Objects
//! go GatewayClass first, then by namespace (sorted): LoadBalancerConfigurations, Gateways,
//! HTTPRoutes, TargetGroupConfigurations, ListenerRuleConfigurations; YAML documents after the
//! first of the run start with `---`, as upstream's one printer writes them.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::goyaml::{to_json, to_yaml};
use super::options::{SPLIT_NAMESPACE, SPLIT_NONE};
use super::{go_quote, MigrateError, OutputResources, WriteOptions};

const CLUSTER_SCOPED_FILE: &str = "gatewayclass";
const NAMESPACED_FILE: &str = "gateway-resources";

/// An object as written: its JSON without `status`.
pub fn document<T: Serialize>(object: &T) -> Value {
    let mut v = serde_json::to_value(object).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.remove("status");
    }
    v
}

/// The cluster-scoped documents and the namespaced ones by namespace, in upstream's order.
pub fn partition_objects(out: &OutputResources) -> (Vec<Value>, BTreeMap<String, Vec<Value>>) {
    let cluster = vec![document(&out.gateway_class)];
    let mut by_ns: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut add = |doc: Value| {
        let ns = doc
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        by_ns.entry(ns).or_default().push(doc);
    };
    out.load_balancer_configurations
        .iter()
        .for_each(|o| add(document(o)));
    out.gateways.iter().for_each(|o| add(document(o)));
    out.http_routes.iter().for_each(|o| add(document(o)));
    out.target_group_configurations
        .iter()
        .for_each(|o| add(document(o)));
    out.listener_rule_configurations
        .iter()
        .for_each(|o| add(document(o)));
    (cluster, by_ns)
}

/// Every document in the order the single file holds them.
pub fn all_documents(out: &OutputResources) -> Vec<Value> {
    let (mut docs, by_ns) = partition_objects(out);
    for (_, d) in by_ns {
        docs.extend(d);
    }
    docs
}

/// upstream's printer: one per run, counting documents across files.
struct Printer {
    yaml: bool,
    printed: usize,
}

impl Printer {
    fn new(format: &str) -> Result<Printer, MigrateError> {
        match format {
            "yaml" => Ok(Printer {
                yaml: true,
                printed: 0,
            }),
            "json" => Ok(Printer {
                yaml: false,
                printed: 0,
            }),
            other => Err(MigrateError::Write(format!(
                "unsupported output format {}, must be yaml or json",
                go_quote(other)
            ))),
        }
    }

    fn print(&mut self, doc: &Value, text: &mut String) {
        self.printed += 1;
        if self.yaml {
            if self.printed > 1 {
                text.push_str("---\n");
            }
            text.push_str(&to_yaml(doc));
        } else {
            text.push_str(&to_json(doc));
        }
    }
}

/// One output file: where (relative to the output directory), its text, how many objects.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedFile {
    pub path: PathBuf,
    pub text: String,
    pub objects: usize,
}

/// The files of a run, in writing order.
pub fn render(
    out: &OutputResources,
    opts: &WriteOptions,
) -> Result<Vec<RenderedFile>, MigrateError> {
    let mut printer = Printer::new(&opts.format)?;
    let ext = &opts.format;
    let (cluster, by_ns) = partition_objects(out);
    let mut files = Vec::new();
    let file = |path: PathBuf, docs: &[Value], printer: &mut Printer| {
        let mut text = String::new();
        for d in docs {
            printer.print(d, &mut text);
        }
        RenderedFile {
            path,
            text,
            objects: docs.len(),
        }
    };
    match opts.split.as_str() {
        SPLIT_NONE => {
            let mut all = cluster;
            for (_, d) in by_ns {
                all.extend(d);
            }
            files.push(file(
                PathBuf::from(format!("{NAMESPACED_FILE}.{ext}")),
                &all,
                &mut printer,
            ));
        }
        SPLIT_NAMESPACE => {
            if !cluster.is_empty() {
                files.push(file(
                    PathBuf::from(format!("{CLUSTER_SCOPED_FILE}.{ext}")),
                    &cluster,
                    &mut printer,
                ));
            }
            for (ns, docs) in by_ns {
                if docs.is_empty() {
                    continue;
                }
                files.push(file(
                    Path::new(&ns).join(format!("{NAMESPACED_FILE}.{ext}")),
                    &docs,
                    &mut printer,
                ));
            }
        }
        other => {
            return Err(MigrateError::Write(format!(
                "unsupported split mode {}, must be {} or {}",
                go_quote(other),
                go_quote(SPLIT_NONE),
                go_quote(SPLIT_NAMESPACE)
            )))
        }
    }
    Ok(files)
}

/// Writes the files under `dir` (created as needed), telling `log` what each holds as upstream
/// does; returns their paths.
pub fn write(
    out: &OutputResources,
    dir: &Path,
    opts: &WriteOptions,
    log: &mut dyn Write,
) -> Result<Vec<PathBuf>, MigrateError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        MigrateError::Write(format!(
            "failed to create output directory {}: {e}",
            dir.display()
        ))
    })?;
    let files = render(out, opts)?;
    let mut written = Vec::new();
    for f in files {
        let path = dir.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                MigrateError::Write(format!(
                    "failed to create namespace directory {}: {e}",
                    parent.display()
                ))
            })?;
        }
        std::fs::write(&path, &f.text).map_err(|e| {
            MigrateError::Write(format!("failed to create file {}: {e}", path.display()))
        })?;
        let _ = writeln!(
            log,
            "Generated {} resource(s) in {}",
            f.objects,
            path.display()
        );
        written.push(path);
    }
    Ok(written)
}
