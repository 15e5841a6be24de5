//! config/iam/iam_policy.json allows every AWS operation our SDK clients call, and write access
//! is tied to the `elbv2.k8s.aws/cluster` tag where AWS supports a tag condition.

use super::*;
use serde_json::Value as Json;
use std::collections::BTreeSet;

fn policy() -> Json {
    policy_file("iam_policy.json")
}

fn policy_file(name: &str) -> Json {
    let text = std::fs::read_to_string(repo().join("config/iam").join(name)).expect("policy");
    serde_json::from_str(&text).expect("policy is JSON")
}

/// Every action a policy allows.
fn allowed(policy: &Json) -> BTreeSet<String> {
    policy["Statement"]
        .as_array()
        .expect("statements")
        .iter()
        .filter(|s| s["Effect"] == "Allow")
        .flat_map(actions)
        .collect()
}

fn actions(st: &Json) -> Vec<String> {
    match &st["Action"] {
        Json::String(a) => vec![a.clone()],
        Json::Array(a) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect(),
        _ => vec![],
    }
}

/// The text of `path` under the repository: a file, or every `.rs` file below a folder (a
/// service's SDK module may be split into several files).
fn source(path: &str) -> String {
    fn read(dir: &std::path::Path, out: &mut String) {
        if dir.is_file() {
            out.push_str(&std::fs::read_to_string(dir).expect("source file"));
            return;
        }
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() || p.extension().is_some_and(|x| x == "rs") {
                read(&p, out);
            }
        }
    }
    let mut out = String::new();
    read(&repo().join(path), &mut out);
    out
}

/// `self.client.describe_target_groups()` -> `DescribeTargetGroups`, for every call in `path`
/// (a file or a folder).
fn sdk_operations(path: &str) -> BTreeSet<String> {
    let src = source(path);
    let flat: String = src.split_whitespace().collect::<Vec<_>>().join("");
    let mut ops = BTreeSet::new();
    for piece in flat.split(".client.").skip(1) {
        let op: String = piece
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
            .collect();
        if op.is_empty() || !piece[op.len()..].starts_with('(') {
            continue;
        }
        ops.insert(
            op.split('_')
                .map(|w| w[..1].to_uppercase() + &w[1..])
                .collect(),
        );
    }
    ops
}

#[test]
fn policy_allows_every_operation_the_sdk_clients_call() {
    let policy = policy();
    let allowed: BTreeSet<String> = policy["Statement"]
        .as_array()
        .expect("statements")
        .iter()
        .filter(|s| s["Effect"] == "Allow")
        .flat_map(actions)
        .collect();
    let mut checked = 0;
    for (file, service) in [
        ("src/aws/sdk/elbv2", "elasticloadbalancing"),
        ("src/aws/sdk/ec2", "ec2"),
        ("src/aws/sdk/acm.rs", "acm"),
    ] {
        let ops = sdk_operations(file);
        assert!(ops.len() >= 2, "found too few SDK calls in {file}: {ops:?}");
        for op in ops {
            // Only with the gate EnableCertificateManagement, whose permissions upstream ships
            // in a policy of their own, as we do (`iam_policy_acm_certs.json`, checked below).
            if CERTIFICATE_MANAGEMENT.contains(&format!("acm:{op}").as_str()) {
                continue;
            }
            let action = format!("{service}:{op}");
            assert!(
                allowed.contains(&action),
                "iam_policy.json does not allow {action}"
            );
            checked += 1;
        }
    }
    assert!(checked > 30, "only {checked} operations checked");
    // The add-on clients (one module per service): each call under its service's prefix, and
    // no call of a module left without a policy check.
    for (file, prefix, calls) in [
        (
            "src/aws/sdk/addons/wafv2.rs",
            "wafv2",
            &[
                ("GetWebAclForResource", "GetWebACLForResource"),
                ("AssociateWebAcl", "AssociateWebACL"),
                ("DisassociateWebAcl", "DisassociateWebACL"),
                ("ListWebAcls", "ListWebACLs"),
            ][..],
        ),
        (
            "src/aws/sdk/addons/waf_regional.rs",
            "waf-regional",
            &[
                ("GetWebAclForResource", "GetWebACLForResource"),
                ("AssociateWebAcl", "AssociateWebACL"),
                ("DisassociateWebAcl", "DisassociateWebACL"),
            ][..],
        ),
        (
            "src/aws/sdk/addons/shield.rs",
            "shield",
            &[
                ("GetSubscriptionState", "GetSubscriptionState"),
                ("DescribeProtection", "DescribeProtection"),
                ("CreateProtection", "CreateProtection"),
                ("DeleteProtection", "DeleteProtection"),
            ][..],
        ),
    ] {
        let ops = sdk_operations(file);
        let covered: BTreeSet<String> = calls.iter().map(|(op, _)| op.to_string()).collect();
        assert_eq!(
            ops, covered,
            "an add-on call in {file} without a policy check"
        );
        for (_, action) in calls {
            let action = format!("{prefix}:{action}");
            assert!(
                allowed.contains(&action),
                "iam_policy.json does not allow {action}"
            );
        }
    }
    // Associating a web ACL with an ALB also needs ELB's permission, as upstream grants it.
    assert!(allowed.contains("elasticloadbalancing:SetWebAcl"));
    // The tagging client (gate EnableRGTAPI): one read, which upstream documents as needing
    // `tag:GetResources`.
    let tagging_ops = sdk_operations("src/aws/sdk/tagging.rs");
    assert_eq!(
        tagging_ops,
        BTreeSet::from(["GetResources".to_string()]),
        "a tagging call without a policy check"
    );
    assert!(
        allowed.contains("tag:GetResources"),
        "iam_policy.json does not allow tag:GetResources"
    );
}

