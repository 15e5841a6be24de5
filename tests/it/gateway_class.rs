//! The GatewayClass and configuration finalizer controllers in-process
//! (`controller::gateway_class::run`) against the API test server with the Gateway API CRDs: a
//! class of ours gets the finalizer, the processed-config annotations and Accepted True, its
//! configurations their finalizers; refusals carry upstream's reasons; LBC/TGC edits requeue the
//! class; deletions wait, with upstream's Warning, until the last user is gone.

use std::time::Duration;

use aws_load_balancer_controller::controller::gateway_class::{self, GatewayClassConfig};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube_test_apiserver::{Options, TestApiServer};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::ingress::events_of;
use crate::support::gateway_crds::{api, create, get, install};
use crate::tgb::eventually;

const WAIT: Duration = Duration::from_secs(20);

struct Running {
    server: TestApiServer,
    client: kube::Client,
    token: CancellationToken,
}

impl Running {
    async fn start(cfg: GatewayClassConfig) -> Running {
        let server = TestApiServer::start(Options::default()).await.unwrap();
        let client = server.client();
        install(&client).await;
        let token = CancellationToken::new();
        let cfg = GatewayClassConfig {
            max_backoff: Duration::from_millis(300),
            ..cfg
        };
        tokio::spawn(gateway_class::run(
            client.clone(),
            cfg,
            Vec::new(),
            token.clone(),
        ));
        Running {
            server,
            client,
            token,
        }
    }

    async fn stop(self) {
        self.token.cancel();
        self.server.stop().await;
    }

    async fn get(&self, kind: &str, ns: &str, name: &str) -> Option<Value> {
        get(&self.client, kind, ns, name).await
    }

    async fn delete(&self, kind: &str, ns: &str, name: &str) {
        api(&self.client, kind, ns)
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }

