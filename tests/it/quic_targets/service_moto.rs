//! A QUIC Service on moto through the real binary: its NLB gets a QUIC listener and a QUIC
//! target group (moto's launcher lets both be created and describes them back so, so a second
//! reconcile neither replaces nor modifies them); pods with the server ids our pod webhook
//! gives are registered with them, a pod that leaves is deregistered with its id, and a pod
//! without one is left out with a Warning. The ids are read from moto's request log.

use std::time::Duration;

use aws_load_balancer_controller::controller::tgb::quic::{DEFAULT_ENV_NAME, REASON_MISSING};
use k8s_openapi::api::core::v1::Service;
use kube::api::DeleteParams;

use super::service_fake::SERVICE;
use super::*;
use crate::e2e_service::{apply, hostname, inv, start, NS as NAMESPACE, WAIT};
use crate::ingress::events_of;
use crate::support::e2e::Cluster;
use crate::support::moto_cloud::cloud;
use crate::tgb::eventually;

const NS: &str = "demo";
/// The QUIC annotation's line in [`SERVICE`], to add another annotation after.
const QUIC_PORTS: &str =
    "    service.beta.kubernetes.io/aws-load-balancer-quic-enabled-ports: \"443\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quic_service_on_moto_registers_pods_with_their_server_ids() {
    let c = cloud().await;
    c.moto.start_recording().await;
    let k8s = Cluster::start().await;
    let client = k8s.client.clone();
    let ctl = start(&c, &k8s);
    apply(&k8s, NAMESPACE);
    apply(&k8s, SERVICE);
    let services: Api<Service> = Api::namespaced(client.clone(), NS);
    eventually("the Service gets its hostname", WAIT, || async {
        hostname(&services, "web").await.is_some()
    })
    .await;
    let (binding, arn) = quic_binding(&client, NS, WAIT).await;

    // The listener and the target group are QUIC, as asked for and as described back.
    let got = inv(&c, "demo/web").await;
    let listeners: Vec<(u16, String)> = got
        .listeners
        .iter()
        .map(|l| (l.port, l.protocol.clone()))
        .collect();
    assert_eq!(listeners, vec![(443, "QUIC".to_string())], "{got:#?}");
    assert_eq!(got.tgs.len(), 1, "{got:#?}");
    let tg = &got.tgs[0].0;
    assert_eq!(tg.arn, arn, "the binding is of the Service's target group");
    assert_eq!(tg.protocol.as_deref(), Some("QUIC"));
    assert_eq!(tg.target_type, "ip");
    assert_eq!(tg.port, Some(8443));
    let asked = |action: &str| -> Vec<(String, String)> {
        c.moto
            .recorded_params(action)
            .into_iter()
            .map(|p| {
                let field = |f: &str| p.get(f).cloned().unwrap_or_default();
                (field("Protocol"), field("Port"))
            })
            .collect()
    };
    assert_eq!(
        asked("CreateTargetGroup"),
        vec![("QUIC".to_string(), "8443".to_string())]
    );
    assert_eq!(
        asked("CreateListener"),
        vec![("QUIC".to_string(), "443".to_string())]
    );

    let (ip1, ip2, ip3) = ("10.1.1.11", "10.1.1.12", "10.1.1.13");
    let id1 = quic_pod(&client, NS, "web-1", ip1, Some(DEFAULT_ENV_NAME))
        .await
        .unwrap();
    let id2 = quic_pod(&client, NS, "web-2", ip2, Some(DEFAULT_ENV_NAME))
        .await
        .unwrap();
    assert_ne!(id1, id2);
    assert_eq!(quic_pod(&client, NS, "web-3", ip3, None).await, None);
    slice(
        &client,
        NS,
        &[("web-1", ip1), ("web-2", ip2), ("web-3", ip3)],
    )
    .await;

    let both = vec![
        (format!("{ip1}:8443"), Some(id1.clone())),
        (format!("{ip2}:8443"), Some(id2.clone())),
    ];
    eventually(
        "both pods registered in moto with their server ids",
        WAIT,
        || async { quic_targets(c.elb.as_ref(), &arn).await == both },
    )
    .await;
    let named = format!("pod web-3 ({ip3}:8443)");
    eventually(
        "a Warning names the pod without a server id",
        WAIT,
        || async {
            events_of(&client, NS, &binding)
                .await
                .iter()
                .any(|(t, reason, note)| {
                    t == "Warning" && reason == REASON_MISSING && note.contains(&named)
                })
        },
    )
    .await;
    let sent = |ip: &str, id: &str| (ip.to_string(), "8443".to_string(), Some(id.to_string()));
    let mut registered = sent_targets(&c.moto, "RegisterTargets");
    registered.sort();
    assert_eq!(
        registered,
        vec![sent(ip1, id1.as_str()), sent(ip2, id2.as_str())],
        "each pod registered once, with its server id; web-3 never"
    );

    // web-2 leaves: deregistered with its id, and nothing else moves.
    slice(&client, NS, &[("web-1", ip1), ("web-3", ip3)]).await;
    eventually("web-2 deregistered", WAIT, || async {
        quic_targets(c.elb.as_ref(), &arn).await == both[..1]
    })
    .await;
    assert_eq!(
        sent_targets(&c.moto, "DeregisterTargets"),
        vec![sent(ip2, id2.as_str())]
    );
    assert_eq!(sent_targets(&c.moto, "RegisterTargets").len(), 2);

    // Another reconcile of the Service (a tag added) reads the listener and target group back
    // as QUIC: no replacement, no ModifyListener (which moto, like the controller, would only
    // need if the described protocol differed from the model's).
    assert!(SERVICE.contains(QUIC_PORTS), "{SERVICE}");
    let tagged = SERVICE.replace(
        QUIC_PORTS,
        &format!(
            "{QUIC_PORTS}    service.beta.kubernetes.io/aws-load-balancer-additional-resource-tags: team=quic\n"
        ),
    );
    apply(&k8s, &tagged);
    eventually("the target group is tagged", WAIT, || async {
        inv(&c, "demo/web")
            .await
            .tgs
            .iter()
            .any(|(_, t)| t.get("team").map(String::as_str) == Some("quic"))
    })
    .await;
    // The listeners come after the target groups in a reconcile.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let structural: Vec<String> = c
        .moto
        .recorded_actions()
        .into_iter()
        .filter(|a| {
            let op = a.split(':').nth(1).unwrap_or(a);
            matches!(
                op,
                "CreateTargetGroup"
                    | "DeleteTargetGroup"
                    | "CreateListener"
                    | "DeleteListener"
                    | "ModifyListener"
            )
        })
        .collect();
    assert_eq!(
        structural,
        vec![
            "elasticloadbalancing:CreateTargetGroup",
            "elasticloadbalancing:CreateListener"
        ],
        "the QUIC listener and target group stay as created"
    );
    assert_eq!(quic_targets(c.elb.as_ref(), &arn).await, both[..1]);

    // Deleting the Service leaves nothing in moto; every target taken out on the way carried
    // the id it was registered with.
    services
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the Service is gone", WAIT, || async {
        services.get_opt("web").await.unwrap().is_none()
    })
    .await;
    let gone = inv(&c, "demo/web").await;
    assert!(gone.is_empty() && gone.listeners.is_empty(), "{gone:#?}");
    let ids = [(ip1, id1.as_str()), (ip2, id2.as_str())];
    for (ip, port, id) in sent_targets(&c.moto, "DeregisterTargets") {
        let want = ids
            .iter()
            .find(|(i, _)| *i == ip)
            .map(|(_, id)| id.to_string());
        assert_eq!(id, want, "{ip}:{port} deregistered without its id");
    }

    k8s.assert_requests_allowed_by_chart(&["create targetgroupbindings.elbv2.k8s.aws demo/*"]);
    drop(ctl);
    k8s.server.stop().await;
}
