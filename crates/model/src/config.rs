//! The validated controller configuration, built once from the flags.
//!
//! Every check here produces a message that names the flag (or repeats upstream's own text where
//! users already know it), so a bad chart value fails the pod at start with a readable reason.

use crate::args::{ClusterArgs, ControllerArgs, ReconcileArgs};
use crate::goflags::{parse_bind_addr, parse_duration, parse_list, parse_string_map};
use crate::model::{LoadBalancerScheme, ModelConfig, TargetType};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

mod gates;
mod gateway;
pub mod inert;
pub mod secret_label;
mod tags;
mod throttle;
mod webhook;
pub use gates::{feature_gates, FEATURE_GATE_DEFAULTS, UNSUPPORTED_GATES};
pub use gateway::{DisabledGate, Gate, GatewayConfig, GATEWAY_V1, LBC_GATEWAY_V1};
pub use inert::{Inert, InertWarning, INERT_FLAGS};
pub use secret_label::RequiredLabel;
use tags::check_tag_keys;
pub use tags::TRACKING_TAG_KEYS;
pub use throttle::{parse_throttle, ThrottleRule};
pub use webhook::{ManagedCertConfig, TlsMinVersion, WebhookConfig, MAX_SERVING_DAYS};

/// Configuration errors; each message says which flag is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("kubernetes cluster name must be specified")]
    MissingClusterName,
    #[error("invalid value {value:?} for --{flag}: {reason}")]
    Invalid {
        flag: &'static str,
        value: String,
        reason: String,
    },
    #[error("invalid value {0} for default target type")]
    DefaultTargetType(String),
    #[error("tag key {key} cannot be specified in {flag} flag")]
    ReservedTagKey { key: String, flag: &'static str },
    #[error("unknown feature: {0}")]
    UnknownFeature(String),
    /// `--aws-api-throttle`, with upstream's message for the faulty part.
    #[error("invalid --aws-api-throttle: {0}")]
    ApiThrottle(String),
    /// A flag this build does not act on, set to something else than its default (see
    /// [`inert::INERT_FLAGS`]): `why` gives upstream's meaning and what this build lacks.
    #[error("--{flag}={value:?} is refused by this build: {why}; unset the flag")]
    Refused {
        flag: &'static str,
        value: String,
        why: &'static str,
    },
}

/// `--log-level`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    Info,
    Debug,
}