/// What only certificate creation (gate `EnableCertificateManagement`) calls.
const CERTIFICATE_MANAGEMENT: &[&str] = &[
    "acm:AddTagsToCertificate",
    "acm:DeleteCertificate",
    "acm:ListTagsForCertificate",
    "acm:RequestCertificate",
    "route53:ChangeResourceRecordSets",
    "route53:ListHostedZones",
];

/// `iam_policy_acm_certs.json` (upstream's `iam_policy_acm_certs.json`, to attach beside the
/// main policy with the gate on) allows every call of certificate creation, and nothing else of
/// the ACM and Route 53 clients is left without a policy; requests need the cluster tag on the
/// request, deletes on the certificate.
#[test]
fn the_certificate_policy_allows_what_certificate_creation_calls() {
    let certs = policy_file("iam_policy_acm_certs.json");
    let allowed_certs = allowed(&certs);
    let main = allowed(&policy());
    let mut called: BTreeSet<String> = sdk_operations("src/aws/sdk/acm.rs")
        .into_iter()
        .map(|op| format!("acm:{op}"))
        .collect();
    called.extend(
        sdk_operations("src/aws/sdk/route53.rs")
            .into_iter()
            .map(|op| format!("route53:{op}")),
    );
    for action in &called {
        assert!(
            main.contains(action) || allowed_certs.contains(action),
            "neither policy allows {action}"
        );
    }
    for action in CERTIFICATE_MANAGEMENT {
        assert!(called.contains(*action), "{action} is not called any more");
        assert!(
            allowed_certs.contains(*action),
            "iam_policy_acm_certs.json does not allow {action}"
        );
    }
    let statements = certs["Statement"].as_array().unwrap();
    for (action, key) in [
        (
            "acm:RequestCertificate",
            "aws:RequestTag/elbv2.k8s.aws/cluster",
        ),
        (
            "acm:DeleteCertificate",
            "aws:ResourceTag/elbv2.k8s.aws/cluster",
        ),
    ] {
        for st in statements
            .iter()
            .filter(|s| actions(s).iter().any(|a| a == action))
        {
            assert!(
                st["Condition"].to_string().contains(key),
                "{action} without {key}: {st}"
            );
        }
    }
}

