//! The ALB target control agent sidecar as upstream's injector builds it: the settings of the
//! ALBTargetControlConfig, overridden by the pod's annotations (checked as upstream checks them,
//! with its messages), and the container they make.
//!
//! Upstream's checks follow Go's `net` and `strconv`: an address override is `host:port` split
//! as `net.SplitHostPort` splits it, with an IP literal for host and a 32-bit integer for port;
//! the configuration's own addresses are taken as they are (the CRD's pattern checked them), only
//! their ports are read for the container's ports (0 when there is none to read).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::LazyLock;

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde_json::{json, Map, Value};

use crate::crd::AlbTargetControlConfigSpec;

/// Name of the injected container; a pod that has one already is left as it is.
pub const CONTAINER_NAME: &str = "alb-target-control-agent";

pub const ENV_DATA_ADDRESS: &str = "TARGET_CONTROL_DATA_ADDRESS";
pub const ENV_CONTROL_ADDRESS: &str = "TARGET_CONTROL_CONTROL_ADDRESS";
pub const ENV_DESTINATION_ADDRESS: &str = "TARGET_CONTROL_DESTINATION_ADDRESS";
pub const ENV_MAX_CONCURRENCY: &str = "TARGET_CONTROL_MAX_CONCURRENCY";
pub const ENV_TLS_CERT_PATH: &str = "TARGET_CONTROL_TLS_CERT_PATH";
pub const ENV_TLS_KEY_PATH: &str = "TARGET_CONTROL_TLS_KEY_PATH";
pub const ENV_TLS_SECURITY_POLICY: &str = "TARGET_CONTROL_TLS_SECURITY_POLICY";
pub const ENV_PROTOCOL_VERSION: &str = "TARGET_CONTROL_PROTOCOL_VERSION";
pub const ENV_RUST_LOG: &str = "RUST_LOG";

/// Names of the container's two ports.
pub const PORT_DATA: &str = "data";
pub const PORT_CONTROL: &str = "control";

/// Pod annotations that override the configuration, one setting each.
pub mod annotations {
    pub const IMAGE: &str = "elbv2.k8s.aws/alb-target-control-agent-image";
    pub const DATA_ADDRESS: &str = "elbv2.k8s.aws/alb-target-control-agent-data-address";
    pub const CONTROL_ADDRESS: &str = "elbv2.k8s.aws/alb-target-control-agent-control-address";
    pub const DESTINATION_ADDRESS: &str =
        "elbv2.k8s.aws/alb-target-control-agent-destination-address";
    pub const MAX_CONCURRENCY: &str = "elbv2.k8s.aws/alb-target-control-agent-max-concurrency";
    pub const TLS_CERT_PATH: &str = "elbv2.k8s.aws/alb-target-control-agent-tls-cert-path";
    pub const TLS_KEY_PATH: &str = "elbv2.k8s.aws/alb-target-control-agent-tls-key-path";
    pub const TLS_SECURITY_POLICY: &str =
        "elbv2.k8s.aws/alb-target-control-agent-tls-security-policy";
    pub const PROTOCOL_VERSION: &str = "elbv2.k8s.aws/alb-target-control-agent-protocol-version";
    pub const RUST_LOG: &str = "elbv2.k8s.aws/alb-target-control-agent-rust-log";
    pub const CPU_REQUEST: &str = "elbv2.k8s.aws/alb-target-control-agent-cpu-request";
    pub const CPU_LIMIT: &str = "elbv2.k8s.aws/alb-target-control-agent-cpu-limit";
    pub const MEMORY_REQUEST: &str = "elbv2.k8s.aws/alb-target-control-agent-memory-request";
    pub const MEMORY_LIMIT: &str = "elbv2.k8s.aws/alb-target-control-agent-memory-limit";
}

/// An override upstream refuses; the pod is refused with this text.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AgentError {
    #[error("invalid concurrency value: {0} (must be 0-1000)")]
    Concurrency(String),
    #[error("invalid data address format: {0} (expected host:port format, e.g., 0.0.0.0:80)")]
    DataAddress(String),
    #[error("invalid control address format: {0} (expected host:port format, e.g., 0.0.0.0:3000)")]
    ControlAddress(String),
    #[error(
        "invalid destination address format: {0} (expected host:port format, e.g., 127.0.0.1:8080)"
    )]
    DestinationAddress(String),
    #[error("invalid protocol version: {0} (must be HTTP1, HTTP2, or GRPC)")]
    ProtocolVersion(String),
    #[error("invalid rust log level: {0} (must be debug, info, or error)")]
    RustLog(String),
}

