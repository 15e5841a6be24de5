//! `/mutate-v1-pod-server-id`: QUIC server-id injection for pods behind NLB QUIC target groups.
//!
//! A pod annotated `service.beta.kubernetes.io/aws-load-balancer-quic-enabled-containers: a,b`
//! gets an environment variable (default `AWS_LBC_QUIC_SERVER_ID`) holding a fresh server id in
//! each listed container and init container. The patch is computed on the raw pod JSON and holds
//! only `add`s of that variable, so unknown pod fields can never be dropped.
//!
//! Id layout as upstream: 64 bits = 39+ bits of milliseconds since 2020-01-01 UTC, 17 bits of
//! worker id, 7 bits of sequence; 8 bytes big-endian, standard base64 (12 characters).

use super::{AdmissionRequest, Decision, Handler, Operation};
use base64::Engine;
use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation};
use serde_json::{json, Value};
use std::sync::Mutex;

pub const PATH: &str = "/mutate-v1-pod-server-id";
/// Comma-separated names of the containers that receive a server id.
pub const ANNOTATION: &str = "service.beta.kubernetes.io/aws-load-balancer-quic-enabled-containers";
/// Default of `--quic-environment-variable-name`.
pub const DEFAULT_ENV_NAME: &str = "AWS_LBC_QUIC_SERVER_ID";

/// 2020-01-01T00:00:00Z in Unix milliseconds: the id's time origin.
pub const EPOCH_MS: i64 = 1_577_836_800_000;
const WORKER_BITS: u32 = 17;
const SEQUENCE_BITS: u32 = 7;
pub const MAX_WORKER_ID: u32 = (1 << WORKER_BITS) - 1;
const MAX_SEQUENCE: u64 = (1 << SEQUENCE_BITS) - 1;

/// Milliseconds since the Unix epoch; injectable so tests control time.
pub type Clock = Box<dyn Fn() -> i64 + Send + Sync>;

struct State {
    last_ms: i64,
    sequence: u64,
}

/// Snowflake-style id source: unique per (millisecond, worker, sequence).
///
/// Upstream coordinates worker ids through a ConfigMap in kube-system (cluster-wide ConfigMap
/// writes); we draw the worker id at random per process instead, which keeps RBAC narrow. Two
/// replicas collide only if they share the worker id (1 in 131,072) *and* issue an id in the same
/// millisecond with the same random sequence start.
pub struct ServerIdGenerator {
    worker: u64,
    clock: Clock,
    state: Mutex<State>,
}

impl ServerIdGenerator {
    /// A generator with a random worker id and the system clock.
    pub fn new() -> Self {
        let worker = rand::random_range(0..=MAX_WORKER_ID);
        Self::with_clock(worker, Box::new(system_now_ms))
    }

    /// A generator with a fixed worker id (masked to 17 bits) and clock.
    pub fn with_clock(worker: u32, clock: Clock) -> Self {
        ServerIdGenerator {
            worker: u64::from(worker & MAX_WORKER_ID),
            clock,
            state: Mutex::new(State {
                last_ms: i64::MIN,
                sequence: 0,
            }),
        }
    }

    pub fn worker_id(&self) -> u32 {
        self.worker as u32
    }

    /// The next id as its 64-bit value.
    ///
    /// Upstream refuses to generate (and so denies the pod) when the clock steps back, and sleeps
    /// when a millisecond's sequence runs out. We never reuse a (millisecond, sequence) pair
    /// either way, without blocking: time never goes below the last millisecond used, and an
    /// exhausted millisecond borrows the next one.
    pub fn next_raw(&self) -> u64 {
        let now = (self.clock)();
        // A poisoned lock only means another request panicked mid-update; the state is two
        // integers that are always consistent, so keep going.
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut ms = now.max(st.last_ms);
        if ms == st.last_ms {
            st.sequence = (st.sequence + 1) & MAX_SEQUENCE;
            if st.sequence == 0 {
                ms += 1;
                st.sequence = rand::random_range(0..MAX_SEQUENCE);
            }
        } else {
            // A random start per millisecond, as upstream, makes cross-replica clashes unlikely.
            st.sequence = rand::random_range(0..MAX_SEQUENCE);
        }
        st.last_ms = ms;
        let ticks = (ms.wrapping_sub(EPOCH_MS)) as u64;
        (ticks << (WORKER_BITS + SEQUENCE_BITS)) | (self.worker << SEQUENCE_BITS) | st.sequence
    }

