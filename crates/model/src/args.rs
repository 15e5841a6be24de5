//! Command-line flags: upstream's names, defaults and spellings, in flattened clap groups.
//!
//! Values stay as written here; [`crate::config::Config::from_args`] validates them once, with
//! messages that name the flag, so bad values fail at start rather than at first use.

use clap::Args;

use crate::config::inert::Inert;

/// `--webhook-max-connections` default: room for every API server's keep-alive pool many times
/// over, while 4096 idle TLS connections stay within a few tens of MiB.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// `--webhook-max-inflight-body-bytes` default.
pub const DEFAULT_MAX_INFLIGHT_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Everything the controller process takes, grouped as upstream groups its config structs.
// (One paragraph only: clap makes this doc the `about` of whichever command flattens the
// groups.) The flags this build accepts but does not act on parse into `Inert` and are marked
// in `--help` from one table, `config::inert::INERT_FLAGS`, by `mark_help`, here, whatever
// command flattens these groups.
#[derive(Debug, Args)]
#[command(mut_args = crate::config::inert::mark_help)]
pub struct ControllerArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub aws: AwsArgs,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
    #[command(flatten)]
    pub webhook: WebhookArgs,
    #[command(flatten)]
    pub reconcile: ReconcileArgs,
    #[command(flatten)]
    pub log: LogArgs,
}

#[derive(Debug, Args)]
#[command(next_help_heading = "Controller")]
pub struct ClusterArgs {
    /// Kubernetes cluster name (required).
    #[arg(long, default_value = "")]
    pub cluster_name: String,
    /// Ingress class this controller satisfies ("" = also manage Ingresses without a class).
    #[arg(long, default_value = "alb")]
    pub ingress_class: String,
    /// Service loadBalancerClass this controller satisfies.
    #[arg(long, default_value = "service.k8s.aws/nlb")]
    pub load_balancer_class: String,
    /// Default AWS tags for resources we create (k1=v1,k2=v2).
    #[arg(long, default_value = "")]
    pub default_tags: String,
    /// AWS tag keys managed outside this controller (comma-separated).
    #[arg(long, default_value = "")]
    pub external_managed_tags: String,
    /// Default target type for target groups: instance or ip.
    #[arg(long, default_value = "instance")]
    pub default_target_type: String,
    /// Default scheme for load balancers: internal or internet-facing.
    #[arg(long, default_value = "internal")]
    pub default_load_balancer_scheme: String,
    /// Default SSL policy for HTTPS listeners.
    #[arg(long, default_value = "ELBSecurityPolicy-2016-08")]
    pub default_ssl_policy: String,
    /// Feature gates (Name=true,Name=false).
    #[arg(long, default_value = "")]
    pub feature_gates: String,
    /// Inject pod readiness gates for ip TargetGroupBindings.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub enable_pod_readiness_gate_inject: bool,
    /// Use a shared backend security group for LB-to-target traffic.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub enable_backend_security_group: bool,
    /// Backend security group id (sg-...); auto-created when empty.
    #[arg(long, default_value = "")]
    pub backend_security_group: String,
    /// Manage backend security group rules by default.
    #[arg(long, default_value = "false", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub enable_manage_backend_security_group_rules: bool,
    /// Use EndpointSlices instead of Endpoints for ip targets.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub enable_endpoint_slices: bool,
    /// Open all TCP ports from the LB to targets instead of the target ports only.
    #[arg(long, default_value = "false", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub disable_restricted_sg_rules: bool,
    /// Maximum targets registered per target group (0 = unlimited).
    #[arg(long, default_value_t = 0)]
    pub max_targets_per_target_group: u32,
    /// Reject the kubernetes.io/ingress.class annotation on new usage.
    #[arg(long, default_value = "false", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub disable_ingress_class_annotation: bool,
    /// Reject the alb.ingress.kubernetes.io/group.name annotation on new usage.
    #[arg(long, default_value = "false", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub disable_ingress_group_name_annotation: bool,
    /// Answer 503 for backends whose Service does not exist instead of failing the group.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub tolerate_non_existent_backend_service: bool,
    /// Answer 503 for unknown actions.* backends instead of failing the group.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub tolerate_non_existent_backend_action: bool,
    /// Security group tags that select target ENI security groups (k=v,...).
    #[arg(long, default_value = "")]
    pub service_target_eni_security_group_tags: String,
    /// ACM certificate discovery uses only certificates of these private CAs (comma-separated ARNs).
    #[arg(long, default_value = "")]
    pub allowed_certificate_authority_arns: String,
    /// Default private CA (ARN) of the ACM certificates created for Ingresses with
    /// create-acm-cert and no acm-pca-arn (gate EnableCertificateManagement); empty: Amazon-issued.
    #[arg(long, default_value = "")]
    pub default_pca_arn: String,
    /// Read only Secrets carrying this label (key=value): OIDC Secrets are watched with it as a
    /// label selector, and one without it counts as not found.
    #[arg(long, default_value = "")]
    pub required_secrets_label: String,
    /// Enable WAF Classic web ACLs (annotation waf-acl-id); off, as upstream, they are left unread.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub enable_waf: bool,
    /// Enable WAFv2 web ACLs (wafv2-acl-arn, wafv2-acl-name); off, as upstream, they are left unread.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub enable_wafv2: bool,
    /// Enable Shield Advanced protection (shield-advanced-protection); off, as upstream, it is left unread.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub enable_shield: bool,
    /// Environment variable that receives the generated QUIC server id (pod webhook /mutate-v1-pod-server-id).
    #[arg(long, default_value = "AWS_LBC_QUIC_SERVER_ID")]
    pub quic_environment_variable_name: String,
}

