//! `admission-index`: what the webhook's own work costs one pod admission, warm and cold.
//!
//! Admissions arrive a millisecond or more apart, so a request finds the webhook's memory cold.
//! For the admission benchmark's pod (1,000 ip bindings and 5,000 Services over 100 namespaces,
//! its namespace holding 10 bindings and 50 Services) this times the gate lookup
//! ([`PodGateIndex::gates_for`]) and the whole handler step (borrowed read of the review,
//! lookup, patch, encoded answer; no TLS or HTTP) right after evicting the caches (writing a
//! buffer larger than them), and again warm; then the step after 0.1–10 ms of sleep (what the
//! machine leaves of the caches between admissions), and the whole service call
//! ([`aws_load_balancer_controller::webhook::Admission::handle`]: metrics, body budget, body,
//! step, response) cold, warm and after 2 ms.
//! `cargo bench --profile perf --bench bench -- admission-index`; `ADMISSION_EVICT_KIB` evicts
//! less (to see which cache level the cold cost comes from), `ADMISSION_SERVICE_LOOP=<secs>` only
//! loops warm service calls, for `perf record`.

use aws_load_balancer_controller::webhook::pod_index::{BindingEntry, PodGateIndex};
use aws_load_balancer_controller::webhook::pod_readiness::PodReadinessGateInjector;
use aws_load_balancer_controller::webhook::{review, Handler};
use std::hint::black_box;
use std::time::{Duration, Instant};

const NAMESPACES: usize = 100;
const BINDINGS_PER_NS: usize = 10;
const SERVICES_PER_NS: usize = 50;
/// Larger than this machine's last-level cache.
const EVICT_BYTES: usize = 64 << 20;
const SAMPLES: usize = 400;

fn index() -> PodGateIndex {
    let (mut bindings, mut services) = (Vec::new(), Vec::new());
    for ns in 0..NAMESPACES {
        for s in 0..SERVICES_PER_NS {
            let selector = [("app".to_string(), format!("app-{s}"))].into();
            services.push((format!("ns-{ns}"), format!("svc-{s}"), selector));
        }
        for b in 0..BINDINGS_PER_NS {
            let entry = BindingEntry {
                target_type: Some("ip".into()),
                service: format!("svc-{}", b * 5),
            };
            bindings.push((format!("ns-{ns}"), format!("tgb-{b}"), entry));
        }
    }
    let idx = PodGateIndex::default();
    idx.reset_services(services);
    idx.reset_bindings(bindings);
    idx
}

/// Median nanoseconds of `f`, cold (caches evicted before each call) and warm (called again).
fn cold_and_warm(evict: &mut [u8], mut f: impl FnMut()) -> (u128, u128) {
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for i in 0..SAMPLES {
        // A different byte each pass, so every line is written again.
        evict.iter_mut().step_by(64).for_each(|b| *b = i as u8);
        black_box(&*evict);
        let t = Instant::now();
        f();
        cold.push(t.elapsed().as_nanos());
        let t = Instant::now();
        f();
        warm.push(t.elapsed().as_nanos());
    }
    (median_ns(cold), median_ns(warm))
}

fn median_ns(mut v: Vec<u128>) -> u128 {
    v.sort_unstable();
    v[v.len() / 2]
}

