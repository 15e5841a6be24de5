use super::*;
use crate::model::gateway::listeners::validate;
use serde_json::json;

fn gw(status: serde_json::Value) -> Gateway {
    serde_json::from_value(json!({
        "metadata": {"name": "gw", "namespace": "apps", "generation": 3},
        "spec": {"gatewayClassName": "alb", "listeners": [
            {"name": "http", "port": 80, "protocol": "HTTP"},
            {"name": "tcp", "port": 81, "protocol": "TCP"},
            {"name": "https", "port": 443, "protocol": "HTTPS",
             "allowedRoutes": {"kinds": [{"kind": "HTTPRoute"}]}}
        ]},
        "status": status
    }))
    .unwrap()
}

fn cond<'a>(conds: &'a [Condition], t: &str) -> &'a Condition {
    conds.iter().find(|c| c.type_ == t).unwrap()
}

fn listeners(g: &Gateway, programmed: bool) -> Vec<GatewayStatusListeners> {
    let v = validate(&g.spec.listeners, LbKind::Alb);
    let attached = BTreeMap::from([("http".to_string(), 2)]);
    listener_statuses(g, LbKind::Alb, &v, &attached, programmed)
}

#[test]
fn listener_entries_carry_kinds_attached_routes_and_upstreams_four_conditions() {
    let g = gw(json!({}));
    let ls = listeners(&g, true);
    let http = ls.iter().find(|l| l.name == "http").unwrap();
    assert_eq!(http.attached_routes, 2);
    assert_eq!(
        serde_json::to_value(&http.supported_kinds).unwrap(),
        json!([{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}])
    );
    let c = |t| cond(&http.conditions, t);
    assert_eq!(
        (
            c("Conflicted").status.as_str(),
            c("Conflicted").reason.as_str()
        ),
        ("False", "NoConflicts")
    );
    assert_eq!(c("Accepted").message, "Listener is accepted.");
    assert_eq!(c("ResolvedRefs").message, "Listener has all refs resolved.");
    assert_eq!(
        (
            c("Programmed").status.as_str(),
            c("Programmed").message.as_str()
        ),
        ("True", "Listener is programmed.")
    );
    assert_eq!(c("Programmed").observed_generation, Some(3));
    let tcp = ls.iter().find(|l| l.name == "tcp").unwrap();
    let c = |t| cond(&tcp.conditions, t);
    assert_eq!(
        (c("Accepted").status.as_str(), c("Accepted").reason.as_str()),
        ("False", "UnsupportedProtocol")
    );
    assert_eq!(
        c("Accepted").message,
        "Unsupported protocol TCP for listener tcp"
    );
    assert_eq!(
        (
            c("Programmed").reason.as_str(),
            c("Programmed").message.as_str()
        ),
        ("UnsupportedProtocol", "Listener is not accepted.")
    );
    let pending = listeners(&g, false);
    let http = pending.iter().find(|l| l.name == "http").unwrap();
    assert_eq!(
        (
            cond(&http.conditions, "Programmed").reason.as_str(),
            cond(&http.conditions, "Programmed").message.as_str()
        ),
        ("Pending", "Listener is pending to be programmed.")
    );
}

#[test]
fn an_active_lb_is_programmed_with_its_arn_and_a_second_pass_patches_nothing() {
    let g = gw(json!({}));
    let lb = Programmed {
        arn: "arn:aws:elasticloadbalancing:us-west-2:1:loadbalancer/app/x/1".into(),
        dns_name: "X-1.US-WEST-2.elb.amazonaws.com".into(),
        active: true,
    };
    let st = success(&g, listeners(&g, true), &lb, true, true, None).expect("first write");
    let conds = st.conditions.clone().unwrap();
    assert_eq!(cond(&conds, "Programmed").message, lb.arn);
    let acc = cond(&conds, "Accepted");
    assert_eq!(
        (
            acc.status.as_str(),
            acc.reason.as_str(),
            acc.message.as_str()
        ),
        ("True", "ListenersNotValid", ""),
        "True with ListenersNotValid when one listener is invalid, as upstream"
    );
    assert_eq!(
        serde_json::to_value(&st.addresses).unwrap(),
        json!([{"type": "Hostname", "value": "x-1.us-west-2.elb.amazonaws.com"}])
    );
    let again = gw(serde_json::to_value(&st).unwrap());
    let mut reordered = listeners(&again, true);
    reordered.reverse();
    assert!(
        success(&again, reordered, &lb, true, true, None).is_none(),
        "nothing changed: no patch"
    );
    let newer = Gateway {
        metadata: kube::api::ObjectMeta {
            generation: Some(4),
            ..again.metadata.clone()
        },
        ..again.clone()
    };
    assert!(
        success(&newer, listeners(&newer, true), &lb, true, true, None).is_some(),
        "a new generation is written"
    );
}

#[test]
fn a_provisioning_lb_is_pending_and_failures_set_accepted_false_once() {
    let g = gw(json!({}));
    let lb = Programmed {
        arn: "arn".into(),
        dns_name: "d".into(),
        active: false,
    };
    let st = success(&g, listeners(&g, false), &lb, true, false, None).unwrap();
    let p = cond(st.conditions.as_deref().unwrap(), "Programmed");
    assert_eq!(
        (p.status.as_str(), p.reason.as_str(), p.message.as_str()),
        ("Unknown", "Pending", PROGRAMMED_PENDING)
    );
    let failed = failure(&g, "Invalid", RECONCILE_ERROR).unwrap();
    let a = cond(failed.conditions.as_deref().unwrap(), "Accepted");
    assert_eq!(
        (a.status.as_str(), a.reason.as_str(), a.message.as_str()),
        (
            "False",
            "Invalid",
            "Check Gateway Events for more information."
        )
    );
    let shown = gw(serde_json::to_value(&failed).unwrap());
    assert!(failure(&shown, "Invalid", RECONCILE_ERROR).is_none());
    let long = "x".repeat(MAX_MESSAGE + 5);
    let t = failure(&g, "Invalid", &long).unwrap();
    let m = &cond(t.conditions.as_deref().unwrap(), "Accepted").message;
    assert_eq!(m.chars().count(), MAX_MESSAGE + 3);
    assert!(m.ends_with("..."));
}

#[test]
fn a_route_loader_error_sets_accepted_false_listeners_not_valid_with_its_message() {
    let g = gw(json!({}));
    let message = "Gateway (apps:edge) is not usable yet, LB ARN is not provisioned). Invalid data can be found in route (TCPRoute, apps:r)";
    let loader = GatewayError::Model(ModelError::ListenersNotValid {
        gateway: "apps/gw".into(),
        message: message.into(),
    });
    let st = build_failure(&g, &loader).unwrap();
    let a = cond(st.conditions.as_deref().unwrap(), "Accepted");
    assert_eq!(
        (a.status.as_str(), a.reason.as_str(), a.message.as_str()),
        ("False", "ListenersNotValid", message)
    );
    assert_eq!(a.observed_generation, Some(3));
    // Upstream writes only Accepted when the loader fails: no Programmed, no listeners.
    assert_eq!(st.conditions.as_deref().unwrap().len(), 1);
    assert!(st.listeners.is_none());
    let other = GatewayError::Model(ModelError::Gateway {
        gateway: "apps/gw".into(),
        message: "bad".into(),
    });
    let st = build_failure(&g, &other).unwrap();
    let a = cond(st.conditions.as_deref().unwrap(), "Accepted");
    assert_eq!(
        (a.reason.as_str(), a.message.as_str()),
        ("Invalid", RECONCILE_ERROR)
    );
}