#[test]
fn writes_to_load_balancers_and_security_groups_need_the_cluster_tag() {
    let policy = policy();
    let statements = policy["Statement"].as_array().unwrap();
    let cluster_tag = |st: &Json| {
        let c = st["Condition"].to_string();
        c.contains("aws:ResourceTag/elbv2.k8s.aws/cluster")
            || c.contains("aws:RequestTag/elbv2.k8s.aws/cluster")
    };
    for action in [
        "elasticloadbalancing:CreateLoadBalancer",
        "elasticloadbalancing:CreateTargetGroup",
        "elasticloadbalancing:DeleteLoadBalancer",
        "elasticloadbalancing:DeleteTargetGroup",
        "elasticloadbalancing:ModifyLoadBalancerAttributes",
        "elasticloadbalancing:ModifyTargetGroup",
        "elasticloadbalancing:SetSecurityGroups",
        "elasticloadbalancing:RemoveTags",
        "ec2:DeleteSecurityGroup",
        "ec2:DeleteTags",
    ] {
        // Listener and rule ARNs are exempt, as upstream has them: listeners created by older
        // releases carry no cluster tag, and they can only exist on a load balancer we own anyway.
        let listener_only = |st: &Json| {
            st["Resource"].as_array().is_some_and(|r| {
                r.iter()
                    .all(|x| x.as_str().is_some_and(|x| x.contains(":listener")))
            })
        };
        let grants: Vec<&Json> = statements
            .iter()
            .filter(|s| actions(s).iter().any(|a| a == action) && !listener_only(s))
            .collect();
        assert!(!grants.is_empty(), "{action} not granted");
        for st in grants {
            assert!(
                cluster_tag(st),
                "{action} is granted without a cluster-tag condition: {st}"
            );
        }
    }
    // Nothing is granted with a wildcard action.
    for st in statements {
        assert!(
            actions(st).iter().all(|a| !a.contains('*')),
            "wildcard action in {st}"
        );
    }
}

/// The Global Accelerator client (`src/aws/sdk/global_accelerator`): every operation it sends
/// (each named where it goes through the caller) is allowed under `globalaccelerator:`, as
/// upstream's `aga_controller_iam_policy.json` grants it, and every write is tied to the
/// accelerator's `elbv2.k8s.aws/cluster` and `aga.k8s.aws/resource` tags.
#[test]
fn policy_allows_the_global_accelerator_calls_on_tagged_accelerators_only() {
    let flat: String = source("src/aws/sdk/global_accelerator")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("");
    let ops: BTreeSet<String> = flat
        .split("SVC,\"")
        .skip(1)
        .filter_map(|p| p.split('"').next().map(str::to_owned))
        .collect();
    let want: BTreeSet<String> = [
        "AddEndpoints",
        "CreateAccelerator",
        "CreateEndpointGroup",
        "CreateListener",
        "DeleteAccelerator",
        "DeleteEndpointGroup",
        "DeleteListener",
        "DescribeAccelerator",
        "ListAccelerators",
        "ListEndpointGroups",
        "ListListeners",
        "ListTagsForResource",
        "RemoveEndpoints",
        "TagResource",
        "UntagResource",
        "UpdateAccelerator",
        "UpdateEndpointGroup",
        "UpdateListener",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(
        ops, want,
        "a Global Accelerator call without a policy check"
    );

    let policy = policy();
    let statements = policy["Statement"].as_array().unwrap();
    let allowed: BTreeSet<String> = statements
        .iter()
        .filter(|s| s["Effect"] == "Allow")
        .flat_map(actions)
        .collect();
    for op in &ops {
        let action = format!("globalaccelerator:{op}");
        assert!(
            allowed.contains(&action),
            "iam_policy.json does not allow {action}"
        );
        let is_read = ["Describe", "List"].iter().any(|p| op.starts_with(p));
        if is_read {
            continue;
        }
        for st in statements.iter().filter(|s| actions(s).contains(&action)) {
            let c = st["Condition"].to_string();
            assert!(
                c.contains("elbv2.k8s.aws/cluster") && c.contains("aga.k8s.aws/resource"),
                "{action} is granted without the accelerator's tags: {st}"
            );
        }
    }
    // The service-linked role Global Accelerator needs for an account's first accelerator.
    assert!(statements.iter().any(|s| {
        actions(s).contains(&"iam:CreateServiceLinkedRole".to_string())
            && s["Condition"]
                .to_string()
                .contains("globalaccelerator.amazonaws.com")
    }));
}