    async fn accepted(&self, class: &str) -> Option<Value> {
        let c = self.get("GatewayClass", "", class).await?;
        c["status"]["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == "Accepted")
            .cloned()
    }

    async fn has_finalizer(&self, kind: &str, ns: &str, name: &str, finalizer: &str) -> bool {
        self.get(kind, ns, name).await.is_some_and(|o| {
            o["metadata"]["finalizers"]
                .as_array()
                .is_some_and(|f| f.iter().any(|x| x == finalizer))
        })
    }

    /// Waits for a Warning event with `note` about `name` (events of cluster-scoped objects
    /// land in `default`).
    async fn warned(&self, ns: &str, name: &str, note: &str) {
        eventually(&format!("warning {note}"), WAIT, || async {
            events_of(&self.client, ns, name)
                .await
                .iter()
                .any(|(t, r, n)| t == "Warning" && r == "FailedRemoveFinalizer" && n == note)
        })
        .await;
    }
}

const CONFIGS: &str = r#"
apiVersion: gateway.k8s.aws/v1
kind: TargetGroupConfiguration
metadata: {name: defaults, namespace: cfg}
spec:
  defaultConfiguration: {targetType: ip}
---
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {name: lbc, namespace: cfg}
spec:
  scheme: internal
  defaultTargetGroupConfiguration: {name: defaults}
"#;

fn class(name: &str, controller: &str, params: &str) -> String {
    format!(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {{name: {name}}}\nspec:\n  controllerName: {controller}\n{params}"
    )
}

const PARAMS: &str =
    "  parametersRef: {group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: lbc, namespace: cfg}\n";

fn rv(o: &Value) -> String {
    o["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_class_of_ours_is_accepted_with_the_processed_config_version_and_others_are_left_alone() {
    let r = Running::start(GatewayClassConfig::default()).await;
    create(&r.client, CONFIGS).await;
    create(&r.client, &class("alb", "gateway.k8s.aws/alb", PARAMS)).await;
    create(&r.client, &class("theirs", "example.com/gateway", "")).await;
    create(
        &r.client,
        &class(
            "no-ns",
            "gateway.k8s.aws/nlb",
            "  parametersRef: {group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: lbc}\n",
        ),
    )
    .await;
    create(
        &r.client,
        &class(
            "later",
            "gateway.k8s.aws/alb",
            "  parametersRef: {group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: later, namespace: cfg}\n",
        ),
    )
    .await;

    eventually("alb accepted", WAIT, || async {
        r.accepted("alb")
            .await
            .is_some_and(|c| c["status"] == "True")
    })
    .await;
    let c = r.accepted("alb").await.unwrap();
    assert_eq!(
        (c["reason"].as_str(), c["message"].as_str()),
        (Some("Accepted"), Some("Accepted"))
    );
    assert_eq!(c["observedGeneration"], 1);
    let alb = r.get("GatewayClass", "", "alb").await.unwrap();
    assert!(
        r.has_finalizer("GatewayClass", "", "alb", "gateway.k8s.aws/gatewayclass")
            .await
    );
    let lbc = r
        .get("LoadBalancerConfiguration", "cfg", "lbc")
        .await
        .unwrap();
    let tgc = r
        .get("TargetGroupConfiguration", "cfg", "defaults")
        .await
        .unwrap();
    let annotations = &alb["metadata"]["annotations"];
    // Written before the finalizer controllers bumped the configurations' versions, or after:
    // either way the class converges on the configurations' current versions.
    eventually(
        "version of the current LBC and default TGC",
        WAIT,
        || async {
            let alb = r.get("GatewayClass", "", "alb").await.unwrap();
            let lbc = r
                .get("LoadBalancerConfiguration", "cfg", "lbc")
                .await
                .unwrap();
            let tgc = r
                .get("TargetGroupConfiguration", "cfg", "defaults")
                .await
                .unwrap();
            alb["metadata"]["annotations"]["elbv2.k8s.aws/last-processed-config"]
                == json!(format!("{}-{}", rv(&lbc), rv(&tgc)))
        },
    )
    .await;
    let ts = annotations["elbv2.k8s.aws/last-processed-config-timestamp"]
        .as_str()
        .unwrap()
        .parse::<i64>()
        .unwrap();
    assert!(ts > 1_700_000_000, "unix seconds: {ts}");
    let _ = (lbc, tgc);
    assert!(
        r.has_finalizer(
            "LoadBalancerConfiguration",
            "cfg",
            "lbc",
            "gateway.k8s.aws/loadbalancerconfigurations"
        )
        .await
    );
    assert!(
        r.has_finalizer(
            "TargetGroupConfiguration",
            "cfg",
            "defaults",
            "gateway.k8s.aws/targetgroupconfigurations"
        )
        .await
    );

    eventually("no-ns refused", WAIT, || async {
        r.accepted("no-ns").await.is_some_and(|c| {
            c["status"] == "False"
                && c["reason"] == "InvalidParametersRef"
                && c["message"]
                    == "Namespace must be specified in ParametersRef for LoadBalancerConfiguration"
        })
    })
    .await;
    eventually("later not found", WAIT, || async {
        r.accepted("later").await.is_some_and(|c| {
            c["status"] == "False"
                && c["reason"] == "NotFound"
                && c["message"] == "LoadBalancerConfiguration (later,cfg) not found"
        })
    })
    .await;
    // Another kind is read by name as a LoadBalancerConfiguration (upstream), with a Warning.
    // Created once the configuration is known: as upstream, only a LoadBalancerConfiguration
    // reference is queued again by the configuration's own events.
    create(
        &r.client,
        &class(
            "foreign",
            "gateway.k8s.aws/alb",
            "  parametersRef: {group: example.com, kind: Params, name: lbc, namespace: cfg}\n",
        ),
    )
    .await;
    eventually("foreign accepted", WAIT, || async {
        r.accepted("foreign")
            .await
            .is_some_and(|c| c["status"] == "True")
    })
    .await;
    eventually("foreign warned", WAIT, || async {
        events_of(&r.client, "default", "foreign")
            .await
            .iter()
            .any(|(t, reason, n)| {
                t == "Warning"
                    && reason == "UnsupportedConfiguration"
                    && n.starts_with("parametersRef names Params \"lbc\" of group \"example.com\"")
            })
    })
    .await;
    assert!(
        !events_of(&r.client, "default", "alb")
            .await
            .iter()
            .any(|(_, reason, _)| reason == "UnsupportedConfiguration"),
        "a LoadBalancerConfiguration reference is not warned about"
    );
    // Its LoadBalancerConfiguration appearing requeues the class.
    create(
        &r.client,
        "apiVersion: gateway.k8s.aws/v1\nkind: LoadBalancerConfiguration\nmetadata: {name: later, namespace: cfg}\nspec: {}\n",
    )
    .await;
    eventually("later accepted", WAIT, || async {
        r.accepted("later")
            .await
            .is_some_and(|c| c["status"] == "True")
    })
    .await;

    // An edit of the default TargetGroupConfiguration changes the class's processed version.
    let before = r.get("GatewayClass", "", "alb").await.unwrap()["metadata"]["annotations"]
        ["elbv2.k8s.aws/last-processed-config"]
        .clone();
    api(&r.client, "TargetGroupConfiguration", "cfg")
        .patch(
            "defaults",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"defaultConfiguration": {"targetType": "instance"}}})),
        )
        .await
        .unwrap();
    eventually("version follows the TGC", WAIT, || async {
        let alb = r.get("GatewayClass", "", "alb").await.unwrap();
        let lbc = r
            .get("LoadBalancerConfiguration", "cfg", "lbc")
            .await
            .unwrap();
        let tgc = r
            .get("TargetGroupConfiguration", "cfg", "defaults")
            .await
            .unwrap();
        let now = &alb["metadata"]["annotations"]["elbv2.k8s.aws/last-processed-config"];
        *now != before && *now == json!(format!("{}-{}", rv(&lbc), rv(&tgc)))
    })
    .await;

    // Another controller's class: no finalizer, no status, no annotation.
    let theirs = r.get("GatewayClass", "", "theirs").await.unwrap();
    assert!(theirs["metadata"]["finalizers"].is_null(), "{theirs}");
    assert!(theirs["metadata"]["annotations"].is_null(), "{theirs}");
    assert!(theirs["status"]["conditions"].is_null(), "{theirs}");
    r.stop().await;
}