impl LogLevel {
    /// The level as `tracing` filters spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// The whole validated configuration.
#[derive(Clone, Debug)]
pub struct Config {
    pub cluster_name: String,
    pub ingress_class: String,
    pub load_balancer_class: String,
    pub default_tags: BTreeMap<String, String>,
    pub external_managed_tags: Vec<String>,
    /// `--default-target-type`, parsed once here.
    pub default_target_type: TargetType,
    /// `--default-load-balancer-scheme`, parsed once here.
    pub default_scheme: LoadBalancerScheme,
    pub default_ssl_policy: String,
    pub feature_gates: BTreeMap<String, bool>,
    pub enable_pod_readiness_gate_inject: bool,
    /// Env var the QUIC server-id webhook injects (`--quic-environment-variable-name`).
    pub quic_environment_variable_name: String,
    pub disable_ingress_class_annotation: bool,
    pub disable_ingress_group_name_annotation: bool,
    pub enable_backend_security_group: bool,
    pub backend_security_group: Option<String>,
    pub enable_endpoint_slices: bool,
    pub max_targets_per_target_group: u32,
    pub disable_restricted_sg_rules: bool,
    pub enable_manage_backend_sg_rules: bool,
    pub tolerate_non_existent_backend_service: bool,
    pub tolerate_non_existent_backend_action: bool,
    /// `--enable-waf`, `--enable-wafv2`, `--enable-shield`: addons are modelled only when on.
    pub enable_waf: bool,
    pub enable_wafv2: bool,
    pub enable_shield: bool,
    pub service_target_eni_sg_tags: BTreeMap<String, String>,
    /// `--allowed-certificate-authority-arns`: ACM discovery uses only these CAs' certificates.
    pub allowed_certificate_authority_arns: Vec<String>,
    /// `--default-pca-arn`: the private CA of the ACM certificates created for Ingresses
    /// (`create-acm-cert`, gate `EnableCertificateManagement`) without `acm-pca-arn`.
    pub default_pca_arn: Option<String>,
    /// `--required-secrets-label`: the label every Secret the controller reads must carry.
    pub required_secrets_label: Option<RequiredLabel>,
    pub aws_region: Option<String>,
    pub aws_vpc_id: Option<String>,
    pub aws_vpc_tags: BTreeMap<String, String>,
    pub aws_api_endpoints: BTreeMap<String, String>,
    /// `--aws-api-throttle`, parsed once here; empty means upstream's defaults only.
    pub aws_api_throttle: Vec<ThrottleRule>,
    pub aws_max_retries: u32,
    pub kubeconfig: Option<PathBuf>,
    pub metrics_bind: Option<SocketAddr>,
    pub health_probe_bind: Option<SocketAddr>,
    pub enable_leader_election: bool,
    pub leader_election_id: String,
    pub leader_election_namespace: Option<String>,
    /// `--watch-namespace`: empty for all namespaces, else these (comma-separated flag).
    pub watch_namespaces: Vec<String>,
    pub sync_period: Duration,
    pub shutdown_grace_period: Duration,
    /// `--dry-run`: shadow mode, every write intercepted (see `crate::diff::shadow`).
    pub dry_run: bool,
    /// `--dry-run-events`: Warning events still written in shadow mode.
    pub dry_run_events: bool,
    pub webhook: WebhookConfig,
    pub ingress_max_concurrent_reconciles: u32,
    /// `--service-max-concurrent-reconciles` (default 3).
    pub service_max_concurrent_reconciles: u32,
    pub targetgroupbinding_max_concurrent_reconciles: u32,
    /// `--globalaccelerator-max-concurrent-reconciles` (default 1; 0 counts as 1, as upstream).
    pub globalaccelerator_max_concurrent_reconciles: u32,
    /// `--globalaccelerator-max-exponential-backoff-delay` (default 1000s).
    pub globalaccelerator_max_backoff: Duration,
    /// Gateway API gates and concurrency flags.
    pub gateway: GatewayConfig,
    pub targetgroupbinding_max_backoff: Duration,
    pub targetgroupbinding_requeue: Duration,
    pub ingress_max_backoff: Duration,
    /// `--lb-stabilization-monitor-interval`: the requeue while a load balancer provisions
    /// before its capacity reservation can be set (default 2m).
    pub lb_stabilization_monitor_interval: Duration,
    pub log_level: LogLevel,
    pub log_format: LogFormat,
    /// Flags this build does not act on, set to a value it warns about: logged at start.
    pub inert_warnings: Vec<InertWarning>,
}

fn invalid(flag: &'static str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        flag,
        value: value.to_string(),
        reason: reason.into(),
    }
}

fn duration(flag: &'static str, raw: &str) -> Result<Duration, ConfigError> {
    parse_duration(raw).map_err(|e| invalid(flag, raw, e))
}

fn string_map(flag: &'static str, raw: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    parse_string_map(raw).map_err(|e| invalid(flag, raw, e))
}

fn non_empty(s: &str) -> Option<String> {
    (!s.trim().is_empty()).then(|| s.trim().to_string())
}

/// `--default-target-type`.
fn default_target_type(raw: &str) -> Result<TargetType, ConfigError> {
    match raw {
        "instance" => Ok(TargetType::Instance),
        "ip" => Ok(TargetType::Ip),
        other => Err(ConfigError::DefaultTargetType(other.to_string())),
    }
}

/// `--default-load-balancer-scheme`.
fn default_scheme(raw: &str) -> Result<LoadBalancerScheme, ConfigError> {
    match raw {
        "internal" => Ok(LoadBalancerScheme::Internal),
        "internet-facing" => Ok(LoadBalancerScheme::InternetFacing),
        other => Err(invalid(
            "default-load-balancer-scheme",
            other,
            "must be internal or internet-facing",
        )),
    }
}

/// `--backend-security-group`, and the rule-management flag that needs the backend group.
fn backend_security_group(c: &ClusterArgs) -> Result<Option<String>, ConfigError> {
    let sg = non_empty(&c.backend_security_group);
    if let Some(sg) = &sg {
        if !sg.starts_with("sg-") {
            return Err(invalid(
                "backend-security-group",
                sg,
                "security group id must start with sg-",
            ));
        }
    }
    if c.enable_manage_backend_security_group_rules && !c.enable_backend_security_group {
        return Err(invalid(
            "enable-manage-backend-security-group-rules",
            "true",
            "requires --enable-backend-security-group=true",
        ));
    }
    Ok(sg)
}