pub fn run() {
    let idx = index();
    let labels = [("app", "app-15"), ("pod-template-hash", "7d4b9c")];
    let label = |k: &str| labels.iter().find(|(l, _)| *l == k).map(|(_, v)| *v);
    assert_eq!(
        idx.gates_for("ns-42", label),
        ["target-health.elbv2.k8s.aws/tgb-3"],
        "the benchmark pod has one gate"
    );
    // `ADMISSION_EVICT_KIB` writes less, to see which cache level the cold cost comes from.
    let evict_bytes = std::env::var("ADMISSION_EVICT_KIB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(EVICT_BYTES, |k| k << 10);
    let mut evict = vec![0u8; evict_bytes];
    let (cold, warm) = cold_and_warm(&mut evict, || {
        black_box(idx.gates_for(black_box("ns-42"), label));
    });
    println!(
        "admission-index: gate lookup, median of {SAMPLES}: cold {cold} ns (caches evicted), warm {warm} ns"
    );
    let injector = PodReadinessGateInjector {
        enabled: true,
        index: idx,
        sync_wait: Duration::ZERO,
    };
    let body = crate::admission::pod_review();
    let quick = injector.admit_borrowed(&body).expect("read borrowed");
    let answer = String::from_utf8(review::encode_body(&quick.uid, &quick.decision)).unwrap();
    assert!(answer.contains(r#""patchType":"JSONPatch""#), "{answer}");
    let (cold, warm) = cold_and_warm(&mut evict, || {
        let quick = injector
            .admit_borrowed(black_box(&body))
            .expect("read borrowed");
        black_box(review::encode_body(&quick.uid, &quick.decision));
    });
    println!(
        "admission-index: handler step (read, lookup, patch, answer), median of {SAMPLES}: cold {cold} ns, warm {warm} ns"
    );
    // What the machine itself leaves of the caches between admissions a millisecond apart (as at
    // 1,000 req/s): the same step after sleeping that long instead of evicting.
    for idle_us in [100u64, 1_000, 2_000, 3_000, 5_000, 10_000] {
        let mut after = Vec::new();
        for _ in 0..SAMPLES.min(200) {
            std::thread::sleep(Duration::from_micros(idle_us));
            let t = Instant::now();
            let quick = injector
                .admit_borrowed(black_box(&body))
                .expect("read borrowed");
            black_box(review::encode_body(&quick.uid, &quick.decision));
            after.push(t.elapsed().as_nanos());
        }
        println!(
            "admission-index: handler step after {idle_us} µs idle, median of {}: {} ns",
            after.len(),
            median_ns(after)
        );
    }
    service_call(injector, &body, &mut evict);
}

/// The server's whole answer to one request, as hyper hands it over (metrics, body budget and
/// read, the step above, the response), polled once on a runtime's thread: everything the
/// webhook adds to the floor's TLS and HTTP work.
fn service_call(injector: PodReadinessGateInjector, body: &[u8], evict: &mut [u8]) {
    use aws_load_balancer_controller::metrics::{new_registry, WebhookMetrics};
    use aws_load_balancer_controller::webhook::{pod_readiness, router, Limits, Routes};
    use std::future::Future;
    use std::sync::Arc;
    let routes: Routes = vec![(pod_readiness::PATH, Arc::new(injector))];
    let admission = router(
        routes,
        WebhookMetrics::register(&mut new_registry()),
        Limits::default(),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _in = rt.enter();
    let body = bytes::Bytes::copy_from_slice(body);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut call = || {
        let request = http::Request::post(pod_readiness::PATH)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::CONTENT_LENGTH, body.len())
            .body(http_body_util::Full::new(body.clone()))
            .unwrap();
        let mut served = std::pin::pin!(admission.handle(request));
        match served.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(response) => {
                assert_eq!(response.status(), 200);
                black_box(response);
            }
            std::task::Poll::Pending => panic!("a complete body is answered in one poll"),
        }
    };
    // `ADMISSION_SERVICE_LOOP=<secs>`: only warm calls for that long, for `perf record`.
    if let Some(secs) = std::env::var("ADMISSION_SERVICE_LOOP")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
    {
        let end = Instant::now() + Duration::from_secs_f64(secs);
        let mut calls = 0u64;
        while Instant::now() < end {
            call();
            calls += 1;
        }
        println!("admission-index: {calls} service calls");
        return;
    }
    let (cold, warm) = cold_and_warm(evict, &mut call);
    println!(
        "admission-index: service call (metrics, body, step, response), median of {SAMPLES}: cold {cold} ns, warm {warm} ns"
    );
    let mut after = Vec::new();
    for _ in 0..SAMPLES.min(200) {
        std::thread::sleep(Duration::from_micros(2_000));
        let t = Instant::now();
        call();
        after.push(t.elapsed().as_nanos());
    }
    println!(
        "admission-index: service call after 2000 µs idle, median of {}: {} ns",
        after.len(),
        median_ns(after)
    );
}