    /// The next id, encoded as upstream: 8 bytes big-endian in standard base64.
    pub fn next_id(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.next_raw().to_be_bytes())
    }
}

impl Default for ServerIdGenerator {
    fn default() -> Self {
        Self::new()
    }
}

fn system_now_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

pub struct QuicServerIdInjector {
    /// `--quic-environment-variable-name`.
    pub env_name: String,
    pub ids: ServerIdGenerator,
}

impl QuicServerIdInjector {
    pub fn new(env_name: impl Into<String>) -> Self {
        QuicServerIdInjector {
            env_name: env_name.into(),
            ids: ServerIdGenerator::new(),
        }
    }

    /// The patch adding a server id to every listed container lacking the variable, or an error
    /// text when the pod is not shaped like a pod.
    pub fn patch(&self, pod: &Value) -> Result<Vec<PatchOperation>, String> {
        let Some(listed) = pod
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(ANNOTATION))
        else {
            return Ok(Vec::new());
        };
        let listed = listed
            .as_str()
            .ok_or_else(|| format!("annotation {ANNOTATION} must be a string"))?;
        // Split on commas exactly as upstream does (no trimming): "a, b" names "a" and " b".
        let names: Vec<&str> = listed.split(',').collect();
        let mut ops = Vec::new();
        // Containers first, then init containers: the order upstream hands out ids in.
        for list in ["containers", "initContainers"] {
            let Some(containers) = pod.pointer(&format!("/spec/{list}")) else {
                continue;
            };
            let containers = match containers {
                Value::Null => continue,
                Value::Array(c) => c,
                _ => return Err(format!("spec.{list} must be a list")),
            };
            for (i, c) in containers.iter().enumerate() {
                let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
                if !names.contains(&name) {
                    continue;
                }
                let base = format!("/spec/{list}/{i}/env");
                let entry = |ids: &ServerIdGenerator| json!({"name": self.env_name, "value": ids.next_id()});
                match c.get("env") {
                    None | Some(Value::Null) => ops.push(add(&base, json!([entry(&self.ids)]))),
                    Some(Value::Array(env)) => {
                        // An id the pod already carries is kept, as upstream: never overwritten.
                        if !env
                            .iter()
                            .any(|e| e.get("name") == Some(&json!(self.env_name)))
                        {
                            ops.push(add(&format!("{base}/-"), entry(&self.ids)));
                        }
                    }
                    Some(_) => return Err(format!("spec.{list}[{i}].env must be a list")),
                }
            }
        }
        Ok(ops)
    }
}

fn add(path: &str, value: Value) -> PatchOperation {
    PatchOperation::Add(AddOperation {
        path: PointerBuf::parse(path).expect("pointer built from fixed segments and an index"),
        value,
    })
}

#[async_trait::async_trait]
impl Handler for QuicServerIdInjector {
    fn mutating(&self) -> bool {
        true
    }

    async fn admit(&self, req: &AdmissionRequest) -> Decision {
        if req.operation != Operation::Create {
            return Decision::Patch(Vec::new());
        }
        let Some(pod) = req.object.as_ref().filter(|p| p.is_object()) else {
            return Decision::errored("decodePod", "admission request carries no pod");
        };
        match self.patch(pod) {
            Ok(ops) => Decision::Patch(ops),
            Err(message) => Decision::errored("decodePod", message),
        }
    }
}

#[cfg(test)]
#[path = "quic_server_id_tests.rs"]
mod tests;