/// `--quic-environment-variable-name`: it names a variable of the pod's containers.
fn check_quic_environment_variable_name(name: &str) -> Result<(), ConfigError> {
    if name.is_empty() || name.contains('=') {
        return Err(invalid(
            "quic-environment-variable-name",
            name,
            "must be a non-empty environment variable name without '='",
        ));
    }
    Ok(())
}

/// `--aws-vpc-id`.
fn aws_vpc_id(raw: &str) -> Result<Option<String>, ConfigError> {
    let vpc = non_empty(raw);
    if let Some(vpc) = &vpc {
        if !vpc.starts_with("vpc-") {
            return Err(invalid("aws-vpc-id", vpc, "VPC id must start with vpc-"));
        }
    }
    Ok(vpc)
}

/// `--aws-api-endpoints`: service → http(s) URL.
fn aws_api_endpoints(raw: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    let endpoints = string_map("aws-api-endpoints", raw)?;
    for (service, url) in &endpoints {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid(
                "aws-api-endpoints",
                url,
                format!("endpoint for {service} must be an http(s) URL"),
            ));
        }
    }
    Ok(endpoints)
}

/// `--log-level`.
fn log_level(raw: &str) -> Result<LogLevel, ConfigError> {
    match raw {
        "info" => Ok(LogLevel::Info),
        "debug" => Ok(LogLevel::Debug),
        other => Err(invalid("log-level", other, "must be info or debug")),
    }
}

/// `--log-format`.
fn log_format(raw: &str) -> Result<LogFormat, ConfigError> {
    match raw {
        "text" => Ok(LogFormat::Text),
        "json" => Ok(LogFormat::Json),
        other => Err(invalid("log-format", other, "must be text or json")),
    }
}

/// The controllers' `--*-max-concurrent-reconciles`: a controller without a worker would never
/// reconcile.
fn check_concurrency(rc: &ReconcileArgs) -> Result<(), ConfigError> {
    for (flag, v) in [
        (
            "ingress-max-concurrent-reconciles",
            rc.ingress_max_concurrent_reconciles,
        ),
        (
            "targetgroupbinding-max-concurrent-reconciles",
            rc.targetgroupbinding_max_concurrent_reconciles,
        ),
        (
            "service-max-concurrent-reconciles",
            rc.service_max_concurrent_reconciles,
        ),
    ] {
        if v == 0 {
            return Err(invalid(flag, "0", "must be at least 1"));
        }
    }
    Ok(())
}

/// `--lb-stabilization-monitor-interval`: positive.
fn lb_stabilization_monitor_interval(rc: &ReconcileArgs) -> Result<Duration, ConfigError> {
    let interval = duration(
        "lb-stabilization-monitor-interval",
        &rc.lb_stabilization_monitor_interval,
    )?;
    if interval.is_zero() {
        return Err(invalid(
            "lb-stabilization-monitor-interval",
            &rc.lb_stabilization_monitor_interval,
            "must be positive",
        ));
    }
    Ok(interval)
}

