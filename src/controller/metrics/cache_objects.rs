//! Upstream's `awslbc_controller_cache_object_total{resource}`: how many Services, Ingresses
//! and TargetGroupBindings the controller's caches hold (its watches here, on every replica,
//! limited by `--watch-namespace` as upstream's cache is).
//!
//! Upstream lists its cache every 30 s and sets the gauge; the counts here are kept by the
//! watches themselves and read at each scrape, so a scrape sees the same numbers without the
//! half-minute lag. A kind shows once its first list is in.

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::watch::{Count, Watches};

const HELP: &str = "Counts the number of objects in the controller cache.";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResourceLabels {
    resource: String,
}

/// The counted kinds under upstream's `resource` values.
#[derive(Debug, Default)]
pub struct CacheObjects {
    service: Arc<Count>,
    ingress: Arc<Count>,
    targetgroupbinding: Arc<Count>,
}

impl CacheObjects {
    /// Counts the kinds in `watches` (before they start) and reports them in `registry`.
    pub fn register(registry: &mut Registry, watches: &Watches) {
        let c = Arc::new(CacheObjects::default());
        watches.services.register(c.service.clone());
        watches.ingresses.register(c.ingress.clone());
        watches.bindings.register(c.targetgroupbinding.clone());
        registry.register_collector(Box::new(CacheObjectsCollector(c)));
    }

    fn counts(&self) -> [(&'static str, Option<usize>); 3] {
        [
            ("service", self.service.get()),
            ("ingress", self.ingress.get()),
            ("targetgroupbinding", self.targetgroupbinding.get()),
        ]
    }
}

#[derive(Debug)]
struct CacheObjectsCollector(Arc<CacheObjects>);

impl Collector for CacheObjectsCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let family = Family::<ResourceLabels, Gauge>::default();
        for (resource, count) in self.0.counts() {
            if let Some(n) = count {
                family
                    .get_or_create(&ResourceLabels {
                        resource: resource.to_string(),
                    })
                    .set(n as i64);
            }
        }
        // Upstream's help text, plus the '.' prometheus-client's registry adds to every
        // registered help and the text rendering takes off again.
        let help = format!("{HELP}.");
        family.encode(encoder.encode_descriptor(
            "awslbc_controller_cache_object_total",
            &help,
            None,
            family.metric_type(),
        )?)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::Index;
    use k8s_openapi::api::core::v1::Service;
    use k8s_openapi::api::networking::v1::Ingress;

    #[test]
    fn counts_each_listed_kind_under_upstreams_resource_name() {
        let watches = Watches::default();
        let mut registry = Registry::default();
        let c = Arc::new(CacheObjects::default());
        registry.register_collector(Box::new(CacheObjectsCollector(c.clone())));
        let out = crate::metrics::render_text(&registry).unwrap();
        assert!(
            !out.contains("awslbc_controller_cache_object_total{"),
            "{out}"
        );

        let svc = |name: &str| {
            let mut s = Service::default();
            s.metadata.namespace = Some("ns".into());
            s.metadata.name = Some(name.into());
            Arc::new(s)
        };
        <Count as Index<Service>>::reset(&c.service, &[svc("a"), svc("b")]);
        <Count as Index<Ingress>>::reset(&c.ingress, &[]);
        let out = crate::metrics::render_text(&registry).unwrap();
        for want in [
            "# HELP awslbc_controller_cache_object_total Counts the number of objects in the controller cache.\n",
            "# TYPE awslbc_controller_cache_object_total gauge\n",
            "awslbc_controller_cache_object_total{resource=\"service\"} 2\n",
            "awslbc_controller_cache_object_total{resource=\"ingress\"} 0\n",
        ] {
            assert!(out.contains(want), "no `{want}` in\n{out}");
        }
        assert!(
            !out.contains("resource=\"targetgroupbinding\""),
            "not listed yet: {out}"
        );
        // Registering counts the process's own watches of the three kinds.
        CacheObjects::register(&mut Registry::default(), &watches);
        assert!(
            watches.services.wanted() && watches.ingresses.wanted() && watches.bindings.wanted()
        );
    }
}
