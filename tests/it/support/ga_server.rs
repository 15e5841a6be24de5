//! A Global Accelerator API server for the end-to-end tests (moto does not serve the service):
//! AWS's `awsJson1_1` protocol — `POST /`, the operation in `X-Amz-Target:
//! GlobalAccelerator_V20180706.<Operation>`, JSON bodies with AWS's member names, errors as
//! `{"__type": <code>, "message": ...}` — in front of the in-memory fake
//! ([`FakeAws`]'s Global Accelerator, whose rules and call log the tests read). Only the calls
//! the controller makes are served; any other is `UnknownOperationException`.
//!
//! The fake is of its own account: the load balancers the controller names as endpoints live in
//! moto (another account to the fake), which the fake takes on trust as AWS would a resource it
//! cannot see from here.

use std::net::SocketAddr;
use std::sync::Arc;

use aws_load_balancer_controller::aws::fake::FakeAws;
use aws_load_balancer_controller::aws::global_accelerator::{
    DescribedAccelerator, DescribedEndpointGroup, DescribedListener,
};
use aws_load_balancer_controller::aws::{AwsError, GlobalAccelerator, Tags};
use aws_load_balancer_controller::model::aga::{
    Accelerator, AgaIpAddressType, AgaListener, AgaProtocol, ClientAffinity, EndpointConfiguration,
    EndpointGroup, PortOverride, PortRange,
};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

/// The target prefix of every Global Accelerator operation.
pub const TARGET_PREFIX: &str = "GlobalAccelerator_V20180706.";
/// The account of the fake behind the server.
pub const ACCOUNT: &str = "000000000000";

/// The server, listening on 127.0.0.1 until dropped.
pub struct GaServer {
    /// What the server serves from: inspect and step it (`finish_ga_deployments`).
    pub fake: Arc<FakeAws>,
    /// `http://127.0.0.1:<port>`, for `--aws-api-endpoints GlobalAccelerator=<endpoint>`.
    pub endpoint: String,
    task: tokio::task::JoinHandle<()>,
}

impl GaServer {
    pub async fn start() -> GaServer {
        let fake = Arc::new(FakeAws::in_account(ACCOUNT));
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .route("/", post(handle))
            .with_state(fake.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        GaServer {
            fake,
            endpoint: format!("http://{addr}"),
            task,
        }
    }
}

impl Drop for GaServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(State(fake): State<Arc<FakeAws>>, headers: HeaderMap, body: Bytes) -> Response {
    let target = headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let Some(op) = target.strip_prefix(TARGET_PREFIX) else {
        return error(&AwsError::Other {
            code: "UnknownOperationException".into(),
            message: format!("unknown target {target:?}"),
            status: Some(400),
        });
    };
    let input: Value = if body.is_empty() {
        json!({})
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                return error(&AwsError::Validation {
                    code: "SerializationException".into(),
                    message: e.to_string(),
                })
            }
        }
    };
    match call(fake.as_ref(), op, &input).await {
        Ok(out) => (
            StatusCode::OK,
            [("content-type", "application/x-amz-json-1.1")],
            out.to_string(),
        )
            .into_response(),
        Err(e) => error(&e),
    }
}

/// AWS's error answer: 500 for its own failures, 400 for everything else.
fn error(e: &AwsError) -> Response {
    let status = match e {
        AwsError::Other {
            status: Some(s), ..
        } if *s >= 500 => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    let body = json!({"__type": e.code(), "message": e.message()});
    (
        status,
        [
            ("content-type", "application/x-amz-json-1.1"),
            ("x-amzn-errortype", e.code()),
        ],
        body.to_string(),
    )
        .into_response()
}

fn s<'a>(i: &'a Value, key: &str) -> &'a str {
    i.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn strings(i: &Value, key: &str) -> Vec<String> {
    i.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

fn list<'a>(i: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    i.get(key).and_then(Value::as_array).into_iter().flatten()
}

fn int(v: &Value, key: &str) -> i32 {
    v.get(key).and_then(Value::as_i64).unwrap_or_default() as i32
}

fn tags_of(i: &Value) -> Tags {
    list(i, "Tags")
        .map(|t| (s(t, "Key").to_string(), s(t, "Value").to_string()))
        .collect()
}

fn ip_address_type(t: &str) -> AgaIpAddressType {
    match t {
        "DUAL_STACK" => AgaIpAddressType::DualStack,
        _ => AgaIpAddressType::Ipv4,
    }
}

fn protocol(p: &str) -> AgaProtocol {
    match p {
        "UDP" => AgaProtocol::Udp,
        _ => AgaProtocol::Tcp,
    }
}