/// The agent's effective settings for one pod.
#[derive(Clone, Debug, PartialEq)]
pub struct Agent {
    pub image: String,
    pub data_address: String,
    pub control_address: String,
    pub destination_address: String,
    pub max_concurrency: i32,
    /// Empty: not passed to the agent (as every optional text below).
    pub tls_cert_path: String,
    pub tls_key_path: String,
    pub tls_security_policy: String,
    pub protocol_version: String,
    pub rust_log: String,
    /// Ports of the data and control addresses (0 when an address has none).
    pub data_port: i32,
    pub control_port: i32,
    pub resources: ResourceRequirements,
    /// Resource annotations whose value is not a quantity, with that value. Upstream leaves them
    /// out without a word; the injector logs them.
    pub ignored: Vec<(&'static str, String)>,
}

/// The CRD's default of `maxConcurrency`, for a configuration stored without one (a CRD
/// installed without the default).
const DEFAULT_MAX_CONCURRENCY: i32 = 1;

impl Agent {
    /// The settings of `spec` overridden by the pod's annotations, checked in upstream's order
    /// (the first bad override is the error).
    pub fn new(
        spec: &AlbTargetControlConfigSpec,
        pod_annotations: &BTreeMap<&str, &str>,
    ) -> Result<Agent, AgentError> {
        use self::annotations as a;
        let text = |o: &Option<String>| o.clone().unwrap_or_default();
        let mut agent = Agent {
            image: spec.image.clone(),
            data_address: spec.data_address.clone(),
            control_address: spec.control_address.clone(),
            destination_address: spec.destination_address.clone(),
            max_concurrency: spec.max_concurrency.unwrap_or(DEFAULT_MAX_CONCURRENCY),
            tls_cert_path: text(&spec.tls_cert_path),
            tls_key_path: text(&spec.tls_key_path),
            tls_security_policy: text(&spec.tls_security_policy),
            protocol_version: text(&spec.protocol_version),
            rust_log: text(&spec.rust_log),
            data_port: port_of(&spec.data_address).unwrap_or(0),
            control_port: port_of(&spec.control_address).unwrap_or(0),
            resources: spec.resources.clone().unwrap_or_default(),
            ignored: Vec::new(),
        };
        let get = |k: &str| pod_annotations.get(k).map(|v| v.to_string());
        if let Some(v) = get(a::IMAGE) {
            agent.image = v;
        }
        if let Some(v) = get(a::MAX_CONCURRENCY) {
            agent.max_concurrency = concurrency(&v).ok_or(AgentError::Concurrency(v))?;
        }
        if let Some(v) = get(a::DATA_ADDRESS) {
            if !is_valid_address(&v) {
                return Err(AgentError::DataAddress(v));
            }
            agent.data_port = port_of(&v).unwrap_or(0);
            agent.data_address = v;
        }
        if let Some(v) = get(a::CONTROL_ADDRESS) {
            if !is_valid_address(&v) {
                return Err(AgentError::ControlAddress(v));
            }
            agent.control_port = port_of(&v).unwrap_or(0);
            agent.control_address = v;
        }
        if let Some(v) = get(a::DESTINATION_ADDRESS) {
            if !is_valid_address(&v) {
                return Err(AgentError::DestinationAddress(v));
            }
            agent.destination_address = v;
        }
        // The agent checks paths and the policy itself, as upstream leaves it to.
        if let Some(v) = get(a::TLS_CERT_PATH) {
            agent.tls_cert_path = v;
        }
        if let Some(v) = get(a::TLS_KEY_PATH) {
            agent.tls_key_path = v;
        }
        if let Some(v) = get(a::TLS_SECURITY_POLICY) {
            agent.tls_security_policy = v;
        }
        if let Some(v) = get(a::PROTOCOL_VERSION) {
            if !is_valid_protocol_version(&v) {
                return Err(AgentError::ProtocolVersion(v));
            }
            agent.protocol_version = v;
        }
        if let Some(v) = get(a::RUST_LOG) {
            if !is_valid_rust_log(&v) {
                return Err(AgentError::RustLog(v));
            }
            agent.rust_log = v;
        }
        for (key, limit, resource) in [
            (a::CPU_REQUEST, false, "cpu"),
            (a::CPU_LIMIT, true, "cpu"),
            (a::MEMORY_REQUEST, false, "memory"),
            (a::MEMORY_LIMIT, true, "memory"),
        ] {
            let Some(v) = get(key) else { continue };
            if !is_quantity(&v) {
                agent.ignored.push((key, v));
                continue;
            }
            let r = &mut agent.resources;
            let list = if limit {
                &mut r.limits
            } else {
                &mut r.requests
            };
            list.get_or_insert_with(BTreeMap::new)
                .insert(resource.to_string(), Quantity(v));
        }
        Ok(agent)
    }