#[derive(Debug, Args)]
#[command(next_help_heading = "AWS")]
pub struct AwsArgs {
    /// AWS region (else AWS_REGION / AWS_DEFAULT_REGION, else instance metadata).
    #[arg(long, default_value = "")]
    pub aws_region: String,
    /// VPC id (else --aws-vpc-tags, else instance metadata).
    #[arg(long, default_value = "")]
    pub aws_vpc_id: String,
    /// Tags that select exactly one VPC (k=v,...).
    #[arg(long, default_value = "")]
    pub aws_vpc_tags: String,
    /// Deprecated: formerly the one --aws-vpc-tags key used for the VPC lookup.
    #[arg(long, default_value = "Name", value_parser = Inert::parse)]
    pub aws_vpc_tag_key: Inert,
    /// Custom endpoints (serviceID=URL,...), e.g. elasticloadbalancing=http://127.0.0.1:5000.
    #[arg(long, default_value = "")]
    pub aws_api_endpoints: String,
    /// Client-side throttles (serviceID:operationRegex=rate:burst,...).
    #[arg(long, default_value = "")]
    pub aws_api_throttle: String,
    /// Maximum retries of a failed AWS call.
    #[arg(long, default_value_t = 10)]
    pub aws_max_retries: u32,
}

#[derive(Debug, Args)]
#[command(next_help_heading = "Runtime")]
pub struct RuntimeArgs {
    /// Path to a kubeconfig; empty = in-cluster or the default kubeconfig.
    #[arg(long, default_value = "")]
    pub kubeconfig: String,
    /// Address of the Prometheus metrics endpoint.
    #[arg(long, default_value = ":8080")]
    pub metrics_bind_addr: String,
    /// Address of the /healthz and /readyz probes.
    #[arg(long, default_value = ":61779")]
    pub health_probe_bind_addr: String,
    /// Elect a leader with a coordination.k8s.io Lease.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub enable_leader_election: bool,
    /// Name of the leader-election Lease.
    #[arg(long, default_value = "aws-load-balancer-controller-leader")]
    pub leader_election_id: String,
    /// Namespace of the Lease (empty = the pod's namespace).
    #[arg(long, default_value = "", env = "POD_NAMESPACE")]
    pub leader_election_namespace: String,
    /// Namespace to watch (empty = all); several as a comma-separated list.
    #[arg(long, default_value = "")]
    pub watch_namespace: String,
    /// Period of the full resync that heals drift.
    #[arg(long, default_value = "10h")]
    pub sync_period: String,
    /// CA file (PEM): the webhook server then requires a client certificate issued by it.
    #[arg(long, default_value = "")]
    pub kube_ca_pem_filepath: String,
    /// How long to wait for in-flight requests on SIGTERM.
    #[arg(long, default_value = "10s")]
    pub shutdown_grace_period: String,
    /// Shadow mode: reconcile as usual but send no AWS or Kubernetes write; planned writes are
    /// logged and counted in awslbc_dry_run_pending_writes. Use its own --leader-election-id.
    #[arg(long, default_value = "false", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub dry_run: bool,
    /// With --dry-run: still write Warning events (about the planned writes' failures).
    #[arg(long, default_value = "false", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub dry_run_events: bool,
}