fn affinity(i: &Value) -> Option<ClientAffinity> {
    match i.get("ClientAffinity").and_then(Value::as_str)? {
        "SOURCE_IP" => Some(ClientAffinity::SourceIp),
        _ => Some(ClientAffinity::None),
    }
}

fn port_ranges(i: &Value) -> Vec<PortRange> {
    list(i, "PortRanges")
        .map(|r| PortRange {
            from_port: int(r, "FromPort"),
            to_port: int(r, "ToPort"),
        })
        .collect()
}

fn port_overrides(i: &Value) -> Vec<PortOverride> {
    list(i, "PortOverrides")
        .map(|o| PortOverride {
            listener_port: int(o, "ListenerPort"),
            endpoint_port: int(o, "EndpointPort"),
        })
        .collect()
}

fn endpoints(i: &Value) -> Vec<EndpointConfiguration> {
    list(i, "EndpointConfigurations")
        .map(|e| EndpointConfiguration {
            endpoint_id: s(e, "EndpointId").to_string(),
            weight: e.get("Weight").and_then(Value::as_i64).map(|w| w as i32),
            client_ip_preservation_enabled: e
                .get("ClientIPPreservationEnabled")
                .and_then(Value::as_bool),
        })
        .collect()
}

fn listener_of(i: &Value) -> AgaListener {
    AgaListener {
        id: String::new(),
        protocol: protocol(s(i, "Protocol")),
        port_ranges: port_ranges(i),
        client_affinity: affinity(i),
        endpoint_groups: Vec::new(),
    }
}

fn group_of(i: &Value) -> EndpointGroup {
    EndpointGroup {
        id: String::new(),
        region: s(i, "EndpointGroupRegion").to_string(),
        traffic_dial_percentage: i
            .get("TrafficDialPercentage")
            .and_then(Value::as_f64)
            .map(|p| p as i32),
        port_overrides: port_overrides(i),
        endpoint_configurations: endpoints(i),
    }
}

fn accelerator_json(a: &DescribedAccelerator) -> Value {
    let mut v = json!({
        "AcceleratorArn": a.arn,
        "Name": a.name,
        "IpAddressType": a.ip_address_type,
        "Enabled": a.enabled,
        "IpSets": a.ip_sets.iter().map(|set| json!({
            "IpFamily": set.ip_address_family,
            "IpAddressFamily": set.ip_address_family,
            "IpAddresses": set.ip_addresses,
        })).collect::<Vec<_>>(),
        "DnsName": a.dns_name,
        "Status": a.status,
    });
    if let Some(d) = &a.dual_stack_dns_name {
        v["DualStackDnsName"] = json!(d);
    }
    v
}

fn listener_json(l: &DescribedListener) -> Value {
    let mut v = json!({
        "ListenerArn": l.arn,
        "Protocol": l.protocol,
        "PortRanges": l.port_ranges.iter()
            .map(|r| json!({"FromPort": r.from_port, "ToPort": r.to_port}))
            .collect::<Vec<_>>(),
    });
    if !l.client_affinity.is_empty() {
        v["ClientAffinity"] = json!(l.client_affinity);
    }
    v
}

fn group_json(g: &DescribedEndpointGroup) -> Value {
    let mut v = json!({
        "EndpointGroupArn": g.arn,
        "EndpointGroupRegion": g.region,
        "PortOverrides": g.port_overrides.iter()
            .map(|o| json!({"ListenerPort": o.listener_port, "EndpointPort": o.endpoint_port}))
            .collect::<Vec<_>>(),
        "EndpointDescriptions": g.endpoints.iter().map(|e| {
            let mut d = json!({"EndpointId": e.endpoint_id});
            if let Some(w) = e.weight {
                d["Weight"] = json!(w);
            }
            if let Some(c) = e.client_ip_preservation_enabled {
                d["ClientIPPreservationEnabled"] = json!(c);
            }
            if let Some(h) = &e.health_state {
                d["HealthState"] = json!(h);
            }
            d
        }).collect::<Vec<_>>(),
    });
    if let Some(p) = g.traffic_dial_percentage {
        v["TrafficDialPercentage"] = json!(p);
    }
    v
}