impl Config {
    /// Validates the flags; the first problem found is returned.
    pub fn from_args(a: &ControllerArgs) -> Result<Config, ConfigError> {
        let c = &a.cluster;
        if c.cluster_name.trim().is_empty() {
            return Err(ConfigError::MissingClusterName);
        }
        let default_target_type = default_target_type(&c.default_target_type)?;
        let default_scheme = default_scheme(&c.default_load_balancer_scheme)?;
        let default_tags = string_map("default-tags", &c.default_tags)?;
        check_tag_keys(default_tags.keys(), "default-tags")?;
        let external_managed_tags = parse_list(&c.external_managed_tags);
        check_tag_keys(external_managed_tags.iter(), "external-managed-tags")?;
        let backend_security_group = backend_security_group(c)?;
        let required_secrets_label = RequiredLabel::from_flag(&c.required_secrets_label)?;
        check_quic_environment_variable_name(&c.quic_environment_variable_name)?;
        let service_target_eni_sg_tags = string_map(
            "service-target-eni-security-group-tags",
            &c.service_target_eni_security_group_tags,
        )?;

        let aws = &a.aws;
        let aws_vpc_id = aws_vpc_id(&aws.aws_vpc_id)?;
        let aws_api_endpoints = aws_api_endpoints(&aws.aws_api_endpoints)?;

        let r = &a.runtime;
        if r.dry_run_events && !r.dry_run {
            return Err(invalid(
                "dry-run-events",
                "true",
                "only means something with --dry-run",
            ));
        }
        let webhook = webhook::from_args(&a.webhook, r)?;
        let log_level = log_level(&a.log.log_level)?;
        let log_format = log_format(&a.log.log_format)?;
        let rc = &a.reconcile;
        check_concurrency(rc)?;
        let lb_stabilization_monitor_interval = lb_stabilization_monitor_interval(rc)?;
        let inert_warnings = inert::check(&inert_values(a))?;

        let feature_gates = feature_gates(&c.feature_gates)?;
        let gateway = GatewayConfig::from_flags(&feature_gates, &c.feature_gates, rc)?;
        Ok(Config {
            cluster_name: c.cluster_name.trim().to_string(),
            ingress_class: c.ingress_class.clone(),
            load_balancer_class: c.load_balancer_class.clone(),
            default_tags,
            external_managed_tags,
            default_target_type,
            default_scheme,
            default_ssl_policy: c.default_ssl_policy.clone(),
            feature_gates,
            enable_pod_readiness_gate_inject: c.enable_pod_readiness_gate_inject,
            quic_environment_variable_name: c.quic_environment_variable_name.clone(),
            disable_ingress_class_annotation: c.disable_ingress_class_annotation,
            disable_ingress_group_name_annotation: c.disable_ingress_group_name_annotation,
            enable_backend_security_group: c.enable_backend_security_group,
            backend_security_group,
            enable_endpoint_slices: c.enable_endpoint_slices,
            max_targets_per_target_group: c.max_targets_per_target_group,
            disable_restricted_sg_rules: c.disable_restricted_sg_rules,
            enable_manage_backend_sg_rules: c.enable_manage_backend_security_group_rules,
            tolerate_non_existent_backend_service: c.tolerate_non_existent_backend_service,
            tolerate_non_existent_backend_action: c.tolerate_non_existent_backend_action,
            enable_waf: c.enable_waf,
            enable_wafv2: c.enable_wafv2,
            enable_shield: c.enable_shield,
            service_target_eni_sg_tags,
            allowed_certificate_authority_arns: parse_list(&c.allowed_certificate_authority_arns),
            default_pca_arn: non_empty(&c.default_pca_arn),
            required_secrets_label,
            aws_region: non_empty(&aws.aws_region),
            aws_vpc_id,
            aws_vpc_tags: string_map("aws-vpc-tags", &aws.aws_vpc_tags)?,
            aws_api_endpoints,
            aws_api_throttle: throttle::throttle_flag(&aws.aws_api_throttle)?,
            aws_max_retries: aws.aws_max_retries,
            kubeconfig: non_empty(&r.kubeconfig).map(PathBuf::from),
            metrics_bind: parse_bind_addr(&r.metrics_bind_addr)
                .map_err(|e| invalid("metrics-bind-addr", &r.metrics_bind_addr, e))?,
            health_probe_bind: parse_bind_addr(&r.health_probe_bind_addr)
                .map_err(|e| invalid("health-probe-bind-addr", &r.health_probe_bind_addr, e))?,
            enable_leader_election: r.enable_leader_election,
            leader_election_id: leader_election_id(r),
            leader_election_namespace: non_empty(&r.leader_election_namespace),
            watch_namespaces: parse_namespaces(&r.watch_namespace),
            sync_period: duration("sync-period", &r.sync_period)?,
            shutdown_grace_period: duration("shutdown-grace-period", &r.shutdown_grace_period)?,
            dry_run: r.dry_run,
            dry_run_events: r.dry_run_events,
            webhook,
            ingress_max_concurrent_reconciles: rc.ingress_max_concurrent_reconciles,
            service_max_concurrent_reconciles: rc.service_max_concurrent_reconciles,
            targetgroupbinding_max_concurrent_reconciles: rc
                .targetgroupbinding_max_concurrent_reconciles,
            globalaccelerator_max_concurrent_reconciles: rc
                .globalaccelerator_max_concurrent_reconciles,
            globalaccelerator_max_backoff: duration(
                "globalaccelerator-max-exponential-backoff-delay",
                &rc.globalaccelerator_max_exponential_backoff_delay,
            )?,
            gateway,
            targetgroupbinding_max_backoff: duration(
                "targetgroupbinding-max-exponential-backoff-delay",
                &rc.targetgroupbinding_max_exponential_backoff_delay,
            )?,
            targetgroupbinding_requeue: duration(
                "targetgroupbinding-requeue-duration",
                &rc.targetgroupbinding_requeue_duration,
            )?,
            ingress_max_backoff: duration(
                "ingress-max-exponential-backoff-delay",
                &rc.ingress_max_exponential_backoff_delay,
            )?,
            lb_stabilization_monitor_interval,
            log_level,
            log_format,
            inert_warnings,
        })
    }

