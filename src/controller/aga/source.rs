//! Endpoint loading's reads ([`EndpointSource`]) over the controller's caches, and the load
//! balancers a pass resolves DNS names against: described once per pass, only when an endpoint
//! is named by a Service, Ingress or Gateway (upstream's resolver describes them for each name
//! not in its cache; one describe per pass answers every name of the pass the same way).

use gateway_api::apis::standard::gateways::Gateway;
use gateway_api::apis::standard::referencegrants::ReferenceGrant;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;

use super::feed::Feed;
use crate::aws::{ElbV2, LoadBalancerQuery};
use crate::crd::global_accelerator::GlobalAcceleratorEndpointType;
use crate::model::aga::{
    load_balancer_arn_by_dns, DescribedLoadBalancer, ElbListener, EndpointReference,
    EndpointSource, Lookup,
};
use crate::watch::Store;

/// Why a Gateway endpoint cannot be read when the API server does not serve the Gateway API
/// (upstream's client fails the same read with no kind to match: an API server error).
pub const NO_GATEWAY_API: &str =
    "no matches for kind \"Gateway\" in version \"gateway.networking.k8s.io/v1\"";

/// The region's load balancers as one describe found them, or why it failed.
pub type Described = Result<Vec<DescribedLoadBalancer>, String>;

/// Describes the region's load balancers when one of `references` needs a DNS name resolved;
/// `None` when none does.
pub async fn describe_if_needed(
    elbv2: &dyn ElbV2,
    references: &[EndpointReference],
) -> Option<Described> {
    let named = references
        .iter()
        .any(|r| r.endpoint_type != GlobalAcceleratorEndpointType::EndpointID);
    if !named {
        return None;
    }
    let described = elbv2
        .describe_load_balancers(&LoadBalancerQuery::default())
        .await
        .map(|lbs| {
            lbs.into_iter()
                .map(|lb| DescribedLoadBalancer {
                    dns_name: lb.dns_name,
                    arn: lb.arn,
                })
                .collect()
        })
        .map_err(|e| e.to_string());
    Some(described)
}

/// The listeners of the load balancer `arn`, as auto-discovery reads them.
pub async fn describe_listeners(elbv2: &dyn ElbV2, arn: &str) -> Result<Vec<ElbListener>, String> {
    elbv2
        .describe_listeners(arn)
        .await
        .map(|listeners| {
            listeners
                .into_iter()
                .map(|l| ElbListener {
                    protocol: l.protocol,
                    port: i32::from(l.port),
                })
                .collect()
        })
        .map_err(|e| e.to_string())
}

/// One pass's reads: the feed's caches and the load balancers described for the pass.
pub struct CachedSource<'a> {
    pub feed: &'a Feed,
    /// `None`: nothing was described (no endpoint needed it).
    pub load_balancers: Option<&'a Described>,
}

fn lookup<K: Clone>(store: &Store<K>, namespace: &str, name: &str) -> Lookup<K> {
    match store.get(namespace, name) {
        Some(obj) => Lookup::Found((*obj).clone()),
        None => Lookup::NotFound,
    }
}

impl EndpointSource for CachedSource<'_> {
    fn service(&self, namespace: &str, name: &str) -> Lookup<Service> {
        lookup(&self.feed.services, namespace, name)
    }

    fn ingress(&self, namespace: &str, name: &str) -> Lookup<Ingress> {
        lookup(&self.feed.ingresses, namespace, name)
    }

    fn gateway(&self, namespace: &str, name: &str) -> Lookup<Gateway> {
        if !self.feed.served.gateways {
            return Lookup::Failed(NO_GATEWAY_API.into());
        }
        lookup(&self.feed.gateways, namespace, name)
    }

    fn reference_grants(&self, namespace: &str) -> Result<Vec<ReferenceGrant>, String> {
        let mut grants: Vec<ReferenceGrant> = self
            .feed
            .reference_grants
            .state()
            .iter()
            .filter(|g| g.metadata.namespace.as_deref() == Some(namespace))
            .map(|g| (**g).clone())
            .collect();
        // The store keeps no order; the grants are read as a List returns them.
        grants.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        Ok(grants)
    }

    fn load_balancer_arn(&self, dns_name: &str) -> Result<String, String> {
        resolve(self.load_balancers, dns_name)
    }
}

/// The ARN of the load balancer named `dns_name` among those a pass `described`, with
/// upstream's errors (nothing described counts as no load balancer found).
pub fn resolve(described: Option<&Described>, dns_name: &str) -> Result<String, String> {
    let described = match described {
        Some(Ok(lbs)) => Ok(lbs.as_slice()),
        Some(Err(e)) => Err(e.as_str()),
        None => Ok(&[][..]),
    };
    load_balancer_arn_by_dns(dns_name, described)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::aga::detect::Served;
    use crate::watch::Index;
    use std::sync::Arc;

    fn lbs() -> Described {
        Ok(vec![DescribedLoadBalancer {
            dns_name: "k8s-demo-app-1.us-west-2.elb.amazonaws.com".into(),
            arn: "arn:aws:elasticloadbalancing:us-west-2:1:loadbalancer/app/k8s-demo-app/1".into(),
        }])
    }

    #[test]
    fn names_resolve_over_the_pass_describe_with_upstreams_errors() {
        let feed = Feed::unregistered(Served::default());
        let described = lbs();
        let src = CachedSource {
            feed: &feed,
            load_balancers: Some(&described),
        };
        assert_eq!(
            src.load_balancer_arn("k8s-demo-app-1.us-west-2.elb.amazonaws.com")
                .unwrap(),
            "arn:aws:elasticloadbalancing:us-west-2:1:loadbalancer/app/k8s-demo-app/1"
        );
        assert_eq!(
            src.load_balancer_arn("other.elb.amazonaws.com")
                .unwrap_err(),
            "no load balancer found for dns other.elb.amazonaws.com"
        );
        let failed: Described = Err("throttled".into());
        let src = CachedSource {
            feed: &feed,
            load_balancers: Some(&failed),
        };
        assert_eq!(
            src.load_balancer_arn("x").unwrap_err(),
            "failed to describe load balancers: throttled"
        );
    }

    #[test]
    fn a_gateway_without_the_gateway_api_is_an_api_server_error_and_grants_are_none() {
        let feed = Feed::unregistered(Served::default());
        let src = CachedSource {
            feed: &feed,
            load_balancers: None,
        };
        assert_eq!(
            src.gateway("ns", "gw"),
            Lookup::Failed(NO_GATEWAY_API.into())
        );
        assert_eq!(src.reference_grants("ns").unwrap(), vec![]);
        assert_eq!(src.ingress("ns", "app"), Lookup::NotFound);
        let ing: Arc<Ingress> = Arc::new(
            serde_json::from_value(
                serde_json::json!({"metadata": {"name": "app", "namespace": "ns"}}),
            )
            .unwrap(),
        );
        feed.ingresses.apply(&ing);
        assert_eq!(src.ingress("ns", "app"), Lookup::Found((*ing).clone()));
    }
}