#[derive(Debug, Args)]
#[command(next_help_heading = "Webhook")]
pub struct WebhookArgs {
    /// Port of the admission webhook server.
    #[arg(long, default_value_t = 9443)]
    pub webhook_bind_port: u16,
    /// Address the webhook server binds to.
    #[arg(long, default_value = "0.0.0.0")]
    pub webhook_bind_host: String,
    /// Directory holding the serving certificate and key.
    #[arg(long, default_value = "/tmp/k8s-webhook-server/serving-certs")]
    pub webhook_cert_dir: String,
    /// Certificate file name in --webhook-cert-dir.
    #[arg(long, default_value = "tls.crt")]
    pub webhook_cert_file: String,
    /// Key file name in --webhook-cert-dir.
    #[arg(long, default_value = "tls.key")]
    pub webhook_key_file: String,
    /// Lowest TLS version offered: 1.3 (default) or 1.2 (ECDHE + AEAD suites only).
    #[arg(long, default_value = "1.3")]
    pub webhook_tls_min_version: String,
    /// Largest admission request body accepted, in bytes.
    #[arg(long, default_value_t = 3 * 1024 * 1024)]
    pub webhook_max_body_bytes: usize,
    /// Time allowed to send request headers and body.
    #[arg(long, default_value = "10s")]
    pub webhook_request_timeout: String,
    /// Open webhook connections at most; at the cap a new client takes the place of the
    /// connection idle for longest, else of one whose body stalled (both at least 1s), else of
    /// a peer holding over a quarter of them; else it waits until one closes.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS)]
    pub webhook_max_connections: usize,
    /// Admission request bodies held in memory at once, in bytes, counted once they arrive;
    /// beyond it requests are answered 429 (part is kept for bodies up to 256 KiB, one peer
    /// holds at most a quarter).
    #[arg(long, default_value_t = DEFAULT_MAX_INFLIGHT_BODY_BYTES)]
    pub webhook_max_inflight_body_bytes: usize,
    /// Manage the serving certificate in this Secret (create, renew, patch caBundle); empty = use
    /// the files in --webhook-cert-dir as they are.
    #[arg(long, default_value = "", env = "AWS_LBC_WEBHOOK_TLS_SECRET")]
    pub webhook_cert_secret_name: String,
    /// Namespace of the certificate Secret (empty = the pod's namespace, else kube-system).
    #[arg(long, default_value = "")]
    pub webhook_cert_namespace: String,
    /// Webhook Service the certificate is issued for.
    #[arg(
        long,
        default_value = "aws-load-balancer-webhook-service",
        env = "AWS_LBC_WEBHOOK_SERVICE"
    )]
    pub webhook_service_name: String,
    /// Mutating and Validating webhook configuration whose caBundle is kept current.
    #[arg(
        long,
        default_value = "aws-load-balancer-webhook",
        env = "AWS_LBC_WEBHOOK_CONFIGURATION"
    )]
    pub webhook_config_name: String,
    /// Cluster DNS domain used in the managed certificate's names.
    #[arg(
        long,
        default_value = "cluster.local",
        env = "AWS_LBC_CLUSTER_DNS_DOMAIN"
    )]
    pub cluster_dns_domain: String,
    /// Validity of a managed serving certificate, in days (at most 365).
    #[arg(long, default_value_t = 365)]
    pub webhook_cert_validity_days: u32,
    /// Renew a managed certificate (or CA) when less than this is left.
    #[arg(long, default_value = "720h")]
    pub webhook_cert_renew_before: String,
    /// How often the managed certificate is checked.
    #[arg(long, default_value = "1m")]
    pub webhook_cert_check_interval: String,
    /// Time the API servers get to load a new caBundle before a new CA is served.
    #[arg(long, default_value = "10s")]
    pub webhook_ca_propagation_delay: String,
}

