//! Upstream's `Migrate` (`pkg/ingress2gateway/migrate.go`) once the input is read: nothing to
//! do without Ingresses; namespaces defaulted; the counts on stderr; the translation (its
//! warnings on stderr); the dry-run annotation on every Gateway; the files.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{
    translate, InputResources, MigrateError, MigrateOptions, OutputResources, WriteOptions,
    DRY_RUN_ANNOTATION, DRY_RUN_ENABLED_VALUE,
};

/// What a run produced.
#[derive(Debug, Clone)]
pub struct Migrated {
    /// The input as translated (namespaces defaulted).
    pub input: InputResources,
    pub output: OutputResources,
    /// The files written.
    pub files: Vec<PathBuf>,
}

/// Runs the migration of `resources` under `opts`, upstream's messages to `log`; `None` when
/// the input holds no Ingress.
pub fn run(
    opts: &MigrateOptions,
    resources: InputResources,
    log: &mut dyn Write,
) -> Result<Option<Migrated>, MigrateError> {
    let Some((resources, mut output)) = translate_input(resources, log)? else {
        return Ok(None);
    };
    if opts.dry_run {
        set_dry_run(&mut output);
    }
    let files = super::writer::write(
        &output,
        Path::new(&opts.output_dir),
        &WriteOptions {
            format: opts.output_format.clone(),
            split: opts.split.clone(),
        },
        log,
    )
    .map_err(|e| e.context("failed to write output"))?;
    Ok(Some(Migrated {
        input: resources,
        output,
        files,
    }))
}

/// The translation half of [`run`] (also the console's over files): nothing to do without
/// Ingresses; namespaces defaulted; the counts and the translation's warnings on `log`.
pub fn translate_input(
    mut resources: InputResources,
    log: &mut dyn Write,
) -> Result<Option<(InputResources, OutputResources)>, MigrateError> {
    if resources.ingresses.is_empty() {
        let _ = writeln!(log, "No Ingress resources found in input.");
        return Ok(None);
    }
    resources.normalize_namespaces();
    let _ = writeln!(
        log,
        "Found {} Ingress(es), {} Service(s), {} IngressClass(es), {} IngressClassParams",
        resources.ingresses.len(),
        resources.services.len(),
        resources.ingress_classes.len(),
        resources.ingress_class_params.len()
    );
    let output = translate(&resources).map_err(|e| e.context("failed to translate resources"))?;
    for w in &output.warnings {
        let _ = if w.ends_with('\n') {
            write!(log, "{w}")
        } else {
            writeln!(log, "{w}")
        };
    }
    Ok(Some((resources, output)))
}

/// Every Gateway gets `gateway.k8s.aws/dry-run: "true"`: the controller then writes the plan it
/// would deploy to the Gateway instead of creating anything.
pub fn set_dry_run(output: &mut OutputResources) {
    for gw in &mut output.gateways {
        gw.metadata
            .annotations
            .insert(DRY_RUN_ANNOTATION.into(), DRY_RUN_ENABLED_VALUE.into());
    }
}
