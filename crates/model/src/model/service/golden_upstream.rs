//! Test support: renders our `Stack` in the JSON shape of upstream's stack marshaller
//! (`deploy.NewDefaultStackMarshaller`), so upstream's expected stacks from
//! `pkg/service/model_builder_test.go` can be compared field for field. Tracking tags are left
//! out (upstream adds them at deploy time, not in the model).

use serde_json::{json, Map, Value};

use crate::model::types::*;

const LB: &str = "AWS::ElasticLoadBalancingV2::LoadBalancer";
const TG: &str = "AWS::ElasticLoadBalancingV2::TargetGroup";
const SG: &str = "AWS::EC2::SecurityGroup";

fn tg_arn_ref(id: &str) -> Value {
    json!({"$ref": format!("#/resources/{TG}/{id}/status/targetGroupARN")})
}

fn token(stack: &Stack, t: &Token) -> Value {
    match t {
        Token::Literal(s) => json!(s),
        Token::LoadBalancerArn => {
            json!({"$ref": format!("#/resources/{LB}/LoadBalancer/status/loadBalancerARN")})
        }
        Token::TargetGroupArn(id) => tg_arn_ref(id),
        Token::ManagedSecurityGroupId => {
            json!({"$ref": format!("#/resources/{SG}/ManagedLBSecurityGroup/status/groupID")})
        }
        Token::BackendSecurityGroupId => json!(stack
            .backend_security_group
            .as_ref()
            .and_then(|b| b.group_id.clone())
            .unwrap_or_default()),
        Token::ListenerArn(p) => json!(format!("listener:{p}")),
    }
}

/// User tags only (upstream's model has no tracking tags); None when empty.
fn user_tags(tags: &std::collections::BTreeMap<String, String>) -> Option<Value> {
    let user: Map<String, Value> = tags
        .iter()
        .filter(|(k, _)| {
            !k.starts_with("service.k8s.aws/") && k.as_str() != "elbv2.k8s.aws/cluster"
        })
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    (!user.is_empty()).then_some(Value::Object(user))
}

fn key_values(m: &std::collections::BTreeMap<String, String>) -> Value {
    m.iter()
        .map(|(k, v)| json!({"key": k, "value": v}))
        .collect()
}

fn put(o: &mut Value, k: &str, v: Option<Value>) {
    if let Some(v) = v {
        o[k] = v;
    }
}

fn permission(p: &IpPermission) -> Value {
    let mut o = json!({"ipProtocol": p.ip_protocol, "fromPort": p.from_port, "toPort": p.to_port});
    put(
        &mut o,
        "ipRanges",
        p.cidr_ipv4.as_ref().map(|c| json!([{"cidrIP": c}])),
    );
    put(
        &mut o,
        "ipv6Ranges",
        p.cidr_ipv6.as_ref().map(|c| json!([{"cidrIPv6": c}])),
    );
    put(
        &mut o,
        "prefixLists",
        p.prefix_list_id.as_ref().map(|c| json!([{"listID": c}])),
    );
    o
}

fn load_balancer(stack: &Stack, lb: &LoadBalancer) -> Value {
    let mut o = json!({
        "name": lb.name, "type": lb.lb_type, "scheme": lb.scheme,
        "ipAddressType": lb.ip_address_type,
        "subnetMapping": lb.subnet_mappings.iter().map(|m| {
            let mut s = json!({"subnetID": m.subnet_id});
            put(&mut s, "allocationID", m.allocation_id.as_ref().map(|v| json!(v)));
            put(&mut s, "privateIPv4Address", m.private_ipv4_address.as_ref().map(|v| json!(v)));
            put(&mut s, "ipv6Address", m.ipv6_address.as_ref().map(|v| json!(v)));
            put(&mut s, "sourceNatIpv6Prefix", m.source_nat_ipv6_prefix.as_ref().map(|v| json!(v)));
            s
        }).collect::<Vec<_>>(),
    });
    put(
        &mut o,
        "enablePrefixForIpv6SourceNat",
        lb.enable_prefix_for_ipv6_source_nat
            .as_ref()
            .map(|v| json!(v)),
    );
    put(
        &mut o,
        "securityGroupsInboundRulesOnPrivateLink",
        lb.security_groups_inbound_rules_on_private_link
            .as_ref()
            .map(|v| json!(v)),
    );
    let mut sgs: Vec<Value> = lb.security_groups.iter().map(|t| token(stack, t)).collect();
    sgs.extend(lb.security_group_names_or_ids.iter().map(|n| json!(n)));
    put(
        &mut o,
        "securityGroups",
        (!sgs.is_empty()).then(|| json!(sgs)),
    );
    put(
        &mut o,
        "loadBalancerAttributes",
        (!lb.attributes.is_empty()).then(|| key_values(&lb.attributes)),
    );
    put(
        &mut o,
        "minimumLoadBalancerCapacity",
        lb.minimum_capacity_units
            .map(|c| json!({"capacityUnits": c})),
    );
    put(&mut o, "tags", user_tags(&lb.tags));
    o
}

