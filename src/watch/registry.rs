//! The process's watches, one [`Kind`] per Kubernetes kind any consumer reads ([`Watches`], the
//! Gateway kinds in [`GatewayKinds`]), and the drivers of a plain namespaced or cluster-scoped
//! kind. Built once at process start; consumers register, then [`Watches::run`] (in `run`)
//! starts every wanted kind.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use gateway_api::apis::experimental::tcproutes::TcpRoute;
use gateway_api::apis::experimental::udproutes::UdpRoute;
use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::grpcroutes::GrpcRoute;
use gateway_api::apis::standard::httproutes::HttpRoute;
use gateway_api::apis::standard::listenersets::ListenerSet;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use gateway_api::apis::standard::tlsroutes::TlsRoute;
use k8s_openapi::api::core::v1::{Endpoints, Namespace, Node, Pod, Secret, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
use kube::api::{DynamicObject, ListParams};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::runtime::watcher;
use kube::runtime::WatchStreamExt;
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

use super::driver::{drive, drive_with, Kind, Lister, Page};
use super::named::Named;
use super::namespaces as scope;
use super::refill::Refill;
use super::trim;
use crate::crd::gateway::{
    ListenerRuleConfiguration, LoadBalancerConfiguration, TargetGroupConfiguration,
};
use crate::crd::global_accelerator::GlobalAccelerator;
use crate::crd::{AlbTargetControlConfig, IngressClassParams};

/// Every kind the process may watch.
pub struct Watches {
    /// TargetGroupBindings, untyped: one binding that does not decode cannot fail the list (and
    /// so stall every consumer); each consumer reads the fields it needs.
    pub bindings: Kind<DynamicObject>,
    pub services: Kind<Service>,
    pub endpoint_slices: Kind<EndpointSlice>,
    pub endpoints: Kind<Endpoints>,
    pub pods: Kind<Pod>,
    pub ingresses: Kind<Ingress>,
    pub ingress_classes: Kind<IngressClass>,
    pub ingress_class_params: Kind<IngressClassParams>,
    /// Only the ones named as the ALB target control agent injector reads them, cluster-wide.
    pub alb_target_control_configs: Kind<AlbTargetControlConfig>,
    pub namespaces: Kind<Namespace>,
    pub nodes: Kind<Node>,
    /// Only the Secrets consumers name, each watched by name (never a cluster-wide list).
    pub secrets: Named<Secret>,
    /// Gateway API and `gateway.k8s.aws` kinds (watched only when a Gateway controller runs).
    pub gateway: GatewayKinds,
    /// `aga.k8s.aws` GlobalAccelerators (watched only when their controller runs).
    pub global_accelerators: Kind<GlobalAccelerator>,
}

impl Default for Watches {
    fn default() -> Self {
        Self {
            bindings: Kind::new("targetgroupbindings").with_trim(trim::managed_fields),
            services: Kind::new("services").with_trim(trim::service),
            endpoint_slices: Kind::new("endpointslices").with_trim(trim::managed_fields),
            endpoints: Kind::new("endpoints").with_trim(trim::managed_fields),
            pods: Kind::new("pods").with_trim(trim::managed_fields),
            ingresses: Kind::new("ingresses").with_trim(trim::managed_fields),
            ingress_classes: Kind::new("ingressclasses").with_trim(trim::managed_fields),
            ingress_class_params: Kind::new("ingressclassparams").with_trim(trim::managed_fields),
            alb_target_control_configs: Kind::new("albtargetcontrolconfigs")
                .with_trim(trim::managed_fields),
            namespaces: Kind::new("namespaces").with_trim(trim::managed_fields),
            nodes: Kind::new("nodes").with_trim(trim::managed_fields),
            secrets: Named::new("secrets"),
            gateway: GatewayKinds::default(),
            global_accelerators: Kind::new("globalaccelerators").with_trim(trim::managed_fields),
        }
    }
}

impl Watches {
    /// The process's watches, OIDC Secrets narrowed to `--required-secrets-label` (`None`: every
    /// named Secret).
    pub fn with_required_secrets_label(label: Option<crate::config::RequiredLabel>) -> Self {
        Self {
            secrets: Named::new("secrets").with_required_label(label),
            ..Self::default()
        }
    }
}

/// Every Gateway API and `gateway.k8s.aws` kind a Gateway controller reads.
pub struct GatewayKinds {
    pub classes: Kind<GatewayClass>,
    pub gateways: Kind<Gateway>,
    pub http_routes: Kind<HttpRoute>,
    pub grpc_routes: Kind<GrpcRoute>,
    /// Watched as [`L4_ROUTE_VERSION`](super::gateway::L4_ROUTE_VERSION).
    pub tcp_routes: Kind<TcpRoute>,
    /// Watched as [`L4_ROUTE_VERSION`](super::gateway::L4_ROUTE_VERSION).
    pub udp_routes: Kind<UdpRoute>,
    pub tls_routes: Kind<TlsRoute>,
    /// Watched as [`REFERENCE_GRANT_VERSION`](super::gateway::REFERENCE_GRANT_VERSION).
    pub reference_grants: Kind<ReferenceGrant>,
    pub lb_configs: Kind<LoadBalancerConfiguration>,
    pub tg_configs: Kind<TargetGroupConfiguration>,
    pub rule_configs: Kind<ListenerRuleConfiguration>,
    /// Wanted only while the `GatewayListenerSet` gate is on.
    pub listener_sets: Kind<ListenerSet>,
}

impl Default for GatewayKinds {
    fn default() -> Self {
        Self {
            classes: Kind::new("gatewayclasses"),
            gateways: Kind::new("gateways"),
            http_routes: Kind::new("httproutes"),
            grpc_routes: Kind::new("grpcroutes"),
            tcp_routes: Kind::new("tcproutes"),
            udp_routes: Kind::new("udproutes"),
            tls_routes: Kind::new("tlsroutes"),
            reference_grants: Kind::new("referencegrants"),
            lb_configs: Kind::new("loadbalancerconfigurations"),
            tg_configs: Kind::new("targetgroupconfigurations"),
            rule_configs: Kind::new("listenerruleconfigurations"),
            listener_sets: Kind::new("listenersets"),
        }
    }
}

pub(super) type Driver = BoxFuture<'static, ()>;

/// The driver of a namespaced kind, limited like `--watch-namespace` (empty: all), once the
/// kinds it starts after have listed; it makes the refills its indexes ask for.
pub(super) fn namespaced<K>(
    watches: &Arc<Watches>,
    kind: fn(&Watches) -> &Kind<K>,
    client: &kube::Client,
    namespaces: &[String],
) -> Option<Driver>
where
    K: Resource<Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    K::DynamicType: Default,
{
    kind(watches).wanted().then(|| {
        let after = kind(watches).prerequisites();
        let (w, client, namespaces) = (watches.clone(), client.clone(), namespaces.to_vec());
        async move {
            for s in after {
                s.wait().await;
            }
            let events = scope::watch::<K>(client.clone(), &namespaces, watcher::Config::default());
            let lister = lister::<K>(client, namespaces);
            drive_with(kind(&w), events, Some(lister)).await
        }
        .boxed()
    })
}

/// Objects per page of a refill's list (the watcher's own page size).
const REFILL_PAGE: u32 = 500;

/// Lists for refills: a page of one namespace's objects the refill's selectors match, none in
/// a namespace outside `--watch-namespace` (never watched).
fn lister<K>(client: kube::Client, namespaces: Vec<String>) -> Lister<K>
where
    K: Resource<Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    K::DynamicType: Default,
{
    Box::new(move |r: &Refill, token: Option<String>| {
        if !namespaces.is_empty() && !namespaces.contains(&r.namespace) {
            let none: Page<K> = (Vec::new(), None);
            return futures::future::ready(Ok::<_, kube::Error>(none)).boxed();
        }
        let api = Api::<K>::namespaced(client.clone(), &r.namespace);
        let mut params = ListParams::default().limit(REFILL_PAGE);
        if !r.labels.is_empty() {
            params = params.labels(&r.labels);
        }
        if !r.fields.is_empty() {
            params = params.fields(&r.fields);
        }
        if let Some(token) = &token {
            params = params.continue_token(token);
        }
        async move {
            let list = api.list(&params).await?;
            let next = list.metadata.continue_.filter(|t| !t.is_empty());
            Ok::<Page<K>, kube::Error>((list.items, next))
        }
        .boxed()
    })
}

/// The driver of a cluster-scoped kind.
pub(super) fn cluster<K>(
    watches: &Arc<Watches>,
    kind: fn(&Watches) -> &Kind<K>,
    client: &kube::Client,
) -> Option<Driver>
where
    K: Resource<Scope = ClusterResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    K::DynamicType: Default,
{
    kind(watches).wanted().then(|| {
        let after = kind(watches).prerequisites();
        let api = Api::<K>::all(client.clone());
        let events = watcher::watcher(api, watcher::Config::default()).default_backoff();
        let w = watches.clone();
        async move {
            for s in after {
                s.wait().await;
            }
            drive(kind(&w), events).await
        }
        .boxed()
    })
}