#[derive(Debug, Args)]
#[command(next_help_heading = "Reconcilers")]
pub struct ReconcileArgs {
    /// Concurrent Ingress group reconciles.
    #[arg(long, default_value_t = 3)]
    pub ingress_max_concurrent_reconciles: u32,
    /// Concurrent Service reconciles.
    #[arg(long, default_value_t = 3)]
    pub service_max_concurrent_reconciles: u32,
    /// Concurrent TargetGroupBinding reconciles.
    #[arg(long, default_value_t = 3)]
    pub targetgroupbinding_max_concurrent_reconciles: u32,
    /// Concurrent GatewayClass reconciles.
    #[arg(long, default_value_t = 3)]
    pub gateway_class_max_concurrent_reconciles: u32,
    /// Concurrent ALB Gateway reconciles.
    #[arg(long, default_value_t = 3)]
    pub alb_gateway_max_concurrent_reconciles: u32,
    /// Concurrent NLB Gateway reconciles.
    #[arg(long, default_value_t = 3)]
    pub nlb_gateway_max_concurrent_reconciles: u32,
    /// Concurrent GlobalAccelerator reconciles (0: one, as upstream).
    #[arg(long, default_value_t = 1)]
    pub globalaccelerator_max_concurrent_reconciles: u32,
    /// Maximum GlobalAccelerator retry backoff.
    #[arg(long, default_value = "1000s")]
    pub globalaccelerator_max_exponential_backoff_delay: String,
    /// Maximum TargetGroupBinding retry backoff (upstream default 1000s; ours caps far lower).
    #[arg(long, default_value = "1000s")]
    pub targetgroupbinding_max_exponential_backoff_delay: String,
    /// Requeue interval while gated pods wait for healthy targets.
    #[arg(long, default_value = "15s")]
    pub targetgroupbinding_requeue_duration: String,
    /// Requeue interval while a load balancer provisions before its capacity reservation is set.
    #[arg(long, default_value = "2m")]
    pub lb_stabilization_monitor_interval: String,
    /// Maximum retry backoff of an Ingress group reconcile.
    #[arg(long, default_value = "1m")]
    pub ingress_max_exponential_backoff_delay: String,
}

#[derive(Debug, Args)]
#[command(next_help_heading = "Logging")]
pub struct LogArgs {
    /// Log level: info or debug (RUST_LOG overrides for finer filters).
    #[arg(long, default_value = "info")]
    pub log_level: String,
    /// Log format: json (upstream's zap keys: level, ts, logger, msg) or text (for humans).
    #[arg(long, default_value = "json")]
    pub log_format: String,
}

/// Boolean flags take pflag's forms: `--flag`, `--flag=true`, `--flag=false` (no separate value).
fn go_bool(raw: &str) -> Result<bool, String> {
    crate::goflags::parse_bool(raw)
}
