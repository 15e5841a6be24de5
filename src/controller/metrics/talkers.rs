//! Upstream's `awslbc_controller_top_talkers`: which objects cause the most reconciles. Every
//! reconcile of the Service, Ingress, TargetGroupBinding and Gateway controllers counts against
//! its object; every [`TOP_TALKERS_INTERVAL`] the three most reconciled objects of each
//! controller are published and the counts start over.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use super::ControllerMetrics;

/// How often the top talkers are published and the counts reset (upstream's ticker).
pub const TOP_TALKERS_INTERVAL: Duration = Duration::from_secs(3 * 60);

/// Objects published per controller each interval (upstream's `GetTopReconciles(3)`).
pub const TOP_TALKERS: usize = 3;

/// Overrides [`TOP_TALKERS_INTERVAL`], in milliseconds. Not an upstream setting: the end-to-end
/// tests read the gauge without waiting three minutes.
pub const TOP_TALKERS_INTERVAL_ENV: &str = "AWS_LBC_TOP_TALKERS_INTERVAL_MS";

/// The interval the process publishes at: [`TOP_TALKERS_INTERVAL`] unless
/// [`TOP_TALKERS_INTERVAL_ENV`] holds a positive number of milliseconds (anything else in it is
/// refused with a warning).
pub fn interval_from_env() -> Duration {
    let Some(raw) = std::env::var_os(TOP_TALKERS_INTERVAL_ENV) else {
        return TOP_TALKERS_INTERVAL;
    };
    match raw.to_str().and_then(|s| s.trim().parse::<u64>().ok()) {
        Some(ms) if ms > 0 => Duration::from_millis(ms),
        _ => {
            tracing::warn!(
                variable = TOP_TALKERS_INTERVAL_ENV,
                value = ?raw,
                default = ?TOP_TALKERS_INTERVAL,
                "ignoring an interval that is not a positive number of milliseconds"
            );
            TOP_TALKERS_INTERVAL
        }
    }
}

/// Reconciles per object since the last publication, by controller (upstream's label value:
/// `service`, `ingress`, `targetgroupbinding`, `albgateway`, `nlbgateway`).
/// Reconciles per (namespace, name), by controller.
type Counts = BTreeMap<&'static str, HashMap<(String, String), u64>>;

#[derive(Debug, Default)]
pub(super) struct Talkers {
    counts: Mutex<Counts>,
}

