//! Shared fixtures for the webhook unit tests: a fake AWS account with a VPC, target groups on
//! demand, admission requests and decision helpers.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::Value;

use super::tg_cache::{TgCache, DEFAULT_TTL};
use super::{AdmissionRequest, Decision, Operation};
use crate::aws::fake::{FakeAws, FakeRoles};
use crate::aws::{Tags, TargetGroup};

pub struct World {
    pub aws: Arc<FakeAws>,
    pub vpc: String,
    pub cache: Arc<TgCache>,
    /// Another account, reachable through [`CROSS_ROLE`] with [`CROSS_EXTERNAL_ID`].
    pub other: Arc<FakeAws>,
    pub other_vpc: String,
    pub roles: Arc<FakeRoles>,
}

/// The role of [`World::other`].
pub const CROSS_ROLE: &str = "arn:aws:iam::999999999999:role/cross";
pub const CROSS_EXTERNAL_ID: &str = "ext-1";

impl World {
    pub fn new() -> Self {
        let aws = Arc::new(FakeAws::new());
        let vpc = aws.add_vpc("10.0.0.0/16", Tags::new());
        let other = Arc::new(FakeAws::in_account("999999999999"));
        let other_vpc = other.add_vpc("10.9.0.0/16", Tags::new());
        let roles = Arc::new(FakeRoles::default());
        roles.add(CROSS_ROLE, CROSS_EXTERNAL_ID, other.clone());
        let cache = Arc::new(TgCache::new(aws.clone(), DEFAULT_TTL).with_roles(roles.clone()));
        World {
            aws,
            vpc,
            cache,
            other,
            other_vpc,
            roles,
        }
    }

    /// An `ip` target group in the other account.
    pub async fn other_tg(&self, name: &str) -> TargetGroup {
        let tg = TargetGroup {
            name: name.into(),
            protocol: Some("HTTP".into()),
            port: Some(80),
            vpc_id: Some(self.other_vpc.clone()),
            target_type: "ip".into(),
            ip_address_type: Some("ipv4".into()),
            ..Default::default()
        };
        self.other.add_target_group(tg, Tags::new())
    }

    /// A target group in the VPC as AWS describes it, of any shape (`lambda` ones have no
    /// protocol, port or VPC; `alb` and odd IP address types included).
    pub async fn tg(
        &self,
        name: &str,
        target_type: &str,
        ip: Option<&str>,
        proto: &str,
    ) -> TargetGroup {
        let lambda = target_type == "lambda";
        let tg = TargetGroup {
            name: name.into(),
            protocol: (!lambda).then(|| proto.to_string()),
            port: (!lambda).then_some(80),
            vpc_id: (!lambda).then(|| self.vpc.clone()),
            target_type: target_type.into(),
            ip_address_type: Some(ip.unwrap_or("ipv4").to_string()),
            ..Default::default()
        };
        let tg = self.aws.add_target_group(tg, Tags::new());
        // Tests count the lookups made after this one.
        self.aws.clear_calls();
        tg
    }

    pub fn describes(&self) -> usize {
        self.aws.count("DescribeTargetGroups")
    }
}

pub fn req(op: Operation, obj: Value, old: Option<Value>) -> AdmissionRequest {
    AdmissionRequest {
        uid: "req-1".into(),
        operation: op,
        namespace: obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(String::from),
        name: None,
        object: Some(obj),
        old_object: old,
        dry_run: false,
    }
}

/// A request for `obj` in namespace `ns` (pods reach the webhooks before their namespace is set
/// in them).
pub fn req_in(op: Operation, ns: &str, obj: Value) -> AdmissionRequest {
    AdmissionRequest {
        namespace: Some(ns.into()),
        ..req(op, obj, None)
    }
}

/// Arbitrary JSON up to `depth` levels: the unknown fields a mutator must carry through.
pub fn arb_json(depth: u32) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        "[a-zA-Z0-9 _./-]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(depth, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z][a-zA-Z0-9]{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// `(category, message)` of a denial; panics (failing the test) on anything else.
pub fn denial(d: &Decision) -> (&str, &str) {
    match d {
        Decision::Deny { message, category } => (category.as_str(), message.as_str()),
        other => panic!("expected a denial, got {other:?}"),
    }
}

/// Applies a mutator's patch to `obj`.
pub fn apply(obj: &Value, d: &Decision) -> Value {
    let Decision::Patch(ops) = d else {
        panic!("expected a patch, got {d:?}")
    };
    let mut out = obj.clone();
    json_patch::patch(&mut out, ops).expect("patch applies");
    out
}