    /// Whether a feature gate is on.
    pub fn gate(&self, name: &str) -> bool {
        self.feature_gates.get(name).copied().unwrap_or(false)
    }
}

/// The parsed value of every flag of [`INERT_FLAGS`]; the only place an [`Inert`] is matched
/// with its flag (a test sets each flag of the table and sees it judged by `inert::check`).
fn inert_values(a: &ControllerArgs) -> [(&'static str, &Inert); 1] {
    [("aws-vpc-tag-key", &a.aws.aws_vpc_tag_key)]
}

/// The settings the model builder reads; the one mapping shared by the Ingress controller
/// and `plan`, so a plan shows what the controller started with the same flags deploys.
impl From<&Config> for ModelConfig {
    fn from(cfg: &Config) -> Self {
        ModelConfig {
            cluster_name: cfg.cluster_name.clone(),
            vpc_id: cfg.aws_vpc_id.clone(),
            ingress_class: cfg.ingress_class.clone(),
            default_tags: cfg.default_tags.clone(),
            external_managed_tags: cfg.external_managed_tags.clone(),
            default_target_type: cfg.default_target_type,
            default_scheme: cfg.default_scheme,
            default_ssl_policy: cfg.default_ssl_policy.clone(),
            enable_backend_sg: cfg.enable_backend_security_group,
            backend_sg_id: cfg.backend_security_group.clone(),
            enable_manage_backend_sg_rules: cfg.enable_manage_backend_sg_rules,
            disable_restricted_sg_rules: cfg.disable_restricted_sg_rules,
            tolerate_non_existent_backend_service: cfg.tolerate_non_existent_backend_service,
            tolerate_non_existent_backend_action: cfg.tolerate_non_existent_backend_action,
            enable_waf: cfg.enable_waf,
            enable_wafv2: cfg.enable_wafv2,
            enable_shield: cfg.enable_shield,
            feature_gates: cfg.feature_gates.clone(),
            load_balancer_class: cfg.load_balancer_class.clone(),
            default_pca_arn: cfg.default_pca_arn.clone(),
        }
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;

/// Upstream's Lease name; a `--dry-run` shadow left on it moves to [`DRY_RUN_LEASE`] instead,
/// so it can never take the lease of the controller that owns the cluster.
pub const DEFAULT_LEASE: &str = "aws-load-balancer-controller-leader";
/// The Lease of a `--dry-run` shadow of the default id (the name the chart and docs give it).
pub const DRY_RUN_LEASE: &str = "aws-load-balancer-controller-dry-run";
/// What a `--dry-run` shadow appends to any other `--leader-election-id`.
pub const DRY_RUN_SUFFIX: &str = "-dry-run";

/// The Lease this process campaigns on. A `--dry-run` shadow is always on a `…-dry-run` Lease of
/// its own, whatever id it is given: upstream's default becomes [`DRY_RUN_LEASE`], any other id
/// `X` becomes `X-dry-run`, and an id already ending in `-dry-run` (the chart passes one) stays.
/// So a shadow started with the owner's id never takes the owner's Lease.
fn leader_election_id(r: &crate::args::RuntimeArgs) -> String {
    let id = r.leader_election_id.as_str();
    if !r.dry_run || id.ends_with(DRY_RUN_SUFFIX) {
        id.to_string()
    } else if id == DEFAULT_LEASE {
        DRY_RUN_LEASE.to_string()
    } else {
        format!("{id}{DRY_RUN_SUFFIX}")
    }
}

/// `--watch-namespace`: empty for every namespace, else the listed ones (comma-separated).
pub fn parse_namespaces(raw: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for ns in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if !out.iter().any(|n| n == ns) {
            out.push(ns.to_string());
        }
    }
    out
}