#[tokio::test]
async fn only_the_enabled_controllers_classes_are_reconciled() {
    let r = Running::start(GatewayClassConfig {
        alb: false,
        ..GatewayClassConfig::default()
    })
    .await;
    create(&r.client, &class("alb", "gateway.k8s.aws/alb", "")).await;
    create(&r.client, &class("nlb", "gateway.k8s.aws/nlb", "")).await;
    eventually("nlb accepted", WAIT, || async {
        r.accepted("nlb")
            .await
            .is_some_and(|c| c["status"] == "True")
    })
    .await;
    let nlb = r.get("GatewayClass", "", "nlb").await.unwrap();
    assert_eq!(
        nlb["metadata"]["annotations"]["elbv2.k8s.aws/last-processed-config"], "",
        "no LBC: empty version"
    );
    assert!(r.accepted("alb").await.is_none(), "ALBGatewayAPI is off");
    assert!(
        !r.has_finalizer("GatewayClass", "", "alb", "gateway.k8s.aws/gatewayclass")
            .await
    );
    r.stop().await;
}

const USERS: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: apps}
spec:
  gatewayClassName: alb
  infrastructure:
    parametersRef: {group: gateway.k8s.aws, kind: LoadBalancerConfiguration, name: own}
  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: gateway.k8s.aws/v1
kind: LoadBalancerConfiguration
metadata: {name: own, namespace: apps}
spec: {}
---
apiVersion: gateway.k8s.aws/v1
kind: ListenerRuleConfiguration
metadata: {name: fixed, namespace: apps}
spec:
  actions:
  - type: fixed-response
    fixedResponseConfig: {statusCode: 404}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  parentRefs: [{name: gw}]
  rules:
  - filters:
    - {type: ExtensionRef, extensionRef: {group: gateway.k8s.aws, kind: ListenerRuleConfiguration, name: fixed}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: apps}
spec:
  ports: [{port: 80}]
---
apiVersion: gateway.k8s.aws/v1
kind: TargetGroupConfiguration
metadata: {name: web, namespace: apps}
spec:
  targetReference: {name: web}
"#;