/// One operation on the fake, its answer in AWS's shape.
async fn call(fake: &FakeAws, op: &str, i: &Value) -> Result<Value, AwsError> {
    let ga: &dyn GlobalAccelerator = fake;
    Ok(match op {
        "ListAccelerators" => {
            let all = ga.list_accelerators().await?;
            json!({"Accelerators": all.iter().map(accelerator_json).collect::<Vec<_>>()})
        }
        "DescribeAccelerator" => {
            let a = ga.describe_accelerator(s(i, "AcceleratorArn")).await?;
            json!({"Accelerator": accelerator_json(&a)})
        }
        "CreateAccelerator" => {
            let want = Accelerator {
                name: s(i, "Name").to_string(),
                ip_addresses: strings(i, "IpAddresses"),
                ip_address_type: ip_address_type(s(i, "IpAddressType")),
                enabled: i.get("Enabled").and_then(Value::as_bool),
                tags: tags_of(i),
                crd_uid: s(i, "IdempotencyToken").to_string(),
                existing_arn: None,
            };
            json!({"Accelerator": accelerator_json(&ga.create_accelerator(&want).await?)})
        }
        "UpdateAccelerator" => {
            let arn = s(i, "AcceleratorArn");
            // The controller sends either its whole settings or `Enabled: false` alone.
            let out = if i.get("Name").is_some() {
                let want = Accelerator {
                    name: s(i, "Name").to_string(),
                    ip_addresses: Vec::new(),
                    ip_address_type: ip_address_type(s(i, "IpAddressType")),
                    enabled: i.get("Enabled").and_then(Value::as_bool),
                    tags: Tags::new(),
                    crd_uid: String::new(),
                    existing_arn: Some(arn.to_string()),
                };
                ga.update_accelerator(arn, &want).await?
            } else if i.get("Enabled") == Some(&Value::Bool(false)) {
                ga.disable_accelerator(arn).await?
            } else {
                return Err(AwsError::Validation {
                    code: "InvalidArgumentException".into(),
                    message: "UpdateAccelerator without a change this server knows".into(),
                });
            };
            json!({"Accelerator": accelerator_json(&out)})
        }
        "DeleteAccelerator" => {
            ga.delete_accelerator(s(i, "AcceleratorArn")).await?;
            json!({})
        }
        "ListTagsForResource" => {
            let tags = ga.list_tags_for_resource(s(i, "ResourceArn")).await?;
            json!({"Tags": tags.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>()})
        }
        "TagResource" => {
            ga.tag_resource(s(i, "ResourceArn"), &tags_of(i)).await?;
            json!({})
        }
        "UntagResource" => {
            ga.untag_resource(s(i, "ResourceArn"), &strings(i, "TagKeys"))
                .await?;
            json!({})
        }
        "ListListeners" => {
            let all = ga.list_listeners(s(i, "AcceleratorArn")).await?;
            json!({"Listeners": all.iter().map(listener_json).collect::<Vec<_>>()})
        }
        "CreateListener" => {
            let l = ga
                .create_listener(s(i, "AcceleratorArn"), &listener_of(i))
                .await?;
            json!({"Listener": listener_json(&l)})
        }
        "UpdateListener" => {
            let l = ga
                .update_listener(s(i, "ListenerArn"), &listener_of(i))
                .await?;
            json!({"Listener": listener_json(&l)})
        }
        "DeleteListener" => {
            ga.delete_listener(s(i, "ListenerArn")).await?;
            json!({})
        }
        "ListEndpointGroups" => {
            let all = ga.list_endpoint_groups(s(i, "ListenerArn")).await?;
            json!({"EndpointGroups": all.iter().map(group_json).collect::<Vec<_>>()})
        }
        "CreateEndpointGroup" => {
            let g = ga
                .create_endpoint_group(s(i, "ListenerArn"), &group_of(i))
                .await?;
            json!({"EndpointGroup": group_json(&g)})
        }
        "UpdateEndpointGroup" => {
            let arn = s(i, "EndpointGroupArn");
            // The controller's three shapes: endpoints alone, traffic dial with port overrides,
            // port overrides alone.
            let g = if i.get("EndpointConfigurations").is_some() {
                ga.set_endpoints(arn, &endpoints(i)).await?
            } else if i.get("TrafficDialPercentage").is_some() {
                ga.update_endpoint_group(arn, &group_of(i)).await?
            } else {
                ga.set_port_overrides(arn, &port_overrides(i)).await?
            };
            json!({"EndpointGroup": group_json(&g)})
        }
        "AddEndpoints" => {
            let arn = s(i, "EndpointGroupArn");
            ga.add_endpoints(arn, &endpoints(i)).await?;
            json!({"EndpointGroupArn": arn})
        }
        "RemoveEndpoints" => {
            let ids: Vec<String> = list(i, "EndpointIdentifiers")
                .map(|e| s(e, "EndpointId").to_string())
                .collect();
            ga.remove_endpoints(s(i, "EndpointGroupArn"), &ids).await?;
            json!({})
        }
        "DeleteEndpointGroup" => {
            ga.delete_endpoint_group(s(i, "EndpointGroupArn")).await?;
            json!({})
        }
        other => {
            return Err(AwsError::Other {
                code: "UnknownOperationException".into(),
                message: format!("{other} is not served by the test server"),
                status: Some(400),
            })
        }
    })
}