/// One published object: controller, namespace, name and its reconciles.
pub(super) type Talker = (&'static str, String, String, u64);

impl Talkers {
    /// One reconcile of `key` by `controller`. The key is the reconcile request as upstream
    /// writes it: `namespace/name`, or a bare name (an explicit Ingress group, namespace empty).
    pub(super) fn record(&self, controller: &'static str, key: &str) {
        let (namespace, name) = key.split_once('/').unwrap_or(("", key));
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        *counts
            .entry(controller)
            .or_default()
            .entry((namespace.to_string(), name.to_string()))
            .or_default() += 1;
    }

    /// The `n` most reconciled objects of each controller, and every count forgotten. Ties go
    /// to the first by namespace and name (upstream's order among equals is unspecified).
    pub(super) fn take_top(&self, n: usize) -> Vec<Talker> {
        let counts = std::mem::take(&mut *self.counts.lock().unwrap_or_else(|p| p.into_inner()));
        let mut top = Vec::new();
        for (controller, objects) in counts {
            let mut objects: Vec<((String, String), u64)> = objects.into_iter().collect();
            objects.sort_by(|(a, x), (b, y)| y.cmp(x).then_with(|| a.cmp(b)));
            top.extend(
                objects
                    .into_iter()
                    .take(n)
                    .map(|((namespace, name), count)| (controller, namespace, name, count)),
            );
        }
        top
    }
}

impl ControllerMetrics {
    /// Publishes the top talkers of the interval that just ended and starts a new one. As
    /// upstream, a series stays at its last value until the object is a top talker again.
    pub fn publish_top_talkers(&self) {
        for (controller, namespace, name, count) in self.talkers.take_top(TOP_TALKERS) {
            self.top_talkers
                .get_or_create(&super::TalkerLabels {
                    controller: controller.to_string(),
                    namespace,
                    name,
                })
                .set(count.min(i64::MAX as u64) as i64);
        }
    }

    /// Publishes the top talkers every `every` until the future is dropped, on every replica as
    /// upstream (a standby reconciles nothing, so publishes nothing).
    pub async fn run_top_talkers(&self, every: Duration) {
        let start = tokio::time::Instant::now() + every;
        let mut ticks = tokio::time::interval_at(start, every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            self.publish_top_talkers();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::registry::Registry;

    fn value(out: &str, series: &str) -> Option<f64> {
        out.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    #[test]
    fn the_three_most_reconciled_objects_of_each_controller_are_published_then_counts_reset() {
        let mut registry = Registry::default();
        let m = ControllerMetrics::register(&mut registry);
        let ingress = m.controller("ingress").talkers("ingress");
        let service = m.controller("service").talkers("service");
        let classes = m.controller("aws-lbc-gateway-class-controller");
        for (key, times) in [("demo/a", 5), ("shared", 4), ("demo/b", 3), ("demo/c", 1)] {
            for _ in 0..times {
                ingress.talked(key);
            }
        }
        service.talked("web/front");
        classes.talked("alb");
        m.publish_top_talkers();
        let out = crate::metrics::render_text(&registry).unwrap();
        let series = |c: &str, ns: &str, name: &str| {
            format!(
                r#"awslbc_controller_top_talkers{{controller="{c}",namespace="{ns}",name="{name}"}}"#
            )
        };
        assert_eq!(
            value(&out, &series("ingress", "demo", "a")),
            Some(5.0),
            "{out}"
        );
        // An explicit group's request has no namespace.
        assert_eq!(
            value(&out, &series("ingress", "", "shared")),
            Some(4.0),
            "{out}"
        );
        assert_eq!(
            value(&out, &series("ingress", "demo", "b")),
            Some(3.0),
            "{out}"
        );
        assert_eq!(
            value(&out, &series("ingress", "demo", "c")),
            None,
            "only three: {out}"
        );
        assert_eq!(
            value(&out, &series("service", "web", "front")),
            Some(1.0),
            "{out}"
        );
        assert!(
            !out.contains(r#"name="alb""#),
            "a controller upstream does not count publishes nothing: {out}"
        );
        assert!(
            out.contains("# HELP awslbc_controller_top_talkers Counts the number of reconciliations triggered per resource\n"),
            "{out}"
        );
        assert!(
            out.contains("# TYPE awslbc_controller_top_talkers gauge\n"),
            "{out}"
        );

        // The next interval counts from zero; earlier series keep their last value.
        ingress.talked("demo/c");
        m.publish_top_talkers();
        let out = crate::metrics::render_text(&registry).unwrap();
        assert_eq!(
            value(&out, &series("ingress", "demo", "c")),
            Some(1.0),
            "{out}"
        );
        assert_eq!(
            value(&out, &series("ingress", "demo", "a")),
            Some(5.0),
            "{out}"
        );
        m.publish_top_talkers();
        let out = crate::metrics::render_text(&registry).unwrap();
        assert_eq!(
            value(&out, &series("ingress", "demo", "c")),
            Some(1.0),
            "{out}"
        );
    }

    #[test]
    fn ties_go_to_the_first_by_namespace_and_name() {
        let t = Talkers::default();
        for key in ["ns/d", "ns/b", "ns/c", "ns/a"] {
            t.record("service", key);
        }
        let names: Vec<String> = t.take_top(3).into_iter().map(|(_, _, n, _)| n).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert!(t.take_top(3).is_empty(), "taking the top resets the counts");
    }

    #[tokio::test]
    async fn published_once_an_interval_has_passed_not_at_start() {
        let mut registry = Registry::default();
        let m = ControllerMetrics::register(&mut registry);
        let tgb = m
            .controller("targetGroupBinding")
            .talkers("targetgroupbinding");
        tgb.talked("ns/binding");
        let series = r#"awslbc_controller_top_talkers{controller="targetgroupbinding",namespace="ns",name="binding"}"#;
        let run = m.run_top_talkers(Duration::from_millis(300));
        tokio::pin!(run);
        let wait = |ms| tokio::time::sleep(Duration::from_millis(ms));
        tokio::select! { _ = &mut run => unreachable!(), _ = wait(50) => {} }
        let out = crate::metrics::render_text(&registry).unwrap();
        assert_eq!(value(&out, series), None, "not at start: {out}");
        tokio::select! { _ = &mut run => unreachable!(), _ = wait(600) => {} }
        let out = crate::metrics::render_text(&registry).unwrap();
        assert_eq!(value(&out, series), Some(1.0), "{out}");
    }
}