#[tokio::test]
async fn deletions_wait_with_upstreams_warning_until_the_last_user_is_gone() {
    let r = Running::start(GatewayClassConfig::default()).await;
    create(&r.client, CONFIGS).await;
    create(&r.client, &class("alb", "gateway.k8s.aws/alb", PARAMS)).await;
    create(&r.client, USERS).await;
    for (kind, ns, name, fin) in [
        ("GatewayClass", "", "alb", "gateway.k8s.aws/gatewayclass"),
        (
            "LoadBalancerConfiguration",
            "cfg",
            "lbc",
            "gateway.k8s.aws/loadbalancerconfigurations",
        ),
        (
            "LoadBalancerConfiguration",
            "apps",
            "own",
            "gateway.k8s.aws/loadbalancerconfigurations",
        ),
        (
            "TargetGroupConfiguration",
            "cfg",
            "defaults",
            "gateway.k8s.aws/targetgroupconfigurations",
        ),
        (
            "TargetGroupConfiguration",
            "apps",
            "web",
            "gateway.k8s.aws/targetgroupconfigurations",
        ),
        (
            "ListenerRuleConfiguration",
            "apps",
            "fixed",
            "gateway.k8s.aws/listenerruleconfigurations",
        ),
    ] {
        eventually(&format!("{kind} {name} finalizer"), WAIT, || async {
            r.has_finalizer(kind, ns, name, fin).await
        })
        .await;
    }
    // Upstream's LRC status: accepted, or refused while its OIDC Secret is missing.
    create(
        &r.client,
        "apiVersion: gateway.k8s.aws/v1\nkind: ListenerRuleConfiguration\nmetadata: {name: oidc, namespace: apps}\nspec:\n  actions:\n  - type: authenticate-oidc\n    authenticateOIDCConfig: {authorizationEndpoint: 'https://a', issuer: 'https://i', tokenEndpoint: 'https://t', userInfoEndpoint: 'https://u', secret: {name: idp}}\n",
    )
    .await;
    eventually("LRC statuses", WAIT, || async {
        let fixed = r.get("ListenerRuleConfiguration", "apps", "fixed").await.unwrap();
        let oidc = r.get("ListenerRuleConfiguration", "apps", "oidc").await.unwrap();
        fixed["status"] == json!({"accepted": true, "message": "Accepted", "observedGeneration": 1})
            && oidc["status"]
                == json!({"accepted": false, "message": "secret [apps/idp] not found", "observedGeneration": 1})
    })
    .await;
    // The Gateway is accepted (by a Gateway reconciler this test does not run), and none has
    // recorded its Services yet: the Service's TGC must stay.
    api(&r.client, "Gateway", "apps")
        .patch_status(
            "gw",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})),
        )
        .await
        .unwrap();

    for (kind, ns, name) in [
        ("GatewayClass", "", "alb"),
        ("LoadBalancerConfiguration", "apps", "own"),
        ("TargetGroupConfiguration", "cfg", "defaults"),
        ("TargetGroupConfiguration", "apps", "web"),
        ("ListenerRuleConfiguration", "apps", "fixed"),
    ] {
        r.delete(kind, ns, name).await;
    }
    r.warned(
        "default",
        "alb",
        "unable to delete GatewayClass [alb], as it is still referenced by Gateways",
    )
    .await;
    r.warned(
        "apps",
        "own",
        "loadbalancer configuration [apps/own] is still in use",
    )
    .await;
    r.warned(
        "cfg",
        "defaults",
        "default targetgroup configuration [cfg/defaults] is still in use by LoadBalancerConfiguration [cfg/lbc]",
    )
    .await;
    r.warned(
        "apps",
        "web",
        "targetgroup configuration [apps/web] is still in use",
    )
    .await;
    r.warned(
        "apps",
        "fixed",
        "failed to remove finalizers as listener rule configuration [apps/fixed] is still in use",
    )
    .await;
    for (kind, ns, name) in [
        ("GatewayClass", "", "alb"),
        ("LoadBalancerConfiguration", "apps", "own"),
        ("TargetGroupConfiguration", "cfg", "defaults"),
        ("TargetGroupConfiguration", "apps", "web"),
        ("ListenerRuleConfiguration", "apps", "fixed"),
    ] {
        assert!(
            r.get(kind, ns, name).await.is_some(),
            "{kind} {ns}/{name} is held"
        );
    }

    // The route goes: its rule configuration follows at once (its deletion is queued by the
    // route's, not by a retry).
    r.delete("HTTPRoute", "apps", "web").await;
    eventually("LRC gone", WAIT, || async {
        r.get("ListenerRuleConfiguration", "apps", "fixed")
            .await
            .is_none()
    })
    .await;
    // The Gateway goes: the class, the Gateway's LBC and the Service's TGC follow; with the class
    // gone the class's LBC is unused, so its default TGC follows too.
    r.delete("Gateway", "apps", "gw").await;
    for (kind, ns, name) in [
        ("GatewayClass", "", "alb"),
        ("LoadBalancerConfiguration", "apps", "own"),
        ("TargetGroupConfiguration", "apps", "web"),
        ("TargetGroupConfiguration", "cfg", "defaults"),
    ] {
        eventually(&format!("{kind} {ns}/{name} gone"), WAIT, || async {
            r.get(kind, ns, name).await.is_none()
        })
        .await;
    }
    assert!(
        r.get("LoadBalancerConfiguration", "cfg", "lbc")
            .await
            .is_some(),
        "never deleted: still there, with its finalizer"
    );
    r.stop().await;
}