    /// The sidecar container, as upstream's typed container serialises: `image` and env values
    /// left out when empty, `resources` always there (empty lists left out).
    pub fn container(&self) -> Value {
        let mut env = vec![
            env_var(ENV_DATA_ADDRESS, &self.data_address),
            env_var(ENV_CONTROL_ADDRESS, &self.control_address),
            env_var(ENV_DESTINATION_ADDRESS, &self.destination_address),
            env_var(ENV_MAX_CONCURRENCY, &self.max_concurrency.to_string()),
        ];
        for (name, value) in [
            (ENV_TLS_CERT_PATH, &self.tls_cert_path),
            (ENV_TLS_KEY_PATH, &self.tls_key_path),
            (ENV_TLS_SECURITY_POLICY, &self.tls_security_policy),
            (ENV_PROTOCOL_VERSION, &self.protocol_version),
            (ENV_RUST_LOG, &self.rust_log),
        ] {
            if !value.is_empty() {
                env.push(env_var(name, value));
            }
        }
        let mut c = Map::new();
        c.insert("name".into(), json!(CONTAINER_NAME));
        if !self.image.is_empty() {
            c.insert("image".into(), json!(self.image));
        }
        c.insert(
            "ports".into(),
            json!([
                {"name": PORT_DATA, "containerPort": self.data_port, "protocol": "TCP"},
                {"name": PORT_CONTROL, "containerPort": self.control_port, "protocol": "TCP"}
            ]),
        );
        c.insert("env".into(), Value::Array(env));
        c.insert("resources".into(), resources_json(&self.resources));
        Value::Object(c)
    }
}

fn env_var(name: &str, value: &str) -> Value {
    if value.is_empty() {
        json!({ "name": name })
    } else {
        json!({ "name": name, "value": value })
    }
}

fn resources_json(r: &ResourceRequirements) -> Value {
    let mut out = Map::new();
    let list = |l: &Option<BTreeMap<String, Quantity>>| {
        l.as_ref().filter(|l| !l.is_empty()).map(|l| {
            Value::Object(
                l.iter()
                    .map(|(k, q)| (k.clone(), Value::String(q.0.clone())))
                    .collect(),
            )
        })
    };
    if let Some(limits) = list(&r.limits) {
        out.insert("limits".into(), limits);
    }
    if let Some(requests) = list(&r.requests) {
        out.insert("requests".into(), requests);
    }
    if let Some(claims) = r.claims.as_ref().filter(|c| !c.is_empty()) {
        out.insert(
            "claims".into(),
            serde_json::to_value(claims).unwrap_or(Value::Null),
        );
    }
    Value::Object(out)
}

/// Go's `net.SplitHostPort`: `host:port` or `[host]:port`, the host without its brackets; `None`
/// where Go returns an error (no port, too many colons, stray brackets).
pub fn split_host_port(s: &str) -> Option<(&str, &str)> {
    let i = s.rfind(':')?;
    let (host, j, k) = if s.starts_with('[') {
        let end = s.find(']')?;
        // The closing bracket must be followed by the last colon and nothing else.
        if end + 1 != i {
            return None;
        }
        (&s[1..end], 1, end + 1)
    } else {
        let host = &s[..i];
        if host.contains(':') {
            return None;
        }
        (host, 0, 0)
    };
    if s[j..].contains('[') || s[k..].contains(']') {
        return None;
    }
    Some((host, &s[i + 1..]))
}

/// Upstream's `isValidAddress`: an IP literal (v4 or v6) and a port that parses as a 32-bit
/// integer (Go's `strconv.ParseInt(port, 10, 32)`: a sign is allowed, the range is not checked
/// further).
pub fn is_valid_address(address: &str) -> bool {
    let Some((host, port)) = split_host_port(address) else {
        return false;
    };
    port.parse::<i32>().is_ok() && host.parse::<IpAddr>().is_ok()
}

/// Upstream's `extractPortFromAddress`: the port of `host:port` as a 32-bit integer.
pub fn port_of(address: &str) -> Option<i32> {
    let (_, port) = split_host_port(address)?;
    port.parse().ok()
}

/// Upstream's `isValidConcurrency`, returning the value: an integer from 0 to 1000.
pub fn concurrency(text: &str) -> Option<i32> {
    text.parse::<i32>().ok().filter(|c| (0..=1000).contains(c))
}

pub fn is_valid_protocol_version(v: &str) -> bool {
    matches!(v, "HTTP1" | "HTTP2" | "GRPC")
}

pub fn is_valid_rust_log(v: &str) -> bool {
    matches!(v, "debug" | "info" | "error")
}

/// What Kubernetes' `resource.ParseQuantity` accepts: a signed decimal number with a binary
/// (`Ki`…`Ei`) or decimal (`n`…`E`) suffix or an integer exponent, no spaces.
static QUANTITY: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$",
    )
    .expect("static regex")
});

pub fn is_quantity(v: &str) -> bool {
    QUANTITY.is_match(v)
}

#[cfg(test)]
#[path = "target_control_agent_tests.rs"]
mod tests;
