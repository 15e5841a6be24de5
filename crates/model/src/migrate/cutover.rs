//! The cutover plan printed after the files: what to apply in which order, how to run both
//! ALBs side by side while DNS the user owns shifts traffic (this tool changes no DNS record),
//! and that the Ingresses are deleted last. Concrete names (files, Gateways, hosts, Ingresses)
//! come from the run.

use std::fmt::Write;
use std::path::PathBuf;

use super::warnings::check_external_target_groups;
use super::{InputResources, OutputResources};

/// The plan for this run's output.
pub fn cutover_plan(
    input: &InputResources,
    output: &OutputResources,
    files: &[PathBuf],
    dry_run: bool,
) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "Cutover plan");
    let _ = writeln!(t, "============");
    let _ = writeln!(
        t,
        "The generated objects replace only the Ingresses below; Deployments and Services stay as they are (HTTPRoutes name the same Services)."
    );
    let _ = writeln!(t);
    let _ = writeln!(t, "1. Apply the generated files:");
    for f in files {
        let _ = writeln!(t, "     kubectl apply -f {}", f.display());
    }
    if dry_run {
        let _ = writeln!(
            t,
            "   Every Gateway carries gateway.k8s.aws/dry-run: \"true\": the controller writes the plan it would deploy to the Gateway and creates nothing in AWS, so the objects may be applied in any order."
        );
    } else {
        let _ = writeln!(
            t,
            "   The Gateways are live (--dry-run=false): apply the GatewayClass, LoadBalancerConfigurations, TargetGroupConfigurations and ListenerRuleConfigurations before the Gateways and HTTPRoutes, or the first ALB, rules and target groups are built without their settings (a target type cannot change without replacing the target group)."
        );
    }
    let _ = writeln!(t);
    let mut step = 2;
    if dry_run {
        let _ = writeln!(t, "{step}. Review each Gateway's plan, then make it live (a second ALB is created beside the Ingress ALB; both send traffic to the same Pods):");
        for g in &output.groups {
            let _ = writeln!(
                t,
                "     kubectl get gateway -n {ns} {gw} -o jsonpath='{{.metadata.annotations.gateway\\.k8s\\.aws/dry-run-plan}}'",
                ns = g.namespace,
                gw = g.gateway
            );
            let _ = writeln!(
                t,
                "     kubectl annotate -n {ns} gateway {gw} gateway.k8s.aws/dry-run-",
                ns = g.namespace,
                gw = g.gateway
            );
        }
        step += 1;
        let _ = writeln!(t);
    }
    let _ = writeln!(
        t,
        "{step}. Wait until each Gateway is Programmed and has an address (kubectl get gateway -A), and its target groups report healthy targets. Test it directly with the Host header of each host below."
    );
    step += 1;
    let _ = writeln!(t);
    let _ = writeln!(
        t,
        "{step}. Run both ALBs side by side and shift traffic with weighted DNS records you own (for example Route 53 weighted alias records, one per ALB): start the Gateway ALB at a small weight, watch 5xx and latency, raise it to 100. This tool changes no DNS record; clients that use an ALB's own DNS name must be moved by you. Hosts per Gateway:"
    );
    for g in &output.groups {
        let hosts = if g.hostnames.is_empty() {
            "(no host: every host)".to_string()
        } else {
            g.hostnames.join(", ")
        };
        let _ = writeln!(t, "     {} ({}): {hosts}", g.gateway_key(), g.label());
    }
    step += 1;
    let external: Vec<String> = input
        .ingresses
        .iter()
        .filter(|i| check_external_target_groups(i))
        .map(|i| super::key_of(&i.metadata))
        .collect();
    if !external.is_empty() {
        let _ = writeln!(t);
        let _ = writeln!(
            t,
            "{step}. These Ingresses forward to existing target groups, which serve one ALB at a time: delete their rules (or the Ingresses) before the Gateway ALB attaches them, or point the Gateway at a duplicate target group: {}",
            external.join(", ")
        );
        step += 1;
    }
    let _ = writeln!(t);
    let _ = writeln!(
        t,
        "{step}. Delete the Ingresses last, once all traffic has been on the Gateway ALBs for as long as you monitor (the controller then deletes the Ingress ALBs and their target groups):"
    );
    for g in &output.groups {
        for m in &g.members {
            let (ns, name) = m.split_once('/').unwrap_or(("default", m));
            let _ = writeln!(t, "     kubectl delete ingress -n {ns} {name}");
        }
    }
    let _ = writeln!(t);
    let _ = writeln!(
        t,
        "Until then, rollback is the DNS weights back to the Ingress ALBs; deleting the Gateways removes the Gateway ALBs."
    );
    t
}