fn listener(stack: &Stack, l: &Listener) -> Value {
    let actions: Vec<Value> = l.default_actions.iter().map(|a| match a {
        Action::Forward { config } => json!({"type": "forward", "forwardConfig": {"targetGroups":
            config.target_groups.iter().map(|t| json!({"targetGroupARN": token(stack, &t.target_group_arn)})).collect::<Vec<_>>()}}),
        other => json!(other),
    }).collect();
    let mut o = json!({"loadBalancerARN": token(stack, &l.load_balancer_arn), "port": l.port,
        "protocol": l.protocol, "defaultActions": actions});
    // Upstream marshals an existing certificate's ARN as this (empty) reference.
    put(
        &mut o,
        "certificates",
        (!l.certificates.is_empty()).then(|| {
            l.certificates
                .iter()
                .map(|_| json!({"certificateARN": {"$ref": "#/resources///status/certificateARN"}}))
                .collect()
        }),
    );
    put(&mut o, "sslPolicy", l.ssl_policy.as_ref().map(|v| json!(v)));
    put(
        &mut o,
        "alpnPolicy",
        l.alpn_policy.as_ref().map(|v| json!([v])),
    );
    put(
        &mut o,
        "listenerAttributes",
        (!l.attributes.is_empty()).then(|| key_values(&l.attributes)),
    );
    put(&mut o, "tags", user_tags(&l.tags));
    o
}

fn target_group(tg: &TargetGroup) -> Value {
    let hc = &tg.health_check;
    let port = match hc.port.parse::<i32>() {
        Ok(n) => json!(n),
        Err(_) => json!(hc.port),
    };
    let mut h = json!({"port": port, "protocol": hc.protocol, "intervalSeconds": hc.interval_seconds,
        "timeoutSeconds": hc.timeout_seconds, "healthyThresholdCount": hc.healthy_threshold_count,
        "unhealthyThresholdCount": hc.unhealthy_threshold_count});
    put(
        &mut h,
        "path",
        (!hc.path.is_empty()).then(|| json!(hc.path)),
    );
    put(
        &mut h,
        "matcher",
        (!hc.matcher.is_empty()).then(|| json!(hc.matcher)),
    );
    let mut o = json!({"name": tg.name, "targetType": tg.target_type, "ipAddressType": tg.ip_address_type,
        "port": tg.port, "protocol": tg.protocol, "healthCheckConfig": h,
        "targetGroupAttributes": key_values(&tg.attributes)});
    put(&mut o, "tags", user_tags(&tg.tags));
    o
}

fn binding(stack: &Stack, b: &TargetGroupBindingResource) -> Value {
    let s = &b.spec;
    let mut spec = json!({"targetGroupARN": token(stack, &s.target_group_arn),
        "targetGroupProtocol": s.target_group_protocol, "targetType": s.target_type,
        "ipAddressType": s.ip_address_type, "serviceRef": {"name": s.service_name, "port": s.service_port}});
    put(&mut spec, "vpcID", s.vpc_id.as_ref().map(|v| json!(v)));
    if !s.networking.is_empty() {
        let rule = |r: &[NetworkingRule]| {
            let from = token(stack, &r[0].from_security_group);
            let ports: Vec<Value> = r
                .iter()
                .map(|r| {
                    let mut p = json!({"protocol": r.protocol});
                    put(&mut p, "port", r.port.as_ref().map(|v| json!(v)));
                    p
                })
                .collect();
            json!({"from": [{"securityGroup": {"groupID": from}}], "ports": ports})
        };
        let ingress: Vec<Value> = if s.networking_one_rule {
            vec![rule(&s.networking)]
        } else {
            s.networking.chunks(1).map(rule).collect()
        };
        spec["networking"] = json!({"ingress": ingress});
    }
    if !s.networking_from_cidrs.is_empty() {
        let ingress: Vec<Value> = s.networking_from_cidrs.iter().map(|r| json!({
            "from": r.from_cidrs.iter().map(|c| json!({"ipBlock": {"cidr": c}})).collect::<Vec<_>>(),
            "ports": r.ports,
        })).collect();
        spec["networking"] = json!({"ingress": ingress});
    }
    put(
        &mut spec,
        "nodeSelector",
        s.node_selector.as_ref().map(|m| json!({"matchLabels": m})),
    );
    if s.multi_cluster_target_group {
        spec["multiClusterTargetGroup"] = json!(true);
    }
    json!({"template": {"metadata": {"name": b.name, "namespace": b.namespace}, "spec": spec}})
}

/// The stack in upstream's marshalled shape.
pub fn render(stack: &Stack) -> Value {
    let mut res = Map::new();
    let mut group = |kind: &str, entries: Vec<(String, Value)>| {
        if !entries.is_empty() {
            let m: Map<String, Value> = entries
                .into_iter()
                .map(|(k, v)| (k, json!({"spec": v})))
                .collect();
            res.insert(kind.to_string(), Value::Object(m));
        }
    };
    if let Some(sg) = &stack.managed_security_group {
        let mut o = json!({"groupName": sg.name, "description": sg.description,
            "ingress": sg.ingress.iter().map(permission).collect::<Vec<_>>()});
        put(&mut o, "tags", user_tags(&sg.tags));
        group(SG, vec![(sg.id.clone(), o)]);
    }
    group(
        "AWS::ElasticLoadBalancingV2::Listener",
        stack
            .listeners
            .iter()
            .map(|l| (l.id.clone(), listener(stack, l)))
            .collect(),
    );
    group(
        LB,
        stack
            .load_balancer
            .iter()
            .map(|lb| (lb.id.clone(), load_balancer(stack, lb)))
            .collect(),
    );
    group(
        TG,
        stack
            .target_groups
            .iter()
            .map(|t| (t.id.clone(), target_group(t)))
            .collect(),
    );
    group(
        "K8S::ElasticLoadBalancingV2::TargetGroupBinding",
        stack
            .target_group_bindings
            .iter()
            .map(|b| (b.id.clone(), binding(stack, b)))
            .collect(),
    );
    json!({"id": stack.stack_id, "resources": res})
}
